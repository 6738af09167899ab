"""A live caller against the reference IVR bot, in real time at a tenth of the pace: a key
pressed during the menu prompt barges in and is taken; silence runs the initial-silence timer
out into the bot's re-prompt; a hang-up ends the call; a refused act says why and the call
goes on. The engine, the rules and the transcript are those of every other call."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from emulator.calling.events import EndReason
from emulator.calling.live import LiveCaller, LiveInputError
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.jsonutil import JSONObject
from emulator.replay.convert import replay_of
from emulator.transcripts.store import TranscriptStore
from tests.support import ivr_bot as running_ivr_bot

PACE = 0.1  # ten virtual seconds in one real second


@pytest.fixture(scope="module")
def ivr_bot() -> Iterator[str]:
    with running_ivr_bot() as url:
        yield url


class Watch:
    """The call's events as they are recorded, for a test to wait on."""

    def __init__(self) -> None:
        self.events: list[tuple[str, JSONObject, float]] = []
        self.changed = asyncio.Event()

    def __call__(self, kind: str, payload: JSONObject, vtime: float) -> None:
        self.events.append((kind, payload, vtime))
        self.changed.set()

    async def until(self, test: str, count: int = 1, seconds: float = 20.0) -> None:
        """Wait until ``count`` events' summaries contain ``test``."""
        async with asyncio.timeout(seconds):
            while sum(test in str(p.get("summary", "")) for _, p, _ in self.events) < count:
                self.changed.clear()
                await self.changed.wait()


    async def until_kind(self, kind: str, seconds: float = 20.0) -> None:
        """Wait until an event of ``kind`` has come."""
        async with asyncio.timeout(seconds):
            while not any(k == kind for k, _, _ in self.events):
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def live_call(
    url: str, folder: Path, pace: float = PACE
) -> AsyncIterator[tuple[LiveCaller, Watch, TranscriptStore, asyncio.Task[CallReport]]]:
    """A live call to ``url`` at ``pace`` into a store in ``folder``, its first Workflow (the
    reference bot's menu) playing."""
    caller, watch = LiveCaller(), Watch()
    settings = CallSettings(bot_url=url, pace=pace, live=True)
    with TranscriptStore(folder / "t.db") as store:
        call = asyncio.create_task(place_call(settings, store, listener=watch, live=caller))
        await watch.until("Workflow [answer, playPrompt, recognize]")
        yield caller, watch, store, call


def outcomes(store: TranscriptStore, call_id: str) -> list[str]:
    return [str(e.payload.get("summary")) for e in store.events(call_id)
            if e.kind == "http.request" and "Outcome" in str(e.payload.get("summary"))]  # fmt: skip


async def test_a_key_during_the_menu_prompt_barges_in_and_the_call_goes_on(
    ivr_bot: str, tmp_path: Path
) -> None:
    async with live_call(ivr_bot, tmp_path) as (caller, watch, store, call):
        await asyncio.sleep(0.6)  # 6 virtual seconds: the menu prompt plays from 2.4 s to 11.6 s
        caller.press("1")
        await watch.until("Workflow [recognize]")  # the account number is asked
        caller.press("12345678#")
        report = await asyncio.wait_for(call, 20)
        said = outcomes(store, report.call_id)
        rows = [e.payload for e in store.events(report.call_id)]
        replay = replay_of(store, report.call_id)
    assert report.end_reason is EndReason.BOT_HUNG_UP and report.errors == 0
    assert "dtmfOptionMatched choice=sales" in said[0]
    assert "completedStopToneDetected digits=12345678" in said[1]
    [menu] = [r for r in rows if r.get("kind") == "prompt played" and r["operation_id"] == "menu-1"]
    pressed = next(r for r in rows if r.get("kind") == "caller pressed")
    assert menu["interrupted"] is True and menu["end"] == pressed["at"]  # cut where the key came
    assert 2.4 < float(pressed["at"]) < 11.6  # during the menu prompt: a barge-in
    # The page heard the menu begin once: the key cut it, and it did not begin again.
    begun = [p for k, p, _ in watch.events if k == "live.playing" and p["operation_id"] == "menu-1"]
    assert len(begun) == 1 and begun[0]["interrupted"] is False
    # The live call as a scenario: the key pressed that far into the prompt (``after``), and
    # the engine confirms the steps do what the caller did.
    written = re.search(r'press: \{digits: "1", after: ([0-9.]+)s\}', replay.text)
    assert written is not None, replay.text
    assert float(written[1]) == pytest.approx(float(pressed["at"]) - float(menu["at"]), abs=1e-3)
    assert replay.verified


async def test_silence_times_out_into_the_re_prompt_and_the_caller_hangs_up(
    ivr_bot: str, tmp_path: Path
) -> None:
    async with live_call(ivr_bot, tmp_path) as (caller, watch, store, call):
        await watch.until("Workflow [", count=2, seconds=30)  # the re-prompt, after 16.6 s
        with pytest.raises(LiveInputError, match="keys are 1 to 32 of 0-9"):
            caller.press("5A")  # refused: not on a dial pad; the call goes on
        caller.hang_up()
        report = await asyncio.wait_for(call, 20)
        said = outcomes(store, report.call_id)
    assert report.end_reason is EndReason.CALLER_HUNG_UP
    assert "initialSilenceTimeout" in said[0]
    with pytest.raises(LiveInputError, match="has hung up"):
        caller.say("hello")


def test_acts_are_checked_before_they_are_queued() -> None:
    caller = LiveCaller()
    for act, error in [(lambda: caller.press(""), "keys are"),
                       (lambda: caller.press("1" * 33), "keys are"),
                       (lambda: caller.say("   "), "say 1 to 500"),
                       (lambda: caller.say("x" * 501), "say 1 to 500"),
                       (lambda: caller.talk(0), "talk for more than 0"),
                       (lambda: caller.talk(121), "at most 120")]:  # fmt: skip
        with pytest.raises(LiveInputError, match=error):
            act()
    for _ in range(64):
        caller.press("1")
    with pytest.raises(LiveInputError, match="too many acts waiting"):
        caller.press("1")


class Asked(LiveCaller):
    """A live caller that notes how long each wait for it was asked to last."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    async def next(self, seconds: float) -> Any:
        self.asked.append(seconds)
        return await super().next(seconds)


async def test_a_wait_that_goes_on_from_the_last_keeps_to_the_calls_schedule() -> None:
    """A live call's waits add no lateness up: one that goes on from where the last ended
    ends at that one's real end plus its own length, however late it begins; a request
    between them starts the schedule again."""
    import time

    import aiohttp

    from emulator.calling.effects import Listen, Wait
    from emulator.calling.session import AioIO

    settings = CallSettings(bot_url="http://127.0.0.1:9/api/calls", pace=1.0, live=True)
    caller = Asked()
    async with aiohttp.ClientSession() as http:
        io = AioIO(http, settings, asyncio.sleep, caller)
        assert await io.perform(Listen(0.05, 0.0, 1.0)) is None
        time.sleep(0.04)  # the loop is busy: the next wait begins at least 40 ms late
        assert await io.perform(Listen(0.05, 0.05, 1.0)) is None
        await io.perform(Wait(0.0))  # anything else: the schedule starts again
        time.sleep(0.04)
        assert await io.perform(Listen(0.05, 0.1, 1.0)) is None
    first, kept, again = caller.asked
    assert first == pytest.approx(0.05)
    assert kept <= 0.01  # what was left of its 50 ms on the schedule
    assert again == pytest.approx(0.05)  # a whole wait from its own start


async def test_keys_pressed_one_at_a_time_are_each_recorded_and_set_their_timers(
    ivr_bot: str, tmp_path: Path
) -> None:
    async with live_call(ivr_bot, tmp_path) as (caller, watch, store, call):
        caller.press("1")
        await watch.until("Workflow [recognize]")  # the account number, after its prompt
        await asyncio.sleep(0.5)
        for key in "1234#":  # as the dial pad sends them: one act a key
            caller.press(key)
            await asyncio.sleep(0.1)
        report = await asyncio.wait_for(call, 20)
        rows = [e.payload for e in store.events(report.call_id)]
        replay = replay_of(store, report.call_id)
    said = [str(r["summary"]) for r in rows if "Outcome" in str(r.get("summary"))]
    assert any("digits=1234" in s for s in said)
    pressed = [r["keys"] for r in rows if r.get("kind") == "caller pressed"]
    assert "".join(pressed[1:]) == "1234#"  # every key in the transcript, after the menu's 1
    timers = [p["reason"] for k, p, _ in watch.events if k == "live.timer"]
    assert timers.count("interdigitTimeout") == 4  # each key but the stop tone moved it
    assert replay.verified, replay.notes
