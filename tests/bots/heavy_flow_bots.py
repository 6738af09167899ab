"""Calling bots that are heavy to explore: every prompt long (``long-prompts``: each about
750 KB of text), or every menu long (``big-menu``: 5,000 choices). Each choice and each
failure leads back to the one menu, so the crawl hears it again in every call.

Runnable: ``python -m tests.bots.heavy_flow_bots KIND --port N``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from aiohttp import web

PROMPT_BYTES = 750_000
CHOICES = 5000


def menu(kind: str, callback: str, first: bool) -> dict[str, Any]:
    if kind == "long-prompts":
        text = ("Press 1 for sales or 2 for support. " * (PROMPT_BYTES // 36))[:PROMPT_BYTES]
        choices = [{"name": "sales", "dtmfVariation": "1", "speechVariation": ["sales"]},
                   {"name": "support", "dtmfVariation": "2", "speechVariation": ["support"]}]
    else:
        text = "Say the name of a product."
        choices = [{"name": f"product {i}", "speechVariation": [f"product {i}"]}
                   for i in range(CHOICES)]  # fmt: skip
    play = {"action": "playPrompt", "operationId": "p", "prompts": [{"value": text}]}
    actions: list[dict[str, Any]] = [{"operationId": "answer", "action": "answer"}] if first else []
    actions.append({"operationId": "r", "action": "recognize", "playPrompt": play,
                    "initialSilenceTimeoutInSeconds": 3, "choices": choices})  # fmt: skip
    return {"actions": actions, "links": {"callback": callback},
            "notificationSubscriptions": ["callStateChange"]}  # fmt: skip


def make_heavy_bot(kind: str) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        callback = str(request.url.with_path("/api/calls"))
        if body.get("callState") == "terminated":
            return web.Response(status=200)
        first = "participants" in body  # the Conversation (its callState is "incoming")
        return web.json_response(menu(kind, callback, first))

    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_post("/api/calls", handle)
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A calling bot heavy to explore.")
    parser.add_argument("kind", choices=["long-prompts", "big-menu"])
    parser.add_argument("--port", type=int, default=3981)
    options = parser.parse_args()
    web.run_app(make_heavy_bot(options.kind), host="127.0.0.1", port=options.port)
