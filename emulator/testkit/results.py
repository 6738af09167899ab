"""The typed results of botemu's pytest plugin: how a call went (``CallResult``, read back from
its transcript by ``read_call``) and what a messaging bot sent (``Message``, from the activity the
connector stored: ``message_of``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject

if TYPE_CHECKING:
    from emulator.calling.events import EndReason
    from emulator.calling.model import OperationOutcome
    from emulator.transcripts.store import StoredEvent, TranscriptStore

EndedBy = Literal["bot", "caller", "platform"]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt the platform played: its text (or file), when it started (seconds of virtual
    time since the call began), and whether the caller cut it off."""

    text: str | None
    file_uri: str | None
    at: float
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class CallResult:
    """How a call went, read back from its transcript.

    ``ended_by``: who ended it (``bot``, ``caller`` or ``platform``); ``end_reason`` the exact
    reason. ``outcomes``: each operation outcome the platform posted to the bot, in order (a
    retried delivery counts once). ``transcript``: every event, as ``botemu transcript show``
    prints them."""

    call_id: str
    chain_id: str
    ended_by: EndedBy
    end_reason: EndReason
    prompts: tuple[Prompt, ...]
    outcomes: tuple[OperationOutcome, ...]
    findings: tuple[Finding, ...]
    workflows: int
    vtime: float
    transcript: tuple[StoredEvent, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The error findings: what the real platform would refuse."""
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)


@dataclass(frozen=True, slots=True)
class Attachment:
    content_type: str | None
    content_url: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class Message:
    """An activity the bot sent to the conversation through botemu's connector. ``activity``
    is the whole activity, for anything not lifted into a field."""

    type: str
    text: str | None
    attachments: tuple[Attachment, ...]
    suggested_actions: tuple[str, ...]
    """The titles (or, without a title, the values) of the suggested actions."""
    conversation_id: str
    activity: JSONObject


_ENDED_BY: dict[str, EndedBy] = {"bot hung up": "bot", "bot rejected": "bot",
                                  "caller hung up": "caller"}  # fmt: skip


def read_call(
    store: TranscriptStore,
    call_id: str,
    chain_id: str,
    end_reason: EndReason,
    findings: Sequence[Finding],
    workflows: int,
    vtime: float,
) -> CallResult:
    """A ``CallResult`` from the call's transcript."""
    events = tuple(store.events(call_id))
    prompts: list[Prompt] = []
    outcomes: list[OperationOutcome] = []
    for event in events:
        payload = event.payload
        if event.kind == "platform" and payload.get("kind") == "prompt played":
            prompts.append(_prompt(payload))
        elif event.kind == "http.request" and payload.get("label") != "Conversation":
            if payload.get("attempt", 1) == 1:
                outcome = _outcome(payload)
                if outcome is not None:
                    outcomes.append(outcome)
    return CallResult(
        call_id=call_id,
        chain_id=chain_id,
        ended_by=_ENDED_BY.get(end_reason.value, "platform"),
        end_reason=end_reason,
        prompts=tuple(prompts),
        outcomes=tuple(outcomes),
        findings=tuple(findings),
        workflows=workflows,
        vtime=vtime,
        transcript=events,
    )


def _prompt(payload: dict[str, JSON]) -> Prompt:
    text, uri, at = payload.get("text"), payload.get("file_uri"), payload.get("at")
    return Prompt(
        text=text if isinstance(text, str) else None,
        file_uri=uri if isinstance(uri, str) else None,
        at=float(at) if isinstance(at, int | float) else 0.0,
        interrupted=payload.get("interrupted") is True,
    )


def _outcome(payload: dict[str, JSON]) -> OperationOutcome | None:
    from emulator.calling.wire import loads, read_conversation_result
    from emulator.errors import WireError

    body = payload.get("body")
    parts = payload.get("parts")
    if not isinstance(body, str) and isinstance(parts, dict):
        body = parts.get("conversationResult")
    if not isinstance(body, str):
        return None
    try:
        return read_conversation_result(loads(body)).operation_outcome
    except WireError:
        return None


def from_user(activity: JSONObject) -> bool:
    sender = activity.get("from")
    return isinstance(sender, dict) and sender.get("role") == "user"


def message_of(activity: JSONObject, conversation_id: str) -> Message:
    """A ``Message`` from an activity as the connector stored it."""
    text = activity.get("text")
    attachments = activity.get("attachments")
    suggested = activity.get("suggestedActions")
    actions = suggested.get("actions") if isinstance(suggested, dict) else None
    return Message(
        type=str(activity.get("type") or ""),
        text=text if isinstance(text, str) else None,
        attachments=tuple(
            Attachment(_str(a.get("contentType")), _str(a.get("contentUrl")), _str(a.get("name")))
            for a in (attachments if isinstance(attachments, list) else [])
            if isinstance(a, dict)
        ),
        suggested_actions=tuple(
            str(a.get("title") or a.get("value") or "")
            for a in (actions if isinstance(actions, list) else [])
            if isinstance(a, dict)
        ),
        conversation_id=conversation_id,
        activity=activity,
    )


def _str(value: JSON) -> str | None:
    return value if isinstance(value, str) else None
