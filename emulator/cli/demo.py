"""``botemu demo``: botemu, the reference bots and the bundled scenarios in one command
(``emulator.demo`` runs it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.common import positive_int
from emulator.config import DEFAULT_HOST, DEFAULT_PORT

if TYPE_CHECKING:
    from emulator.demo import DemoOptions


def register(subparsers: Any) -> None:
    """Add ``demo`` to ``subparsers`` (the object ``ArgumentParser.add_subparsers()`` returns)."""
    from emulator.demo import DEFAULT_DIR, DEFAULT_JOBS

    demo = subparsers.add_parser(
        "demo",
        help="start botemu and the reference bots, run the bundled scenarios against them",
        description="Start botemu, the reference IVR bot (mutual TLS) and the echo bot, run "
        "scenarios/examples and scenarios/conformance against them and print the report, then "
        "serve until Ctrl-C (--once: exit after the report). Exit 0: every scenario passed; 1: "
        "one did not; 2: a usage or configuration problem.",
    )
    demo.add_argument("--once", action="store_true",
                      help="exit when the report is printed (CI and scripts)")  # fmt: skip
    demo.add_argument("--port", type=_port_number, default=DEFAULT_PORT,
                      help=f"botemu's port on {DEFAULT_HOST} (default {DEFAULT_PORT}; 0: a free one)")  # fmt: skip
    demo.add_argument("--dir", type=Path, default=DEFAULT_DIR, metavar="DIR",
                      help=f"certificates, signing keys, voicemail, the bots' log (default {DEFAULT_DIR})")  # fmt: skip
    demo.add_argument("--db", type=Path, default=None, metavar="PATH",
                      help="transcript database (default $BOTEMU_DB or .botemu/transcripts.db)")  # fmt: skip
    demo.add_argument("-j", "--jobs", type=positive_int, default=DEFAULT_JOBS, metavar="N",
                      help=f"scenarios run at once (default {DEFAULT_JOBS})")  # fmt: skip
    demo.add_argument("--seed", type=int, metavar="N", help="the run's seed (default: random)")
    demo.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                      help="botemu answers to this Host name too (NAME or NAME:PORT; repeatable; "
                      "docs/security.md)")  # fmt: skip
    demo.set_defaults(handler=demo_handler)


def _port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 to 65535)")
    return value


def options_from_args(args: argparse.Namespace) -> DemoOptions:
    from emulator.demo import DemoOptions

    return DemoOptions(once=args.once, port=args.port, directory=args.dir, db=args.db,
               jobs=args.jobs, seed=args.seed,
               allow_hosts=tuple(getattr(args, "allow_host", None) or ()))  # fmt: skip


def demo_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.demo import run_demo

    return run_demo(options_from_args(args), out, sys.stderr)
