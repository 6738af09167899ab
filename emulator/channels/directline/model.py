"""Direct Line's records, without the service's behaviour: its bounds (``Limits``), a socket's
outbox (``Outbox``), a conversation (``Conversation``), and the reading of what a client sends
(a user, trusted origins, a watermark). ``service.py`` acts on them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.channels.directline.errors import DirectLineError
from emulator.jsonutil import JSON, JSONObject, copy_object


@dataclass(frozen=True, slots=True)
class Limits:
    """What one Direct Line service keeps and takes (docs/directline.md, Bounds)."""

    conversations_per_bot: int = 200
    activities_kept: int = 1000
    activities_kept_bytes: int = 16 * 1024 * 1024
    """Bytes of JSON of the activities kept per conversation, at most (the oldest go first)."""
    activity_bytes: int = 256 * 1024
    upload_bytes: int = 4 * 1024 * 1024
    upload_files: int = 10
    sockets: int = 64
    sockets_per_conversation: int = 4
    outbox: int = 256
    outbox_bytes: int = 8 * 1024 * 1024
    requests_per_minute: int = 1200


@dataclass(eq=False)
class Outbox:
    """One socket's queue of ActivitySets (at most ``Limits.outbox`` of them and
    ``max_bytes`` of their JSON); ``behind`` once it overflowed: the queue is dropped and the
    socket's writer closes the socket."""

    queue: asyncio.Queue[tuple[JSONObject, int]]
    max_bytes: int = 8 * 1024 * 1024
    queued: int = 0
    behind: bool = False
    ended: str | None = None
    """Why the socket is closed for good (its conversation was closed), or None."""
    on_close: Callable[[], None] | None = None
    """Called once the socket is to be closed (``behind`` or ``ended``): its writer may be
    stuck on a client that reads nothing, which this cuts off (``routes._stream``)."""

    def push(self, item: JSONObject, size: int) -> None:
        if self.behind:
            return
        if self.queued + size > self.max_bytes:
            self._overflow()
            return
        try:
            self.queue.put_nowait((item, size))
        except asyncio.QueueFull:
            self._overflow()
            return
        self.queued += size

    def taken(self, size: int) -> None:
        self.queued -= size

    def _overflow(self) -> None:
        self.behind = True
        while not self.queue.empty():  # what waited is let go at once, not when the writer looks
            self.queue.get_nowait()
        self.queue.put_nowait(({}, 0))  # wakes the writer, which sees ``behind`` and closes
        self.queued = 0
        if self.on_close is not None:
            self.on_close()

    def end(self, reason: str) -> None:
        """Close the socket for good: its conversation was closed."""
        self.ended = reason
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(({}, 0))
        self.queued = 0
        if self.on_close is not None:
            self.on_close()


@dataclass(eq=False)
class Conversation:
    """One Direct Line conversation."""

    id: str
    bot: str
    app_id: str
    channel_id: str
    user: JSONObject | None
    started: bool = False
    announced: set[str] = field(default_factory=set)
    """The users the bot has been told of (a conversationUpdate adding each)."""
    log: deque[tuple[int, JSONObject, bool, int]] = field(default_factory=deque)
    """(watermark, activity, stream only, bytes) of every activity, oldest first, bounded in
    count and bytes."""
    kept: int = 0
    """Bytes of the activities in ``log``."""
    next: int = 0
    sockets: set[Outbox] = field(default_factory=set)
    requests: deque[float] = field(default_factory=deque)

    def since(self, watermark: int, *, stream: bool) -> list[JSONObject]:
        return [copy_object(a) for w, a, only, _ in self.log
                if w >= watermark and (stream or not only)]  # fmt: skip


def streaming(activity: JSONObject) -> bool:
    """A typing activity that is a chunk of a streamed reply (kept, unlike plain typing)."""
    entities = activity.get("entities")
    return isinstance(entities, list) and any(
        isinstance(e, dict) and str(e.get("type", "")).lower() == "streaminfo" for e in entities
    )


def channel_of(agent: str) -> str:
    """The channel of a conversation a client opens: ``webchat`` when its agent says it is
    Web Chat, else ``directline``."""
    return "webchat" if "webchat" in agent.lower() else "directline"


def read_user(value: JSON) -> JSONObject | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DirectLineError(400, "BadArgument", "user is an object {id, name}")
    user_id, name = value.get("id"), value.get("name")
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not 0 < len(user_id) <= 256:
        raise DirectLineError(400, "BadArgument", "user.id is a string of 1 to 256 characters")
    out: JSONObject = {"id": user_id}
    if isinstance(name, str):
        out["name"] = name[:256]
    return out


def named(account: JSONObject) -> JSONObject:
    name = account.get("name")
    return {"name": name[:256]} if isinstance(name, str) else {}


def id_of(user: JSONObject | None) -> str | None:
    return None if user is None else str(user["id"])


def read_origins(value: JSON) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(o, str) and len(o) < 256 for o in value):
        raise DirectLineError(400, "BadArgument", "trustedOrigins is a list of origins")
    if len(value) > 16:
        raise DirectLineError(400, "BadArgument", "at most 16 trustedOrigins")
    return tuple(str(o).rstrip("/") for o in value)


def read_watermark(value: str | None) -> int:
    if value is None or value == "":
        return 0
    try:
        number = int(value)
    except ValueError:
        raise DirectLineError(400, "BadArgument", f"watermark {value[:40]!r} is not one "
                              "botemu gave") from None  # fmt: skip
    return max(number, 0)
