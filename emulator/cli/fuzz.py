"""``botemu fuzz``: search for callers that make a calling bot fail, shrink each failure to its
smallest caller and write it as a scenario (``emulator.fuzz`` does the work; every call is
recorded in the transcript store)."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from emulator.cli.call import bot_settings, token_options
from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ProgressLine, positive_int
from emulator.errors import BotemuError
from emulator.transcripts.store import TranscriptStore, default_db

if TYPE_CHECKING:
    from emulator.fuzz.search import Search

MAX_BUDGET = 100_000
MAX_STEPS = 50


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    fuzz = subparsers.add_parser(
        "fuzz",
        help="search for callers that make a calling bot fail, each shrunk to a scenario",
        description="Search for callers (keys, speech, silence, talk, hang-ups, barge-in, digit "
        "strings; with --faults also platform faults), steered to the sequences of moves no caller "
        "has made yet, each one call in "
        "virtual time, drawn step by step from the moves the bot offers. A call fails on an error finding "
        "(5xx, garbage, an invalid Workflow, no answer) or when it never ends. Each distinct "
        "failure (its rule and the state it came in) is shrunk to a 1-minimal caller and "
        "written as a scenario that fails the same way. Exit 1 when something was found, 0 "
        "when the budget ran out with nothing found, 2 for a usage error.",
    )
    fuzz.add_argument("--bot", required=True, metavar="URL", help="the bot's calling address")
    fuzz.add_argument("--budget", type=positive_int, default=300, metavar="N",
                      help="callers to generate at the most (default 300); shrinking and the "
                      "replays come on top")  # fmt: skip
    fuzz.add_argument("--max-time", type=positive_int, default=600, metavar="S",
                      help="seconds the search may take (default 600); no call starts after "
                      "them, a call under way is cut off, and the report says so")  # fmt: skip
    fuzz.add_argument("--seed", type=int, default=1, help="the search's seed (default 1)")
    fuzz.add_argument("--max-steps", type=positive_int, default=8, metavar="K",
                      help="caller steps per call at the most (default 8)")  # fmt: skip
    fuzz.add_argument("--faults", action="store_true",
                      help="draw platform faults too: a callback failed once and retried, one "
                      "delivered twice, unknown fields, unknown enum values")  # fmt: skip
    fuzz.add_argument("--out", type=Path, metavar="DIR",
                      help="write each failure's scenario here (default: fuzz-findings)")  # fmt: skip
    fuzz.add_argument("--json", type=Path, metavar="FILE",
                      help="write the failures and the figures as JSON")  # fmt: skip
    fuzz.add_argument("--examples", metavar="DIR",
                      help="the database of examples: failures found before are tried "
                      "first (default: fuzz-examples beside the transcript database; 'none' "
                      "for none, so that a seed gives the same run)")  # fmt: skip
    fuzz.add_argument("--db", type=Path, default=default_db(), help="transcript database")
    token_options(fuzz)
    fuzz.set_defaults(handler=fuzz_handler)


def fuzz_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.fuzz.search import Fuzzer

    if args.budget > MAX_BUDGET or args.max_steps > MAX_STEPS:
        print(f"botemu fuzz: --budget is at most {MAX_BUDGET} and --max-steps at most "
              f"{MAX_STEPS}", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        settings = asyncio.run(bot_settings(args, "fuzz"))
        _reachable(args.bot)
        store = TranscriptStore(args.db, write_behind=True)
    except BotemuError as e:
        print(f"botemu fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    line = ProgressLine(sys.stderr)

    def show(found: Search) -> None:
        line.show(f"fuzzing: {found.calls} calls · {len(found.failures)} failures")

    with store:
        fuzzer = Fuzzer(settings, store, budget=args.budget, seed=args.seed,
                        max_steps=args.max_steps, faults=args.faults,
                        examples=_examples(args), progress=show,
                        max_time=args.max_time)  # fmt: skip
        try:
            found = fuzzer.run()
        finally:
            line.close()
    return _report(found, args, out)


def _reachable(url: str, seconds: float = 5.0) -> None:
    """A connection to the bot's host and port, or a ``BotemuError``: a bot that is not running
    is a usage error, not a failure found."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=seconds).close()
    except OSError as e:
        raise BotemuError(f"cannot reach the bot at {url}: {e.strerror or e}") from None


def _examples(args: argparse.Namespace) -> Path | None:
    if args.examples is None:
        return Path(args.db).parent / "fuzz-examples"
    return None if args.examples == "none" else Path(args.examples)


def _report(found: Search, args: argparse.Namespace, out: TextIO) -> int:
    from emulator.calling.caller import describe
    from emulator.fuzz.scenarios import scenario_text

    folder: Path = args.out or Path("fuzz-findings")
    written: list[dict[str, Any]] = []
    for key, failure in found.failures.items():
        confirmed, replayed = key not in found.unconfirmed, key not in found.unreplayed
        path = folder / f"{_slug(failure.rule)}-{failure.state}.yaml"
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(scenario_text(failure, bot=args.bot, seed=args.seed, confirmed=confirmed,
                                      replayed=replayed))  # fmt: skip
        steps = "; ".join(describe(s) for s in failure.steps) or "(no step: the call placed)"
        faults = "" if not failure.faults.any else f" (faults: {failure.faults.describe()})"
        doubt = ("" if confirmed else " (did not fail again when replayed)" if replayed
                 else " (not replayed: the time ran out)")  # fmt: skip
        out.write(f"{failure.rule} · {failure.state} · {steps}{faults}{doubt}\n  {path}\n")
        written.append({"rule": failure.rule, "state": failure.state, "message": failure.message,
                        "steps": [describe(s) for s in failure.steps],
                        "faults": failure.faults.to_json(), "call_id": failure.call_id,
                        "confirmed": confirmed, "replayed": replayed,
                        "scenario": str(path)})  # fmt: skip
    if found.problem:
        out.write(f"the search stopped short: {found.problem}\n")
    if found.bounds:
        out.write(f"bounds hit: {', '.join(found.bounds)}\n")
    out.write(f"{len(found.failures)} failures, {found.calls} calls (budget {args.budget})\n")
    if args.json is not None:
        document = {"version": 1, "bot": args.bot, "seed": args.seed, "budget": args.budget,
                    "calls": found.calls, "failures": written, "problem": found.problem,
                    "bounds": found.bounds}  # fmt: skip
        args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return EXIT_FAILED if found.failures else EXIT_OK


def _slug(rule: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", rule.lower()).strip("-")
