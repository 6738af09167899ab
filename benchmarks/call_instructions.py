"""Instructions a call costs botemu, counted by callgrind: steadier than timings on a shared machine.

Starts ``examples/ivr_bot.py`` in its own process, then for each build places the calls
benchmark's calls (``calls.emulator_rate``: the full platform, the transcript store's writer
thread included, 4 at a time) in a process of its own under ``valgrind --tool=callgrind``,
twice: ``--base`` calls, then ``--base`` + ``--calls``. The difference of the two totals, divided
by ``--calls``, is the instructions of one call, without the start-up both runs share. Timings
on a shared machine move by 10 % from one run to the next; this count moved by 0.6 % between
two runs (more on a busy machine: how often the event loop wakes depends on timing). What it
cannot see is time spent waiting: the GIL, the cores, the bot.

With ``--against DIR`` (a ``git archive COMMIT emulator`` extracted into DIR) that build is
counted too, against this tree's bot, and the ratio printed. A run takes a few minutes a build
(callgrind runs a program about fifty times slower).

Asserts nothing. Run: ``python benchmarks/call_instructions.py [--calls 100] [--base 40]
[--against DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from support import IVR_BOT, free_port, wait_for

ROOT = Path(__file__).resolve().parent.parent


def child(url: str, calls: int, db: Path) -> None:
    """Place ``calls`` calls with the ``emulator`` on ``PYTHONPATH`` (this tree's or another's)."""
    from calls import emulator_rate

    asyncio.run(emulator_rate(url, calls, 4, db))


def count(root: Path, url: str, calls: int, state: Path) -> int:
    """Instructions of a process of ``root``'s build that places ``calls`` calls."""
    out = state / f"callgrind-{calls}.out"
    db = state / f"t-{calls}.db"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
         __file__, "--child", url, str(calls), str(db)],
        env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"callgrind of {root}: exit {done.returncode}\n{done.stderr[-2000:]}")
    totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    if totals is None:
        raise SystemExit(f"no total in {out}")
    return int(totals.group(1))


def per_call(root: Path, url: str, base: int, calls: int) -> float:
    with tempfile.TemporaryDirectory() as state:
        low = count(root, url, base, Path(state))
        high = count(root, url, base + calls, Path(state))
    return (high - low) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="the calls counted")
    parser.add_argument("--base", type=int, default=40, help="calls placed in both runs")
    parser.add_argument("--against", type=Path, metavar="DIR", help="another build's emulator/")
    parser.add_argument("--child", nargs=3, metavar=("URL", "CALLS", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, calls, db = args.child
        child(url, int(calls), Path(db))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    bot = subprocess.Popen([sys.executable, str(IVR_BOT), "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        asyncio.run(wait_for(url))
        builds = [("this build", ROOT)]
        if args.against:
            builds.append((f"--against {args.against}", args.against.resolve()))
        figures = []
        for name, root in builds:
            instructions = per_call(root, url, args.base, args.calls)
            figures.append(instructions)
            print(f"{name}: {instructions / 1e6:.3f} million instructions a call", flush=True)
        if len(figures) == 2:
            print(f"this build / --against: {figures[0] / figures[1]:.3f}")
    finally:
        bot.terminate()
        bot.wait(timeout=10)


if __name__ == "__main__":
    main()
