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
from urllib.parse import urlsplit

from emulator.cli.call import token_options
from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, positive_int
from emulator.errors import BotemuError
from emulator.transcripts.store import TranscriptStore, default_db

if TYPE_CHECKING:
    from emulator.calling.session import CallSettings
    from emulator.explore.crawler import Graph

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
                         "(format 1: emulator/explore/schema.json)")  # fmt: skip
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
        settings = asyncio.run(_settings(args))
        store = TranscriptStore(args.db, write_behind=True)
    except (BotemuError, MaskError) as e:
        print(f"botemu explore: {e}", file=sys.stderr)
        return EXIT_USAGE
    with store:
        graph = asyncio.run(_crawl(settings, store, args, masker))
    out.write(tree(graph))
    findings = judge(graph, max_prompt=args.max_prompt, max_choices=args.max_choices)
    for f in findings:
        out.write(f"{f.severity.value}: {f.where}: {f.message} [{f.rule}]\n")
    if args.json is not None:
        document = to_json(graph, args.bot, findings)
        args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    errors = sum(f.severity is Severity.ERROR for f in findings)
    return EXIT_FAILED if errors else EXIT_OK


async def _crawl(settings: CallSettings, store: TranscriptStore, args: argparse.Namespace,
                 masker: Any) -> Graph:  # fmt: skip
    from emulator.explore.crawler import Crawler

    jobs = min(args.jobs, MAX_JOBS)
    line = ProgressLine(sys.stderr)
    crawler = Crawler(settings, store, max_depth=args.max_depth, max_calls=args.max_calls,
                      jobs=jobs, masker=masker, progress=line.show)  # fmt: skip
    try:
        return await crawler.crawl()
    finally:
        line.close()


class ProgressLine:
    """The live progress line on a terminal (stderr): calls made, states found, calls with an
    error. Written over itself at most ten times a second; nothing when stderr is not a
    terminal (a CI log gets the tree and the findings only)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.last = 0.0
        self.shown = False

    def show(self, progress: Any) -> None:
        now = time.monotonic()
        if not self.tty or now - self.last < 0.1:
            return
        self.last = now
        errors = f" · {progress.errors} with errors" if progress.errors else ""
        self.out.write(
            f"\r\x1b[Kexploring: {progress.calls} calls · {progress.states} states{errors}"
        )
        self.out.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()


async def _settings(args: argparse.Namespace) -> CallSettings:
    """The calls' settings: the bot, TLS for an https bot, the Bearer token."""
    from dataclasses import replace

    from emulator.calling.session import CallSettings
    from emulator.calling.tokens import resolve

    parts = urlsplit(args.bot)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BotemuError(f"--bot {args.bot!r} is not an http(s) URL")
    ssl_context = None
    if parts.scheme == "https":
        from emulator.certs import client_ssl_context, ensure_certs

        ssl_context = client_ssl_context(ensure_certs(args.certs), ca_file=args.ca)
    settings = CallSettings(bot_url=args.bot, seed=args.seed, ssl_context=ssl_context)
    resolved = await resolve(bot_url=args.bot, app_id=args.app_id, emulator=args.emulator,
                             certs=args.certs, no_token=args.no_token)  # fmt: skip
    print(f"botemu explore: {resolved.note}", file=sys.stderr)
    return replace(settings, tokens=resolved.tokens, app_id=resolved.app_id)
