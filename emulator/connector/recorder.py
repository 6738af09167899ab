"""The connector's transcript: each exchange on a conversation, recorded in its transcript.

``ConnectorRecorder`` starts a conversation's transcript when the conversation is created or
opened, and ``routes.connector_errors`` hands it every request and response on ``/v3``; the
summaries say in words what the bot asked for (``sends message "hello"``).
"""

from __future__ import annotations

import json
import logging

from aiohttp import web

from emulator.connector.activities import activity_warnings
from emulator.connector.errors import ConnectorError
from emulator.connector.handling import FINDINGS, WARNINGS, AnonymousBots
from emulator.connector.models import ConnectorState, Conversation, conversation_warnings
from emulator.connector.rules import anonymous_bot_finding
from emulator.httpio import redact_authorization
from emulator.jsonutil import JSON, JSONObject
from emulator.transcripts.store import EventKind, NewEvent, TranscriptStore

log = logging.getLogger("emulator.connector.routes")
"""The recorder's log (under the name of ``routes.py``, where it has always logged from)."""


class ConnectorRecorder:
    """Writes each exchange on a conversation into that conversation's transcript.

    A conversation's transcript (``kind="conversation"``, id = the conversation id) starts when
    the conversation is created or opened. Each request and its response then become an
    ``http.request`` and an ``http.response`` event (the Authorization value without the token's
    signature, as every transcript keeps it: ``redact_authorization``), appended together
    (``TranscriptStore.append_many``: one queue item). Requests that name no conversation
    (``GET /v3/conversations``, unknown routes) are not recorded. Recording never fails a
    request: store errors are logged."""

    def __init__(
        self, store: TranscriptStore, state: ConnectorState, anonymous: AnonymousBots | None = None
    ) -> None:
        self.store = store
        self.state = state
        self.anonymous = anonymous or AnonymousBots()
        self.started: set[str] = set()
        self._last_authorization = ("", redact_authorization(""))
        self._last_headers: tuple[tuple[tuple[bytes, bytes], ...], dict[str, JSON]] = ((), {})
        state.add_conversation_listener(self.start)

    def _redacted(self, authorization: str) -> str:
        """``redact_authorization``, made once for the header a bot sends again and again."""
        if authorization != self._last_authorization[0]:
            self._last_authorization = (authorization, redact_authorization(authorization))
        return self._last_authorization[1]

    def _headers(self, request: web.Request) -> dict[str, JSON]:
        """The request's headers as the transcript keeps them (the Authorization value
        redacted), made once for the headers a bot sends again and again (the same raw bytes).
        The dict is shared between those exchanges: the store encodes a payload as it is
        appended, and nothing changes it."""
        raw = request.raw_headers
        if raw == self._last_headers[0]:
            return self._last_headers[1]
        # str(k): the names are multidict's istr, which orjson does not take as keys (jsonutil.dumps
        # would then fall back to the standard encoder: the same bytes, ten times slower)
        headers: dict[str, JSON] = {
            str(k): (self._redacted(v) if len(k) == 13 and k.lower() == "authorization" else v)
            for k, v in request.headers.items()
        }
        self._last_headers = (raw, headers)
        return headers

    def start(self, conversation: Conversation) -> None:
        users = [str(u.get("id")) for u in conversation.users]
        summary = f"conversation {conversation.id}: bot {conversation.bot_app_id} with " + (
            ", ".join(users) or "nobody yet"
        )
        try:
            self.store.start(
                kind="conversation",
                bot=conversation.bot_app_id,
                call_id=conversation.id,
                caller=users[0] if users else None,
            )
            self.store.append(
                conversation.id,
                EventKind.NOTE,
                {
                    "summary": summary,
                    "conversation": conversation.account(),
                    "members": [*conversation.members],
                },
            )
            if self.anonymous.is_anonymous(conversation.bot_app_id):
                finding = anonymous_bot_finding(conversation.bot_app_id)
                self.store.append(conversation.id, EventKind.FINDING,
                                  {"summary": str(finding), **finding.to_json()})  # fmt: skip
        except Exception:  # a transcript must never stop a conversation
            log.exception("connector: cannot start the transcript of %s", conversation.id)
            return
        self.started.add(conversation.id)

    def record(
        self,
        request: web.Request,
        response: web.StreamResponse,
        *,
        caller: str | None,
        body: bytes | None,
        parsed: JSON,
        created: str | None,
    ) -> None:
        conversation_id = created or request.match_info.get("conversationId")
        if conversation_id is None and "attachmentId" in request.match_info:
            conversation_id = self.state.attachment_conversation(request.match_info["attachmentId"])
        if conversation_id not in self.started:
            return
        try:
            self._append(conversation_id, request, response, caller, body, parsed)
        except Exception:  # recording must never fail the request
            log.exception("connector: cannot record %s %s", request.method, request.path)

    def _append(
        self,
        conversation_id: str,
        request: web.Request,
        response: web.StreamResponse,
        caller: str | None,
        body: bytes | None,
        parsed: JSON,
    ) -> None:
        headers = self._headers(request)
        if body is not None and response.status == 413 and len(body) > REFUSED_BODY:
            body = body[:REFUSED_BODY].decode("utf-8", "ignore").encode()  # refused as too big:
            # its head (a character cut in two left out) tells what it was
        text, blob = _text_or_blob(body)
        operation = (request.match_info.route.name or "").removeprefix("connector.")
        sent: JSONObject = {
            "summary": "\u2190 bot " + _describe(operation, request, parsed, read=body is not None),
            "method": request.method,
            "path": request.path_qs,
            "headers": headers,
            "body": text,
            "app_id": caller,
        }
        warnings = _warnings(operation, request, parsed)
        if warnings:
            sent["warnings"] = [*warnings]
        answer = response.body if isinstance(response, web.Response) else None
        out_text, out_blob = _text_or_blob(answer if isinstance(answer, bytes) else None)
        got: JSONObject = {
            "summary": f"\u2192 {response.status} " + _short(out_text, out_blob),
            "status": response.status,
            "headers": {str(k): v for k, v in response.headers.items()},
            "body": out_text,
        }
        events: list[NewEvent] = [
            (EventKind.HTTP_REQUEST, sent, blob), (EventKind.HTTP_RESPONSE, got, out_blob)]  # fmt: skip
        for finding in request.get(FINDINGS) or ():
            events.append((EventKind.FINDING, {"summary": str(finding), **finding.to_json()}, None))
        self.store.append_many(conversation_id, events)


_SENDS = "sends {activity}"
_SAYS = {
    "create_conversation": "creates a conversation",
    "get_conversations": "lists its conversations",
    "send_to_conversation": _SENDS,
    "send_conversation_history": "uploads history ({count} activities)",
    "reply_to_activity": "replies to {activityId} with {activity}",
    "update_activity": "updates {activityId} to {activity}",
    "delete_activity": "deletes activity {activityId}",
    "get_conversation_members": "lists the members",
    "get_conversation_member": "gets member {memberId}",
    "delete_conversation_member": "removes member {memberId}",
    "get_conversation_paged_members": "lists the members (paged)",
    "get_activity_members": "lists the members of activity {activityId}",
    "upload_attachment": "uploads an attachment",
    "get_attachment_info": "asks about attachment {attachmentId}",
    "get_attachment": "downloads view {viewId} of attachment {attachmentId}",
}


class _Values(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _describe(operation: str, request: web.Request, parsed: JSON, *, read: bool) -> str:
    """``sends message "hello"``: what the bot asked for (``operation``: the route's), in words."""
    template = _SAYS.get(operation)
    if template is None:
        return f"{request.method} {request.path}"
    if template == _SENDS:  # the common case, without the general formatting below
        return "sends " + (_activity_words(parsed) if read else "an activity (body not read)")
    values = _Values(request.match_info)
    values["activity"] = _activity_words(parsed) if read else "an activity (body not read)"
    items = parsed.get("activities") if isinstance(parsed, dict) else None
    values["count"] = str(len(items)) if isinstance(items, list) else "?"
    return template.format_map(values)


def _activity_words(parsed: JSON) -> str:
    if not isinstance(parsed, dict):
        return "a body that is not an activity"
    kind = parsed.get("type")
    if not isinstance(kind, str):
        return "an activity without a type"
    for name in ("text", "name"):
        value = parsed.get(name)
        if isinstance(value, str) and value:
            quoted = _quote(value if len(value) <= 60 else value[:59] + "\u2026")
            return f"{kind} {quoted}"
    return kind


_quote = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` without building an encoder per call."""


def _warnings(operation: str, request: web.Request, parsed: JSON) -> list[str]:
    if operation == "create_conversation":
        return conversation_warnings(parsed)
    if operation not in ("send_to_conversation", "reply_to_activity", "update_activity"):
        return []
    known: list[str] | None = request.get(WARNINGS)
    if known is not None:  # the handler's check of this very body passed: its warnings
        return known
    try:
        return activity_warnings(parsed)
    except ConnectorError:
        return []


REFUSED_BODY = 64 * 1024
"""Bytes of a body refused as too big (413) that the transcript keeps: its head."""


def _text_or_blob(data: bytes | None) -> tuple[str | None, bytes | None]:
    if data is None:
        return None, None
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, data


def _short(text: str | None, blob: bytes | None) -> str:
    if blob is not None:
        return f"({len(blob)} bytes)"
    if not text:
        return "(no body)"
    return text if len(text) <= 120 else f"({len(text.encode())} bytes)"
