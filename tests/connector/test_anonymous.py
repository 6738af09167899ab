"""Anonymous bots (an SDK template's default: no app id, no password): botemu sends them
activities with no token and takes their requests without one, on their own conversations only;
each of their conversations carries one CONN-ANONYMOUS-BOT warning. And the defects a template
bot hit on the way: the conversationUpdate botemu delivered could not be replied to."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.cli.options import service_config
from emulator.config import ANONYMOUS_APP_ID, BotRegistration, ServiceConfig
from emulator.connector.sender import TokenKind
from emulator.service import EMULATOR, make_app
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.support import control_headers, free_port

CREDENTIALED = "11111111-2222-3333-4444-555555555555"


@dataclass
class TemplateBot:
    """A bot as an SDK template makes it without credentials: it greets a member who joins by
    replying to the conversationUpdate, and echoes each message, with no token at all."""

    seen: list[tuple[str, str | None]] = field(default_factory=list)
    """(activity type, the Authorization header it came with)."""
    answers: list[int] = field(default_factory=list)
    """The connector's status for each of the bot's own requests."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/messages", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        activity: dict[str, Any] = await request.json()
        self.seen.append((activity["type"], request.headers.get("Authorization")))
        base = f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
        if activity["type"] == "conversationUpdate":
            reply = {"type": "message", "text": "Hello and welcome!"}
        else:
            reply = {"type": "message", "text": f"Echo: {activity.get('text')}"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{base}/activities/{activity['id']}", json=reply) as answer,
        ):
            self.answers.append(answer.status)
            members = await http.get(f"{base}/activities/{activity['id']}/members")
            self.answers.append(members.status)
        return web.Response(status=200)


@dataclass
class World:
    emulator: TestClient
    bot: TemplateBot
    store: TranscriptStore


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    bot = TemplateBot()
    bot_port = free_port()
    runner = web.AppRunner(bot.app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    port = free_port()
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(ANONYMOUS_APP_ID, "", f"http://127.0.0.1:{bot_port}/api/messages",
                        anonymous=True),
        BotRegistration(CREDENTIALED, "s3cret", None),
    ))  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    emulator = TestClient(
        TestServer(app, host="127.0.0.1", port=port), headers=control_headers(app)
    )  # the control API's secret
    await emulator.start_server()
    try:
        yield World(emulator, bot, store)
    finally:
        await emulator.close()
        await runner.cleanup()
        store.close()


async def chat(world: World, app_id: str, text: str) -> str:
    emulator = world.emulator.app[EMULATOR]
    conversation_id, _, answer = await emulator.chat(app_id, text, None, TokenKind.CONNECTOR)
    assert answer.status == 200
    return conversation_id


async def test_an_anonymous_bot_chats_with_no_token_either_way(world: World) -> None:
    conversation_id = await chat(world, ANONYMOUS_APP_ID, "hi")
    assert world.bot.seen == [("conversationUpdate", None), ("message", None)]
    assert world.bot.answers == [200, 200, 200, 200]  # replies and members, without a token
    emulator = world.emulator.app[EMULATOR]
    texts = [a.get("text") for a in emulator.connector.conversation(conversation_id).activities]
    assert texts == [None, "Hello and welcome!", "hi", "Echo: hi"]
    findings = [e for e in world.store.events(conversation_id) if e.kind == EventKind.FINDING]
    assert [f.payload["rule"] for f in findings] == ["CONN-ANONYMOUS-BOT"]  # one, not per request
    assert findings[0].payload["severity"] == "warning"


async def test_replying_to_the_delivered_conversation_update_works(world: World) -> None:
    """Regression: botemu delivered the conversationUpdate but never stored it, so replying to
    it (what create_reply in on_members_added_activity does) answered 404, and so did its
    members."""
    await chat(world, ANONYMOUS_APP_ID, "hi")
    assert world.bot.answers[:2] == [200, 200]


async def test_no_token_reaches_no_credentialed_bots_conversation(world: World) -> None:
    emulator = world.emulator.app[EMULATOR]
    theirs = emulator.connector.open_conversation(CREDENTIALED, {"id": "u1"}).id
    activity = {"type": "message", "text": "sneaky"}
    for method, path in [
        ("POST", f"/v3/conversations/{theirs}/activities"),
        ("GET", f"/v3/conversations/{theirs}/members"),
        ("GET", "/v3/conversations/nope/members"),  # unknown: 401 too, not 404
    ]:
        answer = await world.emulator.request(method, path, json=activity)
        assert answer.status == 401, (method, path)
    created = await world.emulator.post(
        "/v3/conversations", json={"bot": {"id": CREDENTIALED}, "members": [{"id": "u1"}]}
    )
    assert created.status == 401
    assert len(emulator.connector.conversations(CREDENTIALED)["conversations"]) == 1


async def test_no_token_creates_a_conversation_for_the_one_anonymous_bot(world: World) -> None:
    created = await world.emulator.post("/v3/conversations", json={"members": [{"id": "u1"}]})
    assert created.status == 201
    conversation_id = (await created.json())["id"]
    emulator = world.emulator.app[EMULATOR]
    assert emulator.connector.conversation(conversation_id).bot_app_id == ANONYMOUS_APP_ID


async def test_no_token_is_refused_when_no_bot_is_anonymous(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path, bots=(BotRegistration(CREDENTIALED, "pw", None),))
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    async with TestClient(TestServer(app), headers=control_headers(app)) as client:
        assert (
            await client.post("/v3/conversations", json={"members": [{"id": "u"}]})
        ).status == 401
        assert (await client.get("/v3/conversations")).status == 401
    store.close()


def options(**values: Any) -> argparse.Namespace:
    defaults = {"config": None, "host": None, "port": None, "profile": None, "certs": None,
                "bot_endpoint": None, "bot_app_id": None, "bot_app_password": None}  # fmt: skip
    return argparse.Namespace(**(defaults | values))


def test_serve_with_an_endpoint_and_no_app_id_registers_an_anonymous_bot(tmp_path: Path) -> None:
    config = service_config(options(bot_endpoint="http://127.0.0.1:3978/api/messages"))
    [bot] = config.bots
    assert bot.anonymous and bot.app_id == ANONYMOUS_APP_ID and bot.app_password == ""
    file = tmp_path / "botemu.yaml"
    file.write_text("bots:\n  - endpoint: http://127.0.0.1:3978/api/messages\n"
                    "  - app_id: ''\n    endpoint: http://127.0.0.1:3979/api/messages\n"
                    f"  - app_id: {CREDENTIALED}\n    app_password: pw\n", encoding="utf-8")  # fmt: skip
    bots = service_config(options(config=file)).bots
    assert [(b.app_id, b.anonymous) for b in bots] == [
        (ANONYMOUS_APP_ID, True), (f"{ANONYMOUS_APP_ID}-2", True), (CREDENTIALED, False)
    ]  # fmt: skip


async def test_a_conversation_scenario_and_the_plugin_talk_to_an_anonymous_bot(
    tmp_path: Path,
) -> None:
    from emulator.pytest_plugin import Botemu, BotemuServer
    from emulator.runner.runner import Runner, Target
    from emulator.scenario.loader import load_scenario

    bot = TemplateBot()
    runner = web.AppRunner(bot.app())
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    url = f"http://127.0.0.1:{port}/api/messages"
    scenario_file = tmp_path / "echo.yaml"
    scenario_file.write_text(
        "name: echo, anonymous\nmessaging: [hi]\nexpect:\n  replies:\n"
        "    - {text: {equals: 'Hello and welcome!'}}\n    - {text: {equals: 'Echo: hi'}}\n"
        "  findings: [CONN-ANONYMOUS-BOT]\n",
        encoding="utf-8",
    )
    try:
        store = TranscriptStore(tmp_path / "t.db")
        async with Runner(Target(messaging_bot=url, certs=tmp_path / "c"), store) as scenarios:
            result = await scenarios.run(load_scenario(scenario_file))
        assert result.passed, result.failures
        assert [f.rule for f in result.findings] == ["CONN-ANONYMOUS-BOT"]
        store.close()
        server = BotemuServer(ServiceConfig(port=0, certs_dir=tmp_path / "c2"), tmp_path / "p.db")
        server.start()
        try:
            replies = await Botemu(server).chat(url, "again")
        finally:
            server.stop()
        assert [r.text for r in replies] == ["Hello and welcome!", "Echo: again"]
    finally:
        await runner.cleanup()


async def test_a_running_botemu_registers_an_unknown_endpoint_as_an_anonymous_bot(
    world: World,
) -> None:
    """``botemu chat --bot URL`` (and ``botemu test --emulator``) reach a template bot through
    a running botemu that was started without it."""
    url = "http://127.0.0.1:9/api/messages"
    first = await world.emulator.post("/_botemu/bots", json={"endpoint": url})
    assert first.status == 200
    assert await first.json() == {"app_id": f"{ANONYMOUS_APP_ID}-2", "anonymous": True}
    again = await (await world.emulator.post("/_botemu/bots", json={"endpoint": url})).json()
    assert again["app_id"] == f"{ANONYMOUS_APP_ID}-2"  # once
    emulator = world.emulator.app[EMULATOR]
    assert emulator.config.anonymous(f"{ANONYMOUS_APP_ID}-2")
    assert emulator.config.only_anonymous() is None  # two anonymous bots now
    for bad in ({}, {"endpoint": "ftp://x"}, {"endpoint": "http://" + "x" * 3000}):
        assert (await world.emulator.post("/_botemu/bots", json=bad)).status == 400
