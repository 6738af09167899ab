"""What the benchmarks share: a free loopback port, and waiting for a bot to start. Imported as
``support`` (a benchmark runs as ``python benchmarks/NAME.py``, with this folder on its path)."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

IVR_BOT = Path(__file__).resolve().parent.parent / "examples" / "ivr_bot.py"


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


def _ticks(path: str) -> float:
    with open(path, encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int | None) -> tuple[float, float] | None:
    """Seconds of CPU (user + system) the process ``pid`` has used: (its main thread, the whole
    process), from ``/proc/PID/task/PID/stat`` and ``/proc/PID/stat``; None where there are no
    such files (or no ``pid``). A botemu's main thread runs the event loop; the others are the
    transcript's writer."""
    try:
        return _ticks(f"/proc/{pid}/task/{pid}/stat"), _ticks(f"/proc/{pid}/stat")
    except (OSError, IndexError, TypeError):
        return None


@contextmanager
def reference_bot() -> Iterator[str]:
    """The reference IVR bot (``examples/ivr_bot.py``) in its own process on a free port, until
    the context ends; its calling URL (not yet waited for: ``wait_for``)."""
    port = free_port()
    bot = subprocess.Popen([sys.executable, str(IVR_BOT), "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}/api/calls"
    finally:
        bot.terminate()
        bot.wait(timeout=10)


ROOT = Path(__file__).resolve().parent.parent


def run_builds(
    script: Path, child_args: list[str], against: Path, rounds: int
) -> dict[str, list[dict[str, Any]]]:
    """``script --child`` run in turns on this build and on the ``emulator`` package of
    ``against`` (a ``git archive`` of another build's ``emulator/``, extracted into ``against``),
    ``rounds`` times each, the order alternating; each child prints one JSON object of figures.
    The same machine, the same hour: what a ratio between two builds needs."""
    import json
    import os

    builds = {"this build": ROOT, str(against): against.resolve()}
    if not (builds[str(against)] / "emulator").is_dir():
        raise SystemExit(
            f"{against} has no emulator/ (git archive COMMIT emulator | tar -x -C DIR)"
        )
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    for number in range(rounds):
        order = list(builds) if number % 2 == 0 else list(reversed(builds))
        for name in order:
            env = {**os.environ, "PYTHONPATH": str(builds[name])}
            done = subprocess.run([sys.executable, str(script), "--child", *child_args],
                                  capture_output=True, text=True, env=env, check=False,
                                  cwd=builds[name])  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"{name}: {done.stderr.strip()[-2000:]}")
            found[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return found


def against_options(parser: argparse.ArgumentParser, rounds: int = 5) -> None:
    """``--against DIR`` and ``--rounds N`` (``run_builds``), and the hidden ``--child`` a build
    runs as."""
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another build's emulator/ (git archive), measured in turns")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
