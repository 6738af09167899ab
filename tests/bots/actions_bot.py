"""A small anonymous bot that offers suggested actions, for the Direct Line clients' tests (the
reference echo bot sends none).

It replies through the connector with no token (botemu serves it as an anonymous bot):

- a ``conversationUpdate`` that adds someone other than the bot: ``WELCOME``;
- the message ``colours``: ``Pick a colour`` with the suggested actions ``ACTIONS`` (imBack);
- ``red`` or ``blue`` (what a click on one sends back): ``you picked <colour>``;
- anything else: ``you said: <text>``.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

WELCOME = "Hello! Say colours to pick one."
ACTIONS = [
    {"type": "imBack", "title": "Red", "value": "red"},
    {"type": "imBack", "title": "Blue", "value": "blue"},
]


def replies_for(activity: dict[str, Any]) -> list[dict[str, Any]]:
    kind = str(activity.get("type", "")).lower()
    if kind == "conversationupdate":
        bot_id = (activity.get("recipient") or {}).get("id")
        added = [m for m in activity.get("membersAdded") or [] if m.get("id") != bot_id]
        return [{"type": "message", "text": WELCOME}] if added else []
    if kind != "message":
        return []
    text = str(activity.get("text") or "")
    if text == "colours":
        return [{"type": "message", "text": "Pick a colour",
                 "suggestedActions": {"to": [activity["from"]["id"]], "actions": ACTIONS}}]  # fmt: skip
    if text in ("red", "blue"):
        return [{"type": "message", "text": f"you picked {text}"}]
    return [{"type": "message", "text": f"you said: {text}"}]


def make_bot() -> web.Application:
    async def on_activity(request: web.Request) -> web.Response:
        activity = await request.json()
        url = (f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
               "/activities")  # fmt: skip
        async with aiohttp.ClientSession() as http:
            for reply in replies_for(activity):
                reply["from"], reply["recipient"] = activity["recipient"], activity["from"]
                async with http.post(url, json=reply) as response:
                    response.raise_for_status()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/api/messages", on_activity)
    return app
