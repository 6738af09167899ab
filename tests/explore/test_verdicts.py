"""The findings of an exploration, each rule with its test against a purpose-built bot
(``tests/bots/flow_bots.py``): a path that crashes, a dead end, a loop with no exit, two choices
that go to the same place, a wrong key handled in one menu and not in another, a prompt whose
number changes on every call; and a long prompt, a long menu."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer
from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.calling.session import CallSettings
from emulator.explore.crawler import Crawler, Edge, Graph
from emulator.explore.edges import Move
from emulator.explore.report import SCHEMA_PATH, to_json
from emulator.explore.rules import RULES
from emulator.explore.states import Choice, State
from emulator.explore.verdicts import judge
from emulator.transcripts.store import TranscriptStore
from tests.bots.flow_bots import make_flow_bot

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


async def explore(kind: str, aiohttp_server: ServerFactory, tmp_path: Path) -> Graph:
    server = await aiohttp_server(make_flow_bot(kind))
    url = str(server.make_url("/api/calls"))
    with TranscriptStore(tmp_path / "t.db") as store:
        return await Crawler(CallSettings(bot_url=url, seed=1), store).crawl()


def found(graph: Graph) -> list[tuple[str, str]]:
    return [(f.rule, f.where) for f in judge(graph)]


def state_of(graph: Graph, prompt: str) -> str:
    """The id of the state whose last prompt starts with ``prompt`` (masked, lower case)."""
    return next(i for i, s in graph.states.items() if s.prompts[-1].startswith(prompt))


async def test_the_flow_bot_with_a_crash_path_is_caught_on_both_ways_to_the_choice(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("crash", aiohttp_server, tmp_path)
    assert found(graph) == [("EXPLORE-CRASH-PATH", "press 2"), ("EXPLORE-CRASH-PATH", "say news")]


async def test_explore_dead_end_is_the_menu_with_no_way_out_and_not_the_one_before_it(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("dead-end", aiohttp_server, tmp_path)
    balance = state_of(graph, "your balance is # dollars")
    dead = [f for f in judge(graph) if f.rule == "EXPLORE-DEAD-END"]
    assert [f.where for f in dead] == [balance]
    assert dead[0].evidence == "reached by: press 2"
    assert "only the caller's hang-up ends the call" in dead[0].message
    # "press 1 to hear it again" brings the menu back, as its name says: not an inert choice
    assert "EXPLORE-INERT-CHOICE" not in {rule for rule, _ in found(graph)}


async def test_explore_endless_retry_follows_the_silence_loop_in_one_call(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("endless", aiohttp_server, tmp_path)
    retry = state_of(graph, "sorry, i did not get that")
    assert found(graph) == [("EXPLORE-ENDLESS-RETRY", retry), ("EXPLORE-ENDLESS-RETRY", retry)]
    silence, wrong = judge(graph)
    assert silence.message.startswith("silence is asked about again for ever: after 12 times")
    assert wrong.message.startswith("a wrong key is asked about again for ever")
    loop = next(c for c in graph.checks if c.move == "silence")
    assert loop.broken and loop.repeats == 12 and len(loop.call_ids) == 1
    assert graph.calls == len(graph.edges) + 2  # one follow-up call per loop


async def test_explore_inert_choice_two_choices_to_the_same_place(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("same-place", aiohttp_server, tmp_path)
    menu = state_of(graph, "press # for billing")
    [inert] = judge(graph)
    assert (inert.rule, inert.where) == ("EXPLORE-INERT-CHOICE", menu)
    assert inert.message.startswith("choices 'billing' and 'payments' take the caller through")
    assert inert.evidence is not None and inert.evidence.count("call ") == 2


def test_explore_inert_choice_that_brings_its_own_menu_back_or_ends_like_another() -> None:
    menu = State("recognize", ("pick one",), choices=(Choice("a", "1", ()), Choice("b", "2", ()),
                 Choice("c", "3", ())))  # fmt: skip
    graph = Graph(states={"m": menu})
    graph.edges += [
        Edge("start", Move("call", (), "call"), "m", None, "c0", depth=0),
        Edge("m", Move("press 1", ("press 1",), choice="a"), "m", None, "c1", depth=1),
        Edge("m", Move("press 2", ("press 2",), choice="b"), None, "bot hung up", "c2",
             depth=1, tail=("bye.",)),
        Edge("m", Move("press 3", ("press 3",), choice="c"), None, "bot hung up", "c3",
             depth=1, tail=("bye.",)),
    ]  # fmt: skip
    messages = [f.message for f in judge(graph) if f.rule == "EXPLORE-INERT-CHOICE"]
    assert messages == [
        "choice 'a' brings the same menu back, unchanged",
        "choices 'b' and 'c' end the call after the same prompts: the bot never tells them apart",
    ]


async def test_explore_inconsistent_wrong_key_asked_again_in_one_menu_and_ending_another(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("inconsistent", aiohttp_server, tmp_path)
    returns = state_of(graph, "returns. press #")
    orders = state_of(graph, "press # for orders")
    [odd] = judge(graph)
    assert (odd.rule, odd.where) == ("EXPLORE-INCONSISTENT", returns)
    assert odd.message == (
        f"a wrong key here ends the call (bot hung up), while in menu {orders} the bot asks again"
    )


async def test_a_number_that_changes_on_every_call_is_one_state_and_no_finding(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("counter", aiohttp_server, tmp_path)
    assert [s.prompts for s in graph.states.values()] == [
        ("you are caller number #. press # for our hours.",)
    ]
    assert judge(graph) == []
    assert judge(await explore("tidy", aiohttp_server, tmp_path)) == []


async def test_explore_no_exit_is_each_path_the_platform_had_to_end_with_what_was_heard(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    graph = await explore("on-hold", aiohttp_server, tmp_path)
    assert found(graph) == [("EXPLORE-NO-EXIT", "press 3"), ("EXPLORE-NO-EXIT", "say hours")]
    hours = judge(graph)[0]
    assert hours.severity.value == "error"
    assert hours.evidence is not None and hours.evidence.startswith("call ")
    assert hours.message.startswith(
        "no exit: the platform ended the call (platform hung up: workflow limit reached) after "
    )
    assert hours.message.endswith(
        "the caller heard 'We are open nine to five. Please hold.', 'Please hold.' ×19 and 30 more"
    )
    held = next(e for e in graph.edges if e.move.label == "press 3")
    assert held.to is None and held.stalled >= 10 and held.heard[:2] == (
        "We are open nine to five. Please hold.", "Please hold.")  # fmt: skip


def test_explore_no_exit_after_ten_workflows_in_a_row_that_never_listen() -> None:
    graph = Graph(states={"m": State("recognize", ("pick one",), choices=(Choice("a", "1", ()),))})
    ended = "platform hung up: callback delivery failed"
    graph.edges += [
        Edge("start", Move("call", (), "call"), "m", None, "c0"),
        Edge("m", Move("press 1", ("press 1",)), None, ended, "c1", steps=("press 1",),
             tail=("please hold.",) * 10, heard=("Please hold.",) * 10, stalled=10),
        Edge("m", Move("press 2", ("press 2",)), None, ended, "c2", steps=("press 2",), stalled=9),
        Edge("m", Move("press 3", ("press 3",)), None, "bot hung up", "c3", steps=("press 3",),
             stalled=12),  # a long hold that the bot ends itself
    ]  # fmt: skip
    [finding] = [f for f in judge(graph) if f.rule == "EXPLORE-NO-EXIT"]
    assert (finding.where, finding.evidence) == ("press 1", "call c1")
    assert finding.message == (
        f"no exit: the platform ended the call ({ended}) after 10 Workflows in a row that played "
        "prompts and neither listened nor hung up; the caller heard 'Please hold.' ×10"
    )


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
    assert document["version"] == 2 and document["calls"] == len(document["edges"])
    [menu] = document["states"]
    assert [c["name"] for c in menu["choices"]] == ["one", "two"]
    crash = next(e for e in document["edges"] if e["errors"])
    assert crash["from"] == menu["id"] and crash["steps"] == ["press 2"]
    assert [f["rule"] for f in document["findings"]] == ["EXPLORE-CRASH-PATH"]
    document["states"][0]["kind"] = "menu"  # the schema holds the format to its word
    assert not Draft7Validator(json.loads(SCHEMA_PATH.read_text())).is_valid(document)
