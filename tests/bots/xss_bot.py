"""A calling bot whose every string carries markup, for the log view's XSS test.

Everything a bot sends is untrusted: the log view must show each of these strings as text and run
none of them (``tests/logview/test_browser.py::test_markup_from_the_bot_is_shown_as_text_and_runs_nothing``).
The bot is otherwise well behaved: it answers, plays ``PROMPT`` inside a menu, and says goodbye
and hangs up after the caller's choice. The markup sits in:

- the prompt text (``PROMPT``, the case the issue names) and the goodbye prompt;
- operation ids, a choice name and the appState, which the platform echoes back;
- an unknown field, name and value (the platform reports it as a finding, with the name in the
  finding's path and message);
- a response header on every answer.

Runnable for manual work: ``python tests/bots/xss_bot.py --port N``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from aiohttp import web

PROMPT = "<img src=x onerror=alert(1)>"
GOODBYE = "</pre><script>alert(2)</script>Goodbye"
APP_STATE = "<svg onload=alert(3)>menu"
CHOICE = "<iframe src=javascript:alert(4)>"
OPERATION = "menu<b onmouseover=alert(5)>"
UNKNOWN_FIELD = "<u onclick=alert(6)>extra</u>"
HEADER = "<script>alert(7)</script>"
MARKUP = (PROMPT, GOODBYE, APP_STATE, CHOICE, OPERATION, UNKNOWN_FIELD, HEADER)
"""Every string with markup that this bot sends."""


def _menu(callback: str) -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "answer<i>1</i>", "action": "answer"},
            {
                "operationId": OPERATION,
                "action": "recognize",
                "playPrompt": {"prompts": [{"value": PROMPT}]},
                "choices": [
                    {"name": CHOICE, "dtmfVariation": "1"},
                    {"name": "support", "dtmfVariation": "2"},
                ],
            },
        ],
        "links": {"callback": callback},
        "appState": APP_STATE,
        UNKNOWN_FIELD: "<a href=javascript:alert(9)>click</a>",
    }


def _goodbye() -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "bye<br>", "action": "playPrompt", "prompts": [{"value": GOODBYE}]},
            {"operationId": "hangup<hr>", "action": "hangup"},
        ]
    }


async def handle(request: web.Request) -> web.Response:
    body = await request.read()
    try:
        document = json.loads(body) if request.content_type == "application/json" else {}
    except ValueError:
        document = {}
    headers = {"X-Bot-Note": HEADER}
    if str(document.get("callState", "")).lower() == "terminated":
        return web.Response(status=200, headers=headers)
    if "participants" in document:
        callback = f"{request.scheme}://{request.host}/api/calls"
        return web.json_response(_menu(callback), headers=headers)
    return web.json_response(_goodbye(), headers=headers)


def make_bot() -> web.Application:
    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    web.run_app(make_bot(), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
