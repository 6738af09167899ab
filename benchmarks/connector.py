"""Benchmark of the identity and connector services of a running botemu.

Starts ``botemu serve`` in its own process, with one registered bot, then measures in the same
run, with the same client and concurrency:
- tokens issued per second by the token endpoint (client credentials, RS256 signing);
- connector activities per second: a bot sending messages into a conversation (token checked,
  activity validated and stored, transcript written);
- the baseline: raw aiohttp round trips to the same server (its health endpoint);
- the ratio of activities to raw round trips.

With ``--compare-commit`` it compares the two orders of answering and committing, in the same
run: two ``botemu serve`` processes side by side, one as it is (the transcript is written behind:
the 200 goes out before the exchange's events are committed) and one with
``BOTEMU_WRITE_BEHIND=0`` (each event committed before the 200 goes out), measured in turns
``--rounds`` times so that both see the same load; it prints each one's activities per second
and the median of the paired ratios (docs/transcripts.md, "Durability").

With ``--rounds N`` (no ``--compare-commit``) activities and raw round trips are measured N
times in turns and the ratio is the median of the N paired ratios (steadier on a shared machine
than one pair). With ``--profile FILE`` the server runs under cProfile and writes its statistics
to FILE when it stops (read them with ``python -m pstats FILE``). Each measurement also prints
the CPU time the server's main thread (the event loop) spent per request, read from ``/proc``
(Linux): it depends much less than requests per second on what else the machine is doing.

With ``--against DIR`` a second server runs the ``emulator`` package of DIR (another checkout of
the project, such as the commit before a change: ``git archive COMMIT emulator | tar -x -C DIR``)
beside this tree's, and both are measured in turns, ``--rounds`` times (default 10): each one's
median ratio and main-thread CPU per request, under the same load.

Asserts nothing about time. Run: ``python benchmarks/connector.py [--requests 2000]
[--rounds N] [--profile FILE] [--compare-commit [--rounds 10]] [--against DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

APP_ID = "11111111-2222-3333-4444-555555555555"
PASSWORD = "bench-secret"
One = Callable[[aiohttp.ClientSession], Awaitable[None]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main_thread_cpu(pid: int | None) -> float | None:
    """Seconds of CPU the main thread of process ``pid`` has used (user + system), from
    ``/proc/PID/task/PID/stat``; None where there is no such file."""
    try:
        with open(f"/proc/{pid}/task/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU: dict[str, list[float]] = {}
"""Microseconds of the server's main-thread CPU per request, by what was measured."""


async def rate(requests: int, concurrency: int, one: Callable[[aiohttp.ClientSession], Awaitable[None]],
               http: aiohttp.ClientSession, *, server: int | None = None,
               label: str = "") -> float:  # fmt: skip
    """Requests per second for ``requests`` calls of ``one``, ``concurrency`` at a time; with
    ``server`` (its pid), its main thread's CPU per request goes into ``CPU[label]``."""
    before = main_thread_cpu(server)
    left = [requests]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await one(http)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    after = main_thread_cpu(server)
    if before is not None and after is not None:
        CPU.setdefault(label, []).append((after - before) / requests * 1e6)
    return requests / elapsed


async def prepare(base: str, http: aiohttp.ClientSession) -> tuple[One, One]:
    """Wait for the server, then (a token request, a connector activity) as request functions:
    the activity is a message sent into a new conversation with a token from the endpoint."""
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

    return token, activity


async def measure(base: str, requests: int, concurrency: int, rounds: int = 1,
                  server: int | None = None) -> None:  # fmt: skip
    """With ``rounds`` > 1, activities and raw round trips are measured ``rounds`` times in turns
    (the first of each round alternates) and the ratio printed is the median of the paired
    ratios: on a shared machine the load changes between two measurements, less within a pair."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        token, activity = await prepare(base, http)

        async def raw(h: aiohttp.ClientSession) -> None:
            async with h.get(f"{base}/_botemu/health") as r:
                await r.read()

        await rate(200, concurrency, activity, http)  # warm up
        await rate(200, concurrency, raw, http)
        tokens = await rate(max(100, requests // 4), concurrency, token, http)
        pairs: list[tuple[float, float]] = []
        for n in range(rounds):
            if n % 2 == 0:
                activities = await rate(requests, concurrency, activity, http, server=server,
                                        label="activity")  # fmt: skip
                baseline = await rate(requests, concurrency, raw, http, server=server, label="raw")
            else:
                baseline = await rate(requests, concurrency, raw, http, server=server, label="raw")
                activities = await rate(requests, concurrency, activity, http, server=server,
                                        label="activity")  # fmt: skip
            pairs.append((activities, baseline))
    print(f"botemu connector benchmark (concurrency {concurrency})")
    print(f"  tokens issued per second:         {tokens:8.1f}")
    if CPU.get("activity") and CPU.get("raw"):
        print(f"  server main-thread CPU / request:  activity {statistics.median(CPU['activity']):.0f} µs, "
              f"raw {statistics.median(CPU['raw']):.0f} µs (median of {rounds}; from /proc)")  # fmt: skip
    if rounds > 1:
        ratios = [a / b for a, b in pairs]
        print(
            f"  {rounds} rounds of {requests} requests each, in turns (activities/s, raw/s, ratio):"
        )
        print("   " + "  ".join(f"{a:.0f}/{b:.0f}={a / b:.2f}" for a, b in pairs))
        activities = statistics.median(a for a, _ in pairs)
        baseline = statistics.median(b for _, b in pairs)
        print(f"  connector activities per second:  {activities:8.1f}  (median)")
        print(f"  raw aiohttp round trips / second: {baseline:8.1f}  (median)")
        print(f"  ratio activities / raw:           {statistics.median(ratios):8.2f}  "
              f"(median of the paired ratios; min {min(ratios):.2f}, max {max(ratios):.2f})")  # fmt: skip
        return
    print(f"  connector activities per second:  {activities:8.1f}")
    print(f"  raw aiohttp round trips / second: {baseline:8.1f}")
    print(f"  ratio activities / raw:           {activities / baseline:8.2f}")


async def compare(bases: dict[bool, str], requests: int, concurrency: int, rounds: int
                  ) -> dict[bool, list[float]]:  # fmt: skip
    """Activities per second of each server (key: commits first), ``rounds`` times, in turns
    (the first of each round alternates), so that both see the same load on the machine."""
    figures: dict[bool, list[float]] = {False: [], True: []}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        activities = {key: (await prepare(base, http))[1] for key, base in bases.items()}
        for key in bases:
            await rate(200, concurrency, activities[key], http)  # warm up
        for n in range(rounds):
            for key in (False, True) if n % 2 == 0 else (True, False):
                figures[key].append(await rate(requests, concurrency, activities[key], http))
    return figures


def start_server(tmp: Path, *, commit_first: bool, profile: Path | None = None,
                 tree: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:  # fmt: skip
    """``botemu serve`` on a free port with a database of its own; with ``commit_first``,
    ``BOTEMU_WRITE_BEHIND=0`` (each event committed before the answer goes out); with
    ``profile``, under cProfile, which writes its statistics there when the server stops; with
    ``tree``, the ``emulator`` package of that directory (run from it, first on the path)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "BOTEMU_WRITE_BEHIND"}
    if commit_first:
        env["BOTEMU_WRITE_BEHIND"] = "0"
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
    db = Path(tempfile.mkdtemp(dir=tmp)) / "t.db"
    python = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else [])
    server = subprocess.Popen(
        [*python, "-m", "emulator", "serve", "--port", str(port), "--app-id", APP_ID,
         "--app-password", PASSWORD, "--certs", str(tmp / "certs"), "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tree,
    )  # fmt: skip
    return server, f"http://127.0.0.1:{port}"


async def against(servers: dict[str, tuple[int, str]], requests: int, concurrency: int,
                  rounds: int) -> None:  # fmt: skip
    """Two servers (name: (pid, base)) measured in turns, ``rounds`` times, activities then raw
    round trips on each: each one's ratios and main-thread CPU per request."""
    ratios: dict[str, list[float]] = {name: [] for name in servers}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        kinds = {
            name: (pid, await prepare(base, http), base) for name, (pid, base) in servers.items()
        }
        for _, (_, activity), base in kinds.values():
            await rate(200, concurrency, activity, http)  # warm up
            await rate(200, concurrency, raw_round_trip(base), http)
        for n in range(rounds):
            for name in list(servers) if n % 2 == 0 else list(reversed(servers)):
                pid, (_, activity), base = kinds[name]
                a = await rate(
                    requests, concurrency, activity, http, server=pid, label=f"{name} activity"
                )
                b = await rate(
                    requests,
                    concurrency,
                    raw_round_trip(base),
                    http,
                    server=pid,
                    label=f"{name} raw",
                )
                ratios[name].append(a / b)
    print(f"botemu connector, two servers in turns ({rounds} rounds of {requests} requests each)")
    for name, values in ratios.items():
        cpu = {
            kind: statistics.median(CPU.get(f"{name} {kind}") or [0.0])
            for kind in ("activity", "raw")
        }
        print(
            f"  {name}: ratio {statistics.median(values):.2f} (median; "
            + " ".join(f"{v:.2f}" for v in values)
            + f"); main-thread CPU per activity "
            f"{cpu['activity']:.0f} µs, per raw round trip {cpu['raw']:.0f} µs (medians)"
        )


def raw_round_trip(base: str) -> One:
    """The baseline request: ``GET /_botemu/health``, its body read."""

    async def raw(h: aiohttp.ClientSession) -> None:
        async with h.get(f"{base}/_botemu/health") as r:
            await r.read()

    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--compare-commit", action="store_true",
                        help="activities per second answered before and after their commit")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=None,
                        help="measurements of each kind, in turns: the ratio is the median of "
                             "the paired ratios (default 1; 10 with --compare-commit)")  # fmt: skip
    parser.add_argument("--profile", type=Path, metavar="FILE",
                        help="run the server under cProfile and write its statistics to FILE "
                             "(pstats; the figures are then cProfile's, not the server's)")  # fmt: skip
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also serve the emulator package of DIR (another checkout) and "
                             "measure both in turns, --rounds times (default 10)")  # fmt: skip
    args = parser.parse_args()
    if args.against:
        with tempfile.TemporaryDirectory() as tmp:
            pair = {"this tree": start_server(Path(tmp), commit_first=False),
                    str(args.against): start_server(Path(tmp), commit_first=False,
                                                    tree=args.against.resolve())}  # fmt: skip
            try:
                asyncio.run(against({name: (server.pid, base) for name, (server, base) in pair.items()},
                                    args.requests, args.concurrency, args.rounds or 10))  # fmt: skip
            finally:
                for server, _ in pair.values():
                    server.terminate()
                    server.wait(timeout=30)
        return
    with tempfile.TemporaryDirectory() as tmp:
        keys = (False, True) if args.compare_commit else (False,)
        servers = {key: start_server(Path(tmp), commit_first=key, profile=args.profile)
                   for key in keys}  # fmt: skip
        try:
            if not args.compare_commit:
                rounds = args.rounds or 1
                server, base = servers[False]
                asyncio.run(measure(base, args.requests, args.concurrency, rounds, server.pid))
                return
            bases = {key: base for key, (_, base) in servers.items()}
            rounds = args.rounds or 10
            figures = asyncio.run(compare(bases, args.requests, args.concurrency, rounds))
        finally:
            for server, _ in servers.values():
                server.terminate()
                server.wait(timeout=30)
    ratios = [first / behind for behind, first in zip(figures[False], figures[True], strict=True)]
    behind, first = (statistics.median(figures[k]) for k in (False, True))
    ratio = statistics.median(ratios)
    print(f"botemu connector: answer before or after the commit (concurrency {args.concurrency}, "
          f"{args.requests} activities x {rounds} rounds, two servers in turns)")  # fmt: skip
    for name, key in (("answer, then commit (write-behind, the default)", False),
                      ("commit, then answer (BOTEMU_WRITE_BEHIND=0)", True)):  # fmt: skip
        runs = " ".join(f"{v:.0f}" for v in figures[key])
        print(f"  {name:<48} median {statistics.median(figures[key]):7.1f} /s  ({runs})")
    print(
        f"  committing first: median of the paired ratios {ratio:.3f} "
        f"({100 * (ratio - 1):+.1f}% activities per second); "
        f"{1e3 * args.concurrency * (1 / first - 1 / behind):+.2f} ms per activity at the medians"
    )


if __name__ == "__main__":
    main()
