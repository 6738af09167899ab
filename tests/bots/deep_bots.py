"""Calling bots with a planted bug 1 to 4 steps deep, for measuring ``botemu fuzz``.

Every bot has the same flow (``FLOW``): a main menu offering 1 (hours), 2 (news), 5 (your
account: six digits ended by ``#``, then a menu of 1 balance, 2 pay (digits), ``#`` back) and 9
(the operator: ``#`` back; silence brings "still holding"). Each choice has its name as speech.
What the caller did travels in the Workflow's ``appState`` as a history of events: a choice's
key (``9``), ``said NAME``, ``silence``, ``wrong`` (a key the menu does not offer),
``digits:N`` (N digits entered), ``hangup``. A bug (``BUGS``) is a sequence of such events: when
the history ends with it, the bot answers HTTP 500 (to the result, or to the notification that
the call ended, for a bug that ends in ``hangup``).

``make_deep_bot(name)`` builds an aiohttp app serving ``POST /api/calls``; ``sound`` has no bug.
Runnable: ``python -m tests.bots.deep_bots NAME --port N`` (from the project root).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from aiohttp import web

from tests.bots.flow_bots import Node, digits, goodbye, menu, next_node, workflow

MAIN = "Press 1 for our hours, 2 for news, 5 for your account, or 9 for the operator."
_MAIN = {"hours": ("1", "hours"), "news": ("2", "news"), "account": ("5", "account"),
         "operator": ("9", "hold")}  # fmt: skip
FLOW: dict[str, Node] = {
    "start": menu(MAIN, "start-again", "start-again", **_MAIN),
    "start-again": menu("Sorry. " + MAIN, "bye", "bye", **_MAIN),
    "hold": menu("Please hold for the operator, or press # to go back.", "still", "hold",
                 back=("#", "start")),
    "still": menu("Still holding. Press # to go back.", "busy", "still", back=("#", "start")),
    "account": digits("Enter your account number, then press pound.", "account-menu", "bye"),
    "account-menu": menu("Press 1 for your balance, 2 to pay, or # to go back.", "bye",
                         "account-menu", balance=("1", "balance"), pay=("2", "pay"),
                         back=("#", "start")),
    "pay": digits("Enter the amount, then press pound.", "thanks", "bye"),
    "hours": goodbye("We are open from 9 to 5. Goodbye."),
    "news": goodbye("No news today. Goodbye."),
    "balance": goodbye("Your balance is 12 dollars. Goodbye."),
    "thanks": goodbye("Thank you, your payment is on its way. Goodbye."),
    "busy": goodbye("The operator is busy. Goodbye."),
    "bye": goodbye("We did not hear from you. Goodbye."),
}  # fmt: skip
BUGS: dict[str, tuple[str, ...]] = {
    "key-1": ("9",),
    "speech-1": ("said news",),
    "silence-2": ("silence", "silence"),
    "digits-2": ("5", "digits:6"),
    "hangup-2": ("9", "hangup"),
    "operator-3": ("9", "silence", "#"),
    "digits-3": ("5", "digits:6", "2"),
    "hangup-3": ("9", "silence", "hangup"),
    "speech-4": ("9", "silence", "#", "said news"),
    "digits-4": ("5", "digits:6", "2", "digits:1"),
    "wrong-4": ("wrong", "9", "silence", "#"),
    "sound": (),
}
"""Each bot's bug: the events that, last in the history, bring a 500. Depth: their number."""


def event(node: Node, outcome: dict[str, Any]) -> str:
    """What the caller did at ``node``, as the history keeps it."""
    collected = outcome.get("collectDigitsOutcome") or {}
    choice = outcome.get("choiceOutcome") or {}
    reason = str((choice or collected).get("completionReason", ""))
    if "silence" in reason.lower() and not collected.get("digits"):
        return "silence"
    if node.kind == "digits":
        return f"digits:{sum(c.isdigit() for c in str(collected.get('digits') or ''))}"
    if reason == "speechOptionMatched":
        return f"said {choice.get('choiceName')}"
    name = choice.get("choiceName")
    return node.choices[name][0] if name in node.choices else "wrong"


def make_deep_bot(name: str) -> web.Application:
    bug = BUGS[name]

    def hit(history: list[str]) -> bool:
        return bool(bug) and tuple(history[-len(bug) :]) == bug

    async def handle(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        callback = str(request.url.with_path("/api/calls"))
        if "appState" not in body and "operationOutcome" not in body:  # the Conversation
            return web.json_response(_workflow("start", callback, [], True))
        at = json.loads(body.get("appState") or '{"node": "start", "history": []}')
        if body.get("callState") == "terminated":
            hung_up = hit([*at["history"], "hangup"])
            return web.Response(status=500 if hung_up else 200, text="")
        outcome = body.get("operationOutcome") or {}
        node = FLOW[at["node"]]
        history = [*at["history"], event(node, outcome)][-8:]
        if hit(history):
            return web.Response(status=500, text="planted bug")
        return web.json_response(_workflow(next_node(node, outcome), callback, history, False))

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


def _workflow(node: str, callback: str, history: list[str], first: bool) -> Any:
    doc = workflow(FLOW, node, callback, 0, first)
    doc["appState"] = json.dumps({"node": node, "history": history})
    return doc


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A calling bot with a planted bug.")
    parser.add_argument("name", choices=sorted(BUGS))
    parser.add_argument("--port", type=int, default=3982)
    options = parser.parse_args()
    web.run_app(make_deep_bot(options.name), host="127.0.0.1", port=options.port)
