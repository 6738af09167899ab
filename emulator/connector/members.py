"""Members: the state's operations on the members of a conversation (list, page, get, remove).

A part of ``models.ConnectorState``; the members themselves are kept by each ``Conversation``
(``conversations.py``), the bot first.
"""

from __future__ import annotations

import copy

from emulator.connector.bodies import copies, json_copies, page_of
from emulator.connector.errors import bad_argument
from emulator.connector.state import StateCore
from emulator.jsonutil import JSONObject

DEFAULT_MEMBERS_PAGE = 200
MAX_MEMBERS_PAGE = 500
"""``pagedmembers``: the page size when none is given, and the largest one honoured."""


class MemberOps(StateCore):
    """The operations of ``ConnectorState`` on a conversation's members."""

    def members(self, conversation_id: str, *, bot: str | None = None) -> list[JSONObject]:
        return copies(self.conversation(conversation_id, bot=bot).members)

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
        page, next_token = page_of(conversation.members, token, size)
        return {"members": json_copies(page), "continuationToken": next_token}

    def activity_members(
        self, conversation_id: str, activity_id: str, *, bot: str | None = None
    ) -> list[JSONObject]:
        """The members of the conversation when the activity was stored."""
        conversation = self.conversation(conversation_id, bot=bot)
        conversation.activity(activity_id)
        return copies(conversation.activity_members.get(activity_id, conversation.members))
