"""The one state object of a running botemu (``Emulator``, under ``EMULATOR`` on its app), and
the configuration document the control API answers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from aiohttp import web

from emulator.channels import open_on, shaped
from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.connector.models import ConnectorState
from emulator.connector.sender import ActivitySender, BotAnswer, BotTokens, TokenKind
from emulator.identity.routes import IdentityService
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import TranscriptError, TranscriptStore

CONTROL = "/_botemu"
MAX_URL = 2048
USER: JSONObject = {"id": "user-1", "name": "User", "role": "user"}


@dataclass
class Emulator:
    """The one state object of a running botemu (owned by the app, resettable)."""

    config: ServiceConfig
    identity: IdentityService
    connector: ConnectorState
    store: TranscriptStore
    tokens: BotTokens
    clock: Callable[[], float] = time.time
    sender: ActivitySender | None = None
    opened: dict[str, str] = field(default_factory=dict)
    """Conversation id -> app id of conversations opened through the control API."""
    sign_in_as: dict[str, str] = field(default_factory=dict)
    """Conversation id -> the test user who signs in whenever the bot asks (``refuse:`` to
    refuse): ``botemu chat --sign-in-as`` (service/signin.py)."""
    busy: dict[str, int] = field(default_factory=dict)
    """Conversation id -> activities being delivered to the bot now."""
    platform: JSONObject | None = None
    """How a bot reaches the listener of the platform's hosts, once it runs
    (``service/platform_hosts.py``)."""

    def bot(self, app_id: str) -> BotRegistration:
        bot = self.config.bot(app_id)
        if bot is None:
            raise web.HTTPNotFound(text=f"no bot registered with app id {app_id}")
        return bot

    def bot_at(self, endpoint: str) -> BotRegistration:
        """The bot registered at the messaging ``endpoint``; one that is not is registered now
        as an anonymous bot (an SDK template with no credentials), so ``botemu chat --bot URL``
        reaches any bot through a running botemu."""
        for bot in self.config.bots:
            if bot.endpoint == endpoint:
                return bot
        number = sum(b.anonymous for b in self.config.bots) + 1
        bot = BotRegistration(anonymous_app_id(number), "", endpoint, anonymous=True)
        self.config = replace(self.config, bots=(*self.config.bots, bot))
        return bot

    def record(self, conversation_id: str, kind: str, payload: JSONObject) -> None:
        try:
            self.store.append(conversation_id, kind, payload)
        except TranscriptError:
            pass  # a conversation the store does not know: recording never fails a send

    async def chat(
        self,
        app_id: str,
        text: str | None,
        conversation_id: str | None,
        kind: TokenKind,
        activity: JSONObject | None = None,
        *,
        version: str = "1.0",
        channel: str | None = None,
        sign_in_as: str | None = None,
    ) -> tuple[str, str, BotAnswer]:
        """Send a user's message (or any ``activity``: event, invoke, typing, ...) to a bot;
        (conversation id, activity id, the bot's answer). ``version``: the ``ver`` of
        emulator-path tokens (1.0, the app id in ``appid``; 2.0, in ``azp``). ``channel``: the
        channel of a conversation opened now (``emulator.channels``; the default when None).
        ``sign_in_as``: who signs in when the bot asks, from now on in this conversation."""
        assert self.sender is not None
        bot = self.bot(app_id)
        if conversation_id is None or conversation_id not in self.opened:
            conversation = open_on(self.connector, app_id, USER, channel)
            conversation_id = conversation.id
            self.opened[conversation_id] = app_id
            if sign_in_as:
                self.sign_in_as[conversation_id] = sign_in_as
            update = self.activity(conversation_id, app_id, {
                "type": "conversationUpdate",
                "membersAdded": [dict(USER), {"id": app_id, "name": bot.name or "bot"}],
            })  # fmt: skip
            # Stored like every activity botemu delivers, so the bot can reply to it (the
            # template's greeting in on_members_added_activity) and ask for its members.
            update["id"] = self.connector.post_activity(conversation_id, update, from_bot=False)
            await self.sender.send(bot, conversation_id, update, kind=kind, version=version)
        fields: JSONObject = dict(activity) if activity else {"type": "message", "text": text}
        message = self.activity(conversation_id, app_id, fields)
        activity_id = self.connector.post_activity(conversation_id, message, from_bot=False)
        message["id"] = activity_id
        if sign_in_as:
            self.sign_in_as[conversation_id] = sign_in_as
        self.busy[conversation_id] = self.busy.get(conversation_id, 0) + 1
        try:
            answer = await self.sender.send(bot, conversation_id, message, kind=kind,
                                            version=version)  # fmt: skip
        finally:
            self.busy[conversation_id] -= 1
        return conversation_id, activity_id, answer

    def activity(self, conversation_id: str, app_id: str, fields: JSONObject) -> JSONObject:
        """A user's activity to the bot in the conversation, in its channel's shape."""
        return shaped(self.connector.conversation(conversation_id), {
            "id": uuid.uuid4().hex,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clock())),
            "from": dict(USER),
            "recipient": {"id": app_id, "role": "bot"},
            "conversation": {"id": conversation_id},
            **fields,
        })  # fmt: skip


EMULATOR = web.AppKey("emulator", Emulator)


def config_document(config: ServiceConfig) -> JSONObject:
    """The object ``GET /_botemu/config`` answers: every placeholder name (without braces) of
    the active profile, plus the registered bots."""
    out: JSONObject = dict(config.placeholders().to_json())
    out["bots"] = [
        {"app_id": b.app_id, "endpoint": b.endpoint, "calling_endpoint": b.calling_endpoint,
         "name": b.name}
        for b in config.bots
    ]  # fmt: skip
    return out


