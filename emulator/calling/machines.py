"""The platform's side of one input action, in virtual time: a *machine* for recognize (a menu
of choices, or digits collected) and for record. It has a deadline (when the action completes if
nothing more happens) and reacts to keys, speech and a hangup; ``timelines.drive`` feeds it the
caller's steps. Also the outcome of an input action the platform could not carry out.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from emulator.calling.events import RecordingMade, TimerSet
from emulator.calling.model import (
    Action,
    ChoiceOutcome,
    CollectDigitsOutcome,
    DigitCollectionCompletionReason,
    OperationOutcome,
    Outcome,
    PlayPrompt,
    PlayPromptOutcome,
    PromptCompletionReason,
    RecognitionCompletionReason,
    Recognize,
    RecognizeOutcome,
    Record,
    RecordingCompletionReason,
    RecordOutcome,
)
from emulator.calling.speech import SpeechSpan, normalize_speech
from emulator.calling.values import quick_init

SUCCESS, FAILURE = Outcome.SUCCESS, Outcome.FAILURE


@quick_init
@dataclass(frozen=True, slots=True)
class Done:
    """An input action's completion: when, with what outcome, and any recording."""

    at: float
    outcome: OperationOutcome
    recording: RecordingMade | None = None


class Machine(Protocol):
    deadline: float
    ignored: str
    limit: float | None

    @property
    def action(self) -> Recognize | Record: ...
    @property
    def reason(self) -> enum.Enum: ...

    def timeout(self) -> Done: ...
    def key(self, at: float, key: str) -> Done | bool: ...
    def speech(self, at: float, end: float, text: str | None) -> Done | bool: ...
    def hang(self, at: float) -> Done: ...


class ChoiceMachine:
    """recognize with choices: a menu answered by keys or speech."""

    def __init__(self, action: Recognize, prompt_end: float) -> None:
        self.action = action
        self.deadline = prompt_end + action.initial_silence_timeout
        self.reason = RecognitionCompletionReason.INITIAL_SILENCE_TIMEOUT
        self.limit: float | None = None
        self.ignored = ""
        self._sequences: dict[str, str] | None = None
        self._phrases: dict[str, str] | None = None
        self.entered = ""

    @property
    def sequences(self) -> dict[str, str]:
        """The choices by key sequence (the first choice of a sequence wins); built when the
        first key comes (a menu is often answered by speech, or not at all)."""
        if self._sequences is None:
            self._sequences = {}
            for choice in self.action.choices or ():
                if choice.dtmf_variation:
                    self._sequences.setdefault(choice.dtmf_variation, choice.name)
        return self._sequences

    @property
    def phrases(self) -> dict[str, str]:
        """The choices by normalized phrase (the first choice of a phrase wins); built when the
        caller first speaks."""
        if self._phrases is None:
            self._phrases = {}
            for choice in self.action.choices or ():
                for phrase in (*(choice.speech_variation or ()), choice.name):
                    self._phrases.setdefault(normalize_speech(phrase), choice.name)
        return self._phrases

    def done(
        self,
        at: float,
        outcome: Outcome,
        reason: RecognitionCompletionReason,
        name: str | None = None,
    ) -> Done:
        choice = ChoiceOutcome(completion_reason=reason, choice_name=name)
        return Done(
            at,
            RecognizeOutcome(id=self.action.operation_id, outcome=outcome, choice_outcome=choice),
        )

    def timeout(self) -> Done:
        return self.done(self.deadline, FAILURE, self.reason)

    def key(self, at: float, key: str) -> Done | bool:
        sequences = self.sequences
        if not sequences:
            self.ignored = "a speech menu takes no keys"
            return False
        self.entered += key
        name = sequences.get(self.entered)
        if name is not None:
            return self.done(at, SUCCESS, RecognitionCompletionReason.DTMF_OPTION_MATCHED, name)
        if any(seq.startswith(self.entered) for seq in sequences):
            self.deadline = at + self.action.interdigit_timeout
            self.reason = RecognitionCompletionReason.INTERDIGIT_TIMEOUT
            return True
        return self.done(at, FAILURE, RecognitionCompletionReason.INCORRECT_DTMF)

    def speech(self, at: float, end: float, text: str | None) -> Done | bool:
        if text is None:
            self.ignored = "talk has no words to recognize"
            return False
        name = self.phrases.get(normalize_speech(text))
        if name is None:
            self.ignored = f"{text!r} matches no choice"
            return False
        return self.done(end, SUCCESS, RecognitionCompletionReason.SPEECH_OPTION_MATCHED, name)

    def hang(self, at: float) -> Done:
        return self.done(at, FAILURE, RecognitionCompletionReason.CALL_TERMINATED)


class DigitsMachine:
    """recognize with collectDigits: keys until a stop tone, the maximum, or a timeout."""

    def __init__(self, action: Recognize, prompt_end: float) -> None:
        assert action.collect_digits is not None
        self.action = action
        self.deadline = prompt_end + action.initial_silence_timeout
        self.reason = DigitCollectionCompletionReason.INITIAL_SILENCE_TIMEOUT
        self.limit: float | None = None
        self.ignored = ""
        self.maximum = action.collect_digits.max_number_of_dtmfs
        self.stop_tones = frozenset(action.collect_digits.stop_tones or ())
        self.interdigit = action.interdigit_timeout
        self.digits = ""

    def done(self, at: float, outcome: Outcome, reason: DigitCollectionCompletionReason) -> Done:
        digits = CollectDigitsOutcome(completion_reason=reason, digits=self.digits or None)
        return Done(
            at,
            RecognizeOutcome(
                id=self.action.operation_id, outcome=outcome, collect_digits_outcome=digits
            ),
        )

    def timeout(self) -> Done:
        success = self.reason is DigitCollectionCompletionReason.INTERDIGIT_TIMEOUT
        return self.done(self.deadline, SUCCESS if success else FAILURE, self.reason)

    def key(self, at: float, key: str) -> Done | bool:
        if key in self.stop_tones:
            return self.done(
                at, SUCCESS, DigitCollectionCompletionReason.COMPLETED_STOP_TONE_DETECTED
            )
        if self.maximum is not None and len(self.digits) >= self.maximum:
            self.ignored = f"already {self.maximum} digits (maxNumberOfDtmfs)"
            return False
        self.digits += key
        self.deadline = at + self.interdigit
        self.reason = DigitCollectionCompletionReason.INTERDIGIT_TIMEOUT
        return True

    def speech(self, at: float, end: float, text: str | None) -> Done | bool:
        self.ignored = "digit collection takes keys only"
        return False

    def hang(self, at: float) -> Done:
        return self.done(at, FAILURE, DigitCollectionCompletionReason.CALL_TERMINATED)


class RecordMachine:
    """record: audio from the moment recording starts until silence, a stop tone or the maximum."""

    def __init__(self, action: Record, start: float) -> None:
        self.action = action
        self.start = start
        self.max_end = start + action.max_duration
        self.limit: float | None = self.max_end
        initial = start + action.initial_silence_timeout
        if initial < self.max_end:
            self.deadline, self.reason = initial, RecordingCompletionReason.INITIAL_SILENCE_TIMEOUT
        else:
            self.deadline, self.reason = (
                self.max_end,
                RecordingCompletionReason.MAX_RECORDING_TIMEOUT,
            )
        self.stop_tones = frozenset(action.stop_tones or ())
        self.speech_spans: list[tuple[float, float, str | None]] = []
        self.ignored = ""

    def done(self, at: float, reason: RecordingCompletionReason, *, why: str | None = None) -> Done:
        # Lengths are whole milliseconds, as the outcome carries them: under 1 ms is nothing.
        length = round(max(0.0, min(at, self.max_end) - self.start), 3)
        failed = reason is RecordingCompletionReason.INITIAL_SILENCE_TIMEOUT or length <= 0
        outcome = RecordOutcome(
            id=self.action.operation_id,
            outcome=FAILURE if failed else SUCCESS,
            completion_reason=reason,
            length_of_recording_in_secs=0.0 if failed else length,
            format=self.action.format,
            failure_reason=why if failed else None,
        )
        recording = None
        if not failed:
            spans = tuple(
                SpeechSpan((round(s, 6), round(min(e, length), 6)), text)
                for s, e, text in self.speech_spans
                if s < length
            )
            recording = RecordingMade(
                self.start, self.start + length, self.action.operation_id, self.action.format, spans
            )
        return Done(at, outcome, recording)

    def timeout(self) -> Done:
        return self.done(self.deadline, self.reason)

    def key(self, at: float, key: str) -> Done | bool:
        if key in self.stop_tones:
            why = (
                "the stop tone came before anything was recorded"
                if at - self.start < 0.0005
                else None
            )
            return self.done(at, RecordingCompletionReason.COMPLETED_STOP_TONE_DETECTED, why=why)
        self.ignored = "not a stop tone of this recording"
        return False

    def speech(self, at: float, end: float, text: str | None) -> Done | bool:
        self.speech_spans.append((at - self.start, end - self.start, text))
        silence_end = end + self.action.max_silence_timeout
        if silence_end < self.max_end:
            self.deadline, self.reason = (
                silence_end,
                RecordingCompletionReason.COMPLETED_SILENCE_DETECTED,
            )
        else:
            self.deadline, self.reason = (
                self.max_end,
                RecordingCompletionReason.MAX_RECORDING_TIMEOUT,
            )
        return True

    def hang(self, at: float) -> Done:
        why = (
            "the caller hung up before anything was recorded" if at - self.start < 0.0005 else None
        )
        return self.done(at, RecordingCompletionReason.CALL_TERMINATED, why=why)


def timer(machine: Machine, at: float) -> TimerSet:
    """The machine's timer as it stands at ``at``."""
    # ``_value_`` is the member's value as ``.value`` gives it, without the property (the hot path
    # sets a timer for every key); every completion reason's value is its wire text.
    return TimerSet(at, machine.action.operation_id, machine.deadline, machine.reason._value_,
                    machine.limit)  # fmt: skip


def recognize_machine(action: Recognize, prompt_end: float) -> Machine:
    if action.collect_digits is not None and action.choices is None:
        return DigitsMachine(action, prompt_end)
    return ChoiceMachine(action, prompt_end)


def system_failure(action: Action, reason: str) -> OperationOutcome:
    """The outcome of an action the platform could not carry out (temporarySystemFailure)."""
    op = action.operation_id
    if isinstance(action, Record):
        return RecordOutcome(
            id=op,
            outcome=FAILURE,
            completion_reason=RecordingCompletionReason.TEMPORARY_SYSTEM_FAILURE,
            length_of_recording_in_secs=0.0,
            format=action.format,
            failure_reason=reason,
        )
    if isinstance(action, Recognize):
        if action.collect_digits is not None and action.choices is None:
            digits = CollectDigitsOutcome(
                completion_reason=DigitCollectionCompletionReason.TEMPORARY_SYSTEM_FAILURE
            )
            return RecognizeOutcome(
                id=op, outcome=FAILURE, failure_reason=reason, collect_digits_outcome=digits
            )
        choice = ChoiceOutcome(
            completion_reason=RecognitionCompletionReason.TEMPORARY_SYSTEM_FAILURE
        )
        return RecognizeOutcome(
            id=op, outcome=FAILURE, failure_reason=reason, choice_outcome=choice
        )
    assert isinstance(action, PlayPrompt)
    return PlayPromptOutcome(
        id=op,
        outcome=FAILURE,
        completion_reason=PromptCompletionReason.TEMPORARY_SYSTEM_FAILURE,
        failure_reason=reason,
    )
