"""The connector's state: conversations, their activities and members, and uploaded attachments.

Pure: no aiohttp, no asyncio, no I/O. Operations take the parsed JSON bodies (checked with
``check_activity``, ``check_attachment_data``), return JSON-shaped values ready to serialise,
and raise the domain errors of ``errors.py``. One ``ConnectorState`` per running emulator,
owned by the app, resettable.

This module holds the state and its operations on conversations; the module of each resource
holds its checks and the rest of the operations: ``activities.py``, ``members.py``,
``attachments.py`` (``conversations.py`` the ``Conversation`` record, ``state.py`` the lookups
they share, ``bodies.py`` the pieces of bodies they share).

Ownership: the bot whose app id created or opened a conversation owns it. Every operation on a
conversation (or on an attachment uploaded to one) takes ``bot=``: when it is given and is not the
owner, the operation raises Forbidden. ``bot=None`` is botemu itself (``botemu chat``, delivery).
An unknown id raises NotFound before ownership is looked at.

Not thread-safe: use it from the event loop that serves the connector.
"""

from __future__ import annotations

import copy
import os
import threading
import time
from collections.abc import Callable, Mapping

from emulator.config import MemoryLimits
from emulator.connector.activities import ACTIVITY_TYPES, CHANNEL_ID, ActivityOps, check_activity
from emulator.connector.attachments import (
    UNTYPED_ATTACHMENT,
    Attachment,
    AttachmentOps,
    check_attachment_data,
)
from emulator.connector.bodies import (
    channel_account,
    channel_accounts,
    json_copies,
    optional,
    page_of,
)
from emulator.connector.conversations import (
    TENANT_ID_PYTHON,
    Conversation,
    conversation_warnings,
)
from emulator.connector.errors import TooManyRequests, bad_argument
from emulator.connector.members import DEFAULT_MEMBERS_PAGE, MAX_MEMBERS_PAGE, MemberOps
from emulator.connector.state import ActivityListener, ConversationListener, safely
from emulator.jsonutil import JSON, JSONObject, kind_of

__all__ = [
    "ACTIVITY_TYPES",
    "CHANNEL_ID",
    "DEFAULT_MEMBERS_PAGE",
    "LIST_PAGE_SIZE",
    "MAX_MEMBERS_PAGE",
    "TENANT_ID_PYTHON",
    "UNTYPED_ATTACHMENT",
    "ActivityListener",
    "Attachment",
    "ConnectorState",
    "Conversation",
    "ConversationListener",
    "check_activity",
    "check_attachment_data",
    "conversation_warnings",
]

LIST_PAGE_SIZE = 100
"""Conversations per page of ``GET /v3/conversations``."""


class _Uuid4Hex:
    """``uuid.uuid4().hex``: 122 bits from ``os.urandom`` with the version (4) and variant bits
    set, as ``uuid4`` sets them, but the random bytes are read, marked and written in hex for
    256 ids at a time. The system call costs more than the id (and it lets other threads take
    the GIL, such as the transcript writer); a forked child drops the pool, so it never repeats
    its parent's ids."""

    IDS = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool = ""
        self._at = 0
        os.register_at_fork(after_in_child=self._drop)

    def _drop(self) -> None:
        self._lock = threading.Lock()
        self._pool, self._at = "", 0

    def __call__(self) -> str:
        with self._lock:
            at = self._at
            if at + 32 > len(self._pool):
                self._pool, at = uuid4_hex(os.urandom(16 * self.IDS)), 0
            self._at = at + 32
            return self._pool[at : at + 32]


def uuid4_hex(random: bytes) -> str:
    """The hex of ``uuid.UUID(bytes=b, version=4)`` for each 16 bytes ``b`` of ``random``, one
    after the other: byte 6 takes the version in its high nibble, byte 8 the variant (RFC 4122)
    in its two high bits."""
    marked = bytearray(random)
    marked[6::16] = bytes((b & 0x0F) | 0x40 for b in marked[6::16])
    marked[8::16] = bytes((b & 0x3F) | 0x80 for b in marked[8::16])
    return marked.hex()


_uuid_hex = _Uuid4Hex()


class ConnectorState(ActivityOps, MemberOps, AttachmentOps):
    """Every conversation and attachment of one running emulator."""

    def __init__(
        self,
        *,
        service_url: str,
        clock: Callable[[], float] = time.time,
        ids: Callable[[], str] = _uuid_hex,
        limits: MemoryLimits | None = None,
    ) -> None:
        """``service_url`` goes into every activity's ``serviceUrl`` exactly as given (the Python
        SDK compares it with the token's ``serviceurl`` claim character for character)."""
        super().__init__(service_url=service_url, clock=clock, ids=ids)
        self._attachments = {}
        self._attachment_bytes = {}
        limits = limits or MemoryLimits()
        self.attachment_limits = (limits.attachment_bytes, limits.attachment_bytes_per_bot)
        self.activities_kept = max(1, limits.activities_kept)
        self.conversations_per_bot = max(1, limits.conversations_per_bot)
        """Conversations one bot may create (``POST /v3/conversations``) until a reset."""
        self._created: dict[str, int] = {}
        """Conversations each bot created (by app id), since the last reset."""

    def reset(self) -> None:
        """Forget every conversation and attachment. Listeners stay: they are wiring."""
        self._conversations.clear()
        self._created.clear()
        self._attachments.clear()
        self._attachment_bytes.clear()

    # --- conversations -------------------------------------------------------------------------

    def create_conversation(self, bot_app_id: str, params: Mapping[str, JSON]) -> JSONObject:
        """``POST /v3/conversations``: ConversationParameters in, ``{id, activityId?, serviceUrl}``
        out. A 1:1 conversation (``isGroup`` false) needs exactly one member; a group any
        number. The initial ``activity``, if any, is checked before anything is created. A bot
        that already created ``conversations_per_bot`` of them is refused (TooManyRequests, 429)
        until a reset: nothing else forgets a conversation, so a bot that creates them in a loop
        would otherwise hold memory without end."""
        if not isinstance(params, Mapping):
            raise bad_argument(f"ConversationParameters must be an object, got {kind_of(params)}")
        is_group = optional(params, "isGroup", bool) or False
        topic = optional(params, "topicName", str)
        tenant = optional(params, "tenantId", str)
        if tenant is None:  # the Python SDK serializes ConversationParameters.tenant_id so
            tenant = optional(params, TENANT_ID_PYTHON, str)
        raw_bot = params.get("bot")
        bot: JSONObject = {"id": bot_app_id}
        if raw_bot is not None:
            bot = channel_account(raw_bot, "$.bot")
        users = channel_accounts(params.get("members"), "$.members", skip=str(bot["id"]))
        if not is_group and len(users) != 1:
            raise bad_argument(
                f"a 1:1 conversation (isGroup false) needs exactly one member, got {len(users)}"
            )
        raw_activity = params.get("activity")
        if raw_activity is not None:
            check_activity(raw_activity, "$.activity")
        created = self._created.get(bot_app_id, 0)
        if created >= self.conversations_per_bot:
            raise TooManyRequests(
                f"bot {bot_app_id!r} has created {created} conversations, the most botemu keeps "
                "for one bot (botemu serve --max-conversations-per-bot; POST /_botemu/reset "
                "frees them)")  # fmt: skip
        conversation = self._new_conversation(
            bot_app_id,
            bot,
            users,
            is_group=is_group,
            topic=topic,
            tenant=tenant,
            channel_data=params.get("channelData"),
        )
        self._created[bot_app_id] = created + 1
        out: JSONObject = {"id": conversation.id, "serviceUrl": self.service_url}
        if isinstance(raw_activity, Mapping):
            out["activityId"] = self.post_activity(conversation.id, raw_activity)
        return out

    def open_conversation(
        self,
        bot_app_id: str,
        user: Mapping[str, JSON],
        *,
        channel_id: str = CHANNEL_ID,
        tenant: str | None = None,
        conversation_type: str | None = None,
        channel_data: JSON = None,
    ) -> Conversation:
        """A new 1:1 conversation between a user (a ChannelAccount with an ``id``) and the bot,
        on the channel ``channel_id`` (with that channel's tenant, ``conversationType`` and
        ``channelData``, when it has them)."""
        account = channel_account(user, "$.user")
        conversation = self._new_conversation(
            bot_app_id, {"id": bot_app_id}, [account], tenant=tenant, channel_data=channel_data,
            channel_id=channel_id, conversation_type=conversation_type,
        )  # fmt: skip
        return conversation

    def conversations(self, bot_app_id: str, continuation: str | None = None) -> JSONObject:
        """``GET /v3/conversations``: the bot's own conversations, oldest first, one page."""
        mine = [c for c in self._conversations.values() if c.bot_app_id == bot_app_id]
        page, token = page_of(mine, continuation, LIST_PAGE_SIZE)
        items: list[JSON] = [{"id": c.id, "members": json_copies(c.members)} for c in page]
        return {"conversations": items, "continuationToken": token}

    def _new_conversation(
        self,
        bot_app_id: str,
        bot: JSONObject,
        users: list[JSONObject],
        *,
        is_group: bool = False,
        topic: str | None = None,
        tenant: str | None = None,
        channel_data: JSON = None,
        channel_id: str = CHANNEL_ID,
        conversation_type: str | None = None,
    ) -> Conversation:
        bot = {**bot, "role": bot.get("role", "bot")}
        conversation = Conversation(
            id=self._new_id(self._conversations),
            bot_app_id=bot_app_id,
            bot=bot,
            members=[bot, *users],
            is_group=is_group,
            topic=topic,
            tenant_id=tenant,
            channel_data=copy.deepcopy(channel_data),
            channel_id=channel_id,
            conversation_type=conversation_type,
            created=self._clock(),
        )
        self._conversations[conversation.id] = conversation
        for callback in list(self._conversation_listeners):
            safely(callback, conversation)
        return conversation
