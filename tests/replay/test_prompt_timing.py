"""A call placed with prompt timing ``speech`` (each text prompt as long as its synthesized
audio) replays the same way: the check of its rebuilt steps (``verify.py``) times the prompts by
their synthesized audio too, and the scenario carries ``platform: {prompt_timing: speech}``, so
that ``botemu test`` runs it with the call's timing and the caller does what it did."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.audio.shared import engine_name
from emulator.calling.caller import CallerScript
from emulator.calling.settings import PROMPT_TIMING_ENV
from emulator.cli import main
from emulator.replay import verify
from emulator.replay.convert import replay_of
from emulator.replay.reading import Recorded, read_call
from emulator.replay.steps import reconstruct
from emulator.replay.writing import platform_lines
from emulator.runner.runner import Runner, ScenarioResult, Target
from emulator.scenario.loader import load_scenarios_text
from emulator.scenario.model import Platform, Scenario
from emulator.transcripts.store import TranscriptStore
from tests.bots.replay_bots import make_app
from tests.support import ivr_bot

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

SCRIPTS = {
    "hear-the-menu-out": "listen; press 1; press 1234#",
    "silence-until-reprompt": "silence 6s; press 3; talk 4s then #",
    "speech-and-record": "listen; say voicemail; talk 3s",
    "hangup-at-menu-end": "listen; hangup",
    "hangup-mid-goodbye": "press 2; press 7#; hangup during playPrompt after 2s",
}
LISTENED = "listen; press 1; press 1234#"
"""Keys pressed where the menu ends: their moment is the length of the prompts before them."""


@pytest.fixture(autouse=True)
def no_default_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the call's own settings time its prompts."""
    monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)


async def run(url: str, store: TranscriptStore, scenario: Scenario) -> ScenarioResult:
    async with Runner(Target(bot_url=url), store, seed=5) as runner:
        return await runner.run(scenario)


async def place(url: str, store: TranscriptStore, script: str, timing: str = "speech") -> str:
    scenario = Scenario(name="call", caller=CallerScript.from_inline(script),
                        platform=Platform(prompt_timing=timing), path=Path("call.yaml"), line=1)  # fmt: skip
    result = await run(url, store, scenario)
    return result.transcript_ids[0]


def recorded(store: TranscriptStore, call_id: str) -> Recorded:
    summary = store.call(call_id)
    assert summary is not None
    return read_call(summary, store.events(call_id))


def acts(store: TranscriptStore, call_id: str) -> list[tuple[str, float, float, str]]:
    """The caller's acts; their times to the millisecond, as ``same`` compares them (a time
    written to the microsecond in a scenario may round the other way at a fourth decimal)."""
    call = recorded(store, call_id)
    return [(a.kind, a.at, a.end, a.keys) for a in call.acts]


def same(a: list[tuple[str, float, float, str]], b: list[tuple[str, float, float, str]]) -> bool:
    return len(a) == len(b) and all(
        x[0] == y[0] and x[3] == y[3] and abs(x[1] - y[1]) < 1e-3 and abs(x[2] - y[2]) < 1e-3
        for x, y in zip(a, b, strict=True)
    )


def timing(store: TranscriptStore, call_id: str) -> object:
    start = next(e for e in store.events(call_id) if e.kind == "call.start")
    return start.payload["prompt_timing"]


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
async def test_a_call_timed_by_speech_replays_with_that_timing_and_the_same_acts(
    aiohttp_server: ServerFactory, tmp_path: Path, script: str
) -> None:
    url = str((await aiohttp_server(make_app("reference", tmp_path / "vm"))).make_url("/api/calls"))
    with TranscriptStore(tmp_path / "t.db") as store:
        call_id = await place(url, store, script)
        call = recorded(store, call_id)
        assert (call.prompt_timing, call.speech_engine) == ("speech", engine_name())
        replay = replay_of(store, call_id)
        assert replay.verified and replay.notes == (), replay.notes
        assert "\nplatform: {prompt_timing: speech}\n" in replay.text
        (scenario,) = load_scenarios_text(replay.text, name="replay.yaml")
        assert scenario.platform.prompt_timing == "speech"
        result = await run(url, store, scenario)
        assert result.passed, [f.message for f in result.failures]
        [again] = result.transcript_ids
        assert timing(store, again) == "speech"
        assert same(acts(store, again), acts(store, call_id))


async def test_the_check_times_prompts_as_the_call_did(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """The keys come where the menu ends, so the prompts' length decides their moment: checked
    by the estimate, the steps of a call timed by speech press them at another time."""
    url = str((await aiohttp_server(make_app("reference", tmp_path / "vm"))).make_url("/api/calls"))
    with TranscriptStore(tmp_path / "t.db") as store:
        speech = recorded(store, await place(url, store, LISTENED))
        estimate = recorded(store, await place(url, store, LISTENED, "estimate"))
    assert speech.acts[0].at != pytest.approx(estimate.acts[0].at, abs=0.05)
    steps = [placed.step for placed in reconstruct(speech).steps]
    assert verify.check(speech, steps) is None
    as_before = verify.check(replace(speech, prompt_timing="estimate"), steps)
    assert as_before is not None and as_before.startswith("the call had keys 1 at ")
    assert estimate.prompt_timing == "estimate" and estimate.speech_engine is None
    assert platform_lines(estimate) == []  # the default timing: no platform key


def test_a_call_timed_by_another_synthesizer_is_not_checked(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        summary = store.call(store.start(bot="http://127.0.0.1:1/api/calls"))
    assert summary is not None
    call = Recorded(summary, prompt_timing="speech", speech_engine="eSpeak NG 0.1")
    assert verify.unchecked(call) == (
        "the call's text prompts were as long as eSpeak NG 0.1 speaks them, and this botemu "
        f"speaks with {engine_name()}"
    )
    assert verify.check(call, []) is None  # left unchecked, not called different




@pytest.mark.slow
def test_botemu_call_to_scenario_and_test_round_trip_with_speech_timing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file = tmp_path / "t.db", tmp_path / "replay.yaml"
    with ivr_bot() as url:
        assert main(["call", "--bot", url, "--caller", LISTENED, "--db", str(db), "--seed", "2",
                     "--prompt-timing", "speech"]) == 0  # fmt: skip
        with TranscriptStore(db) as store:
            call_id = store.calls(limit=1)[0].id
        assert main(["transcript", "to-scenario", call_id, "--db", str(db), "-o", str(file)]) == 0
        capsys.readouterr()
        assert "platform: {prompt_timing: speech}" in file.read_text()
        assert "# note:" not in file.read_text()  # checked, nothing it cannot reproduce
        replayed = tmp_path / "replay.db"
        code = main(["test", "--bot", url, "--db", str(replayed), str(file)])
    assert code == 0, capsys.readouterr().out
    assert PROMPT_TIMING_ENV not in os.environ
    with TranscriptStore(db) as first, TranscriptStore(replayed) as second:
        [again] = second.calls(limit=1)
        assert timing(second, again.id) == "speech"
        assert same(acts(second, again.id), acts(first, call_id))
