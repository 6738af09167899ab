"""Benchmark of ``botemu fuzz`` against the reference IVR bot.

Starts ``examples/ivr_bot.py`` in its own process, then measures in the same run, in turns
(``--rounds``), against the same bot:
- fuzz: a search of ``--budget`` callers (``emulator.fuzz.search.Fuzzer``; the reference bot
  survives it, so there is no shrinking): calls per second;
- the baseline: ``botemu test`` on the bundled example scenarios written for the reference bot
  (``scenarios/examples``, tag ``ivr``), in the same process (``emulator.cli.main``), one at a
  time: calls per second;
- the ratio of the two.

Both run one call at a time. Prints each round's figures and the medians. Asserts nothing about
time. Run: ``python benchmarks/fuzz_speed.py [--rounds 3] [--budget 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import statistics
import tempfile
import time
from pathlib import Path

from support import reference_bot, wait_for

from emulator.calling.session import CallSettings
from emulator.cli import main as botemu
from emulator.fuzz.search import Fuzzer
from emulator.transcripts.store import TranscriptStore

ROOT = Path(__file__).resolve().parent.parent


def fuzz_rate(url: str, folder: Path, budget: int) -> float:
    with TranscriptStore(folder / "fuzz.db", write_behind=True) as store:
        fuzzer = Fuzzer(CallSettings(bot_url=url, seed=1), store, budget=budget)
        started = time.perf_counter()
        found = fuzzer.run()
        seconds = time.perf_counter() - started
    if found.failures:
        raise SystemExit(f"the reference bot failed the fuzzer: {list(found.failures)}")
    return found.calls / seconds


def test_rate(url: str, folder: Path) -> float:
    report = folder / "test.json"
    args = ["test", str(ROOT / "scenarios" / "examples"), "--tag", "ivr", "--bot", url,
            "--no-token", "--db", str(folder / "test.db"), "--json", str(report)]  # fmt: skip
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = botemu(args)
    seconds = time.perf_counter() - started
    results = json.loads(report.read_text())
    calls = int(results["summary"]["tests"])
    if code != 0 or not calls:
        raise SystemExit(f"botemu test failed against the reference bot (exit {code})")
    return calls / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=300)
    options = parser.parse_args()
    fuzzes: list[float] = []
    tests: list[float] = []
    ratios: list[float] = []
    with reference_bot() as url:
        asyncio.run(wait_for(url))
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            test_rate(url, folder)  # warm up
            for n in range(1, options.rounds + 1):
                fuzzes.append(fuzz_rate(url, folder, options.budget))
                tests.append(test_rate(url, folder))
                ratios.append(fuzzes[-1] / tests[-1])
                print(f"round {n}: fuzz {fuzzes[-1]:.1f} calls/s; botemu test "
                      f"{tests[-1]:.1f} calls/s; ratio {ratios[-1]:.2f}")  # fmt: skip
    print(f"median: fuzz {statistics.median(fuzzes):.1f} calls/s; botemu test "
          f"{statistics.median(tests):.1f} calls/s; ratio {statistics.median(ratios):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
