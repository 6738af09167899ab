"""The web chat's live socket (emulator/service/livechat.py) and its conversation, a Direct Line
conversation of botemu's own: the socket's ``started`` gives a token, with which the test, as the
page does, starts the conversation, reads the stream and posts activities (``Chat``); the bot's
answers come over the socket. The page's bootstrap, and every refusal (foreign Origin, no
secret, unknown frames, a bad activity, a token used from another origin or for another
conversation, too many conversations), with the conversation going on after each.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from yarl import URL

from emulator.channels.directline import DIRECTLINE, PREFIX
from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.guard import GUARD, SECRET_HEADER
from emulator.logview import standalone_app
from emulator.service import EMULATOR, make_app
from emulator.service.livechat import (
    LIVE_CHAT_PATH,
    LIVECHAT,
    MAX_TEXT,
    META_TOKEN,
    PROTOCOL,
    SECRET_PROTOCOL,
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
class Chat:
    """A conversation the page started: its Direct Line token and stream, as the page holds them."""

    conversation_id: str
    token: str
    user: dict[str, Any]
    stream: aiohttp.ClientWebSocketResponse


@dataclass
class Live:
    client: TestClient[web.Request, web.Application]
    app: web.Application
    base: str
    chats: dict[aiohttp.ClientWebSocketResponse, Chat] = field(default_factory=dict)
    """Each live socket's conversation (``start``)."""

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
        assert ready["limits"]["text"] == MAX_TEXT
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
    return lambda f: f.get("ref") == ref and f["op"] in ("answer", "refused", "started")


def answer_to(activity_id: str) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f["op"] == "answer" and f["activity_id"] == activity_id


async def stream_until(
    stream: aiohttp.ClientWebSocketResponse, wanted: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The stream's activities up to and including the first that ``wanted`` accepts (those
    after it in the same ActivitySet are kept for the next call)."""
    seen: list[dict[str, Any]] = []
    unread = UNREAD.setdefault(stream, [])
    for _ in range(FRAMES):
        while unread:
            seen.append(unread.pop(0))
            if wanted(seen[-1]):
                return seen
        message = await stream.receive(timeout=10)
        assert message.type is aiohttp.WSMsgType.TEXT, message
        if message.data:  # not the keep-alive
            unread.extend(json.loads(message.data)["activities"])
    raise AssertionError(f"the activity never came: {seen}")


UNREAD: dict[aiohttp.ClientWebSocketResponse, list[dict[str, Any]]] = {}
"""Activities of a stream's ActivitySet not yet read by ``stream_until``."""


def shown(activities: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(side, type, text) of each activity."""
    return [("user" if a["from"].get("role") == "user" else "bot", a["type"],
             str(a.get("text", ""))) for a in activities]  # fmt: skip


def from_bot(text: str | None = None) -> Callable[[dict[str, Any]], bool]:
    """The bot's message (saying ``text``, when given)."""
    return lambda a: (a["from"].get("role") != "user" and a["type"] == "message"
                      and (text is None or a.get("text") == text))  # fmt: skip


async def start(
    live: Live, ws: aiohttp.ClientWebSocketResponse, app_id: str = APP_ID,
    channel: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Start a conversation as the page does: ``start`` on the socket, then ``POST
    /conversations`` with the token it gave, and the stream opened; (its id, the bot's answer to
    the conversationUpdate)."""
    frame: dict[str, Any] = {"op": "start", "app_id": app_id, "ref": "s"}
    if channel is not None:
        frame["channel"] = channel
    await ws.send_json(frame)
    started = await until(ws, answered("s"))
    assert started["op"] == "started", started
    grant = started["directline"]
    assert grant["domain"] == PREFIX
    response = await live.client.post(f"{PREFIX}/conversations", json={},
                                      headers=bearer(grant["token"]))  # fmt: skip
    assert response.status == 201, await response.text()
    begun = await response.json()
    assert begun["conversationId"] == started["conversation_id"]
    url = URL(begun["streamUrl"])
    stream = await live.client.ws_connect(url.path_qs)
    if ws in live.chats:
        await live.chats[ws].stream.close()
    live.chats[ws] = Chat(started["conversation_id"], begun["token"], started["user"], stream)
    updates = await stream_until(stream, lambda a: a["type"] == "conversationUpdate")
    answer = await until(ws, answer_to(updates[-1]["id"]))
    return started["conversation_id"], answer


def bearer(token: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}


async def post(
    live: Live, ws: aiohttp.ClientWebSocketResponse, activity: Any, **headers: str
) -> tuple[int, dict[str, Any]]:
    """Post an activity to the socket's conversation as the page does: (status, body)."""
    chat = live.chats[ws]
    body = {**activity, "from": chat.user} if isinstance(activity, dict) else activity
    response = await live.client.post(
        f"{PREFIX}/conversations/{chat.conversation_id}/activities", json=body,
        headers=bearer(chat.token, **headers),
    )  # fmt: skip
    answer: dict[str, Any] = await response.json()
    return response.status, answer


async def send(
    live: Live, ws: aiohttp.ClientWebSocketResponse, activity: dict[str, Any]
) -> dict[str, Any]:
    """Post ``activity``; the bot's answer to it, from the socket."""
    status, body = await post(live, ws, activity)
    assert status == 200, body
    return await until(ws, answer_to(body["id"]))


async def say(
    live: Live, ws: aiohttp.ClientWebSocketResponse, text: str, reply: str | None = None
) -> list[dict[str, Any]]:
    """Say ``text``; the stream's activities up to the bot's ``reply`` (any reply when None)."""
    answer = await send(live, ws, {"type": "message", "text": text})
    assert answer["status"] == 200, answer
    return await stream_until(live.chats[ws].stream, from_bot(reply))


# --- a conversation --------------------------------------------------------------------------


async def test_a_conversation_with_the_echo_bot_in_order_and_recorded(live: Live) -> None:
    ws = await live.connect(token=live.token)
    conversation, answer = await start(live, ws)
    assert answer["status"] == 200 and answer["type"] == "conversationUpdate"
    stream = live.chats[ws].stream
    welcome = await stream_until(stream, from_bot())
    assert shown(welcome) == [("bot", "message", "Welcome, User! Say something and I will echo it.")]
    activities = await say(live, ws, "hello")
    assert shown(activities) == [("user", "message", "hello"), ("bot", "message", "echo: hello")]
    assert all(a["conversation"]["id"] == conversation for a in activities)
    assert {a["channelId"] for a in activities} == {"webchat"}  # the default channel
    call = live.app[EMULATOR].store.call(conversation)
    assert call is not None and call.kind == "conversation"
    rows = [e.payload.get("summary") for e in live.app[EMULATOR].store.events(conversation)]
    assert "client → Direct Line: message sent (200)" in rows  # the page is a Direct Line client
    await ws.close()
    finished = live.app[EMULATOR].store.call(conversation)
    assert finished is not None and finished.end_reason == "web chat closed"
    assert not live.chat.live
    closed = await stream.receive(timeout=10)  # the conversation's stream ends with it
    assert closed.type is aiohttp.WSMsgType.CLOSE and closed.data == 1000, closed
    assert conversation not in live.app[DIRECTLINE].conversations


async def test_the_conversation_update_adds_the_bot_and_the_person(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await ws.send_json({"op": "start", "app_id": APP_ID, "ref": "s"})
    started = await until(ws, answered("s"))
    response = await live.client.post(f"{PREFIX}/conversations",
                                      headers=bearer(started["directline"]["token"]))  # fmt: skip
    url = URL((await response.json())["streamUrl"])
    stream = await live.client.ws_connect(url.path_qs)
    update = (await stream_until(stream, lambda a: True))[0]
    assert update["type"] == "conversationUpdate"
    assert [m["id"] for m in update["membersAdded"]] == [APP_ID, "user-1"]
    assert started["user"]["id"] == "user-1"


@pytest.mark.parametrize("channel", ["directline", "emulator", "msteams"])
async def test_the_chosen_channel_is_the_conversations(live: Live, channel: str) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws, CHAT_BOT, channel=channel)
    activities = await say(live, ws, "hello", "you said: hello")
    assert {a["channelId"] for a in activities} == {channel}
    if channel == "msteams":  # Teams' shape on the person's activities
        mine = activities[0]
        assert mine["channelData"]["tenant"]["id"] and mine["from"]["aadObjectId"]


async def test_events_invokes_and_every_menu_type_reach_the_bot(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws, CHAT_BOT)
    invoke = await send(live, ws, {"type": "invoke", "name": "adaptiveCard/action",
                                   "value": {"n": [1, 2]}})  # fmt: skip
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
    stream = live.chats[ws].stream
    for activity in activities:
        answer = await send(live, ws, activity)
        assert answer["op"] == "answer" and answer["type"] == activity["type"], answer
        seen = await stream_until(stream, lambda a, i=answer["activity_id"]: a["id"] == i)
        assert shown(seen)[-1][:2] == ("user", activity["type"])


async def test_a_reply_with_a_lone_surrogate_reaches_the_page(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws, CHAT_BOT)
    activities = await say(live, ws, "surrogate")
    assert ("bot", "message", "half of a pair: \ud800") in shown(activities)
    activities = await say(live, ws, "after")
    assert ("bot", "message", "you said: after") in shown(activities)


async def test_restart_starts_a_new_conversation(live: Live) -> None:
    ws = await live.connect(token=live.token)
    first, _ = await start(live, ws)
    old = live.chats[ws].token
    second, _ = await start(live, ws)
    assert second != first
    assert set(live.chat.live) == {second}
    ended = live.app[EMULATOR].store.call(first)
    assert ended is not None and ended.end_reason == "web chat closed"
    for conversation in (first, second):  # the old token opens neither
        response = await live.client.get(f"{PREFIX}/conversations/{conversation}/activities",
                                         headers=bearer(old))  # fmt: skip
        assert response.status in (403, 404), conversation


async def test_the_control_secret_opens_the_socket_too(live: Live) -> None:
    secret = live.app[GUARD].secret
    assert secret is not None
    ws = await live.connect(token=secret)
    await start(live, ws)
    activities = await say(live, ws, "again", "echo: again")
    assert ("bot", "message", "echo: again") in shown(activities)


# --- the conversation's token -------------------------------------------------------------------


async def test_the_token_is_the_pages_own_origins_only(live: Live) -> None:
    ws = await live.connect(token=live.token, origin=f"http://127.0.0.1:{live.client.port}")
    await start(live, ws)
    status, body = await post(live, ws, {"type": "message", "text": "hi"},
                              Origin="http://evil.example")  # fmt: skip
    assert status == 403 and "trustedOrigins" in body["error"]["message"], body
    status, body = await post(live, ws, {"type": "message", "text": "hi"},
                              Origin=f"http://127.0.0.1:{live.client.port}")  # fmt: skip
    assert status == 200, body


async def test_the_token_reads_no_other_conversation(live: Live) -> None:
    pages = [await live.connect(token=live.token) for _ in range(2)]
    for ws in pages:
        await start(live, ws)
    mine, other = live.chats[pages[0]], live.chats[pages[1]]
    response = await live.client.get(f"{PREFIX}/conversations/{other.conversation_id}/activities",
                                     headers=bearer(mine.token))  # fmt: skip
    assert response.status == 403
    response = await live.client.post(
        f"{PREFIX}/conversations/{other.conversation_id}/activities",
        json={"type": "message", "text": "x", "from": mine.user}, headers=bearer(mine.token),
    )  # fmt: skip
    assert response.status == 403


async def test_a_token_for_another_user_is_refused(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws)
    chat = live.chats[ws]
    response = await live.client.post(
        f"{PREFIX}/conversations/{chat.conversation_id}/activities",
        json={"type": "message", "text": "x", "from": {"id": "someone-else"}},
        headers=bearer(chat.token),
    )  # fmt: skip
    assert response.status == 403
    assert "user-1" in (await response.json())["error"]["message"]


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
    await start(live, ws)


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
        ({"type": "message", "text": "x", "membersAdded": "nobody"}, "membersAdded must be an array"),
        ({"type": "message", "text": 3}, "text must be a string"),
        ({"type": "message", "attachments": [{"name": "x"}]}, "contentType"),
        ({"text": "x"}, "needs a type"),
        ("hello", "a JSON object"),
    ],
)
async def test_a_bad_activity_is_refused_and_the_conversation_goes_on(
    live: Live, activity: Any, error: str
) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws)
    status, body = await post(live, ws, activity)
    assert status == 400 and error in body["error"]["message"], body
    activities = await say(live, ws, "still here", "echo: still here")
    assert ("bot", "message", "echo: still here") in shown(activities)


async def test_an_activity_over_the_bound_is_refused(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws)
    bound = live.app[DIRECTLINE].limits.activity_bytes
    status, body = await post(live, ws, {"type": "message", "text": "x" * bound})
    assert status == 413 and body["error"]["code"] == "MessageSizeTooBig", body
    await say(live, ws, "still here", "echo: still here")


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ("not json", "not JSON"),
        ("[1]", "a JSON object"),
        ('{"op": "reset"}', "op is start, bots"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"op": "send", "activity": {"type": "message", "text": "x"}}', "through Direct Line"),
        ('{"op": "start", "app_id": "nobody"}', "no messaging bot"),
        ('{"op": "start", "app_id": "' + APP_ID + '", "channel": "fax"}', "channel is one of"),
    ],
)
async def test_a_bad_frame_is_refused_and_the_socket_stays(
    live: Live, frame: str, error: str
) -> None:
    ws = await live.connect(token=live.token)
    await ws.send_str(frame)
    refused = await until(ws, lambda f: f["op"] == "refused")
    assert error in refused["error"], refused
    await start(live, ws)


async def test_live_conversations_are_capped(live: Live) -> None:
    live.chat.max_live = 2
    sockets = [await live.connect(token=live.token) for _ in range(3)]
    await start(live, sockets[0])
    await start(live, sockets[1])
    await sockets[2].send_json({"op": "start", "app_id": APP_ID, "ref": "third"})
    refused = await until(sockets[2], answered("third"))
    assert refused["op"] == "refused" and "too many live conversations (2 of 2)" in refused["error"]
    await start(live, sockets[0])  # a restart is no new live conversation
    await sockets[1].close()
    await start(live, sockets[2])  # a slot is free again
    assert len(live.chat.live) == 2
    assert len({s.conversation_id for s in live.chat.sessions} - {None}) == 2
