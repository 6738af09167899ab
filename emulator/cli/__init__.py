"""The ``botemu`` command line: one module per command group, each a thin shell over the library.

``main`` builds the parser and runs the command's handler. Only the module of the command given
is imported (with the library it runs, inside its handler), so that ``botemu --version`` and
``botemu lint`` start fast; ``botemu --help`` loads them all. Nothing outside this package
imports it: it may import everything below it.

Exit codes a CI can trust: 0 when everything ran and passed, 1 when a check failed, 2 for a usage
error or unreadable input. Errors are one line, never a traceback. Human output by default, a
``--json`` twin for machines; colour unless ``NO_COLOR`` is set or the output is not a terminal.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from emulator import __version__
from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Parser

__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

COMMANDS: dict[str, str] = {
    "lint": "lint",
    "rules": "rules",
    "call": "call",
    "explore": "explore",
    "fuzz": "fuzz",
    "load": "load",
    "test": "test",
    "scenario": "scenario",
    "transcript": "transcript",
    "certs": "certs",
    "probe": "probe",
    "serve": "serve",
    "config": "serve",
    "token": "serve",
    "chat": "serve",
    "env": "env",
    "demo": "demo",
    "manifest": "manifest:register_commands",
    "logview": "logview",
}
"""Each command, in the order ``botemu --help`` lists them, and the module of ``emulator.cli``
that registers it (its function ``register(subparsers)``, or the one named after a colon; a
module may register several commands)."""

_ALL = object()


def build_parser(command: str | object | None = _ALL) -> argparse.ArgumentParser:
    """The whole parser; with ``command``, one in which only that command's module is loaded
    (the others are names without options), and with ``None`` one in which none is."""
    parser = Parser(
        prog="botemu",
        description="A local emulator of a bot platform: calling, connector and identity services.",
    )
    parser.add_argument("--version", action="version", version=f"botemu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    wanted = COMMANDS.get(command) if isinstance(command, str) else None
    loaded: set[str] = set()
    for name, module in COMMANDS.items():
        if module in loaded:
            continue
        if command is _ALL or module == wanted:
            path, _, function = module.partition(":")
            getattr(importlib.import_module(f"emulator.cli.{path}"), function or "register")(sub)
            loaded.add(module)
        else:
            sub.add_parser(name)
    return parser


def _command_word(argv: Sequence[str]) -> str | None:
    """The command of a command line (its first word that is not an option)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    word = _command_word(words)
    if word in COMMANDS:
        parser = build_parser(word)
    elif word is None and words and not {"-h", "--help"} & set(words):
        parser = build_parser(None)  # --version, or an unknown option: no command's module
    else:
        parser = build_parser()  # the help lists every command
    args = parser.parse_args(words)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = args.handler(args, sys.stdout)
    except KeyboardInterrupt:
        print("botemu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    return code
