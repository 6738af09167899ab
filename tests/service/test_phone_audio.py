"""The live phone's loudspeaker (emulator/service/phone_audio.py): each prompt of a live call
as it begins, rendered off the event loop and sent to the page as one binary frame: a text
prompt spoken by the synthesizer, a file prompt's own audio; a WAV the page decodes."""

from __future__ import annotations

import array
import asyncio
import io
import json
import math
import struct
import wave
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestServer

from emulator.audio.pcm import SAMPLE_RATE, wav_bytes
from emulator.config import ServiceConfig
from emulator.service import EMULATOR, make_app
from emulator.service.phone import LivePhone
from emulator.transcripts.store import TranscriptStore
from tests.audio.sound import goertzel, rms
from tests.bots.calling_bots import make_bot
from tests.service.test_phone import PACE, Page, Running
from tests.support import free_port


def unpack(frame: bytes) -> tuple[dict[str, Any], array.array[int]]:
    """The header and the samples of a binary audio frame."""
    (length,) = struct.unpack(">I", frame[:4])
    header = json.loads(frame[4 : 4 + length])
    with wave.open(io.BytesIO(frame[4 + length :]), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        samples = array.array("h", w.readframes(w.getnframes()))
    return header, samples


class Speaker:
    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.changed = asyncio.Event()

    def __call__(self, frame: bytes) -> None:
        self.frames.append(frame)
        self.changed.set()

    async def until(self, count: int, seconds: float = 20.0) -> list[bytes]:
        async with asyncio.timeout(seconds):
            while len(self.frames) < count:
                self.changed.clear()
                await self.changed.wait()
        return self.frames


async def test_each_text_prompt_is_spoken_to_the_page_as_it_begins(running: Running) -> None:
    phone, page, speaker = running.phone, Page(), Speaker()
    live = phone.call(page.push, running.url, pace=PACE, push_audio=speaker)
    welcome, menu = await speaker.until(2)
    live.act("hangup", {})
    await asyncio.wait_for(live.task, 20)  # type: ignore[arg-type]
    header, samples = unpack(welcome)
    assert header["op"] == "audio" and header["operation_id"] == "welcome-1"
    assert header["index"] == 0 and header["at"] == 0.0
    seconds = len(samples) / SAMPLE_RATE
    assert abs(seconds - header["seconds"]) < 0.01 and 1.5 < seconds < 3.0  # as long as it plays
    assert rms(samples[: len(samples) // 2]) > 300  # speech, not silence
    assert unpack(menu)[0]["operation_id"] == "menu-1"


def tone_wav(seconds: float, frequency: float = 440.0) -> bytes:
    n = round(seconds * SAMPLE_RATE)
    return wav_bytes(array.array("h", (round(9000 * math.sin(2 * math.pi * frequency * i / SAMPLE_RATE))
                                       for i in range(n))))  # fmt: skip


async def test_a_file_prompt_plays_its_own_audio_fetched_by_the_platform(tmp_path: Path) -> None:
    bot = TestServer(make_bot("media", tone_wav(1.5)), host="127.0.0.1", port=free_port())
    config = ServiceConfig(port=free_port(), certs_dir=tmp_path / "certs")
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    server = TestServer(app, host="127.0.0.1", port=config.port)
    await bot.start_server()
    await server.start_server()
    try:
        phone, page, speaker = LivePhone(app[EMULATOR]), Page(), Speaker()
        url = f"http://127.0.0.1:{bot.port}/api/calls"
        live = phone.call(page.push, url, pace=PACE, push_audio=speaker)
        [frame] = await speaker.until(1)
        live.act("hangup", {})
        await asyncio.wait_for(live.task, 20)  # type: ignore[arg-type]
    finally:
        await server.close()
        await bot.close()
        store.close()
    header, samples = unpack(frame)
    assert header["source"] == "file" and header["operation_id"] == "play-1"
    assert abs(len(samples) / SAMPLE_RATE - 1.5) < 0.05
    assert goertzel(samples[:4000], 440.0) > 100 * goertzel(samples[:4000], 1000.0)
