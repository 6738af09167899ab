"""Reading an input file the CLI was given: a regular file (or standard input), bounded.

Every command that reads a file it was named (``botemu lint``, ``manifest validate``, ``manifest
check``, ``scenario check``, ``test`` and a scenario's ``include:``) reads it here, so that none
of them can be made to hang or to read without end: a FIFO, a character device (``/dev/zero``,
a terminal) or a socket is refused before anything is read (``not a regular file``), and at most
``max_bytes + 1`` bytes are read, so that the caller can say the file is too large.

The file is opened without blocking and checked on the open descriptor (``fstat``), so a file
swapped for a FIFO between the check and the open still cannot hang the read.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

__all__ = ["InputError", "read_bytes", "read_stdin"]


class InputError(Exception):
    """An input cannot be read; ``message`` is one line without the file's name
    (``no such file``, ``is a directory, not a file``, ``not a regular file``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def read_bytes(path: str | Path, max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of the regular file at ``path``; raises ``InputError``."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        _check(os.stat(path).st_mode)  # before the open: opening a socket or a device may act
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError("no such file") from None
    except NotADirectoryError:
        raise InputError("no such file (a part of the path is not a directory)") from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "rb") as f:  # closes fd, also when a check below fails
            _check(os.fstat(f.fileno()).st_mode)  # the file actually opened
            os.set_blocking(f.fileno(), True)
            return f.read(max_bytes + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}") from None


def read_stdin(max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of standard input (a pipe, a file or a terminal)."""
    try:
        return sys.stdin.buffer.read(max_bytes + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}") from None


def _check(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise InputError("not a regular file")
