"""What the operations on every resource of the connector's state share.

``StateCore`` holds the conversations, the listeners, the clock and the id source, and looks a
conversation up with its ownership check. The operations of each resource build on it:
``activities.ActivityOps``, ``members.MemberOps``, ``attachments.AttachmentOps``; together with
the conversations' own they make ``models.ConnectorState``.
"""

from __future__ import annotations

import logging
import math
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
        self._wants: dict[ActivityListener, Callable[[str], bool]] = {}
        self._conversation_listeners: list[ConversationListener] = []

    def add_listener(
        self, callback: ActivityListener, *, wants: Callable[[str], bool] | None = None
    ) -> None:
        """``callback(conversation_id, activity)`` on every activity stored (a copy). An update
        is passed as a ``messageUpdate`` activity and a delete as a ``messageDelete`` one.
        ``wants(conversation_id)``, when given, is asked first: a listener that follows only
        some conversations spares the copy of every other conversation's activities."""
        self._listeners.append(callback)
        if wants is not None:
            self._wants[callback] = wants

    def remove_listener(self, callback: ActivityListener) -> None:
        self._listeners.remove(callback)
        if callback not in self._listeners:
            self._wants.pop(callback, None)

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
            wants = self._wants.get(callback)
            if wants is None or safely(wants, conversation_id):
                safely(callback, conversation_id, copy_object(activity))

    def _new_id(self, taken: Mapping[str, object] | set[JSON]) -> str:
        for _ in range(100):
            new = self._ids()
            if new not in taken:
                return new
        raise ServiceError("the id source keeps returning ids already in use")

    def _timestamp(self) -> str:
        return timestamp(self._clock())


class _Timestamps:
    """``datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")`` with ``Z`` for
    ``+00:00``: ISO 8601 UTC with milliseconds. The date and time of day are made once per
    second; the fraction is the one ``fromtimestamp`` keeps, microseconds rounded half to even
    (carrying into the next second), then cut to milliseconds as ``isoformat`` cuts them."""

    def __init__(self) -> None:
        self._day: tuple[float, str] = (-1.0, "")
        """The second last made and its date and time of day: one attribute, read and replaced
        at once, so that states on other threads' event loops can share it."""

    def __call__(self, moment: float) -> str:
        if not 0.0 <= moment < 253_402_300_799.0:  # before 1970, in the last second of 9999...
            stamp = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
            return stamp.replace("+00:00", "Z")
        fraction, whole = math.modf(moment)
        micros = round(fraction * 1e6)
        if micros == 1_000_000:
            whole, micros = whole + 1, 0
        second, prefix = self._day
        if whole != second:
            day = datetime.fromtimestamp(whole, UTC).isoformat(timespec="seconds")
            prefix = day.removesuffix("+00:00")
            self._day = (whole, prefix)
        return f"{prefix}.{micros // 1000:03d}Z"


timestamp = _Timestamps()
"""An activity's ``timestamp`` for a moment (seconds since the epoch): ``_Timestamps``."""


def safely(callback: Callable[..., object], *args: object) -> object:
    """Call a listener; log what it raises instead of passing it on (and return None)."""
    try:
        return callback(*args)
    except Exception:  # a listener must never break the connector
        log.exception("connector listener %r failed", callback)
        return None
