"""Benchmark of whole calls over loopback HTTP against the reference IVR bot.

Starts ``examples/ivr_bot.py`` in its own process, then in the same run measures:
- botemu: calls per second and bot requests (Conversation + callbacks) per second, placing calls
  with the full platform: validation, engine, transcript store (SQLite, every event committed);
- the baseline: raw aiohttp POST round trips per second against the same bot, with the same
  concurrency, each posting a Conversation notification (so the bot does the same kind of work);
- the ratio of the two request rates (target: at least 0.7).

Asserts nothing about time. Run: ``python benchmarks/calls.py [--calls 200] [--concurrency 4]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp

from emulator.calling.caller import CallerScript
from emulator.calling.session import CallSettings, place_call
from emulator.transcripts.store import TranscriptStore

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "examples" / "ivr_bot.py"
SCRIPT = "press 1; press 12345678#; hangup"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def wait_for(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.post(url, data=b"{}") as response:
                    await response.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
    raise SystemExit(f"the bot did not start at {url}")


async def emulator_rate(
    url: str, calls: int, concurrency: int, db: Path
) -> tuple[float, int, float]:
    """(seconds, bot requests, calls) for ``calls`` calls placed ``concurrency`` at a time."""
    store = TranscriptStore(db, write_behind=True)
    caller = CallerScript.from_inline(SCRIPT)
    settings = CallSettings(bot_url=url, caller=caller, seed=1)
    queue = list(range(calls))
    requests = 0

    async def worker(http: aiohttp.ClientSession) -> None:
        nonlocal requests
        while queue:
            queue.pop()
            report = await place_call(settings, store, http=http)
            requests += report.workflows + 1 if report.workflows else 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    store.close()
    return elapsed, requests, calls


async def raw_rate(url: str, posts: int, concurrency: int) -> tuple[float, int]:
    """(seconds, posts): plain aiohttp POSTs of a Conversation, read to the end."""
    queue = list(range(posts))

    async def worker(http: aiohttp.ClientSession) -> None:
        while queue:
            queue.pop()
            body = json.dumps({
                "id": str(uuid.uuid4()),
                "participants": [{"identity": "8:bench", "originator": True}],
                "presentedModalityTypes": ["audio"],
                "isMultiparty": False,
                "callState": "incoming",
            }).encode()  # fmt: skip
            headers = {
                "Content-Type": "application/json",
                "X-Platform-Chain-ID": str(uuid.uuid4()),
                "X-Platform-Message-ID": str(uuid.uuid4()),
            }
            async with http.post(url, data=body, headers=headers) as response:
                await response.read()

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        return time.perf_counter() - started, posts


async def measure(url: str, calls: int, concurrency: int, rounds: int) -> None:
    await wait_for(url)
    rates: list[tuple[float, float, float]] = []  # (calls/s, requests/s, raw posts/s) per round
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        await emulator_rate(url, max(10, calls // 10), concurrency, db)  # warm up both sides
        await raw_rate(url, max(40, calls // 4), concurrency)
        for _ in range(rounds):  # alternate, so both see the same machine load
            elapsed, requests, placed = await emulator_rate(url, calls, concurrency, db)
            raw_elapsed, posts = await raw_rate(url, requests, concurrency)
            rates.append((placed / elapsed, requests / elapsed, posts / raw_elapsed))
    calls_s = statistics.median(r[0] for r in rates)
    emulated = statistics.median(r[1] for r in rates)
    raw = statistics.median(r[2] for r in rates)
    ratios = sorted(r[1] / r[2] for r in rates)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(f"botemu calls benchmark against {BOT.name} ({SCRIPT!r}, concurrency {concurrency}, "
          f"{rounds} rounds of {calls} calls; medians)")  # fmt: skip
    print(f"  calls per second:               {calls_s:8.1f}")
    print(f"  bot requests per second:        {emulated:8.1f}  (Conversation + callbacks)")
    print(f"  raw aiohttp POSTs per second:   {raw:8.1f}")
    print(
        f"  ratio botemu / raw:             {statistics.median(ratios):8.2f}  "
        f"(median of {len(ratios)} paired rounds; quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f}, "
        f"range {ratios[0]:.2f}-{ratios[-1]:.2f}; target >= 0.7)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per round")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=21, help="short rounds, each paired "
                        "with a raw round right after it: a burst of load on a shared machine "
                        "then spoils a few pairs, not the median")  # fmt: skip
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    bot = subprocess.Popen(
        [sys.executable, str(BOT), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        asyncio.run(measure(url, args.calls, args.concurrency, args.rounds))
    finally:
        bot.terminate()
        bot.wait(timeout=10)


if __name__ == "__main__":
    main()
