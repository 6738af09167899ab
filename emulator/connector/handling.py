"""What every handler of the connector shares: the app and request keys, who is calling, the
body read as JSON, and the JSON answer.

Authorization comes first: the token, then (for a conversation's routes) whether the caller may
touch that conversation (``authorized``), and only then is the body read (``json_object``), so a
stranger learns nothing from how its body would have been judged. What they raise are the domain
errors of ``errors.py``; ``routes.connector_errors`` turns them into answers.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from emulator.connector.auth import Verifier
from emulator.connector.errors import ConnectorError, bad_argument, bad_syntax, too_big
from emulator.connector.models import ConnectorState
from emulator.findings import Finding
from emulator.jsonutil import JSON, JSONObject, dumps, kind_of


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
    any: Callable[[], bool] = field(default=lambda: False)
    """Whether any anonymous bot is registered (the token service, whose calls name no
    conversation, takes a request with no token from one)."""


CONNECTOR = web.AppKey("connector", ConnectorState)
VERIFIER = web.AppKey("connector_verifier", Verifier)
ANONYMOUS = web.AppKey("connector_anonymous", AnonymousBots)
LIMITS = web.AppKey("connector_limits", ConnectorLimits)

CALLER = web.RequestKey("connector_caller", str)
"""The app id of the caller, once the token is checked."""
BODY = web.RequestKey("connector_body", bytes)
"""The request body, once read (absent when the request was refused before)."""
PARSED: web.RequestKey[JSON] = web.RequestKey("connector_parsed")
CREATED = web.RequestKey("connector_created", str)
"""The conversation a ``POST /v3/conversations`` created."""
WARNINGS: web.RequestKey[list[str]] = web.RequestKey("connector_warnings")
"""The warnings about the activity a request sends, replies or updates with, once it passed its
check (empty until then): the transcript's, without checking the activity twice."""

FINDINGS: web.RequestKey[list[Finding]] = web.RequestKey("connector_findings")
"""The findings about a request (a broken rule of a stream), for its transcript."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --- parsing -----------------------------------------------------------------------------------


def caller(request: web.Request, conversation_id: str | None = None) -> tuple[ConnectorState, str]:
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


def authorized(request: web.Request) -> tuple[ConnectorState, str, str]:
    """For a conversation's routes: also 404 (unknown) or 403 (not the caller's) up front."""
    conversation_id = request.match_info["conversationId"]
    state, app_id = caller(request, conversation_id)
    state.conversation(conversation_id, bot=app_id)
    return state, app_id, conversation_id


async def _read(request: web.Request, limit: int, what: str) -> bytes:
    """The body, read from the stream up to ``limit`` (so the app's client_max_size does not
    matter); over it is MessageSizeTooBig, whatever Content-Length says."""
    length = request.content_length
    if length is not None and length > limit:
        raise too_big(what, length, limit)
    content = request.content
    chunks: list[bytes] = []
    size = 0
    while chunk := await content.read(64 * 1024):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise too_big(what, None, limit)
        if content.at_eof():  # what the next read would say with an empty chunk
            break
    request[BODY] = body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return body


def _no_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
"""What ``json.loads(body, parse_constant=_no_constant)`` builds on every call, built once."""


def _loads(body: bytes) -> JSON:
    """``json.loads(body, parse_constant=_no_constant)``, step for step: the encoding detected
    from the first bytes (UTF-8, -16 or -32, with or without a BOM), then the shared decoder."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    value: JSON = _DECODER.decode(text)
    return value


async def json_object(request: web.Request, what: str, *, big: bool = False) -> JSONObject:
    """The body as a JSON object: BadSyntax if it is not JSON, BadArgument if not an object."""
    limits = request.app.get(LIMITS) or ConnectorLimits()
    body = await _read(request, limits.attachment_bytes if big else limits.activity_bytes, what)
    if not body.strip():
        raise bad_syntax(f"the body is empty: expected {what} as a JSON object")
    try:
        value = _loads(body)
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


def int_query(request: web.Request, name: str) -> int | None:
    text = request.query.get(name)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise bad_argument(f"{name} must be an integer, got {text!r}") from None


_JSON_TYPE = {"Content-Type": "application/json; charset=utf-8"}
"""What ``content_type="application/json", charset="utf-8"`` writes, given as it is written
(aiohttp copies it into each response's own headers)."""


def ok(value: JSON, status: int = 200) -> web.Response:
    return web.Response(body=dumps(value), status=status, headers=_JSON_TYPE)


def resource(resource_id: str) -> web.Response:
    return ok({"id": resource_id})
