"""The token service beside a running botemu, and the channel's part in a sign-in: once the
person consents (the sign-in page, ``botemu chat --sign-in-as``), botemu, as the channel, gives
the bot the magic code in that conversation: a ``signin/verifyState`` invoke on ``msteams``, the
person typing it on the other channels (both SDK families redeem it with ``GetToken?code=``;
docs/oauth.md)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Coroutine
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiohttp import web

from emulator.config import OAuthSettings
from emulator.connector.sender import TokenKind
from emulator.jsonutil import JSON, JSONObject
from emulator.service.state import EMULATOR, USER, Emulator
from emulator.tokenservice import (
    COMPLETE,
    RECORD,
    TOKENSERVICE,
    Completion,
    OAuthConnection,
    SignInState,
    TokenService,
    default_connections,
    made_up_user,
    read_state,
    test_users,
    tokenservice_routes,
)
from emulator.tokenservice.rules import code_ignored, no_connection

log = logging.getLogger(__name__)


def setup_signin(app: web.Application) -> TokenService:
    """Mount the token service on ``app`` with the configured OAuth connections."""
    emulator = app[EMULATOR]
    service = TokenService(emulator.identity.keys, _connections(emulator.config.oauth_connections),
                           emulator.config.base_url, clock=emulator.clock)  # fmt: skip
    app[TOKENSERVICE] = service

    async def complete(code: str, state: JSONObject) -> None:
        conversation = state.get("conversation")
        if not isinstance(conversation, str) or conversation not in emulator.opened:
            return  # a conversation this botemu does not carry: the person types the code
        try:
            given = _code_activity(emulator, conversation, code)
            await emulator.chat(emulator.opened[conversation], None, conversation,
                                TokenKind.CONNECTOR, given)  # fmt: skip
        except Exception:  # the sign-in page answers whatever the bot does
            log.exception("sign-in: the magic code could not be delivered")
            return
        start(_redeemed_in_time(service, emulator, conversation, code))

    def record(conversation: str | None, kind: str, payload: JSONObject) -> None:
        if conversation is not None:
            emulator.record(conversation, kind, payload)

    app[COMPLETE] = complete
    app[RECORD] = record
    app.add_routes(tokenservice_routes())
    tasks: set[asyncio.Task[None]] = set()

    def start(work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def heard(conversation_id: str, activity: JSONObject) -> None:
        if not activity.get("attachments"):
            return
        _check_card(emulator, conversation_id, activity)
        user = emulator.sign_in_as.get(conversation_id)
        state = _asked(emulator, conversation_id, activity)
        if user is not None and state is not None:
            start(_sign_in(service, emulator, state, user, complete, _exchange_of(activity)))

    # Only the conversations botemu carries as the channel (a sign-in needs a user side): the
    # others, a bot's own, cost no copy of each of their activities.
    emulator.connector.add_listener(heard, wants=lambda cid: cid in emulator.opened)
    return service


def _code_activity(emulator: Emulator, conversation: str, code: str) -> JSONObject:
    """How the channel gives the bot the magic code: Teams sends ``signin/verifyState``; the
    other channels (Web Chat, Direct Line) show the code to the person, who types it in the
    chat, a six-digit message (the platform's SDKs' ActivityHandler answers a verifyState invoke
    with 501 outside Teams, and their OAuthPrompt and the Agents SDK take a typed code)."""
    if emulator.connector.conversation(conversation).channel_id == "msteams":
        return {"type": "invoke", "name": "signin/verifyState", "value": {"state": code}}
    return {"type": "message", "text": code}


def _check_card(emulator: Emulator, conversation_id: str, activity: JSONObject) -> None:
    """SIGNIN-NO-CONNECTION for a bot's OAuth card that names no connection."""
    sender = activity.get("from")
    attachments = activity.get("attachments")
    if (
        not isinstance(sender, dict)
        or sender.get("role") == "user"
        or not isinstance(attachments, list)
    ):
        return
    for attachment in attachments:
        if not isinstance(attachment, dict) or attachment.get("contentType") != CARDS[0]:
            continue
        content = attachment.get("content")
        if not isinstance(content, dict) or not content.get("connectionName"):
            finding = no_connection(str(activity.get("id")))
            emulator.record(conversation_id, "finding", {"summary": str(finding),
                                                         **finding.to_json()})  # fmt: skip


def _connections(configured: tuple[OAuthSettings, ...]) -> dict[str, OAuthConnection]:
    """The configured connections (with their users, or the default ones), or the default
    connection when none is configured."""
    if not configured:
        return default_connections()
    defaults = test_users()
    found: dict[str, OAuthConnection] = {}
    for c in configured:
        users = tuple(made_up_user(user_id, name) for user_id, name in c.users) or defaults
        found[c.name] = OAuthConnection(c.name, c.scopes, c.lifetime, users, sso=c.sso)
    return found


CARDS = ("application/vnd.microsoft.card.oauth", "application/vnd.microsoft.card.signin")
MAX_WAIT = 200
"""At most this many 50 ms waits for the bot's turn to end before the code is given."""


def _asked(emulator: Emulator, conversation_id: str, activity: JSONObject) -> SignInState | None:
    """The sign-in a bot's activity asks for (an OAuth or sign-in card), or None."""
    sender = activity.get("from")
    if not isinstance(sender, dict) or sender.get("role") == "user":
        return None
    attachments = activity.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        if isinstance(attachment, dict) and attachment.get("contentType") in CARDS:
            content = attachment.get("content")
            if isinstance(content, dict):
                return _state_of(emulator, conversation_id, content)
    return None


def _state_of(emulator: Emulator, conversation_id: str, card: JSONObject) -> SignInState | None:
    """The card's sign-in link's state, or (a card with no link, as outside Teams) the state a
    channel makes for the card's connection, as the channel fetches the link itself."""
    buttons = card.get("buttons")
    for button in buttons if isinstance(buttons, list) else []:
        value = button.get("value") if isinstance(button, dict) else None
        if isinstance(value, str) and "state=" in value:
            raw = parse_qs(urlsplit(value).query).get("state", [""])[0]
            try:
                return read_state(raw)
            except ValueError:
                break
    name: JSON = card.get("connectionName")
    if not isinstance(name, str) or not name:
        return None
    state = {"connectionName": name, "msAppId": emulator.opened.get(conversation_id),
             "conversation": {"conversation": {"id": conversation_id}, "user": dict(USER),
                              "channelId": emulator.connector.conversation(conversation_id).channel_id,
                              "serviceUrl": emulator.config.base_url}}  # fmt: skip
    raw = base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")
    return read_state(raw)


async def _redeemed_in_time(
    service: TokenService, emulator: Emulator, conversation: str, code: str
) -> None:
    """SIGNIN-CODE-IGNORED when the bot has not redeemed ``code`` in ``service.code_wait``."""
    pending = next((p for p in service.tokens.pending.values() if p.code == code), None)
    if pending is None:
        return
    waited = 0.0
    while waited < service.code_wait and not pending.redeemed:
        await asyncio.sleep(0.05)
        waited += 0.05
    if not pending.redeemed:
        finding = code_ignored(conversation)
        emulator.record(conversation, "finding", {"summary": str(finding), **finding.to_json()})


async def arm_sign_in(app: web.Application, conversation_id: str, user: str) -> None:
    """The person signs in as ``user`` (``refuse:``: refuses) in the conversation: now, when the
    bot's last sign-in card there is unanswered, and whenever the bot asks from now on."""
    emulator = app[EMULATOR]
    emulator.sign_in_as[conversation_id] = user
    service = app[TOKENSERVICE]
    activities = emulator.connector.conversation(conversation_id).activities
    for activity in reversed(activities):
        state = _asked(emulator, conversation_id, activity)
        if state is not None:
            await _sign_in(service, emulator, state, user, app[COMPLETE], _exchange_of(activity))
            return


def sign_in_link(emulator: Emulator, conversation_id: str, connection: str) -> str:
    """The sign-in page's link for ``connection`` in the conversation."""
    state = _state_of(emulator, conversation_id, {"connectionName": connection})
    assert state is not None
    base = emulator.config.base_url
    return f"{base}/_signin?state={state.raw}"


def _exchange_of(activity: JSONObject) -> JSONObject | None:
    """The token exchange resource of a bot's OAuth card (single sign-on), if it has one."""
    attachments = activity.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        content = attachment.get("content") if isinstance(attachment, dict) else None
        resource = content.get("tokenExchangeResource") if isinstance(content, dict) else None
        if isinstance(resource, dict) and resource.get("uri"):
            return resource
    return None


async def _single_sign_on(
    service: TokenService, emulator: Emulator, state: SignInState, user: str,
    resource: JSONObject,
) -> bool:  # fmt: skip
    """On ``msteams``, the client's token exchange: ``signin/tokenExchange`` with the user's
    token for the resource's URI; whether the bot took it (200). Else the card stays."""
    conversation = state.conversation_id
    if conversation is None or conversation not in emulator.opened:
        return False
    if emulator.connector.conversation(conversation).channel_id != "msteams":
        return False
    connection = service.connection(state.connection)
    token = service.sso_token(service.user(connection, user), connection)
    invoke: JSONObject = {"type": "invoke", "name": "signin/tokenExchange", "value": {
        "id": resource.get("id"), "connectionName": connection.name, "token": token}}  # fmt: skip
    _, _, answer = await emulator.chat(emulator.opened[conversation], None, conversation,
                                       TokenKind.CONNECTOR, invoke)  # fmt: skip
    took = answer.status == 200
    emulator.record(conversation, "note", {"summary": "single sign-on: the bot " + (
        "took the exchanged token" if took else
        f"refused the exchange ({answer.status or answer.failure}): the card stays")})  # fmt: skip
    return took


async def _sign_in(
    service: TokenService,
    emulator: Emulator,
    state: SignInState,
    user: str,
    complete: Completion,
    exchange: JSONObject | None = None,
) -> None:
    """Sign in as ``user`` (or refuse, ``refuse:``) once the bot's turn is over, and give the
    bot the code as the channel does; on ``msteams`` with a token exchange resource, single
    sign-on first (``exchange``)."""
    conversation = state.conversation_id
    for _ in range(MAX_WAIT):
        if not conversation or not emulator.busy.get(conversation):
            break
        await asyncio.sleep(0.05)
    pending = service.tokens.begin(state)
    if pending.code is not None or pending.refused:
        return
    if exchange is not None and not user.startswith("refuse:"):
        if await _single_sign_on(service, emulator, state, user, exchange):
            return
    if user.startswith("refuse:"):
        service.refuse(pending)
        emulator.record(conversation or "", "note", {"summary": "sign-in: refused by the person"})
        return
    code = service.consent(pending, user)
    emulator.record(conversation or "", "note", {"summary": f"sign-in: signed in as {user[:100]}"})
    await complete(code, {"conversation": conversation})
