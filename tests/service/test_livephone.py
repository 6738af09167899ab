"""The phone's WebSocket (emulator/service/livephone.py) as a page, or a hostile one, uses it:
a call placed and heard (its prompt audio as binary frames), the microphone's binary frames
while holding, and what a page that floods the socket with audio costs: refused outside a hold,
capped at two minutes within one, the peak memory measured, and the call goes on."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import aiohttp

from emulator.calling.live import MAX_HELD_BYTES
from emulator.service import EMULATOR
from emulator.service.livechat import LIVECHAT
from emulator.service.livephone import LIVE_PHONE_PATH, LIVEPHONE
from emulator.service.livesocket import PROTOCOL
from tests.service.test_phone import Running

SECRET = "botemu.secret."
CHUNK = 200 * 1024
MiB = 1024 * 1024


async def frames(ws: aiohttp.ClientWebSocketResponse, op: str, count: int = 200) -> dict[str, Any]:
    """The first text frame of ``op`` (binary frames and other ops skipped), bounded."""
    for _ in range(count):
        message = await ws.receive(timeout=20)
        if message.type is aiohttp.WSMsgType.TEXT:
            frame: dict[str, Any] = json.loads(message.data)
            if frame["op"] == op:
                return frame
    raise AssertionError(f"no {op} frame came")


async def test_a_page_floods_the_microphone_and_the_call_goes_on(running: Running) -> None:
    app = running.app
    port = app[EMULATOR].config.port
    token = app[LIVECHAT].page_token
    async with aiohttp.ClientSession() as http, http.ws_connect(
        f"http://127.0.0.1:{port}{LIVE_PHONE_PATH}", protocols=(PROTOCOL, SECRET + token)
    ) as ws:
        await frames(ws, "ready")
        await ws.send_bytes(b"\0" * 64)  # no call yet
        assert "no call" in (await frames(ws, "refused"))["error"]
        await ws.send_json({"op": "call", "bot": running.url})  # real time: no time-out meanwhile
        await frames(ws, "started")
        heard = await ws.receive(timeout=20)  # the first prompt's audio, as it begins
        while heard.type is not aiohttp.WSMsgType.BINARY:
            heard = await ws.receive(timeout=20)
        assert len(heard.data) > 16_000  # a WAV of speech, after its header
        await ws.send_bytes(b"\0" * 64)  # audio with no hold: refused, the call goes on
        assert "between hold and release" in (await frames(ws, "refused"))["error"]
        [call] = app[LIVEPHONE].calls
        await ws.send_json({"op": "hold"})
        tracemalloc.start()
        try:
            for _ in range(50):  # 10 MB: far more than a hold keeps
                await ws.send_bytes(b"\1" * CHUNK)
            await ws.send_json({"op": "bots", "ref": "after"})  # acted on after every frame
            await frames(ws, "bots")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert call.caller.held is not None and len(call.caller.held) == MAX_HELD_BYTES
        assert call.caller.dropped == 50 * CHUNK - MAX_HELD_BYTES
        assert peak < MAX_HELD_BYTES + 4 * MiB, f"peak {peak / MiB:.1f} MiB"
        await ws.send_json({"op": "release"})
        await ws.send_json({"op": "hangup"})
        ended = await frames(ws, "ended")
    assert ended["reason"] == "caller hung up"
