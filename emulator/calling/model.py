"""Typed, frozen values for every message of the calling protocol (spec section C).

These are plain values: no JSON, no I/O. ``wire.py`` reads and writes them; ``engine.py`` executes
them. Optional protocol fields are ``None`` when absent, so that what a bot sent stays visible;
properties named after the field without the unit suffix give the effective value with the
spec's default applied (``Record.max_duration`` is 180 when ``maxDurationInSeconds`` is absent).

Unknown enum values become the member ``NOT_UNDERSTOOD`` (spec, Versioning 4). Unknown fields are
kept in ``extra`` so that transcripts can show them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import ClassVar, Self

from emulator.jsonutil import JSON

_LOOKUPS: dict[type[WireEnum], dict[str, WireEnum]] = {}


class WireEnum(enum.Enum):
    """An enumeration read case-insensitively, written in camelCase.

    Every subclass has a ``NOT_UNDERSTOOD`` member: what an unknown value reads as.
    """

    @classmethod
    def read(cls, raw: str) -> Self:
        lookup = _LOOKUPS.get(cls)
        if lookup is None:
            lookup = {}
            for member in cls:
                lookup[str(member.value).lower()] = member
                lookup[member.name.replace("_", "").lower()] = member
            for alias, member in cls._aliases().items():
                lookup[alias.lower()] = member
            _LOOKUPS[cls] = lookup
        found = lookup.get(raw.lower())
        if not isinstance(found, cls) or found.name == "NOT_UNDERSTOOD":
            return cls["NOT_UNDERSTOOD"]
        return found

    def is_canonical(self, raw: str) -> bool:
        """Whether ``raw`` is this member written exactly as botemu writes it."""
        return bool(raw == self.value)

    @classmethod
    def _aliases(cls) -> dict[str, Self]:
        return {}

    @classmethod
    def canonical(cls) -> list[str]:
        """The values a sender may use (everything but NOT_UNDERSTOOD)."""
        return [str(m.value) for m in cls if m.name != "NOT_UNDERSTOOD"]


class CallState(WireEnum):
    IDLE = "idle"
    INCOMING = "incoming"
    ESTABLISHING = "establishing"
    ESTABLISHED = "established"
    HOLD = "hold"
    UNHOLD = "unhold"
    TRANSFERRING = "transferring"
    REDIRECTING = "redirecting"
    TERMINATING = "terminating"
    TERMINATED = "terminated"
    NOT_UNDERSTOOD = "notUnderstood"


class ModalityType(WireEnum):
    AUDIO = "audio"
    VIDEO = "video"
    VIDEO_BASED_SCREEN_SHARING = "videoBasedScreenSharing"
    NOT_UNDERSTOOD = "notUnderstood"


class Outcome(WireEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    NOT_UNDERSTOOD = "notUnderstood"


class VoiceGender(WireEnum):
    MALE = "male"
    FEMALE = "female"
    NOT_UNDERSTOOD = "notUnderstood"


class Culture(WireEnum):
    """The spec's Language enumeration: EnUs, written "en-US" on the wire."""

    EN_US = "en-US"
    NOT_UNDERSTOOD = "notUnderstood"


class RecordingFormat(WireEnum):
    WMA = "wma"
    WAV = "wav"
    MP3 = "mp3"
    NOT_UNDERSTOOD = "notUnderstood"


class SayAs(WireEnum):
    YEAR_MONTH_DAY = "yearMonthDay"
    MONTH_DAY_YEAR = "monthDayYear"
    DAY_MONTH_YEAR = "dayMonthYear"
    YEAR_MONTH = "yearMonth"
    MONTH_YEAR = "monthYear"
    MONTH_DAY = "monthDay"
    DAY_MONTH = "dayMonth"
    DAY = "day"
    MONTH = "month"
    YEAR = "year"
    CARDINAL = "cardinal"
    ORDINAL = "ordinal"
    LETTERS = "letters"
    TIME12 = "time12"
    TIME24 = "time24"
    TELEPHONE = "telephone"
    NAME = "name"
    PHONETIC_NAME = "phoneticName"
    NOT_UNDERSTOOD = "notUnderstood"


class NotificationType(WireEnum):
    CALL_STATE_CHANGE = "callStateChange"
    NOT_UNDERSTOOD = "notUnderstood"


class ActionType(WireEnum):
    ANSWER = "answer"
    REJECT = "reject"
    RECORD = "record"
    PLAY_PROMPT = "playPrompt"
    RECOGNIZE = "recognize"
    HANGUP = "hangup"
    NOT_UNDERSTOOD = "notUnderstood"


class OutcomeType(WireEnum):
    """The spec's ValidOutcomes, as written in the ``type`` of an outcome."""

    ANSWER = "answerOutcome"
    HANGUP = "hangupOutcome"
    REJECT = "rejectOutcome"
    PLAY_PROMPT = "playPromptOutcome"
    RECORD = "recordOutcome"
    RECOGNIZE = "recognizeOutcome"
    WORKFLOW_VALIDATION = "workflowValidationOutcome"
    NOT_UNDERSTOOD = "notUnderstood"

    @classmethod
    def _aliases(cls) -> dict[str, OutcomeType]:
        # The real SDKs' misspelling (field notes, "The validation outcome type").
        return {LEGACY_VALIDATION_OUTCOME: cls.WORKFLOW_VALIDATION}


LEGACY_VALIDATION_OUTCOME = "worfklowValidationOutcome"


class PromptCompletionReason(WireEnum):
    """Values are not listed by the spec; these are botemu's (docs/decisions.md)."""

    COMPLETED_SUCCESSFULLY = "completedSuccessfully"
    CALL_TERMINATED = "callTerminated"
    TEMPORARY_SYSTEM_FAILURE = "temporarySystemFailure"
    NOT_UNDERSTOOD = "notUnderstood"


class RecordingCompletionReason(WireEnum):
    INITIAL_SILENCE_TIMEOUT = "initialSilenceTimeout"
    MAX_RECORDING_TIMEOUT = "maxRecordingTimeout"
    COMPLETED_SILENCE_DETECTED = "completedSilenceDetected"
    COMPLETED_STOP_TONE_DETECTED = "completedStopToneDetected"
    CALL_TERMINATED = "callTerminated"
    TEMPORARY_SYSTEM_FAILURE = "temporarySystemFailure"
    NOT_UNDERSTOOD = "notUnderstood"


class RecognitionCompletionReason(WireEnum):
    INITIAL_SILENCE_TIMEOUT = "initialSilenceTimeout"
    INCORRECT_DTMF = "incorrectDtmf"
    INTERDIGIT_TIMEOUT = "interdigitTimeout"
    SPEECH_OPTION_MATCHED = "speechOptionMatched"
    DTMF_OPTION_MATCHED = "dtmfOptionMatched"
    CALL_TERMINATED = "callTerminated"
    TEMPORARY_SYSTEM_FAILURE = "temporarySystemFailure"
    NOT_UNDERSTOOD = "notUnderstood"


class DigitCollectionCompletionReason(WireEnum):
    INITIAL_SILENCE_TIMEOUT = "initialSilenceTimeout"
    INTERDIGIT_TIMEOUT = "interdigitTimeout"
    COMPLETED_STOP_TONE_DETECTED = "completedStopToneDetected"
    CALL_TERMINATED = "callTerminated"
    TEMPORARY_SYSTEM_FAILURE = "temporarySystemFailure"
    NOT_UNDERSTOOD = "notUnderstood"


DTMF_KEYS = "0123456789*#ABCD"
"""Valid DTMF characters (field notes), case-sensitive."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceOutcome:
    completion_reason: RecognitionCompletionReason
    choice_name: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectDigitsOutcome:
    completion_reason: DigitCollectionCompletionReason
    digits: str | None = None
    extra: dict[str, JSON] = field(default_factory=_extra, hash=False)


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


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.ANSWER


@dataclass(frozen=True, slots=True, kw_only=True)
class RejectOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.REJECT


@dataclass(frozen=True, slots=True, kw_only=True)
class HangupOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.HANGUP


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayPromptOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.PLAY_PROMPT
    completion_reason: PromptCompletionReason


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.RECORD
    completion_reason: RecordingCompletionReason
    length_of_recording_in_secs: float
    format: RecordingFormat | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecognizeOutcome(OperationOutcome):
    type: ClassVar[OutcomeType] = OutcomeType.RECOGNIZE
    choice_outcome: ChoiceOutcome | None = None
    collect_digits_outcome: CollectDigitsOutcome | None = None


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
