"""Attacks on a running botemu's memory, each run in a fresh process by ``test_memory.py``:
``python -m tests.service.memory_attacks CASE DIR`` prints JSON with the resident size (bytes)
at the start, after the attack and after ``POST /_botemu/reset``, and what the attack was told.

- ``attachments``: a registered bot uploads 150 attachments of 2.8 MiB through the connector;
- ``slow-page``: a web chat page that never reads its conversation's Direct Line stream while
  the bot posts 1,200 activities of 250 KB to it.
"""

from __future__ import annotations

import asyncio
import base64
import ctypes
import gc
import json
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from emulator.channels.directline import DIRECTLINE
from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.service import EMULATOR, make_app
from emulator.service.livechat import LIVE_CHAT_PATH, LIVECHAT
from emulator.service.state import USER
from emulator.transcripts.store import TranscriptStore
from tests.support import control_headers, free_port

BOT = anonymous_app_id(1)


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def held() -> int:
    """The resident size once the C allocator has given back the free memory it keeps
    (glibc's ``malloc_trim``): what the process holds, not what the allocator has yet to return
    (which varied from 41 to 90 MiB after the same reset in three runs)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the plain resident size
        pass
    return rss()


async def bot_app() -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/api/messages", handle)
    return app


async def serve(app: web.Application, port: int) -> web.AppRunner:
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def attachments(app: web.Application, base: str, out: dict[str, Any]) -> None:
    conversation = app[EMULATOR].connector.open_conversation(BOT, USER)
    body = json.dumps({"type": "image/png", "name": "x.png",
                       "originalBase64": base64.b64encode(bytes(2_936_012)).decode()})  # fmt: skip
    statuses: dict[int, int] = {}
    async with aiohttp.ClientSession() as http:
        for _ in range(150):
            async with http.post(f"{base}/v3/conversations/{conversation.id}/attachments",
                                 data=body, headers={"Content-Type": "application/json"}) as r:  # fmt: skip
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.status == 413:
                    out["error"] = (await r.json())["error"]["code"]
    out["statuses"] = statuses


def ws_frame(text: str) -> bytes:
    """A masked client text frame."""
    data = text.encode()
    head = bytes([0x81, 0x80 | 126]) + len(data).to_bytes(2, "big") if len(data) > 125 \
        else bytes([0x81, 0x80 | len(data)])  # fmt: skip
    return head + bytes(4) + data  # a zero mask leaves the data as it is


async def slow_page(app: web.Application, base: str, port: int, out: dict[str, Any]) -> None:
    """The page starts a conversation (its live socket, then Direct Line) and then never reads
    the conversation's stream."""
    token = app[LIVECHAT].page_token
    async with aiohttp.ClientSession() as http:
        live = await http.ws_connect(f"{base}{LIVE_CHAT_PATH}",
                                     protocols=["botemu.live.v1", f"botemu.secret.{token}"])  # fmt: skip
        await live.send_json({"op": "start", "app_id": BOT, "ref": 1})
        started: dict[str, Any] = {}
        for _ in range(10):
            started = json.loads((await live.receive(timeout=10)).data)
            if started["op"] == "started":
                break
        grant = started["directline"]
        async with http.post(f"{base}{grant['domain']}/conversations",
                             headers={"Authorization": f"Bearer {grant['token']}"}) as r:  # fmt: skip
            stream = URL((await r.json())["streamUrl"])
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall((f"GET {stream.path_qs} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())  # fmt: skip
        conversation_id = str(started["conversation_id"])
        conversation = app[DIRECTLINE].conversations[conversation_id]
        for _ in range(100):
            if conversation.sockets:
                break
            await asyncio.sleep(0.05)
        outbox = next(iter(conversation.sockets))
        connector = app[EMULATOR].connector
        for i in range(1200):  # each text its own, as from the bot's requests
            text = f"{i:05d}" + "x" * 250_000
            connector.post_activity(conversation_id, {"type": "message", "text": text})
            if i % 20 == 0:
                await asyncio.sleep(0)
        out["peak_rss_during"] = rss()
        for _ in range(160):  # the stream is cut within CLOSE_WAIT of falling behind
            if not conversation.sockets:
                break
            await asyncio.sleep(0.05)
        out["closed"] = not conversation.sockets
        out["behind"] = outbox.behind
        out["kept"] = len(connector.conversation(conversation_id).activities)
        sock.close()
        await live.close()
        await asyncio.sleep(0.5)


async def main(case: str, folder: Path) -> dict[str, Any]:
    port, bot_port = free_port(), free_port()
    bot = BotRegistration(BOT, "", f"http://127.0.0.1:{bot_port}/api/messages", anonymous=True)
    config = ServiceConfig(port=port, bots=(bot,), certs_dir=folder / "certs")
    store = TranscriptStore(folder / "t.db", write_behind=True)
    app = make_app(config, store)
    runners = [await serve(app, port), await serve(await bot_app(), bot_port)]
    base = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {"start": held()}
    if case == "attachments":
        await attachments(app, base, out)
    else:
        await slow_page(app, base, port, out)
    out["after"] = rss()
    headers = {**control_headers(app), "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/_botemu/reset", data="{}", headers=headers) as r:
            out["reset"] = r.status
    # What the transcript's writer still has queued (behind on a loaded machine: the exchanges
    # it records, bodies and all) is not what the reset keeps: a read waits for the queue.
    store.count()
    out["after_reset"] = held()
    for runner in runners:
        await runner.cleanup()
    store.close()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], Path(sys.argv[2])))))
