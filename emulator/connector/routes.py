"""The connector's REST v3 surface: every route, the one error middleware, the transcript.

Handlers parse (auth, body size, JSON), delegate to ``models.ConnectorState`` and serialise.
Authorization comes first: the token, then (for a conversation's routes) whether the caller may
touch that conversation, and only then is the body read, so a stranger learns nothing from how
its body would have been judged.

``connector_errors`` is the one place a ``ConnectorError`` becomes ``{"error": {"code",
"message"}}``; it also answers unknown ``/v3`` routes with a JSON 404, anything unexpected with a
JSON 500 (never a traceback), and records each request and response in the conversation's
transcript when the app has a ``ConnectorRecorder``. The middleware only touches ``/v3`` paths,
so it can sit in an app that serves other things.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from emulator.calling.delivery import redact_authorization
from emulator.connector.auth import Verifier
from emulator.connector.errors import (
    ConnectorError,
    MethodNotAllowed,
    NotFound,
    ServiceError,
    bad_argument,
    bad_syntax,
    too_big,
    unauthorized,
)
from emulator.connector.models import (
    ConnectorState,
    Conversation,
    check_activity,
    conversation_warnings,
)
from emulator.connector.rules import anonymous_bot_finding
from emulator.jsonutil import JSON, JSONObject, dumps, kind_of
from emulator.transcripts.store import EventKind, TranscriptStore

log = logging.getLogger(__name__)

PREFIX = "/v3"


@dataclass(frozen=True, slots=True)
class ConnectorLimits:
    """Body limits in bytes: activities (and conversation parameters), and attachment uploads
    and history transcripts."""

    activity_bytes: int = 256 * 1024
    attachment_bytes: int = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class AnonymousBots:
    """The bots registered without credentials (``BotRegistration.anonymous``): requests with no
    Authorization header are theirs on their own conversations (and attachments), and, for the
    routes that name no conversation, the one anonymous bot's when exactly one is registered."""

    is_anonymous: Callable[[str], bool] = field(default=lambda _app_id: False)
    only: Callable[[], str | None] = field(default=lambda: None)


CONNECTOR = web.AppKey("connector", ConnectorState)
VERIFIER = web.AppKey("connector_verifier", Verifier)
ANONYMOUS = web.AppKey("connector_anonymous", AnonymousBots)
LIMITS = web.AppKey("connector_limits", ConnectorLimits)
RECORDER: web.AppKey[ConnectorRecorder] = web.AppKey("connector_recorder")

CALLER = web.RequestKey("connector_caller", str)
"""The app id of the caller, once the token is checked."""
BODY = web.RequestKey("connector_body", bytes)
"""The request body, once read (absent when the request was refused before)."""
PARSED: web.RequestKey[JSON] = web.RequestKey("connector_parsed")
CREATED = web.RequestKey("connector_created", str)
"""The conversation a ``POST /v3/conversations`` created."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --- parsing -----------------------------------------------------------------------------------


def _caller(request: web.Request, conversation_id: str | None = None) -> tuple[ConnectorState, str]:
    """The state and the caller's app id (401/403 from the verifier). A request without an
    Authorization header is an anonymous bot's when ``conversation_id`` (or the route's
    attachment, or, naming neither, the only anonymous bot) is one's; otherwise it is a 401,
    as for any bot with credentials."""
    state = request.app[CONNECTOR]
    authorization = request.headers.get("Authorization")
    app_id = None if authorization else _anonymous_caller(request, state, conversation_id)
    if app_id is None:
        app_id = request.app[VERIFIER](authorization)
    request[CALLER] = app_id
    return state, app_id


def _anonymous_caller(
    request: web.Request, state: ConnectorState, conversation_id: str | None
) -> str | None:
    anonymous = request.app.get(ANONYMOUS)
    if anonymous is None:
        return None
    attachment = request.match_info.get("attachmentId")
    if conversation_id is None and attachment is not None:
        conversation_id = state.attachment_conversation(attachment)
        if conversation_id is None:
            return None
    if conversation_id is None:
        return anonymous.only()
    try:
        owner = state.conversation(conversation_id).bot_app_id
    except ConnectorError:
        return None  # an unknown conversation: 401, not 404, to a caller with no token
    return owner if anonymous.is_anonymous(owner) else None


def _authorized(request: web.Request) -> tuple[ConnectorState, str, str]:
    """For a conversation's routes: also 404 (unknown) or 403 (not the caller's) up front."""
    conversation_id = request.match_info["conversationId"]
    state, app_id = _caller(request, conversation_id)
    state.conversation(conversation_id, bot=app_id)
    return state, app_id, conversation_id


async def _read(request: web.Request, limit: int, what: str) -> bytes:
    """The body, read from the stream up to ``limit`` (so the app's client_max_size does not
    matter); over it is MessageSizeTooBig, whatever Content-Length says."""
    length = request.content_length
    if length is not None and length > limit:
        raise too_big(what, length, limit)
    data = bytearray()
    async for chunk in request.content.iter_chunked(64 * 1024):
        data += chunk
        if len(data) > limit:
            raise too_big(what, None, limit)
    request[BODY] = body = bytes(data)
    return body


def _no_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not JSON")


async def _object(request: web.Request, what: str, *, big: bool = False) -> JSONObject:
    """The body as a JSON object: BadSyntax if it is not JSON, BadArgument if not an object."""
    limits = request.app.get(LIMITS) or ConnectorLimits()
    body = await _read(request, limits.attachment_bytes if big else limits.activity_bytes, what)
    if not body.strip():
        raise bad_syntax(f"the body is empty: expected {what} as a JSON object")
    try:
        value: JSON = json.loads(body, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise bad_syntax(
            f"the body is not JSON: {e.msg} (line {e.lineno}, column {e.colno})"
        ) from e
    except (ValueError, RecursionError) as e:  # NaN/Infinity, bad UTF-8, absurd nesting
        raise bad_syntax(f"the body is not JSON: {e}") from e
    request[PARSED] = value
    if not isinstance(value, dict):
        raise bad_argument(f"expected {what} as a JSON object, got {kind_of(value)}")
    return value


def _int_query(request: web.Request, name: str) -> int | None:
    text = request.query.get(name)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise bad_argument(f"{name} must be an integer, got {text!r}") from None


def _ok(value: JSON, status: int = 200) -> web.Response:
    return web.Response(
        body=dumps(value), status=status, content_type="application/json", charset="utf-8"
    )


def _resource(resource_id: str) -> web.Response:
    return _ok({"id": resource_id})


# --- handlers ----------------------------------------------------------------------------------


async def create_conversation(request: web.Request) -> web.Response:
    state, bot = _caller(request)
    params = await _object(request, "ConversationParameters")
    named = params.get("bot")
    if not request.headers.get("Authorization") and isinstance(named, dict):
        if named.get("id") not in (None, bot):  # no token: only in the anonymous bot's name
            raise unauthorized(f"a request without a token cannot create a conversation for "
                               f"bot {named.get('id')!r}", reason="missing")  # fmt: skip
    created = state.create_conversation(bot, params)
    request[CREATED] = str(created["id"])
    return _ok(created, status=201)


async def get_conversations(request: web.Request) -> web.Response:
    state, bot = _caller(request)
    return _ok(state.conversations(bot, request.query.get("continuationToken") or None))


async def send_to_conversation(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    activity = await _object(request, "an Activity")
    return _resource(state.post_activity(conversation, activity, bot=bot))


async def send_conversation_history(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    transcript = await _object(request, "a Transcript", big=True)
    return _resource(state.history(conversation, transcript, bot=bot))


async def reply_to_activity(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    activity = await _object(request, "an Activity")
    reply_to = request.match_info["activityId"]
    return _resource(state.post_activity(conversation, activity, reply_to=reply_to, bot=bot))


async def update_activity(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    activity = await _object(request, "an Activity")
    activity_id = request.match_info["activityId"]
    return _resource(state.update_activity(conversation, activity_id, activity, bot=bot))


async def delete_activity(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    state.delete_activity(conversation, request.match_info["activityId"], bot=bot)
    return web.Response(status=200)


async def get_conversation_members(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    members: list[JSON] = [*state.members(conversation, bot=bot)]
    return _ok(members)


async def get_conversation_member(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    return _ok(state.member(conversation, request.match_info["memberId"], bot=bot))


async def delete_conversation_member(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    state.remove_member(conversation, request.match_info["memberId"], bot=bot)
    return web.Response(status=200)


async def get_conversation_paged_members(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    page_size = _int_query(request, "pageSize")
    token = request.query.get("continuationToken") or None
    return _ok(state.paged_members(conversation, page_size, token, bot=bot))


async def get_activity_members(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    activity_id = request.match_info["activityId"]
    members: list[JSON] = [*state.activity_members(conversation, activity_id, bot=bot)]
    return _ok(members)


async def upload_attachment(request: web.Request) -> web.Response:
    state, bot, conversation = _authorized(request)
    data = await _object(request, "AttachmentData", big=True)
    return _resource(state.upload_attachment(conversation, data, bot=bot))


async def get_attachment_info(request: web.Request) -> web.Response:
    state, bot = _caller(request)
    return _ok(state.attachment_info(request.match_info["attachmentId"], bot=bot))


async def get_attachment(request: web.Request) -> web.Response:
    state, bot = _caller(request)
    match = request.match_info
    data, content_type = state.attachment_view(match["attachmentId"], match["viewId"], bot=bot)
    return web.Response(body=data, headers={"Content-Type": content_type})


_ROUTES: tuple[tuple[str, str, Handler], ...] = (
    ("POST", "/conversations", create_conversation),
    ("GET", "/conversations", get_conversations),
    ("POST", "/conversations/{conversationId}/activities", send_to_conversation),
    # before {activityId}: here "history" is a path segment, not an activity id
    ("POST", "/conversations/{conversationId}/activities/history", send_conversation_history),
    ("POST", "/conversations/{conversationId}/activities/{activityId}", reply_to_activity),
    ("PUT", "/conversations/{conversationId}/activities/{activityId}", update_activity),
    ("DELETE", "/conversations/{conversationId}/activities/{activityId}", delete_activity),
    (
        "GET",
        "/conversations/{conversationId}/activities/{activityId}/members",
        get_activity_members,
    ),
    ("GET", "/conversations/{conversationId}/members", get_conversation_members),
    ("GET", "/conversations/{conversationId}/members/{memberId}", get_conversation_member),
    ("DELETE", "/conversations/{conversationId}/members/{memberId}", delete_conversation_member),
    ("GET", "/conversations/{conversationId}/pagedmembers", get_conversation_paged_members),
    ("POST", "/conversations/{conversationId}/attachments", upload_attachment),
    ("GET", "/attachments/{attachmentId}", get_attachment_info),
    ("GET", "/attachments/{attachmentId}/views/{viewId}", get_attachment),
)
"""Every route of the connector's REST v3 API (field notes, Messaging and identity), under
``/v3``. Handlers are named after the operations of the SDKs' connector clients."""


def connector_routes() -> list[web.RouteDef]:
    """The routes, named ``connector.<operation>`` (each GET route answers HEAD as well)."""
    return [
        web.route(method, PREFIX + path, handler, name="connector." + handler.__name__)
        for method, path, handler in _ROUTES
    ]


# --- the one place errors become bodies --------------------------------------------------------


def is_connector_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def error_response(error: ConnectorError) -> web.Response:
    """``{"error": {"code", "message"}}`` with the error's status; a 401 also says
    ``WWW-Authenticate: Bearer`` (RFC 6750: with ``error="invalid_token"`` when a token was
    given and refused)."""
    response = _ok(error.to_json(), status=error.status)
    if error.status == 401:
        reason = getattr(error, "reason", None)
        invalid = reason is not None and reason != "missing"
        response.headers["WWW-Authenticate"] = (
            'Bearer error="invalid_token"' if invalid else "Bearer"
        )
    return response


def _from_http(request: web.Request, e: web.HTTPException) -> web.Response:
    where = f"{request.method} {request.path}"
    if e.status == 404:
        return error_response(NotFound(f"the connector has no route {where}"))
    if e.status == 405:
        response = error_response(MethodNotAllowed(f"the connector has no route {where}"))
        if "Allow" in e.headers:
            response.headers["Allow"] = e.headers["Allow"]
        return response
    if e.status == 413:
        return error_response(too_big("a request", None, getattr(e, "max_size", 0) or 0))
    body: JSONObject = {
        "error": {"code": (e.reason or "Error").replace(" ", ""), "message": e.text or where}
    }
    return _ok(body, status=e.status)


@web.middleware
async def connector_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Map errors to the platform's error bodies and record the exchange (``/v3`` paths only)."""
    if not is_connector_path(request.path):
        return await handler(request)
    response: web.StreamResponse
    try:
        response = await handler(request)
    except ConnectorError as e:
        response = error_response(e)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        response = _from_http(request, e)
    except Exception:
        log.exception("connector: %s %s failed", request.method, request.path)
        response = error_response(
            ServiceError("botemu's connector failed on this request (the emulator's log has why)")
        )
    recorder = request.app.get(RECORDER)
    if recorder is not None:
        recorder.record(
            request,
            response,
            caller=request.get(CALLER),
            body=request.get(BODY),
            parsed=request.get(PARSED),
            created=request.get(CREATED),
        )
    return response


# --- the transcript ----------------------------------------------------------------------------


class ConnectorRecorder:
    """Writes each exchange on a conversation into that conversation's transcript.

    A conversation's transcript (``kind="conversation"``, id = the conversation id) starts when
    the conversation is created or opened. Each request and its response then become an
    ``http.request`` and an ``http.response`` event (the Authorization value without the token's
    signature, as every transcript keeps it: ``redact_authorization``). Requests that name no conversation (``GET /v3/conversations``, unknown routes)
    are not recorded. Recording never fails a request: store errors are logged."""

    def __init__(
        self, store: TranscriptStore, state: ConnectorState, anonymous: AnonymousBots | None = None
    ) -> None:
        self.store = store
        self.state = state
        self.anonymous = anonymous or AnonymousBots()
        self.started: set[str] = set()
        state.add_conversation_listener(self.start)

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
        headers: dict[str, JSON] = {
            k: (redact_authorization(v) if k.lower() == "authorization" else v)
            for k, v in request.headers.items()
        }
        text, blob = _text_or_blob(body)
        sent: JSONObject = {
            "summary": "\u2190 bot " + _describe(request, parsed, read=body is not None),
            "method": request.method,
            "path": request.path_qs,
            "headers": headers,
            "body": text,
            "app_id": caller,
        }
        warnings = _warnings(request, parsed)
        if warnings:
            sent["warnings"] = [*warnings]
        self.store.append(conversation_id, EventKind.HTTP_REQUEST, sent, blob=blob)
        answer = response.body if isinstance(response, web.Response) else None
        out_text, out_blob = _text_or_blob(answer if isinstance(answer, bytes) else None)
        got: JSONObject = {
            "summary": f"\u2192 {response.status} " + _short(out_text, out_blob),
            "status": response.status,
            "headers": dict(response.headers),
            "body": out_text,
        }
        self.store.append(conversation_id, EventKind.HTTP_RESPONSE, got, blob=out_blob)


_SAYS = {
    "create_conversation": "creates a conversation",
    "get_conversations": "lists its conversations",
    "send_to_conversation": "sends {activity}",
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


def _describe(request: web.Request, parsed: JSON, *, read: bool) -> str:
    """``sends message "hello"``: what the bot asked for, in words."""
    route = request.match_info.route.name or ""
    template = _SAYS.get(route.removeprefix("connector."))
    if template is None:
        return f"{request.method} {request.path}"
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
            quoted = json.dumps(
                value if len(value) <= 60 else value[:59] + "\u2026", ensure_ascii=False
            )
            return f"{kind} {quoted}"
    return kind


def _warnings(request: web.Request, parsed: JSON) -> list[str]:
    route = (request.match_info.route.name or "").removeprefix("connector.")
    if route == "create_conversation":
        return conversation_warnings(parsed)
    if route not in ("send_to_conversation", "reply_to_activity", "update_activity"):
        return []
    try:
        return check_activity(parsed)[1]
    except ConnectorError:
        return []


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


# --- wiring ------------------------------------------------------------------------------------


def setup_connector(
    app: web.Application,
    state: ConnectorState,
    verifier: Verifier,
    *,
    store: TranscriptStore | None = None,
    limits: ConnectorLimits | None = None,
    anonymous: AnonymousBots | None = None,
) -> None:
    """Mount the connector in ``app`` (before it starts): state, verifier, limits, the
    anonymous bots, the transcript recorder when a store is given, the routes and the
    middleware."""
    app[CONNECTOR] = state
    app[VERIFIER] = verifier
    app[LIMITS] = limits or ConnectorLimits()
    app[ANONYMOUS] = anonymous or AnonymousBots()
    if store is not None:
        app[RECORDER] = ConnectorRecorder(store, state, app[ANONYMOUS])
    app.router.add_routes(connector_routes())
    app.middlewares.append(connector_errors)


def make_connector_app(
    state: ConnectorState,
    verifier: Verifier,
    *,
    store: TranscriptStore | None = None,
    limits: ConnectorLimits | None = None,
) -> web.Application:
    """A standalone connector app (tests; ``botemu serve`` can mount it with ``setup_connector``
    instead)."""
    app = web.Application()
    setup_connector(app, state, verifier, store=store, limits=limits)
    return app
