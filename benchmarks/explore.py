"""Benchmark of ``botemu explore`` against the reference IVR bot.

Starts ``examples/ivr_bot.py`` in its own process, then measures in the same run, in turns
(``--rounds``), with the same concurrency (``-j``) and the same transcript store:
- explore: a whole exploration of the bot (the breadth-first crawl and its follow-up calls):
  paths explored per second, and calls per second (paths and follow-ups);
- the baseline: plain calls placed with ``place_call`` against the same bot, each with a fixed
  caller (``press 1; press 12345678#; hangup``), the same number as the exploration made;
- the ratio of the exploration's calls per second to the plain calls per second (what the crawl
  costs beyond its calls: reading the Workflows into states, the graph, the follow-ups).

Prints the figures of each round and the medians. Asserts nothing about time. Run:
``python benchmarks/explore.py [--rounds 5] [-j 4]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from support import reference_bot, wait_for

from emulator.calling.caller import CallerScript
from emulator.calling.session import CallSettings, place_call
from emulator.explore.crawler import Crawler
from emulator.transcripts.store import TranscriptStore

SCRIPT = "press 1; press 12345678#; hangup"


async def explore_once(url: str, store: TranscriptStore, jobs: int) -> tuple[int, int, float]:
    """(paths, calls, seconds) of one whole exploration."""
    crawler = Crawler(CallSettings(bot_url=url, seed=1), store, jobs=jobs)
    started = time.perf_counter()
    graph = await crawler.crawl()
    return len(graph.edges), graph.calls, time.perf_counter() - started


async def plain_calls(url: str, store: TranscriptStore, calls: int, jobs: int) -> float:
    """Seconds for ``calls`` plain calls, ``jobs`` at a time."""
    settings = CallSettings(bot_url=url, seed=1, caller=CallerScript.from_inline(SCRIPT))
    gate = asyncio.Semaphore(jobs)

    async def one() -> None:
        async with gate:
            await place_call(settings, store)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return time.perf_counter() - started


async def measure(url: str, rounds: int, jobs: int) -> None:
    await wait_for(url)
    ratios, path_rates, call_rates, plain_rates = [], [], [], []
    with tempfile.TemporaryDirectory() as folder, TranscriptStore(Path(folder) / "t.db") as store:
        await explore_once(url, store, jobs)  # warm up both sides
        for n in range(1, rounds + 1):
            paths, calls, seconds = await explore_once(url, store, jobs)
            plain = await plain_calls(url, store, calls, jobs)
            path_rates.append(paths / seconds)
            call_rates.append(calls / seconds)
            plain_rates.append(calls / plain)
            ratios.append(call_rates[-1] / plain_rates[-1])
            print(f"round {n}: explore {paths} paths, {calls} calls in {seconds:.3f} s "
                  f"({path_rates[-1]:.1f} paths/s, {call_rates[-1]:.1f} calls/s); plain calls "
                  f"{plain_rates[-1]:.1f} calls/s; ratio {ratios[-1]:.2f}")  # fmt: skip
    print(f"median: explore {statistics.median(path_rates):.1f} paths/s, "
          f"{statistics.median(call_rates):.1f} calls/s; plain calls "
          f"{statistics.median(plain_rates):.1f} calls/s; ratio (explore calls/s to plain "
          f"calls/s) {statistics.median(ratios):.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("-j", "--jobs", type=int, default=4)
    options = parser.parse_args()
    with reference_bot() as url:
        asyncio.run(measure(url, options.rounds, options.jobs))


if __name__ == "__main__":
    main()
