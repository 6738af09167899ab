"""A bot that streams its answers, well or badly, the way the Agents SDKs stream.

The user's message names the plan (``PLANS``); the bot answers each message with a stream of
``typing`` chunks with a ``streaminfo`` entity and a final ``message``, replying to the user's
activity through the connector, with no token (an anonymous bot). ``answers`` keeps the
connector's status and body for each chunk. To a message sent with ``deliveryMode:
expectReplies`` it answers with its replies in the HTTP body instead (ExpectedReplies).

- ``good``: informative, two streaming chunks, final (the JavaScript SDK's shape: the streamId
  in the first entity and in ``id`` after the first chunk);
- ``python``: the Python SDK on webchat: the bot chooses the stream's id itself, from chunk 1;
- ``teams``: the older Teams shape, the stream in ``channelData``;
- ``shrink``: a chunk whose text does not start with the previous one's (CONN-STREAM-SHRINK);
- ``order``: a chunk sent twice with the same streamSequence (CONN-STREAM-ORDER);
- ``after-final``: a chunk after the final message (CONN-STREAM-ENDED);
- ``no-id`` / ``unknown-id``: a later chunk without a streamId / with one no stream has
  (CONN-STREAM-ID);
- ``slow``: a pause of ``SLOW`` seconds before the final message (CONN-STREAM-TIMEOUT, with the
  connector's stream limit lowered below it);
- ``big``: a chunk of ``BIG`` characters (CONN-STREAM-SIZE);
- ``bad-entity``: a streamType no platform knows (CONN-STREAM-ENTITY).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

SLOW = 0.4
BIG = 40_000
PLANS = ("good", "python", "teams", "shrink", "order", "after-final", "no-id", "unknown-id",
         "slow", "big", "bad-entity")  # fmt: skip

Step = tuple[str, str, int, str | None]
"""(streamType, text, streamSequence, streamId: "" for the stream's own, None for none)."""

_GOOD: list[Step] = [("informative", "Thinking…", 1, None), ("streaming", "Hello", 2, ""),
                     ("streaming", "Hello, wor", 3, ""), ("final", "Hello, world!", 5, "")]  # fmt: skip
_STEPS: dict[str, list[Step]] = {
    "good": _GOOD,
    "python": [
        ("informative", "Thinking…", 1, ""),
        ("streaming", "Hi", 2, ""),
        ("final", "Hi there", 3, ""),
    ],
    "shrink": [
        ("streaming", "Hello", 1, None),
        ("streaming", "Help", 2, ""),
        ("final", "Hello!", 3, ""),
    ],
    "order": [
        ("streaming", "A", 1, None),
        ("streaming", "AB", 2, ""),
        ("streaming", "ABC", 2, ""),
        ("final", "ABCD", 3, ""),
    ],
    "after-final": [
        ("streaming", "A", 1, None),
        ("final", "AB", 2, ""),
        ("streaming", "ABC", 3, ""),
    ],
    "no-id": [("streaming", "A", 1, None), ("streaming", "AB", 2, None)],
    "unknown-id": [("streaming", "A", 1, None), ("streaming", "AB", 2, "nope")],
    "slow": [("streaming", "A", 1, None), ("final", "AB", 2, "")],
    "big": [("streaming", "A", 1, None), ("streaming", "A" * BIG, 2, "")],
    "bad-entity": [("streaming", "A", 1, None), ("flowing", "AB", 2, "")],
}


@dataclass
class StreamingBot:
    answers: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """The connector's (status, JSON body) for each chunk the bot sent."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/messages", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        activity: dict[str, Any] = await request.json()
        if activity.get("type") != "message":
            return web.Response(status=200)
        text = str(activity.get("text") or "")
        if activity.get("deliveryMode") == "expectReplies":
            replies = [{"type": "message", "text": f"Echo: {text}"},
                       {"type": "message", "text": "and one more"}]  # fmt: skip
            return web.json_response({"activities": replies})
        plan = text if text in _STEPS or text == "teams" else "good"
        asyncio.get_running_loop().create_task(self.stream(activity, plan))
        return web.Response(status=200)

    async def stream(self, activity: dict[str, Any], plan: str) -> None:
        url = (f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
               f"/activities/{activity['id']}")  # fmt: skip
        stream_id = "b0t-chosen-5tream" if plan == "python" else None
        async with aiohttp.ClientSession() as http:
            for kind, text, sequence, given in _STEPS.get(plan, _GOOD):
                if plan == "slow" and kind == "final":
                    await asyncio.sleep(SLOW)
                chunk = _chunk(kind, text, sequence, stream_id if given == "" else given, plan)
                async with http.post(url, json=chunk) as answer:
                    body = await answer.json(content_type=None)
                    self.answers.append((answer.status, body))
                if stream_id is None and answer.status == 200:
                    stream_id = body["id"]


def _chunk(kind: str, text: str, sequence: int, stream_id: str | None, plan: str) -> dict[str, Any]:
    activity: dict[str, Any] = {"type": "message" if kind == "final" else "typing", "text": text}
    info: dict[str, Any] = {"streamType": kind, "streamSequence": sequence}
    if stream_id is not None:
        info["streamId"] = stream_id
        activity["id"] = stream_id
    if plan == "teams":
        activity["channelData"] = info
        if kind == "final":
            activity["entities"] = [{"type": "streaminfo", **info}]
        return activity
    activity["entities"] = [{"type": "streaminfo", **info}]
    return activity
