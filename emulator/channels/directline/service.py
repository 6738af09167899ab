"""Direct Line's conversations: what the REST routes and the stream do, without aiohttp.

A Direct Line conversation is a conversation of botemu's connector on the channel
``directline`` (``webchat`` when the client says it is Web Chat), opened as a channel opens one:
the ``conversationUpdate`` that adds the bot and the user goes to the bot first. The user's
activities are stored and delivered through the connector (signed, as every channel's); the
bot's replies reach the conversation through the connector's listener. Every activity of the
conversation, the user's included, is kept in order with its **watermark** (its position, from
0): ``GET activities?watermark=W`` gives those from W on (typing only goes over the stream),
and a socket gets what came after its watermark first, then each activity as it comes.

Bounds (``Limits``): conversations per bot, activities kept per conversation (older ones are
left out of ``GET``, as the real service drops them), an activity's bytes, sockets in all and
per conversation, and each socket's outbox (a socket that falls that far behind is closed with
a reason and reconnects from its watermark).
"""

from __future__ import annotations

import asyncio
import secrets as random_ids
import time
from collections.abc import Awaitable, Callable, Mapping

from emulator.channels import CHANNELS, open_on, shaped
from emulator.channels.directline.errors import DirectLineError, not_found
from emulator.channels.directline.grants import Grant, Grants
from emulator.channels.directline.model import (
    Conversation,
    Limits,
    Outbox,
    channel_of,
    id_of,
    named,
    read_origins,
    read_user,
    read_watermark,
    streaming,
)
from emulator.config import BotRegistration
from emulator.connector.activities import activity_warnings
from emulator.connector.errors import ConnectorError
from emulator.connector.models import ConnectorState
from emulator.connector.sender import BotAnswer
from emulator.jsonutil import JSON, JSONObject, copy_object, dumps

Deliver = Callable[[BotRegistration, str, JSONObject], Awaitable[BotAnswer]]
Record = Callable[[str, str, JSONObject], None]
Delivering = Callable[[str, JSONObject], None]
"""(conversation id, the stored activity) just before it goes to the bot."""
Answered = Callable[[str, JSONObject, BotAnswer], None]
"""(conversation id, the stored activity, the bot's HTTP answer) once the bot answered it."""


def bot_key(bot: BotRegistration) -> str:
    """How a bot's secret is keyed: its app id, or its endpoint when it has none."""
    return (bot.endpoint or bot.app_id) if bot.anonymous else bot.app_id


class DirectLine:
    """The Direct Line service of one running botemu (see the module docstring)."""

    def __init__(
        self,
        connector: ConnectorState,
        grants: Grants,
        *,
        bots: Callable[[], tuple[BotRegistration, ...]],
        deliver: Deliver,
        record: Record,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.connector = connector
        self.grants = grants
        self._bots = bots
        self._deliver = deliver
        self.record = record
        self.upload_key = random_ids.token_bytes(32)
        """Signs the URLs of uploaded files (``routes.capability``)."""
        self.limits = limits or Limits()
        self._clock = clock
        self.conversations: dict[str, Conversation] = {}
        self.sockets = 0
        self.delivering: list[Delivering] = []
        self.answered: list[Answered] = []
        """Told of each user activity around its delivery (botemu's own web chat reads the
        bot's answers and checks them against a skill manifest so)."""
        connector.add_listener(self._heard, wants=lambda cid: cid in self.conversations)

    # --- bots and grants -------------------------------------------------------------------

    def bot(self, key: str) -> BotRegistration:
        for bot in self._bots():
            if bot.endpoint and bot_key(bot) == key:
                return bot
        raise DirectLineError(403, "Forbidden", "no bot of botemu's has this secret any more")

    def secrets(self) -> dict[str, str]:
        """Each messaging bot's secret, by its key (made now for a bot that has none yet)."""
        return {bot_key(b): self.grants.secret(bot_key(b)) for b in self._bots() if b.endpoint}

    def conversation(self, grant: Grant, conversation_id: str) -> Conversation:
        found = self.conversations.get(conversation_id)
        if found is None or found.bot != grant.bot:
            raise not_found(conversation_id)
        if not grant.may_open(conversation_id):
            raise DirectLineError(403, "Forbidden", "this token is for another conversation")
        return found

    def reset(self) -> None:
        for conversation in self.conversations.values():
            for outbox in conversation.sockets:
                outbox.end("botemu was reset")
        self.conversations.clear()

    def close(self, conversation_id: str, reason: str) -> None:
        """End a conversation: its tokens open nothing any more, its sockets are closed."""
        conversation = self.conversations.pop(conversation_id, None)
        if conversation is not None:
            for outbox in conversation.sockets:
                outbox.end(reason)

    # --- tokens and conversations ----------------------------------------------------------

    def generate(self, grant: Grant, body: Mapping[str, JSON], agent: str) -> JSONObject:
        """``POST /tokens/generate``: a token for a new conversation (and user, and origins)."""
        if grant.kind != "secret":
            raise DirectLineError(403, "Forbidden", "tokens are generated with the secret")
        user = read_user(body.get("user"))
        origins = read_origins(body.get("trustedOrigins"))
        conversation = self._open(grant.bot, user, channel_of(agent))
        token, lifetime = self.grants.token(grant.bot, conversation.id, id_of(user), origins)
        return {"conversationId": conversation.id, "token": token, "expires_in": lifetime}

    def open_for(
        self, bot: BotRegistration, user: JSONObject, channel_id: str, origin: str
    ) -> JSONObject:
        """A conversation of botemu's own client (the log view's web chat) with ``bot`` on
        ``channel_id`` (any of ``CHANNELS``), as ``/tokens/generate`` answers: its token is
        bound to it, to ``user`` and to the page's ``origin``."""
        if channel_id not in CHANNELS:
            raise DirectLineError(400, "BadArgument", f"no channel {channel_id[:40]!r}")
        conversation = self._open(bot_key(bot), read_user(dict(user)), channel_id)
        token, lifetime = self.grants.token(conversation.bot, conversation.id,
                                            id_of(conversation.user), (origin.rstrip("/"),))  # fmt: skip
        return {"conversationId": conversation.id, "token": token, "expires_in": lifetime}

    def refresh(self, grant: Grant) -> JSONObject:
        """``POST /tokens/refresh``: a new token for the same conversation and user."""
        if grant.kind != "token" or grant.conversation is None:
            raise DirectLineError(403, "Forbidden", "only a token can be refreshed")
        token, lifetime = self.grants.token(grant.bot, grant.conversation, grant.user,
                                            grant.origins)  # fmt: skip
        return {"conversationId": grant.conversation, "token": token, "expires_in": lifetime}

    async def start(
        self, grant: Grant, body: Mapping[str, JSON], agent: str, base: str
    ) -> tuple[int, JSONObject]:
        """``POST /conversations``: (201, a new conversation) or, for a token whose conversation
        has begun, (200, the same)."""
        if grant.kind == "secret":
            user = read_user(body.get("user"))
            conversation = self._open(grant.bot, user, channel_of(agent))
        else:
            assert grant.conversation is not None
            conversation = self.conversation(grant, grant.conversation)
            if conversation.user is None:
                conversation.user = read_user(body.get("user"))
        status = 200 if conversation.started else 201
        if not conversation.started:
            conversation.started = True
            await self._begin(conversation)
        return status, self._session(grant, conversation, base)

    def reconnect(
        self, grant: Grant, conversation_id: str, base: str, watermark: str | None = None
    ) -> JSONObject:
        """``GET /conversations/{id}?watermark=``: a new ``streamUrl`` (and token) for the
        conversation, whose socket starts after ``watermark`` (from the start without one)."""
        conversation = self.conversation(grant, conversation_id)
        return self._session(grant, conversation, base, read_watermark(watermark))

    def _session(
        self, grant: Grant, conversation: Conversation, base: str, watermark: int = 0
    ) -> JSONObject:
        user = id_of(conversation.user) if grant.kind == "secret" else grant.user
        token, lifetime = self.grants.token(conversation.bot, conversation.id, user,
                                            grant.origins)  # fmt: skip
        stream, _ = self.grants.token(conversation.bot, conversation.id, user, kind="stream")
        url = f"{base}/conversations/{conversation.id}/stream?t={stream}"
        if watermark:
            url += f"&watermark={watermark}"
        url = url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        return {"conversationId": conversation.id, "token": token, "expires_in": lifetime,
                "streamUrl": url}  # fmt: skip

    def _open(self, key: str, user: JSONObject | None, channel_id: str) -> Conversation:
        bot = self.bot(key)
        mine = sum(1 for c in self.conversations.values() if c.bot == key)
        if mine >= self.limits.conversations_per_bot:
            raise DirectLineError(429, "TooManyRequests", f"this bot has {mine} Direct Line "
                                  "conversations, the most botemu keeps: reset, or raise "
                                  "the bound (docs/directline.md)")  # fmt: skip
        account = user or {"id": f"dl_{random_ids.token_hex(8)}"}
        opened = open_on(self.connector, bot.app_id, {**account, "role": "user"}, channel_id)
        conversation = Conversation(opened.id, key, bot.app_id, channel_id, user)
        self.conversations[opened.id] = conversation
        return conversation

    async def _begin(self, conversation: Conversation) -> None:
        """The conversationUpdate that adds the bot (and the user, when known) to the bot."""
        bot = self.bot(conversation.bot)
        added: list[JSON] = [{"id": bot.app_id, "name": bot.name or "bot"}]
        if conversation.user is not None:
            added.append(dict(conversation.user))
            conversation.announced.add(str(conversation.user["id"]))
        update: JSONObject = {"type": "conversationUpdate", "membersAdded": added}
        await self._send(conversation, update, conversation.user, quiet=True)

    async def _announce(self, conversation: Conversation, user: JSONObject) -> None:
        """A user the bot has not been told of joins before their first activity, as the
        service does when a conversation was started with no user (a secret, a token without
        one): a conversationUpdate adding them."""
        conversation.announced.add(str(user["id"]))
        update: JSONObject = {"type": "conversationUpdate", "membersAdded": [dict(user)]}
        await self._send(conversation, update, user, quiet=True)

    # --- activities ------------------------------------------------------------------------

    async def post(self, grant: Grant, conversation_id: str, activity: JSONObject) -> str:
        """``POST /conversations/{id}/activities``: the user's activity, delivered; its id."""
        conversation = self.conversation(grant, conversation_id)
        self._count(conversation)
        sender = activity.get("from")
        if (
            not isinstance(sender, dict)
            or not isinstance(sender.get("id"), str)
            or not sender["id"]
        ):
            raise DirectLineError(400, "BadArgument", "the activity needs from.id (the user)")
        if grant.user is not None and sender["id"] != grant.user:
            raise DirectLineError(403, "Forbidden", f"this token is for user {grant.user!r}, "
                                  f"not {str(sender['id'])[:60]!r}")  # fmt: skip
        if not isinstance(activity.get("type"), str):
            raise DirectLineError(400, "BadArgument", "the activity needs a type")
        try:
            activity_warnings(activity)
        except ConnectorError as e:
            raise DirectLineError(400, "BadArgument", str(e)) from None
        if not conversation.started:
            conversation.started = True
            conversation.user = conversation.user or {"id": sender["id"]}
            await self._begin(conversation)
        if sender["id"] not in conversation.announced:
            await self._announce(conversation, {"id": sender["id"], **named(sender)})
        return await self._send(conversation, activity, dict(sender))

    async def _send(
        self,
        conversation: Conversation,
        activity: JSONObject,
        user: JSONObject | None,
        *,
        quiet: bool = False,
    ) -> str:
        bot = self.bot(conversation.bot)
        fields = {k: v for k, v in activity.items()
                  if k not in ("id", "serviceUrl", "conversation", "recipient", "channelId")}  # fmt: skip
        fields["from"] = {**(user or {"id": "user"}), "role": "user"}
        fields["recipient"] = {"id": bot.app_id, "name": bot.name or "bot", "role": "bot"}
        fields["conversation"] = {"id": conversation.id}
        try:
            shaped_fields = shaped(self.connector.conversation(conversation.id), fields)
            activity_id = self.connector.post_activity(conversation.id, shaped_fields,
                                                       from_bot=False)  # fmt: skip
        except ConnectorError as e:
            raise DirectLineError(400, "BadArgument", str(e)) from None
        stored = self.connector.conversation(conversation.id).activity(activity_id)
        for delivering in self.delivering:
            delivering(conversation.id, stored)
        answer = await self._deliver(bot, conversation.id, copy_object(stored))
        for answered in self.answered:
            answered(conversation.id, stored, answer)
        if not quiet and (answer.status is None or answer.status >= 400):
            why = answer.failure or f"the bot answered {answer.status}"
            code = "BotTimeout" if answer.failure and "no answer" in answer.failure else "BotError"
            raise DirectLineError(504 if code == "BotTimeout" else 502, code, why)
        return activity_id

    def activity_set(self, grant: Grant, conversation_id: str, watermark: str | None) -> JSONObject:
        """``GET /conversations/{id}/activities``: those from ``watermark`` on (no typing)."""
        conversation = self.conversation(grant, conversation_id)
        self._count(conversation)
        since = read_watermark(watermark)
        return {"activities": list(conversation.since(since, stream=False)),
                "watermark": str(conversation.next)}  # fmt: skip

    def _heard(self, conversation_id: str, activity: JSONObject) -> None:
        """The connector stored (or changed) an activity of a Direct Line conversation."""
        conversation = self.conversations.get(conversation_id)
        if conversation is None:
            return
        kind = activity.get("type")
        if kind == "messageUpdate":
            activity["type"] = "message"
        only = kind == "typing" and not streaming(activity)
        size = len(dumps(activity))
        log, limits = conversation.log, self.limits
        log.append((conversation.next, activity, only, size))
        conversation.kept += size
        while len(log) > limits.activities_kept or (
            conversation.kept > limits.activities_kept_bytes and len(log) > 1
        ):
            conversation.kept -= log.popleft()[3]
        conversation.next += 1
        item: JSONObject = {"activities": [activity], "watermark": str(conversation.next)}
        for outbox in list(conversation.sockets):
            outbox.push(item, size + 40)

    def _count(self, conversation: Conversation) -> None:
        """At most ``requests_per_minute`` of a conversation's requests (429 above)."""
        now = self._clock()
        times = conversation.requests
        while times and times[0] < now - 60:
            times.popleft()
        if len(times) >= self.limits.requests_per_minute:
            raise DirectLineError(429, "TooManyRequests", "too many requests in a minute")
        times.append(now)

    # --- sockets ---------------------------------------------------------------------------

    def attach(self, conversation: Conversation) -> Outbox:
        if self.sockets >= self.limits.sockets:
            raise DirectLineError(429, "TooManyRequests", f"{self.sockets} sockets are open")
        if len(conversation.sockets) >= self.limits.sockets_per_conversation:
            raise DirectLineError(429, "TooManyRequests", "this conversation has "
                                  f"{len(conversation.sockets)} sockets open")  # fmt: skip
        outbox = Outbox(asyncio.Queue(self.limits.outbox + 1), self.limits.outbox_bytes)
        conversation.sockets.add(outbox)
        self.sockets += 1
        return outbox

    def detach(self, conversation: Conversation, outbox: Outbox) -> None:
        if outbox in conversation.sockets:
            conversation.sockets.discard(outbox)
            self.sockets -= 1


__all__ = ["CHANNELS", "Conversation", "DirectLine", "Limits", "Outbox", "bot_key"]
