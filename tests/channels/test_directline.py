"""Direct Line 3.0 (emulator/channels/directline): the REST routes and the stream against the
reference echo bot through botemu's connector; secrets and tokens as the real service keeps
them; the service's errors; the bounds."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.channels.directline import DIRECTLINE, DirectLine
from emulator.config import BotRegistration, ServiceConfig
from emulator.guard import SECRET_HEADER, read_secret
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, load_module

ROOT = Path(__file__).resolve().parent.parent.parent
APP_ID = "11111111-2222-3333-4444-555555555555"
DL = "/v3/directline"


@dataclass
class Running:
    client: TestClient[web.Request, web.Application]
    app: web.Application
    store: TranscriptStore

    @property
    def service(self) -> DirectLine:
        return self.app[DIRECTLINE]

    @property
    def secret(self) -> str:
        return self.service.secrets()[APP_ID]

    async def call(
        self, method: str, path: str, credential: str | None, body: Any = None, **kw: Any
    ) -> tuple[int, Any]:
        headers = dict(kw.pop("headers", {}))
        if credential is not None:
            headers["Authorization"] = f"Bearer {credential}"
        response = await self.client.request(method, f"{DL}{path}", json=body, headers=headers,
                                             **kw)  # fmt: skip
        text = await response.text()
        return response.status, (json.loads(text) if text else None)


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    port, echo_port = free_port(), free_port()
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(APP_ID, "s3cret", f"http://127.0.0.1:{echo_port}/api/messages"),))  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    client = TestClient(TestServer(app, host="127.0.0.1", port=port))
    await client.start_server()
    p = config.placeholders()
    echo = load_module(ROOT / "examples" / "echo_bot.py", "echo_bot_directline")
    settings = echo.Settings(
        app_id=APP_ID, app_password="s3cret", token_url=p.token_url,
        connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer,
    )  # fmt: skip
    bot = web.AppRunner(echo.make_app(settings))
    await bot.setup()
    await web.TCPSite(bot, "127.0.0.1", echo_port).start()
    try:
        yield Running(client, app, store)
    finally:
        await bot.cleanup()
        await client.close()
        store.close()


USER = {"id": "dl-user-1", "name": "Ada"}
WELCOME = "Welcome, Ada! Say something and I will echo it."


async def texts(running: Running, conversation: str, token: str, count: int) -> list[str]:
    """The bot's message texts once there are ``count`` (polling GET activities, bounded)."""
    found: list[str] = []
    for _ in range(100):
        status, page = await running.call("GET", f"/conversations/{conversation}/activities",
                                          token)  # fmt: skip
        assert status == 200, page
        found = [a["text"] for a in page["activities"]
                 if a["from"].get("role") == "bot" and a.get("type") == "message"]  # fmt: skip
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"only {found}")


async def test_a_conversation_by_token_polled_with_watermarks(running: Running) -> None:
    status, generated = await running.call("POST", "/tokens/generate", running.secret,
                                           {"user": USER})  # fmt: skip
    assert status == 200 and set(generated) == {"conversationId", "token", "expires_in"}
    conversation, token = generated["conversationId"], generated["token"]
    status, started = await running.call("POST", "/conversations", token)
    assert status == 201 and started["conversationId"] == conversation
    assert started["streamUrl"].startswith("ws://") and "/stream?t=" in started["streamUrl"]
    status, again = await running.call("POST", "/conversations", token)
    assert again["conversationId"] == conversation
    assert status == 200  # started already
    assert await texts(running, conversation, token, 1) == [WELCOME]
    status, sent = await running.call("POST", f"/conversations/{conversation}/activities", token,
                                      {"type": "message", "text": "hi", "from": USER})  # fmt: skip
    assert status == 200 and isinstance(sent["id"], str)
    assert await texts(running, conversation, token, 2) == [WELCOME, "echo: hi"]
    _, page = await running.call("GET", f"/conversations/{conversation}/activities", token)
    watermark = page["watermark"]
    _, nothing = await running.call(
        "GET", f"/conversations/{conversation}/activities?watermark={watermark}", token
    )
    assert nothing == {"activities": [], "watermark": watermark}
    kinds = [(a["type"], a["from"]["id"]) for a in page["activities"]]
    assert kinds[0] == ("conversationUpdate", "dl-user-1")  # the user's side, in order
    assert all(a["channelId"] == "directline" for a in page["activities"])


async def test_the_stream_delivers_the_backlog_then_each_activity(running: Running) -> None:
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = started["conversationId"]
    await texts(running, conversation, started["token"], 1)  # the welcome, before the socket
    stream = started["streamUrl"].split(str(running.client.port), 1)[1]
    ws = await running.client.ws_connect(stream)
    backlog = json.loads((await ws.receive(timeout=10)).data)
    assert [a["text"] for a in backlog["activities"] if a["type"] == "message"] == [WELCOME]
    await running.call("POST", f"/conversations/{conversation}/activities", started["token"],
                       {"type": "message", "text": "streamed", "from": USER})  # fmt: skip
    heard: list[str] = []
    for _ in range(10):
        message = await ws.receive(timeout=10)
        if message.data:
            heard += [a.get("text") for a in json.loads(message.data)["activities"]]
        if "echo: streamed" in heard:
            break
    assert heard[:2] == ["streamed", "echo: streamed"]  # the user's own activity, then the reply
    await ws.close()


async def test_a_token_never_opens_another_conversation(running: Running) -> None:
    _, one = await running.call("POST", "/tokens/generate", running.secret, {"user": USER})
    _, two = await running.call("POST", "/tokens/generate", running.secret, {"user": USER})
    await running.call("POST", "/conversations", one["token"])
    await running.call("POST", "/conversations", two["token"])
    other = two["conversationId"]
    for method, path, body in (("GET", f"/conversations/{other}/activities", None),
                               ("POST", f"/conversations/{other}/activities",
                                {"type": "message", "text": "x", "from": USER}),
                               ("GET", f"/conversations/{other}", None)):  # fmt: skip
        status, error = await running.call(method, path, one["token"], body)
        assert status == 403 and error["error"]["code"] == "Forbidden", (path, error)
    status, error = await running.call("POST", f"/conversations/{one['conversationId']}/activities",
                                       one["token"], {"type": "message", "from": {"id": "eve"}})  # fmt: skip
    assert status == 403 and "dl-user-1" in error["error"]["message"]


async def test_errors_as_the_service_gives_them(running: Running) -> None:
    status, error = await running.call("POST", "/conversations", "not-a-credential")
    assert status == 403 and error["error"]["code"] == "Forbidden"
    status, error = await running.call("POST", "/conversations", None)
    assert status == 403
    status, error = await running.call("GET", "/conversations/nope/activities", running.secret)
    assert status == 404 and error["error"]["code"] == "BadArgument"
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    big = {"type": "message", "from": USER, "text": "x" * (300 * 1024)}
    status, error = await running.call(
        "POST", f"/conversations/{started['conversationId']}/activities", started["token"], big
    )
    assert status == 413 and error["error"]["code"] == "MessageSizeTooBig"
    status, error = await running.call("POST", "/tokens/refresh", running.secret)
    assert status == 403  # a secret is not refreshed


async def test_an_expired_token_is_refused_and_a_live_one_refreshed(running: Running) -> None:
    _, generated = await running.call("POST", "/tokens/generate", running.secret, {"user": USER})
    status, refreshed = await running.call("POST", "/tokens/refresh", generated["token"])
    assert status == 200 and refreshed["conversationId"] == generated["conversationId"]
    assert refreshed["token"] != generated["token"]
    grants = running.service.grants
    clock = grants._clock
    grants._clock = lambda: clock() - 10_000  # a token made long ago
    old, _ = grants.token(APP_ID, generated["conversationId"], USER["id"])
    grants._clock = clock
    status, error = await running.call("POST", "/conversations", old)
    assert status == 403 and error["error"]["code"] == "TokenExpired"


async def test_trusted_origins_and_cors(running: Running) -> None:
    _, generated = await running.call("POST", "/tokens/generate", running.secret,
                                      {"user": USER, "trustedOrigins": ["https://shop.example"]})  # fmt: skip
    token = generated["token"]
    status, _ = await running.call("POST", "/conversations", token,
                                   headers={"Origin": "https://evil.example"})  # fmt: skip
    assert status == 403
    response = await running.client.post(f"{DL}/conversations", headers={
        "Authorization": f"Bearer {token}", "Origin": "https://shop.example"})  # fmt: skip
    assert response.status == 201
    assert response.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    preflight = await running.client.options(f"{DL}/conversations", headers={
        "Origin": "https://shop.example", "Access-Control-Request-Method": "POST"})  # fmt: skip
    assert preflight.status == 204
    assert "authorization" in preflight.headers["Access-Control-Allow-Headers"].lower()
    # botemu's own routes still grant no other origin anything
    control = await running.client.get(
        "/_botemu/health", headers={"Origin": "https://shop.example"}
    )
    assert "Access-Control-Allow-Origin" not in control.headers


async def test_the_secret_is_told_only_to_botemus_own_clients(running: Running) -> None:
    plain = await (await running.client.get("/_botemu/config")).json()
    assert "secrets" not in plain["directline"]
    assert plain["directline"]["domain"].endswith("/v3/directline")
    secret_header = {SECRET_HEADER: read_secret(running.app[DIRECTLINE].grants._file.parent)}
    told = await (await running.client.get("/_botemu/config", headers=secret_header)).json()
    assert told["directline"]["secrets"] == {APP_ID: running.secret}


async def test_an_upload_is_kept_and_served_back(running: Running) -> None:
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = started["conversationId"]
    form = aiohttp.FormData()
    form.add_field("activity", json.dumps({"type": "message", "from": USER, "text": "a file"}),
                   content_type="application/vnd.microsoft.activity")  # fmt: skip
    form.add_field("file", b"\x89PNG fake image", filename="pic.png", content_type="image/png")
    response = await running.client.post(
        f"{DL}/conversations/{conversation}/upload?userId={USER['id']}", data=form,
        headers={"Authorization": f"Bearer {started['token']}"})  # fmt: skip
    assert response.status == 200, await response.text()
    _, page = await running.call("GET", f"/conversations/{conversation}/activities",
                                 started["token"])  # fmt: skip
    sent = next(a for a in page["activities"] if a.get("text") == "a file")
    url = sent["attachments"][0]["contentUrl"]
    served = await running.client.get(url.split(str(running.client.port), 1)[1])
    assert served.status == 200 and await served.read() == b"\x89PNG fake image"
    forged = await running.client.get(
        url.split(str(running.client.port), 1)[1].split("?k=")[0] + "?k=x"
    )
    assert forged.status == 403


async def test_a_socket_that_stops_reading_is_closed_and_the_others_go_on(
    running: Running,
) -> None:
    running.service.limits = replace(running.service.limits, outbox=4)
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = running.service.conversations[started["conversationId"]]
    stream = started["streamUrl"].split(str(running.client.port), 1)[1]
    ws = await running.client.ws_connect(stream)
    outbox = next(iter(conversation.sockets))
    for n in range(40):  # pushed faster than anyone reads
        outbox.push({"activities": [{"type": "message", "text": str(n)}], "watermark": str(n)}, 60)
    assert outbox.behind and outbox.queue.qsize() <= 1  # what waited was let go at once
    closed = None
    for _ in range(20):
        message = await ws.receive(timeout=10)
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            closed = message
            break
    assert closed is not None and ws.close_code == 1008
    status, _ = await running.call("GET", f"/conversations/{conversation.id}/activities",
                                   started["token"])  # fmt: skip
    assert status == 200


async def test_a_socket_is_bounded_by_bytes_too(running: Running) -> None:
    """A client that stops reading while the bot sends large activities: the socket's outbox
    holds at most ``Limits.outbox_bytes`` of them, then the socket is closed (1008)."""
    running.service.limits = replace(running.service.limits, outbox_bytes=64 * 1024)
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = running.service.conversations[started["conversationId"]]
    ws = await running.client.ws_connect(started["streamUrl"].split(str(running.client.port), 1)[1])
    outbox = next(iter(conversation.sockets))
    big = "x" * 20_000
    for n in range(10):
        running.service._heard(conversation.id, {"type": "message", "text": big, "id": str(n)})
    assert outbox.behind and outbox.queued == 0
    for _ in range(20):
        message = await ws.receive(timeout=10)
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            break
    assert ws.close_code == 1008


async def test_a_user_unknown_at_the_start_joins_with_their_first_activity(
    running: Running,
) -> None:
    """A conversation started with the secret and no user (Botium, the client library): the
    service tells the bot of the user (a conversationUpdate adding them) before their first
    activity, so a bot that welcomes on it does (regression: no welcome ever came)."""
    _, started = await running.call("POST", "/conversations", running.secret)
    conversation = started["conversationId"]
    for text in ("first", "second"):
        await running.call("POST", f"/conversations/{conversation}/activities", running.secret,
                           {"type": "message", "text": text, "from": {"id": "me"}})  # fmt: skip
    assert await texts(running, conversation, running.secret, 3) == [
        WELCOME.replace("Ada", "there"), "echo: first", "echo: second"]  # fmt: skip
    _, page = await running.call("GET", f"/conversations/{conversation}/activities",
                                 running.secret)  # fmt: skip
    joined = [a["membersAdded"] for a in page["activities"] if a["type"] == "conversationUpdate"]
    assert joined[1:] == [[{"id": "me"}]]  # once, after the bot's own


async def test_a_reconnect_streams_from_its_watermark(running: Running) -> None:
    """``GET /conversations/{id}?watermark=W`` gives a streamUrl whose socket starts after W
    (regression: the socket sent everything again, and the client library showed it twice)."""
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation, token = started["conversationId"], started["token"]
    await texts(running, conversation, token, 1)
    _, page = await running.call("GET", f"/conversations/{conversation}/activities", token)
    status, again = await running.call(
        "GET", f"/conversations/{conversation}?watermark={page['watermark']}", token
    )
    assert status == 200 and again["streamUrl"].endswith(f"&watermark={page['watermark']}")
    ws = await running.client.ws_connect(again["streamUrl"].split(str(running.client.port), 1)[1])
    await running.call("POST", f"/conversations/{conversation}/activities", token,
                       {"type": "message", "text": "later", "from": USER})  # fmt: skip
    first = json.loads((await ws.receive(timeout=10)).data)
    assert [a.get("text") for a in first["activities"]] == ["later"]  # not the welcome again
    await ws.close()


async def test_an_uploads_attachment_descriptions_are_its_files(running: Running) -> None:
    """The client library sends each file's contentType and name in the activity part (its
    contentUrl taken out) and the bytes as a file part: the activity has one attachment per
    file (regression: each file came twice, once without a contentUrl)."""
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = started["conversationId"]
    card = {"contentType": "application/vnd.microsoft.card.hero", "content": {"title": "kept"}}
    described = {"type": "message", "from": USER, "text": "two files",
                 "attachments": [{"contentType": "text/plain", "name": "a.txt"},
                                 {"contentType": "text/plain", "name": "b.txt"}, card]}  # fmt: skip
    form = aiohttp.FormData()
    form.add_field("activity", json.dumps(described),
                   content_type="application/vnd.microsoft.activity")  # fmt: skip
    for name in ("a.txt", "b.txt"):
        form.add_field("file", name.encode(), filename=name, content_type="text/plain")
    response = await running.client.post(
        f"{DL}/conversations/{conversation}/upload?userId={USER['id']}", data=form,
        headers={"Authorization": f"Bearer {started['token']}"})  # fmt: skip
    assert response.status == 200, await response.text()
    _, page = await running.call("GET", f"/conversations/{conversation}/activities",
                                 started["token"])  # fmt: skip
    sent = next(a for a in page["activities"] if a.get("text") == "two files")
    assert [(a["contentType"], a.get("name")) for a in sent["attachments"]] == [
        (card["contentType"], None), ("text/plain", "a.txt"), ("text/plain", "b.txt")]  # fmt: skip
    assert all("contentUrl" in a for a in sent["attachments"][1:])


async def test_the_activities_kept_for_get_are_bounded_by_count_and_bytes(running: Running) -> None:
    """``GET activities`` gives what the conversation keeps: at most ``activities_kept`` and
    ``activities_kept_bytes`` of them (the oldest go first; the watermark goes on)."""
    running.service.limits = replace(running.service.limits, activities_kept=5,
                                     activities_kept_bytes=100_000)  # fmt: skip
    _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
    conversation = running.service.conversations[started["conversationId"]]
    for n in range(8):
        running.service._heard(conversation.id, {"type": "message", "text": str(n), "id": str(n)})
    _, page = await running.call("GET", f"/conversations/{conversation.id}/activities",
                                 started["token"])  # fmt: skip
    assert [a["text"] for a in page["activities"]][-5:] == ["3", "4", "5", "6", "7"]
    assert len(page["activities"]) == 5
    big = "x" * 30_000
    for n in range(8):
        running.service._heard(conversation.id, {"type": "message", "text": big, "id": f"b{n}"})
    _, page = await running.call("GET", f"/conversations/{conversation.id}/activities",
                                 started["token"])  # fmt: skip
    assert [a["id"] for a in page["activities"]] == ["b5", "b6", "b7"]  # 3 of 30 KB fit 100 KB
    assert conversation.kept <= 100_000
    assert page["watermark"] == str(conversation.next)


async def test_a_stream_that_takes_nothing_is_cut_off_after_its_close(running: Running) -> None:
    """A client that reads nothing: the stream's writer is stuck on a full connection, so even
    the close frame cannot go out. Once the socket is to close (here, its conversation closed),
    its connection is cut within ``CLOSE_WAIT``: no writer stays stuck, no socket stays open."""
    import socket

    from emulator.channels.directline import routes

    routes_wait, routes.CLOSE_WAIT = routes.CLOSE_WAIT, 0.2
    client = socket.socket()
    try:
        _, started = await running.call("POST", "/conversations", running.secret, {"user": USER})
        conversation = running.service.conversations[started["conversationId"]]
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.connect(("127.0.0.1", running.client.port))
        path = started["streamUrl"].split(str(running.client.port), 1)[1]
        client.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{running.client.port}\r\n"
                        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode())  # fmt: skip
        for _ in range(100):
            if conversation.sockets:
                break
            await asyncio.sleep(0.02)
        big = "x" * 200_000
        for n in range(30):  # about 6 MB for a client that reads nothing: the writer blocks
            running.service._heard(conversation.id, {"type": "message", "text": big, "id": str(n)})
            await asyncio.sleep(0)
        await asyncio.sleep(0.3)
        began = time.monotonic()
        running.service.close(conversation.id, "closed by the test")
        for _ in range(250):
            if not conversation.sockets:
                break
            await asyncio.sleep(0.02)
        took = time.monotonic() - began
        assert not conversation.sockets and running.service.sockets == 0, f"{took:.1f} s"
        assert took < 4, f"{took:.1f} s"
    finally:
        client.close()
        routes.CLOSE_WAIT = routes_wait
