"""Benchmark of the identity and connector services of a running botemu.

Starts ``botemu serve`` in its own process, with one registered bot, then measures in the same
run, with the same client and concurrency:
- tokens issued per second by the token endpoint (client credentials, RS256 signing);
- connector activities per second: a bot sending messages into a conversation (token checked,
  activity validated and stored, transcript written);
- the baseline: raw aiohttp round trips to the same server (its health endpoint);
- the ratio of activities to raw round trips.

Asserts nothing about time. Run: ``python benchmarks/connector.py [--requests 2000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

APP_ID = "11111111-2222-3333-4444-555555555555"
PASSWORD = "bench-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def rate(requests: int, concurrency: int, one: Callable[[aiohttp.ClientSession], Awaitable[None]],
               http: aiohttp.ClientSession) -> float:  # fmt: skip
    """Requests per second for ``requests`` calls of ``one``, ``concurrency`` at a time."""
    left = [requests]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await one(http)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return requests / (time.perf_counter() - started)


async def measure(base: str, requests: int, concurrency: int) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        for _ in range(100):
            try:
                async with http.get(f"{base}/_botemu/health") as r:
                    if r.status == 200:
                        break
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
        config = await (await http.get(f"{base}/_botemu/config")).json()
        form = {"grant_type": "client_credentials", "client_id": APP_ID,
                "client_secret": PASSWORD, "scope": config["connector_scope"]}  # fmt: skip

        async def token(h: aiohttp.ClientSession) -> None:
            async with h.post(config["token_url"], data=form) as r:
                assert r.status == 200, await r.text()
                await r.read()

        async with http.post(config["token_url"], data=form) as r:
            access = (await r.json())["access_token"]
        auth = {"Authorization": f"Bearer {access}"}
        async with http.post(f"{base}/v3/conversations", headers=auth, json={
            "bot": {"id": APP_ID}, "members": [{"id": "user-1"}], "isGroup": False,
        }) as r:  # fmt: skip
            assert r.status in (200, 201), await r.text()
            conversation = (await r.json())["id"]
        url = f"{base}/v3/conversations/{conversation}/activities"
        message = {"type": "message", "text": "benchmark message", "from": {"id": APP_ID}}

        async def activity(h: aiohttp.ClientSession) -> None:
            async with h.post(url, json=message, headers=auth) as r:
                assert r.status in (200, 201), await r.text()
                await r.read()

        async def raw(h: aiohttp.ClientSession) -> None:
            async with h.get(f"{base}/_botemu/health") as r:
                await r.read()

        await rate(200, concurrency, activity, http)  # warm up
        await rate(200, concurrency, raw, http)
        tokens = await rate(max(100, requests // 4), concurrency, token, http)
        activities = await rate(requests, concurrency, activity, http)
        baseline = await rate(requests, concurrency, raw, http)
    print(f"botemu connector benchmark (concurrency {concurrency})")
    print(f"  tokens issued per second:         {tokens:8.1f}")
    print(f"  connector activities per second:  {activities:8.1f}")
    print(f"  raw aiohttp round trips / second: {baseline:8.1f}")
    print(f"  ratio activities / raw:           {activities / baseline:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, "-m", "emulator", "serve", "--port", str(port), "--app-id", APP_ID,
             "--app-password", PASSWORD, "--certs", str(Path(tmp) / "certs"),
             "--db", str(Path(tmp) / "t.db")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            asyncio.run(measure(f"http://127.0.0.1:{port}", args.requests, args.concurrency))
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
