"""Benchmark of load generation on Locust (``emulator.load``), in two parts.

``throughput`` (the default): against the reference IVR bot (``examples/ivr_bot.py``, its own
process), in rounds that alternate so both paths see the same machine load:
- the asyncio path: calls placed as ``benchmarks/calls.py`` places them (``place_call`` over
  aiohttp, concurrency 4, every event committed to a write-behind transcript store);
- the Locust path: ``botemu load`` (``CallerUser``: the same ``CallSession``, driven by gevent),
  one process, 4 callers placing calls back to back in virtual time, transcripts kept as
  ``--keep`` says (``none`` and ``all`` are both measured);
- the raw baseline: plain aiohttp POSTs of a Conversation to the same bot;
and prints calls and requests per second of each and the ratio Locust / asyncio (target >= 0.8).

``concurrency``: ``--users`` calls (10,000 by default) held open at ``--pace 1.0`` against a
trivial bot whose Workflow plays a long prompt, in one Locust process: the peak number of open
calls, the process's resident memory at that peak against its memory with one user (the
baseline), the memory per open call (aim: under 50 KB), and the calls that started late.

Asserts nothing about time. Run: ``python benchmarks/load.py [throughput|concurrency]
[--rounds 5] [--seconds 5] [--users 10000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
LOCUSTFILE = ROOT / "emulator" / "load" / "locustfile.py"
TRIVIAL_BOT = Path(__file__).with_name("trivial_bot.py")


def calls_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "calls_bench", Path(__file__).with_name("calls.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def locust_rate(url: str, seconds: float, users: int, keep: str, db: Path) -> tuple[float, float]:
    """(calls per second, requests per second) of ``botemu load`` with ``users`` callers back
    to back in virtual time, one process (its JSON summary)."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        command = [sys.executable, "-m", "emulator", "load", "--bot", url, "--users", str(users),
                   "--duration", f"{seconds:g}s", "--pace", "0", "--caller", calls_module().SCRIPT,
                   "--keep", keep, "--db", str(db), "--no-progress", "--no-token",
                   "--json", str(summary)]  # fmt: skip
        subprocess.run(command, capture_output=True, timeout=seconds + 60, check=True, cwd=tmp,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
        document = json.loads(summary.read_text())
    calls = next(r for r in document["requests"] if r["name"] == "Conversation")
    return float(calls["rps"]), float(document["total"]["rps"])


def throughput(args: argparse.Namespace) -> None:
    calls = calls_module()
    port = calls.free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    bot = subprocess.Popen([sys.executable, str(calls.BOT), "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    rows: list[tuple[float, float, float, float, float, float]] = []
    try:
        asyncio.run(calls.wait_for(url))
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            locust_rate(url, 2, 4, "none", db)  # warm up
            for _ in range(args.rounds):
                elapsed, requests, placed, _ = asyncio.run(
                    calls.emulator_rate(url, args.calls, 4, db)
                )
                none_calls, none_requests = locust_rate(url, args.seconds, 4, "none", db)
                all_calls, _ = locust_rate(url, args.seconds, 4, "all", db)
                raw_elapsed, posts = asyncio.run(calls.raw_rate(url, requests, 4))
                rows.append((placed / elapsed, requests / elapsed, none_calls, none_requests,
                             all_calls, posts / raw_elapsed))  # fmt: skip
    finally:
        bot.terminate()
        bot.wait(timeout=10)
    med = [statistics.median(r[i] for r in rows) for i in range(6)]
    ratio_none = statistics.median(r[2] / r[0] for r in rows)
    ratio_all = statistics.median(r[4] / r[0] for r in rows)
    print(f"botemu load throughput against {calls.BOT.name} ({calls.SCRIPT!r}, 4 callers, "
          f"{args.rounds} rounds; medians)")  # fmt: skip
    print(f"  asyncio path (place_call):         {med[0]:8.1f} calls/s  {med[1]:8.1f} requests/s")
    print(f"  Locust path, --keep none:          {med[2]:8.1f} calls/s  {med[3]:8.1f} requests/s")
    print(f"  Locust path, --keep all:           {med[4]:8.1f} calls/s")
    print(f"  raw aiohttp POSTs:                                 {med[5]:8.1f} requests/s")
    print(f"  ratio Locust / asyncio: {ratio_none:.2f} (--keep none), {ratio_all:.2f} "
          "(--keep all); target >= 0.8")  # fmt: skip


CONCURRENCY_PROBE = """
import os, resource, sys, time
import gevent
from locust.env import Environment
from emulator.load import user as u
from emulator.load.metrics import METRICS

class Options:
    botemu_scenarios = []; botemu_caller = "listen"; botemu_pace = 1.0; botemu_keep = "none"
    botemu_db = None; botemu_app_id = None; botemu_certs = "certs"; botemu_no_token = True
    botemu_rate = 0.0; botemu_emulator = None

def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

users, spawn, host = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
env = Environment(user_classes=[u.CallerUser], host=host, parsed_options=Options())
runner = env.create_local_runner()
runner.start(1, spawn_rate=1)
gevent.sleep(3)
base = rss_kib()
runner.start(users, spawn_rate=spawn)
peak, peak_rss, started = 0, base, time.monotonic()
while time.monotonic() - started < users / spawn + 20:
    gevent.sleep(1)
    active = METRICS.totals.started - METRICS.totals.done
    if active > peak:
        peak, peak_rss = active, rss_kib()
failed = env.stats.total.num_failures
runner.quit()
print(peak, base, peak_rss, METRICS.totals.late, failed, env.stats.total.num_requests)
"""


def concurrency(args: argparse.Namespace) -> None:
    calls = calls_module()
    port = calls.free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    bot = subprocess.Popen([sys.executable, str(TRIVIAL_BOT), str(port), str(args.prompt)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        asyncio.run(calls.wait_for(url))
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CONCURRENCY_PROBE, str(args.users), str(args.spawn), url],
            capture_output=True, text=True, timeout=args.users / args.spawn + 300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        took = time.perf_counter() - started
    finally:
        bot.terminate()
        bot.wait(timeout=10)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    peak, base, peak_rss, late, failed, requests = map(int, done.stdout.split()[-6:])
    per_call = (peak_rss - base) * 1024 / max(peak, 1)
    print(f"botemu load concurrency at pace 1.0 ({args.users} users spawned at {args.spawn:g}/s, "
          f"each call a {args.prompt}s prompt; one process; {took:.0f} s)")  # fmt: skip
    print(f"  open calls at the peak:        {peak:8d}")
    print(f"  resident memory, 1 call:       {base / 1024:8.1f} MiB (the baseline)")
    print(f"  resident memory at the peak:   {peak_rss / 1024:8.1f} MiB")
    print(f"  memory per open call:          {per_call / 1024:8.1f} KiB (aim: under 50 KB)")
    print(f"  calls started late:            {late:8d}")
    print(f"  requests, failed:              {requests:8d}, {failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "part", nargs="?", default="throughput", choices=["throughput", "concurrency"]
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300, help="asyncio calls per round")
    parser.add_argument("--seconds", type=float, default=5.0, help="Locust seconds per round")
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--spawn", type=float, default=500.0, help="users started per second")
    parser.add_argument("--prompt", type=int, default=60, help="seconds each call's prompt lasts")
    args = parser.parse_args()
    (throughput if args.part == "throughput" else concurrency)(args)


if __name__ == "__main__":
    main()
