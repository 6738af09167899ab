"""A skill manifest as read (``Manifest``), the errors of reading one, and JSON pointers.

``position_of`` says where a pointer is in the text (line, column), or its nearest ancestor; the
positions themselves come from ``parse``. ``format_of`` tells JSON from YAML by a file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from emulator.errors import BotemuError
from emulator.jsonutil import JSON, kind_of

Position: TypeAlias = tuple[int, int]
Format: TypeAlias = Literal["json", "yaml"]


@dataclass(frozen=True)
class Manifest:
    """A manifest as read: the document, where it came from, and pointer -> (line, column)."""

    document: dict[str, JSON]
    source: str
    positions: dict[str, Position]


class ManifestError(BotemuError):
    """A manifest cannot be read. ``str(e)`` is one line: ``source[:line:column]: message``."""

    def __init__(
        self, source: str, message: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        message = printable(message)
        at = source if line is None else f"{source}:{line}"
        if line is not None and column is not None:
            at += f":{column}"
        super().__init__(f"{printable(at)}: {message}")
        self.source = source
        self.message = message
        self.line = line
        self.column = column


class NotAnObjectError(ManifestError):
    """The text is JSON or YAML, but its value is not an object (``validate_manifest(e.value)``
    explains it)."""

    def __init__(self, source: str, value: JSON, positions: dict[str, Position]) -> None:
        super().__init__(source, f"a skill manifest is a JSON object, got {kind_of(value)}")
        self.value = value
        self.positions = positions


def child(pointer: str, key: str | int) -> str:
    """The JSON pointer of a member or item (RFC 6901: ``~`` is ``~0``, ``/`` is ``~1``)."""
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def printable(text: str) -> str:
    """``text`` on one line: line breaks and other control characters escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def position_of(manifest: Manifest, pointer: str) -> Position | None:
    """Where ``pointer`` is, or its nearest ancestor (a missing member points at its object)."""
    return nearest(manifest.positions, pointer)


def nearest(positions: dict[str, Position], pointer: str) -> Position | None:
    while pointer not in positions:
        if not pointer:
            return None
        pointer = pointer[: pointer.rfind("/")]
    return positions[pointer]


def format_of(name: str) -> Format | None:
    """``json`` for a ``.json`` name, ``yaml`` for ``.yaml``/``.yml``, else None (unknown)."""
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    return "json" if suffix == "json" else "yaml" if suffix in ("yaml", "yml") else None


def size_text(n: int) -> str:
    """A size limit for a message: ``1 MiB``, or ``1000 bytes``."""
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"
