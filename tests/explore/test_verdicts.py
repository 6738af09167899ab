"""The findings of an exploration, each rule with its test: a path that crashes a purpose-built
bot, a long prompt, a long menu."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer
from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.calling.session import CallSettings
from emulator.explore.crawler import Crawler, Graph
from emulator.explore.report import SCHEMA_PATH, to_json
from emulator.explore.rules import RULES
from emulator.explore.states import Choice, State
from emulator.explore.verdicts import judge
from emulator.transcripts.store import TranscriptStore

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


def menu_bot(crash_on: str) -> web.Application:
    """A menu of two choices; the choice ``crash_on`` makes the bot answer 500."""

    async def call(request: web.Request) -> web.Response:
        await request.read()
        callback = str(request.url.with_path("/api/callback"))
        return web.json_response({
            "actions": [
                {"operationId": "a", "action": "answer"},
                {"operationId": "m", "action": "recognize",
                 "playPrompt": {"action": "playPrompt", "prompts": [{"value": "One or two?"}]},
                 "choices": [{"name": "one", "dtmfVariation": "1"},
                             {"name": "two", "dtmfVariation": "2"}]},
            ],
            "links": {"callback": callback},
            "notificationSubscriptions": ["callStateChange"],
        })  # fmt: skip

    async def callback(request: web.Request) -> web.Response:
        result = json.loads(await request.read())
        choice = (result.get("operationOutcome") or {}).get("choiceOutcome") or {}
        if choice.get("choiceName") == crash_on:
            return web.Response(status=500, text="boom")
        return web.json_response({"actions": [{"operationId": "h", "action": "hangup"}],
                                  "notificationSubscriptions": ["callStateChange"]})  # fmt: skip

    app = web.Application()
    app.add_routes([web.post("/api/calls", call), web.post("/api/callback", callback)])
    return app


async def test_explore_crash_path_names_the_caller_steps_that_lead_there(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server = await aiohttp_server(menu_bot(crash_on="two"))
    url = str(server.make_url("/api/calls"))
    with TranscriptStore(tmp_path / "t.db") as store:
        graph = await Crawler(CallSettings(bot_url=url, seed=1), store).crawl()
    crashes = [f for f in judge(graph) if f.rule == "EXPLORE-CRASH-PATH"]
    assert [f.where for f in crashes] == ["press 2"]
    assert crashes[0].message == (
        "CALL-HTTP-5XX: the bot answered recognizeOutcome success dtmfOptionMatched choice=two "
        "with HTTP 500 (attempt 1)"
    )
    assert crashes[0].evidence is not None and crashes[0].evidence.startswith("call ")


def state(kind: str = "recognize", choices: int = 2, seconds: float = 5.0) -> State:
    made = tuple(Choice(f"c{n}", str(n), ()) for n in range(choices))
    return State(kind, ("prompt",), choices=made, heard_seconds=seconds)


def test_explore_long_prompt_and_explore_long_menu_have_their_limits() -> None:
    graph = Graph(states={"ok": state(), "long": state(seconds=42), "wide": state(choices=7)})
    found = [(f.rule, f.where) for f in judge(graph)]
    assert found == [("EXPLORE-LONG-PROMPT", "long"), ("EXPLORE-LONG-MENU", "wide")]
    assert judge(graph, max_prompt=60, max_choices=7) == []
    message = judge(graph)[1].message
    assert message == "the menu offers 7 choices (more than 5, as many as a caller can hold)"


def test_every_rule_has_a_test_that_names_it() -> None:
    names = set(re.findall(r"^(?:async )?def (test_\w+)", Path(__file__).read_text(), re.M))
    for rule in RULES:
        slug = rule.id.lower().replace("-", "_")
        assert any(slug in name for name in names), f"{rule.id} has no test"


async def test_the_json_of_an_exploration_follows_its_schema(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server = await aiohttp_server(menu_bot(crash_on="two"))
    url = str(server.make_url("/api/calls"))
    with TranscriptStore(tmp_path / "t.db") as store:
        graph = await Crawler(CallSettings(bot_url=url, seed=1), store).crawl()
    document = to_json(graph, url, judge(graph))
    Draft7Validator(json.loads(SCHEMA_PATH.read_text())).validate(document)
    assert document["version"] == 1 and document["calls"] == len(document["edges"])
    [menu] = document["states"]
    assert [c["name"] for c in menu["choices"]] == ["one", "two"]
    crash = next(e for e in document["edges"] if e["errors"])
    assert crash["from"] == menu["id"] and crash["steps"] == ["press 2"]
    assert [f["rule"] for f in document["findings"]] == ["EXPLORE-CRASH-PATH"]
    document["states"][0]["kind"] = "menu"  # the schema holds the format to its word
    assert not Draft7Validator(json.loads(SCHEMA_PATH.read_text())).is_valid(document)
