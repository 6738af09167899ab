"""What the live sockets of the log view's page share (the web chat's, ``livechat``, and the
phone's, ``livephone``): the subprotocol, the bound of a frame from the page, and a socket's
outbox, drained in order by one writer task: JSON text frames, and binary frames (the phone's
prompt audio) sent only while few messages wait.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field

from aiohttp import WSCloseCode, web

from emulator.jsonutil import JSON, JSONObject

log = logging.getLogger(__name__)

PROTOCOL = "botemu.live.v1"
MAX_FRAME = 256 * 1024
"""Bytes of one frame from the page; past it, aiohttp closes the socket (1009)."""
MAX_OUTBOX = 1000
"""Messages waiting for the page; past it, as past ``LiveSocket.max_bytes``, the socket is closed."""
DEFAULT_OUTBOX_BYTES = 8 * 1024 * 1024
"""Bytes waiting for the page, at most (``MemoryLimits.outbox_bytes``)."""
MAX_BINARY_WAITING = 8
"""A binary frame is sent only while fewer messages than this wait for the page."""
BEHIND = WSCloseCode.POLICY_VIOLATION
"""The close code of a socket whose page fell behind (1008), with ``behind_reason``."""
CLOSE_WAIT = 5.0
"""Seconds a page that fell behind has to take the close frame before its connection is cut."""
Sent = JSONObject


def behind_reason(waiting: int, limit: int) -> str:
    """The close message of a socket whose page fell behind (at most 123 bytes)."""
    return f"botemu: the page fell behind ({waiting:,} bytes waited, at most {limit:,}); reload"


@dataclass(eq=False)
class LiveSocket:
    """One socket of a page: its outbox (the writer task drains it), bounded in messages and
    bytes. A page that reads too slowly to keep it under both is cut off: what waited is
    dropped at once, the socket is closed with ``BEHIND`` and a reason, and the connection is
    cut when the page does not take even that (``transport``, within ``CLOSE_WAIT``)."""

    ws: web.WebSocketResponse
    transport: asyncio.Transport | None = None
    max_bytes: int = DEFAULT_OUTBOX_BYTES
    outbox: asyncio.Queue[str | bytes] = field(default_factory=asyncio.Queue)
    waiting: int = 0
    """Bytes in ``outbox``."""
    behind: str | None = None
    """Why the socket was closed for falling behind (None while it keeps up)."""
    closer: asyncio.Task[None] | None = None

    def push(self, message: Sent) -> None:
        if self.behind is None:
            # ASCII: a lone surrogate in what a bot sent is escaped, not a UnicodeEncodeError
            self._put(json.dumps(message))

    def push_bytes(self, data: bytes) -> None:
        """A binary frame (the phone's prompt audio); left out when the page reads too slowly."""
        if self.behind is None and self.outbox.qsize() < MAX_BINARY_WAITING:
            self._put(data)

    def _put(self, item: str | bytes) -> None:
        size = len(item)
        if self.waiting + size > self.max_bytes or self.outbox.qsize() >= MAX_OUTBOX:
            self.fell_behind(self.waiting + size)
            return
        self.waiting += size
        self.outbox.put_nowait(item)

    def fell_behind(self, waiting: int) -> None:
        """Drop what waits and close the socket with a reason (``behind``)."""
        self.behind = behind_reason(waiting, self.max_bytes)
        log.warning("live socket: %s", self.behind)
        while not self.outbox.empty():
            self.outbox.get_nowait()
        self.waiting = 0
        self.closer = asyncio.get_running_loop().create_task(self._close_behind(self.behind))

    async def _close_behind(self, reason: str) -> None:
        try:
            await asyncio.wait_for(self.ws.close(code=BEHIND, message=reason.encode()), CLOSE_WAIT)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            if self.transport is not None:
                self.transport.abort()  # a page that takes not even the close frame

    def refuse(self, ref: JSON, error: str) -> None:
        self.push({"op": "refused", "ref": ref, "error": error})

    async def write(self) -> None:
        try:
            while not self.ws.closed:
                message = await self.outbox.get()
                self.waiting -= len(message)
                if isinstance(message, bytes):
                    await self.ws.send_bytes(message)
                else:
                    await self.ws.send_str(message)
        except ConnectionError:
            return  # the page went away
        except Exception:  # the page must learn that nothing more will come
            log.exception("web chat: cannot write to the page")
            await self.ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"botemu failed")
