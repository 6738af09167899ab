"""Typed, frozen values for every message of the calling protocol (spec section C).

These are plain values: no JSON, no I/O. ``wire`` reads and writes them; ``engine.py`` executes
them. Optional protocol fields are ``None`` when absent, so that what a bot sent stays visible;
properties named after the field without the unit suffix give the effective value with the
spec's default applied (``Record.max_duration`` is 180 when ``maxDurationInSeconds`` is absent).

Unknown enum values become the member ``NOT_UNDERSTOOD`` (spec, Versioning 4; the enumerations
are in ``enums.py`` and re-exported here). Unknown fields are kept in ``extra`` so that
transcripts can show them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from emulator.calling.enums import (
    DTMF_KEYS,
    LEGACY_VALIDATION_OUTCOME,
    ActionType,
    CallState,
    Culture,
    DigitCollectionCompletionReason,
    ModalityType,
    NotificationType,
    Outcome,
    OutcomeType,
    PromptCompletionReason,
    RecognitionCompletionReason,
    RecordingCompletionReason,
    RecordingFormat,
    SayAs,
    VoiceGender,
    WireEnum,
)
from emulator.calling.values import quick_init
from emulator.jsonutil import JSON

__all__ = [
    "ACTION_CLASSES",
    "DTMF_KEYS",
    "LEGACY_VALIDATION_OUTCOME",
    "OUTCOME_CLASSES",
    "Action",
    "ActionType",
    "Answer",
    "AnswerOutcome",
    "CallState",
    "ChoiceOutcome",
    "CollectDigits",
    "CollectDigitsOutcome",
    "Conversation",
    "ConversationResult",
    "Culture",
    "DigitCollectionCompletionReason",
    "Hangup",
    "HangupOutcome",
    "ModalityType",
    "NotificationType",
    "OperationOutcome",
    "Outcome",
    "OutcomeType",
    "Participant",
    "PlayPrompt",
    "PlayPromptOutcome",
    "Prompt",
    "PromptCompletionReason",
    "RecognitionCompletionReason",
    "RecognitionOption",
    "Recognize",
    "RecognizeOutcome",
    "Record",
    "RecordOutcome",
    "RecordingCompletionReason",
    "RecordingFormat",
    "Reject",
    "RejectOutcome",
    "SayAs",
    "VoiceGender",
    "WireEnum",
    "Workflow",
    "WorkflowValidationOutcome",
]


def _extra() -> dict[str, JSON]:
    return {}


# --- Conversation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Participant:
    identity: str
    originator: bool
    display_name: str | None = None
    language_id: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    """The first request of a call, platform to bot."""

    id: str
    participants: tuple[Participant, ...]
    presented_modality_types: tuple[ModalityType, ...]
    call_state: CallState
    is_multiparty: bool = False
    links: dict[str, str] = field(default_factory=dict, hash=False)
    subject: str | None = None
    thread_id: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


# --- Workflow and actions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    value: str | None = None
    file_uri: str | None = None
    voice: VoiceGender | None = None
    culture: Culture | None = None
    silence_length_in_milliseconds: int | None = None
    emphasize: bool | None = None
    say_as: SayAs | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)

    @property
    def silence(self) -> float:
        """Seconds of silence played before the prompt's value."""
        return (self.silence_length_in_milliseconds or 0) / 1000.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RecognitionOption:
    name: str
    speech_variation: tuple[str, ...] | None = None
    dtmf_variation: str | None = None
    """The key sequence that selects this choice: usually one key (docs/decisions.md)."""
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectDigits:
    max_number_of_dtmfs: int | None = None
    stop_tones: tuple[str, ...] | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """Common part of the six actions. ``kind`` tells them apart."""

    kind: ClassVar[ActionType]
    operation_id: str
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer(Action):
    kind: ClassVar[ActionType] = ActionType.ANSWER
    accept_modality_types: tuple[ModalityType, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Reject(Action):
    kind: ClassVar[ActionType] = ActionType.REJECT


@dataclass(frozen=True, slots=True, kw_only=True)
class Hangup(Action):
    kind: ClassVar[ActionType] = ActionType.HANGUP


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayPrompt(Action):
    """A playPrompt action; also the ``playPrompt`` member of record and recognize, where its
    operationId may be absent (read as "")."""

    kind: ClassVar[ActionType] = ActionType.PLAY_PROMPT
    prompts: tuple[Prompt, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Record(Action):
    kind: ClassVar[ActionType] = ActionType.RECORD
    play_prompt: PlayPrompt | None = None
    max_duration_in_seconds: int | None = None
    initial_silence_timeout_in_seconds: int | None = None
    max_silence_timeout_in_seconds: int | None = None
    recording_format: RecordingFormat | None = None
    play_beep: bool | None = None
    stop_tones: tuple[str, ...] | None = None

    @property
    def max_duration(self) -> float:
        return float(180 if self.max_duration_in_seconds is None else self.max_duration_in_seconds)

    @property
    def initial_silence_timeout(self) -> float:
        value = self.initial_silence_timeout_in_seconds
        return float(5 if value is None else value)

    @property
    def max_silence_timeout(self) -> float:
        value = self.max_silence_timeout_in_seconds
        return float(5 if value is None else value)

    @property
    def format(self) -> RecordingFormat:
        return self.recording_format or RecordingFormat.WMA


@dataclass(frozen=True, slots=True, kw_only=True)
class Recognize(Action):
    kind: ClassVar[ActionType] = ActionType.RECOGNIZE
    play_prompt: PlayPrompt | None = None
    barge_in_allowed: bool | None = None
    culture: Culture | None = None
    initial_silence_timeout_in_seconds: float | None = None
    interdigit_timeout_in_seconds: float | None = None
    choices: tuple[RecognitionOption, ...] | None = None
    collect_digits: CollectDigits | None = None

    @property
    def barge_in(self) -> bool:
        return True if self.barge_in_allowed is None else self.barge_in_allowed

    @property
    def initial_silence_timeout(self) -> float:
        value = self.initial_silence_timeout_in_seconds
        return float(5 if value is None else value)

    @property
    def interdigit_timeout(self) -> float:
        value = self.interdigit_timeout_in_seconds
        return float(1 if value is None else value)


ACTION_CLASSES: dict[ActionType, type[Action]] = {
    cls.kind: cls for cls in (Answer, Reject, Record, PlayPrompt, Recognize, Hangup)
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Workflow:
    """The bot's reply: actions to run in order, and where to post the outcome."""

    actions: tuple[Action, ...]
    links: dict[str, str] = field(default_factory=dict, hash=False)
    call_state: CallState | None = None
    app_state: str | None = None
    notification_subscriptions: tuple[NotificationType, ...] | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)

    @property
    def callback(self) -> str | None:
        return self.links.get("callback")


# --- Outcomes and the ConversationResult -------------------------------------------------------
# The engine builds outcomes on its hot path: ``quick_init`` gives them a cheaper ``__init__``.


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceOutcome:
    completion_reason: RecognitionCompletionReason
    choice_name: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CollectDigitsOutcome:
    completion_reason: DigitCollectionCompletionReason
    digits: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class OperationOutcome:
    """Common part of every outcome: ``id`` is the operationId of the action it reports."""

    type: ClassVar[OutcomeType]
    id: str
    outcome: Outcome
    failure_reason: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)

    @property
    def succeeded(self) -> bool:
        return self.outcome is Outcome.SUCCESS


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.ANSWER


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RejectOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.REJECT


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HangupOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.HANGUP


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayPromptOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.PLAY_PROMPT
    completion_reason: PromptCompletionReason


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.RECORD
    completion_reason: RecordingCompletionReason
    length_of_recording_in_secs: float
    format: RecordingFormat | None = None


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RecognizeOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.RECOGNIZE
    choice_outcome: ChoiceOutcome | None = None
    collect_digits_outcome: CollectDigitsOutcome | None = None


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowValidationOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.WORKFLOW_VALIDATION


OUTCOME_CLASSES: dict[OutcomeType, type[OperationOutcome]] = {
    cls.type: cls
    for cls in (
        AnswerOutcome,
        RejectOutcome,
        HangupOutcome,
        PlayPromptOutcome,
        RecordOutcome,
        RecognizeOutcome,
        WorkflowValidationOutcome,
    )
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationResult:
    """Every request after the first: the outcome of the last executed action."""

    id: str
    call_state: CallState
    operation_outcome: OperationOutcome
    app_id: str | None = None
    links: dict[str, str] = field(default_factory=dict, hash=False)
    app_state: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)
