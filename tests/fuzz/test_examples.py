"""The database of examples: a failing caller saved by one search is tried first by the next
(found again in one call), a caller that no longer fails leaves it, and a value that does not
read as a caller (one an older search saved) is dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import HangUp, Press, Silence
from emulator.calling.faults import PlatformFaults
from emulator.calling.session import CallSettings
from emulator.fuzz.examples import Examples, read, value
from emulator.fuzz.search import Fuzzer, Search
from emulator.transcripts.store import TranscriptStore
from tests.bots.fuzz_bots import make_fuzz_bot

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


def test_a_caller_and_its_faults_are_saved_and_read_back() -> None:
    steps = (Press("9"), Silence(3.0), Press("#"), HangUp())
    faults = PlatformFaults(fail_callbacks=(2,), unknown_enums=True)
    example = read(value(steps, faults))
    assert example is not None and example.steps == steps and example.faults == faults
    assert read(b"\x00\x01hypothesis choices") is None
    assert read(b'{"version": 2, "caller": "press"}') is None  # a step without its keys


def test_an_unreadable_value_is_dropped(tmp_path: Path) -> None:
    examples = Examples(tmp_path, "http://127.0.0.1:1/api/calls", 8, False)
    examples.database.save(examples.key, b"\x00old")
    examples.save((Press("1"),), PlatformFaults())
    assert [e.steps for e in examples.saved()] == [(Press("1"),)]
    assert list(examples.database.fetch(examples.key)) == [value((Press("1"),), PlatformFaults())]


async def test_a_saved_failure_is_found_first_and_a_fixed_one_leaves(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    bots = {kind: make_fuzz_bot(kind).router.routes()._routes[0].handler  # type: ignore[attr-defined]
            for kind in ("operator", "sound")}  # fmt: skip
    now = ["operator"]

    async def handle(request: web.Request) -> web.StreamResponse:
        return await bots[now[0]](request)  # type: ignore[no-any-return]

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    url = str((await aiohttp_server(app)).make_url("/api/calls"))
    folder = tmp_path / "examples"

    def search(url: str, **options: object) -> Search:
        with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
            return Fuzzer(CallSettings(bot_url=url, seed=1), store, examples=folder,
                          **options).run()  # type: ignore[arg-type]  # fmt: skip

    first = await asyncio.to_thread(search, url, budget=300)
    assert len(first.failures) == 1
    found_at: list[int] = []

    def progress(search: Search) -> None:
        if search.failures and not found_at:
            found_at.append(search.calls)

    again = await asyncio.to_thread(search, url, budget=20, seed=99, progress=progress)
    assert found_at == [1], "the saved caller is tried first, and fails at once"
    assert list(again.failures) == list(first.failures)
    key = Examples(folder, url, 8, False)
    assert len(key.saved()) == 1
    # The same address, the bug fixed: the saved caller is tried, passes, and is dropped.
    now[0] = "sound"
    clean = await asyncio.to_thread(search, url, budget=20)
    assert clean.failures == {} and key.saved() == []
