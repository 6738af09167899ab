"""The call's track in the log view (``emulator/logview/audio.py``): a real call to the reference
IVR bot served as one stereo WAV as long as the call; the errors (an unknown id, a running call,
a conversation)."""

from __future__ import annotations

import io
import wave
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, web

from emulator.calling.caller import CallerScript
from emulator.calling.session import CallSettings, place_call
from emulator.guard import protect
from emulator.logview import standalone_app
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, ivr_bot

API = "/_logview/api/calls"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, TranscriptStore]]:
    store = TranscriptStore(tmp_path / "t.db")
    port = free_port()
    app = standalone_app(store, interval=0.02)
    protect(app, port=port, bind_host="127.0.0.1")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}", store
    finally:
        await runner.cleanup()
        store.close()


async def test_a_calls_track_is_a_stereo_wav_as_long_as_the_call(
    served: tuple[str, TranscriptStore],
) -> None:
    base, store = served
    with ivr_bot() as url:
        settings = CallSettings(
            bot_url=url, caller=CallerScript.from_inline("press 1; press 1234#")
        )
        report = await place_call(settings, store)
    async with ClientSession() as http, http.get(f"{base}{API}/{report.call_id}/audio") as answer:
        assert answer.status == 200 and answer.headers["Content-Type"] == "audio/wav"
        assert answer.headers["Cache-Control"] == "no-store"
        assert answer.headers["Accept-Ranges"] == "bytes"  # a player seeks by ranges
        body = await answer.read()
    async with (
        ClientSession() as http,
        http.get(f"{base}{API}/{report.call_id}/audio", headers={"Range": "bytes=44-99"}) as part,
    ):
        assert part.status == 206 and await part.read() == body[44:100]
        assert part.headers["Content-Range"] == f"bytes 44-99/{len(body)}"
    with wave.open(io.BytesIO(body)) as track:
        assert track.getnchannels() == 2
        seconds = track.getnframes() / track.getframerate()
    assert seconds == pytest.approx(report.vtime, abs=0.05)


async def test_an_unknown_a_running_call_and_a_conversation_have_no_track(
    served: tuple[str, TranscriptStore],
) -> None:
    base, store = served
    store.start(bot="http://127.0.0.1:9/api/calls", call_id="running-1")
    store.start(bot="http://127.0.0.1:9/api/messages", call_id="chat-1", kind="conversation")
    store.finish("chat-1", reason="done")
    async with ClientSession() as http:
        for call_id, status in (("nope", 404), ("running-1", 409), ("chat-1", 422)):
            async with http.get(f"{base}{API}/{call_id}/audio") as answer:
                assert answer.status == status, (call_id, await answer.text())
