"""The enumerations of the calling protocol (spec section C, Enumerations), read
case-insensitively and written in camelCase; an unknown value reads as ``NOT_UNDERSTOOD`` (spec,
Versioning 4).
"""

from __future__ import annotations

import enum
from typing import Self

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
