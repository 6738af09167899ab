"""A small anonymous bot that answers with cards, a carousel, suggested actions and typing, for
replaying ``.chat`` files (the reference echo bot sends none of these).

It replies through the connector with no token (botemu serves it as an anonymous bot):

- a ``conversationUpdate`` that adds someone other than the bot: ``WELCOME``;
- ``cards``: ``Here are your cards``, a carousel of a hero card and an image, offering ``ACTIONS``
  (``changed``: one action fewer);
- ``done``: a typing activity, then ``Bye!``;
- anything else: ``you said: <text>``.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

WELCOME = "Hi! Ask for cards."
ACTIONS = ["More", "Done"]


def replies_for(activity: dict[str, Any], changed: bool = False) -> list[dict[str, Any]]:
    kind = str(activity.get("type", "")).lower()
    if kind == "conversationupdate":
        bot_id = (activity.get("recipient") or {}).get("id")
        added = [m for m in activity.get("membersAdded") or [] if m.get("id") != bot_id]
        return [{"type": "message", "text": WELCOME}] if added else []
    if kind != "message":
        return []
    text = str(activity.get("text") or "")
    if text == "cards":
        actions = ACTIONS[:1] if changed else ACTIONS
        return [{
            "type": "message", "text": "Here are your cards", "attachmentLayout": "carousel",
            "attachments": [
                {"contentType": "application/vnd.microsoft.card.hero",
                 "content": {"title": "One", "buttons": [{"type": "imBack", "title": "Pick",
                                                          "value": "Pick"}]}},
                {"contentType": "image/png", "contentUrl": "https://example.com/two.png"},
            ],
            "suggestedActions": {"actions": [{"type": "imBack", "title": a, "value": a}
                                             for a in actions]},
        }]  # fmt: skip
    if text == "done":
        return [{"type": "typing"}, {"type": "message", "text": "Bye!"}]
    return [{"type": "message", "text": f"you said: {text}"}]


def make_bot(changed: bool = False) -> web.Application:
    async def on_activity(request: web.Request) -> web.Response:
        activity = await request.json()
        url = (f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
               "/activities")  # fmt: skip
        async with aiohttp.ClientSession() as http:
            for reply in replies_for(activity, changed):
                reply["from"], reply["recipient"] = activity["recipient"], activity["from"]
                async with http.post(url, json=reply) as response:
                    response.raise_for_status()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/api/messages", on_activity)
    return app
