"""Benchmark of how deep ``botemu fuzz`` finds bugs: calls to the first failure, against a random
walk.

Starts every bot of ``tests/bots/deep_bots.py`` (one planted bug each, 1 to 4 steps deep: keys,
silence, speech, digit strings at their boundary, a hang-up at a moment) in a process of its
own, then for each bot and each seed (``--seeds N``: 1 to N, or from ``--first-seed``) runs,
one call at a time:
- the fuzzer (``emulator.fuzz.search.Fuzzer``, no database of examples, ``--seed`` the seed),
  stopped at its first failure: the calls it took;
- the baseline, a uniform random walk: at every waiting point one of the moves the bot offers
  in that state (``emulator.explore.edges.moves``: its choices by key and by speech, one wrong
  key, silence past its timeout, digits, a hang-up), drawn with ``random.Random(seed)``, until
  the bot ends the call or ``--max-steps`` steps; the calls until one fails.
Both have ``--budget`` calls. Prints, per bot and per depth, the median calls to find the bug
(a search that did not find it counts as more than the budget) and the share of searches that
found it within the budget (``--per-seed``: and each seed's calls, ``-`` for not found).
Asserts nothing. Run from the project root: ``python benchmarks/fuzz.py [--seeds 20]
[--first-seed 1] [--budget 1000] [--only NAME,...] [--per-seed]``. (Calls per second:
``benchmarks/fuzz_speed.py``.)

With ``--count`` it runs the fuzzer (``--calls`` calls, seed 1) against the bot with no bug
(``sound``) and counts, from where each step led, the sequences of up to three steps and a
common move after them, within ``--max-steps``, split by whether that move ends the call, and
those that end it with three steps before the move (where a bug four steps deep whose last move
ends the call hangs). A call ends once, so it tries one sequence that ends the call: the share
printed is the most of those ``--budget`` calls can cover (a sequence with fewer steps before
its move is covered by the longer ones that end with it).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import cast

import aiohttp
from support import free_port, wait_for

from emulator.calling.caller import CallerScript, Press, Step, describe
from emulator.calling.faults import NO_FAULTS
from emulator.calling.session import CallSettings, place_call
from emulator.explore.edges import moves
from emulator.fuzz.caller import DrawnSteps, Listening
from emulator.fuzz.guided import CONTEXT, Guide, Walk
from emulator.fuzz.search import Fuzzer, Search
from emulator.fuzz.verdict import judge
from emulator.transcripts.store import TranscriptStore

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.bots.deep_bots import BUGS  # noqa: E402


@contextmanager
def deep_bot(name: str) -> Iterator[str]:
    port = free_port()
    bot = subprocess.Popen([sys.executable, "-m", "tests.bots.deep_bots", name, "--port",
                            str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}/api/calls"
    finally:
        bot.terminate()
        bot.wait()


class Found(BaseException):
    """The first failure came: ends the search there (not an Exception: Hypothesis lets it by)."""


def fuzz_calls(url: str, store: TranscriptStore, seed: int, budget: int, steps: int) -> int | None:
    def progress(search: Search) -> None:
        if search.failures:
            raise Found

    fuzzer = Fuzzer(CallSettings(bot_url=url, seed=seed), store, budget=budget, seed=seed,
                    max_steps=steps, progress=progress)  # fmt: skip
    try:
        fuzzer.run()
    except Found:
        return fuzzer.found.calls
    return None


async def walk_calls(url: str, store: TranscriptStore, seed: int, budget: int,
                     steps: int) -> int | None:  # fmt: skip
    rnd = random.Random(seed)
    async with aiohttp.ClientSession() as http:
        for n in range(1, budget + 1):
            listening = Listening()
            pending: list[Step] = []

            def draw(listening: Listening = listening, pending: list[Step] = pending) -> Step:
                if not pending and listening.state is None:
                    pending.append(Press(rnd.choice("0123456789*#")))
                elif not pending:
                    move = rnd.choice(moves(listening.state))  # type: ignore[arg-type]
                    pending.extend(CallerScript.from_inline(move.script).steps)
                return pending.pop(0)

            drawn = DrawnSteps(draw, steps)
            call = CallSettings(bot_url=url, seed=seed, caller=CallerScript(
                cast(tuple[Step, ...], drawn)))  # fmt: skip
            report = await place_call(call, store, http=http, listener=listening)
            if judge(report, listening, drawn.steps, NO_FAULTS) is not None:
                return n
    return None


def sequences(url: str, store: TranscriptStore, calls: int,
              steps: int) -> tuple[int, int, int]:  # fmt: skip
    """(sequences ending the call, those of them with ``CONTEXT`` steps before the move,
    sequences going on): each a state, the (up to) ``CONTEXT`` steps before it and a common
    move there, within ``steps`` steps of the first state, as far as ``calls`` calls of the
    fuzzer saw where each step led."""
    guides: list[Guide] = []
    learn = Guide.learn

    def keep(guide: Guide, walk: Walk, end: str) -> int:
        if not guides:
            guides.append(guide)
        return learn(guide, walk, end)

    Guide.learn = keep  # type: ignore[method-assign]
    try:
        Fuzzer(CallSettings(bot_url=url, seed=1), store, budget=calls, seed=1,
               max_steps=steps).run()  # fmt: skip
    finally:
        Guide.learn = learn  # type: ignore[method-assign]
    guide = guides[0]
    first = next(state for state, way in guide.first.items() if not way)
    ending: set[tuple[str, tuple[str, ...], str]] = set()
    going: set[tuple[str, tuple[str, ...], str]] = set()
    nodes: set[tuple[str, tuple[str, ...]]] = {(first, ())}
    for _ in range(steps):
        after: set[tuple[str, tuple[str, ...]]] = set()
        for state, context in nodes:
            for offer in guide.offers.get(state, ()):
                if offer.rare or len(offer.steps) != 1:
                    continue
                step = describe(offer.steps[0])
                there = guide.led.get((state, step))
                if there is None:
                    continue  # never taken there: not known
                if there.startswith("end ") or there == "no input":  # a goodbye's prompt
                    ending.add((state, context, offer.label))
                elif there in guide.offers:
                    going.add((state, context, offer.label))
                    after.add((there, (*context, step)[-CONTEXT:]))
        nodes = after
    return len(ending), sum(len(c) == CONTEXT for _, c, _ in ending), len(going)


def median_text(found: list[int | None], budget: int) -> str:
    value = statistics.median([budget + 1 if n is None else n for n in found])
    return f">{budget}" if value > budget else f"{value:g}"


def walk_text(walk: list[int | None], budget: int, ran: bool, share: bool = False) -> str:
    """The random walk's median and how many found the bug; not ``ran`` (``--no-walk``)."""
    if not ran:
        return "random walk not run (--no-walk)"
    found = sum(n is not None for n in walk)
    told = f"{100 * found / len(walk):3.0f}% found" if share else f"found {found}/{len(walk)}"
    return f"random walk median {median_text(walk, budget):>6}, {told}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1,
                        help="the seeds are this one and the next --seeds - 1")  # fmt: skip
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--only", default="", help="bots by name, comma-separated")
    parser.add_argument("--count", action="store_true",
                        help="count the sequences a bug four steps deep may hang on (bot sound)")  # fmt: skip
    parser.add_argument("--calls", type=int, default=3000, help="the fuzzer's calls for --count")
    parser.add_argument("--no-walk", action="store_true",
                        help="the fuzzer only (to try a change; the baseline is then not run)")  # fmt: skip
    parser.add_argument("--per-seed", action="store_true",
                        help="also the fuzzer's calls to find each bug, seed by seed")  # fmt: skip
    options = parser.parse_args()
    if options.count:
        with (
            tempfile.TemporaryDirectory() as folder,
            deep_bot("sound") as url,
            TranscriptStore(Path(folder) / "t.db", write_behind=True) as store,
        ):
            asyncio.run(wait_for(url))
            ending, full, going = sequences(url, store, options.calls, options.max_steps)
        print(f"bot sound, {options.calls} calls of at most {options.max_steps} steps: "
              f"{ending} sequences of up to {CONTEXT} steps and a move that ends the call "
              f"({full} of them with {CONTEXT} steps before the move), {going} of up to "
              f"{CONTEXT} steps and a move that keeps it going; {options.budget} calls end on "
              f"at most {options.budget} sequences: "
              f"{100 * min(1.0, options.budget / full):.0f}% of those with {CONTEXT} steps")  # fmt: skip
        return
    names = [n for n in BUGS if BUGS[n] and (not options.only or n in options.only.split(","))]
    rows: dict[int, tuple[list[int | None], list[int | None]]] = {}
    budget = options.budget
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        store = stack.enter_context(TranscriptStore(Path(folder) / "t.db", write_behind=True))
        for name in names:
            url = stack.enter_context(deep_bot(name))
            asyncio.run(wait_for(url))
            seeds = range(options.first_seed, options.first_seed + options.seeds)
            fuzz = [fuzz_calls(url, store, s, budget, options.max_steps) for s in seeds]
            walk = [None if options.no_walk else
                    asyncio.run(walk_calls(url, store, s, budget, options.max_steps))
                    for s in seeds]  # fmt: skip
            depth = len(BUGS[name])
            rows.setdefault(depth, ([], []))[0].extend(fuzz)
            rows[depth][1].extend(walk)
            print(f"{name:<11} fuzz median {median_text(fuzz, budget):>6}, found "
                  f"{sum(n is not None for n in fuzz)}/{len(fuzz)}; "
                  + walk_text(walk, budget, not options.no_walk), flush=True)  # fmt: skip
            if options.per_seed:
                pairs = zip(seeds, fuzz, strict=True)
                calls = [f"{s}: {'-' if n is None else n}" for s, n in pairs]
                print("  fuzz per seed: " + ", ".join(calls))
    last = options.first_seed + options.seeds - 1
    print(f"per depth ({options.seeds} seeds, {options.first_seed} to {last}, budget {budget}):")
    for depth in sorted(rows):
        fuzz, walk = rows[depth]
        print(f"depth {depth}: fuzz median {median_text(fuzz, budget):>6}, "
              f"{100 * sum(n is not None for n in fuzz) / len(fuzz):3.0f}% found; "
              + walk_text(walk, budget, not options.no_walk, share=True))  # fmt: skip


if __name__ == "__main__":
    main()
