"""The user token service over HTTP, as the SDKs' token clients call it, and the sign-in page.

======  =====================================================  ====================================
GET     ``/api/usertoken/GetToken``                            TokenResponse, or 404 (no token)
GET     ``/api/usertoken/GetTokenStatus``                      [TokenStatus]
POST    ``/api/usertoken/GetAadTokens``                        {resource: TokenResponse}
DELETE  ``/api/usertoken/SignOut``                             200
POST    ``/api/usertoken/exchange``                            TokenResponse (single sign-on)
GET     ``/api/usertoken/GetTokenOrSignInResource``            {tokenResponse} or {signInResource}
GET     ``/api/botsignin/GetSignInResource``                   SignInUrlResponse
GET     ``/api/botsignin/GetSignInUrl``                        the link (a JSON string)
GET     ``/_signin?state=``                                    the sign-in page: a test user, consent
POST    ``/_signin``                                           consent or refuse (the page's form)
======  =====================================================  ====================================

Route names are matched without regard to case (the SDKs spell them differently; the Agents
SDK also says ``agentsignin``). Every ``/api/`` call is authenticated as the connector is (the
bot's token; none for an anonymous bot) and recorded in a transcript (``record``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from emulator.connector.errors import ConnectorError
from emulator.connector.handling import ANONYMOUS, caller
from emulator.jsonutil import JSON, JSONObject
from emulator.tokenservice.model import SignInState, read_state
from emulator.tokenservice.rules import other_app
from emulator.tokenservice.service import TokenService, TokenServiceError, token_response

TOKENSERVICE = web.AppKey("tokenservice", TokenService)
Completion = Callable[[str, JSONObject], Awaitable[None]]
"""(magic code, the sign-in's state as read) → the channel completes the sign-in."""
COMPLETE: web.AppKey[Completion] = web.AppKey("tokenservice_complete")
Record = Callable[[str | None, str, JSONObject], None]
"""(the conversation, when known; the event's kind; its payload): for the transcript."""
RECORD: web.AppKey[Record] = web.AppKey("tokenservice_record")
MAX_BODY = 64 * 1024


def tokenservice_routes() -> list[web.RouteDef]:
    return [
        web.route("*", "/api/{group}/{operation}", _api),
        web.get("/_signin", _page),
        web.post("/_signin", _consent),
    ]


def _query(request: web.Request, name: str, *, required: bool = True) -> str | None:
    value = request.query.get(name)
    if value is None:  # the SDKs spell some parameters in other cases
        value = next((v for k, v in request.query.items() if k.lower() == name.lower()), None)
    if required and not value:
        raise TokenServiceError(400, "BadArgument", f"{name} is required")
    return value[:4096] if value else None


async def _api(request: web.Request) -> web.StreamResponse:
    service = request.app[TOKENSERVICE]
    group = request.match_info["group"].lower()
    operation = request.match_info["operation"].lower()
    status, body = 200, None
    try:
        app_id = _authenticate(request)
        _own_sign_in(request, app_id)
        body = await _operation(request, service, group, operation)
        if body is None and request.method == "GET" and operation == "gettoken":
            status = 404
    except TokenServiceError as e:
        status, body = e.status, e.body()
    except ConnectorError as e:
        status, body = e.status, e.to_json()
    _record(request, status)
    if status == 404 and body is None:
        return web.Response(status=404)
    return web.json_response(body, status=status)


def _authenticate(request: web.Request) -> str | None:
    """The caller's app id, from the bot's token as the connector checks it; None for a
    request with no token of an anonymous bot (any of them: a call names no conversation)."""
    anonymous = request.app.get(ANONYMOUS)
    if "Authorization" not in request.headers and anonymous is not None and anonymous.any():
        return None
    return caller(request)[1]


def _own_sign_in(request: web.Request, app_id: str | None) -> None:
    """A bot asks only about its own sign-ins (SIGNIN-OTHER-APP: 403, and the finding)."""
    raw = request.query.get("state")
    if app_id is None or not raw:
        return
    try:
        state = read_state(raw)
    except ValueError:
        return
    if state.app_id is not None and state.app_id != app_id:
        finding = other_app(app_id, state.app_id)
        record = request.app.get(RECORD)
        if record is not None:
            record(state.conversation_id, "finding", {"summary": str(finding), **finding.to_json()})
        raise TokenServiceError(403, "Forbidden", finding.message)


async def _operation(
    request: web.Request, service: TokenService, group: str, operation: str
) -> JSON:
    method = request.method
    if group in ("botsignin", "agentsignin"):
        state = _state(request)
        if operation == "getsigninresource" and method == "GET":
            return service.sign_in_resource(state)
        if operation == "getsigninurl" and method == "GET":
            service.tokens.begin(state)
            return service.sign_in_link(state)
        raise TokenServiceError(404, "NotFound", f"no route {operation}")
    if group != "usertoken":
        raise TokenServiceError(404, "NotFound", f"no route {group}/{operation}")
    user = _query(request, "userId")
    assert user is not None
    channel = _query(request, "channelId", required=False) or "webchat"
    if operation == "gettoken" and method == "GET":
        name = _query(request, "connectionName")
        assert name is not None
        issued = service.get_token(user, name, channel, _query(request, "code", required=False))
        return None if issued is None else token_response(issued, channel)
    if operation == "gettokenstatus" and method == "GET":
        return [{"channelId": channel, "connectionName": c.name,
                 "hasToken": service.tokens.current(user, c.name, channel) is not None,
                 "serviceProviderDisplayName": "botemu test identity provider"}
                for c in service.connections.values()]  # fmt: skip
    if operation == "signout" and method == "DELETE":
        service.tokens.sign_out(user, _query(request, "connectionName", required=False),
                                _query(request, "channelId", required=False))  # fmt: skip
        return {}
    return await _more(request, service, operation, user, channel)


async def _more(
    request: web.Request, service: TokenService, operation: str, user: str, channel: str
) -> JSON:
    name = _query(request, "connectionName")
    assert name is not None
    if operation == "exchange" and request.method == "POST":
        body = await _json(request)
        token = body.get("token")
        if not isinstance(token, str) or not token:
            raise TokenServiceError(400, "BadArgument", "the exchange needs a token (uri alone "
                                    "is not answered by botemu)")  # fmt: skip
        return token_response(service.exchange(user, name, channel, token), channel)
    if operation == "getaadtokens" and request.method == "POST":
        body = await _json(request)
        issued = service.tokens.current(user, name, channel)
        urls = body.get("resourceUrls") or []
        if issued is None or not isinstance(urls, list):
            return {}
        return {str(u)[:300]: token_response(issued, channel) for u in urls[:20]}
    if operation == "gettokenorsigninresource" and request.method == "GET":
        issued = service.get_token(user, name, channel, _query(request, "code", required=False))
        if issued is not None:
            return {"tokenResponse": token_response(issued, channel)}
        return {"signInResource": service.sign_in_resource(_state(request))}
    raise TokenServiceError(404, "NotFound", f"no route usertoken/{operation}")


def _state(request: web.Request) -> SignInState:
    raw = _query(request, "state")
    assert raw is not None
    try:
        return read_state(raw)
    except ValueError as e:
        raise TokenServiceError(400, "BadArgument", str(e)) from None


async def _json(request: web.Request) -> JSONObject:
    data = await request.content.read(MAX_BODY + 1)
    if len(data) > MAX_BODY:
        raise TokenServiceError(413, "MessageSizeTooBig", f"the body is over {MAX_BODY} bytes")
    try:
        value = json.loads(data or b"{}")
    except ValueError:
        raise TokenServiceError(400, "BadSyntax", "the body is not JSON") from None
    if not isinstance(value, dict):
        raise TokenServiceError(400, "BadArgument", "the body is a JSON object")
    return value


def _record(request: web.Request, status: int) -> None:
    record = request.app.get(RECORD)
    if record is None:
        return
    state = request.query.get("state")
    conversation = None
    if state:
        try:
            conversation = read_state(state).conversation_id
        except ValueError:
            conversation = None
    query: JSONObject = {
        k: ("(redacted)" if k.lower() == "code" else v[:200]) for k, v in request.query.items()
    }
    record(conversation, "note", {"summary": f"bot → token service: {request.method} "
                          f"{request.match_info.get('operation', '')} ({status})",
                          "method": request.method, "path": request.path, "query": query,
                          "status": status})  # fmt: skip


# --- the sign-in page --------------------------------------------------------------------------


async def _page(request: web.Request) -> web.Response:
    service = request.app[TOKENSERVICE]
    try:
        state = read_state(request.query.get("state", ""))
    except ValueError as e:
        return _html(
            400,
            "Sign-in",
            f"<p class=problem>This sign-in link is not valid: {html.escape(str(e))}.</p>",
        )
    pending = service.tokens.begin(state)
    connection = service.connection(state.connection)
    options = "".join(
        f'<label><input type=radio name=user value="{html.escape(u.id)}"{" checked" if i == 0 else ""}> '
        f"{html.escape(u.name)} <span class=muted>{html.escape(u.upn)}</span></label>"
        for i, u in enumerate(connection.users)
    )
    done = " (already answered)" if pending.code or pending.refused else ""
    body = (f"<h1>Sign in to {html.escape(connection.name)}{done}</h1>"
            f"<p>botemu's test identity provider. The bot asks for: "
            f"<b>{html.escape(', '.join(connection.scopes))}</b>.</p>"
            f'<form method=post action="/_signin"><input type=hidden name=state '
            f'value="{html.escape(state.raw)}"><fieldset><legend>Test user</legend>{options}'
            f"<label>or another: <input name=other aria-label='Another user id'></label></fieldset>"
            f"<button name=answer value=consent>Consent</button> "
            f"<button name=answer value=refuse>Refuse</button></form>")  # fmt: skip
    return _html(200, "Sign in", body)


async def _consent(request: web.Request) -> web.Response:
    service = request.app[TOKENSERVICE]
    form = await request.post()
    try:
        state = read_state(str(form.get("state", "")))
    except ValueError as e:
        return _html(400, "Sign-in", f"<p class=problem>{html.escape(str(e))}</p>")
    pending = service.tokens.begin(state)
    if form.get("answer") != "consent":
        service.refuse(pending)
        return _html(200, "Sign-in refused", "<p>You refused: the bot gets no token.</p>")
    user = str(form.get("other") or form.get("user") or "")[:200]
    if not user:
        return _html(400, "Sign-in", "<p class=problem>Pick a test user.</p>")
    code = service.consent(pending, user)
    complete = request.app.get(COMPLETE)
    if complete is not None:
        await complete(code, {"connection": state.connection, "conversation": state.conversation_id,
                              "app_id": state.app_id, "user": state.user_id})  # fmt: skip
    return _html(200, "Signed in", f"<p>Signed in as <b>{html.escape(user)}</b>.</p>"
                 f"<p>The magic code is <output id=code>{code}</output>; botemu has given it to "
                 "the bot (a channel that asks the person for it shows it here).</p>")  # fmt: skip


def _html(status: int, title: str, body: str) -> web.Response:
    page = (f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>"
            "<style>body{font:15px system-ui;margin:2em auto;max-width:40em}label{display:block;"
            "margin:.3em 0}.muted{color:#666}.problem{color:#a00}</style>"
            f"<body>{body}</body></html>")  # fmt: skip
    return web.Response(status=status, text=page, content_type="text/html", headers={
        "X-Frame-Options": "DENY", "Content-Security-Policy": "default-src 'none'; "
        "style-src 'unsafe-inline'; form-action 'self'", "Cache-Control": "no-store"})  # fmt: skip
