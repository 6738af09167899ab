"""The web chat's live transport (emulator/service/livechat.py): a conversation with the reference
echo bot over the socket, the page's bootstrap, and every refusal (foreign Origin, no secret,
oversized or unknown frames, too many conversations), with the conversation going on after each.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.guard import GUARD, SECRET_HEADER
from emulator.logview import standalone_app
from emulator.service import EMULATOR, make_app
from emulator.service.livechat import (
    LIVE_CHAT_PATH,
    LIVECHAT,
    MAX_DEPTH,
    META_TOKEN,
    PROTOCOL,
    SECRET_PROTOCOL,
    STRINGS,
    LiveChat,
)
from emulator.transcripts.store import TranscriptStore
from tests.service.chat_bot import make_bot as make_chat_bot
from tests.support import free_port, load_module

ROOT = Path(__file__).resolve().parent.parent.parent
APP_ID = "11111111-2222-3333-4444-555555555555"
CHAT_BOT = anonymous_app_id(1)
FRAMES = 60
"""At most this many frames are read while waiting for one (every wait is bounded)."""


@dataclass
class Live:
    client: TestClient[web.Request, web.Application]
    app: web.Application
    base: str

    @property
    def chat(self) -> LiveChat:
        return self.app[LIVECHAT]

    @property
    def token(self) -> str:
        return self.chat.page_token

    async def connect(
        self, *, token: str | None = None, origin: str | None = None, protocol: bool = True
    ) -> aiohttp.ClientWebSocketResponse:
        protocols = [PROTOCOL] if protocol else []
        if token is not None:
            protocols.append(SECRET_PROTOCOL + token)
        headers = {"Origin": origin} if origin else {}
        ws = await self.client.ws_connect(LIVE_CHAT_PATH, protocols=protocols, headers=headers)
        ready = await until(ws, lambda f: f["op"] == "ready")
        assert ready["limits"]["text"] == STRINGS["text"]
        return ws


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    port, echo_port, chat_port = free_port(), free_port(), free_port()
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(APP_ID, "s3cret", f"http://127.0.0.1:{echo_port}/api/messages"),
        BotRegistration(CHAT_BOT, "", f"http://127.0.0.1:{chat_port}/api/messages",
                        anonymous=True),
    ))  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    client = TestClient(TestServer(app, host="127.0.0.1", port=port))
    await client.start_server()
    p = config.placeholders()
    echo = load_module(ROOT / "examples" / "echo_bot.py", "echo_bot_livechat")
    settings = echo.Settings(
        app_id=APP_ID, app_password="s3cret", token_url=p.token_url,
        connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer,
    )  # fmt: skip
    runners = []
    for bot, bot_port in ((echo.make_app(settings), echo_port), (make_chat_bot(), chat_port)):
        runner = web.AppRunner(bot)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        yield Live(client, app, f"http://127.0.0.1:{port}")
    finally:
        for runner in runners:
            await runner.cleanup()
        await client.close()
        store.close()


async def until(
    ws: aiohttp.ClientWebSocketResponse, wanted: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The first frame ``wanted`` accepts (frames before it are skipped), bounded."""
    for _ in range(FRAMES):
        message = await ws.receive(timeout=10)
        assert message.type is aiohttp.WSMsgType.TEXT, message
        frame: dict[str, Any] = json.loads(message.data)
        if wanted(frame):
            return frame
    raise AssertionError("the frame never came")


async def frames_until(
    ws: aiohttp.ClientWebSocketResponse, wanted: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Every frame up to and including the first that ``wanted`` accepts."""
    seen: list[dict[str, Any]] = []
    for _ in range(FRAMES):
        seen.append(json.loads((await ws.receive(timeout=10)).data))
        if wanted(seen[-1]):
            return seen
    raise AssertionError(f"the frame never came: {seen}")


def answered(ref: str) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f.get("ref") == ref and f["op"] in ("answer", "refused")


def shown(frames: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(side, type, text) of each activity frame."""
    return [(f["from"], f["activity"]["type"], str(f["activity"].get("text", "")))
            for f in frames if f["op"] == "activity"]  # fmt: skip


async def start(
    ws: aiohttp.ClientWebSocketResponse, app_id: str = APP_ID
) -> tuple[str, list[dict[str, Any]]]:
    await ws.send_json({"op": "start", "app_id": app_id, "ref": "s"})
    frames = await frames_until(ws, answered("s"))
    started = next(f for f in frames if f["op"] == "started")
    return started["conversation_id"], frames


async def say(
    ws: aiohttp.ClientWebSocketResponse, ref: str, **activity: Any
) -> list[dict[str, Any]]:
    await ws.send_json({"op": "send", "ref": ref, "activity": {"type": "message", **activity}})
    return await frames_until(ws, answered(ref))


# --- a conversation --------------------------------------------------------------------------


async def test_a_conversation_with_the_echo_bot_in_order_and_recorded(live: Live) -> None:
    ws = await live.connect(token=live.token)
    conversation, frames = await start(ws)
    assert shown(frames) == [
        ("user", "conversationUpdate", ""),
        ("bot", "message", "Welcome, User! Say something and I will echo it."),
    ]
    assert frames[-1]["op"] == "answer" and frames[-1]["status"] == 200
    update = next(f["activity"] for f in frames if f["op"] == "activity")
    assert [m["id"] for m in update["membersAdded"]] == ["user-1", APP_ID]
    frames = await say(ws, "m1", text="hello")
    assert shown(frames) == [("user", "message", "hello"), ("bot", "message", "echo: hello")]
    assert frames[-1]["status"] == 200
    assert all(f["activity"]["conversation"]["id"] == conversation
               for f in frames if f["op"] == "activity")  # fmt: skip
    call = live.app[EMULATOR].store.call(conversation)
    assert call is not None and call.kind == "conversation"
    await ws.close()
    finished = live.app[EMULATOR].store.call(conversation)
    assert finished is not None and finished.end_reason == "web chat closed"
    assert not live.chat.live


async def test_events_invokes_and_every_menu_type_reach_the_bot(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(ws, CHAT_BOT)
    await ws.send_json({"op": "send", "ref": "i", "activity": {
        "type": "invoke", "name": "adaptiveCard/action", "value": {"n": [1, 2]}}})  # fmt: skip
    invoke = await until(ws, answered("i"))
    assert invoke["status"] == 200
    assert invoke["body"] == {"echo": {"n": [1, 2]}}
    activities: list[dict[str, Any]] = [
        {"type": "event", "name": "tokens/response", "value": {"a": 1}},
        {"type": "typing"},
        {"type": "endOfConversation", "code": "completedSuccessfully"},
        {"type": "messageReaction", "reactionsAdded": [{"type": "like"}]},
        {"type": "conversationUpdate", "membersRemoved": [{"id": "user-1"}]},
        {"type": "deleteUserData"},
    ]  # fmt: skip
    for number, activity in enumerate(activities):
        await ws.send_json({"op": "send", "ref": str(number), "activity": activity})
        frames = await frames_until(ws, answered(str(number)))
        assert frames[-1]["op"] == "answer", frames[-1]
        assert shown(frames)[0][:2] == ("user", activity["type"])


async def test_a_reply_with_a_lone_surrogate_reaches_the_page(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(ws, CHAT_BOT)
    frames = await say(ws, "s", text="surrogate")
    assert ("bot", "message", "half of a pair: \ud800") in shown(frames)
    frames = await say(ws, "t", text="after")
    assert ("bot", "message", "you said: after") in shown(frames)


async def test_restart_starts_a_new_conversation(live: Live) -> None:
    ws = await live.connect(token=live.token)
    first, _ = await start(ws)
    second, frames = await start(ws)
    assert second != first
    assert shown(frames)[0] == ("user", "conversationUpdate", "")
    assert set(live.chat.live) == {second}
    ended = live.app[EMULATOR].store.call(first)
    assert ended is not None and ended.end_reason == "web chat closed"


async def test_the_control_secret_opens_the_socket_too(live: Live) -> None:
    secret = live.app[GUARD].secret
    assert secret is not None
    ws = await live.connect(token=secret)
    await start(ws)
    frames = await say(ws, "x", text="again")
    assert ("bot", "message", "echo: again") in shown(frames)


# --- the page's bootstrap --------------------------------------------------------------------


async def test_the_page_gets_its_token_in_a_meta_tag_and_nothing_caches_it(live: Live) -> None:
    page = await live.client.get("/", headers={"Sec-Fetch-Dest": "document",
                                               "Sec-Fetch-Site": "cross-site"})  # fmt: skip
    html = await page.text()
    assert f'<meta name="{META_TOKEN}" content="{live.token}">' in html
    assert page.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert str(live.app[GUARD].secret) not in html  # the control secret never goes to the page


@pytest.mark.parametrize("dest", ["script", "iframe", "empty", "image"])
async def test_a_cross_site_subresource_gets_no_token(live: Live, dest: str) -> None:
    page = await live.client.get(
        "/", headers={"Sec-Fetch-Dest": dest, "Sec-Fetch-Site": "cross-site"}
    )
    assert live.token not in await page.text()


async def test_a_rebound_host_gets_no_page_at_all(live: Live) -> None:
    page = await live.client.get("/", headers={"Host": f"rebound.test:{live.client.port}"})
    assert page.status == 403
    assert live.token not in await page.text()


async def test_the_standalone_log_view_has_no_web_chat(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        client = TestClient(TestServer(standalone_app(store)))
        await client.start_server()
        try:
            assert META_TOKEN not in await (await client.get("/")).text()
            assert (await client.get(LIVE_CHAT_PATH)).status == 404
        finally:
            await client.close()


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "origin", "protocol", "status"),
    [
        ("page", "http://evil.example:8080", True, 403),  # another origin
        ("page", "http://localhost:1", True, 403),  # another port: another origin
        (None, None, True, 403),  # no token
        ("wrong", None, True, 403),
        ("page", None, False, 400),  # not the web chat's protocol
    ],
)
async def test_an_upgrade_that_is_not_the_pages_own_is_refused(
    live: Live, token: str | None, origin: str | None, protocol: bool, status: int
) -> None:
    given = live.token if token == "page" else token
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await live.connect(token=given, origin=origin, protocol=protocol)
    assert refused.value.status == status
    assert not live.chat.sessions


async def test_the_pages_own_origin_is_accepted(live: Live) -> None:
    ws = await live.connect(token=live.token, origin=f"http://127.0.0.1:{live.client.port}")
    await start(ws)


async def test_a_post_without_the_secret_is_refused(live: Live) -> None:
    for headers in ({"Content-Type": "application/json"},
                    {"Content-Type": "application/json", SECRET_HEADER: live.token}):  # fmt: skip
        response = await live.client.post(LIVE_CHAT_PATH, data="{}", headers=headers)
        assert response.status == 403, headers  # the page token is not the control secret
    response = await live.client.post(
        "/_botemu/chat", data=json.dumps({"app_id": APP_ID, "text": "x"}),
        headers={"Content-Type": "application/json", "Origin": "http://evil.example"},
    )  # fmt: skip
    assert response.status == 403


@pytest.mark.parametrize(
    ("activity", "error"),
    [
        ({"type": "message", "text": "x" * (STRINGS["text"] + 1)}, "at most 16,384"),
        ({"type": "trace", "text": "x"}, "not one the web chat sends"),
        ({"type": "message", "text": "x", "from": {"id": "bot"}}, "does not send 'from'"),
        ({"type": "event", "name": "e", "value": "v" * 40_000}, "bytes of JSON"),
        ({"type": "event", "name": "e", "value": json.loads("[" * 40 + "]" * 40)}, "deeper"),
        ({"type": "message", "text": 3}, "text is a string"),
        ({"type": "message"}, "a message has text"),
        ("hello", "a JSON object"),
    ],
)
async def test_a_bad_activity_is_refused_and_the_conversation_goes_on(
    live: Live, activity: Any, error: str
) -> None:
    ws = await live.connect(token=live.token)
    await start(ws)
    await ws.send_json({"op": "send", "ref": "bad", "activity": activity})
    refused = await until(ws, answered("bad"))
    assert refused["op"] == "refused" and error in refused["error"], refused
    frames = await say(ws, "ok", text="still here")
    assert ("bot", "message", "echo: still here") in shown(frames)
    assert MAX_DEPTH < 40


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ("not json", "not JSON"),
        ("[1]", "a JSON object"),
        ('{"op": "reset"}', "op is start, send"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"op": "send", "activity": {"type": "message", "text": "x"}}', "no conversation yet"),
        ('{"op": "start", "app_id": "nobody"}', "no messaging bot"),
    ],
)
async def test_a_bad_frame_is_refused_and_the_socket_stays(
    live: Live, frame: str, error: str
) -> None:
    ws = await live.connect(token=live.token)
    await ws.send_str(frame)
    refused = await until(ws, lambda f: f["op"] == "refused")
    assert error in refused["error"], refused
    await start(ws)


async def test_live_conversations_are_capped(live: Live) -> None:
    live.chat.max_live = 2
    sockets = [await live.connect(token=live.token) for _ in range(3)]
    await start(sockets[0])
    await start(sockets[1])
    await sockets[2].send_json({"op": "start", "app_id": APP_ID, "ref": "third"})
    refused = await until(sockets[2], answered("third"))
    assert refused["op"] == "refused" and "too many live conversations (2 of 2)" in refused["error"]
    await start(sockets[0])  # a restart is no new live conversation
    await sockets[1].close()
    await start(sockets[2])  # a slot is free again
    assert len(live.chat.live) == 2
    assert len({s.conversation_id for s in live.chat.sessions} - {None}) == 2
