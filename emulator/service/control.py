"""The control API of a running botemu, kept apart from the emulated platform API under
``/_botemu/``: ``chat``, ``token``, ``config``, the probes and the pytest plugin talk to it.

==================================================  ============================================
``GET  /_botemu/health``                            ``{"status": "ok", "version"}``
``GET  /_botemu/config``                            every spec placeholder of the active profile,
                                                    plus ``bots`` (app ids and endpoints; with
                                                    the control secret, ``app_password`` and
                                                    ``anonymous`` too)
``POST /_botemu/keys/rotate``                       a new signing key; the old one stays published
                                                    for the grace period
``POST /_botemu/reset``                             forget every conversation
``POST /_botemu/token``  ``{"app_id"}``             a token as the token endpoint issues it
``POST /_botemu/calling/token``  ``{"app_id"}``     the Bearer token of calling requests to a bot
                                                    (``{"token", "expires_in", "app_id"}``)
``POST /_botemu/bots``  ``{"endpoint"}``           the bot registered at a messaging endpoint,
                                                    or a new anonymous bot there
                                                    (``{"app_id", "anonymous"}``)
``POST /_botemu/chat``  ``{"app_id", "text",``      a user message to a bot (opening a conversation
``"conversation_id"?, "activity"?, "token"?,``      with conversationUpdate the first time); with
``"version"?, "channel"?}``                         ``activity``, any activity (event, invoke, ...);
                                                    ``token: "emulator"`` sends emulator-path
                                                    tokens, of ``version`` "1.0" or "2.0"; a new
                                                    conversation is on ``channel`` (webchat)
``POST /_botemu/signin`` ``{"conversation_id",``   the person signs in as that user (``refuse:``)
``"as"}``                                           when the bot asks in that conversation
``GET  /_botemu/conversations/{id}/activities``     the conversation's activities (``?after=N``)
``GET  /_botemu/conversations/{id}/events``         its transcript events with seq > N
                                                    (``?after=N``; at most 500 a page)
``POST /_botemu/probe/auth``  ``{"bot", "app_id",``  the auth conformance probe, run with the
``"calling"?}``                                     emulator's own keys; with ``calling``, on the
                                                    calling path (docs/probe-auth.md)
``POST /_botemu/manifest/check``  ``{"manifest",``  a skill manifest checked against the running
``"endpoint"?, "consumer"?, "seed"?, "wait"?}``     skill (docs/manifest-check.md)
==================================================  ============================================

Every request passes ``emulator.guard`` first (docs/security.md): the Host check everywhere,
the Origin check on state-changing requests, and on every control POST ``Content-Type:
application/json`` and ``X-Botemu-Secret`` (the run's secret, in ``<certs>/control-secret``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from emulator import __version__
from emulator.calling.tokens import MAX_APP_ID
from emulator.channels import channel
from emulator.channels.directline import DIRECTLINE
from emulator.config import BotRegistration
from emulator.conformance.auth import PROBE_USER, TokenFactory, check_url, probe_auth
from emulator.conformance.tls import ProbeError
from emulator.connector.errors import ConnectorError
from emulator.connector.sender import TokenKind
from emulator.findings import Finding
from emulator.guard import GUARD, SECRET_HEADER
from emulator.jsonutil import JSONObject
from emulator.manifest.check import (
    DEFAULT_CONSUMER,
    SkillCheckError,
    UnregisteredSkill,
    check_skill,
    pick_endpoint,
)
from emulator.service.directline import directline_document
from emulator.service.memory import give_back
from emulator.service.signin import arm_sign_in
from emulator.service.state import CONTROL, EMULATOR, MAX_URL, Emulator, config_document
from emulator.transcripts.store import TranscriptError


def control_routes() -> list[web.RouteDef]:
    return [
        web.get(f"{CONTROL}/health", _health),
        web.get(f"{CONTROL}/config", _config),
        web.post(f"{CONTROL}/keys/rotate", _rotate),
        web.post(f"{CONTROL}/reset", _reset),
        web.post(f"{CONTROL}/token", _token),
        web.post(f"{CONTROL}/calling/token", _calling_token),
        web.post(f"{CONTROL}/bots", _bots),
        web.post(f"{CONTROL}/chat", _chat),
        web.post(f"{CONTROL}/signin", _signin),
        web.get(f"{CONTROL}/conversations/{{id}}/activities", _activities),
        web.get(f"{CONTROL}/conversations/{{id}}/events", _events),
        web.post(f"{CONTROL}/probe/auth", _probe_auth),
        web.post(f"{CONTROL}/manifest/check", _manifest_check),
    ]


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "version": __version__})


async def _config(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR]
    document = config_document(emulator.config)
    if emulator.platform is not None:
        document["platform"] = emulator.platform
    guard = request.app.get(GUARD)
    trusted = guard is not None and guard.secret_ok(request.headers.get(SECRET_HEADER, ""))
    if DIRECTLINE in request.app:
        document["directline"] = directline_document(request.app, emulator.config.base_url,
                                                     secrets=trusted)  # fmt: skip
    if trusted:  # botemu's own clients (botemu env) get each bot's password
        document["bots"] = [{**shown, "app_password": bot.app_password, "anonymous": bot.anonymous}
                            for shown, bot in zip(_bots_shown(document), emulator.config.bots,
                                                  strict=True)]  # fmt: skip
    return web.json_response(document)


def _bots_shown(document: JSONObject) -> list[JSONObject]:
    """The ``bots`` of a configuration document, in the order of the configuration's."""
    listed = document.get("bots")
    return [b for b in listed if isinstance(b, dict)] if isinstance(listed, list) else []


async def _rotate(request: web.Request) -> web.Response:
    keys = request.app[EMULATOR].identity.keys
    new = keys.rotate()
    return web.json_response({"kid": new.kid, "published": [k.kid for k in keys.published()]})


async def _reset(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR]
    emulator.connector.reset()
    emulator.opened.clear()
    if DIRECTLINE in request.app:
        request.app[DIRECTLINE].reset()
    give_back()  # what was freed goes back to the system, not only to the heap
    return web.json_response({"status": "reset"})


async def _body(request: web.Request) -> JSONObject:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    except RecursionError:  # json.loads of [[[[...: a client error, not a crash
        raise web.HTTPBadRequest(text="the body is not JSON: nested too deeply") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object")
    return body


def _string(body: JSONObject, name: str, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise web.HTTPBadRequest(text=f"{name} is required (a string)")
    return value


async def _token(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR]
    app_id = _string(await _body(request), "app_id")
    assert app_id is not None
    emulator.bot(app_id)
    token, expires_in = emulator.identity.token_for(app_id)
    return web.json_response(
        {"token_type": "Bearer", "access_token": token, "expires_in": expires_in}
    )


async def _calling_token(request: web.Request) -> web.Response:
    """The Bearer token the calling platform sends to the bot ``app_id`` (registered or not):
    a connector-path token for the bot's audience, cached until five minutes before expiry."""
    emulator = request.app[EMULATOR]
    app_id = _string(await _body(request), "app_id")
    assert app_id is not None
    if len(app_id) > MAX_APP_ID:
        raise web.HTTPBadRequest(text=f"app_id is over {MAX_APP_ID} characters")
    token, expires = emulator.tokens.calling(app_id)
    expires_in = max(0, int(expires - emulator.clock()))
    return web.json_response({"token": token, "expires_in": expires_in, "app_id": app_id})


TOKEN_VERSIONS = ("1.0", "2.0")
"""The ``ver`` of emulator-path tokens ``POST /_botemu/chat`` sends (field notes)."""


async def _bots(request: web.Request) -> web.Response:
    """``POST /_botemu/bots`` ``{"endpoint"}``: the bot registered at that messaging endpoint,
    registered now as an anonymous bot if none is: ``{"app_id", "anonymous"}``."""
    endpoint = _string(await _body(request), "endpoint")
    assert endpoint is not None
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(endpoint) > MAX_URL:
        raise web.HTTPBadRequest(text="endpoint is an http(s) URL")
    bot = request.app[EMULATOR].bot_at(endpoint)
    return web.json_response({"app_id": bot.app_id, "anonymous": bot.anonymous})


async def _chat(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR]
    body = await _body(request)
    app_id = _string(body, "app_id")
    assert app_id is not None
    activity = body.get("activity")
    if activity is not None and (not isinstance(activity, dict) or not activity.get("type")):
        raise web.HTTPBadRequest(text="activity is an object with a type")
    text = _string(body, "text", required=activity is None)
    conversation_id = _string(body, "conversation_id", required=False)
    kind = TokenKind.EMULATOR if body.get("token") == "emulator" else TokenKind.CONNECTOR
    version = body.get("version", "1.0")  # of emulator-path tokens: where the app id is
    if version not in TOKEN_VERSIONS:
        raise web.HTTPBadRequest(text='version is "1.0" (appid) or "2.0" (azp)')
    if "version" in body and kind is not TokenKind.EMULATOR:
        raise web.HTTPBadRequest(text='version is for emulator-path tokens ("token": "emulator")')
    channel_name = _string(body, "channel", required=False)
    sign_in_as = _string(body, "sign_in_as", required=False)
    if sign_in_as is not None and not 0 < len(sign_in_as) <= 200:
        raise web.HTTPBadRequest(text="sign_in_as is a user id of 1 to 200 characters")
    try:
        channel(channel_name)
    except ValueError as e:
        raise web.HTTPBadRequest(text=str(e)) from None
    try:
        conversation_id, activity_id, answer = await emulator.chat(
            app_id, text, conversation_id, kind, activity, version=str(version),
            channel=channel_name, sign_in_as=sign_in_as,
        )  # fmt: skip
    except ConnectorError as e:
        raise web.HTTPBadRequest(text=str(e)) from e
    result: JSONObject = {
        "app_id": app_id,
        "conversation_id": conversation_id,
        "activity_id": activity_id,
        "status": answer.status,
        "failure": answer.failure,
    }
    return web.json_response(result)


async def _signin(request: web.Request) -> web.Response:
    """``POST /_botemu/signin`` ``{"conversation_id", "as"}``: the person signs in as that test
    user (``"refuse:"`` refuses) when the bot asks in that conversation (service/signin.py)."""
    body = await _body(request)
    conversation_id = _string(body, "conversation_id")
    user = _string(body, "as")
    assert conversation_id is not None and user is not None
    if len(user) > 200 or conversation_id not in request.app[EMULATOR].opened:
        raise web.HTTPBadRequest(text="conversation_id is an open conversation; as, a user id")
    await arm_sign_in(request.app, conversation_id, user)
    return web.json_response({"status": "armed"})


EVENTS_PAGE = 500


async def _events(request: web.Request) -> web.Response:
    """``{"events": [...], "next": seq}``: what crossed the wire in the conversation, both ways
    (deliveries to the bot with their answers, the bot's requests to the connector, findings),
    as ``botemu chat`` shows it."""
    emulator = request.app[EMULATOR]
    try:
        after = int(request.query.get("after", "0"))
    except ValueError:
        raise web.HTTPBadRequest(text="after is a number") from None
    try:
        events = emulator.store.events(request.match_info["id"], after=after)[:EVENTS_PAGE]
    except TranscriptError as e:
        raise web.HTTPNotFound(text=str(e)) from e
    return web.json_response({
        "events": [e.to_json() for e in events],
        "next": events[-1].seq if events else after,
    })  # fmt: skip


async def _activities(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR]
    try:
        conversation = emulator.connector.conversation(request.match_info["id"])
    except ConnectorError as e:
        raise web.HTTPNotFound(text=str(e)) from e
    try:
        after = int(request.query.get("after", "0"))
    except ValueError:
        raise web.HTTPBadRequest(text="after is a number") from None
    return web.json_response(conversation.since(after))


# --- probe auth ---------------------------------------------------------------------------------


async def _probe_auth(request: web.Request) -> web.Response:
    """``POST /_botemu/probe/auth`` ``{"bot"?, "app_id"?, "timeout"?, "calling"?}``: run the
    auth probe (``emulator.conformance.auth``) with this botemu's keys, placeholders, profile and
    clock; ``{"bot", "app_id", "conversation_id", "findings"}``. The bot must be registered (its
    replies authenticate at the connector): without ``app_id``, the bot registered at ``bot``;
    without ``bot``, the endpoint of ``app_id``. With ``"calling": true``, the calling probe
    (``auth_calling``; also ``"certs"?``, ``"ca"?``: the client certificate for an https bot,
    default this botemu's certs directory): any app id, or the bot registered with ``bot`` as
    its calling endpoint, or the only one; ``{"bot", "app_id", "calling", "call_id",
    "findings"}``. 400 bad input, 404 no such bot, 502 bot unreachable."""
    emulator = request.app[EMULATOR]
    body = await _body(request)
    app_id, url = _string(body, "app_id", required=False), _string(body, "bot", required=False)
    timeout = body.get("timeout", 10.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise web.HTTPBadRequest(text="timeout is a number of seconds, more than 0, at most 3600")
    if not isinstance(body.get("calling", False), bool):
        raise web.HTTPBadRequest(text="calling is true or false")
    if body.get("calling"):
        return await _probe_calling(emulator, body, app_id, url, float(timeout))
    return await _probe_messaging(emulator, _messaging_bot(emulator, app_id, url), url,
                                  float(timeout))  # fmt: skip


async def _probe_calling(
    emulator: Emulator, body: JSONObject, app_id: str | None, url: str | None, timeout: float
) -> web.Response:
    """The calling auth probe (``auth_calling``): one Conversation per case."""
    from pathlib import Path

    from emulator.conformance import auth_calling as calling
    from emulator.errors import BotemuError

    assert emulator.sender is not None
    certs, ca = _string(body, "certs", required=False), _string(body, "ca", required=False)
    try:
        app_id, url = calling.pick_bot(emulator.config.bots, app_id, url)
        ssl = calling.client_ssl(url, Path(certs or emulator.config.certs_dir),
                                 Path(ca) if ca else None)  # fmt: skip
    except calling.NoCallingBot as e:
        raise web.HTTPNotFound(text=str(e)) from None
    except BotemuError as e:
        raise web.HTTPBadRequest(text=str(e)) from None
    factory = TokenFactory(emulator.identity.keys, emulator.tokens.placeholders,
                           emulator.config.profile, app_id, clock=emulator.clock)  # fmt: skip
    try:
        call_id, findings = await calling.probe_recorded(
            emulator.store, url, factory, http=emulator.sender.http, timeout=timeout, ssl=ssl
        )
    except ProbeError as e:
        raise web.HTTPBadGateway(text=str(e)) from None
    return web.json_response({"bot": url, "app_id": app_id, "calling": True,
                              "call_id": call_id, "findings": [f.to_json() for f in findings]})  # fmt: skip


def _messaging_bot(emulator: Emulator, app_id: str | None, url: str | None) -> BotRegistration:
    """The registered bot the messaging probe runs against (404 when none is)."""
    if app_id is not None:
        bot = emulator.config.bot(app_id)
    elif url is not None:
        bot = next((b for b in emulator.config.bots if b.endpoint == url), None)
    else:
        raise web.HTTPBadRequest(text="give app_id or bot (or both)")
    if bot is None:
        which = f"with app id {app_id}" if app_id else f"at {url}"
        raise web.HTTPNotFound(
            text=f"no bot is registered {which}; the probe needs one (its replies must "
            "authenticate at the connector): botemu serve --bot-endpoint URL --app-id ID "
            "--app-password PW"
        )
    return bot


async def _probe_messaging(
    emulator: Emulator, bot: BotRegistration, url: str | None, timeout: float
) -> web.Response:
    """The messaging auth probe, in a conversation of its own that records each finding."""
    assert emulator.sender is not None
    url = url or bot.endpoint
    if url is None:
        raise web.HTTPBadRequest(text=f"bot {bot.app_id} has no messaging endpoint: give bot")
    try:
        check_url(url)
    except ProbeError as e:
        raise web.HTTPBadRequest(text=str(e)) from None
    conversation = emulator.connector.open_conversation(bot.app_id, PROBE_USER)

    def stage(activity: JSONObject) -> JSONObject:
        activity_id = emulator.connector.post_activity(conversation.id, activity, from_bot=False)
        return dict(conversation.activity(activity_id))

    def note(finding: Finding) -> None:
        emulator.record(conversation.id, "finding", {"summary": str(finding), **finding.to_json()})

    factory = TokenFactory(emulator.identity.keys, emulator.tokens.placeholders,
                           emulator.config.profile, bot.app_id, clock=emulator.clock)  # fmt: skip
    try:
        findings = await probe_auth(url, factory, http=emulator.sender.http, timeout=timeout,
                                    on_finding=note, stage=stage, anonymous=bot.anonymous)  # fmt: skip
    except ProbeError as e:
        raise web.HTTPBadGateway(text=str(e)) from None
    return web.json_response({
        "bot": url,
        "app_id": bot.app_id,
        "conversation_id": conversation.id,
        "findings": [f.to_json() for f in findings],
    })  # fmt: skip


# --- manifest check -----------------------------------------------------------------------------


async def _manifest_check(request: web.Request) -> web.Response:
    """``POST /_botemu/manifest/check`` ``{"manifest", "endpoint"?, "consumer"?, "seed"?,
    "wait"?, "timeout"?}``: send the skill each activity its manifest declares and judge what
    comes back (``emulator.manifest.check``); ``{"endpoint", "skill", "app_id", "findings"}``.
    The skill's platformAppId must be registered (its replies authenticate at the connector):
    nothing is registered here. 400 bad input, 404 the skill is not registered."""
    emulator = request.app[EMULATOR]
    body = await _body(request)
    manifest = body.get("manifest")
    if not isinstance(manifest, dict):
        raise web.HTTPBadRequest(text="manifest is required (the manifest document, an object)")
    endpoint = _string(body, "endpoint", required=False)
    consumer = _string(body, "consumer", required=False) or DEFAULT_CONSUMER
    seed = body.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise web.HTTPBadRequest(text="seed is an integer")
    limits = {"wait": (5.0, 0.0), "timeout": (10.0, 0.001)}
    numbers: dict[str, float] = {}
    for name, (default, least) in limits.items():
        value = body.get(name, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not least <= value <= 600
        ):
            raise web.HTTPBadRequest(text=f"{name} is a number of seconds, at most 600")
        numbers[name] = float(value)
    assert emulator.sender is not None
    try:
        chosen = pick_endpoint(manifest, endpoint)
        findings = await check_skill(manifest, endpoint, emulator, http=emulator.sender.http,
                                     consumer_app_id=consumer, seed=seed, wait=numbers["wait"],
                                     timeout=numbers["timeout"])  # fmt: skip
    except UnregisteredSkill as e:
        raise web.HTTPNotFound(text=str(e)) from None
    except SkillCheckError as e:
        raise web.HTTPBadRequest(text=str(e)) from None
    result: dict[str, object] = {
        "endpoint": chosen.name,
        "skill": chosen.url,
        "app_id": chosen.app_id,
        "findings": [f.to_json() for f in findings],
    }
    return web.json_response(result)
