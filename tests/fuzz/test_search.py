"""The search against bots with a planted bug (``tests/bots/fuzz_bots.py``): each bug found
within the budget and shrunk to exactly its steps; sound bots, the reference IVR bot among them,
survive; the same seed gives the same failures."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import describe
from emulator.calling.session import CallSettings
from emulator.fuzz.search import Fuzzer, Search
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import make_stalling_bot
from tests.bots.fuzz_bots import make_fuzz_bot
from tests.support import ivr_bot

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


async def fuzz(url: str, tmp_path: Path, **options: int | bool) -> Search:
    """A search against ``url``, in a thread of its own (it runs its own event loop)."""
    with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
        fuzzer = Fuzzer(CallSettings(bot_url=url, seed=1), store, **options)  # type: ignore[arg-type]
        return await asyncio.to_thread(fuzzer.run)


def summary(found: Search) -> list[tuple[str, str]]:
    return [(f.rule, "; ".join(describe(s) for s in f.steps)) for f in found.failures.values()]


@pytest.mark.slow
async def test_a_bug_three_steps_deep_is_found_within_300_and_shrunk_to_those_steps(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server = await aiohttp_server(make_fuzz_bot("operator"))
    found = await fuzz(str(server.make_url("/api/calls")), tmp_path, budget=300)
    assert summary(found) == [("CALL-HTTP-5XX", "press 9; silence 3s; press #")]
    assert found.problem is None and found.unconfirmed == set()
    [failure] = found.failures.values()
    assert "choice=back with HTTP 500" in failure.message


@pytest.mark.slow
async def test_an_invalid_workflow_after_speech_over_the_menu_is_found_and_shrunk(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server = await aiohttp_server(make_fuzz_bot("speech"))
    found = await fuzz(str(server.make_url("/api/calls")), tmp_path, budget=300)
    assert summary(found) == [("WF-RECOGNIZE-ONE-OF", "say news")]


@pytest.mark.slow
async def test_a_sound_bot_survives_and_the_same_seed_gives_the_same_search(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server = await aiohttp_server(make_fuzz_bot("sound"))
    url = str(server.make_url("/api/calls"))
    found = await fuzz(url, tmp_path, budget=200)
    assert found.failures == {} and found.calls == 200
    buggy = await aiohttp_server(make_fuzz_bot("operator"))
    first = await fuzz(str(buggy.make_url("/api/calls")), tmp_path, budget=100, seed=7)
    again = await fuzz(str(buggy.make_url("/api/calls")), tmp_path, budget=100, seed=7)
    assert summary(first) == [("CALL-HTTP-5XX", "press 9; silence 3s; press #")]
    assert summary(first) == summary(again) and first.calls == again.calls


@pytest.mark.slow
def test_the_reference_ivr_bot_survives_a_budget_of_1000(tmp_path: Path) -> None:
    with ivr_bot() as url, TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
        found = Fuzzer(CallSettings(bot_url=url, seed=1), store, budget=1000).run()
    assert summary(found) == [] and found.problem is None
    assert found.calls == 1000


@pytest.mark.slow
async def test_faults_are_drawn_and_a_bot_that_crashes_on_a_retried_callback_is_caught(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    seen: set[str] = set()

    async def crash_on_retry(request: web.Request) -> web.StreamResponse:
        message = request.headers.get("X-Platform-Message-ID", "")
        if message and message in seen:
            return web.Response(status=500, text="seen this one")
        seen.add(message)
        return await handle(request)

    app = make_fuzz_bot("sound")
    handle = app.router.routes()._routes[0].handler  # type: ignore[attr-defined]
    bot = web.Application()
    bot.router.add_post("/api/calls", crash_on_retry)
    server = await aiohttp_server(bot)
    found = await fuzz(str(server.make_url("/api/calls")), tmp_path, budget=300, faults=True)
    assert found.failures, "a bot that fails a retried or duplicated callback is caught"
    failure = next(iter(found.failures.values()))
    assert failure.faults.fail_callbacks or failure.faults.duplicate_callbacks


async def test_max_time_stops_the_search_and_the_tidying_and_says_so(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """``max_time``: no call starts after it, the failures found are not replayed past it (they
    stay as the search shrank them, marked unconfirmed), and the bounds say both. The clock here
    is the number of calls made, so the bound falls at the 120th call whatever the machine."""
    server = await aiohttp_server(make_fuzz_bot("speech"))
    with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
        settings = CallSettings(bot_url=str(server.make_url("/api/calls")), seed=1)
        fuzzer = Fuzzer(settings, store, budget=300, max_time=120,
                        clock=lambda: float(fuzzer.found.calls))  # fmt: skip
        found = await asyncio.to_thread(fuzzer.run)
    assert found.timed_out and found.calls == 120, (found.calls, found.bounds)
    assert "max time (120 s): the search stopped after 120 calls" in found.bounds
    assert found.failures, "the planted bug is found within 120 calls"
    assert found.unconfirmed == found.unreplayed == set(found.failures)
    assert f"max time (120 s): {len(found.failures)} failures not replayed to confirm them" \
        in found.bounds  # fmt: skip


async def test_max_time_cuts_off_the_call_under_way_which_is_no_failure(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Before, a call under way when ``max_time`` ran out went on to its own deadline (300 s by
    default): a bot that holds a callback held the search. Now it is cut off, the search stops
    there and says so, and the cut call is not judged: it never ended, but not by the bot's
    doing, so it is no CALL-NEVER-ENDS failure (and nothing is learnt from it)."""
    release = asyncio.Event()
    server = await aiohttp_server(make_stalling_bot(release))
    try:
        with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
            settings = CallSettings(bot_url=str(server.make_url("/api/calls")), seed=1,
                                    deadline=40)  # fmt: skip
            fuzzer = Fuzzer(settings, store, budget=50, max_time=1.0)
            found = await asyncio.to_thread(fuzzer.run)
            cut = [c for c in store.calls() if "cut off" in str(store.events(c.id)[-1].payload)]
    finally:
        release.set()
    assert found.timed_out and found.cut == 1 and len(cut) == 1, (found.cut, found.bounds)
    assert not found.failures, found.failures
    assert f"max time (1 s): the search stopped after {found.calls} calls, the last one cut off" \
        in found.bounds  # fmt: skip
