"""Calling bots with a planted bug deep in their flow, for ``botemu fuzz``.

``make_fuzz_bot(kind)`` builds an aiohttp app serving ``POST /api/calls``. The flow is that of
``flow_bots`` (menus, digits, goodbyes in a table); what the caller did so far travels in the
Workflow's ``appState`` (``history``), and the bug looks at it.

- ``operator``: the main menu offers 1 (hours), 2 (news) and 9 (the operator). The operator menu
  says "press # to go back"; silence there brings "still holding", and a second silence a
  goodbye. The bug: a caller who pressed 9, stayed silent through the next prompt, then pressed
  ``#`` gets HTTP 500. Pressing ``#`` at once goes back to the main menu, as it should. Minimal
  failing caller: ``press 9; silence; press #``.
- ``speech``: the same menus; the bug: news chosen by speech (the caller speaking over the menu
  prompt, which allows barge-in) is answered with an invalid Workflow (a recognize with both
  choices and collectDigits); by key it works. Minimal failing caller: ``say news``.
- ``sound``: the operator bot without its bug.

Runnable for manual work: ``python -m tests.bots.fuzz_bots KIND --port N`` (from the project root).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from aiohttp import web

from tests.bots.flow_bots import Node, goodbye, menu, next_node, workflow

MENU = "Press 1 for our hours, 2 for news, or 9 for the operator."
OPERATOR: dict[str, Node] = {
    "start": menu(MENU, "start-again", "start-again",
                  hours=("1", "hours"), news=("2", "news"), operator=("9", "hold")),
    "start-again": menu("Sorry. " + MENU, "bye", "bye",
                        hours=("1", "hours"), news=("2", "news"), operator=("9", "hold")),
    "hold": menu("Please hold for the operator, or press # to go back.", "still", "hold",
                 back=("#", "start")),
    "still": menu("Still holding. Press # to go back.", "busy", "still", back=("#", "start")),
    "hours": goodbye("We are open from 9 to 5. Goodbye."),
    "news": goodbye("No news today. Goodbye."),
    "busy": goodbye("The operator is busy. Goodbye."),
    "bye": goodbye("We did not hear from you. Goodbye."),
}  # fmt: skip
KINDS = ("operator", "speech", "sound")


def _event(outcome: dict[str, Any]) -> str:
    """What the caller did, as the history keeps it: a key, a spoken choice, or silence."""
    choice = outcome.get("choiceOutcome") or {}
    reason = str(choice.get("completionReason", ""))
    if "silence" in reason.lower():
        return "silence"
    if reason == "speechOptionMatched":
        return f"said {choice.get('choiceName')}"
    name = choice.get("choiceName")
    keys = {n: key for node in OPERATOR.values() for n, (key, _) in node.choices.items()}
    return keys.get(name, "other") if name else "other"


def buggy(kind: str, history: list[str], to: str) -> bool:
    if kind == "operator":
        return history[-3:] == ["9", "silence", "#"]
    if kind == "speech":
        return history[-1:] == ["said news"] and to == "news"
    return False


def make_fuzz_bot(kind: str) -> web.Application:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    async def handle(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        callback = str(request.url.with_path("/api/calls"))
        if "appState" not in body and "operationOutcome" not in body:  # the Conversation
            return web.json_response(_workflow("start", callback, [], True))
        if body.get("callState") == "terminated":
            return web.Response(status=200)
        at = json.loads(body.get("appState") or '{"node": "start", "history": []}')
        outcome = body.get("operationOutcome") or {}
        history = [*at["history"], _event(outcome)][-8:]
        to = next_node(OPERATOR[at["node"]], outcome)
        if buggy(kind, history, to):
            if kind == "operator":
                return web.Response(status=500, text="operator transfer failed")
            return web.json_response({
                "actions": [{"operationId": "both", "action": "recognize",
                             "choices": [{"name": "a", "dtmfVariation": "1"}],
                             "collectDigits": {"maxNumberOfDtmfs": 2}}],
                "links": {"callback": callback},
                "notificationSubscriptions": ["callStateChange"],
            })  # fmt: skip
        return web.json_response(_workflow(to, callback, history, False))

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


def _workflow(node: str, callback: str, history: list[str], first: bool) -> Any:
    doc = workflow(OPERATOR, node, callback, 0, first)
    if "appState" in doc:
        doc["appState"] = json.dumps({"node": node, "history": history})
    return doc


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A calling bot with a planted bug.")
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--port", type=int, default=3981)
    options = parser.parse_args()
    web.run_app(make_fuzz_bot(options.kind), host="127.0.0.1", port=options.port)
