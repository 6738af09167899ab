"""What the transcript store keeps and hands out: event kinds, stored events, call summaries.

Also the store's one error, ``TranscriptError``, and the small conversions between these values
and their rows (``summary_of``, ``load_payload``, ``payload_text``).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, cast

from emulator.errors import BotemuError
from emulator.jsonutil import JSON, dumps


class EventKind(enum.StrEnum):
    """The kinds of event the calling session writes (the store accepts any string)."""

    CALL_START = "call.start"
    HTTP_REQUEST = "http.request"
    HTTP_RESPONSE = "http.response"
    HTTP_ERROR = "http.error"
    RETRY = "retry"
    CALLER = "caller"
    PLATFORM = "platform"
    STATE = "state"
    FINDING = "finding"
    CALL_END = "call.end"
    NOTE = "note"


class TranscriptError(BotemuError):
    """The store cannot do what was asked: the file is not a botemu database or cannot be
    opened, a call id is unknown or ambiguous, a payload is not JSON. ``path`` is the file."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of a call. ``payload`` is a JSON object; by convention ``payload["summary"]``
    is one human line. ``vtime`` is seconds of virtual time, ``wall`` is ``time.time()``."""

    call_id: str
    seq: int
    vtime: float | None
    wall: float
    kind: str
    payload: dict[str, JSON]
    has_blob: bool

    def to_json(self) -> dict[str, JSON]:
        return {
            "seq": self.seq,
            "vtime": self.vtime,
            "wall": self.wall,
            "kind": self.kind,
            "payload": self.payload,
            "has_blob": self.has_blob,
        }


@dataclass(frozen=True, slots=True)
class CallSummary:
    """One call (``kind="call"``) or conversation, as a list shows it. ``started``/``ended`` are
    wall clock; ``vtime`` is the virtual duration (the latest event vtime); ``ended`` and
    ``end_reason`` are None while it runs. ``errors``/``warnings`` count its finding events."""

    id: str
    kind: str
    bot: str
    caller: str | None
    chain_id: str | None
    scenario: str | None
    started: float
    ended: float | None
    vtime: float | None
    end_reason: str | None
    workflows: int
    errors: int
    warnings: int
    passed: bool | None

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "kind": self.kind,
            "bot": self.bot,
            "caller": self.caller,
            "chain_id": self.chain_id,
            "scenario": self.scenario,
            "started": self.started,
            "ended": self.ended,
            "vtime": self.vtime,
            "end_reason": self.end_reason,
            "workflows": self.workflows,
            "errors": self.errors,
            "warnings": self.warnings,
            "passed": self.passed,
        }


def summary_of(row: tuple[Any, ...]) -> CallSummary:
    """A ``CallSummary`` from a row of ``schema.CALL_COLUMNS``."""
    passed = row[13]
    return CallSummary(
        id=row[0],
        kind=row[1],
        bot=row[2],
        caller=row[3],
        chain_id=row[4],
        scenario=row[5],
        started=row[6],
        ended=row[7],
        vtime=row[8],
        end_reason=row[9],
        workflows=row[10],
        errors=row[11],
        warnings=row[12],
        passed=None if passed is None else bool(passed),
    )


def load_payload(text: str) -> dict[str, JSON]:
    """A stored payload (JSON text) as a JSON object."""
    return cast(dict[str, JSON], json.loads(text))


def payload_text(payload: dict[str, JSON], kind: str) -> bytes:
    """A payload as JSON text in UTF-8 bytes, for ``schema.INSERT_EVENT``. orjson does the common
    case (``dumps``: it is ten times faster than the standard encoder, and payloads are on every
    call's hot path); a non-finite number is stored as null, as JSON.stringify does. What orjson
    refuses (a lone surrogate, an integer beyond 64 bits) goes through the standard encoder,
    which keeps it exactly."""
    try:
        return dumps(payload)
    except (TypeError, ValueError) as e:
        raise TranscriptError(f"the payload of a {kind} event is not JSON: {e}") from e


def unknown_call(call_id: str, path: str) -> TranscriptError:
    """The error for a call id the file does not hold."""
    return TranscriptError(f"no call with id {call_id!r}", path=path)


def reason_of(e: BaseException) -> str:
    """One line on why an OS or SQLite operation failed."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__
