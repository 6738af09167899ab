"""Conversations: one conversation's members and activities, and notes on its parameters.

``Conversation`` is the record the state keeps (``models.ConnectorState``); looking up one of its
activities or members that is not there raises NotFound (``errors.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from emulator.connector.errors import not_found
from emulator.connector.streams import Stream
from emulator.jsonutil import JSON, JSONObject

DEFAULT_CHANNEL = "webchat"
"""The ``channelId`` of a conversation that names none (docs/decisions.md, "The default channel")."""

TENANT_ID_PYTHON = "tenantID"
"""How the Python SDK spells ``tenantId`` in ConversationParameters (accepted, with a note)."""


def conversation_warnings(params: object) -> list[str]:
    """Notes about ConversationParameters that are accepted as they are."""
    if isinstance(params, Mapping) and TENANT_ID_PYTHON in params and "tenantId" not in params:
        return [f"$.{TENANT_ID_PYTHON} read as tenantId: the Python SDK's spelling; the "
                "connector's is tenantId"]  # fmt: skip
    return []


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
    channel_id: str = DEFAULT_CHANNEL
    """The ``channelId`` of every activity of the conversation, both ways."""
    conversation_type: str | None = None
    """The ConversationAccount's ``conversationType`` (``personal`` on msteams), when set."""
    created: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """What botemu accepted but would flag: unknown activity types, empty messages..."""
    activity_members: dict[str, list[JSONObject]] = field(default_factory=dict)
    """The members when each activity was stored (never changed: the activities stored while
    the members stayed the same share one copy, ``members_seen``; read them through copies)."""
    members_seen: list[JSONObject] | None = None
    """A copy of ``members`` as the last activity stored saw them."""
    streams: dict[str, Stream] = field(default_factory=dict)
    """The bot's streamed replies by stream id; each is one activity of ``activities``, with
    that id (``streams.Stream.head``)."""
    dropped: int = 0
    """Activities no longer kept in memory (the oldest: ``ActivityOps`` keeps the last
    ``MemoryLimits.activities_kept``); the transcript store has them all."""

    @property
    def users(self) -> list[JSONObject]:
        return [m for m in self.members if m.get("id") != self.bot.get("id")]

    def account(self) -> JSONObject:
        """The wire ConversationAccount that activities carry in ``conversation``."""
        out: JSONObject = {"id": self.id, "isGroup": self.is_group}
        if self.topic is not None:
            out["name"] = self.topic
        if self.conversation_type is not None:
            out["conversationType"] = self.conversation_type
        if self.tenant_id is not None:
            out["tenantId"] = self.tenant_id
        return out

    def since(self, after: int) -> JSONObject:
        """``{activities, next}``: the activities after the first ``after`` of the whole
        conversation, and ``skipped``: how many of those are no longer kept in memory (the
        transcript has them)."""
        after = max(after, 0)
        activities: list[JSON] = list(self.activities[max(after - self.dropped, 0) :])
        out: JSONObject = {"activities": activities,
                           "next": max(after, self.dropped) + len(activities)}  # fmt: skip
        if self.dropped > after:
            out["skipped"] = self.dropped - after
        return out

    def index_of(self, activity_id: str) -> int:
        for i in range(len(self.activities) - 1, -1, -1):
            if self.activities[i].get("id") == activity_id:
                return i
        if self.dropped:
            raise not_found(f"conversation {self.id} has no activity {activity_id!r} among the "
                            f"last {len(self.activities)} kept in memory")  # fmt: skip
        raise not_found(f"conversation {self.id} has no activity {activity_id!r}")

    def activity(self, activity_id: str) -> JSONObject:
        return self.activities[self.index_of(activity_id)]

    def member(self, member_id: str) -> JSONObject:
        for m in self.members:
            if m.get("id") == member_id:
                return m
        raise not_found(f"conversation {self.id} has no member {member_id!r}")
