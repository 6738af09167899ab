"""A scenario's ``platform: {prompt_timing: speech}``: its call times text prompts by their
synthesized audio, whatever the run's default, and says so in the transcript. The run's own
timing (``RunOptions.prompt_timing``, ``botemu test --prompt-timing``) reaches every other call."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.calling.settings import PROMPT_TIMING_ENV
from emulator.runner.calls import prompt_timing
from emulator.runner.runner import Runner, Target
from emulator.scenario.loader import load_scenario_text
from emulator.transcripts.store import TranscriptStore
from tests.support import ivr_bot

SCENARIO = """
name: menu by key, prompts timed by their speech
caller: [listen, press: "1", hangup]
platform: {prompt_timing: %s}
"""
PLAIN = """
name: menu by key, the run's prompt timing
caller: [listen, press: "1", hangup]
"""


async def test_the_scenario_key_sets_the_prompt_timing_of_its_call(tmp_path: Path) -> None:
    with ivr_bot() as url, TranscriptStore(tmp_path / "t.db") as store:
        async with Runner(Target(bot_url=url), store, timeout=5.0) as runner:
            timings = []
            for timing in ("speech", "estimate"):
                scenario = load_scenario_text(SCENARIO % timing, "s.yaml")
                assert scenario.platform.prompt_timing == timing
                result = await runner.run(scenario)
                [call_id] = result.transcript_ids
                start = next(e for e in store.events(call_id) if e.kind == "call.start")
                timings.append(start.payload["prompt_timing"])
    assert timings == ["speech", "estimate"]


async def test_the_runs_prompt_timing_reaches_every_call_and_the_scenario_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Runner(prompt_timing=...)`` (``botemu test --prompt-timing``) is the timing of every
    call, with ``$BOTEMU_PROMPT_TIMING`` unset; a scenario's own key still wins; with neither,
    the environment variable is the default."""
    monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)
    plain = load_scenario_text(PLAIN, "plain.yaml")
    own = load_scenario_text(SCENARIO % "estimate", "own.yaml")
    with ivr_bot() as url, TranscriptStore(tmp_path / "t.db") as store:
        async with Runner(Target(bot_url=url), store, timeout=5.0,
                          prompt_timing="speech") as runner:  # fmt: skip
            ran = [await runner.run(plain), await runner.run(own)]
        monkeypatch.setenv(PROMPT_TIMING_ENV, "speech")
        async with Runner(Target(bot_url=url), store, timeout=5.0) as runner:
            ran.append(await runner.run(plain))
        timings = [_timing(store, result.transcript_ids) for result in ran]
    assert [r.passed for r in ran] == [True, True, True], [r.error for r in ran]
    assert timings == ["speech", "estimate", "speech"]


def test_a_scenarios_key_wins_over_the_runs_timing() -> None:
    plain = load_scenario_text(PLAIN, "plain.yaml")
    assert prompt_timing(plain, None) is None  # CallSettings' default: the environment
    assert prompt_timing(plain, "speech") == "speech"
    for own in ("estimate", "speech"):
        scenario = load_scenario_text(SCENARIO % own, "own.yaml")
        assert prompt_timing(scenario, "speech") == own
        assert prompt_timing(scenario, "estimate") == own
        assert prompt_timing(scenario, None) == own


def _timing(store: TranscriptStore, ids: tuple[str, ...]) -> object:
    [call_id] = ids
    start = next(e for e in store.events(call_id) if e.kind == "call.start")
    return start.payload["prompt_timing"]
