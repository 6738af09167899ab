"""Benchmark of live calls: how late the platform's timers fire when people call at once.

Starts ``examples/ivr_bot.py`` in its own process, then places ``--calls`` live calls to it at
once (``CallSettings(live=True)``, ``--pace`` real seconds per virtual second), each with a
caller who listens, presses 1 for sales during the menu, enters an account number and waits for
the goodbye. Every wait of a live call (for the next event of the Workflow playing, or for the
caller's act) is a timer: the benchmark records how much later than asked each one that ran out
actually ended (its lateness, in milliseconds), and prints p50, p99 and the worst, beside the
same figures for one call alone in the same run (the baseline). Lateness adds up within a call
unless the waits make up for it: the drift is how far behind the Workflow's own real-time
schedule each prompt begins and each timer is set (``Drift``, from the first of them in each
Workflow). It also prints the memory each live call holds (``tracemalloc``, with every call in
progress, against none), in a second run of the calls: tracemalloc slows every allocation and
its snapshot stops the event loop, which the first run would count as lateness.

Asserts nothing about time. Run: ``python benchmarks/live.py [--calls 20] [--pace 0.5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from support import reference_bot, wait_for

from emulator.calling.live import LiveCaller
from emulator.calling.session import CallSettings, place_call
from emulator.transcripts.store import TranscriptStore


class TimedCaller(LiveCaller):
    """A live caller that records the lateness of every wait that ran out."""

    def __init__(self, late: list[float]) -> None:
        super().__init__()
        self.late = late

    async def next(self, seconds: float) -> tuple[object, float] | None:  # type: ignore[override]
        started = time.perf_counter()
        act = await super().next(seconds)
        if act is None:
            self.late.append((time.perf_counter() - started - seconds) * 1000)
        return act


class Drift:
    """How far behind the call's own real-time schedule each prompt begins and each timer is
    set, within one Workflow's playing (measured from the first of them): the lateness of the
    waits, added up."""

    def __init__(self, pace: float, drift: list[float]) -> None:
        self.pace, self.drift = pace, drift
        self.first: tuple[float, float] | None = None

    def __call__(self, kind: str, payload: dict[str, object], vtime: float) -> None:
        now = time.perf_counter()
        if kind == "note" and str(payload.get("summary", "")).startswith("Workflow ["):
            self.first = None  # a new Workflow: its playing starts its own schedule
        elif kind in ("live.playing", "live.timer"):
            if self.first is None:
                self.first = (vtime, now)
            else:
                schedule = self.first[1] + (vtime - self.first[0]) * self.pace
                self.drift.append((now - schedule) * 1000)


async def one_call(
    url: str, store: TranscriptStore, pace: float, late: list[float], drift: list[float]
) -> str:
    caller = TimedCaller(late)
    settings = CallSettings(bot_url=url, pace=pace, live=True)
    call = asyncio.create_task(place_call(settings, store, live=caller,  # type: ignore[arg-type]
                                          listener=Drift(pace, drift)))  # fmt: skip
    await asyncio.sleep(6 * pace)  # virtual 6 s: the menu prompt plays from 2.4 s to 11.6 s
    caller.press("1")
    await asyncio.sleep(4 * pace)
    caller.press("12345678#")
    report = await asyncio.wait_for(call, 120)
    return report.end_reason.value


DRIFT = "prompts and timers behind the Workflow's schedule,"


def figures(late: list[float], what: str = "timers, lateness") -> str:
    ordered = sorted(late)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (f"{len(ordered)} {what} p50 {statistics.median(ordered):.1f} ms, "
            f"p99 {p99:.1f} ms, worst {ordered[-1]:.1f} ms")  # fmt: skip


async def measure(url: str, calls: int, pace: float) -> None:
    await wait_for(url)
    with tempfile.TemporaryDirectory() as folder:
        with TranscriptStore(Path(folder) / "t.db", write_behind=True) as store:
            alone, alone_drift = [], []  # type: ignore[var-annotated]
            print("one call alone:", await one_call(url, store, pace, alone, alone_drift))
            print(f"  baseline: {figures(alone)}")
            print(f"  baseline: {figures(alone_drift, DRIFT)}")
            late: list[float] = []
            drift: list[float] = []
            ends = await asyncio.gather(*(one_call(url, store, pace, late, drift)
                                          for _ in range(calls)))  # fmt: skip
            # Memory in a run of its own: tracemalloc slows every allocation and its snapshot
            # stops the loop, which would be counted as the timers' lateness.
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            tasks = [asyncio.create_task(one_call(url, store, pace, [], []))
                     for _ in range(calls)]  # fmt: skip
            await asyncio.sleep(8 * pace)  # every call in progress
            during = tracemalloc.take_snapshot()
            await asyncio.gather(*tasks)
            tracemalloc.stop()
    held = sum(s.size_diff for s in during.compare_to(before, "filename"))
    print(f"{calls} calls at once: {ends.count('bot hung up')} ended by the bot")
    print(f"  {figures(late)}")
    print(f"  {figures(drift, DRIFT)}")
    print(f"  memory held per live call: {held / calls / 1024:.1f} KiB (tracemalloc)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--pace", type=float, default=0.5)
    options = parser.parse_args()
    with reference_bot() as url:
        asyncio.run(measure(url, options.calls, options.pace))


if __name__ == "__main__":
    main()
