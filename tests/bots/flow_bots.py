"""Calling bots with a call flow drawn as data, each with one flaw in its flow, for the explorer.

``make_flow_bot(kind)`` builds an aiohttp app serving ``POST /api/calls`` (the Conversation and
every result: the flow's position travels in the Workflow's ``appState``). A flow is a table of
nodes: a menu (a recognize with choices), digits (a collectDigits), or a goodbye (a prompt and a
hang-up). A menu or digits node says where each choice, the digits, a silence and a wrong key
lead: another node, or ``CRASH`` (the bot answers 500).

Kinds (``FLOWS``) and what ``botemu explore`` must find in each:

- ``dead-end``: "your balance" repeats itself for ever, whatever the caller does -> EXPLORE-DEAD-END
  on that menu (and its silence loop: EXPLORE-ENDLESS-RETRY)
- ``crash``: the second choice answers 500 -> EXPLORE-CRASH-PATH at ``press 2``
- ``endless``: silence re-prompts for ever; the one choice says goodbye -> EXPLORE-ENDLESS-RETRY
- ``same-place``: billing and payments ask the same question and say the same goodbye ->
  EXPLORE-INERT-CHOICE
- ``inconsistent``: a wrong key is asked again in the orders menu and ends the call in the
  returns menu -> EXPLORE-INCONSISTENT
- ``counter``: "you are caller number N", N new on every call: one state, no finding
- ``tidy``: a small flow with nothing wrong: no finding
- ``on-hold``: billing (a sub-menu whose "your balance" says "Your balance is 42 dollars.
  Goodbye." and hangs up), support (a voicemail record) and opening hours, which plays "We are
  open nine to five. Please hold." and then "Please hold." for ever (a prompt with a callback,
  never listening, never hanging up) -> EXPLORE-NO-EXIT on the ways to the hours

Runnable for manual work: ``python tests/bots/flow_bots.py KIND --port N``.
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

CRASH = "<500>"


@dataclass(frozen=True)
class Node:
    """``kind``: menu, digits, record, goodbye or hold (a prompt with a callback, then
    ``digits`` names the node that follows). ``choices``: name -> (DTMF key, where it leads)."""

    kind: str
    prompt: str
    choices: dict[str, tuple[str, str]] = field(default_factory=dict)
    digits: str = ""
    silence: str = ""
    wrong: str = ""


def menu(prompt: str, silence: str, wrong: str, **choices: tuple[str, str]) -> Node:
    return Node("menu", prompt, choices, silence=silence, wrong=wrong)


def digits(prompt: str, then: str, silence: str) -> Node:
    return Node("digits", prompt, digits=then, silence=silence)


def goodbye(prompt: str) -> Node:
    return Node("goodbye", prompt)


def hold(prompt: str, then: str) -> Node:
    return Node("hold", prompt, digits=then)


def record(prompt: str, then: str) -> Node:
    return Node("record", prompt, digits=then, silence=then)


BYE = goodbye("Thank you for calling. Goodbye.")
NO_INPUT = goodbye("We did not hear from you. Goodbye.")
HOURS = goodbye("We are open from 9 to 5. Goodbye.")

FLOWS: dict[str, dict[str, Node]] = {
    "dead-end": {
        "start": menu("Press 1 for our hours or 2 for your balance.", "retry", "retry",
                      hours=("1", "hours"), balance=("2", "balance")),
        "retry": menu("Sorry. Press 1 for our hours or 2 for your balance.", "bye", "bye",
                      hours=("1", "hours"), balance=("2", "balance")),
        "balance": menu("Your balance is 12 dollars. Press 1 to hear it again.", "balance",
                        "balance", again=("1", "balance")),
        "hours": HOURS, "bye": NO_INPUT,
    },
    "crash": {
        "start": menu("Press 1 for our hours or 2 for news.", "bye", "bye",
                      hours=("1", "hours"), news=("2", CRASH)),
        "hours": HOURS, "bye": NO_INPUT,
    },
    "endless": {
        "start": menu("Press 1 for our hours.", "retry", "retry", hours=("1", "hours")),
        "retry": menu("Sorry, I did not get that. Press 1 for our hours.", "retry", "retry",
                      hours=("1", "hours")),
        "hours": HOURS,
    },
    "same-place": {
        "start": menu("Press 1 for billing, 2 for payments or 3 for our hours.", "bye", "bye",
                      billing=("1", "account"), payments=("2", "account"), hours=("3", "hours")),
        "account": digits("Enter your account number, then press pound.", "thanks", "bye"),
        "thanks": BYE, "hours": HOURS, "bye": NO_INPUT,
    },
    "inconsistent": {
        "start": menu("Press 1 for orders or 2 for returns.", "bye", "start-again",
                      orders=("1", "orders"), returns=("2", "returns")),
        "start-again": menu("Sorry. Press 1 for orders or 2 for returns.", "bye", "bye",
                            orders=("1", "orders"), returns=("2", "returns")),
        "orders": menu("Orders. Press 1 to track a parcel.", "bye", "orders-again",
                       track=("1", "thanks")),
        "orders-again": menu("Sorry. Orders. Press 1 to track a parcel.", "bye", "bye",
                             track=("1", "thanks")),
        "returns": menu("Returns. Press 1 to send a parcel back.", "bye", "bye",
                        back=("1", "thanks")),
        "thanks": BYE, "bye": NO_INPUT,
    },
    "counter": {
        "start": menu("You are caller number {n}. Press 1 for our hours.", "bye", "bye",
                      hours=("1", "hours")),
        "hours": HOURS, "bye": NO_INPUT,
    },
    "tidy": {
        "start": menu("Press 1 for our hours or 2 to enter your order number.", "retry", "retry",
                      hours=("1", "hours"), order=("2", "order")),
        "retry": menu("Sorry. Press 1 for our hours or 2 to enter your order number.", "bye",
                      "bye", hours=("1", "hours"), order=("2", "order")),
        "order": digits("Enter your order number, then press pound.", "thanks", "bye"),
        "hours": HOURS, "thanks": BYE, "bye": NO_INPUT,
    },
    "on-hold": {
        "start": menu("Welcome to Contoso Energy. Press 1 for billing, 2 for support or 3 for "
                      "our opening hours.", "bye", "bye",
                      billing=("1", "billing"), support=("2", "voicemail"), hours=("3", "hours")),
        "billing": menu("Billing. Press 1 for your balance or 2 to hear this again.", "bye",
                        "bye", balance=("1", "balance"), again=("2", "billing")),
        "balance": goodbye("Your balance is 42 dollars. Goodbye."),
        "voicemail": record("Please leave a message after the tone.", "thanks"),
        "hours": hold("We are open nine to five. Please hold.", "holding"),
        "holding": hold("Please hold.", "holding"),
        "thanks": BYE, "bye": NO_INPUT,
    },
}  # fmt: skip


def workflow(flow: dict[str, Node], name: str, callback: str, n: int, first: bool) -> Any:
    node = flow[name]
    play = {"action": "playPrompt", "operationId": f"p-{name}",
            "prompts": [{"value": node.prompt.format(n=n)}]}  # fmt: skip
    actions: list[dict[str, Any]] = [{"operationId": "answer", "action": "answer"}] if first else []
    state = {"appState": json.dumps({"node": name, "n": n}),
             "notificationSubscriptions": ["callStateChange"]}  # fmt: skip
    if node.kind == "goodbye":
        actions += [play, {"operationId": "bye", "action": "hangup"}]
        return {"actions": actions, "notificationSubscriptions": ["callStateChange"]}
    if node.kind == "hold":
        return {"actions": [*actions, play], "links": {"callback": callback}, **state}
    if node.kind == "record":
        actions.append({"operationId": f"r-{name}", "action": "record", "playPrompt": play,
                        "maxDurationInSeconds": 30, "stopTones": ["#"]})  # fmt: skip
        return {"actions": actions, "links": {"callback": callback}, **state}
    wait: dict[str, Any] = {"operationId": f"r-{name}", "action": "recognize", "playPrompt": play,
                            "initialSilenceTimeoutInSeconds": 3}  # fmt: skip
    if node.kind == "menu":
        wait["choices"] = [{"name": choice, "dtmfVariation": key, "speechVariation": [choice]}
                           for choice, (key, _) in node.choices.items()]  # fmt: skip
    else:
        wait["collectDigits"] = {"maxNumberOfDtmfs": 6, "stopTones": ["#"]}
    actions.append(wait)
    return {"actions": actions, "links": {"callback": callback}, **state}


def next_node(node: Node, outcome: dict[str, Any]) -> str:
    """Where an outcome leads from ``node`` (a hold's or a record's: always on)."""
    if node.kind in ("hold", "record"):
        return node.digits
    choice = outcome.get("choiceOutcome") or {}
    collected = outcome.get("collectDigitsOutcome") or {}
    inner = choice or collected
    if outcome.get("outcome") == "success" or inner.get("completionReason") in (
        "dtmfOptionMatched", "speechOptionMatched", "completedStopToneDetected",
        "maxDigitsReceived", "interdigitTimeout"):  # fmt: skip
        if node.kind == "menu" and choice.get("choiceName") in node.choices:
            return node.choices[choice["choiceName"]][1]
        if node.kind == "digits" and collected.get("digits"):
            return node.digits
    reason = str(inner.get("completionReason", ""))
    return node.silence if "silence" in reason.lower() else node.wrong or node.silence


async def result_of(request: web.Request) -> Any:
    """The JSON a request carries: its body, or the JSON part of a multipart one (a record's
    result, with its recording)."""
    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        async for part in reader:
            if isinstance(part, BodyPartReader) and "json" in (part.headers.get("Content-Type") or ""):
                return json.loads(await part.read())
        return {}
    return json.loads(await request.read())


def make_flow_bot(kind: str) -> web.Application:
    flow = FLOWS[kind]
    calls = itertools.count(1)

    async def handle(request: web.Request) -> web.Response:
        body = await result_of(request)
        callback = str(request.url.with_path("/api/calls"))
        if "appState" not in body and "operationOutcome" not in body:  # the Conversation
            return web.json_response(workflow(flow, "start", callback, next(calls), True))
        if body.get("callState") == "terminated":
            return web.Response(status=200)
        at = json.loads(body.get("appState") or '{"node": "start", "n": 0}')
        to = next_node(flow[at["node"]], body.get("operationOutcome") or {})
        if to == CRASH:
            return web.Response(status=500, text="boom")
        return web.json_response(workflow(flow, to, callback, at["n"], False))

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A calling bot whose flow has one flaw.")
    parser.add_argument("kind", choices=sorted(FLOWS))
    parser.add_argument("--port", type=int, default=3980)
    options = parser.parse_args()
    web.run_app(make_flow_bot(options.kind), host="127.0.0.1", port=options.port)
