"""What the operations on every resource of the connector's state share.

``StateCore`` holds the conversations, the listeners, the clock and the id source, and looks a
conversation up with its ownership check. The operations of each resource build on it:
``activities.ActivityOps``, ``members.MemberOps``, ``attachments.AttachmentOps``; together with
the conversations' own they make ``models.ConnectorState``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from emulator.connector.conversations import Conversation
from emulator.connector.errors import ServiceError, forbidden, not_found
from emulator.jsonutil import JSON, JSONObject, copy_object

log = logging.getLogger("emulator.connector.models")
"""The state's log (under the name of ``models.py``, where the state has always logged from)."""

ActivityListener = Callable[[str, JSONObject], None]
"""Called with (conversation id, activity) for every activity stored, updated or deleted."""
ConversationListener = Callable[[Conversation], None]
"""Called with every conversation created or opened, before any activity is stored in it."""


class StateCore:
    """The conversations of one running emulator, its listeners, its clock and its ids."""

    def __init__(
        self, *, service_url: str, clock: Callable[[], float], ids: Callable[[], str]
    ) -> None:
        self.service_url = service_url
        self._clock = clock
        self._ids = ids
        self._conversations: dict[str, Conversation] = {}
        self._listeners: list[ActivityListener] = []
        self._conversation_listeners: list[ConversationListener] = []

    def add_listener(self, callback: ActivityListener) -> None:
        """``callback(conversation_id, activity)`` on every activity stored (a copy). An update
        is passed as a ``messageUpdate`` activity and a delete as a ``messageDelete`` one."""
        self._listeners.append(callback)

    def remove_listener(self, callback: ActivityListener) -> None:
        self._listeners.remove(callback)

    def add_conversation_listener(self, callback: ConversationListener) -> None:
        self._conversation_listeners.append(callback)

    def conversation(self, conversation_id: str, *, bot: str | None = None) -> Conversation:
        found = self._conversations.get(conversation_id)
        if found is None:
            raise not_found(f"no conversation {conversation_id!r}")
        if bot is not None and bot != found.bot_app_id:
            raise forbidden(f"bot {bot!r} is not a party to conversation {conversation_id!r}")
        return found

    def _notify(self, conversation_id: str, activity: JSONObject) -> None:
        for callback in list(self._listeners):
            safely(callback, conversation_id, copy_object(activity))

    def _new_id(self, taken: Mapping[str, object] | set[JSON]) -> str:
        for _ in range(100):
            new = self._ids()
            if new not in taken:
                return new
        raise ServiceError("the id source keeps returning ids already in use")

    def _timestamp(self) -> str:
        moment = datetime.fromtimestamp(self._clock(), UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def safely(callback: Callable[..., None], *args: object) -> None:
    """Call a listener; log what it raises instead of passing it on."""
    try:
        callback(*args)
    except Exception:  # a listener must never break the connector
        log.exception("connector listener %r failed", callback)
