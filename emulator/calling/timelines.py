"""Input turns in virtual time: what recognize and record make of the caller's steps.

A *machine* is the platform's side of one input action: a deadline (when it completes if nothing
more happens) and reactions to keys, speech and a hangup. ``drive`` feeds it the caller's steps,
one after another from the moment the turn opens, until it completes. Steps that had not started
by then stay for the next turn.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from emulator.calling.caller import (
    DEFAULT_DIGIT_GAP,
    At,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
)
from emulator.calling.events import (
    CallerPressed,
    CallerSilent,
    CallerSpoke,
    Event,
    InputIgnored,
    RecordingMade,
    TimerSet,
)
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
from emulator.calling.speech import SpeechSpan, normalize_speech, speech_seconds

SUCCESS, FAILURE = Outcome.SUCCESS, Outcome.FAILURE
INF = math.inf


@dataclass(frozen=True, slots=True)
class Played:
    """How far a playPrompt got: its end time, whether it was cut short, a media failure."""

    end: float
    cut: bool
    failure: str | None = None


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
        self.sequences: dict[str, str] = {}
        self.phrases: dict[str, str] = {}
        for choice in action.choices or ():
            if choice.dtmf_variation:
                self.sequences.setdefault(choice.dtmf_variation, choice.name)
            for phrase in (*(choice.speech_variation or ()), choice.name):
                self.phrases.setdefault(normalize_speech(phrase), choice.name)
        self.entered = ""

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
        if not self.sequences:
            self.ignored = "a speech menu takes no keys"
            return False
        self.entered += key
        name = self.sequences.get(self.entered)
        if name is not None:
            return self.done(at, SUCCESS, RecognitionCompletionReason.DTMF_OPTION_MATCHED, name)
        if any(seq.startswith(self.entered) for seq in self.sequences):
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
        self.deadline = at + self.action.interdigit_timeout
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
    return TimerSet(at, machine.action.operation_id, machine.deadline, str(machine.reason.value),
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


@dataclass(slots=True)
class Turn:
    """What one input turn did."""

    done: Done
    cursor: int
    events: list[Event] = field(default_factory=list)
    barge_in_at: float | None = None
    """When the first input the action acted on came (it stops a prompt still playing)."""
    hung_up_at: float | None = None
    """When the caller hung up, if it did by the time the action completed."""
    hangup_at: float | None = None
    """When the caller will hang up (now, or later), once it has reached a hangup step."""


def drive(
    machine: Machine,
    steps: Sequence[Step],
    cursor: int,
    start: float,
    hangup_at: float | None,
) -> Turn:
    """Feed the caller's steps from ``cursor``, starting at ``start``, until the action completes."""
    driver = _Driver(machine, hangup_at)
    t = start
    index = cursor
    while index < len(steps) and driver.result is None:
        step = steps[index]
        if isinstance(step, Listen):
            index += 1
            continue
        if isinstance(step, At):  # a live caller's moment: the action may complete before it
            if driver.stop_before(step.at):
                break
            t, index = max(t, step.at), index + 1
            continue
        if isinstance(step, HangUp):
            if step.during is None:
                driver.pending = min(driver.pending, t + step.after)
                index += 1
            break  # a hangup waiting for another action: the caller gives no more input now
        if driver.stop_before(t):
            break
        index += 1
        t = driver.step(step, t)
    driver.stop_before(INF)
    assert driver.result is not None
    hung = driver.pending if driver.pending <= driver.result.at else None
    pending = None if driver.pending == INF else driver.pending
    return Turn(driver.result, index, driver.events, driver.heard, hung, pending)


class _Driver:
    def __init__(self, machine: Machine, hangup_at: float | None) -> None:
        self.machine = machine
        self.pending = INF if hangup_at is None else hangup_at
        self.result: Done | None = None
        self.events: list[Event] = []
        self.heard: float | None = None

    def stop_before(self, at: float) -> bool:
        """Complete the action if its deadline or the caller's hangup comes no later than ``at``."""
        if self.result is not None:
            return True
        deadline = self.machine.deadline
        if deadline <= at and deadline <= self.pending:
            self.result = self.machine.timeout()
        elif self.pending <= at:
            self.result = self.machine.hang(self.pending)
        return self.result is not None

    def react(self, at: float, reaction: Done | bool, shown: str) -> None:
        if isinstance(reaction, Done):
            if reaction.at > self.pending:
                reaction = self.machine.hang(self.pending)
            self.result = reaction
            self.heard = at if self.heard is None else self.heard
        elif reaction:
            self.heard = at if self.heard is None else self.heard
            self.events.append(timer(self.machine, at))
        else:
            self.events.append(InputIgnored(at, shown, self.machine.ignored))

    def keys(self, digits: str, t: float, gap: float) -> float:
        for i, key in enumerate(digits):
            at = t + i * gap
            if self.stop_before(at):
                return at
            self.events.append(CallerPressed(at, key))
            self.react(at, self.machine.key(at, key), f"key {key}")
            if self.result is not None:
                return at
        return t + max(0, len(digits) - 1) * gap

    def step(self, step: Step, t: float) -> float:
        """Run one step from ``t``; its end time."""
        if isinstance(step, Press):
            return self.keys(step.digits, t + step.after, step.gap)
        if isinstance(step, Silence):
            end = t + step.seconds
            self.stop_before(end)
            stop = min(end, self.result.at) if self.result is not None else end
            self.events.append(CallerSilent(t, stop))
            return end
        if isinstance(step, Say | Talk):
            text = step.text if isinstance(step, Say) else None
            end = t + (speech_seconds(step.text) if isinstance(step, Say) else step.seconds)
            self.events.append(CallerSpoke(t, end, text))
            reaction = self.machine.speech(t, end, text)
            self.react(t, reaction, f"speech {text!r}" if text else "talk")
            if reaction is True and not self.stop_before(end):
                self.events.append(timer(self.machine, end))  # the silence counts from here
            if self.result is None and isinstance(step, Talk) and step.then:
                if not self.stop_before(end):
                    return self.keys(step.then, end, DEFAULT_DIGIT_GAP)
            return end
        return t
