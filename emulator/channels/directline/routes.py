"""Direct Line 3.0 over HTTP, under ``/v3/directline`` on botemu's own address.

=======  ==========================================  =============================================
POST     ``/tokens/generate``                        a token for a new conversation (the secret)
POST     ``/tokens/refresh``                         a new token for the same conversation
POST     ``/conversations``                          start (201) or, for a started token, 200
GET      ``/conversations/{id}?watermark=``          reconnect: a new ``streamUrl``
GET      ``/conversations/{id}/activities``          an ActivitySet from ``watermark`` on
POST     ``/conversations/{id}/activities``          the user's activity: ``{id}``
POST     ``/conversations/{id}/upload?userId=``      an activity and its files (multipart)
GET      ``/conversations/{id}/stream?t=``           the WebSocket (``streamUrl``)
GET      ``/session/getsessionid``                   ``{sessionId}``
GET      ``/attachments/{id}/views/{view}?k=``       an uploaded file (a capability URL)
=======  ==========================================  =============================================

Errors are the service's: ``{"error": {"code", "message"}}`` (403 a wrong or expired credential,
404 an unknown conversation, 413 a body too large, 429 a bound reached, 502/504 the bot failed).
A page of another origin may call these routes with a credential botemu gave it (CORS answered
for it; a token's ``trustedOrigins`` are held to); nothing else of botemu's.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable

from aiohttp import WSMsgType, web

from emulator.channels.directline.errors import DirectLineError
from emulator.channels.directline.grants import Grant
from emulator.channels.directline.service import DirectLine, Outbox
from emulator.jsonutil import JSON, JSONObject

PREFIX = "/v3/directline"
DIRECTLINE = web.AppKey("directline", DirectLine)
KEEPALIVE = 30.0
CLOSE_WAIT = 5.0
"""Seconds a stream that fell behind (or whose conversation closed) has to take its close frame
before its connection is cut."""
MAX_ID = 200
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_ALLOWED_HEADERS = "Authorization, Content-Type, x-ms-bot-agent, x-requested-with, Accept"


def directline_routes() -> list[web.RouteDef]:
    """The routes, each answering the service's error bodies and CORS (``_serviced``): no
    middleware, so that no other request of botemu pays for them."""
    c = f"{PREFIX}/conversations/{{conversationId}}"
    routes = [
        ("POST", f"{PREFIX}/tokens/generate", _generate),
        ("POST", f"{PREFIX}/tokens/refresh", _refresh),
        ("POST", f"{PREFIX}/conversations", _start),
        ("GET", c, _reconnect),
        ("GET", f"{c}/activities", _activities),
        ("POST", f"{c}/activities", _post),
        ("POST", f"{c}/upload", _upload),
        ("GET", f"{c}/stream", _stream),
        ("GET", f"{PREFIX}/session/getsessionid", _session_id),
        ("GET", f"{PREFIX}/attachments/{{attachmentId}}/views/{{viewId}}", _attachment),
        ("OPTIONS", f"{PREFIX}/{{tail:.*}}", _preflight),
    ]
    return [web.route(method, path, _serviced(handler)) for method, path, handler in routes]


def _serviced(handler: Handler) -> Handler:
    """``handler`` answering the service's error bodies, and CORS for a page of another origin."""

    async def serviced(request: web.Request) -> web.StreamResponse:
        try:
            response = await handler(request)
        except DirectLineError as e:
            response = web.json_response(e.body(), status=e.status)
        except web.HTTPException as e:
            if e.status < 400:
                raise
            code = {404: "BadArgument", 405: "BadArgument", 413: "MessageSizeTooBig"}.get(e.status)
            response = web.json_response(
                {"error": {"code": code or "BadArgument", "message": e.reason}}, status=e.status
            )
        origin = request.headers.get("Origin")
        if origin and not response.prepared:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
        return response

    return serviced


async def _preflight(request: web.Request) -> web.Response:
    origin = request.headers.get("Origin", "")
    return web.Response(status=204, headers={
        "Access-Control-Allow-Origin": origin or "*",
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        "Access-Control-Allow-Headers": _ALLOWED_HEADERS,
        "Access-Control-Max-Age": "600",
        "Vary": "Origin",
    })  # fmt: skip


def _grant(request: web.Request) -> Grant:
    service = request.app[DIRECTLINE]
    grant = service.grants.check(request.headers.get("Authorization"))
    origin = request.headers.get("Origin")
    if grant.origins and origin is not None and origin.rstrip("/") not in grant.origins:
        raise DirectLineError(403, "Forbidden", f"origin {origin[:100]!r} is not one of this "
                              "token's trustedOrigins")  # fmt: skip
    return grant


def _base(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}{PREFIX}"


async def _body(request: web.Request, *, optional: bool = False) -> JSONObject:
    limit = request.app[DIRECTLINE].limits.activity_bytes
    if request.content_length is not None and request.content_length > limit:
        raise DirectLineError(413, "MessageSizeTooBig", f"the body is over {limit} bytes")
    data = await request.content.read(limit + 1)
    if len(data) > limit:
        raise DirectLineError(413, "MessageSizeTooBig", f"the body is over {limit} bytes")
    if not data.strip():
        if optional:
            return {}
        raise DirectLineError(400, "BadArgument", "the body is empty: expected an activity")
    try:
        value: JSON = json.loads(data)
    except (ValueError, RecursionError):
        raise DirectLineError(400, "BadSyntax", "the body is not JSON") from None
    if not isinstance(value, dict):
        raise DirectLineError(400, "BadArgument", "the body is a JSON object")
    return value


def _record(request: web.Request, conversation_id: str, summary: str, status: int) -> None:
    service = request.app[DIRECTLINE]
    with contextlib.suppress(Exception):  # a transcript never fails the client
        service.record(conversation_id, "caller", {
            "summary": f"client → Direct Line: {summary} ({status})", "kind": "directline",
            "method": request.method, "path": request.path[:300], "status": status,
        })  # fmt: skip


def _agent(request: web.Request) -> str:
    return request.headers.get("x-ms-bot-agent", "")[:300]


async def _generate(request: web.Request) -> web.Response:
    grant = _grant(request)
    body = await _body(request, optional=True)
    answer = request.app[DIRECTLINE].generate(grant, body, _agent(request))
    _record(request, str(answer["conversationId"]), "token generated", 200)
    return web.json_response(answer)


async def _refresh(request: web.Request) -> web.Response:
    answer = request.app[DIRECTLINE].refresh(_grant(request))
    return web.json_response(answer)


async def _start(request: web.Request) -> web.Response:
    grant = _grant(request)
    body = await _body(request, optional=True)
    status, answer = await request.app[DIRECTLINE].start(grant, body, _agent(request),
                                                         _base(request))  # fmt: skip
    _record(request, str(answer["conversationId"]), "conversation started", status)
    return web.json_response(answer, status=status)


async def _reconnect(request: web.Request) -> web.Response:
    conversation_id = request.match_info["conversationId"][:MAX_ID]
    answer = request.app[DIRECTLINE].reconnect(_grant(request), conversation_id, _base(request),
                                               request.query.get("watermark"))  # fmt: skip
    return web.json_response(answer)


async def _activities(request: web.Request) -> web.Response:
    conversation_id = request.match_info["conversationId"][:MAX_ID]
    answer = request.app[DIRECTLINE].activity_set(_grant(request), conversation_id,
                                                  request.query.get("watermark"))  # fmt: skip
    return web.json_response(answer)


async def _post(request: web.Request) -> web.Response:
    grant = _grant(request)
    conversation_id = request.match_info["conversationId"][:MAX_ID]
    activity = await _body(request)
    activity_id = await request.app[DIRECTLINE].post(grant, conversation_id, activity)
    _record(request, conversation_id, f"{str(activity.get('type'))[:40]} sent", 200)
    return web.json_response({"id": activity_id})


async def _session_id(request: web.Request) -> web.Response:
    grant = _grant(request)
    digest = hashlib.sha256(f"{grant.bot}|{grant.conversation}|{grant.user}".encode())
    return web.json_response({"sessionId": digest.hexdigest()[:32]})


# --- uploads ------------------------------------------------------------------------------------


def capability(service: DirectLine, attachment_id: str) -> str:
    """The key of an uploaded file's URL (only who was given the URL can read it)."""
    mac = hmac.new(service.upload_key, attachment_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


async def _upload(request: web.Request) -> web.Response:
    """``POST /upload?userId=``: a multipart body of an ``activity`` part and file parts; each
    file is kept by botemu's connector and served back at a URL of its own."""
    service = request.app[DIRECTLINE]
    grant = _grant(request)
    conversation_id = request.match_info["conversationId"][:MAX_ID]
    service.conversation(grant, conversation_id)
    limits = service.limits
    if request.content_length is not None and request.content_length > limits.upload_bytes:
        raise DirectLineError(
            413, "MessageSizeTooBig", f"uploads are at most {limits.upload_bytes} bytes"
        )
    try:
        reader = await request.multipart()
    except (AssertionError, ValueError, KeyError):
        raise DirectLineError(400, "BadArgument", "the body is not multipart/form-data") from None
    activity, files = await _parts(reader, limits.upload_bytes, limits.upload_files)
    user = request.query.get("userId", "")
    activity.setdefault("type", "message")
    activity.setdefault("from", {"id": user})
    attachments = _kept(activity.get("attachments"))
    for name, content_type, data in files:
        data64 = base64.b64encode(data).decode()
        upload = {"type": content_type, "name": name, "originalBase64": data64}
        try:
            attachment_id = service.connector.upload_attachment(conversation_id, upload)
        except Exception as e:  # the connector's bounds (its total of uploads)
            raise DirectLineError(413, "MessageSizeTooBig", str(e)) from None
        url = (f"{_base(request)}/attachments/{attachment_id}/views/original"
               f"?k={capability(service, attachment_id)}")  # fmt: skip
        attachments.append({"contentType": content_type, "contentUrl": url, "name": name})
    activity["attachments"] = attachments
    activity_id = await service.post(grant, conversation_id, activity)
    _record(request, conversation_id, f"upload of {len(files)} file(s)", 200)
    return web.json_response({"id": activity_id})


def _kept(given: JSON) -> list[JSON]:
    """The activity part's own attachments: those with a ``contentUrl`` or ``content`` (a
    card). One with neither describes a file part (the client library sends each file's
    ``contentType`` and ``name`` so, its ``contentUrl`` taken out): the file stands for it."""
    if not isinstance(given, list):
        return []
    return [a for a in given
            if not isinstance(a, dict) or "contentUrl" in a or "content" in a]  # fmt: skip


async def _parts(
    reader: object, limit: int, max_files: int
) -> tuple[JSONObject, list[tuple[str, str, bytes]]]:
    from aiohttp import BodyPartReader, MultipartReader

    assert isinstance(reader, MultipartReader)
    activity: JSONObject = {}
    files: list[tuple[str, str, bytes]] = []
    total = 0
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            raise DirectLineError(400, "BadArgument", "nested multipart is not taken")
        data = await part.read(decode=False)
        total += len(data)
        if total > limit:
            raise DirectLineError(413, "MessageSizeTooBig", f"uploads are at most {limit} bytes")
        if part.name == "activity":
            try:
                value = json.loads(data)
            except ValueError:
                raise DirectLineError(400, "BadSyntax", "the activity part is not JSON") from None
            if not isinstance(value, dict):
                raise DirectLineError(400, "BadArgument", "the activity part is an object")
            activity = value
            continue
        if len(files) >= max_files:
            raise DirectLineError(400, "BadArgument", f"at most {max_files} files an upload")
        content_type = part.headers.get("Content-Type", "application/octet-stream")[:200]
        files.append(((part.filename or "file")[:200], content_type, bytes(data)))
    return activity, files


async def _attachment(request: web.Request) -> web.Response:
    service = request.app[DIRECTLINE]
    attachment_id = request.match_info["attachmentId"][:MAX_ID]
    given = request.query.get("k", "")
    if not hmac.compare_digest(given.encode(), capability(service, attachment_id).encode()):
        raise DirectLineError(403, "Forbidden", "this file's URL is not valid")
    try:
        data, content_type = service.connector.attachment_view(
            attachment_id, request.match_info["viewId"][:40]
        )
    except Exception:
        raise DirectLineError(404, "BadArgument", "no such file") from None
    return web.Response(body=data, headers={"Content-Type": content_type,
                                            "X-Content-Type-Options": "nosniff"})  # fmt: skip


# --- the stream ---------------------------------------------------------------------------------


async def _stream(request: web.Request) -> web.StreamResponse:
    """The WebSocket: what came after ``watermark`` first, then each ActivitySet as it comes,
    and an empty message every ``KEEPALIVE`` seconds; closed with a reason when the client
    falls ``Limits.outbox`` sets behind."""
    service = request.app[DIRECTLINE]
    conversation_id = request.match_info["conversationId"][:MAX_ID]
    token = request.query.get("t")
    if token is not None:
        grant = service.grants.check(None, stream=token)
    else:
        grant = _grant(request)
    conversation = service.conversation(grant, conversation_id)
    outbox = service.attach(conversation)
    socket = web.WebSocketResponse(max_msg_size=4096, heartbeat=None)
    transport = request.transport
    if transport is not None:  # a client that takes not even the close frame is cut off
        loop = asyncio.get_running_loop()

        def close_soon() -> None:
            loop.call_later(CLOSE_WAIT, _cut, transport)

        outbox.on_close = close_soon
    try:
        await socket.prepare(request)
        watermark = request.query.get("watermark") or "0"
        backlog = conversation.since(int(watermark) if watermark.isdigit() else 0, stream=False)
        if backlog:
            await socket.send_json({"activities": backlog, "watermark": str(conversation.next)})
        reader = asyncio.ensure_future(_drain(socket))
        try:
            await _write(socket, outbox, reader)
        finally:
            reader.cancel()
    finally:
        service.detach(conversation, outbox)
    return socket


def _cut(transport: asyncio.Transport) -> None:
    if not transport.is_closing():
        transport.abort()


async def _drain(socket: web.WebSocketResponse) -> None:
    """Read what the client sends (its empty pings) until it closes."""
    async for message in socket:
        if message.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
            break


async def _write(
    socket: web.WebSocketResponse, outbox: Outbox, reader: asyncio.Future[None]
) -> None:
    while not reader.done() and not socket.closed:
        getter: asyncio.Future[object] = asyncio.ensure_future(outbox.queue.get())
        waited: set[asyncio.Future[object]] = {getter, reader}  # type: ignore[arg-type]
        done, _ = await asyncio.wait(waited, timeout=KEEPALIVE,
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if getter not in done:
            getter.cancel()
            if not reader.done():
                await socket.send_str("")  # the service's keep-alive: an empty message
            continue
        if outbox.ended is not None:
            await socket.close(code=1000, message=outbox.ended.encode()[:120])
            return
        if outbox.behind:
            await socket.close(code=1008, message=b"the client fell behind: reconnect with "
                               b"the last watermark")  # fmt: skip
            return
        got = getter.result()
        assert isinstance(got, tuple)
        item: JSONObject = got[0]
        outbox.taken(int(got[1]))
        await socket.send_json(item)
