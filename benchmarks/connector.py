"""Benchmark of the identity and connector services of a running botemu.

Starts ``botemu serve`` in its own process, with one registered bot, then measures in the same
run, with the same client and concurrency:
- tokens issued per second by the token endpoint (client credentials, RS256 signing);
- connector activities per second: a bot sending messages into a conversation (token checked,
  activity validated and stored, transcript written);
- the baseline, raw round trips of the same request to the same server: a POST of the very
  bytes an activity sends (the same body, the same headers, a path of the same length) to a
  route that only reads the body and answers as the connector answers an activity
  (``emulator/connector/echo.py``);
- the old baseline beside it, raw ``GET /_botemu/health`` round trips;
- the ratio of activities to each baseline. The figure to look at is activities / raw POST.

Why the raw POST: on a 2-core machine the benchmark is bound by CPU in total, the client's as
much as the server's, and aiohttp's client spends about a third more on a POST with a body and a
700-character token than on a GET of the health route (about 150 µs against 115; the server
105 µs on the raw POST, 90 on the GET: docs/connector.md, "Throughput"). Against the GET, the
ratio measured the client's posting and the reading of a body as much as the connector. The raw
POST costs the client what an activity costs it (both send the same bytes, encoded once), so
the two differ only in what the server does with them. Its route cannot be any of botemu's
(each checks a token, parses, keeps state or writes a transcript): it is a route of its own,
which the server adds only when ``BOTEMU_BENCH_ECHO=1`` is in its environment as the app is
built. The benchmark sets it on the servers it starts; ``botemu serve`` without it has no such
route (404), and with it the route keeps nothing, tells nothing and checks nothing.

Each measurement also prints the CPU time per request of the server's main thread (the event
loop), of its other threads (the transcript's writer) and of this client, read from ``/proc``
(Linux) and ``time.process_time``: they depend much less than requests per second on what else
the machine is doing.

With ``--rounds N`` the three kinds are measured N times in turns (the order rotates from one
round to the next) and each ratio is the median of the N paired ratios (each round's activities
over the same round's baseline: steadier on a shared machine than one pair). With ``--profile
FILE`` the server runs under cProfile and writes its statistics to FILE when it stops (read them
with ``python -m pstats FILE``; cProfile sees only the main thread).

With ``--against DIR`` a second server runs the ``emulator`` package of DIR (another checkout of
the project, such as the commit before a change: ``git archive COMMIT emulator | tar -x -C DIR``)
beside this tree's, and both are measured in turns, ``--rounds`` times (default 10): each one's
figures, as above, under the same load. A tree from before the echo route is sent the other
server's raw POST (said in the output).

With ``--compare-commit`` it compares the two orders of answering and committing, in the same
run: two ``botemu serve`` processes side by side, one as it is (the transcript is written behind:
the 200 goes out before the exchange's events are committed) and one with
``BOTEMU_WRITE_BEHIND=0`` (each event committed before the 200 goes out), measured in turns
``--rounds`` times so that both see the same load; it prints each one's activities per second
and the median of the paired ratios (docs/transcripts.md, "Durability").

Asserts nothing about time. Run: ``python benchmarks/connector.py [--requests 2000]
[--rounds N] [--profile FILE] [--against DIR] [--compare-commit [--rounds 10]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from support import free_port, server_cpu

APP_ID = "11111111-2222-3333-4444-555555555555"
PASSWORD = "bench-secret"
ENV_ECHO = "BOTEMU_BENCH_ECHO"
"""Set on every server the benchmark starts: the raw POST's route (emulator/connector/echo.py)."""
ECHO_PREFIX = "/_bench"
One = Callable[[aiohttp.ClientSession], Awaitable[None]]
KINDS = ("activity", "raw POST", "GET health")


CPU: dict[str, dict[str, list[float]]] = {}
"""Microseconds of CPU per request, by what was measured: the server's main thread ("main"), its
other threads ("other") and this client process ("client")."""


async def rate(requests: int, concurrency: int, one: One, http: aiohttp.ClientSession, *,
               server: int | None = None, label: str = "") -> float:  # fmt: skip
    """Requests per second for ``requests`` calls of ``one``, ``concurrency`` at a time; with
    ``server`` (its pid), the CPU per request of its threads and of this client go into
    ``CPU[label]``."""
    before, client = server_cpu(server), time.process_time()
    left = [requests]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await one(http)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    after, client = server_cpu(server), time.process_time() - client
    if before is not None and after is not None:
        main, whole = after[0] - before[0], after[1] - before[1]
        figures = {"main": main, "other": whole - main, "client": client}
        for name, seconds in figures.items():
            CPU.setdefault(label, {}).setdefault(name, []).append(seconds / requests * 1e6)
    return requests / elapsed


@dataclass
class Kit:
    """The requests of one server: a token request, a connector activity, the raw POST of the
    same request (None when the server has no echo route: a tree from before it), and the
    health check."""

    token: One
    activity: One
    post: One | None
    health: One


def _poster(url: str, body: bytes, headers: dict[str, str]) -> One:
    async def post(h: aiohttp.ClientSession) -> None:
        async with h.post(url, data=body, headers=headers) as r:
            assert r.status in (200, 201), await r.text()
            await r.read()

    return post


async def prepare(base: str, http: aiohttp.ClientSession) -> Kit:
    """Wait for the server, then its requests (``Kit``). The activity is a message sent into a
    new conversation with a token from the endpoint, as bytes encoded once; the raw POST sends
    the same bytes with the same headers to the echo route, on a path of the same length."""
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
    message = {"type": "message", "text": "benchmark message", "from": {"id": APP_ID}}
    body = json.dumps(message).encode()  # the bytes json=message sends
    headers = {**auth, "Content-Type": "application/json"}
    # the echo's path as long as the activity's: its prefix is 4 characters longer than /v3,
    # the conversation's id 4 shorter (the echo does not look at it)
    shorter = conversation[len(ECHO_PREFIX) - len("/v3") :]
    echo = f"{base}{ECHO_PREFIX}/conversations/{shorter}/activities"
    async with http.post(echo, data=body, headers=headers) as r:
        has_echo = r.status == 200
    activity = _poster(f"{base}/v3/conversations/{conversation}/activities", body, headers)
    post = _poster(echo, body, headers) if has_echo else None
    return Kit(token, activity, post, _getter(f"{base}/_botemu/health"))


def _getter(url: str) -> One:
    async def get(h: aiohttp.ClientSession) -> None:
        async with h.get(url) as r:
            await r.read()

    return get


Server = tuple[int | None, Kit]
"""A server's pid and its requests."""
Rates = dict[str, dict[str, list[float]]]
"""Requests per second of each round, by server name, then by kind (``KINDS``)."""


async def in_turns(servers: Mapping[str, Server], requests: int, concurrency: int, rounds: int,
                   http: aiohttp.ClientSession) -> Rates:  # fmt: skip
    """Each server's activities, raw POSTs and health checks, ``rounds`` times, in turns: the
    servers alternate, and the kinds rotate, from one round to the next, so that each sees the
    load the others see. A server without the echo route is sent the first other one's raw
    POST (its CPU figures are then that server's)."""
    posts = [(pid, kit.post) for pid, kit in servers.values() if kit.post is not None]
    kinds: dict[str, dict[str, tuple[int | None, One]]] = {}
    for name, (pid, kit) in servers.items():
        post = (pid, kit.post) if kit.post is not None else posts[0]
        kinds[name] = {"activity": (pid, kit.activity), "raw POST": post,
                       "GET health": (pid, kit.health)}  # fmt: skip
        for _, one in kinds[name].values():
            await rate(200, concurrency, one, http)  # warm up
    rates: Rates = {name: {kind: [] for kind in KINDS} for name in servers}
    names = list(servers)
    for n in range(rounds):
        for name in names if n % 2 == 0 else names[::-1]:
            for kind in KINDS[n % 3 :] + KINDS[: n % 3]:
                pid, one = kinds[name][kind]
                label = f"{name} {kind}"
                figure = await rate(requests, concurrency, one, http, server=pid, label=label)
                rates[name][kind].append(figure)
    return rates


def report(name: str, rates: dict[str, list[float]], *, borrowed: bool = False) -> None:
    """One server's figures: rates and CPU per request by kind, then the two ratios (the median
    of the paired ratios: each round's activities over the same round's baseline)."""
    rounds = len(rates["activity"])
    print(f"  {name}:")
    for n in range(rounds) if rounds > 1 else ():
        each = ", ".join(f"{kind} {rates[kind][n]:6.0f}/s" for kind in KINDS)
        print(f"    round {n + 1:2}: {each}")
    for kind in KINDS:
        # round(): a median of -0.3 µs (the writer's commits of the kind measured before) is 0
        cpu = {k: round(statistics.median(v)) for k, v in CPU.get(f"{name} {kind}", {}).items()}
        where = "(no /proc)"
        if cpu:
            where = (f"server main thread {cpu['main']:4} µs, other threads "
                     f"{cpu['other']:3} µs, client {cpu['client']:4} µs")  # fmt: skip
        print(f"    {kind:<11} {statistics.median(rates[kind]):7.0f}/s   CPU per request: {where}")
    for kind, what in (("raw POST", "raw POST of the same request (the figure)"),
                       ("GET health", "raw GET /_botemu/health (the old baseline)")):  # fmt: skip
        ratios = [a / b for a, b in zip(rates["activity"], rates[kind], strict=True)]
        print(f"    ratio activities / {what}: {statistics.median(ratios):.2f}"
              f" (median of {rounds}; min {min(ratios):.2f}, max {max(ratios):.2f})")  # fmt: skip
    if borrowed:
        print("    (this tree has no echo route: its raw POST is the other server's)")


async def measure(base: str, requests: int, concurrency: int, rounds: int = 1,
                  server: int | None = None) -> None:  # fmt: skip
    """Tokens per second, then activities, raw POSTs and health checks in turns (``in_turns``)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        kit = await prepare(base, http)
        if kit.post is None:
            raise SystemExit(f"the server has no echo route ({ENV_ECHO}=1 was not honoured)")
        await rate(200, concurrency, kit.token, http)  # warm up
        tokens = await rate(max(100, requests // 4), concurrency, kit.token, http)
        rates = await in_turns({"server": (server, kit)}, requests, concurrency, rounds, http)
    print(f"botemu connector benchmark (concurrency {concurrency}, {rounds} rounds of {requests} "
          "requests of each kind, in turns; medians; CPU from /proc and the client's own)")  # fmt: skip
    print(f"  tokens issued per second: {tokens:.0f}")
    report("server", rates["server"])


async def compare(bases: dict[bool, str], requests: int, concurrency: int, rounds: int
                  ) -> dict[bool, list[float]]:  # fmt: skip
    """Activities per second of each server (key: commits first), ``rounds`` times, in turns
    (the first of each round alternates), so that both see the same load on the machine."""
    figures: dict[bool, list[float]] = {False: [], True: []}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        activities = {key: (await prepare(base, http)).activity for key, base in bases.items()}
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
    env[ENV_ECHO] = "1"
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
    """Two servers (name: (pid, base address)) measured in turns (``in_turns``)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        kits: dict[str, Server] = {
            name: (pid, await prepare(base, http)) for name, (pid, base) in servers.items()
        }
        rates = await in_turns(kits, requests, concurrency, rounds, http)
    print(f"botemu connector, two servers in turns (concurrency {concurrency}, {rounds} rounds of "
          f"{requests} requests of each kind; medians)")  # fmt: skip
    for name, (_, kit) in kits.items():
        report(name, rates[name], borrowed=kit.post is None)


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
