"""A small anonymous messaging bot for the web chat's tests: it shows what the page renders.

On a ``message`` it sends ``typing`` and then a reply through the connector (no token: botemu
serves it as an anonymous bot):

- ``card``: a reply with attachments (an image as a data: URL, an image at a remote URL that
  the page must not load, a file) and suggested actions;
- ``html``: the text ``HOSTILE`` (markup that must show as text);
- ``typing``: the typing activity alone, no reply;
- ``surrogate``: a text with a lone surrogate (valid JSON, not valid UTF-8);
- anything else: ``you said: <text>``.

An ``invoke`` is answered with HTTP 200 and the body ``{"echo": <its value>}``; an ``event``
named ``finish`` with an ``endOfConversation`` whose value is ``{"got": <its value>}``.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import aiohttp
from aiohttp import web


def png(width: int = 96, height: int = 64) -> str:
    """A small PNG (a gradient) as a data: URL, made here: no file, no network."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in (40 + x * 2, 95 + y * 2, 168))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
    return "data:image/png;base64," + base64.b64encode(data + chunk(b"IEND", b"")).decode()


PIXEL = png()
REMOTE_IMAGE = "http://images.example.invalid/tracker.png"
HOSTILE = '<img src=x onerror="window.__pwned = true">'
ACTIONS = [
    {"type": "imBack", "title": "Red", "value": "red"},
    {"type": "imBack", "title": "Blue", "value": "blue"},
]


def replies_for(activity: dict[str, Any]) -> list[dict[str, Any]]:
    text = str(activity.get("text") or "")
    if text == "typing":
        return []
    if text == "card":
        return [{"type": "message", "text": "a card", "attachments": [
            {"contentType": "image/png", "contentUrl": PIXEL, "name": "pixel.png"},
            {"contentType": "image/png", "contentUrl": REMOTE_IMAGE, "name": "remote.png"},
            {"contentType": "application/pdf", "contentUrl": "https://example.invalid/a.pdf",
             "name": "report.pdf"},
        ], "suggestedActions": {"actions": ACTIONS}}]  # fmt: skip
    if text == "html":
        return [{"type": "message", "text": HOSTILE}]
    if text == "surrogate":
        return [{"type": "message", "text": "half of a pair: \ud800"}]
    return [{"type": "message", "text": f"you said: {text}"}]


def make_bot() -> web.Application:
    async def on_activity(request: web.Request) -> web.Response:
        activity = await request.json()
        if activity.get("type") == "invoke":
            return web.json_response({"echo": activity.get("value")})
        finish = activity.get("type") == "event" and activity.get("name") == "finish"
        if activity.get("type") != "message" and not finish:
            return web.Response(status=200)
        url = (f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
               "/activities")  # fmt: skip
        replies = (
            [{"type": "endOfConversation", "value": {"got": activity.get("value")}}]
            if finish
            else [{"type": "typing"}, *replies_for(activity)]
        )
        async with aiohttp.ClientSession() as http:
            for reply in replies:
                async with http.post(url, json=reply) as response:
                    response.raise_for_status()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/api/messages", on_activity)
    return app
