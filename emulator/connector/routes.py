"""The connector's REST v3 surface: every route, the one error middleware, the transcript.

Handlers (``handlers.py``, over ``handling.py``) parse (auth, body size, JSON), delegate to
``models.ConnectorState`` and serialise. Authorization comes first: the token, then (for a
conversation's routes) whether the caller may touch that conversation, and only then is the body
read, so a stranger learns nothing from how its body would have been judged.

``connector_errors`` is the one place a ``ConnectorError`` becomes ``{"error": {"code",
"message"}}``; it also answers unknown ``/v3`` routes with a JSON 404, anything unexpected with a
JSON 500 (never a traceback), and records each request and response in the conversation's
transcript when the app has a ``ConnectorRecorder`` (``recorder.py``). The middleware only
touches ``/v3`` paths, so it can sit in an app that serves other things.
"""

from __future__ import annotations

import logging

from aiohttp import web

from emulator.connector.auth import Verifier
from emulator.connector.echo import echo_enabled, echo_routes
from emulator.connector.errors import (
    ConnectorError,
    MethodNotAllowed,
    NotFound,
    ServiceError,
    too_big,
)
from emulator.connector.handlers import (
    ROUTES,
    create_conversation,
    delete_activity,
    delete_conversation_member,
    get_activity_members,
    get_attachment,
    get_attachment_info,
    get_conversation_member,
    get_conversation_members,
    get_conversation_paged_members,
    get_conversations,
    reply_to_activity,
    send_conversation_history,
    send_to_conversation,
    update_activity,
    upload_attachment,
)
from emulator.connector.handling import (
    ANONYMOUS,
    BODY,
    CALLER,
    CONNECTOR,
    CREATED,
    FINDINGS,
    LIMITS,
    PARSED,
    VERIFIER,
    AnonymousBots,
    ConnectorLimits,
    Handler,
    ok,
)
from emulator.connector.models import ConnectorState
from emulator.connector.recorder import ConnectorRecorder
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import TranscriptStore

__all__ = [
    "ANONYMOUS",
    "BODY",
    "CALLER",
    "CONNECTOR",
    "CREATED",
    "LIMITS",
    "PARSED",
    "PREFIX",
    "RECORDER",
    "VERIFIER",
    "AnonymousBots",
    "ConnectorLimits",
    "ConnectorRecorder",
    "Handler",
    "connector_errors",
    "connector_routes",
    "create_conversation",
    "delete_activity",
    "delete_conversation_member",
    "error_response",
    "get_activity_members",
    "get_attachment",
    "get_attachment_info",
    "get_conversation_member",
    "get_conversation_members",
    "get_conversation_paged_members",
    "get_conversations",
    "is_connector_path",
    "make_connector_app",
    "reply_to_activity",
    "send_conversation_history",
    "send_to_conversation",
    "setup_connector",
    "update_activity",
    "upload_attachment",
]

log = logging.getLogger(__name__)

PREFIX = "/v3"

RECORDER: web.AppKey[ConnectorRecorder] = web.AppKey("connector_recorder")


def connector_routes() -> list[web.RouteDef]:
    """The routes, named ``connector.<operation>`` (each GET route answers HEAD as well)."""
    return [
        web.route(method, PREFIX + path, handler, name="connector." + handler.__name__)
        for method, path, handler in ROUTES
    ]


# --- the one place errors become bodies --------------------------------------------------------


def is_connector_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def error_response(error: ConnectorError) -> web.Response:
    """``{"error": {"code", "message"}}`` with the error's status; a 401 also says
    ``WWW-Authenticate: Bearer`` (RFC 6750: with ``error="invalid_token"`` when a token was
    given and refused)."""
    response = ok(error.to_json(), status=error.status)
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
    return ok(body, status=e.status)


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
        if e.finding is not None:
            request[FINDINGS] = [e.finding]
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
    middleware; with ``BOTEMU_BENCH_ECHO=1`` set, the benchmark's raw POST too (``echo.py``)."""
    app[CONNECTOR] = state
    app[VERIFIER] = verifier
    app[LIMITS] = limits or ConnectorLimits()
    app[ANONYMOUS] = anonymous or AnonymousBots()
    if store is not None:
        app[RECORDER] = ConnectorRecorder(store, state, app[ANONYMOUS])
    app.router.add_routes(connector_routes())
    if echo_enabled():
        app.router.add_routes(echo_routes())
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
