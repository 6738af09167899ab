"""Tests of emulator/calling/engine.py: running Workflows against a scripted caller in virtual time.

Workflows are written as the camelCase JSON a bot sends and read with ``wire.read_workflow``.
The standard menu prompt "press one now" is three words: 1.2 s at 0.4 s a word.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from emulator.calling import rules, wire
from emulator.calling.caller import (
    At,
    CallerScript,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
    WhenRule,
)
from emulator.calling.engine import (
    DEFAULT_MAX_WORKFLOWS,
    CallProgress,
    EngineConfig,
    Media,
    WorkflowRun,
    prompt_seconds,
    reject_workflow,
    result_for,
    run_workflow,
)
from emulator.calling.events import (
    ActionCompleted,
    ActionStarted,
    BeepPlayed,
    CallEnded,
    CallerHungUp,
    CallerPressed,
    EndReason,
    Event,
    InputIgnored,
    PromptPlayed,
    RecordingMade,
    StateChanged,
)
from emulator.calling.model import (
    DTMF_KEYS,
    ActionType,
    AnswerOutcome,
    CallState,
    DigitCollectionCompletionReason,
    HangupOutcome,
    OperationOutcome,
    Outcome,
    PlayPromptOutcome,
    Prompt,
    PromptCompletionReason,
    RecognitionCompletionReason,
    RecognizeOutcome,
    RecordingCompletionReason,
    RecordingFormat,
    RecordOutcome,
    RejectOutcome,
    SayAs,
    WorkflowValidationOutcome,
)
from emulator.calling.wire import read_workflow
from emulator.findings import Finding, Severity, has_errors

Json = dict[str, Any]
E = TypeVar("E", bound=Event)

CALLBACK = "https://bot.example/callback"
MEDIA = "https://media.example/greeting.wav"
PROMPT = 1.2  # "press one now", "leave a message", "enter your pin": three words
BEEP = 0.5


# --- helpers -----------------------------------------------------------------------------------


def established(now: float = 0.0, workflows: int = 1) -> CallProgress:
    """An answered call, as after the first Workflow."""
    return CallProgress(now=now, call_state=CallState.ESTABLISHED, workflows=workflows)


def workflow_doc(*actions: Json, callback: bool = True) -> Json:
    doc: Json = {"actions": list(actions)}
    if callback:
        doc["links"] = {"callback": CALLBACK}
    return doc


def script(caller: str | list[Any]) -> CallerScript:
    if isinstance(caller, str):
        return CallerScript.from_inline(caller)
    return CallerScript.from_data(caller)


def run(
    actions: Sequence[Json],
    caller: str | list[Any] = "",
    *,
    progress: CallProgress | None = None,
    config: EngineConfig | None = None,
    callback: bool = True,
) -> WorkflowRun:
    workflow = read_workflow(workflow_doc(*actions, callback=callback))
    return run_workflow(workflow, script(caller), progress or established(), config)


def events(result: WorkflowRun, kind: type[E]) -> list[E]:
    return [e for e in result.events if isinstance(e, kind)]


def play(*texts: str, op: str = "p") -> Json:
    return {"operationId": op, "action": "playPrompt", "prompts": [{"value": t} for t in texts]}


def menu(**fields: Any) -> Json:
    """A menu answered by keys or speech: sales (1), support (2)."""
    doc: Json = {
        "operationId": "menu",
        "action": "recognize",
        "playPrompt": {"prompts": [{"value": "press one now"}]},
        "choices": [
            {"name": "sales", "dtmfVariation": "1", "speechVariation": ["Sales department"]},
            {"name": "Customer Support", "dtmfVariation": "2", "speechVariation": ["help"]},
        ],
    }
    doc.update(fields)
    return doc


def speech_menu(**fields: Any) -> Json:
    return menu(
        choices=[
            {"name": "sales", "speechVariation": ["buy"]},
            {"name": "support", "speechVariation": ["help"]},
        ],
        **fields,
    )


def sequence_menu(**fields: Any) -> Json:
    """Choices selected by key sequences: "12" (account) and "3" (operator)."""
    return menu(
        choices=[
            {"name": "account", "dtmfVariation": ["1", "2"]},
            {"name": "operator", "dtmfVariation": "3"},
        ],
        **fields,
    )


def digits(**collect: Any) -> Json:
    return {
        "operationId": "pin",
        "action": "recognize",
        "playPrompt": {"prompts": [{"value": "enter your pin"}]},
        "collectDigits": collect,
    }


def record(**fields: Any) -> Json:
    doc: Json = {
        "operationId": "rec",
        "action": "record",
        "playPrompt": {"prompts": [{"value": "leave a message"}]},
    }
    doc.update(fields)
    return doc


def choice_of(
    outcome: OperationOutcome | None,
) -> tuple[Outcome, RecognitionCompletionReason, str | None]:
    assert isinstance(outcome, RecognizeOutcome)
    assert outcome.collect_digits_outcome is None
    assert outcome.choice_outcome is not None
    return (
        outcome.outcome,
        outcome.choice_outcome.completion_reason,
        outcome.choice_outcome.choice_name,
    )


def digits_of(
    outcome: OperationOutcome | None,
) -> tuple[Outcome, DigitCollectionCompletionReason, str | None]:
    assert isinstance(outcome, RecognizeOutcome)
    assert outcome.choice_outcome is None
    assert outcome.collect_digits_outcome is not None
    cdo = outcome.collect_digits_outcome
    return outcome.outcome, cdo.completion_reason, cdo.digits


def record_of(outcome: OperationOutcome | None) -> tuple[Outcome, RecordingCompletionReason, float]:
    assert isinstance(outcome, RecordOutcome)
    return outcome.outcome, outcome.completion_reason, outcome.length_of_recording_in_secs


def completed_at(result: WorkflowRun, op: str) -> float:
    (done,) = [e for e in events(result, ActionCompleted) if e.operation_id == op]
    return done.at


def injected(kind: ActionType) -> EngineConfig:
    return EngineConfig(fail_actions=frozenset({kind}))


def broken_media(failure: str = "404 Not Found") -> EngineConfig:
    return EngineConfig(media={MEDIA: Media(failure=failure)})


FILE_PROMPT = {"prompts": [{"fileUri": MEDIA}]}
SUCCESS, FAILURE = Outcome.SUCCESS, Outcome.FAILURE
RCR = RecognitionCompletionReason
DCR = DigitCollectionCompletionReason
REC = RecordingCompletionReason


# --- recognize with choices: every completion reason ------------------------------------------


@pytest.mark.parametrize(
    ("fields", "ends"),
    [
        pytest.param({}, PROMPT + 5, id="default-5s-after-the-prompt"),
        pytest.param({"initialSilenceTimeoutInSeconds": 2.5}, PROMPT + 2.5, id="2.5s"),
        pytest.param({"bargeInAllowed": False}, PROMPT + 5, id="no-barge-in"),
        pytest.param({"playPrompt": None}, 5.0, id="no-prompt"),
    ],
)
def test_recognize_choice_initial_silence_timeout(fields: Json, ends: float) -> None:
    doc = {k: v for k, v in menu(**fields).items() if v is not None}
    result = run([doc], "")
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    assert result.progress.now == pytest.approx(ends)
    assert completed_at(result, "menu") == pytest.approx(ends)
    assert result.call_state is CallState.ESTABLISHED
    assert result.post is True


def test_recognize_choice_initial_silence_timer_starts_when_the_prompt_finishes() -> None:
    # Unmatched speech during the prompt does not start (or restart) the timer.
    result = run([menu()], "say hello")
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    assert result.progress.now == pytest.approx(PROMPT + 5)


def test_recognize_choice_incorrect_dtmf() -> None:
    result = run([menu()], "listen; press 5")
    assert choice_of(result.outcome) == (FAILURE, RCR.INCORRECT_DTMF, None)
    assert result.progress.now == pytest.approx(PROMPT)


@pytest.mark.parametrize(
    ("fields", "ends"),
    [
        pytest.param({}, PROMPT + 1, id="default-1s"),
        pytest.param({"interdigitTimeoutInSeconds": 3}, PROMPT + 3, id="3s"),
    ],
)
def test_recognize_choice_interdigit_timeout(fields: Json, ends: float) -> None:
    # A multi-key dtmfVariation is a key sequence: "1" alone, then silence, is a partial entry.
    result = run([sequence_menu(**fields)], "listen; press 1")
    assert choice_of(result.outcome) == (FAILURE, RCR.INTERDIGIT_TIMEOUT, None)
    assert result.progress.now == pytest.approx(ends)


def test_recognize_choice_key_sequence_matches_after_its_last_key() -> None:
    result = run([sequence_menu()], "listen; press 12")
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "account")
    assert result.progress.now == pytest.approx(PROMPT + 0.25)


def test_recognize_choice_wrong_key_after_a_partial_sequence_is_incorrect_dtmf() -> None:
    result = run([sequence_menu()], "listen; press 14")
    assert choice_of(result.outcome) == (FAILURE, RCR.INCORRECT_DTMF, None)
    assert result.progress.now == pytest.approx(PROMPT + 0.25)


@pytest.mark.parametrize(
    ("caller", "choice", "ends"),
    [
        pytest.param("say sales", "sales", 0.4, id="choice-name"),
        pytest.param("say Sales department", "sales", 0.8, id="speech-variation"),
        pytest.param("say sales, DEPARTMENT!", "sales", 0.8, id="case-and-punctuation"),
        pytest.param("say customer   support", "Customer Support", 0.8, id="name-spacing"),
        pytest.param("say help", "Customer Support", 0.4, id="second-choice"),
        pytest.param("listen; say help", "Customer Support", PROMPT + 0.4, id="after-listen"),
        pytest.param("say what; say help", "Customer Support", 0.8, id="after-unmatched"),
    ],
)
def test_recognize_choice_speech_option_matched(caller: str, choice: str, ends: float) -> None:
    result = run([menu()], caller)
    assert choice_of(result.outcome) == (SUCCESS, RCR.SPEECH_OPTION_MATCHED, choice)
    # The match comes when the caller stops speaking.
    assert result.progress.now == pytest.approx(ends)


def test_recognize_choice_unmatched_speech_is_ignored() -> None:
    result = run([menu()], "listen; say goodbye")
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    (ignored,) = events(result, InputIgnored)
    assert ignored.at == pytest.approx(PROMPT)
    assert "matches no choice" in ignored.why


@pytest.mark.parametrize(
    ("caller", "choice", "ends"),
    [
        pytest.param("listen; press 1", "sales", PROMPT, id="key-1"),
        pytest.param("listen; press 2", "Customer Support", PROMPT, id="key-2"),
        pytest.param("silence 2s; press 2", "Customer Support", PROMPT + 2, id="after-silence"),
        pytest.param(
            "listen; say what; press 1", "sales", PROMPT + 0.4, id="after-unmatched-speech"
        ),
        pytest.param("listen; talk 3s; press 1", "sales", PROMPT + 3, id="after-talk"),
    ],
)
def test_recognize_choice_dtmf_option_matched(caller: str, choice: str, ends: float) -> None:
    result = run([menu()], caller)
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, choice)
    assert result.progress.now == pytest.approx(ends)


@pytest.mark.parametrize(
    ("caller", "at"),
    [
        pytest.param(["hangup"], 0.0, id="hangup-at-the-start-of-the-turn"),
        pytest.param(["listen", "hangup"], PROMPT, id="listen-then-hangup-at-prompt-end"),
        pytest.param([{"say": "what"}, "hangup"], 0.4, id="after-unmatched-speech"),
        pytest.param(
            [{"hangup": {"during": "recognize", "after": "3s"}}],
            3.0,
            id="during-recognize-after-3s",
        ),
    ],
)
def test_recognize_choice_call_terminated(caller: list[Any], at: float) -> None:
    result = run([menu()], caller)
    assert choice_of(result.outcome) == (FAILURE, RCR.CALL_TERMINATED, None)
    assert result.progress.now == pytest.approx(at)
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.CALLER_HUNG_UP
    (hung,) = events(result, CallerHungUp)
    assert hung.at == pytest.approx(at)
    (prompt,) = events(result, PromptPlayed)
    assert prompt.end == pytest.approx(min(at, PROMPT))
    assert prompt.interrupted is (at < PROMPT)


@pytest.mark.parametrize(
    ("doc", "config", "reason"),
    [
        pytest.param(
            menu(),
            injected(ActionType.RECOGNIZE),
            "temporary system failure (injected)",
            id="injected",
        ),
        pytest.param(
            menu(playPrompt=FILE_PROMPT),
            broken_media(),
            f"{MEDIA}: 404 Not Found",
            id="media-failure",
        ),
    ],
)
def test_recognize_choice_temporary_system_failure(
    doc: Json, config: EngineConfig, reason: str
) -> None:
    result = run([doc], "press 1", config=config)
    assert choice_of(result.outcome) == (FAILURE, RCR.TEMPORARY_SYSTEM_FAILURE, None)
    assert result.outcome is not None
    assert result.outcome.failure_reason == reason
    # The caller's press was not used: it is left for the next turn.
    assert result.progress.cursor == 0


@pytest.mark.parametrize(
    "caller",
    [
        pytest.param("press 1", id="key-during-the-prompt"),
        pytest.param("listen; press 9", id="key-after-the-prompt"),
        pytest.param("listen; press 12", id="two-keys"),
        pytest.param("listen; press 1; silence 3s; press 2", id="keys-apart"),
    ],
)
def test_speech_menu_never_reports_incorrect_dtmf_or_interdigit_timeout(caller: str) -> None:
    result = run([speech_menu()], caller)
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    assert result.progress.now == pytest.approx(PROMPT + 5)
    pressed = events(result, CallerPressed)
    ignored = events(result, InputIgnored)
    assert len(ignored) == len(pressed) > 0
    assert all(i.why == "a speech menu takes no keys" for i in ignored)


def test_speech_menu_matches_speech_after_ignored_keys() -> None:
    result = run([speech_menu()], "listen; press 1; say buy")
    assert choice_of(result.outcome) == (SUCCESS, RCR.SPEECH_OPTION_MATCHED, "sales")
    assert result.progress.now == pytest.approx(PROMPT + 0.4)


# --- barge-in ----------------------------------------------------------------------------------


def test_barge_in_allowed_key_during_prompt_cuts_it() -> None:
    result = run([menu()], "say um; press 1")  # "um" is ignored; the key comes at 0.4 s
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is True
    assert prompt.end == pytest.approx(0.4)
    assert result.progress.now == pytest.approx(0.4)


def test_barge_in_cuts_the_prompt_that_is_playing_and_drops_the_rest() -> None:
    two = {"prompts": [{"value": "welcome to acme"}, {"value": "press one for sales"}]}
    result = run([menu(playPrompt=two)], "say a b c d; press 2")  # key at 1.6 s
    first, second = events(result, PromptPlayed)
    assert (first.index, first.end, first.interrupted) == (0, pytest.approx(1.2), False)
    assert (second.index, second.end, second.interrupted) == (1, pytest.approx(1.6), True)
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "Customer Support")


def test_barge_in_allowed_is_the_default_and_speech_also_cuts() -> None:
    result = run([menu()], "say help")
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is True
    assert prompt.end == pytest.approx(0.0)


def test_barge_in_not_allowed_caller_waits_for_the_prompt_end() -> None:
    result = run([menu(bargeInAllowed=False)], "press 1")
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is False
    assert prompt.end == pytest.approx(PROMPT)
    (key,) = events(result, CallerPressed)
    assert key.at == pytest.approx(PROMPT)
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    assert result.progress.now == pytest.approx(PROMPT)


@pytest.mark.parametrize(
    "caller",
    [
        pytest.param("listen; press 1", id="listen"),
        pytest.param("listen; listen; press 1", id="listen-twice"),
        pytest.param("silence 0s; press 1", id="leading-silence"),
    ],
)
def test_listen_or_leading_silence_hears_the_prompt_out(caller: str) -> None:
    result = run([menu()], caller)
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is False
    (key,) = events(result, CallerPressed)
    assert key.at == pytest.approx(PROMPT)


def test_unmatched_speech_does_not_cut_the_prompt() -> None:
    result = run([menu()], "say goodbye")
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is False
    assert prompt.end == pytest.approx(PROMPT)


def test_barge_in_key_during_prompt_starts_digit_collection() -> None:
    result = run([digits(maxNumberOfDtmfs=4)], "press 12")
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted is True
    assert prompt.end == pytest.approx(0.0)
    assert digits_of(result.outcome) == (SUCCESS, DCR.INTERDIGIT_TIMEOUT, "12")
    assert result.progress.now == pytest.approx(0.25 + 1)


def test_prompt_heard_to_its_end_is_not_marked_interrupted() -> None:
    two = {"prompts": [{"value": "a b c"}, {"value": "a b"}]}
    result = run([menu(playPrompt=two, bargeInAllowed=False)], "press 1", progress=established(0.1))
    assert [p.interrupted for p in events(result, PromptPlayed)] == [False, False]


# --- recognize with collectDigits: every completion reason ------------------------------------


def test_digits_initial_silence_timeout() -> None:
    result = run([digits(maxNumberOfDtmfs=4)], "")
    assert digits_of(result.outcome) == (FAILURE, DCR.INITIAL_SILENCE_TIMEOUT, None)
    assert result.progress.now == pytest.approx(PROMPT + 5)


@pytest.mark.parametrize(
    ("fields", "ends"),
    [
        pytest.param({}, PROMPT + 0.25 + 1, id="default-1s"),
        pytest.param({"interdigitTimeoutInSeconds": 2.5}, PROMPT + 0.25 + 2.5, id="2.5s"),
    ],
)
def test_digits_interdigit_timeout(fields: Json, ends: float) -> None:
    result = run([{**digits(maxNumberOfDtmfs=4), **fields}], "listen; press 12")
    # Success, with the digits collected so far.
    assert digits_of(result.outcome) == (SUCCESS, DCR.INTERDIGIT_TIMEOUT, "12")
    assert result.progress.now == pytest.approx(ends)


@pytest.mark.parametrize(
    ("collect", "caller", "collected", "ends"),
    [
        pytest.param({"stopTones": ["#"]}, "listen; press 12#", "12", PROMPT + 0.5, id="hash"),
        pytest.param(
            {"stopTones": ["*", "#"], "maxNumberOfDtmfs": 10},
            "listen; press 0*",
            "0",
            PROMPT + 0.25,
            id="second-stop-tone",
        ),
        pytest.param({"stopTones": ["#"]}, "listen; press #", None, PROMPT, id="stop-tone-only"),
        pytest.param(
            {"stopTones": "#"}, "listen; press 7#", "7", PROMPT + 0.25, id="bare-string-stop-tone"
        ),
        pytest.param(
            {"stopTones": ["#"], "maxNumberOfDtmfs": 2},
            "listen; press 123#",
            "12",
            PROMPT + 0.75,
            id="after-the-maximum",
        ),
    ],
)
def test_digits_completed_stop_tone_detected(
    collect: Json, caller: str, collected: str | None, ends: float
) -> None:
    result = run([digits(**collect)], caller)
    # The stop tone ends the collection and is not among the digits.
    assert digits_of(result.outcome) == (SUCCESS, DCR.COMPLETED_STOP_TONE_DETECTED, collected)
    assert result.progress.now == pytest.approx(ends)


def test_digits_max_number_of_dtmfs_applies() -> None:
    result = run([digits(maxNumberOfDtmfs=3)], "listen; press 12345")
    assert digits_of(result.outcome) == (SUCCESS, DCR.INTERDIGIT_TIMEOUT, "123")
    # Keys past the maximum are ignored and do not restart the interdigit timer.
    assert result.progress.now == pytest.approx(PROMPT + 0.5 + 1)
    ignored = events(result, InputIgnored)
    assert [i.input for i in ignored] == ["key 4", "key 5"]
    assert all("maxNumberOfDtmfs" in i.why for i in ignored)


@pytest.mark.parametrize(
    ("caller", "collected", "at"),
    [
        pytest.param("hangup", None, 0.0, id="at-once"),
        pytest.param("listen; press 1; hangup", "1", PROMPT, id="after-a-key"),
        pytest.param(
            "listen; press 12; silence 0.5s; hangup", "12", PROMPT + 0.75, id="in-a-pause"
        ),
    ],
)
def test_digits_call_terminated(caller: str, collected: str | None, at: float) -> None:
    result = run([digits(maxNumberOfDtmfs=4)], caller)
    assert digits_of(result.outcome) == (FAILURE, DCR.CALL_TERMINATED, collected)
    assert result.progress.now == pytest.approx(at)
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.CALLER_HUNG_UP


@pytest.mark.parametrize(
    ("doc", "config"),
    [
        pytest.param(digits(maxNumberOfDtmfs=4), injected(ActionType.RECOGNIZE), id="injected"),
        pytest.param(
            {**digits(maxNumberOfDtmfs=4), "playPrompt": FILE_PROMPT}, broken_media(), id="media"
        ),
    ],
)
def test_digits_temporary_system_failure(doc: Json, config: EngineConfig) -> None:
    result = run([doc], "press 1234", config=config)
    assert digits_of(result.outcome) == (FAILURE, DCR.TEMPORARY_SYSTEM_FAILURE, None)
    assert result.outcome is not None
    assert result.outcome.failure_reason


def test_digits_ignore_speech() -> None:
    result = run([digits(maxNumberOfDtmfs=4)], "listen; say one two; press 12")
    assert digits_of(result.outcome) == (SUCCESS, DCR.INTERDIGIT_TIMEOUT, "12")
    (ignored,) = events(result, InputIgnored)
    assert ignored.why == "digit collection takes keys only"


# --- record: every completion reason -----------------------------------------------------------

RECORDING_STARTS = PROMPT + BEEP


def test_record_initial_silence_timeout() -> None:
    result = run([record()], "")
    assert record_of(result.outcome) == (FAILURE, REC.INITIAL_SILENCE_TIMEOUT, 0.0)
    assert result.progress.now == pytest.approx(RECORDING_STARTS + 5)
    assert result.recording is None
    assert events(result, RecordingMade) == []
    (beep,) = events(result, BeepPlayed)
    assert beep.at == pytest.approx(PROMPT)
    assert beep.operation_id == "rec"


def test_record_silence_longer_than_the_initial_timeout_leaves_the_talk_for_later() -> None:
    result = run([record(initialSilenceTimeoutInSeconds=3)], "silence 4s; talk 2s")
    assert record_of(result.outcome) == (FAILURE, REC.INITIAL_SILENCE_TIMEOUT, 0.0)
    assert result.progress.now == pytest.approx(RECORDING_STARTS + 3)
    assert result.progress.cursor == 1


def test_record_max_recording_timeout() -> None:
    result = run([record(maxDurationInSeconds=10)], "talk 30s")
    assert record_of(result.outcome) == (SUCCESS, REC.MAX_RECORDING_TIMEOUT, pytest.approx(10.0))
    assert result.progress.now == pytest.approx(RECORDING_STARTS + 10)
    assert result.recording is not None
    assert result.recording.at == pytest.approx(RECORDING_STARTS)
    assert result.recording.seconds == pytest.approx(10.0)
    assert result.recording.speech == ((0.0, 10.0),)


@pytest.mark.parametrize(
    ("fields", "caller", "length"),
    [
        pytest.param({}, "talk 4s", 4 + 5, id="default-5s-of-silence"),
        pytest.param({"maxSilenceTimeoutInSeconds": 2}, "talk 4s", 4 + 2, id="2s-of-silence"),
        pytest.param({"maxSilenceTimeoutInSeconds": 0}, "talk 4s", 4, id="no-silence"),
        pytest.param({}, "talk 2s; silence 3s; talk 1s", 2 + 3 + 1 + 5, id="two-bursts"),
        pytest.param({}, "silence 2s; talk 1s", 2 + 1 + 5, id="late-start"),
    ],
)
def test_record_completed_silence_detected(fields: Json, caller: str, length: float) -> None:
    result = run([record(**fields)], caller)
    assert record_of(result.outcome) == (
        SUCCESS,
        REC.COMPLETED_SILENCE_DETECTED,
        pytest.approx(length),
    )
    assert result.progress.now == pytest.approx(RECORDING_STARTS + length)


def test_record_silence_detection_leaves_later_talk_for_the_next_turn() -> None:
    result = run([record()], "talk 2s; silence 6s; talk 2s")
    assert record_of(result.outcome) == (SUCCESS, REC.COMPLETED_SILENCE_DETECTED, pytest.approx(7))
    assert result.progress.cursor == 2


@pytest.mark.parametrize(
    ("fields", "caller", "length"),
    [
        pytest.param(
            {"stopTones": ["#"]}, [{"talk": {"for": "3s", "then": "#"}}], 3.0, id="talk-then-hash"
        ),
        pytest.param(
            {"stopTones": ["#", "*"]}, [{"talk": "2s"}, {"press": "5*"}], 2.25, id="other-key-first"
        ),
        pytest.param(
            {"stopTones": True}, [{"talk": {"for": "1s", "then": "9"}}], 1.0, id="any-key"
        ),
    ],
)
def test_record_completed_stop_tone_detected(
    fields: Json, caller: list[Any], length: float
) -> None:
    result = run([record(**fields)], caller)
    assert record_of(result.outcome) == (
        SUCCESS,
        REC.COMPLETED_STOP_TONE_DETECTED,
        pytest.approx(length),
    )
    assert result.progress.now == pytest.approx(RECORDING_STARTS + length)


def test_record_stop_tone_before_anything_was_recorded_fails_with_length_zero() -> None:
    result = run([record(stopTones=["#"])], "press #")
    assert record_of(result.outcome) == (FAILURE, REC.COMPLETED_STOP_TONE_DETECTED, 0.0)
    assert result.recording is None


def test_record_ignores_keys_that_are_not_stop_tones() -> None:
    result = run([record(stopTones=["#"])], "talk 1s; press 5")
    assert record_of(result.outcome) == (SUCCESS, REC.COMPLETED_SILENCE_DETECTED, pytest.approx(6))
    (ignored,) = events(result, InputIgnored)
    assert ignored.input == "key 5"


@pytest.mark.parametrize(
    ("caller", "length", "hung_up_at"),
    [
        pytest.param([{"talk": "2s"}, "hangup"], 2.0, RECORDING_STARTS + 2, id="after-talking"),
        pytest.param(
            [{"hangup": {"during": "record", "after": "3s"}}],
            3 - RECORDING_STARTS,
            3.0,
            id="silent-but-recorded",
        ),
    ],
)
def test_record_call_terminated_success_when_audio_was_recorded(
    caller: list[Any], length: float, hung_up_at: float
) -> None:
    result = run([record()], caller)
    assert record_of(result.outcome) == (SUCCESS, REC.CALL_TERMINATED, pytest.approx(length))
    assert result.recording is not None
    assert result.recording.seconds == pytest.approx(length)
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.CALLER_HUNG_UP
    (hung,) = events(result, CallerHungUp)
    assert hung.at == pytest.approx(hung_up_at)


@pytest.mark.parametrize(
    ("caller", "at"),
    [
        pytest.param(["hangup"], 0.0, id="at-the-start"),
        pytest.param([{"hangup": {"during": "record", "after": 0.5}}], 0.5, id="during-the-prompt"),
        pytest.param(["listen", "hangup"], PROMPT, id="during-the-beep"),
    ],
)
def test_record_call_terminated_failure_when_hung_up_before_recording(
    caller: list[Any], at: float
) -> None:
    result = run([record()], caller)
    assert record_of(result.outcome) == (FAILURE, REC.CALL_TERMINATED, 0.0)
    assert result.outcome is not None
    assert result.outcome.failure_reason == "the caller hung up before anything was recorded"
    assert result.recording is None
    assert events(result, BeepPlayed) == []
    assert result.progress.now == pytest.approx(at)
    assert result.call_state is CallState.TERMINATED


@pytest.mark.parametrize(
    ("doc", "config"),
    [
        pytest.param(record(), injected(ActionType.RECORD), id="injected"),
        pytest.param(record(playPrompt=FILE_PROMPT), broken_media(), id="media"),
    ],
)
def test_record_temporary_system_failure(doc: Json, config: EngineConfig) -> None:
    result = run([doc], "talk 3s", config=config)
    assert record_of(result.outcome) == (FAILURE, REC.TEMPORARY_SYSTEM_FAILURE, 0.0)
    assert result.outcome is not None
    assert result.outcome.failure_reason
    assert result.recording is None


@pytest.mark.parametrize(
    ("fields", "starts", "beeps"),
    [
        pytest.param({}, PROMPT + BEEP, [PROMPT], id="prompt-and-beep"),
        pytest.param({"playBeep": True}, PROMPT + BEEP, [PROMPT], id="beep-explicit"),
        pytest.param({"playBeep": False}, PROMPT, [], id="no-beep"),
        pytest.param({"playPrompt": None}, BEEP, [0.0], id="no-prompt"),
        pytest.param({"playPrompt": None, "playBeep": False}, 0.0, [], id="nothing-first"),
    ],
)
def test_record_starts_after_the_prompt_and_the_beep(
    fields: Json, starts: float, beeps: list[float]
) -> None:
    doc = {k: v for k, v in record(**fields).items() if v is not None}
    result = run([doc], "talk 1s")
    assert result.recording is not None
    assert result.recording.at == pytest.approx(starts)
    assert [b.at for b in events(result, BeepPlayed)] == pytest.approx(beeps)


def test_record_beep_length_is_configurable() -> None:
    result = run([record()], "talk 1s", config=EngineConfig(beep_seconds=1.5))
    assert result.recording is not None
    assert result.recording.at == pytest.approx(PROMPT + 1.5)


@pytest.mark.parametrize(
    ("fields", "caller", "length"),
    [
        pytest.param({}, "talk 0.5s", 5.5, id="short-talk"),
        pytest.param({"maxDurationInSeconds": 2}, "talk 1s", 2.0, id="silence-past-the-maximum"),
        pytest.param({"maxDurationInSeconds": 2}, "", 2.0, id="maximum-before-initial-silence"),
        pytest.param({"maxSilenceTimeoutInSeconds": 1}, "talk 10s", 11.0, id="long-talk"),
    ],
)
def test_record_length_of_recording_in_secs(fields: Json, caller: str, length: float) -> None:
    result = run([record(**fields)], caller)
    outcome = result.outcome
    assert isinstance(outcome, RecordOutcome)
    assert outcome.succeeded
    assert outcome.length_of_recording_in_secs == pytest.approx(length)
    assert result.recording is not None
    assert result.recording.seconds == pytest.approx(length)


@pytest.mark.parametrize("fmt", ["wma", "wav", "mp3"])
def test_record_outcome_and_recording_carry_the_format(fmt: str) -> None:
    result = run([record(recordingFormat=fmt)], "talk 1s")
    assert isinstance(result.outcome, RecordOutcome)
    assert result.outcome.format is RecordingFormat(fmt)
    assert result.recording is not None
    assert result.recording.format is RecordingFormat(fmt)


def test_record_default_format_is_wma() -> None:
    result = run([record()], "talk 1s")
    assert isinstance(result.outcome, RecordOutcome)
    assert result.outcome.format is RecordingFormat.WMA


@pytest.mark.parametrize(
    ("after", "succeeded", "length"),
    [
        pytest.param(0.5002, False, 0.0, id="under-1ms-is-nothing"),
        pytest.param(0.502, True, 0.002, id="2ms-is-a-recording"),
    ],
)
def test_record_length_is_whole_milliseconds_and_success_means_positive(
    after: float, succeeded: bool, length: float
) -> None:
    """Regression: a 0.2 ms recording succeeded but was posted with length 0.0."""
    result = run([record(playPrompt=None)], [{"hangup": {"during": "record", "after": after}}])
    assert isinstance(result.outcome, RecordOutcome)
    assert result.outcome.succeeded is succeeded
    posted = json.loads(wire.encode(result.outcome))
    assert posted["lengthOfRecordingInSecs"] == length


# --- playPrompt: every completion reason -------------------------------------------------------


def test_play_prompt_completed_successfully() -> None:
    result = run([play("hello there world", "bye")], "")
    outcome = result.outcome
    assert isinstance(outcome, PlayPromptOutcome)
    assert (outcome.outcome, outcome.completion_reason) == (
        SUCCESS,
        PromptCompletionReason.COMPLETED_SUCCESSFULLY,
    )
    first, second = events(result, PromptPlayed)
    assert (first.at, first.end) == (pytest.approx(0.0), pytest.approx(1.2))
    assert (second.at, second.end) == (pytest.approx(1.2), pytest.approx(1.6))
    assert not first.interrupted and not second.interrupted
    assert result.progress.now == pytest.approx(1.6)


def test_play_prompt_does_not_consume_caller_steps() -> None:
    result = run([play("hello")], "press 1; say sales")
    assert result.progress.cursor == 0
    assert events(result, CallerPressed) == []


@pytest.mark.parametrize(
    ("caller", "at", "index"),
    [
        pytest.param(["hangup"], 0.0, 0, id="at-the-start"),
        pytest.param(
            [{"hangup": {"during": "playPrompt", "after": "1.5s"}}], 1.5, 1, id="after-1.5s"
        ),
        pytest.param(
            [{"hangup": {"during": "playPrompt", "after": "0.5s"}}], 0.5, 0, id="after-0.5s"
        ),
    ],
)
def test_play_prompt_call_terminated(caller: list[Any], at: float, index: int) -> None:
    result = run([play("hello there world", "bye")], caller)
    outcome = result.outcome
    assert isinstance(outcome, PlayPromptOutcome)
    assert (outcome.outcome, outcome.completion_reason) == (
        FAILURE,
        PromptCompletionReason.CALL_TERMINATED,
    )
    played = events(result, PromptPlayed)
    assert len(played) == index + 1
    assert played[-1].interrupted is True
    assert played[-1].end == pytest.approx(at)
    assert result.progress.now == pytest.approx(at)
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.CALLER_HUNG_UP


def test_play_prompt_temporary_system_failure_from_media() -> None:
    doc = {
        "operationId": "p",
        "action": "playPrompt",
        "prompts": [{"value": "hi"}, {"fileUri": MEDIA}],
    }
    result = run([doc], "", config=broken_media("timed out"))
    outcome = result.outcome
    assert isinstance(outcome, PlayPromptOutcome)
    assert (outcome.outcome, outcome.completion_reason) == (
        FAILURE,
        PromptCompletionReason.TEMPORARY_SYSTEM_FAILURE,
    )
    assert outcome.failure_reason == f"{MEDIA}: timed out"
    # The text prompt before the broken file played; the platform stopped at the file.
    (played,) = events(result, PromptPlayed)
    assert played.text == "hi"
    assert result.progress.now == pytest.approx(0.4)


def test_play_prompt_temporary_system_failure_injected() -> None:
    result = run([play("hello")], "", config=injected(ActionType.PLAY_PROMPT))
    outcome = result.outcome
    assert isinstance(outcome, PlayPromptOutcome)
    assert (outcome.outcome, outcome.completion_reason) == (
        FAILURE,
        PromptCompletionReason.TEMPORARY_SYSTEM_FAILURE,
    )
    assert outcome.failure_reason == "temporary system failure (injected)"
    assert events(result, PromptPlayed) == []


def test_fail_actions_only_fails_the_listed_kind() -> None:
    result = run([play("hello"), menu()], "press 1", config=injected(ActionType.RECORD))
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")


@pytest.mark.parametrize(
    ("prompt", "media", "seconds"),
    [
        pytest.param(Prompt(value="one two three"), {}, 1.2, id="three-words"),
        pytest.param(
            Prompt(value="x", silence_length_in_milliseconds=1500), {}, 1.9, id="silence-first"
        ),
        pytest.param(Prompt(silence_length_in_milliseconds=2500), {}, 2.5, id="silence-only"),
        pytest.param(Prompt(value="ABC1", say_as=SayAs.LETTERS), {}, 1.2, id="spelled"),
        pytest.param(Prompt(file_uri=MEDIA), {MEDIA: Media(seconds=7.5)}, 7.5, id="known-media"),
        pytest.param(Prompt(file_uri=MEDIA), {}, 3.0, id="unknown-media-default"),
    ],
)
def test_prompt_seconds(prompt: Prompt, media: dict[str, Media], seconds: float) -> None:
    assert prompt_seconds(prompt, media) == pytest.approx(seconds)


def test_media_seconds_are_the_prompt_duration() -> None:
    config = EngineConfig(media={MEDIA: Media(seconds=4.0)})
    played = run([{"operationId": "p", "action": "playPrompt", **FILE_PROMPT}], "", config=config)
    assert played.progress.now == pytest.approx(4.0)
    recognized = run([menu(playPrompt=FILE_PROMPT)], "", config=config)
    # The recognize timer starts after the 4 s file.
    assert recognized.progress.now == pytest.approx(4.0 + 5)


# --- workflow semantics ------------------------------------------------------------------------


def test_first_failed_action_stops_the_workflow() -> None:
    result = run([play("hello", op="p1"), menu(), play("thanks", op="p2")], "")
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    started = [e.operation_id for e in events(result, ActionStarted)]
    assert started == ["p1", "menu"]
    assert result.post is True
    assert result.call_state is CallState.ESTABLISHED


def test_when_every_action_succeeds_the_last_outcome_is_posted() -> None:
    result = run([play("hello", op="p1"), menu(), play("thanks", op="p2")], "listen; press 1")
    assert isinstance(result.outcome, PlayPromptOutcome)
    assert result.outcome.id == "p2"
    assert result.outcome.succeeded
    assert [e.operation_id for e in events(result, ActionCompleted)] == ["p1", "menu", "p2"]


def test_without_callback_every_action_runs_then_the_platform_hangs_up() -> None:
    result = run([menu(), play("thanks", op="p2")], "", callback=False)
    # The failed recognize does not stop a Workflow with no callback.
    assert [e.operation_id for e in events(result, ActionStarted)] == ["menu", "p2"]
    assert isinstance(result.outcome, PlayPromptOutcome)
    assert result.outcome.id == "p2"
    assert result.post is False
    assert result.ended is EndReason.NO_CALLBACK
    assert result.call_state is CallState.TERMINATED
    (ended,) = events(result, CallEnded)
    assert ended.reason is EndReason.NO_CALLBACK
    assert ended.at == pytest.approx(PROMPT + 5 + 0.4)


def test_without_callback_a_workflow_ending_in_hangup_is_a_bot_hangup() -> None:
    result = run([play("bye"), {"operationId": "h", "action": "hangup"}], "", callback=False)
    assert isinstance(result.outcome, HangupOutcome)
    assert result.ended is EndReason.BOT_HUNG_UP
    assert result.post is False


def test_caller_hangup_mid_workflow_posts_the_action_cut_short() -> None:
    result = run([play("hello", op="p1"), menu(), play("thanks", op="p2")], "listen; hangup")
    assert choice_of(result.outcome) == (FAILURE, RCR.CALL_TERMINATED, None)
    assert [e.operation_id for e in events(result, ActionStarted)] == ["p1", "menu"]
    assert result.post is True
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.CALLER_HUNG_UP
    call_result = result_for("call-1", result, app_state=None)
    assert call_result is not None
    assert call_result.call_state is CallState.TERMINATED


def test_caller_hangup_stops_a_workflow_without_callback() -> None:
    result = run(
        [
            play("hello there world", op="p1"),
            play("bye", op="p2"),
            {"operationId": "h", "action": "hangup"},
        ],
        "hangup",
        callback=False,
    )
    assert [e.operation_id for e in events(result, ActionStarted)] == ["p1"]
    assert isinstance(result.outcome, PlayPromptOutcome)
    assert result.outcome.id == "p1"
    assert result.ended is EndReason.CALLER_HUNG_UP


def test_caller_hangup_during_a_successful_recording_posts_the_record_outcome() -> None:
    result = run([record(), play("thanks", op="p2")], "talk 2s; hangup")
    assert record_of(result.outcome) == (SUCCESS, REC.CALL_TERMINATED, pytest.approx(2.0))
    assert [e.operation_id for e in events(result, ActionStarted)] == ["rec"]


def test_steps_not_started_when_the_action_completes_are_left_for_the_next_turn() -> None:
    caller = script("press 1; press 2")
    first = run_workflow(read_workflow(workflow_doc(menu())), caller, established())
    assert choice_of(first.outcome)[2] == "sales"
    assert first.progress.cursor == 1
    second = run_workflow(read_workflow(workflow_doc(menu())), caller, first.progress)
    assert choice_of(second.outcome)[2] == "Customer Support"
    assert second.progress.cursor == 2


def test_plain_hangup_after_the_last_input_waits_for_the_next_prompt() -> None:
    caller = script("press 1; hangup")
    first = run_workflow(read_workflow(workflow_doc(menu())), caller, established())
    assert choice_of(first.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    assert first.call_state is CallState.ESTABLISHED
    second = run_workflow(read_workflow(workflow_doc(play("thanks"))), caller, first.progress)
    assert isinstance(second.outcome, PlayPromptOutcome)
    assert second.outcome.completion_reason is PromptCompletionReason.CALL_TERMINATED
    (hung,) = events(second, CallerHungUp)
    assert hung.at == pytest.approx(first.progress.now)


def test_hangup_during_a_kind_waits_for_an_action_of_that_kind() -> None:
    caller = script([{"hangup": {"during": "record", "after": "1s"}}])
    first = run_workflow(read_workflow(workflow_doc(play("hello"), menu())), caller, established())
    assert first.call_state is CallState.ESTABLISHED  # neither a playPrompt nor a recognize
    assert first.progress.cursor == 0
    second = run_workflow(read_workflow(workflow_doc(record())), caller, first.progress)
    assert record_of(second.outcome) == (FAILURE, REC.CALL_TERMINATED, 0.0)
    (hung,) = events(second, CallerHungUp)
    assert hung.at == pytest.approx(first.progress.now + 1)


def test_a_pending_hangup_carries_over_to_the_next_workflow() -> None:
    caller = script([{"hangup": {"during": "playPrompt", "after": "5s"}}])
    first = run_workflow(
        read_workflow(workflow_doc(play("hello there world"))), caller, established()
    )
    assert isinstance(first.outcome, PlayPromptOutcome) and first.outcome.succeeded
    assert first.progress.hangup_at == pytest.approx(5.0)
    long_prompt = play(" ".join(["word"] * 20))  # 8 s
    second = run_workflow(read_workflow(workflow_doc(long_prompt)), caller, first.progress)
    assert isinstance(second.outcome, PlayPromptOutcome)
    assert second.outcome.completion_reason is PromptCompletionReason.CALL_TERMINATED
    assert second.progress.now == pytest.approx(5.0)


@pytest.mark.parametrize(
    "doc", [pytest.param(menu(), id="recognize"), pytest.param(record(), id="record")]
)
def test_hangup_after_without_during_is_honoured_in_input_turns(doc: Json) -> None:
    result = run([doc], [{"hangup": {"after": "1s"}}])
    (hung,) = events(result, CallerHungUp)
    assert hung.at == pytest.approx(1.0)


def test_hangup_after_without_during_before_a_play_prompt() -> None:
    result = run([play("hello there world")], [{"hangup": {"after": "1s"}}])
    (hung,) = events(result, CallerHungUp)
    assert hung.at == pytest.approx(1.0)


# --- call states -------------------------------------------------------------------------------


def test_answer_moves_an_incoming_call_to_established() -> None:
    result = run([{"operationId": "a", "action": "answer"}], "", progress=CallProgress())
    assert isinstance(result.outcome, AnswerOutcome)
    assert result.outcome.succeeded
    assert result.call_state is CallState.ESTABLISHED
    assert result.progress.answered
    assert events(result, StateChanged) == [
        StateChanged(0.0, CallState.INCOMING, CallState.ESTABLISHED)
    ]
    assert result.progress.workflows == 1


def test_answer_on_an_established_call_changes_no_state() -> None:
    result = run([{"operationId": "a", "action": "answer"}], "")
    assert events(result, StateChanged) == []


def test_reject_terminates_an_incoming_call() -> None:
    result = run([{"operationId": "r", "action": "reject"}], "", progress=CallProgress())
    assert isinstance(result.outcome, RejectOutcome)
    assert result.outcome.succeeded
    assert result.post is True
    assert result.call_state is CallState.TERMINATED
    assert result.ended is EndReason.BOT_REJECTED
    assert events(result, StateChanged) == [
        StateChanged(0.0, CallState.INCOMING, CallState.TERMINATED)
    ]
    call_result = result_for("c", result, app_state=None)
    assert call_result is not None and call_result.call_state is CallState.TERMINATED


def test_bot_hangup_terminates_an_established_call() -> None:
    result = run(
        [play("bye"), {"operationId": "h", "action": "hangup"}], "", progress=established(3)
    )
    assert isinstance(result.outcome, HangupOutcome)
    assert result.outcome.succeeded
    assert result.ended is EndReason.BOT_HUNG_UP
    (changed,) = events(result, StateChanged)
    assert (changed.at, changed.old, changed.new) == (
        pytest.approx(3.4),
        CallState.ESTABLISHED,
        CallState.TERMINATED,
    )


def test_caller_hangup_terminates_the_call() -> None:
    result = run([menu()], "hangup")
    (changed,) = events(result, StateChanged)
    assert (changed.old, changed.new) == (CallState.ESTABLISHED, CallState.TERMINATED)
    (ended,) = events(result, CallEnded)
    assert ended.reason is EndReason.CALLER_HUNG_UP


def test_a_whole_call_answer_menu_then_hangup() -> None:
    caller = script("press 2")
    progress = CallProgress()
    answered = run_workflow(
        read_workflow(workflow_doc({"operationId": "a", "action": "answer"}, menu())),
        caller,
        progress,
    )
    assert answered.call_state is CallState.ESTABLISHED
    assert choice_of(answered.outcome)[2] == "Customer Support"
    bye = run_workflow(
        read_workflow(workflow_doc(play("goodbye"), {"operationId": "h", "action": "hangup"})),
        caller,
        answered.progress,
    )
    assert bye.call_state is CallState.TERMINATED
    assert bye.progress.workflows == 2


# --- the posted result -------------------------------------------------------------------------

APP_STATES = [
    pytest.param('{"step":"menu", "tries" : 2,\n "name":"Zoë \\u00e9"}  ', id="json-with-spacing"),
    pytest.param("", id="empty"),
    pytest.param("  leading and trailing  ", id="spaces"),
    pytest.param("emoji 😀 and \t tab", id="non-bmp"),
    pytest.param("x" * 1024, id="1024-chars"),
]


@pytest.mark.parametrize("app_state", APP_STATES)
def test_result_for_echoes_app_state_unchanged(app_state: str) -> None:
    result = run([menu()], "press 1")
    call_result = result_for("call-1", result, app_state=app_state)
    assert call_result is not None
    assert call_result.app_state == app_state
    posted = json.loads(wire.encode(call_result))
    assert posted["appState"] == app_state


def test_result_for_carries_the_call_the_state_and_the_outcome() -> None:
    result = run([menu()], "press 1")
    call_result = result_for(
        "call-1", result, app_state=None, call_link="https://platform.example/calls/1", app_id="bot"
    )
    assert call_result is not None
    assert call_result.id == "call-1"
    assert call_result.app_id == "bot"
    assert call_result.call_state is CallState.ESTABLISHED
    assert call_result.operation_outcome is result.outcome
    assert call_result.links == {"call": "https://platform.example/calls/1"}
    assert call_result.app_state is None
    assert "appState" not in json.loads(wire.encode(call_result))


def test_result_for_a_run_with_no_outcome_is_none() -> None:
    ended = run([menu()], "hangup")
    nothing = run([menu()], "press 1", progress=ended.progress)
    assert result_for("call-1", nothing, app_state="kept") is None


# --- the workflow limit and invalid workflows ---------------------------------------------------


def test_workflow_limit_ends_the_call_with_no_outcome() -> None:
    config = EngineConfig(max_workflows=2)
    caller = script("")
    progress = CallProgress()
    wf = read_workflow(workflow_doc(play("hi")))
    answer = read_workflow(workflow_doc({"operationId": "a", "action": "answer"}))
    first = run_workflow(answer, caller, progress, config)
    second = run_workflow(wf, caller, first.progress, config)
    assert second.outcome is not None and second.progress.workflows == 2
    third = run_workflow(wf, caller, second.progress, config)
    assert third.outcome is None
    assert third.post is False
    assert third.ended is EndReason.WORKFLOW_LIMIT
    assert third.call_state is CallState.TERMINATED
    assert events(third, ActionStarted) == []
    assert [type(e) for e in third.events] == [StateChanged, CallEnded]
    ended = third.events[-1]
    assert isinstance(ended, CallEnded)
    assert (ended.at, ended.reason) == (pytest.approx(0.4), EndReason.WORKFLOW_LIMIT)


def test_workflow_limit_default() -> None:
    wf = read_workflow(workflow_doc(play("hi")))
    last = run_workflow(wf, script(""), established(workflows=DEFAULT_MAX_WORKFLOWS - 1))
    assert last.outcome is not None
    assert last.progress.workflows == DEFAULT_MAX_WORKFLOWS
    over = run_workflow(wf, script(""), last.progress)
    assert over.ended is EndReason.WORKFLOW_LIMIT


INVALID: Json = {
    "actions": [
        {
            "operationId": "menu",
            "action": "recognize",
            "choices": [{"name": "a", "dtmfVariation": "1"}],
            "collectDigits": {"maxNumberOfDtmfs": 2},
        }
    ],
    "links": {"callback": CALLBACK},
}


def test_reject_workflow_posts_a_validation_outcome_with_the_findings() -> None:
    findings = rules.validate_workflow(INVALID)
    assert has_errors(findings)
    progress = established(now=7.0)
    result = reject_workflow(findings, "menu", progress)
    outcome = result.outcome
    assert isinstance(outcome, WorkflowValidationOutcome)
    assert outcome.id == "menu"
    assert outcome.outcome is FAILURE
    assert outcome.failure_reason == (
        "WF-RECOGNIZE-ONE-OF at $.actions[0]: "
        "exactly one of collectDigits and choices is specified; both are"
    )
    assert result.post is True
    assert result.events == ()
    assert result.progress == CallProgress(now=7.0, call_state=CallState.ESTABLISHED, workflows=2)


def test_reject_workflow_reports_errors_only_when_there_are_errors() -> None:
    warning = Finding("WF-A", Severity.WARNING, "$.a", "a warning")
    error1 = Finding("WF-B", Severity.ERROR, "$.b", "first error")
    error2 = Finding("WF-C", Severity.ERROR, "$.c", "second error")
    result = reject_workflow([warning, error1, error2], "op", established())
    assert result.outcome is not None
    assert result.outcome.failure_reason == "WF-B at $.b: first error; WF-C at $.c: second error"


def test_reject_workflow_counts_toward_the_workflow_limit() -> None:
    config = EngineConfig(max_workflows=2)
    findings = rules.validate_workflow(INVALID)
    first = reject_workflow(findings, "menu", CallProgress(), config)
    assert first.progress.workflows == 1
    second = run_workflow(
        read_workflow(workflow_doc({"operationId": "a", "action": "answer"})),
        script(""),
        first.progress,
        config,
    )
    assert second.progress.workflows == 2
    third = reject_workflow(findings, "menu", second.progress, config)
    assert third.outcome is None
    assert third.ended is EndReason.WORKFLOW_LIMIT


def test_reject_workflow_on_an_ended_call_posts_nothing() -> None:
    ended = run([menu()], "hangup")
    result = reject_workflow(rules.validate_workflow(INVALID), "menu", ended.progress)
    assert result.outcome is None
    assert result.post is False
    assert result.progress is ended.progress


def test_run_workflow_on_an_ended_call_returns_no_outcome() -> None:
    ended = run([menu()], "hangup")
    assert ended.progress.ended is EndReason.CALLER_HUNG_UP
    again = run([menu()], "press 1", progress=ended.progress)
    assert again.outcome is None
    assert again.events == ()
    assert again.post is False
    assert again.progress is ended.progress


# --- virtual time --------------------------------------------------------------------------------


def test_virtual_time_advances_across_workflows() -> None:
    caller = script("listen; press 1; talk 2s")
    w1 = run_workflow(read_workflow(workflow_doc(play("hello there world"))), caller, established())
    assert w1.progress.now == pytest.approx(1.2)
    w2 = run_workflow(read_workflow(workflow_doc(menu())), caller, w1.progress)
    (started,) = events(w2, ActionStarted)
    assert started.at == pytest.approx(1.2)
    assert w2.progress.now == pytest.approx(1.2 + PROMPT)
    w3 = run_workflow(read_workflow(workflow_doc(record())), caller, w2.progress)
    assert w3.progress.now == pytest.approx(1.2 + PROMPT + PROMPT + BEEP + 2 + 5)
    assert [w.progress.workflows for w in (w1, w2, w3)] == [2, 3, 4]


def test_a_ten_minute_call_runs_without_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the engine slept {seconds}s")

    monkeypatch.setattr(time, "sleep", no_sleep)
    caller = script("talk 600s; silence 20s; press 1")
    began = time.perf_counter()
    w1 = run_workflow(
        read_workflow(workflow_doc(record(maxDurationInSeconds=600))), caller, established()
    )
    w2 = run_workflow(read_workflow(workflow_doc(menu(bargeInAllowed=False))), caller, w1.progress)
    elapsed = time.perf_counter() - began
    assert record_of(w1.outcome) == (SUCCESS, REC.MAX_RECORDING_TIMEOUT, pytest.approx(600))
    assert choice_of(w2.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    assert w2.progress.now >= 600
    assert elapsed < 1.0


# --- reactive when rules -------------------------------------------------------------------------

MAIN_MENU = "Main menu: press one for sales"  # six words: 2.4 s


def main_menu(op: str = "menu", **fields: Any) -> Json:
    """The menu, saying MAIN_MENU; a field set to None is left out."""
    fields = {"operationId": op, "playPrompt": {"prompts": [{"value": MAIN_MENU}]}, **fields}
    return {k: v for k, v in menu(**fields).items() if v is not None}


def pin(op: str = "pin") -> Json:
    return {**digits(stopTones=["#"]), "operationId": op}


def reactive(steps: list[Any], *rules: Json) -> CallerScript:
    return CallerScript.from_data({"steps": steps, "when": list(rules)})


PRESS_1_AT_MAIN_MENU = {"prompt": "main menu", "do": [{"press": "1"}]}


@pytest.mark.parametrize("menu_first", [True, False], ids=["menu-first", "menu-second"])
def test_a_rule_answers_the_main_menu_wherever_it_comes(menu_first: bool) -> None:
    caller = reactive([{"press": "1234#"}], PRESS_1_AT_MAIN_MENU)
    order = [main_menu(), pin()] if menu_first else [pin(), main_menu()]
    progress = established()
    outcomes = {}
    for action in order:
        result = run_workflow(read_workflow(workflow_doc(action)), caller, progress)
        progress = result.progress
        outcomes[action["operationId"]] = result.outcome
    assert choice_of(outcomes["menu"]) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    assert digits_of(outcomes["pin"]) == (SUCCESS, DCR.COMPLETED_STOP_TONE_DETECTED, "1234")
    assert progress.cursor == 1  # the rule did not move the sequential script
    assert progress.rules_used == frozenset()  # not a once rule


def test_a_rule_runs_its_steps_as_the_script_would() -> None:
    by_rule = run_workflow(
        read_workflow(workflow_doc(main_menu())),
        reactive([], {"prompt": "main menu", "do": ["listen", {"press": "2"}]}),
        established(),
    )
    by_script = run([main_menu()], "listen; press 2")
    assert by_rule.outcome == by_script.outcome
    assert by_rule.events == by_script.events
    assert by_rule.progress.now == by_script.progress.now == pytest.approx(2.4)


def test_a_rule_barges_in_like_the_script() -> None:
    result = run_workflow(
        read_workflow(workflow_doc(main_menu())), reactive([], PRESS_1_AT_MAIN_MENU), established()
    )
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    assert completed_at(result, "menu") == 0.0
    (prompt,) = events(result, PromptPlayed)
    assert prompt.interrupted and prompt.end == 0.0


def test_rules_match_ignoring_case_and_anywhere_in_the_prompt() -> None:
    caller = reactive([], {"prompt": "PRESS ONE for SALES$", "do": [{"press": "1"}]})
    result = run_workflow(read_workflow(workflow_doc(main_menu())), caller, established())
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")


def test_with_no_match_the_sequential_steps_are_used() -> None:
    caller = reactive(["listen", {"press": "2"}], PRESS_1_AT_MAIN_MENU)
    result = run_workflow(read_workflow(workflow_doc(menu())), caller, established())
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "Customer Support")
    assert result.progress.cursor == 2


def test_a_once_rule_is_used_once_per_call() -> None:
    once = {**PRESS_1_AT_MAIN_MENU, "once": True}
    caller = reactive(["listen", {"press": "2"}], once)
    first = run_workflow(read_workflow(workflow_doc(main_menu())), caller, established())
    assert choice_of(first.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    assert first.progress.rules_used == frozenset({0})
    second = run_workflow(read_workflow(workflow_doc(main_menu())), caller, first.progress)
    assert choice_of(second.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "Customer Support")
    assert second.progress.rules_used == frozenset({0})


def test_the_first_matching_rule_wins_and_a_used_once_rule_gives_way_to_the_next() -> None:
    caller = reactive(
        [],
        {"prompt": "menu", "do": [{"press": "2"}], "once": True},
        {"prompt": "main", "do": [{"press": "1"}]},
    )
    progress = established()
    names = []
    for _ in range(3):
        result = run_workflow(read_workflow(workflow_doc(main_menu())), caller, progress)
        progress = result.progress
        names.append(choice_of(result.outcome)[2])
    assert names == ["Customer Support", "sales", "sales"]


def test_a_rule_with_a_record_turn() -> None:
    caller = reactive(
        [{"press": "9"}],
        {"prompt": "leave a message", "do": [{"talk": {"for": "3s", "then": "#"}}]},
    )
    result = run_workflow(
        read_workflow(workflow_doc(record(stopTones=["#"]))), caller, established()
    )
    assert record_of(result.outcome) == (
        SUCCESS,
        REC.COMPLETED_STOP_TONE_DETECTED,
        pytest.approx(3.0),
    )
    assert result.progress.cursor == 0


def test_a_turn_without_a_prompt_is_matched_by_the_last_prompt_of_its_workflow() -> None:
    caller = reactive([], PRESS_1_AT_MAIN_MENU)
    doc = workflow_doc(play(MAIN_MENU), main_menu(playPrompt=None))
    result = run_workflow(read_workflow(doc), caller, established())
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    # the prompt of an earlier Workflow does not count
    again = run_workflow(
        read_workflow(workflow_doc(main_menu(playPrompt=None))), caller, result.progress
    )
    assert choice_of(again.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)


def test_a_turn_with_a_prompt_is_matched_by_its_own_prompt_only() -> None:
    caller = reactive([], PRESS_1_AT_MAIN_MENU)
    doc = workflow_doc(play(MAIN_MENU), menu())  # the menu says "press one now"
    result = run_workflow(read_workflow(doc), caller, established())
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)


def test_steps_of_a_rule_that_the_turn_does_not_reach_are_dropped() -> None:
    caller = reactive(
        ["listen", {"press": "2"}], {"prompt": "main menu", "do": [{"press": "1"}, {"press": "2"}]}
    )
    first = run_workflow(read_workflow(workflow_doc(main_menu())), caller, established())
    assert choice_of(first.outcome)[2] == "sales"
    second = run_workflow(read_workflow(workflow_doc(menu())), caller, first.progress)
    assert choice_of(second.outcome)[2] == "Customer Support"


def test_a_rule_can_hang_up() -> None:
    caller = reactive(["listen", {"press": "1"}], {"prompt": "main menu", "do": ["hangup"]})
    result = run_workflow(read_workflow(workflow_doc(main_menu())), caller, established())
    assert choice_of(result.outcome) == (FAILURE, RCR.CALL_TERMINATED, None)
    assert result.progress.ended is EndReason.CALLER_HUNG_UP
    assert events(result, CallerHungUp)[0].at == 0.0


def test_rules_are_not_tested_once_the_caller_is_hanging_up() -> None:
    once = {**PRESS_1_AT_MAIN_MENU, "once": True}
    caller = reactive([{"hangup": {"during": "playPrompt", "after": "5s"}}], once)
    doc = workflow_doc(play("hello"), main_menu())
    result = run_workflow(read_workflow(doc), caller, established())
    assert choice_of(result.outcome) == (FAILURE, RCR.CALL_TERMINATED, None)
    assert result.progress.now == 5.0
    assert result.progress.rules_used == frozenset()


# --- property: the engine never raises -----------------------------------------------------------

WORDS = ["sales", "support", "billing", "yes", "no", "agent", "hello", "one"]
URIS = ["https://media.example/a.wav", "https://media.example/b.wma"]

keys_st = st.sampled_from(DTMF_KEYS)
phrase_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
prompt_st = st.one_of(
    st.builds(lambda v: {"value": v}, phrase_st),
    st.builds(
        lambda v, s: {"value": v, "sayAs": s},
        st.text("0123456789abc", min_size=1, max_size=8),
        st.sampled_from(["letters", "telephone", "cardinal"]),
    ),
    st.builds(lambda u: {"fileUri": u}, st.sampled_from(URIS)),
    st.builds(lambda ms: {"silenceLengthInMilliseconds": ms}, st.integers(1, 60000)),
    st.builds(
        lambda v, ms: {"value": v, "silenceLengthInMilliseconds": ms},
        phrase_st,
        st.integers(0, 5000),
    ),
)
nested_prompt_st = st.one_of(
    st.none(), st.builds(lambda p: {"prompts": p}, st.lists(prompt_st, min_size=1, max_size=3))
)


def _present(doc: Json) -> Json:
    return {k: v for k, v in doc.items() if v is not None}


@st.composite
def choices_st(draw: st.DrawFn) -> list[Json]:
    n = draw(st.integers(1, 4))
    sequences = draw(
        st.lists(st.text(DTMF_KEYS, min_size=1, max_size=3), min_size=n, max_size=n, unique=True)
    )
    words = draw(st.lists(st.sampled_from(WORDS), min_size=n, max_size=n, unique=True))
    out: list[Json] = []
    for i in range(n):
        mode = draw(st.sampled_from(["dtmf", "speech", "both"]))
        choice: Json = {"name": f"choice {i}"}
        if mode != "speech":
            seq = sequences[i]
            choice["dtmfVariation"] = seq if len(seq) == 1 else list(seq)
        if mode != "dtmf":
            choice["speechVariation"] = [words[i]]
        out.append(choice)
    return out


@st.composite
def recognize_st(draw: st.DrawFn, op: str) -> Json:
    doc = _present(
        {
            "operationId": op,
            "action": "recognize",
            "playPrompt": draw(nested_prompt_st),
            "bargeInAllowed": draw(st.one_of(st.none(), st.booleans())),
            "initialSilenceTimeoutInSeconds": draw(
                st.one_of(st.none(), st.integers(1, 30), st.floats(1, 30))
            ),
            "interdigitTimeoutInSeconds": draw(
                st.one_of(st.none(), st.integers(1, 5), st.floats(1, 5))
            ),
        }
    )
    if draw(st.booleans()):
        doc["choices"] = draw(choices_st())
    else:
        collect = _present(
            {
                "maxNumberOfDtmfs": draw(st.one_of(st.none(), st.integers(1, 20))),
                "stopTones": draw(
                    st.one_of(st.none(), st.lists(keys_st, min_size=1, max_size=5, unique=True))
                ),
            }
        )
        doc["collectDigits"] = collect or {"maxNumberOfDtmfs": 4}
    return doc


@st.composite
def record_st(draw: st.DrawFn, op: str) -> Json:
    return _present(
        {
            "operationId": op,
            "action": "record",
            "playPrompt": draw(nested_prompt_st),
            "maxDurationInSeconds": draw(st.one_of(st.none(), st.integers(2, 600))),
            "initialSilenceTimeoutInSeconds": draw(st.one_of(st.none(), st.integers(1, 30))),
            "maxSilenceTimeoutInSeconds": draw(st.one_of(st.none(), st.integers(0, 30))),
            "recordingFormat": draw(st.one_of(st.none(), st.sampled_from(["wma", "wav", "mp3"]))),
            "playBeep": draw(st.one_of(st.none(), st.booleans())),
            "stopTones": draw(st.one_of(st.none(), st.lists(keys_st, max_size=5, unique=True))),
        }
    )


@st.composite
def workflow_st(draw: st.DrawFn, first: bool) -> Json:
    """A Workflow the validator accepts (the test still filters on its findings)."""
    if first and draw(st.integers(0, 9)) == 0:
        return workflow_doc({"operationId": "rej", "action": "reject"})
    actions: list[Json] = []
    if first:
        actions.append({"operationId": "ans", "action": "answer"})
    seen: set[str] = set()
    for i, kind in enumerate(
        draw(st.lists(st.sampled_from(["playPrompt", "recognize", "record"]), max_size=4))
    ):
        op = f"{kind}-{i}"
        if kind == "playPrompt":
            prompts = draw(st.lists(prompt_st, min_size=1, max_size=3))
            actions.append({"operationId": op, "action": "playPrompt", "prompts": prompts})
        elif kind not in seen:
            seen.add(kind)
            actions.append(draw(recognize_st(op) if kind == "recognize" else record_st(op)))
    if not actions or draw(st.integers(0, 5)) == 0:
        actions.append({"operationId": "bye", "action": "hangup"})
    return workflow_doc(*actions, callback=draw(st.integers(0, 7)) != 0)


step_st: st.SearchStrategy[Step] = st.one_of(
    st.just(Listen()),
    st.builds(
        Press,
        st.text(DTMF_KEYS, min_size=1, max_size=5),
        st.sampled_from([0.0, 0.1, 0.25, 1.0, 3.0]),
    ),
    st.builds(Say, phrase_st),
    st.builds(Silence, st.floats(0, 40)),
    st.builds(
        Talk, st.floats(0, 60), st.one_of(st.none(), st.text(DTMF_KEYS, min_size=1, max_size=2))
    ),
    st.builds(
        HangUp,
        st.sampled_from([None, ActionType.PLAY_PROMPT, ActionType.RECOGNIZE, ActionType.RECORD]),
        st.floats(0, 20),
    ),
)
caller_st = st.lists(step_st, max_size=12).map(lambda steps: CallerScript(tuple(steps)))
config_st = st.builds(
    lambda limit, media, fail: EngineConfig(max_workflows=limit, media=media, fail_actions=fail),
    st.integers(1, 20),
    st.dictionaries(
        st.sampled_from(URIS),
        st.one_of(st.builds(Media, st.floats(0, 30)), st.just(Media(failure="404 Not Found"))),
    ),
    st.frozensets(
        st.sampled_from([ActionType.PLAY_PROMPT, ActionType.RECOGNIZE, ActionType.RECORD]),
        max_size=1,
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), caller=caller_st, config=config_st)
def test_engine_never_raises_for_a_valid_workflow_and_any_caller(
    data: st.DataObject, caller: CallerScript, config: EngineConfig
) -> None:
    runs_without_raising(data, caller, config)


pattern_st = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(["^", "$", ".*", "sales|support", r"\d", "^(hello|one) ", "(?i)NO", "[a-c]+"]),
)
rule_st = st.builds(WhenRule, pattern_st, st.lists(step_st, max_size=4).map(tuple), st.booleans())
reactive_caller_st = st.builds(
    CallerScript,
    st.lists(step_st, max_size=8).map(tuple),
    st.lists(rule_st, min_size=1, max_size=4).map(tuple),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), caller=reactive_caller_st, config=config_st)
def test_engine_never_raises_with_when_rules(
    data: st.DataObject, caller: CallerScript, config: EngineConfig
) -> None:
    progress = runs_without_raising(data, caller, config)
    assert progress.rules_used <= {i for i, rule in enumerate(caller.rules) if rule.once}
    assert 0 <= progress.cursor <= len(caller.steps)


def runs_without_raising(
    data: st.DataObject, caller: CallerScript, config: EngineConfig
) -> CallProgress:
    """Runs up to 20 Workflows of a call and checks the invariants of every run."""
    progress = CallProgress()
    for _ in range(20):
        first = not progress.answered
        doc = data.draw(workflow_st(first), label="workflow")
        assume(not has_errors(rules.validate_workflow(doc, rules.RuleContext(first=first))))
        workflow = read_workflow(doc)
        before = progress.now
        result = run_workflow(workflow, caller, progress, config)
        progress = result.progress

        assert progress.now >= before
        for event in result.events:
            assert event.at >= 0, event
            assert before - 1e-9 <= event.at <= progress.now + 1e-9, (event, before, progress.now)
        outcome = result.outcome
        if outcome is not None:
            assert outcome.id in {a.operation_id for a in workflow.actions}
        if isinstance(outcome, RecordOutcome):
            assert (outcome.length_of_recording_in_secs > 0) == outcome.succeeded
            if not outcome.succeeded:
                assert outcome.length_of_recording_in_secs == 0
        if isinstance(outcome, RecognizeOutcome):
            assert (outcome.choice_outcome is None) != (outcome.collect_digits_outcome is None)
        if progress.ended is not None:
            break
    if progress.ended is not None:
        assert progress.call_state is CallState.TERMINATED
        assert run_workflow(workflow, caller, progress, config).outcome is None
    return progress


# --- a live caller's moment (At) ------------------------------------------------------------


def live(actions: Sequence[Json], *steps: Step) -> WorkflowRun:
    """``actions`` run against a live caller's steps (``At`` is never read from a script)."""
    return run_workflow(read_workflow(workflow_doc(*actions)), CallerScript(steps), established())


def test_at_holds_a_key_back_to_its_moment_and_it_barges_in_there() -> None:
    result = live([menu()], At(0.7), Press("1"))
    assert choice_of(result.outcome) == (SUCCESS, RCR.DTMF_OPTION_MATCHED, "sales")
    [pressed] = events(result, CallerPressed)
    assert pressed.at == pytest.approx(0.7)
    [played] = events(result, PromptPlayed)
    assert played.end == pytest.approx(0.7)  # the prompt cut where the key came


def test_at_past_the_actions_end_leaves_the_key_for_the_next_turn() -> None:
    late = PROMPT + 5 + 2  # after the initial-silence timeout
    result = live([menu()], At(late), Press("1"))
    assert choice_of(result.outcome) == (FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None)
    assert result.progress.cursor == 0  # neither the moment nor the key was taken


def test_at_then_hangup_before_a_plain_prompt_hangs_up_at_that_moment() -> None:
    result = live([play("hello there caller how are you today"), menu()], At(0.8), HangUp())
    assert result.progress.ended is EndReason.CALLER_HUNG_UP
    assert events(result, CallerHungUp)[0].at == pytest.approx(0.8)
