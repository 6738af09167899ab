"""A stored conversation as a scenario: the user's turns (``messaging:``) and the bot's replies
(``expect: replies``), read from the conversation's transcript (docs/connector.md; the runner's
own record of a conversation through a running botemu has the same shape).

- **Turns** are the activities botemu delivered to the bot (``http.request`` with a ``url``), in
  order: a message with text is a text turn, an event or an invoke its turn with ``name`` and
  ``value``, a conversationUpdate a ``conversationUpdate`` turn, except the first one, which
  opens the conversation (the runner sends its own, as ``botemu chat`` does). Other activities
  (a message without text, ``typing``...) cannot be written as turns and are left out, with a
  note.
- **Waits.** A conversation runs in wall time: the runner waits for a turn's replies up to its
  ``wait`` (2 s by default), stopping 0.3 s after the last. A turn whose last reply came later
  than ``QUICK`` seconds after it gets a ``wait`` of that delay rounded up, plus a second.
- **Replies** are the activities the bot sent that the connector accepted (2xx; history uploads
  are not replies), each expected by ``index`` with its type, its text (as prompts are: loose or
  strict), at least its number of attachments and its suggested actions.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from emulator.jsonutil import JSON, JSONObject
from emulator.replay.masking import Masker
from emulator.replay.texts import text_match
from emulator.replay.writing import commented, duration, flow, quote
from emulator.transcripts.store import EventKind, StoredEvent

QUICK = 1.5
"""Seconds within which a turn's replies come without a ``wait`` of its own."""
MAX_VALUE_CHARS = 10_000
"""An event's or invoke's value longer than this, as JSON, is left out of its turn."""
_REPLY_PATH = re.compile(r"^/v3/conversations/[^/?]+/activities(?:/(?P<id>[^/?]+))?(?:\?.*)?$")


@dataclass(frozen=True, slots=True)
class Sent:
    """An activity: who sent it (``user`` or ``bot``), when (wall clock) and what."""

    by: str
    wall: float
    activity: JSONObject


def read_conversation(events: Sequence[StoredEvent]) -> list[Sent]:
    """The activities of a conversation both ways, in transcript order."""
    out: list[Sent] = []
    for i, event in enumerate(events):
        p = event.payload
        if event.kind != EventKind.HTTP_REQUEST:
            continue
        body = p.get("body")
        activity = body if isinstance(body, dict) else _json(body)
        if not isinstance(activity, dict) or not isinstance(activity.get("type"), str):
            continue
        if "url" in p:
            out.append(Sent("user", event.wall, activity))
        elif _is_reply(p, events[i + 1] if i + 1 < len(events) else None):
            out.append(Sent("bot", event.wall, activity))
    return out


def _is_reply(p: JSONObject, answer: StoredEvent | None) -> bool:
    path = p.get("path")
    match = _REPLY_PATH.match(path) if isinstance(path, str) else None
    if p.get("method") != "POST" or match is None or match.group("id") == "history":
        return False
    status = answer.payload.get("status") if answer is not None else None
    ok = answer is not None and answer.kind == EventKind.HTTP_RESPONSE
    return ok and isinstance(status, int) and 200 <= status < 300


def messaging_lines(sent: Sequence[Sent]) -> tuple[list[str], list[str]]:
    """The ``messaging:`` turns, and a note for each activity that is not a turn."""
    lines: list[str] = []
    notes: list[str] = []
    users = [i for i, s in enumerate(sent) if s.by == "user"]
    if users and sent[users[0]].activity.get("type") == "conversationUpdate":
        users = users[1:]  # the opening: the runner sends its own
    for n, index in enumerate(users):
        following = users[n + 1] if n + 1 < len(users) else len(sent)
        replies = [s.wall for s in sent[index + 1 : following] if s.by == "bot"]
        delay = max(replies) - sent[index].wall if replies else 0.0
        wait = math.ceil(delay) + 1.0 if delay > QUICK else None
        line = _turn(sent[index].activity, wait)
        if line is None:
            notes.append(f"a {sent[index].activity.get('type')} activity is not a turn: left out")
        else:
            lines.append(commented(f"  - {line}", f"turn {len(lines) + 1}"))
    return (["messaging:", *lines] if lines else ["messaging: []"]), notes


def _turn(activity: JSONObject, wait: float | None) -> str | None:
    kind, text = activity.get("type"), activity.get("text")
    waiting = [("wait", duration(wait))] if wait is not None else []
    if kind == "message" and isinstance(text, str) and text.strip():
        return flow([("say", quote(text)), *waiting]) if waiting else quote(text)
    if kind in ("event", "invoke"):
        name = activity.get("name")
        if not isinstance(name, str) or not name.strip():
            return None
        inner = [("name", quote(name))]
        value = activity.get("value")
        written = json.dumps(value, ensure_ascii=False).replace("${", "$${")  # as quote() does
        if value is not None and len(written) <= MAX_VALUE_CHARS:
            inner.append(("value", written))
        return flow([(str(kind), flow(inner)), *waiting])
    if kind == "conversationUpdate":
        return flow([("conversationUpdate", "{}"), *waiting])
    return None


def replies_lines(sent: Sequence[Sent], *, strict: bool, masker: Masker) -> list[str]:
    """The ``replies:`` expectations, one per reply, by index."""
    replies = [s.activity for s in sent if s.by == "bot"]
    if not replies:
        return []
    lines = ["  replies:"]
    for index, activity in enumerate(replies):
        pairs: list[tuple[str, str]] = []
        kind, text = activity.get("type"), activity.get("text")
        if isinstance(kind, str) and re.fullmatch(r"[a-zA-Z]+", kind):
            pairs.append(("type", kind))
        note = f"reply #{index}"
        if isinstance(text, str) and text:
            item, cut = text_match(text, strict=strict, masker=masker)
            pairs.append(("text", item))
            note += " (its text's start)" if cut else ""
        attachments = activity.get("attachments")
        if isinstance(attachments, list) and attachments:
            pairs.append(("attachments", str(len(attachments))))
        offered = _offered(activity)
        if offered:
            pairs.append(("suggested_actions", "[" + ", ".join(map(quote, offered)) + "]"))
        pairs.append(("index", str(index)))
        lines.append(commented(f"    - {flow(pairs)}", note))
    return lines


def _offered(activity: JSONObject) -> list[str]:
    """The titles (else values) of the reply's suggested actions."""
    suggested = activity.get("suggestedActions")
    actions = suggested.get("actions") if isinstance(suggested, dict) else None
    out: list[str] = []
    for action in actions if isinstance(actions, list) else ():
        if isinstance(action, dict):
            title = action.get("title")
            value = title if isinstance(title, str) else action.get("value")
            if isinstance(value, str) and value not in out:
                out.append(value)
    return out


def _json(text: JSON) -> JSON:
    if not isinstance(text, str):
        return None
    try:
        value: JSON = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value
