"""Holding to talk (the phone's microphone) in a live call to the reference IVR bot: the talk
lasts from the hold to the release, and the recording the bot receives holds the microphone's
audio, in the format the bot asked for, as long as the protocol says. The acts' bounds."""

from __future__ import annotations

import array
import asyncio
import math
import re
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.calling.events import EndReason
from emulator.calling.live import MAX_HELD_BYTES, MIC_RATE, LiveCaller, LiveInputError
from tests.audio.sound import goertzel, rms
from tests.calling.test_live import live_call, outcomes
from tests.support import ivr_bot

PACE = 0.25  # four virtual seconds in one real second
"""Slower than the other live tests: the hold must come within the record's initial silence
(5 virtual seconds) of its timer; at ten virtual seconds a real one, that was 0.5 s, and a
machine loaded by the rest of the suite once took longer."""
TONE = 440.0


def tone(seconds: float) -> bytes:
    """A 440 Hz tone as the page sends it: 16-bit little-endian mono at 16 kHz."""
    n = round(seconds * MIC_RATE)
    samples = array.array("h", (round(8000 * math.sin(2 * math.pi * TONE * i / MIC_RATE))
                                for i in range(n)))  # fmt: skip
    return samples.tobytes()  # the test machines are little-endian, as the page's bytes are


@pytest.fixture(scope="module")
def voicemail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("voicemail")
    with ivr_bot("--voicemail-dir", str(folder)) as url:
        yield url, folder


async def test_a_held_talk_is_the_microphones_audio_in_the_recording_the_bot_saves(
    voicemail: tuple[str, Path], tmp_path: Path
) -> None:
    url, folder = voicemail
    async with live_call(url, tmp_path, PACE) as (caller, watch, store, call):
        caller.press("3")  # voicemail
        await watch.until("Workflow [record]")
        # The recording starts after the prompt and the beep: its timer says when.
        await watch.until_kind("live.timer")
        [timer] = [p for k, p, _ in watch.events if k == "live.timer"]
        assert timer["reason"] == "initialSilenceTimeout" and timer["limit"] is not None
        caller.hold()
        for _ in range(3):  # three chunks of 0.1 s, one each 0.25 s: 3 virtual seconds
            caller.audio(tone(0.1))
            await asyncio.sleep(PACE)
        caller.release()
        await watch.until("Workflow [", count=3, seconds=30)  # the goodbye after the message
        caller.hang_up()
        report = await asyncio.wait_for(call, 20)
        said = outcomes(store, report.call_id)
        rows = [e.payload for e in store.events(report.call_id)]
    assert report.end_reason in (EndReason.BOT_HUNG_UP, EndReason.CALLER_HUNG_UP)
    [recorded] = [s for s in said if "recordOutcome" in s or "completedSilenceDetected" in s]
    assert "completedSilenceDetected" in recorded
    # The held talk and the recording are recorded once, as they ended (not as the hold opened
    # them), and the page was told the silence timer when the talk ended.
    [talked] = [r for r in rows if r.get("kind") == "caller spoke"]
    [made] = [r for r in rows if r.get("kind") == "recording made"]
    assert 2.5 < float(talked["end"]) - float(talked["at"]) < 4.5
    assert float(made["end"]) == pytest.approx(float(talked["end"]) + 5, abs=0.01)
    reasons = [p["reason"] for k, p, _ in watch.events if k == "live.timer"]
    assert reasons == ["initialSilenceTimeout", "maxRecordingTimeout", "completedSilenceDetected"]
    [saved] = list(folder.glob(f"{report.call_id}*.wav"))
    with wave.open(str(saved), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 16000)
        samples = array.array("h", w.readframes(w.getnframes()))
        seconds = w.getnframes() / w.getframerate()
    # The talk lasted from the hold to the release (about 3 virtual seconds), then 5 s of
    # silence (maxSilenceTimeoutInSeconds) ended the recording.
    assert 7.0 < seconds < 9.5
    head, tail = samples[: round(0.25 * MIC_RATE)], samples[-MIC_RATE:]
    assert goertzel(head, TONE) > 100 * goertzel(head, 1000.0)  # the microphone's tone
    assert rms(tail) < 50  # the noise floor after the talk


def test_hold_audio_and_release_are_checked_and_bounded() -> None:
    caller = LiveCaller()
    with pytest.raises(LiveInputError, match="between hold and release"):
        caller.audio(b"\0\0")
    with pytest.raises(LiveInputError, match="after hold"):
        caller.release()
    caller.hold()
    with pytest.raises(LiveInputError, match="already holding"):
        caller.hold()
    caller.audio(bytes(MAX_HELD_BYTES - 2))
    caller.audio(bytes(10))  # past two minutes: dropped and counted, never kept
    assert caller.held is not None and len(caller.held) == MAX_HELD_BYTES
    assert caller.dropped == 8
    caller.release()
    assert caller.held is None


async def test_a_stop_tone_pressed_into_a_recording_replays_at_its_moment(
    voicemail: tuple[str, Path], tmp_path: Path
) -> None:
    from emulator.replay.convert import replay_of

    url, _ = voicemail
    async with live_call(url, tmp_path) as (caller, watch, store, call):
        caller.press("3")
        await watch.until("Workflow [record]")
        await watch.until_kind("live.timer")
        await asyncio.sleep(0.2)  # 2 virtual seconds into the recording
        caller.press("#")
        await watch.until("Workflow [", count=3, seconds=30)
        caller.hang_up()
        report = await asyncio.wait_for(call, 20)
        replay = replay_of(store, report.call_id)
    written = re.search(r'press: \{digits: "#", after: ([0-9.]+)s\}', replay.text)
    assert written is not None and 1.5 < float(written[1]) < 3.5, replay.text
    assert replay.verified, replay.notes
