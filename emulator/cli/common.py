"""What every command module shares: the exit codes, the parser class whose usage errors exit 2
with one line, and colour that honours ``NO_COLOR`` and terminals."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import NoReturn, TextIO

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line and the subcommand's usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class Paint:
    """ANSI colour for a terminal, plain text otherwise."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text


def painter(out: TextIO) -> Paint:
    colour = not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty()
    return Paint(bool(colour))


def positive_int(text: str) -> int:
    """An argparse type: a whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not more than 0")
    return value


def count(n: int, word: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


class ProgressLine:
    """A live progress line on a terminal (written over itself, at most ten times a second);
    nothing when ``out`` is not a terminal (a CI log gets the report only)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.last = 0.0
        self.shown = False

    def show(self, text: str) -> None:
        now = time.monotonic()
        if not self.tty or now - self.last < 0.1:
            return
        self.last = now
        self.out.write(f"\r\x1b[K{text}")
        self.out.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
