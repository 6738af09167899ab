"""A failure written as a scenario: every step in the scenario language and back, the faults,
the expectation of a call that never ended; the tidy replay that drops what is not needed."""

from __future__ import annotations

import asyncio

import pytest
import yaml

from emulator.calling.caller import (
    At,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
    parse_step,
)
from emulator.calling.faults import NO_FAULTS, PlatformFaults
from emulator.calling.model import ActionType
from emulator.fuzz.scenarios import scenario_text, tidy
from emulator.fuzz.verdict import Failure
from emulator.replay.writing import step_text
from emulator.scenario import load_scenario_text

STEPS: list[Step] = [
    Listen(), Press("12#"), Press("3", 0.5), Say("sales"), Silence(6.0), Talk(2.0),
    Talk(20.0, "#"), HangUp(), HangUp(ActionType.PLAY_PROMPT, 1.0), HangUp(ActionType.RECOGNIZE),
]  # fmt: skip


def test_every_step_is_written_in_the_scenario_language_and_reads_back_the_same() -> None:
    for step in STEPS:
        [data] = yaml.safe_load(f"- {step_text(step)}")
        assert parse_step(data, "caller[0]") == step
    with pytest.raises(ValueError, match="live caller"):
        step_text(At(1.0))


def test_the_scenario_loads_with_its_faults_and_the_never_ending_call_expected_to_end() -> None:
    faults = PlatformFaults(fail_callbacks=(2,), duplicate_callbacks=(1,), unknown_enums=True)
    failure = Failure("CALL-WORKFLOW-LIMIT", "abc123", "the call never ended", tuple(STEPS[:3]),
                      faults, "call-1")  # fmt: skip
    text = scenario_text(failure, bot="http://127.0.0.1:1/api/calls", seed=5, confirmed=False)
    assert text.startswith("# yaml-language-server: $schema=/")
    assert "--seed 5" in text and "did not fail again when replayed" in text
    document = yaml.safe_load(text)
    assert document["faults"] == {"fail_callback": [2], "duplicate_callback": [1],
                                  "unknown_enums": True}  # fmt: skip
    assert document["expect"] == {"call": {"ended_by": ["bot", "caller"]}}
    scenario = load_scenario_text(text, "fuzz.yaml")
    assert scenario.name == "fuzz: CALL-WORKFLOW-LIMIT in state abc123"
    # not replayed at all (the search's time ran out): it says so, not that it did not fail again
    text = scenario_text(failure, bot="http://127.0.0.1:1/api/calls", seed=5, confirmed=False,
                         replayed=False)  # fmt: skip
    assert "not replayed to confirm it: the search's time ran out" in text
    assert "did not fail again" not in text


def test_tidy_drops_each_step_that_the_failure_does_not_need() -> None:
    needed = (Press("9"), Silence(4.0), Press("#"))
    noisy = (Press("9"), Listen(), Silence(4.0), Say("hello"), Press("#"), HangUp())

    async def replay(steps: tuple[Step, ...], faults: PlatformFaults) -> Failure | None:
        it = iter(steps)
        if all(any(s == want for s in it) for want in needed):  # the needed steps, in order
            return Failure("CALL-HTTP-5XX", "s1", "boom", steps, faults, "call-2")
        return None

    failure = Failure("CALL-HTTP-5XX", "s1", "boom", noisy, NO_FAULTS, "call-1")
    done = asyncio.run(tidy(failure, replay))
    assert done.confirmed and done.failure.steps == needed
    assert done.replays <= 1 + len(noisy) ** 2
    gone = asyncio.run(tidy(Failure("X", "s", "m", noisy, NO_FAULTS, "c"), replay))
    assert not gone.confirmed and gone.failure.steps == noisy and gone.replays == 1
