"""The connector's state: conversations, their activities and members, and uploaded attachments.

Pure: no aiohttp, no asyncio, no I/O. Operations take the parsed JSON bodies (checked here:
``check_activity``, ``check_attachment_data``), return JSON-shaped values ready to serialise,
and raise the domain errors of ``errors.py``. One ``ConnectorState``
per running emulator, owned by the app, resettable.

Ownership: the bot whose app id created or opened a conversation owns it. Every operation on a
conversation (or on an attachment uploaded to one) takes ``bot=``: when it is given and is not the
owner, the operation raises Forbidden. ``bot=None`` is botemu itself (``botemu chat``, delivery).
An unknown id raises NotFound before ownership is looked at.

Not thread-safe: use it from the event loop that serves the connector.
"""

from __future__ import annotations

import base64
import binascii
import copy
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from emulator.connector.errors import (
    ServiceError,
    bad_argument,
    forbidden,
    missing_property,
    not_found,
)
from emulator.jsonutil import JSON, JSONObject, kind_of

log = logging.getLogger(__name__)
T = TypeVar("T")

LIST_PAGE_SIZE = 100
"""Conversations per page of ``GET /v3/conversations``."""
DEFAULT_MEMBERS_PAGE = 200
MAX_MEMBERS_PAGE = 500
"""``pagedmembers``: the page size when none is given, and the largest one honoured."""

ActivityListener = Callable[[str, JSONObject], None]
"""Called with (conversation id, activity) for every activity stored, updated or deleted."""
ConversationListener = Callable[["Conversation"], None]
"""Called with every conversation created or opened, before any activity is stored in it."""


# --- checking bodies ---------------------------------------------------------------------------

CHANNEL_ID = "botemu"
"""The ``channelId`` of every activity botemu stores."""
ACTIVITY_TYPES = tuple(
    "message event invoke messageReaction endOfConversation handoff typing conversationUpdate"
    " trace installationUpdate contactRelationUpdate suggestion deleteUserData messageUpdate"
    " messageDelete".split()
)
"""The activity types of spec section Events, "Activities through the connector"."""
_BY_LOWER = {t.lower(): t for t in ACTIVITY_TYPES}
_STRINGS = tuple(
    "id text speak name locale textFormat inputHint replyToId attachmentLayout summary"
    " topicName timestamp localTimestamp".split()
)
_OBJECTS = tuple("from recipient conversation suggestedActions relatesTo".split())
_ARRAYS = tuple(
    "attachments entities membersAdded membersRemoved reactionsAdded reactionsRemoved".split()
)
_CONTENT = ("text", "speak", "attachments", "suggestedActions", "channelData", "value")
"""A message with none of these (non-empty) is empty: accepted, with a warning."""


def check_activity(value: object, path: str = "$") -> tuple[JSONObject, list[str]]:
    """Check an Activity body; return a deep copy of it and the warnings about it.

    Refused (400): not an object or a non-string ``type`` or a mistyped well-known property
    (BadArgument), no ``type`` or an attachment or entity without its ``contentType``/``type``
    (MissingProperty). Accepted with a warning: an unknown type (forward compatibility), a
    known type in another case, an empty message, an event or invoke without ``name``."""
    if not isinstance(value, Mapping):
        raise bad_argument(f"{path}: an activity must be a JSON object, got {kind_of(value)}")
    if value.get("type") is None:
        raise missing_property(f"{path}.type", f"{path}.type is required (the activity type)")
    kind = value["type"]
    if not isinstance(kind, str):
        raise bad_argument(f"{path}.type must be a string, got {kind_of(kind)}")
    if not kind.strip():
        raise bad_argument(f"{path}.type must not be empty")
    for names, wanted in ((_STRINGS, str), (_OBJECTS, Mapping), (_ARRAYS, list)):
        for name in names:
            item = value.get(name)
            if item is not None and not isinstance(item, wanted):
                raise bad_argument(f"{path}.{name} must be {_NOUN[wanted]}, got {kind_of(item)}")
    for name in ("from", "recipient", "conversation"):
        account = value.get(name)
        if isinstance(account, Mapping) and not isinstance(account.get("id", ""), str | None):
            raise bad_argument(f"{path}.{name}.id must be a string")
    _check_items(value, "attachments", "contentType", path)
    _check_items(value, "entities", "type", path)
    return copy.deepcopy(dict(value)), _warnings(value, kind)


_NOUN: dict[object, str] = {str: "a string", Mapping: "an object", list: "an array"}


def _check_items(activity: Mapping[str, JSON], name: str, key: str, path: str) -> None:
    items = activity.get(name)
    for i, item in enumerate(items if isinstance(items, list) else ()):
        where = f"{path}.{name}[{i}]"
        if not isinstance(item, Mapping):
            raise bad_argument(f"{where} must be an object, got {kind_of(item)}")
        if item.get(key) is None:
            raise missing_property(f"{where}.{key}")
        if not isinstance(item[key], str):
            raise bad_argument(f"{where}.{key} must be a string, got {kind_of(item[key])}")


def _warnings(activity: Mapping[str, JSON], kind: str) -> list[str]:
    known = _BY_LOWER.get(kind.lower())
    if known is None:
        return [f"unknown activity type {kind!r}: stored and passed on as is"]
    out = [] if known == kind else [f"activity type {kind!r} is written {known!r} in the spec"]
    if known == "message" and not any(activity.get(k) not in (None, "", [], {}) for k in _CONTENT):
        out.append(
            "an empty message (no text, attachments, suggestedActions, channelData or "
            "value): accepted, but real channels may refuse it or show nothing"
        )
    if known in ("event", "invoke") and not activity.get("name"):
        out.append(f"an {known} without a name: the name selects the task (spec, Events)")
    return out


def check_attachment_data(value: object) -> tuple[str, str | None, dict[str, tuple[str, str]]]:
    """Check AttachmentData; return its type, name and views: ``{view: (path, base64 text)}``.

    ``type`` is served back as the views' Content-Type, so it may not hold control characters;
    without it the views are ``application/octet-stream`` (the real service answers such an
    upload with 200 and an id, in the SDK's own recordings). At least one of
    ``originalBase64`` / ``thumbnailBase64`` is required."""
    if not isinstance(value, Mapping):
        raise bad_argument(f"AttachmentData must be an object, got {kind_of(value)}")
    content_type = value.get("type")
    if content_type is None:
        content_type = UNTYPED_ATTACHMENT
    if not isinstance(content_type, str) or not content_type.strip():
        raise bad_argument(f"$.type must be a non-empty string, got {kind_of(content_type)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in content_type):
        raise bad_argument("$.type must not contain control characters")
    name = _optional(value, "name", str)
    views: dict[str, tuple[str, str]] = {}
    for view, key in (("original", "originalBase64"), ("thumbnail", "thumbnailBase64")):
        text = _optional(value, key, str)
        if text is not None:
            views[view] = (f"$.{key}", text)
    if not views:
        raise missing_property("$.originalBase64", "$.originalBase64 is required")
    return content_type, name, views


UNTYPED_ATTACHMENT = "application/octet-stream"
"""The Content-Type of an attachment uploaded without ``type``."""
TENANT_ID_PYTHON = "tenantID"
"""How the Python SDK spells ``tenantId`` in ConversationParameters (accepted, with a note)."""


def conversation_warnings(params: object) -> list[str]:
    """Notes about ConversationParameters that are accepted as they are."""
    if isinstance(params, Mapping) and TENANT_ID_PYTHON in params and "tenantId" not in params:
        return [f"$.{TENANT_ID_PYTHON} read as tenantId: the Python SDK's spelling; the "
                "connector's is tenantId"]  # fmt: skip
    return []


def _uuid_hex() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Attachment:
    """An uploaded attachment: its views (``original``, ``thumbnail``) hold the decoded bytes."""

    id: str
    conversation_id: str
    type: str
    name: str | None
    views: Mapping[str, bytes]

    def info(self) -> JSONObject:
        """The wire AttachmentInfo: ``{name, type, views: [{viewId, size}]}``."""
        views: list[JSON] = [{"viewId": v, "size": len(data)} for v, data in self.views.items()]
        return {"name": self.name, "type": self.type, "views": views}


@dataclass(eq=False, slots=True)
class Conversation:
    """One conversation. ``bot`` is the bot's ChannelAccount; ``members`` holds it first, then the
    users. ``activity_members`` keeps the members as they were when each activity was stored."""

    id: str
    bot_app_id: str
    bot: JSONObject
    members: list[JSONObject]
    activities: list[JSONObject] = field(default_factory=list)
    is_group: bool = False
    topic: str | None = None
    tenant_id: str | None = None
    channel_data: JSON = None
    created: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """What botemu accepted but would flag: unknown activity types, empty messages..."""
    activity_members: dict[str, list[JSONObject]] = field(default_factory=dict)

    @property
    def users(self) -> list[JSONObject]:
        return [m for m in self.members if m.get("id") != self.bot.get("id")]

    def account(self) -> JSONObject:
        """The wire ConversationAccount that activities carry in ``conversation``."""
        out: JSONObject = {"id": self.id, "isGroup": self.is_group}
        if self.topic is not None:
            out["name"] = self.topic
        if self.tenant_id is not None:
            out["tenantId"] = self.tenant_id
        return out

    def index_of(self, activity_id: str) -> int:
        for i in range(len(self.activities) - 1, -1, -1):
            if self.activities[i].get("id") == activity_id:
                return i
        raise not_found(f"conversation {self.id} has no activity {activity_id!r}")

    def activity(self, activity_id: str) -> JSONObject:
        return self.activities[self.index_of(activity_id)]

    def member(self, member_id: str) -> JSONObject:
        for m in self.members:
            if m.get("id") == member_id:
                return m
        raise not_found(f"conversation {self.id} has no member {member_id!r}")


class ConnectorState:
    """Every conversation and attachment of one running emulator."""

    def __init__(
        self,
        *,
        service_url: str,
        clock: Callable[[], float] = time.time,
        ids: Callable[[], str] = _uuid_hex,
    ) -> None:
        """``service_url`` goes into every activity's ``serviceUrl`` exactly as given (the Python
        SDK compares it with the token's ``serviceurl`` claim character for character)."""
        self.service_url = service_url
        self._clock = clock
        self._ids = ids
        self._conversations: dict[str, Conversation] = {}
        self._attachments: dict[str, Attachment] = {}
        self._listeners: list[ActivityListener] = []
        self._conversation_listeners: list[ConversationListener] = []

    # --- listeners and reset -------------------------------------------------------------------

    def add_listener(self, callback: ActivityListener) -> None:
        """``callback(conversation_id, activity)`` on every activity stored (a copy). An update
        is passed as a ``messageUpdate`` activity and a delete as a ``messageDelete`` one."""
        self._listeners.append(callback)

    def remove_listener(self, callback: ActivityListener) -> None:
        self._listeners.remove(callback)

    def add_conversation_listener(self, callback: ConversationListener) -> None:
        self._conversation_listeners.append(callback)

    def reset(self) -> None:
        """Forget every conversation and attachment. Listeners stay: they are wiring."""
        self._conversations.clear()
        self._attachments.clear()

    # --- conversations -------------------------------------------------------------------------

    def create_conversation(self, bot_app_id: str, params: Mapping[str, JSON]) -> JSONObject:
        """``POST /v3/conversations``: ConversationParameters in, ``{id, activityId?, serviceUrl}``
        out. A 1:1 conversation (``isGroup`` false) needs exactly one member; a group any
        number. The initial ``activity``, if any, is checked before anything is created."""
        if not isinstance(params, Mapping):
            raise bad_argument(f"ConversationParameters must be an object, got {kind_of(params)}")
        is_group = _optional(params, "isGroup", bool) or False
        topic = _optional(params, "topicName", str)
        tenant = _optional(params, "tenantId", str)
        if tenant is None:  # the Python SDK serializes ConversationParameters.tenant_id so
            tenant = _optional(params, TENANT_ID_PYTHON, str)
        raw_bot = params.get("bot")
        bot: JSONObject = {"id": bot_app_id}
        if raw_bot is not None:
            bot = _account(raw_bot, "$.bot")
        users = _accounts(params.get("members"), "$.members", skip=str(bot["id"]))
        if not is_group and len(users) != 1:
            raise bad_argument(
                f"a 1:1 conversation (isGroup false) needs exactly one member, got {len(users)}"
            )
        raw_activity = params.get("activity")
        if raw_activity is not None:
            check_activity(raw_activity, "$.activity")
        conversation = self._new_conversation(
            bot_app_id,
            bot,
            users,
            is_group=is_group,
            topic=topic,
            tenant=tenant,
            channel_data=params.get("channelData"),
        )
        out: JSONObject = {"id": conversation.id, "serviceUrl": self.service_url}
        if isinstance(raw_activity, Mapping):
            out["activityId"] = self.post_activity(conversation.id, raw_activity)
        return out

    def open_conversation(self, bot_app_id: str, user: Mapping[str, JSON]) -> Conversation:
        """A new 1:1 conversation between a user (a ChannelAccount with an ``id``) and the bot."""
        account = _account(user, "$.user")
        return self._new_conversation(bot_app_id, {"id": bot_app_id}, [account])

    def conversation(self, conversation_id: str, *, bot: str | None = None) -> Conversation:
        found = self._conversations.get(conversation_id)
        if found is None:
            raise not_found(f"no conversation {conversation_id!r}")
        if bot is not None and bot != found.bot_app_id:
            raise forbidden(f"bot {bot!r} is not a party to conversation {conversation_id!r}")
        return found

    def conversations(self, bot_app_id: str, continuation: str | None = None) -> JSONObject:
        """``GET /v3/conversations``: the bot's own conversations, oldest first, one page."""
        mine = [c for c in self._conversations.values() if c.bot_app_id == bot_app_id]
        page, token = _page(mine, continuation, LIST_PAGE_SIZE)
        items: list[JSON] = [{"id": c.id, "members": _json_copies(c.members)} for c in page]
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
            created=self._clock(),
        )
        self._conversations[conversation.id] = conversation
        for callback in list(self._conversation_listeners):
            _safely(callback, conversation)
        return conversation

    # --- activities ----------------------------------------------------------------------------

    def post_activity(
        self,
        conversation_id: str,
        activity: Mapping[str, JSON],
        *,
        reply_to: str | None = None,
        from_bot: bool = True,
        bot: str | None = None,
    ) -> str:
        """Check and store an activity (send, or reply when ``reply_to`` is given); return its id.

        botemu sets ``id``, ``timestamp``, ``serviceUrl``, ``channelId`` and ``conversation``;
        an absent ``from`` becomes the bot (or, for ``from_bot=False``, the first user) and an
        absent ``recipient`` the other party of a 1:1 conversation."""
        conversation = self.conversation(conversation_id, bot=bot)
        checked, warnings = check_activity(activity)
        if reply_to is not None:
            conversation.activity(reply_to)
            checked["replyToId"] = reply_to
        stored = self._stamp(conversation, checked, from_bot=from_bot)
        self._store(conversation, stored, warnings)
        return str(stored["id"])

    def update_activity(
        self,
        conversation_id: str,
        activity_id: str,
        activity: Mapping[str, JSON],
        *,
        bot: str | None = None,
    ) -> str:
        """Replace a stored activity, keeping its id, timestamp and (when absent from the new
        one) its ``from``, ``recipient`` and ``replyToId``. Returns the id."""
        conversation = self.conversation(conversation_id, bot=bot)
        checked, warnings = check_activity(activity)
        index = conversation.index_of(activity_id)
        old = conversation.activities[index]
        new = dict(checked)
        for key in ("from", "recipient", "replyToId"):
            if new.get(key) is None and key in old:
                new[key] = old[key]
        new.update(self._envelope(conversation), id=activity_id, timestamp=old.get("timestamp"))
        conversation.activities[index] = new
        conversation.warnings.extend(f"activity {activity_id}: {w}" for w in warnings)
        self._notify(conversation.id, {**new, "type": "messageUpdate"})
        return activity_id

    def delete_activity(
        self, conversation_id: str, activity_id: str, *, bot: str | None = None
    ) -> None:
        conversation = self.conversation(conversation_id, bot=bot)
        del conversation.activities[conversation.index_of(activity_id)]
        conversation.activity_members.pop(activity_id, None)
        notice: JSONObject = {"type": "messageDelete", "id": activity_id}
        notice.update(self._envelope(conversation), timestamp=self._timestamp())
        self._notify(conversation.id, notice)

    def history(
        self, conversation_id: str, transcript: Mapping[str, JSON], *, bot: str | None = None
    ) -> str:
        """``POST .../activities/history``: store past activities as given (their ids must be
        new to the conversation; absent ids and timestamps are assigned). All or nothing.
        Returns a new id for the upload."""
        conversation = self.conversation(conversation_id, bot=bot)
        if not isinstance(transcript, Mapping):
            raise bad_argument(f"a Transcript must be an object, got {kind_of(transcript)}")
        if "activities" not in transcript:
            raise missing_property("$.activities")
        raw = transcript["activities"]
        if not isinstance(raw, list):
            raise bad_argument(f"$.activities must be an array, got {kind_of(raw)}")
        seen = {a.get("id") for a in conversation.activities}
        checked: list[tuple[JSONObject, list[str]]] = []
        for i, item in enumerate(raw):
            activity, warnings = check_activity(item, f"$.activities[{i}]")
            given = activity.get("id")
            if given is not None and given in seen:
                raise bad_argument(f"$.activities[{i}].id {given!r} is already used")
            seen.add(given)
            checked.append((activity, warnings))
        for activity, warnings in checked:
            stored = self._stamp(conversation, activity, from_bot=True, keep=True)
            self._store(conversation, stored, warnings)
        return self._ids()

    def _envelope(self, conversation: Conversation) -> JSONObject:
        return {
            "conversation": conversation.account(),
            "channelId": CHANNEL_ID,
            "serviceUrl": self.service_url,
        }

    def _stamp(
        self,
        conversation: Conversation,
        activity: JSONObject,
        *,
        from_bot: bool,
        keep: bool = False,
    ) -> JSONObject:
        """Add the envelope, an id and a timestamp (``keep``: only where the activity has none)."""
        stored = {**activity, **self._envelope(conversation)}
        if not (keep and stored.get("id") is not None):
            stored["id"] = self._new_id({a.get("id") for a in conversation.activities})
        if not (keep and stored.get("timestamp") is not None):
            stored["timestamp"] = self._timestamp()
        users = conversation.users
        if stored.get("from") is None:
            if not from_bot and not users:
                raise bad_argument(f"conversation {conversation.id} has no user to send as")
            stored["from"] = copy.deepcopy(conversation.bot if from_bot else users[0])
        if stored.get("recipient") is None:
            if not from_bot:
                stored["recipient"] = copy.deepcopy(conversation.bot)
            elif not conversation.is_group and users:
                stored["recipient"] = copy.deepcopy(users[0])
        return stored

    def _store(self, conversation: Conversation, stored: JSONObject, warnings: list[str]) -> None:
        conversation.activities.append(stored)
        activity_id = str(stored["id"])
        conversation.activity_members[activity_id] = _copies(conversation.members)
        conversation.warnings.extend(f"activity {activity_id}: {w}" for w in warnings)
        self._notify(conversation.id, stored)

    def _notify(self, conversation_id: str, activity: JSONObject) -> None:
        for callback in list(self._listeners):
            _safely(callback, conversation_id, copy.deepcopy(activity))

    # --- members -------------------------------------------------------------------------------

    def members(self, conversation_id: str, *, bot: str | None = None) -> list[JSONObject]:
        return _copies(self.conversation(conversation_id, bot=bot).members)

    def member(self, conversation_id: str, member_id: str, *, bot: str | None = None) -> JSONObject:
        return copy.deepcopy(self.conversation(conversation_id, bot=bot).member(member_id))

    def remove_member(
        self, conversation_id: str, member_id: str, *, bot: str | None = None
    ) -> None:
        """Remove a user. The bot itself cannot be removed (BadArgument)."""
        conversation = self.conversation(conversation_id, bot=bot)
        member = conversation.member(member_id)
        if member is conversation.bot:
            raise bad_argument(f"the bot {member_id!r} cannot remove itself from a conversation")
        conversation.members.remove(member)

    def paged_members(
        self,
        conversation_id: str,
        page_size: int | None = None,
        token: str | None = None,
        *,
        bot: str | None = None,
    ) -> JSONObject:
        """PagedMembersResult ``{members, continuationToken}``; ``continuationToken`` is null on
        the last page. ``page_size`` defaults to 200 and is capped at 500."""
        conversation = self.conversation(conversation_id, bot=bot)
        if page_size is not None and page_size < 1:
            raise bad_argument(f"pageSize must be at least 1, got {page_size}")
        size = min(page_size or DEFAULT_MEMBERS_PAGE, MAX_MEMBERS_PAGE)
        page, next_token = _page(conversation.members, token, size)
        return {"members": _json_copies(page), "continuationToken": next_token}

    def activity_members(
        self, conversation_id: str, activity_id: str, *, bot: str | None = None
    ) -> list[JSONObject]:
        """The members of the conversation when the activity was stored."""
        conversation = self.conversation(conversation_id, bot=bot)
        conversation.activity(activity_id)
        return _copies(conversation.activity_members.get(activity_id, conversation.members))

    # --- attachments ---------------------------------------------------------------------------

    def upload_attachment(
        self, conversation_id: str, data: Mapping[str, JSON], *, bot: str | None = None
    ) -> str:
        """Store AttachmentData (base64 views decoded); return the attachment id."""
        conversation = self.conversation(conversation_id, bot=bot)
        content_type, name, encoded = check_attachment_data(data)
        views: dict[str, bytes] = {}
        for view, (path, text) in encoded.items():
            try:
                views[view] = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError) as e:
                raise bad_argument(f"{path} is not base64: {e}") from e
        attachment = Attachment(
            self._new_id(self._attachments), conversation.id, content_type, name, views
        )
        self._attachments[attachment.id] = attachment
        return attachment.id

    def attachment(self, attachment_id: str, *, bot: str | None = None) -> Attachment:
        found = self._attachments.get(attachment_id)
        if found is None or found.conversation_id not in self._conversations:
            raise not_found(f"no attachment {attachment_id!r}")
        self.conversation(found.conversation_id, bot=bot)
        return found

    def attachment_info(self, attachment_id: str, *, bot: str | None = None) -> JSONObject:
        return self.attachment(attachment_id, bot=bot).info()

    def attachment_view(
        self, attachment_id: str, view_id: str, *, bot: str | None = None
    ) -> tuple[bytes, str]:
        """The bytes of one view and the content type they were uploaded with."""
        attachment = self.attachment(attachment_id, bot=bot)
        if view_id not in attachment.views:
            raise not_found(f"attachment {attachment_id!r} has no view {view_id!r}")
        return attachment.views[view_id], attachment.type

    def attachment_conversation(self, attachment_id: str) -> str | None:
        """The conversation an attachment was uploaded to, or None: never raises."""
        found = self._attachments.get(attachment_id)
        return None if found is None else found.conversation_id

    # --- ids and time --------------------------------------------------------------------------

    def _new_id(self, taken: Mapping[str, object] | set[JSON]) -> str:
        for _ in range(100):
            new = self._ids()
            if new not in taken:
                return new
        raise ServiceError("the id source keeps returning ids already in use")

    def _timestamp(self) -> str:
        moment = datetime.fromtimestamp(self._clock(), UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- helpers -----------------------------------------------------------------------------------


def _optional(params: Mapping[str, JSON], name: str, kind: type[T]) -> T | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise bad_argument(f"$.{name} must be {_KINDS[kind]}, got {kind_of(value)}")
    return value


_KINDS: dict[type, str] = {bool: "a boolean", str: "a string"}


def _account(value: object, path: str) -> JSONObject:
    """A ChannelAccount: an object with a string ``id``."""
    if not isinstance(value, Mapping):
        raise bad_argument(f"{path} must be an object (a ChannelAccount), got {kind_of(value)}")
    if value.get("id") is None:
        raise missing_property(f"{path}.id")
    if not isinstance(value["id"], str) or not value["id"]:
        raise bad_argument(f"{path}.id must be a non-empty string")
    return copy.deepcopy(dict(value))


def _accounts(value: object, path: str, *, skip: str) -> list[JSONObject]:
    """ChannelAccounts, without the one whose id is ``skip`` and without repeats."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_argument(f"{path} must be an array, got {kind_of(value)}")
    out: dict[str, JSONObject] = {}
    for i, item in enumerate(value):
        account = _account(item, f"{path}[{i}]")
        if account["id"] != skip:
            out.setdefault(str(account["id"]), account)
    return list(out.values())


def _page(items: list[T], token: str | None, size: int) -> tuple[list[T], str | None]:
    """One page from a continuation token (botemu's tokens are offsets, as decimal text)."""
    start = 0
    if token:
        if not token.isdecimal() or int(token) > len(items):
            raise bad_argument(f"continuationToken {token!r} is not one botemu issued")
        start = int(token)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _copies(items: list[JSONObject]) -> list[JSONObject]:
    return [copy.deepcopy(m) for m in items]


def _json_copies(items: list[JSONObject]) -> list[JSON]:
    return [copy.deepcopy(m) for m in items]


def _safely(callback: Callable[..., None], *args: object) -> None:
    try:
        callback(*args)
    except Exception:  # a listener must never break the connector
        log.exception("connector listener %r failed", callback)
