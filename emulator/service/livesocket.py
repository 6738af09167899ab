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
"""Messages waiting for the page (past it: ``dropped``)."""
MAX_BINARY_WAITING = 8
"""A binary frame is sent only while fewer messages than this wait for the page."""
Sent = JSONObject


@dataclass(eq=False)
class LiveSocket:
    """One socket of a page: its outbox (the writer task drains it)."""

    ws: web.WebSocketResponse
    outbox: asyncio.Queue[Sent | bytes] = field(default_factory=lambda: asyncio.Queue(MAX_OUTBOX))
    dropped: int = 0

    def push(self, message: Sent) -> None:
        if self.dropped and self.outbox.qsize() < MAX_OUTBOX - 1:
            self.outbox.put_nowait({"op": "dropped", "count": self.dropped})
            self.dropped = 0
        try:
            self.outbox.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped += 1

    def push_bytes(self, data: bytes) -> None:
        """A binary frame (the phone's prompt audio); left out when the page reads too slowly."""
        if self.outbox.qsize() < MAX_BINARY_WAITING:
            self.outbox.put_nowait(data)

    def refuse(self, ref: JSON, error: str) -> None:
        self.push({"op": "refused", "ref": ref, "error": error})

    async def write(self) -> None:
        try:
            while not self.ws.closed:
                message = await self.outbox.get()
                if isinstance(message, bytes):
                    await self.ws.send_bytes(message)
                    continue
                # ASCII: a lone surrogate in what a bot sent is escaped, not a UnicodeEncodeError
                await self.ws.send_str(json.dumps(message))
        except ConnectionError:
            return  # the page went away
        except Exception:  # the page must learn that nothing more will come
            log.exception("web chat: cannot write to the page")
            await self.ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"botemu failed")
