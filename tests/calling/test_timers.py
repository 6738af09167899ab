"""The engine's timers (``TimerSet``): when an input action begins to listen and each time the
caller's input moves its deadline, the engine says when the action will complete and why, so
that a live caller's page can count it down. They are no transcript row but a live call's."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.calling.calllog import LIVE_TIMER, transcript_rows
from emulator.calling.events import TimerSet
from tests.calling.test_engine import BEEP, PROMPT, events, menu, run

Json = dict[str, Any]


def digits(**fields: Any) -> Json:
    return {"operationId": "pin", "action": "recognize",
            "playPrompt": {"prompts": [{"value": "enter your pin"}]},
            "collectDigits": {"maxNumberOfDtmfs": 4, "stopTones": ["#"]},
            "initialSilenceTimeoutInSeconds": 5, "interdigitTimeoutInSeconds": 2, **fields}  # fmt: skip


def record(**fields: Any) -> Json:
    return {"operationId": "rec", "action": "record",
            "playPrompt": {"prompts": [{"value": "leave a message"}]},
            "maxDurationInSeconds": 30, "initialSilenceTimeoutInSeconds": 4,
            "maxSilenceTimeoutInSeconds": 3, **fields}  # fmt: skip


def test_a_silent_caller_hears_the_initial_silence_timer_set_at_the_prompts_end() -> None:
    result = run([menu(initialSilenceTimeoutInSeconds=5)], "silence 30s")
    (timer,) = events(result, TimerSet)
    assert timer.at == pytest.approx(PROMPT)
    assert timer.deadline == pytest.approx(PROMPT + 5)
    assert (timer.operation_id, timer.reason, timer.limit) == ("menu", "initialSilenceTimeout", None)


def test_each_key_of_a_digit_collection_sets_the_inter_digit_timer() -> None:
    result = run([digits()], "listen; press 12")
    timers = events(result, TimerSet)
    assert [t.reason for t in timers] == ["initialSilenceTimeout", "interdigitTimeout",
                                          "interdigitTimeout"]  # fmt: skip
    first_key, second_key = timers[1].at, timers[2].at
    assert second_key > first_key >= PROMPT
    assert timers[2].deadline == pytest.approx(second_key + 2)


def test_a_barge_in_before_the_prompt_ends_sets_no_initial_timer() -> None:
    result = run([menu(bargeInAllowed=True)], "press 1")
    assert events(result, TimerSet) == []  # the key came first and completed the menu


def test_a_record_sets_its_timer_when_recording_starts_and_speech_moves_it_to_silence_after_it() -> None:
    result = run([record()], "talk 5s")
    opened, spoke, quiet = events(result, TimerSet)
    start = PROMPT + BEEP
    assert (opened.at, opened.reason) == (pytest.approx(start), "initialSilenceTimeout")
    assert opened.deadline == pytest.approx(start + 4)
    assert opened.limit == pytest.approx(start + 30)  # the maximum duration's end
    assert (spoke.at, spoke.reason) == (pytest.approx(start), "completedSilenceDetected")
    assert spoke.deadline == pytest.approx(start + 5 + 3)
    assert quiet.at == pytest.approx(start + 5) and quiet.deadline == spoke.deadline  # it ended


def test_timers_are_rows_of_a_live_call_only_where_each_key_has_its_row() -> None:
    result = run([digits()], "listen; press 12#")
    plain = list(transcript_rows(result.events))
    live = list(transcript_rows(result.events, timers=True))
    assert all(kind != LIVE_TIMER for _, kind, _ in plain)
    assert [p["summary"] for _, _, p in plain if p.get("kind") == "caller pressed"] == [
        "caller pressed 12#"
    ]
    # A live call: a key, the timer it set, the next key... (a later key adds rows, moves none)
    shown = [p.get("keys") or p["reason"] for _, kind, p in live
             if kind == LIVE_TIMER or p.get("kind") == "caller pressed"]  # fmt: skip
    assert shown == ["initialSilenceTimeout", "1", "interdigitTimeout", "2", "interdigitTimeout", "#"]
    others = [row for row in live if row[1] != LIVE_TIMER and row[2].get("kind") != "caller pressed"]
    assert others == [row for row in plain if row[2].get("kind") != "caller pressed"]

