"""A stored call as one stereo track (emulator/audio/track.py, timeline.py): made of given
events, and of real calls to the reference IVR bot."""

from __future__ import annotations

import array
import asyncio
import io
import json
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.audio import tones
from emulator.audio.cache import AudioCache
from emulator.audio.pcm import SAMPLE_RATE, to_le_bytes
from emulator.audio.synth import Speech, Synthesizer
from emulator.audio.timeline import CALLER, PLATFORM, segments
from emulator.audio.track import TrackError, render_call
from emulator.calling.caller import CallerScript
from emulator.calling.session import place_call
from emulator.calling.settings import CallSettings
from emulator.transcripts.store import TranscriptStore
from tests.audio.sound import active_fraction, goertzel, read_stereo, rms_at, stored_call
from tests.support import ivr_bot

QUIET = 30.0  # RMS of a 20 ms window below this is silence (digital silence is 0)
LOUD = 300.0


def workflow(*actions: dict[str, object]) -> dict[str, object]:
    return {"kind": "http.response", "body": json.dumps({"actions": list(actions)})}


def prompt_played(op: str, index: int, at: float, end: float, text: str | None,
                  *, uri: str | None = None, cut: bool = False) -> dict[str, object]:  # fmt: skip
    return {"kind": "prompt played", "at": at, "end": end, "operation_id": op, "index": index,
            "text": text, "file_uri": uri, "interrupted": cut}  # fmt: skip


def render(
    store: TranscriptStore, call_id: str, path: Path, synthesizer: Synthesizer | None = None
) -> tuple[array.array[int], array.array[int]]:
    render_call(store, call_id, path, synthesizer or Synthesizer(AudioCache(None)))
    left, right, rate = read_stereo(path)
    assert rate == SAMPLE_RATE
    return left, right


def events_of(body: dict[str, object], *played: dict[str, object]) -> list[tuple[float, str, dict[str, object]]]:  # fmt: skip
    response = {k: v for k, v in body.items() if k != "kind"}
    out: list[tuple[float, str, dict[str, object]]] = [(0.0, "http.response", response)]
    out += [(float(p.get("end", p.get("at", 0.0))), "platform" if "operation_id" in p else "caller", p)  # type: ignore[arg-type]
            for p in played]  # fmt: skip
    return out


def test_a_prompt_plays_in_its_slot_after_its_silence_and_the_rest_is_silent(
    tmp_path: Path,
) -> None:
    body = workflow({"operationId": "p", "action": "playPrompt", "prompts": [
        {"value": "Welcome to the line", "silenceLengthInMilliseconds": 1000}]})  # fmt: skip
    with TranscriptStore(tmp_path / "t.db") as store:
        call = stored_call(store, [*events_of(body, prompt_played("p", 0, 0.5, 3.1, "Welcome to the line")),
                                   (4.0, "call.end", {"reason": "bot hung up"})])  # fmt: skip
        left, right = render(store, call, tmp_path / "call.wav")
    assert len(left) == 4 * SAMPLE_RATE
    assert rms_at(left, 0.0, 1.5) < QUIET  # before the prompt, and its second of silence
    assert active_fraction(left, 1.5, 2.5) > 0.5  # speech
    assert rms_at(left, 3.12, 4.0) < QUIET  # after its slot
    assert rms_at(right, 0.0, 4.0) < QUIET  # the caller said nothing


def test_a_prompt_cut_by_barge_in_stops_where_the_event_says(tmp_path: Path) -> None:
    text = "For sales press one. For support press two. For anything else stay on the line."
    body = workflow({"operationId": "menu", "action": "recognize", "playPrompt": {
        "operationId": "menu-prompt", "action": "playPrompt", "prompts": [{"value": text}]}})  # fmt: skip
    pressed = {"kind": "caller pressed", "at": 1.0, "keys": "5", "times": [1.0]}
    with TranscriptStore(tmp_path / "t.db") as store:
        call = stored_call(store, [*events_of(body, prompt_played("menu", 0, 0.0, 1.0, text, cut=True)),
                                   (1.0, "caller", pressed), (3.0, "call.end", {})])  # fmt: skip
        left, right = render(store, call, tmp_path / "call.wav")
    assert active_fraction(left, 0.1, 0.9) > 0.5
    assert rms_at(left, 1.0, 3.0) < QUIET  # cut at the press
    key = right[round(1.01 * SAMPLE_RATE) : round(1.09 * SAMPLE_RATE)]
    power = {f: goertzel(key, f) for f in (*tones.DTMF_ROWS, *tones.DTMF_COLUMNS)}
    assert min(power[770.0], power[1336.0]) > 100 * max(
        p for f, p in power.items() if f not in (770.0, 1336.0))  # fmt: skip
    assert rms_at(right, 1.12, 3.0) < QUIET


def test_beeps_files_and_talk(tmp_path: Path) -> None:
    body = workflow({"operationId": "rec", "action": "record", "playPrompt": {
        "operationId": "rp", "prompts": [{"fileUri": "https://bot/hello.wav"}]}})  # fmt: skip
    talk = {"kind": "caller spoke", "at": 3.5, "end": 5.0, "text": None}
    with TranscriptStore(tmp_path / "t.db") as store:
        call = stored_call(store, [
            *events_of(body, prompt_played("rec", 0, 0.0, 3.0, None, uri="https://bot/hello.wav")),
            (3.0, "platform", {"kind": "beep played", "at": 3.0, "operation_id": "rec"}),
            (5.0, "caller", talk), (6.0, "call.end", {})])  # fmt: skip
        left, right = render(store, call, tmp_path / "call.wav")
    assert active_fraction(left, 0.0, 0.5) == 1.0  # the placeholder's first pulse
    beep = left[round(3.1 * SAMPLE_RATE) : round(3.4 * SAMPLE_RATE)]
    assert goertzel(beep, 1000.0) > 100 * goertzel(beep, 440.0)
    assert rms_at(left, 3.52, 6.0) < QUIET
    assert active_fraction(right, 3.5, 5.0) > 0.5 and rms_at(right, 5.02, 6.0) < QUIET


def test_a_file_prompt_whose_audio_is_stored_plays_that_audio(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(to_le_bytes(tones.tone((600.0,), 1.0, 0.5)))
    uri = "https://bot/tone.wav"
    body = workflow({"operationId": "p", "action": "playPrompt", "prompts": [{"fileUri": uri}]})
    with TranscriptStore(tmp_path / "t.db") as store:
        call = store.start(bot="b")
        store.append(call, "http.response", {"body": body["body"]}, vtime=0.0)  # type: ignore[dict-item]
        store.append(
            call, "platform", {"uri": uri, "format": "wav"}, vtime=0.0, blob=buf.getvalue()
        )
        store.append(call, "platform", prompt_played("p", 0, 0.0, 2.0, None, uri=uri), vtime=2.0)  # type: ignore[arg-type]
        store.finish(call, reason="done")
        left, _ = render(store, call, tmp_path / "call.wav")
    assert goertzel(left[: SAMPLE_RATE // 2], 600.0) > 100 * goertzel(
        left[: SAMPLE_RATE // 2], 440.0
    )
    assert rms_at(left, 1.02, 2.0) < QUIET  # a one-second file in a two-second slot


def test_the_prompt_fields_are_read_from_the_workflow() -> None:
    from emulator.transcripts.records import StoredEvent

    body = workflow({"operationId": "g", "action": "playPrompt", "prompts": [
        {"value": "x"}, {"value": "1234", "sayAs": "telephone", "voice": "male", "culture": "en-US"}]})  # fmt: skip
    events = [StoredEvent("c", 1, 0.0, 0.0, "http.response", {"body": body["body"]}, False),  # type: ignore[dict-item]
              StoredEvent("c", 2, 1.0, 0.0, "platform", prompt_played("g", 1, 1.0, 2.2, "1234"), False)]  # type: ignore[arg-type]  # fmt: skip
    (segment,) = segments(events, 10.0)
    assert segment.speech == Speech("1234", voice="male", say_as="telephone", culture="en-US")
    assert (segment.start, segment.end, segment.channel) == (1.0, 2.2, PLATFORM)
    spoke = StoredEvent("c", 3, 1.0, 0.0, "caller", {"kind": "caller spoke", "at": 9.0, "end": 12.0, "text": "sales"}, False)  # fmt: skip
    (caller,) = segments([spoke], 10.0)
    assert (caller.end, caller.channel, caller.speech) == (
        10.0,
        CALLER,
        Speech("sales", voice="caller"),
    )


def test_a_prompt_of_silence_alone_is_silence() -> None:
    from emulator.transcripts.records import StoredEvent

    body = workflow({"operationId": "s", "action": "playPrompt",
                     "prompts": [{"silenceLengthInMilliseconds": 2000}]})  # fmt: skip
    events = [StoredEvent("c", 1, 0.0, 0.0, "http.response", {"body": body["body"]}, False),  # type: ignore[dict-item]
              StoredEvent("c", 2, 2.0, 0.0, "platform", prompt_played("s", 0, 0.0, 2.0, None), False)]  # type: ignore[arg-type]  # fmt: skip
    assert segments(events, 10.0) == []


def test_a_call_longer_than_the_bound_or_a_conversation_is_refused(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        call = stored_call(store, [(30.0, "call.end", {})])
        with pytest.raises(TrackError, match="more than the 10 s"):
            render_call(
                store, call, tmp_path / "x.wav", Synthesizer(AudioCache(None)), max_seconds=10
            )
        chat = store.start(bot="b", kind="conversation")
        with pytest.raises(TrackError, match="only a call has audio"):
            render_call(store, chat, tmp_path / "x.wav", Synthesizer(AudioCache(None)))
        with pytest.raises(TrackError, match="no call matches"):
            render_call(store, "ffffffff", tmp_path / "x.wav", Synthesizer(AudioCache(None)))
    assert not (tmp_path / "x.wav").exists()


# --- real calls --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ivr() -> Iterator[str]:
    with ivr_bot() as url:
        yield url


def call_ivr(url: str, caller: str, db: Path) -> str:
    with TranscriptStore(db) as store:
        settings = CallSettings(bot_url=url, caller=CallerScript.from_inline(caller))
        return asyncio.run(place_call(settings, store)).call_id


@pytest.mark.slow
def test_a_real_call_with_a_barge_in_and_keys(ivr: str, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    call_id = call_ivr(ivr, "press 1; press 1234#", db)
    with TranscriptStore(db) as store:
        summary = store.call(call_id)
        assert summary is not None and summary.vtime is not None
        left, right = render(store, call_id, tmp_path / "call.wav")
        pressed = [
            e.payload for e in store.events(call_id) if e.payload.get("kind") == "caller pressed"
        ]
    assert abs(len(left) / SAMPLE_RATE - summary.vtime) < 0.05
    first = float(pressed[0]["times"][0])  # type: ignore[index, arg-type]  # the menu's barge-in
    assert active_fraction(left, 0.2, first - 0.5) > 0.5  # the welcome prompt
    assert rms_at(left, first + 0.05, first + 0.5) < QUIET  # the menu prompt was cut by the press
    assert rms_at(right, first, first + 0.1) > LOUD  # the key
    key = right[round((first + 0.01) * SAMPLE_RATE) : round((first + 0.09) * SAMPLE_RATE)]
    assert goertzel(key, 697.0) > 100 * goertzel(key, 941.0)  # key 1: 697 + 1209 Hz
    assert goertzel(key, 1209.0) > 100 * goertzel(key, 1633.0)
    assert active_fraction(left, summary.vtime - 2.0, summary.vtime - 0.1) > 0.3  # the goodbye


@pytest.mark.slow
def test_a_real_call_with_caller_speech_has_it_on_the_right(ivr: str, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    call_id = call_ivr(ivr, "say sales; press 1234#", db)
    with TranscriptStore(db) as store:
        spoke = next(
            e.payload for e in store.events(call_id) if e.payload.get("kind") == "caller spoke"
        )
        _, right = render(store, call_id, tmp_path / "call.wav")
    at, end = float(spoke["at"]), float(spoke["end"])  # type: ignore[arg-type]
    assert active_fraction(right, at, end) > 0.5
    assert rms_at(right, 0.0, at - 0.05) < QUIET


def test_chunks_do_not_change_the_track(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from emulator.audio import track

    text = "A prompt long enough to cross several chunks of the track"
    body = workflow({"operationId": "p", "action": "playPrompt", "prompts": [{"value": text}]})
    talk: dict[str, object] = {"kind": "caller spoke", "at": 1.3, "end": 3.9, "text": None}
    keys: dict[str, object] = {
        "kind": "caller pressed",
        "keys": "159#",
        "times": [4.0, 4.25, 4.5, 4.75],
    }
    with TranscriptStore(tmp_path / "t.db") as store:
        call = stored_call(store, [*events_of(body, prompt_played("p", 0, 0.2, 4.6, text)),
                                   (3.9, "caller", talk), (4.75, "caller", keys), (5.0, "call.end", {})])  # fmt: skip
        synthesizer = Synthesizer(AudioCache(None))  # eSpeak varies a little from one run to
        whole = render(store, call, tmp_path / "whole.wav", synthesizer)  # the next: cached
        monkeypatch.setattr(track, "CHUNK_SECONDS", 0.37)
        chunked = render(store, call, tmp_path / "chunked.wav", synthesizer)
    assert whole == chunked
    assert len(whole[0]) == 5 * SAMPLE_RATE
