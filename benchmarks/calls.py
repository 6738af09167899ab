"""Benchmark of whole calls over loopback HTTP against the reference IVR bot.

Starts ``examples/ivr_bot.py`` in its own process, then in the same run, round after round,
measures:
- botemu: calls per second and bot requests (Conversation + callbacks) per second, placing calls
  with the full platform: validation, engine, transcript store (SQLite, every event committed);
- the baseline, the replay: the very requests botemu sent in that round (each call's in order,
  the same URLs, headers and bodies, every id in them made new so that the bot keeps nothing of
  the first time) sent again by plain aiohttp POSTs with the same concurrency, each answer read
  to the end. The bot does for them exactly what it did for botemu's, and the client does
  nothing else: the ratio of the two request rates is what botemu's own work costs (the goal:
  at least 0.8);
- the old baseline beside it: raw aiohttp POSTs of a Conversation each (the bot answers each
  with its menu), and the ratio to them;
- the CPU each request took: botemu's (the whole process, and its event loop alone), each
  baseline client's, and the bot's on each side (``/proc``; Linux), steadier than the rates on
  a shared machine.

Why the replay: against the raw Conversation POSTs the ratio could not reach 0.8 whatever botemu
did, since a call's callbacks (a menu choice, then the account digits and the next prompt) cost
the bot more than a Conversation alone, and the ratio counted that against botemu. The replay
sends the same calls. It also shows that the bot's CPU per request depends on how busy it is:
measured on 2026-11-30 (``--rounds 2 --calls 50``, another process sharing the machine), the
bot spent 1,033 µs a request when botemu drove it and 767 µs on the same requests replayed,
where it was the bottleneck and took several requests per turn of its event loop.

With ``--token``, a ``botemu serve`` runs beside the bot, the bot checks the Bearer token on every
request against its OpenID metadata (``--app-id``), botemu sends one on every request, and the
replayed and raw POSTs carry the same token: every side pays the bot's token check.

With ``--against DIR`` (a ``git archive COMMIT emulator`` extracted into DIR) the whole
measure runs in turns on this build and on that one, each in a process of its own (the bot is
this tree's), ``--builds`` times, and both are printed with their CPU per bot request, their
ratios to the replay and to the raw POSTs, and the ratio between their calls per second. A
build from before calling tokens (such as 0091031, the last build before the Bearer token on
calling requests) runs too, without ``--token``: this script imports the token code only with
``--token``.

Asserts nothing about time. Run: ``python benchmarks/calls.py [--calls 200] [--concurrency 4]
[--token] [--against DIR [--builds 3]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from support import free_port, server_cpu, wait_for

from emulator.calling.caller import CallerScript
from emulator.calling.session import CallSettings, place_call
from emulator.transcripts.store import TranscriptStore

if TYPE_CHECKING:
    from emulator.calling.tokens import TokenSource

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "examples" / "ivr_bot.py"
SCRIPT = "press 1; press 12345678#; hangup"


APP_ID = "b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


Sent = tuple[object, object, object]
"""One request botemu sent a bot, as its transcript event says: its URL, headers and body text
(checked by ``fresh_calls``)."""
Request = tuple[str, dict[str, str], bytes]
"""One request to send again: its URL, headers and body."""


async def emulator_rate(
    url: str, calls: int, concurrency: int, db: Path, tokens: TokenSource | None = None
) -> tuple[float, int, float, list[list[Sent]]]:
    """(seconds, bot requests, calls, each call's requests) for ``calls`` calls placed
    ``concurrency`` at a time. Each call's requests, in the order sent, are what
    ``replay_rate`` sends again."""
    store = TranscriptStore(db, write_behind=True)
    caller = CallerScript.from_inline(SCRIPT)
    # without a token the two are left out: a build from before them (``--against``) has neither
    signed: dict[str, Any] = {"tokens": tokens, "app_id": APP_ID} if tokens else {}
    settings = CallSettings(bot_url=url, caller=caller, seed=1, **signed)
    queue = list(range(calls))
    requests = 0
    sent: list[list[Sent]] = []

    async def worker(http: aiohttp.ClientSession) -> None:
        nonlocal requests
        while queue:
            queue.pop()
            mine: list[Sent] = []

            def keep(kind: str, payload: Any, vtime: float, mine: list[Sent] = mine) -> None:
                if kind == "http.request":  # each request the bot answered (no retries here)
                    mine.append((payload.get("url"), payload.get("headers"), payload.get("body")))

            await place_call(settings, store, http=http, listener=keep)
            requests += len(mine)
            sent.append(mine)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    store.close()
    return elapsed, requests, calls, sent


_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_APP_ID = APP_ID.encode()


def fresh_calls(sent: list[list[Sent]], token: str | None) -> list[list[Request]] | None:
    """The calls botemu placed, made new: every id in them (the call's, its chain's, each
    message's) replaced by a fresh one, the same throughout a call, so that the bot keeps
    no state and no answer of the first time (it caches its answers by message id); the
    Authorization header, which the transcript keeps redacted, replaced by ``token``. None
    when a build's request events do not say what was sent."""
    made: list[list[Request]] = []
    for call in sent:
        ids: dict[bytes, bytes] = {}

        def new(match: re.Match[bytes], ids: dict[bytes, bytes] = ids) -> bytes:
            found = match.group(0)
            if found == _APP_ID:  # the bot's own id stays what it is
                return found
            made = ids.get(found)
            if made is None:
                made = ids[found] = str(uuid.uuid4()).encode()
            return made

        requests: list[Request] = []
        for target, headers, body in call:
            if (
                not isinstance(target, str)
                or not isinstance(headers, dict)
                or not isinstance(body, str)
            ):
                return None
            fresh = {k: _UUID.sub(new, str(v).encode()).decode() for k, v in headers.items()}
            if token is not None:
                fresh["Authorization"] = f"Bearer {token}"
            requests.append((_UUID.sub(new, target.encode()).decode(), fresh,
                             _UUID.sub(new, body.encode())))  # fmt: skip
        made.append(requests)
    return made


async def replay_rate(calls: list[list[Request]], concurrency: int) -> tuple[float, int]:
    """(seconds, requests): the calls' requests sent again with plain aiohttp POSTs, each
    call's in order, ``concurrency`` calls at a time, each answer read to the end: the bot
    does for them exactly what it did for botemu's, and the client does nothing else."""
    queue = list(reversed(calls))
    count = sum(len(c) for c in calls)

    refused: list[int] = []

    async def worker(http: aiohttp.ClientSession) -> None:
        while queue:
            for target, headers, body in queue.pop():
                async with http.post(target, data=body, headers=headers) as response:
                    await response.read()
                    if response.status != 200:
                        refused.append(response.status)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    if refused:  # the bot did not do again what it did for botemu: the replay measures nothing
        raise SystemExit(f"the bot refused {len(refused)} replayed requests (HTTP {refused[0]})")
    return elapsed, count


async def raw_rate(
    url: str, posts: int, concurrency: int, token: str | None = None
) -> tuple[float, int]:
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
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"
            async with http.post(url, data=body, headers=headers) as response:
                await response.read()

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        return time.perf_counter() - started, posts


def _cpu(bot: int | None) -> tuple[float, float, float]:
    """(this process, this thread, the bot): seconds of CPU so far (the bot's 0 where unknown)."""
    seen = server_cpu(bot)
    return time.process_time(), time.thread_time(), 0.0 if seen is None else seen[1]


async def measure(
    url: str,
    calls: int,
    concurrency: int,
    rounds: int,
    tokens: TokenSource | None,
    bot: int | None = None,
) -> dict[str, Any]:
    await wait_for(url)
    token = None
    if tokens is not None:
        from emulator.calling.tokens import LocalTokens

        if isinstance(tokens, LocalTokens):  # the bot fetches its keys from that botemu
            await wait_for(tokens.tokens.placeholders.openid_metadata_url, get=True)
        async with aiohttp.ClientSession() as http:
            token = await tokens.token(http)
    rates: list[dict[str, float]] = []  # per round: calls/s, requests/s, replayed and raw /s
    names = ("botemu", "loop", "bot", "replay", "replay bot", "raw", "raw bot")
    cpu: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        *_, sent = await emulator_rate(
            url, max(10, calls // 10), concurrency, db, tokens
        )  # warm up
        warm = fresh_calls(sent, token)
        if warm is not None:
            await replay_rate(warm, concurrency)
        await raw_rate(url, max(40, calls // 4), concurrency, token)
        for _ in range(rounds):  # alternate, so all see the same machine load
            before = _cpu(bot)
            elapsed, requests, placed, sent = await emulator_rate(url, calls, concurrency, db,
                                                                  tokens)  # fmt: skip
            made = fresh_calls(sent, token)  # before the clock: the replay sends ready bytes
            between = _cpu(bot)
            replayed = await replay_rate(made, concurrency) if made is not None else None
            replay_done = _cpu(bot)
            raw_elapsed, posts = await raw_rate(url, requests, concurrency, token)
            after = _cpu(bot)
            round_rates = {"calls": placed / elapsed, "requests": requests / elapsed,
                           "raw": posts / raw_elapsed}  # fmt: skip
            spans = {"botemu": (before, between, 0, requests),
                     "loop": (before, between, 1, requests),
                     "bot": (before, between, 2, requests),
                     "raw": (replay_done, after, 0, posts),
                     "raw bot": (replay_done, after, 2, posts)}  # fmt: skip
            if replayed is not None:
                round_rates["replay"] = replayed[1] / replayed[0]
                spans["replay"] = (between, replay_done, 0, replayed[1])
                spans["replay bot"] = (between, replay_done, 2, replayed[1])
            rates.append(round_rates)
            for name, (start, end, index, count) in spans.items():
                cpu[name].append((end[index] - start[index]) / count * 1e6)
    replay = all("replay" in r for r in rates)
    return {"calls": statistics.median(r["calls"] for r in rates),
            "requests": statistics.median(r["requests"] for r in rates),
            "raw": statistics.median(r["raw"] for r in rates),
            "ratios": sorted(r["requests"] / r["raw"] for r in rates),
            "replay": statistics.median(r["replay"] for r in rates) if replay else None,
            "replay ratios": sorted(r["requests"] / r["replay"] for r in rates) if replay else None,
            "cpu": {name: statistics.median(values) if values else 0.0
                    for name, values in cpu.items()}}  # fmt: skip


def _spread(ratios: list[float]) -> str:
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return (f"median of {len(ratios)} paired rounds; quartiles {quartiles[0]:.2f}-"
            f"{quartiles[2]:.2f}, range {ratios[0]:.2f}-{ratios[-1]:.2f}")  # fmt: skip


def report(figures: dict[str, Any], args: argparse.Namespace, tokens: bool) -> None:
    checked = "; the bot checks a Bearer token on every request" if tokens else ""
    print(f"botemu calls benchmark against {BOT.name} ({SCRIPT!r}, concurrency "
          f"{args.concurrency}, {args.rounds} rounds of {args.calls} calls; medians{checked})")  # fmt: skip
    print(f"  calls per second:               {figures['calls']:8.1f}")
    print(
        f"  bot requests per second:        {figures['requests']:8.1f}  (Conversation + callbacks)"
    )
    cpu = figures["cpu"]
    if figures["replay"] is not None:
        print(f"  replayed requests per second:   {figures['replay']:8.1f}  (the same calls' "
              "requests sent again by plain aiohttp)")  # fmt: skip
        ratios = figures["replay ratios"]
        print(f"  ratio botemu / replay:          {statistics.median(ratios):8.2f}  (the figure: "
              f"{_spread(ratios)}; the goal >= 0.8)")  # fmt: skip
    print(f"  raw aiohttp POSTs per second:   {figures['raw']:8.1f}  (a Conversation each)")
    ratios = figures["ratios"]
    print(f"  ratio botemu / raw POST:        {statistics.median(ratios):8.2f}  (the old "
          f"baseline: {_spread(ratios)})")  # fmt: skip

    def bot(name: str) -> str:  # the bot's CPU is unknown (0) without /proc
        return f"; the bot {cpu[name]:.0f} µs" if cpu[name] else ""

    print(f"  CPU per bot request:            botemu {cpu['botemu']:.0f} µs (its event loop "
          f"{cpu['loop']:.0f}){bot('bot')}")  # fmt: skip
    if figures["replay"] is not None:
        print(f"  CPU per replayed request:       the client {cpu['replay']:.0f} µs"
              f"{bot('replay bot')}")  # fmt: skip
    print(f"  CPU per raw POST:               the client {cpu['raw']:.0f} µs{bot('raw bot')}")


def compare(args: argparse.Namespace) -> None:
    from support import run_builds

    child = ["--calls", str(args.calls), "--concurrency", str(args.concurrency),
             "--rounds", str(args.rounds), *(["--token"] if args.token else [])]  # fmt: skip
    found = run_builds(Path(__file__), child, args.against, args.builds)
    print(f"botemu calls benchmark: {args.builds} runs of each build, in turns "
          f"({args.rounds} rounds of {args.calls} calls each)")  # fmt: skip
    rates = {}
    for name, runs in found.items():
        rates[name] = statistics.median(r["calls"] for r in runs)
        ratio = statistics.median(statistics.median(r["ratios"]) for r in runs)
        replayed = [statistics.median(r["replay ratios"]) for r in runs if r["replay ratios"]]
        replay = f"{statistics.median(replayed):.2f}" if replayed else "n/a"
        cpu = {k: statistics.median(r["cpu"][k] for r in runs) for k in ("botemu", "loop")}
        print(f"  {name}: {rates[name]:.1f} calls/s, requests / replayed {replay}, / raw POSTs "
              f"{ratio:.2f}; CPU per bot request {cpu['botemu']:.0f} µs (event loop "
              f"{cpu['loop']:.0f})")  # fmt: skip
    print(
        f"  this build / {args.against}: {rates['this build'] / rates[str(args.against)]:.2f} "
        "of its calls per second"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per round")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=21, help="short rounds, each paired "
                        "with a raw round right after it: a burst of load on a shared machine "
                        "then spoils a few pairs, not the median")  # fmt: skip
    parser.add_argument("--token", action="store_true", help="the bot checks a Bearer token "
                        "on every request (a botemu serve publishes the keys)")  # fmt: skip
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another build's emulator/ (git archive), measured in turns")  # fmt: skip
    parser.add_argument("--builds", type=int, default=3, help="runs of each build with --against")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        compare(args)
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    with tempfile.TemporaryDirectory() as state:
        children: list[subprocess.Popen[bytes]] = []
        argv = [sys.executable, str(BOT), "--port", str(port)]
        tokens = None
        if args.token:
            from emulator.calling.tokens import local_tokens
            from emulator.config import ServiceConfig

            config = ServiceConfig(port=free_port(), certs_dir=Path(state))
            children.append(subprocess.Popen(
                [sys.executable, "-m", "emulator", "serve", "--port", str(config.port),
                 "--certs", state, "--db", str(Path(state) / "serve.db")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))  # fmt: skip
            p = config.placeholders()
            argv += ["--app-id", APP_ID, "--openid-metadata-url", p.openid_metadata_url,
                     "--connector-issuer", p.connector_issuer]  # fmt: skip
            tokens = local_tokens(config, APP_ID)
        children.append(
            subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        try:
            figures = asyncio.run(measure(url, args.calls, args.concurrency, args.rounds, tokens,
                                          children[-1].pid))  # fmt: skip
            if args.child:
                print(json.dumps(figures))
            else:
                report(figures, args, tokens is not None)
        finally:
            for child in children:
                child.terminate()
                child.wait(timeout=10)


if __name__ == "__main__":
    main()
