"""What the benchmarks share: a free loopback port, and waiting for a bot to start. Imported as
``support`` (a benchmark runs as ``python benchmarks/NAME.py``, with this folder on its path)."""

from __future__ import annotations

import asyncio
import socket
import time

import aiohttp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def wait_for(url: str, seconds: float = 20.0, *, get: bool = False) -> None:
    """Until ``url`` answers a POST of ``{}`` (a GET with ``get``), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.request("GET" if get else "POST", url, data=b"{}") as response:
                    await response.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
    raise SystemExit(f"the bot did not start at {url}")
