"""Tests of emulator/calling/timelines.py: the input machines and ``drive``, without the engine."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.calling.caller import HangUp, Listen, Press, Say, Silence, Step, Talk
from emulator.calling.events import (
    CallerPressed,
    CallerSilent,
    CallerSpoke,
    InputIgnored,
    TimerSet,
)
from emulator.calling.model import (
    ActionType,
    DigitCollectionCompletionReason,
    Outcome,
    PlayPrompt,
    Prompt,
    RecognitionCompletionReason,
    Recognize,
    RecognizeOutcome,
    Record,
    RecordingCompletionReason,
    RecordOutcome,
)
from emulator.calling.timelines import (
    ChoiceMachine,
    DigitsMachine,
    Done,
    RecordMachine,
    drive,
    recognize_machine,
    system_failure,
)
from emulator.calling.wire import read_action

RCR = RecognitionCompletionReason
DCR = DigitCollectionCompletionReason
REC = RecordingCompletionReason


def recognize(**fields: Any) -> Recognize:
    action = read_action({"operationId": "r", "action": "recognize", **fields}, "$")
    assert isinstance(action, Recognize)
    return action


def record(**fields: Any) -> Record:
    action = read_action({"operationId": "rec", "action": "record", **fields}, "$")
    assert isinstance(action, Record)
    return action


CHOICES = [
    {"name": "sales", "dtmfVariation": "1", "speechVariation": ["buy"]},
    {"name": "account", "dtmfVariation": ["2", "3"]},
]


def choice(done: Done) -> tuple[Outcome, RCR, str | None, float]:
    outcome = done.outcome
    assert isinstance(outcome, RecognizeOutcome) and outcome.choice_outcome is not None
    co = outcome.choice_outcome
    return outcome.outcome, co.completion_reason, co.choice_name, done.at


# --- ChoiceMachine -----------------------------------------------------------------------------


def test_choice_machine_deadline_starts_at_the_prompt_end() -> None:
    machine = ChoiceMachine(recognize(choices=CHOICES, initialSilenceTimeoutInSeconds=3), 2.0)
    assert machine.deadline == pytest.approx(5.0)
    assert choice(machine.timeout()) == (Outcome.FAILURE, RCR.INITIAL_SILENCE_TIMEOUT, None, 5.0)


def test_choice_machine_partial_sequence_moves_the_deadline() -> None:
    machine = ChoiceMachine(recognize(choices=CHOICES, interdigitTimeoutInSeconds=2), 0.0)
    assert machine.key(1.0, "2") is True
    assert machine.deadline == pytest.approx(3.0)
    assert choice(machine.timeout()) == (Outcome.FAILURE, RCR.INTERDIGIT_TIMEOUT, None, 3.0)


def test_choice_machine_completes_a_sequence() -> None:
    machine = ChoiceMachine(recognize(choices=CHOICES), 0.0)
    assert machine.key(1.0, "2") is True
    done = machine.key(1.25, "3")
    assert isinstance(done, Done)
    assert choice(done) == (Outcome.SUCCESS, RCR.DTMF_OPTION_MATCHED, "account", 1.25)


def test_choice_machine_speech_completes_at_the_end_of_the_phrase() -> None:
    machine = ChoiceMachine(recognize(choices=CHOICES), 0.0)
    done = machine.speech(1.0, 1.4, "BUY!")
    assert isinstance(done, Done)
    assert choice(done) == (Outcome.SUCCESS, RCR.SPEECH_OPTION_MATCHED, "sales", 1.4)


def test_choice_machine_talk_is_ignored() -> None:
    machine = ChoiceMachine(recognize(choices=CHOICES), 0.0)
    assert machine.speech(0.0, 3.0, None) is False
    assert machine.ignored == "talk has no words to recognize"


def test_choice_machine_speech_only_menu_ignores_keys() -> None:
    machine = ChoiceMachine(recognize(choices=[{"name": "yes", "speechVariation": ["y"]}]), 0.0)
    assert machine.key(0.5, "1") is False
    assert machine.ignored == "a speech menu takes no keys"
    assert machine.reason is RCR.INITIAL_SILENCE_TIMEOUT


# --- DigitsMachine ------------------------------------------------------------------------------


def test_digits_machine_collects_until_a_stop_tone() -> None:
    machine = DigitsMachine(recognize(collectDigits={"stopTones": ["#"]}), 0.0)
    assert machine.key(0.0, "4") is True
    assert machine.key(0.5, "2") is True
    done = machine.key(1.0, "#")
    assert isinstance(done, Done)
    outcome = done.outcome
    assert isinstance(outcome, RecognizeOutcome) and outcome.collect_digits_outcome is not None
    assert outcome.collect_digits_outcome.digits == "42"
    assert outcome.collect_digits_outcome.completion_reason is DCR.COMPLETED_STOP_TONE_DETECTED


def test_digits_machine_keys_past_the_maximum_keep_the_deadline() -> None:
    machine = DigitsMachine(recognize(collectDigits={"maxNumberOfDtmfs": 1}), 0.0)
    assert machine.key(1.0, "4") is True
    assert machine.deadline == pytest.approx(2.0)
    assert machine.key(1.5, "5") is False
    assert machine.deadline == pytest.approx(2.0)
    assert machine.digits == "4"


def test_recognize_machine_picks_the_machine_by_mode() -> None:
    assert isinstance(recognize_machine(recognize(choices=CHOICES), 0.0), ChoiceMachine)
    digits = recognize(collectDigits={"maxNumberOfDtmfs": 2})
    assert isinstance(recognize_machine(digits, 0.0), DigitsMachine)


# --- RecordMachine -------------------------------------------------------------------------------


def test_record_machine_maximum_before_initial_silence() -> None:
    machine = RecordMachine(record(maxDurationInSeconds=3, initialSilenceTimeoutInSeconds=5), 1.0)
    assert machine.deadline == pytest.approx(4.0)
    assert machine.reason is REC.MAX_RECORDING_TIMEOUT


def test_record_machine_speech_spans_are_offsets_into_the_recording() -> None:
    machine = RecordMachine(record(maxSilenceTimeoutInSeconds=1), 10.0)
    assert machine.speech(11.0, 13.0, None) is True
    done = machine.timeout()
    assert done.at == pytest.approx(14.0)
    assert done.recording is not None
    assert done.recording.speech == ((1.0, 3.0),)
    assert isinstance(done.outcome, RecordOutcome)
    assert done.outcome.completion_reason is REC.COMPLETED_SILENCE_DETECTED
    assert done.outcome.length_of_recording_in_secs == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("at", "succeeded", "length"),
    [
        pytest.param(10.0, False, 0.0, id="at-the-start"),
        pytest.param(9.0, False, 0.0, id="before-the-start"),
        pytest.param(12.5, True, 2.5, id="after-the-start"),
    ],
)
def test_record_machine_hangup_success_iff_audio(at: float, succeeded: bool, length: float) -> None:
    done = RecordMachine(record(), 10.0).hang(at)
    assert isinstance(done.outcome, RecordOutcome)
    assert done.outcome.succeeded is succeeded
    assert done.outcome.completion_reason is REC.CALL_TERMINATED
    assert done.outcome.length_of_recording_in_secs == pytest.approx(length)
    assert (done.recording is not None) is succeeded


# --- system_failure ----------------------------------------------------------------------------


def test_system_failure_for_each_input_kind() -> None:
    rec = system_failure(record(), "down")
    assert isinstance(rec, RecordOutcome)
    assert (rec.completion_reason, rec.length_of_recording_in_secs) == (
        REC.TEMPORARY_SYSTEM_FAILURE,
        0.0,
    )
    menu = system_failure(recognize(choices=CHOICES), "down")
    assert isinstance(menu, RecognizeOutcome) and menu.choice_outcome is not None
    assert menu.collect_digits_outcome is None
    pin = system_failure(recognize(collectDigits={"maxNumberOfDtmfs": 2}), "down")
    assert isinstance(pin, RecognizeOutcome) and pin.collect_digits_outcome is not None
    assert pin.choice_outcome is None
    prompt = system_failure(PlayPrompt(operation_id="p", prompts=(Prompt(value="x"),)), "down")
    assert prompt.failure_reason == "down"
    assert all(not o.succeeded for o in (rec, menu, pin, prompt))


# --- drive ----------------------------------------------------------------------------------------


def test_drive_leaves_steps_that_had_not_started() -> None:
    steps: tuple[Step, ...] = (Press("1"), Press("2"), Say("buy"))
    turn = drive(ChoiceMachine(recognize(choices=CHOICES), 0.0), steps, 0, 0.0, None)
    assert choice(turn.done)[2] == "sales"
    assert turn.cursor == 1
    assert turn.barge_in_at == pytest.approx(0.0)


def test_drive_runs_steps_one_after_another_in_virtual_time() -> None:
    steps: tuple[Step, ...] = (Listen(), Silence(1.0), Say("no thanks"), Press("23", 0.5))
    turn = drive(ChoiceMachine(recognize(choices=CHOICES), 0.0), steps, 0, 2.0, None)
    assert choice(turn.done) == (Outcome.SUCCESS, RCR.DTMF_OPTION_MATCHED, "account", 4.3)
    kinds = [(type(e), e.at) for e in turn.events]
    assert kinds == [
        (CallerSilent, 2.0),
        (CallerSpoke, 3.0),
        (InputIgnored, 3.0),
        (CallerPressed, pytest.approx(3.8)),
        (TimerSet, pytest.approx(3.8)),  # "2" begins "23": the inter-digit timer runs
        (CallerPressed, pytest.approx(4.3)),
    ]
    timer = turn.events[4]
    assert isinstance(timer, TimerSet) and timer.reason == "interdigitTimeout"
    assert timer.deadline == pytest.approx(3.8 + recognize(choices=CHOICES).interdigit_timeout)


def test_drive_a_silence_is_cut_when_the_action_completes() -> None:
    turn = drive(ChoiceMachine(recognize(choices=CHOICES), 1.0), (Silence(30.0),), 0, 1.0, None)
    assert choice(turn.done)[1] is RCR.INITIAL_SILENCE_TIMEOUT
    (silent,) = turn.events
    assert isinstance(silent, CallerSilent)
    assert silent.end == pytest.approx(6.0)
    assert turn.cursor == 1


def test_drive_plain_hangup_hangs_up_after_the_previous_step() -> None:
    steps: tuple[Step, ...] = (Talk(2.0), HangUp())
    turn = drive(RecordMachine(record(), 0.5), steps, 0, 0.5, None)
    assert turn.hung_up_at == pytest.approx(2.5)
    assert turn.hangup_at == pytest.approx(2.5)
    assert turn.cursor == 2


def test_drive_hangup_for_another_action_stops_the_input() -> None:
    steps: tuple[Step, ...] = (HangUp(ActionType.PLAY_PROMPT, 1.0), Press("1"))
    turn = drive(ChoiceMachine(recognize(choices=CHOICES), 0.0), steps, 0, 0.0, None)
    assert choice(turn.done)[1] is RCR.INITIAL_SILENCE_TIMEOUT
    assert turn.cursor == 0
    assert turn.hung_up_at is None


def test_drive_a_pending_hangup_wins_over_a_later_match() -> None:
    turn = drive(ChoiceMachine(recognize(choices=CHOICES), 0.0), (Say("buy"),), 0, 0.0, 0.2)
    # The phrase would match at 0.4 s, but the caller hung up at 0.2 s.
    assert choice(turn.done) == (Outcome.FAILURE, RCR.CALL_TERMINATED, None, 0.2)
    assert turn.hung_up_at == pytest.approx(0.2)
