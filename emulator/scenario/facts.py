"""What a transcript says: the facts expectations are judged on (``Facts.read``), and the small
helpers that read JSON values and events leniently (a bot may send anything).

``expectations.py`` has the account of where each fact comes from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from emulator.connector.errors import ConnectorError
from emulator.connector.streams import STREAM_KEY, chunk_of
from emulator.jsonutil import JSON, JSONObject, find_key
from emulator.transcripts.store import EventKind, StoredEvent

_REPLY_PATH = re.compile(r"^/v3/conversations/[^/?]+/activities(?:/(?P<id>[^/?]+))?(?:\?.*)?$")


class CallOutline(Protocol):
    """What ``evaluate`` needs of a call as a whole: a ``CallSummary`` (``store.call(id)``) or a
    ``CallReport`` both fit."""

    @property
    def end_reason(self) -> str | None: ...

    @property
    def workflows(self) -> int: ...

    @property
    def vtime(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Posted:
    """A ConversationResult the platform posted: the event, the result, its operationOutcome."""

    event: StoredEvent
    result: JSONObject
    outcome: JSONObject


@dataclass(slots=True)
class Facts:
    """Everything the expectations are judged on, read once from a transcript."""

    prompts: list[StoredEvent] = field(default_factory=list)
    ran: list[JSON] = field(default_factory=list)
    rejected: int = 0
    posted: list[Posted] = field(default_factory=list)
    recordings: list[StoredEvent] = field(default_factory=list)
    replies: list[tuple[StoredEvent, JSONObject]] = field(default_factory=list)
    """Each reply the connector took (or the bot gave in its answer to expectReplies); a
    streamed reply is one, its latest chunk with the stream under ``STREAM_KEY``: ``id``,
    ``state`` (open, final) and ``chunks`` (every chunk, the final message included)."""
    streams: dict[str, int] = field(default_factory=dict)
    """The index in ``replies`` of each stream, by stream id."""
    latencies: list[float] = field(default_factory=list)
    findings: list[StoredEvent] = field(default_factory=list)
    states: list[StoredEvent] = field(default_factory=list)
    end: StoredEvent | None = None
    end_reason: str | None = None
    workflows: int = 0
    vtime: float | None = None

    @classmethod
    def read(cls, events: Sequence[StoredEvent], report: CallOutline | None) -> Facts:
        """The facts of ``events``; ``report`` (a call's summary) wins for the call as a whole."""
        facts = cls()
        answer: str | None = None  # the body of the last accepted answer, until a Workflow runs
        messages: set[str] = set()
        for i, event in enumerate(events):
            kind, p = event.kind, event.payload
            if kind == EventKind.PLATFORM:
                if p.get("kind") == "prompt played":
                    facts.prompts.append(event)
                elif p.get("recording") is True:
                    facts.recordings.append(event)
                elif summary_of(event).startswith("platform rejected the Workflow"):
                    facts.rejected += 1
            elif kind == EventKind.HTTP_RESPONSE:
                latency = p.get("latency_ms")
                if isinstance(latency, int | float) and not isinstance(latency, bool):
                    facts.latencies.append(float(latency))
                status, body = p.get("status"), p.get("body")
                ok = isinstance(status, int) and 200 <= status < 300
                answer = body if ok and isinstance(body, str) else None
            elif kind == EventKind.NOTE and isinstance(reply := p.get("expected_reply"), dict):
                facts.replies.append((event, reply))
            elif kind == EventKind.NOTE and summary_of(event).startswith("Workflow ["):
                facts.ran.append(parse_json(answer))
                answer = None
            elif kind == EventKind.HTTP_REQUEST:
                facts._request(event, events[i + 1] if i + 1 < len(events) else None, messages)
            elif kind == EventKind.FINDING:
                facts.findings.append(event)
            elif kind == EventKind.STATE:
                facts.states.append(event)
            elif kind == EventKind.CALL_END:
                facts.end = event
        reason = facts.end.payload.get("reason") if facts.end is not None else None
        facts.end_reason = str(reason) if isinstance(reason, str) else None
        facts.workflows = len(facts.ran) + facts.rejected
        times = [e.vtime for e in events if e.vtime is not None]
        facts.vtime = max(times) if times else None
        if report is not None:
            facts.end_reason = report.end_reason or facts.end_reason
            facts.workflows = report.workflows
            facts.vtime = report.vtime if report.vtime is not None else facts.vtime
        return facts

    def _request(self, event: StoredEvent, after: StoredEvent | None, seen: set[str]) -> None:
        p = event.payload
        path = p.get("path")
        if isinstance(path, str):  # the connector's record of a bot's request
            match = _REPLY_PATH.match(path)
            if p.get("method") != "POST" or match is None or match.group("id") == "history":
                return
            if after is None or after.kind != EventKind.HTTP_RESPONSE:
                return
            status = after.payload.get("status")
            activity = parse_json(p.get("body"))
            answer = parse_json(after.payload.get("body"))
            if isinstance(answer, dict) and "error" in answer:  # a chunk ignored (202)
                return
            if isinstance(status, int) and 200 <= status < 300 and isinstance(activity, dict):
                self._reply(event, activity, answer)
            return
        message_id = p.get("message_id")
        if isinstance(message_id, str):
            if message_id in seen:
                return  # a retry or a duplicate delivery: the same message
            seen.add(message_id)
        body = p.get("body")
        parts = p.get("parts")
        if body is None and isinstance(parts, dict):
            body = parts.get("conversationResult")
        # What the platform did, when a fault (unknown enum values) changed the bytes it sent.
        made = p.get("platform_result")
        result = made if isinstance(made, dict) else parse_json(body)
        if isinstance(result, dict):
            outcome = member(result, "operationOutcome")
            if isinstance(outcome, dict):
                self.posted.append(Posted(event, result, outcome))

    def _reply(self, event: StoredEvent, activity: JSONObject, answer: JSON) -> None:
        """A reply, or a chunk of a streamed one (folded into its stream's one reply)."""
        try:
            chunk = chunk_of(activity)
        except ConnectorError:
            chunk = None
        stream_id = answer.get("id") if isinstance(answer, dict) else None
        if chunk is None or not isinstance(stream_id, str):
            self.replies.append((event, activity))
            return
        at = self.streams.get(stream_id)
        chunks: list[JSON] = [activity]
        if at is not None:
            earlier = self.replies[at][1].get(STREAM_KEY)
            kept = earlier.get("chunks") if isinstance(earlier, dict) else None
            if isinstance(kept, list):
                chunks = [*kept, activity]
        state = "final" if chunk.final else "open"
        folded: JSONObject = {**activity, STREAM_KEY: {"id": stream_id, "state": state,
                                                       "chunks": chunks}}  # fmt: skip
        if at is None:
            self.streams[stream_id] = len(self.replies)
            self.replies.append((event, folded))
        else:
            self.replies[at] = (self.replies[at][0], folded)

    # --- derived ---

    def recognizes(self) -> list[tuple[str, tuple[str, ...]]]:
        """(operation id, choice names) of every recognize that ran, in order."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for workflow in self.ran:
            actions = member(workflow, "actions") if isinstance(workflow, dict) else None
            for action in actions if isinstance(actions, list) else ():
                if not isinstance(action, dict) or lower(member(action, "action")) != "recognize":
                    continue
                choices = member(action, "choices")
                names = tuple(
                    str(member(c, "name"))
                    for c in (choices if isinstance(choices, list) else ())
                    if isinstance(c, dict) and isinstance(member(c, "name"), str)
                )
                out.append((str(member(action, "operationId") or "?"), names))
        return out

    def answered(self) -> bool:
        return any(lower(e.payload.get("new")) == "established" for e in self.states)

    def final_state(self) -> str | None:
        """The last state the call reached (``state`` events); without any, the callState of
        the last ConversationResult posted."""
        if self.states:
            state = self.states[-1].payload.get("new")
            return state if isinstance(state, str) else None
        if self.posted:
            state = member(self.posted[-1].result, "callState")
            return state if isinstance(state, str) else None
        return None

    def ended_by(self) -> str | None:
        reason = (self.end_reason or "").lower()
        if reason.startswith("bot "):
            return "bot"
        if reason.startswith("caller "):
            return "caller"
        if reason.startswith("platform "):
            return "platform"
        return None


# --- reading JSON and events ---------------------------------------------------------------------


def parse_json(text: JSON) -> JSON:
    """JSON text as a value; None when it is not text, or not JSON."""
    if not isinstance(text, str):
        return None
    try:
        value: JSON = json.loads(text)
    except ValueError:
        return None
    return value


def member(obj: JSON, name: str) -> JSON:
    """The member ``name`` of an object, its name in any case (None: there is none)."""
    if not isinstance(obj, dict):
        return None
    key = find_key(obj, name)
    return None if key is None else obj[key]


def lower(value: object) -> str:
    """A string in lower case; anything else as ``''``."""
    return value.lower() if isinstance(value, str) else ""


def as_list(value: JSON) -> list[JSON]:
    """A list as it is; anything else as ``[]``."""
    return value if isinstance(value, list) else []


def as_number(value: JSON) -> float | None:
    """A number (not a boolean) as a float; anything else as None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def flat(value: JSON) -> str:
    """A string as it is; anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def is_error(event: StoredEvent) -> bool:
    """Whether a ``finding`` event is of severity error."""
    return lower(event.payload.get("severity")) == "error"


def rule_of(event: StoredEvent) -> str:
    """A ``finding`` event's rule id."""
    return str(event.payload.get("rule"))


def summary_of(event: StoredEvent) -> str:
    """An event's summary line (its kind, when it has none)."""
    summary = event.payload.get("summary")
    return summary if isinstance(summary, str) else event.kind
