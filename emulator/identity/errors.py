"""The identity service's error: ``IdentityError`` (a ``BotemuError``), one line, maybe a path."""

from __future__ import annotations

from pathlib import Path

from emulator.errors import BotemuError


class IdentityError(BotemuError):
    """The identity service could not do what was asked: a key file that cannot be read or
    written, a corrupt key index, a bot that is not registered.

    ``path`` is the file or directory at fault (None when no file is involved); ``message`` says
    what is wrong, in one line.
    """

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message if path is None else f"{path}: {message}")
        self.path = path
        self.message = message
