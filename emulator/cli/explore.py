"""``botemu explore``: discover a calling bot's call flow by itself and print it as a tree
(``emulator.explore`` does the work; each path is one call, recorded in the transcript store)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.call import bot_settings, token_options
from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ProgressLine, positive_int
from emulator.errors import BotemuError
from emulator.transcripts.store import TranscriptStore, default_db

if TYPE_CHECKING:
    from emulator.calling.session import CallSettings
    from emulator.explore.crawler import Graph
    from emulator.explore.scenarios import Written

MAX_JOBS = 64


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    explore = subparsers.add_parser(
        "explore",
        help="discover a calling bot's call flow and print it as a tree",
        description="Explore a calling bot breadth-first: from each state the caller can observe "
        "(a menu, a digits prompt, a record), take every move (each choice by key and by "
        "speech, a wrong key, silence, a hang-up...), each path a fresh call in virtual time. "
        "Print the call flow as a tree, then the findings. Exit 0 when there is no error "
        "finding, 1 otherwise, 2 for a usage error.",
    )
    explore.add_argument("--bot", required=True, metavar="URL", help="the bot's calling address")
    explore.add_argument("--max-depth", type=positive_int, default=8, metavar="N",
                         help="moves per path at the most (default 8)")  # fmt: skip
    explore.add_argument("--max-calls", type=positive_int, default=500, metavar="N",
                         help="calls in all at the most (default 500)")  # fmt: skip
    explore.add_argument("--max-time", type=positive_int, default=600, metavar="S",
                         help="seconds the crawl may take (default 600); no call starts after "
                         "them, the calls under way are cut off, and the bounds line says "
                         "what was cut off")  # fmt: skip
    explore.add_argument("-j", "--jobs", type=positive_int, default=4, metavar="N",
                         help="calls at once (default 4)")  # fmt: skip
    explore.add_argument("--seed", type=int, default=1, help="the callers' seed (default 1)")
    explore.add_argument("--mask", action="append", default=[], metavar="REGEX",
                         help="mask this in prompt text too, so that it does not make a new "
                         "state (repeatable)")  # fmt: skip
    explore.add_argument("--max-prompt", type=positive_int, default=30, metavar="S",
                         help="prompts heard before a waiting point longer than this are a "
                         "finding (EXPLORE-LONG-PROMPT; default 30 s)")  # fmt: skip
    explore.add_argument("--max-choices", type=positive_int, default=5, metavar="N",
                         help="menus with more choices are a finding (EXPLORE-LONG-MENU; "
                         "default 5)")  # fmt: skip
    explore.add_argument("--json", type=Path, metavar="FILE",
                         help="write the graph, the findings and the bounds hit as JSON "
                         "(format 2: emulator/explore/schema.json)")  # fmt: skip
    explore.add_argument("--write-scenarios", type=Path, metavar="DIR",
                         help="write one scenario per path to a leaf into DIR: its caller "
                         "steps, prompts (volatile parts as patterns), outcomes and ending; "
                         "botemu test DIR replays them")  # fmt: skip
    explore.add_argument("--db", type=Path, default=default_db(), help="transcript database")
    token_options(explore)
    explore.set_defaults(handler=explore_handler)


def explore_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.explore.report import to_json, tree
    from emulator.explore.states import Masker, MaskError
    from emulator.explore.verdicts import judge
    from emulator.findings import Severity

    try:
        masker = Masker(extra=tuple(args.mask))
        settings = asyncio.run(bot_settings(args, "explore"))
        store = TranscriptStore(args.db, write_behind=True)
    except (BotemuError, MaskError) as e:
        print(f"botemu explore: {e}", file=sys.stderr)
        return EXIT_USAGE
    began = time.time()
    with store:
        graph = asyncio.run(_crawl(settings, store, args, masker))
        findings = judge(graph, max_prompt=args.max_prompt, max_choices=args.max_choices)
        document = to_json(graph, args.bot, findings)
        saved = _save(store, document, began)
        written = None if args.write_scenarios is None else _scenarios(graph, store, masker)
    out.write(tree(graph))
    for f in findings:
        out.write(f"{f.severity.value}: {f.where}: {f.message} [{f.rule}]\n")
    if saved is not None:
        out.write(f"exploration {saved} saved in {args.db} (botemu logview: Explorations)\n")
    if written is not None:
        _write_scenarios(written, args.write_scenarios, out)
    if args.json is not None:
        args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    errors = sum(f.severity is Severity.ERROR for f in findings)
    return EXIT_FAILED if errors else EXIT_OK


def _scenarios(graph: Graph, store: TranscriptStore, masker: Any) -> list[Written]:
    from emulator.explore.scenarios import leaf_scenarios

    return leaf_scenarios(graph, store, masker)


def _write_scenarios(written: list[Written], folder: Path, out: TextIO) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    made = 0
    for scenario in written:
        if scenario.skipped is not None:
            print(
                f"botemu explore: {scenario.name} not written: {scenario.skipped}", file=sys.stderr
            )
            continue
        (folder / scenario.name).write_text(scenario.text)
        made += 1
    out.write(f"{made} scenarios written to {folder} (botemu test {folder} --bot ...)\n")


def _save(store: TranscriptStore, document: dict[str, Any], began: float) -> str | None:
    """The exploration saved beside its calls, for the log view's call flow; its id."""
    from emulator.transcripts import TranscriptError

    try:
        return store.save_exploration(document, started=began)
    except TranscriptError as e:
        print(f"botemu explore: the exploration was not saved: {e}", file=sys.stderr)
        return None


async def _crawl(settings: CallSettings, store: TranscriptStore, args: argparse.Namespace,
                 masker: Any) -> Graph:  # fmt: skip
    from emulator.explore.crawler import Crawler, Progress

    jobs = min(args.jobs, MAX_JOBS)
    line = ProgressLine(sys.stderr)

    def show(p: Progress) -> None:
        errors = f" · {p.errors} with errors" if p.errors else ""
        line.show(f"exploring: {p.calls} calls · {p.states} states{errors}")

    crawler = Crawler(settings, store, max_depth=args.max_depth, max_calls=args.max_calls,
                      jobs=jobs, masker=masker, progress=show,
                      max_time=args.max_time)  # fmt: skip
    try:
        return await crawler.crawl()
    finally:
        line.close()
