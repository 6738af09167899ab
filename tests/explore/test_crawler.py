"""The crawl of a call flow against the reference IVR bot (its own process, loopback): every
menu found, each state expanded once, the same graph twice, the bounds said when hit."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.model import PlayPrompt, Prompt, RecognitionOption, Recognize, Workflow
from emulator.calling.session import CallSettings
from emulator.explore.crawler import START, Crawler, Graph, waiting_points
from emulator.explore.edges import moves
from emulator.explore.report import tree
from emulator.explore.verdicts import judge
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import make_stalling_bot
from tests.support import ivr_bot as running_ivr_bot

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ivr_bot() -> Iterator[str]:
    with running_ivr_bot() as url:
        yield url


def crawl(url: str, tmp_path: Path, **bounds: int) -> Graph:
    async def run() -> Graph:
        with TranscriptStore(tmp_path / "t.db") as store:
            return await Crawler(CallSettings(bot_url=url, seed=1), store, **bounds).crawl()

    return asyncio.run(run())


def shape(graph: Graph) -> list[tuple[str, str, str | None, str | None]]:
    return [(e.source, e.move.label, e.to, e.end) for e in graph.edges]


@pytest.mark.slow
def test_the_reference_bot_is_explored_completely_and_the_same_way_twice(
    ivr_bot: str, tmp_path: Path
) -> None:
    graph = crawl(ivr_bot, tmp_path)
    kinds = sorted(s.kind for s in graph.states.values())
    assert kinds == ["digits", "digits", "recognize", "recognize", "record"]
    assert graph.bounds == [] and graph.calls == len(graph.edges) + 6  # the follow-up calls:
    assert [(c.kind, c.broken) for c in graph.checks] == [  # the retry menu's silence and wrong
        ("loop", False),
        ("loop", False),
        ("twins", False),
        ("twins", False),  # key end; sales
    ]  # and support read back different things
    first = graph.edges_from(START)[0]
    menu = graph.states[first.to or ""]
    assert [c.name for c in menu.choices] == ["sales", "support", "voicemail"]
    ends = {e.move.label: e.end for e in graph.edges if e.to is None and e.source == first.to}
    assert ends == {"hang up": "caller hung up"}
    assert any(e.end == "bot hung up" for e in graph.edges)  # the goodbyes
    assert not any(e.errors for e in graph.edges)
    assert judge(graph) == []  # no finding against the reference bot
    assert shape(crawl(ivr_bot, tmp_path)) == shape(graph)  # deterministic
    text = tree(graph)
    assert text.startswith("call -> [") and text.endswith("5 states, 31 paths, 37 calls\n")


@pytest.mark.slow
def test_the_bounds_stop_the_crawl_and_are_said(ivr_bot: str, tmp_path: Path) -> None:
    few = crawl(ivr_bot, tmp_path, max_calls=5)
    assert few.calls == 5 and few.bounds == ["max calls (5)"]
    shallow = crawl(ivr_bot, tmp_path, max_depth=1)
    assert "max depth (1)" in shallow.bounds
    assert "bounds hit: max depth (1)" in tree(shallow)


def test_waiting_points_carry_the_prompts_heard_since_the_last_input() -> None:
    hello = PlayPrompt(operation_id="a", prompts=(Prompt(value="Hello."),))
    menu = Recognize(operation_id="b", play_prompt=PlayPrompt(operation_id="c",
                     prompts=(Prompt(value="Press 1."),)),
                     choices=(RecognitionOption(name="one", dtmf_variation="1"),))  # fmt: skip
    states = waiting_points([Workflow(actions=(hello, menu)), Workflow(actions=(menu,))])
    assert [s.prompts for s in states] == [("hello.", "press #."), ("press #.",)]


async def test_max_time_cuts_off_the_calls_under_way_and_counts_their_paths_as_not_followed(
    aiohttp_server: Callable[[web.Application], Awaitable[TestServer]], tmp_path: Path
) -> None:
    """Before, ``max_time`` only kept new calls from starting: a bot that held a callback kept
    the crawl waiting for the call's own deadline (300 s by default). Now the calls under way
    when it runs out are cut off: their paths count as not followed, and each one's transcript
    ends with a hang-up noted as cut off. Here every callback is held (the first call, which
    hangs up at the menu, ends well)."""
    release = asyncio.Event()
    server = await aiohttp_server(make_stalling_bot(release))
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), seed=1, deadline=40)
    try:
        with TranscriptStore(tmp_path / "t.db") as store:
            graph = await Crawler(settings, store, max_time=4.0, jobs=2).crawl()
            calls = store.calls()
            ends = {c.id: store.events(c.id)[-1].payload["summary"] for c in calls}
    finally:
        release.set()
    assert len(graph.states) == 1 and len(graph.edges) == 1, graph.edges  # the menu, first call
    bounds = [b for b in graph.bounds if b.startswith("max time (4 s): ")]
    menu = len(moves(graph.states[graph.edges[0].to or ""]))  # none followed
    assert bounds == [f"max time (4 s): {menu} paths not followed, follow-up checks not made"]
    cut = [s for s in ends.values() if "cut off: the run's time ran out" in str(s)]
    assert len(cut) == 2, ends  # the two calls under way (two jobs at a time)
    assert graph.calls == len(calls) == 3


async def test_max_time_cuts_off_a_follow_up_check_under_way_and_judges_it_not(
    aiohttp_server: Callable[[web.Application], Awaitable[TestServer]], tmp_path: Path
) -> None:
    """The follow-up calls too: here the menu comes back whatever the caller does, so the crawl
    ends at once, and the loop checks (twelve silences, twelve wrong keys) are held from the
    fifth callback on. The one under way is cut off, no other starts after it (before: each
    started and was cut at once), none of them gives a check (neither passed nor failed), and
    the bounds say how many were cut off."""
    release = asyncio.Event()
    server = await aiohttp_server(make_stalling_bot(release, after=4))
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), seed=1, deadline=40)
    try:
        with TranscriptStore(tmp_path / "t.db") as store:
            graph = await Crawler(settings, store, max_time=6.0, jobs=1).crawl()
            ends = [str(store.events(c.id)[-1].payload["summary"]) for c in store.calls(limit=500)]
    finally:
        release.set()
    assert len(graph.states) == 1, graph.states  # every move brings the menu back
    loops = [c for c in graph.checks if c.kind == "loop"]
    assert not loops, graph.checks
    # one call at a time: the first check's call is cut off, and no other starts after it
    assert len(ends) == graph.calls and sum("cut off" in end for end in ends) == 1, ends
    cut = [b for b in graph.bounds if b.startswith("max time (6 s): ")]
    assert len(cut) == 1 and re.fullmatch(r"max time \(6 s\): \d+ follow-up checks cut off",
                                          cut[0]), graph.bounds  # fmt: skip
