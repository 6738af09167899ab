"""A scenario's ``platform: {prompt_timing: speech}``: its call times text prompts by their
synthesized audio, whatever the run's default, and says so in the transcript."""

from __future__ import annotations

from pathlib import Path

from emulator.runner.runner import Runner, Target
from emulator.scenario.loader import load_scenario_text
from emulator.transcripts.store import TranscriptStore
from tests.support import ivr_bot

SCENARIO = """
name: menu by key, prompts timed by their speech
caller: [listen, press: "1", hangup]
platform: {prompt_timing: %s}
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
