"""The activities a conversation carried, read back from its transcript.

A conversation's transcript holds HTTP exchanges, not activities (``docs/transcripts.md``): the
emulator's posts to the bot (``http.request`` with a ``url`` and the activity as its ``body``)
and the bot's requests to the connector (``http.request`` with a ``path``, recorded by
``ConnectorRecorder`` with their answer as the very next event). The activities are these bodies:

- to the bot (``direction="user"``): every activity the emulator posted;
- from the bot (``direction="bot"``): an activity sent to the conversation
  (``POST .../activities``), a reply (``POST .../activities/{id}``), and the first activity of a
  conversation the bot created (``POST /v3/conversations``), when the connector took it (2xx).
  The id the connector gave is filled in when the bot sent none, and so are ``timestamp`` (the
  wall clock of the request) and ``from`` (the bot), which a transcript viewer needs to place it.

Updates, deletions and uploaded history are not new activities of the conversation. The list,
in transcript order, is the ``.transcript`` file the ecosystem's tools open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from emulator.jsonutil import JSON, JSONObject
from emulator.transcripts.store import EventKind, StoredEvent

_SENT = re.compile(r"^/v3/conversations/[^/?]+/activities(?:/(?P<reply>[^/?]+))?/?(?:\?.*)?$")
_CREATE = re.compile(r"^/v3/conversations/?(?:\?.*)?$")


@dataclass(frozen=True, slots=True)
class Carried:
    """One activity of a conversation: the event that carried it, which way, and the answer's
    HTTP status (None when there was no answer)."""

    seq: int
    direction: Literal["user", "bot"]
    activity: JSONObject
    status: int | None

    def to_json(self) -> JSONObject:
        return {
            "seq": self.seq,
            "direction": self.direction,
            "status": self.status,
            "activity": self.activity,
        }


def carried(events: Sequence[StoredEvent], bot: str | None = None) -> list[Carried]:
    """Every activity in ``events`` (a conversation's, in seq order), both ways. ``bot`` (the
    bot's app id) fills in ``from`` on an activity the bot sent without one."""
    out: list[Carried] = []
    to_bot: list[int] = []
    """Indexes in ``out`` of the activities posted to the bot that have no answer yet."""
    index = {e.seq: e for e in events}
    answered: set[int] = set()
    for event in events:
        p = event.payload
        if event.kind == EventKind.HTTP_REQUEST and "url" in p:
            body = p.get("body")
            if isinstance(body, str):
                body = _json(body)
            if isinstance(body, dict) and isinstance(body.get("type"), str):
                to_bot.append(len(out))
                out.append(Carried(event.seq, "user", body, None))
        elif event.kind == EventKind.HTTP_REQUEST and "path" in p:
            answer = index.get(event.seq + 1)
            if answer is not None and answer.kind == EventKind.HTTP_RESPONSE:
                answered.add(answer.seq)
            activity = _from_bot(event, answer, bot)
            if activity is not None:
                out.append(activity)
        elif event.kind in (EventKind.HTTP_RESPONSE, EventKind.HTTP_ERROR):
            if event.seq in answered or not to_bot:
                continue
            at = to_bot.pop(0)
            status = p.get("status") if event.kind == EventKind.HTTP_RESPONSE else None
            out[at] = Carried(out[at].seq, "user", out[at].activity,
                              status if isinstance(status, int) else None)  # fmt: skip
    return out


def transcript(items: Sequence[Carried]) -> list[JSON]:
    """The ``.transcript`` document: the activities that got through (2xx, or not answered yet:
    a conversation still running)."""
    return [c.activity for c in items if c.status is None or 200 <= c.status < 300]


def _from_bot(event: StoredEvent, answer: StoredEvent | None, bot: str | None) -> Carried | None:
    p = event.payload
    path, method = p.get("path"), p.get("method")
    if method != "POST" or not isinstance(path, str):
        return None
    sent = _SENT.match(path)
    body = _json(p.get("body"))
    if sent is not None and sent.group("reply") != "history":
        activity = body
    elif _CREATE.match(path) and isinstance(body, dict):
        activity = body.get("activity")
    else:
        return None
    if not isinstance(activity, dict) or not isinstance(activity.get("type"), str):
        return None
    status = answer.payload.get("status") if answer is not None else None
    status = status if isinstance(status, int) else None
    if status is not None and not 200 <= status < 300:
        return Carried(event.seq, "bot", activity, status)
    filled: JSONObject = dict(activity)
    given = _json(answer.payload.get("body")) if answer is not None else None
    if "id" not in filled and isinstance(given, dict) and isinstance(given.get("id"), str):
        filled["id"] = given["id"]
    if "timestamp" not in filled:
        filled["timestamp"] = datetime.fromtimestamp(event.wall, UTC).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")  # fmt: skip
    if "from" not in filled and bot:
        filled["from"] = {"id": bot, "role": "bot"}
    return Carried(event.seq, "bot", filled, status)


def _json(text: JSON) -> JSON:
    if not isinstance(text, str):
        return text
    try:
        value: JSON = json.loads(text)
    except ValueError:
        return None
    return value
