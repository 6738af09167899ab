"""The call flow as a person reads it and as JSON: every prompt as the bot said it (digits and
case kept) beside the normalised key, and what the caller heard after the last input of a path
that ended the call, on the purpose-built bots (``tests/bots/flow_bots.py``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer
from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.explore.report import SCHEMA_PATH, to_json, tree
from emulator.explore.verdicts import judge
from tests.explore.test_verdicts import explore

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


async def test_the_tree_and_the_json_show_prompts_as_said_and_the_goodbyes_heard(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("on-hold", aiohttp_server, tmp_path)
    text = tree(graph)
    assert "'Welcome to Contoso Energy. Press 1 for billing, 2 for support or 3 for …'" in text
    assert "    press 1 -> end: bot hung up after 'Your balance is 42 dollars. Goodbye.'\n" in text
    assert (
        "  press 3 -> end: platform hung up: workflow limit reached after 'We are open nine to "
        "five. Please hold.', 'Please hold.' ×19 and 30 more\n"
    ) in text
    document = to_json(graph, "http://bot", judge(graph))
    Draft7Validator(json.loads(SCHEMA_PATH.read_text())).validate(document)
    menu, billing, record = document["states"]
    assert menu["prompts"] == [
        "Welcome to Contoso Energy. Press 1 for billing, 2 for support or 3 for our opening hours."
    ]
    assert '"prompts":["welcome to contoso energy. press # for billing, # for support' in menu["key"]
    assert hashlib.sha256(menu["key"].encode()).hexdigest()[:12] == menu["id"]
    assert billing["prompts"] == ["Billing. Press 1 for your balance or 2 to hear this again."]
    assert record["prompts"] == ["Please leave a message after the tone."]
    balance = next(e for e in document["edges"] if e["steps"] == ["press 1", "press 1"])
    assert (balance["end"], balance["heard"]) == (
        "bot hung up", ["Your balance is 42 dollars. Goodbye."])  # fmt: skip
    held = next(e for e in document["edges"] if e["steps"] == ["press 3"])
    assert held["heard"][:2] == ["We are open nine to five. Please hold.", "Please hold."]
    assert len(held["heard"]) == 20  # the first of the 50 prompts heard
    assert all(e["heard"] == [] for e in document["edges"] if e["to"] is not None)


async def test_a_state_keeps_its_words_as_first_heard_and_is_keyed_by_them_masked(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("counter", aiohttp_server, tmp_path)
    [state] = graph.states.values()
    assert state.prompts == ("you are caller number #. press # for our hours.",)
    assert state.said == ("You are caller number 1. Press 1 for our hours.",)
    [heard] = {e.heard for e in graph.edges if e.move.label == "press 1"}
    assert heard == ("We are open from 9 to 5. Goodbye.",)
