"""Timed events of a call, as the engine produces them.

Every event has ``at``: seconds of virtual time since the call started. Events are plain values;
``to_json`` gives the form the transcript store keeps and ``describe`` the line a ladder shows.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import ClassVar

from emulator.calling.model import ActionType, CallState, Outcome, RecordingFormat
from emulator.calling.values import quick_init
from emulator.jsonutil import JSON, JSONObject


class EndReason(enum.StrEnum):
    """Why a call ended. The transcript records it."""

    BOT_HUNG_UP = "bot hung up"
    BOT_REJECTED = "bot rejected"
    CALLER_HUNG_UP = "caller hung up"
    NO_CALLBACK = "platform hung up: workflow had no callback"
    WORKFLOW_LIMIT = "platform hung up: workflow limit reached"
    DELIVERY_FAILED = "platform hung up: callback delivery failed"
    INVALID_WORKFLOW = "platform hung up: invalid workflow with no usable callback"
    BOT_REFUSED = "platform hung up: bot refused the request"
    NO_WORKFLOW = "platform hung up: bot sent no workflow"
    BAD_RESPONSE = "platform hung up: bot's response was not a workflow"
    DEADLINE = "platform hung up: call deadline passed"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str]
    at: float

    def to_json(self) -> JSONObject:
        out: JSONObject = {"kind": self.kind}
        for name in _field_names(type(self)):
            out[name] = _plain(getattr(self, name))
        return out

    def describe(self) -> str:
        return self.kind


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _plain(value: object) -> JSON:
    kind = type(value)  # exact types first: they are nearly every value, and the cheapest test
    if kind is str or kind is bool or kind is int or value is None:
        return value  # type: ignore[return-value]
    if kind is float:
        return round(value, 6)  # type: ignore[call-overload, no-any-return]
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, bool | int | str):
        return value
    return str(value)


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class ActionStarted(Event):
    kind: ClassVar[str] = "action started"
    operation_id: str
    action: ActionType

    def describe(self) -> str:
        return f"{self.action.value} {self.operation_id} starts"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class ActionCompleted(Event):
    kind: ClassVar[str] = "action completed"
    operation_id: str
    action: ActionType
    outcome: Outcome
    reason: str | None = None

    def describe(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.action.value} {self.operation_id}: {self.outcome.value}{why}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class PromptPlayed(Event):
    """One Prompt of a playPrompt (standalone, or the prompt of a recognize or record)."""

    kind: ClassVar[str] = "prompt played"
    end: float
    operation_id: str
    index: int
    text: str | None = None
    file_uri: str | None = None
    interrupted: bool = False

    def describe(self) -> str:
        what = repr(self.text) if self.text is not None else (self.file_uri or "silence")
        cut = " (cut off)" if self.interrupted else ""
        return f"platform played {what}{cut}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class BeepPlayed(Event):
    kind: ClassVar[str] = "beep played"
    operation_id: str

    def describe(self) -> str:
        return "platform beeped"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class TimerSet(Event):
    """An input action's timer, from ``at``: unless the caller acts first, the action completes
    at ``deadline`` for ``reason`` (a completion reason's wire value); ``limit`` is where a
    record ends at its maximum duration. Set when the action starts listening and again when
    the caller's input moves it. A live caller's page counts it down; no transcript row."""

    kind: ClassVar[str] = "timer set"
    operation_id: str
    deadline: float
    reason: str
    limit: float | None = None

    def describe(self) -> str:
        return f"{self.operation_id}: {self.reason} at {self.deadline:.2f}s"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class CallerPressed(Event):
    kind: ClassVar[str] = "caller pressed"
    key: str

    def describe(self) -> str:
        return f"caller pressed {self.key}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class CallerSpoke(Event):
    """``text`` is None for talk into a recording (speech with no words to match)."""

    kind: ClassVar[str] = "caller spoke"
    end: float
    text: str | None = None

    def describe(self) -> str:
        if self.text is None:
            return f"caller talked {self.end - self.at:.1f}s"
        return f"caller said {self.text!r}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class CallerSilent(Event):
    kind: ClassVar[str] = "caller silent"
    end: float

    def describe(self) -> str:
        return f"caller was silent {self.end - self.at:.1f}s"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class CallerHungUp(Event):
    kind: ClassVar[str] = "caller hung up"

    def describe(self) -> str:
        return "caller hung up"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class InputIgnored(Event):
    """Caller input the platform did not act on, and why (for debugging scripts)."""

    kind: ClassVar[str] = "input ignored"
    input: str
    why: str

    def describe(self) -> str:
        return f"platform ignored {self.input}: {self.why}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class RecordingMade(Event):
    """What a record action captured: ``speech`` holds (start, end) offsets into the recording."""

    kind: ClassVar[str] = "recording made"
    end: float
    operation_id: str
    format: RecordingFormat
    speech: tuple[tuple[float, float], ...] = ()

    @property
    def seconds(self) -> float:
        return self.end - self.at

    def describe(self) -> str:
        return f"platform recorded {self.seconds:.1f}s ({self.format.value})"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class StateChanged(Event):
    kind: ClassVar[str] = "state changed"
    old: CallState
    new: CallState

    def describe(self) -> str:
        return f"call {self.old.value} -> {self.new.value}"


@quick_init(thaw=True)
@dataclass(frozen=True, slots=True)
class CallEnded(Event):
    kind: ClassVar[str] = "call ended"
    reason: EndReason

    def describe(self) -> str:
        return f"call ended: {self.reason.value}"
