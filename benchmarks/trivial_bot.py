"""A trivial calling bot for ``benchmarks/load.py concurrency``: it answers every call with a
silence of ``SECONDS`` (a prompt that lasts exactly that long), then hangs up.

Run: ``python benchmarks/trivial_bot.py PORT [SECONDS]``."""

from __future__ import annotations

import json
import sys

from aiohttp import web


def app(seconds: int, port: int) -> web.Application:
    callback = f"http://127.0.0.1:{port}/api/callback"
    hold = json.dumps({
        "actions": [
            {"operationId": "a", "action": "answer"},
            {"operationId": "p", "action": "playPrompt",
             "prompts": [{"silenceLengthInMilliseconds": seconds * 1000}]},
        ],
        "links": {"callback": callback},
        "notificationSubscriptions": ["callStateChange"],
    }).encode()  # fmt: skip
    bye = json.dumps({"actions": [{"operationId": "h", "action": "hangup"}],
                      "notificationSubscriptions": ["callStateChange"]}).encode()  # fmt: skip

    async def call(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=hold, content_type="application/json")

    async def result(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=bye, content_type="application/json")

    made = web.Application()
    made.add_routes([web.post("/api/calls", call), web.post("/api/callback", result)])
    return made


if __name__ == "__main__":
    port = int(sys.argv[1])
    web.run_app(app(int(sys.argv[2]) if len(sys.argv) > 2 else 60, port), host="127.0.0.1",
                port=port, access_log=None, print=None)  # fmt: skip
