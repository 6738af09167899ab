"""``botemu load``: many calls to a bot at once, with Locust run as a library (docs/load.md).

Locust, gevent and ``emulator.load.runner`` are imported only inside the handler: Locust
monkey-patches the process on import."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    load = subparsers.add_parser(
        "load",
        help="load a calling bot with many calls at once (Locust)",
        description="Place calls to a calling bot at a constant rate (--rate) or from a fixed "
        "number of callers (--users) for a while, with Locust run as a library; show a live "
        "progress line, then a summary. Exit 0 when the run kept every --fail-on threshold, "
        "1 when it broke one, 2 for a usage error.",
    )
    _load_options(load)
    _report_options(load)
    _call_options(load)
    load.set_defaults(handler=_load)


def _load_options(load: argparse.ArgumentParser) -> None:
    """The bot, the callers and how hard they call."""
    load.add_argument("--bot", metavar="URL", help="the bot's calling address (required)")
    load.add_argument("--scenario", metavar="FILE", nargs="+", action="extend", default=[],
                      help="scenario files whose caller: steps the callers play, in turn")  # fmt: skip
    load.add_argument("--caller", metavar="STEPS", default="",
                      help="inline caller steps when no --scenario is given, e.g. "
                      "'press 1; silence 6s; hangup' (default: a silent caller)")  # fmt: skip
    shape = load.add_mutually_exclusive_group()
    shape.add_argument("--rate", metavar="CPS",
                       help="calls started per second, held constant (e.g. 5, 0.5, 120/m)")  # fmt: skip
    shape.add_argument("--users", type=int, metavar="N",
                       help="N concurrent callers, each placing calls back to back (default 1)")  # fmt: skip
    load.add_argument(
        "--duration", default="60s", help="how long the run lasts: 30s, 2m (default 60s)"
    )
    load.add_argument("--pace", type=float, default=1.0,
                      help="1.0 plays calls in real time (default); 0 in virtual time")  # fmt: skip
    load.add_argument("--processes", type=int, default=0, metavar="N",
                      help="N worker processes under a master in this one (-1: one per core); "
                      "default 0: one process")  # fmt: skip
    load.add_argument("--locustfile", action="store_true",
                      help="print the path of the shipped locustfile and exit")  # fmt: skip
    load.add_argument("--user-file", type=Path, metavar="FILE",
                      help="run the users of this locustfile instead of the shipped one")  # fmt: skip


def _report_options(load: argparse.ArgumentParser) -> None:
    load.add_argument(
        "--csv", metavar="PREFIX", help="write Locust's CSV files (PREFIX_stats.csv...)"
    )
    load.add_argument("--html", type=Path, metavar="FILE", help="write Locust's HTML report")
    load.add_argument("--chart", type=Path, metavar="FILE",
                      help="write an SVG chart of response times and requests/s over the run")  # fmt: skip
    load.add_argument("--json", type=Path, metavar="FILE", help="write the summary as JSON")
    load.add_argument("--fail-on", metavar="THRESHOLDS",
                      help="exit 1 when a threshold breaks, e.g. 'p99<800ms,errors<0.1%%,rps>5' "
                      "or 'Conversation:p99<1s'")  # fmt: skip
    load.add_argument("--keep", default="failures",
                      help="transcripts the callers keep: failures (default), sample:N, all, none")  # fmt: skip
    load.add_argument("--no-progress", action="store_true", help="no live progress line")


def _call_options(load: argparse.ArgumentParser) -> None:
    """What every call needs, as for ``botemu call``."""
    load.add_argument("--db", type=Path, help="transcript database (default: botemu's)")
    load.add_argument("--certs", type=Path, default=Path("certs"),
                      help="certificates directory for an https bot (botemu certs)")  # fmt: skip
    load.add_argument("--app-id", help="the bot's app id (audience of the Bearer token)")
    load.add_argument(
        "--emulator", metavar="URL", help="the running botemu whose keys sign the token"
    )
    load.add_argument("--no-token", action="store_true", help="send no Authorization header")


def _load(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.load.options import SHIPPED_LOCUSTFILE, OptionError
    from emulator.load.thresholds import ThresholdError, evaluate, parse

    if args.locustfile:
        out.write(f"{SHIPPED_LOCUSTFILE}\n")
        return EXIT_OK
    try:
        options = _options(args)
        thresholds = parse(args.fail_on) if args.fail_on is not None else []
        _check_scenarios(options.scenarios)  # no ssl, so before Locust's monkey-patching
    except (OptionError, ThresholdError) as e:
        print(f"botemu load: {e}", file=sys.stderr)
        return EXIT_USAGE
    from emulator.load.runner import LoadError, run  # first: Locust monkey-patches
    from emulator.load.summary import table, to_json

    try:
        result = run(options)
    except LoadError as e:
        print(f"botemu load: {e}", file=sys.stderr)
        return EXIT_USAGE
    verdicts = evaluate(thresholds, result.summary)
    out.write(table(result.summary) + "\n")
    for verdict in verdicts:
        out.write(verdict.describe() + "\n")
    if args.json is not None:
        document = to_json(result.summary, [v.to_json() for v in verdicts])
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if result.interrupted:
        return EXIT_INTERRUPTED
    if not result.summary.total.count:
        print("botemu load: no request was made (did the users fail to start?)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK if all(v.passed for v in verdicts) else EXIT_FAILED


def _options(args: argparse.Namespace) -> Any:
    """The ``LoadOptions`` of the command line; ``OptionError`` names a bad one."""
    from emulator.load.options import (
        SHIPPED_LOCUSTFILE,
        LoadOptions,
        OptionError,
        parse_duration,
        parse_keep,
        parse_processes,
        parse_rate,
    )
    from emulator.transcripts.store import default_db

    if not args.bot:
        raise OptionError("--bot URL is required")
    if not args.bot.startswith(("http://", "https://")):
        raise OptionError(f"--bot {args.bot!r}: expected an http:// or https:// address")
    if args.pace < 0:
        raise OptionError(f"--pace {args.pace:g}: expected 0 or more")
    if args.users is not None and args.users < 1:
        raise OptionError(f"--users {args.users}: expected 1 or more")
    locustfile = args.user_file or SHIPPED_LOCUSTFILE
    for path in (*(Path(p) for p in args.scenario), locustfile):
        _readable(path)
    return LoadOptions(
        bot=args.bot, scenarios=tuple(Path(p) for p in args.scenario), caller=_caller(args.caller),
        rate=parse_rate(args.rate) if args.rate is not None else None, users=args.users,
        duration=parse_duration(args.duration), pace=args.pace,
        processes=parse_processes(args.processes), locustfile=locustfile,
        csv_prefix=args.csv, html=args.html, chart=args.chart, json=args.json, keep=parse_keep(args.keep),
        db=args.db or default_db(), app_id=args.app_id, emulator=args.emulator,
        no_token=args.no_token, certs=args.certs, progress=not args.no_progress,
    )  # fmt: skip


def _caller(steps: str) -> str:
    """Inline caller steps, checked now (a usage error, before Locust starts)."""
    from emulator.calling.caller import CallerScript
    from emulator.errors import CallerScriptError
    from emulator.load.options import OptionError

    try:
        CallerScript.from_inline(steps)
    except CallerScriptError as e:
        raise OptionError(f"--caller: {e}") from None
    return steps


def _check_scenarios(paths: tuple[Path, ...]) -> None:
    """Every scenario file parses, and together they hold a call scenario (``caller:``)."""
    from emulator.errors import BotemuError
    from emulator.load.options import OptionError
    from emulator.scenario.loader import load_scenarios

    if not paths:
        return
    try:
        scenarios = [s for path in paths for s in load_scenarios(path)]
    except BotemuError as e:
        raise OptionError(str(e).splitlines()[0]) from None
    if all(s.caller is None for s in scenarios):
        raise OptionError(f"no call scenario (caller:) in {', '.join(map(str, paths))}")


def _readable(path: Path) -> None:
    from emulator.load.options import OptionError

    try:
        with path.open("rb") as f:
            f.read(1)
    except OSError as e:
        raise OptionError(f"{path}: cannot read it ({e.strerror or e})") from None
