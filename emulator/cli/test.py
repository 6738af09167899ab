"""``botemu test``: scenario files run against a bot, with the live progress, the failures, the
summary and the JUnit and JSON reports. The run itself is ``emulator.runner.suite``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.common import EXIT_USAGE

if TYPE_CHECKING:
    from emulator.runner.suite import Backend, RunOptions


def register(subparsers: Any) -> None:
    """Add ``test`` to ``subparsers`` (the object ``ArgumentParser.add_subparsers()`` returns)."""
    test = subparsers.add_parser(
        "test",
        help="run scenario files against a bot (CI: JUnit and JSON reports)",
        description="Run every scenario file under the paths against the bot, each matrix entry "
        "as its own test. Exit 0: every scenario ran and passed; 1: one failed or could not run; "
        "2: a usage, configuration or scenario-file error, or zero scenarios selected.",
    )
    add_arguments(test)
    test.set_defaults(handler=test_handler)


def _positive(kind: Callable[[str], int | float]) -> Callable[[str], Any]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not more than 0")
        return value

    return parse


def add_arguments(test: argparse.ArgumentParser) -> None:
    from emulator.runner.suite import CONFIG_KEYS, ENV_PASSWORD

    test.add_argument("paths", metavar="PATH", nargs="+", type=Path,
                      help="a scenario file, or a directory (every *.yaml under it; _*.yaml are includes)")  # fmt: skip
    target = test.add_argument_group("target (flags win over --config)")
    target.add_argument("--bot", metavar="URL", help="the calling bot's URL")
    target.add_argument("--messaging-bot", metavar="URL", help="the messaging bot's endpoint")
    target.add_argument("--app-id", metavar="ID", help="the bot's app id (the messaging bot's "
                        "registration; the audience of the calling Bearer token)")  # fmt: skip
    target.add_argument("--app-password", metavar="PW",
                        help=f"the messaging bot's password (default ${ENV_PASSWORD})")  # fmt: skip
    target.add_argument("--emulator", metavar="URL",
                        help="a running botemu to chat through, whose keys sign the calling "
                        "Bearer token (default: start one to chat; sign with the botemu at "
                        "http://127.0.0.1:9070 if it answers, else with the keys in --certs)")  # fmt: skip
    target.add_argument("--no-token", action="store_true",
                        help="calls carry no Authorization header")  # fmt: skip
    target.add_argument("--legacy-validation-outcome", action="store_true",
                        help="write the validation outcome type as worfklowValidationOutcome")  # fmt: skip
    target.add_argument("--config", type=Path, metavar="FILE",
                        help=f"YAML with the target keys: {', '.join(CONFIG_KEYS)}")  # fmt: skip
    target.add_argument("--certs", metavar="DIR", help="certificates for https bots (botemu certs)")
    target.add_argument("--ca", metavar="FILE", help="the CA that signed the bot's certificate")
    run = test.add_argument_group("running")
    run.add_argument("-j", "--jobs", type=_positive(int), default=1, metavar="N",
                     help="scenarios run at once (default 1)")  # fmt: skip
    run.add_argument("--seed", type=int, metavar="N",
                     help="the run's seed (default: a random one, printed in the summary)")  # fmt: skip
    run.add_argument("-k", dest="keyword", metavar="EXPR",
                     help="select by id or file: words with and/or/not, e.g. 'menu and not timeout'")  # fmt: skip
    run.add_argument("--tag", dest="tags", action="append", default=[], metavar="T",
                     help="select scenarios with this tag (repeat: any of them)")  # fmt: skip
    run.add_argument("--max-workflows", type=_positive(int), metavar="N",
                     help="workflows per call before the platform hangs up")  # fmt: skip
    run.add_argument("--timeout", type=_positive(float), metavar="S",
                     help="seconds the bot has to answer each request")  # fmt: skip
    run.add_argument("--db", type=Path, default=None, metavar="PATH",
                     help="transcript database (default $BOTEMU_DB or .botemu/transcripts.db)")  # fmt: skip
    run.add_argument("--prompt-timing", choices=("estimate", "speech"), default=None,
                     help="how long a text prompt plays: estimate, 0.4 s a word (default), or "
                     "speech, as long as its synthesized audio; a scenario's platform: "
                     "{prompt_timing} wins (default $BOTEMU_PROMPT_TIMING, else estimate)")  # fmt: skip
    report = test.add_argument_group("reports")
    report.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML")
    report.add_argument("--json", metavar="FILE",
                        help="write the JSON report (- for standard output; the rest goes to stderr)")  # fmt: skip


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """The ``RunOptions`` of a parsed ``botemu test`` command line."""
    from emulator.runner.suite import RunOptions, compile_keyword, target_settings
    from emulator.transcripts.store import default_db

    compile_keyword(args.keyword or "")  # a bad -k is a usage error before anything is read
    return RunOptions(
        paths=tuple(args.paths),
        target=target_settings(vars(args)),
        jobs=args.jobs,
        seed=args.seed,
        keyword=args.keyword,
        tags=tuple(args.tags),
        db=args.db or default_db(),
        max_workflows=args.max_workflows,
        timeout=args.timeout,
        junit=args.junit,
        json=args.json,
        prompt_timing=getattr(args, "prompt_timing", None),
    )


def test_handler(args: argparse.Namespace, out: TextIO) -> int:
    return run_command(args, out, sys.stderr)


def run_command(
    args: argparse.Namespace, out: TextIO, err: TextIO, backend: Backend | None = None
) -> int:
    """The whole command; ``backend`` replaces the loader and runner (tests)."""
    from emulator.errors import BotemuError
    from emulator.runner.suite import run_options

    try:
        options = options_from_args(args)
    except BotemuError as e:
        err.write(f"botemu test: {e}\n")
        return EXIT_USAGE
    return run_options(options, out, err, backend)
