"""Recorded prompts become text: a prompt file is transcribed by PocketSphinx once per URI
(emulator/calling/prompt_files.py, emulator/audio/recognize.py), with a grammar of the phrases
the caller's ``when`` rules listen for, else dictation. The caller's rules and a scenario's
``expect: prompts`` then match file prompts too; the transcript marks the text as recognised.

The prompt file is "main menu, press one for sales", synthesized with emulator.audio and served
over loopback by a bot in this file that plays it as a menu's prompt.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.audio.cache import AudioCache
from emulator.audio.pcm import silence, wav_bytes
from emulator.audio.recognize import Recognizer, phrase_words
from emulator.audio.synth import Speech, Synthesizer
from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.media import SAMPLE_RATE, decode_samples, encode_recording
from emulator.calling.model import RecordingFormat
from emulator.calling.progress import Media
from emulator.calling.prompt_files import listen_phrases, transcribe_prompt
from emulator.calling.session import CallSettings, place_call
from emulator.scenario.expectations import evaluate
from emulator.scenario.loader import load_scenario_text
from emulator.transcripts.store import TranscriptStore

pytest.importorskip("pocketsphinx")

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
FAST = RetryPolicy(attempts=2, backoff=0.01, timeout=5.0)
WORDS = "main menu, press one for sales"
FILES: web.AppKey[dict[str, bytes]] = web.AppKey("files", dict)


@pytest.fixture(scope="module")
def menu_wav() -> bytes:
    """The prompt file: the words synthesized (female voice), with a little silence around."""
    voice = Synthesizer(AudioCache(None), notice=lambda _: None)
    if voice.engine == "fallback tones":
        pytest.skip("eSpeak NG is not available: the prompt would be tones, not words")
    return wav_bytes(silence(0.3) + voice.speak(Speech(WORDS)) + silence(0.3))


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


def menu_workflow(request: web.Request) -> dict[str, Any]:
    base = f"{request.scheme}://{request.host}"
    return {
        "actions": [
            {"operationId": "answer", "action": "answer"},
            {"operationId": "menu", "action": "recognize", "bargeInAllowed": False,
             "playPrompt": {"prompts": [{"fileUri": f"{base}/media/menu.wav"}]},
             "initialSilenceTimeoutInSeconds": 3,
             "choices": [{"name": "sales", "dtmfVariation": "1"},
                         {"name": "support", "dtmfVariation": "2"}]},
        ],
        "links": {"callback": f"{base}/api/calls"},
    }  # fmt: skip


async def handle(request: web.Request) -> web.Response:
    body = json.loads(await request.read() or b"{}")
    if "operationOutcome" in body:  # a result: say goodbye
        return web.json_response({"actions": [{"operationId": "bye", "action": "hangup"}]})
    return web.json_response(menu_workflow(request))


async def serve_file(request: web.Request) -> web.Response:
    return web.Response(body=request.app[FILES]["menu.wav"], content_type="audio/wav")


async def menu_bot(aiohttp_server: ServerFactory, wav: bytes) -> str:
    app = web.Application()
    app[FILES] = {"menu.wav": wav}
    app.router.add_post("/api/calls", handle)
    app.router.add_get("/media/menu.wav", serve_file)
    server = await aiohttp_server(app)
    return str(server.make_url("/api/calls"))


async def run_call(
    url: str, store: TranscriptStore, caller: CallerScript, cache: dict[str, Media] | None = None
) -> list[Any]:
    settings = CallSettings(bot_url=url, caller=caller, seed=3, retry=FAST)
    report = await place_call(settings, store, media_cache=cache)
    return store.events(report.call_id)


def chosen(events: list[Any]) -> str | None:
    for e in events:
        if e.kind == "http.request" and "recognizeOutcome" in str(e.payload.get("summary")):
            body = json.loads(str(e.payload.get("body")))
            name: str | None = body["operationOutcome"].get("choiceOutcome", {}).get("choiceName")
            return name
    return None


RULED = CallerScript.from_data({"steps": [{"press": "2"}],
                                "when": [{"prompt": "main menu", "do": [{"press": "1"}]}]})  # fmt: skip


async def test_a_when_rule_fires_on_the_words_of_a_prompt_file(
    aiohttp_server: ServerFactory, store: TranscriptStore, menu_wav: bytes
) -> None:
    url = await menu_bot(aiohttp_server, menu_wav)
    events = await run_call(url, store, RULED)
    assert chosen(events) == "sales"  # the rule's key, not the script's 2
    fetched = next(
        e.payload for e in events if "recognized_text" in e.payload and "uri" in e.payload
    )
    assert fetched["recognition"]["mode"] == "grammar"
    assert fetched["recognition"]["phrases"] == ["main menu"]
    assert "main menu" in fetched["recognized_text"]
    played = next(e.payload for e in events if e.payload.get("kind") == "prompt played")
    assert played["text"] is None  # the bot gave no text ...
    assert "main menu" in played["recognized_text"]  # ... recognition heard it


async def test_without_rules_the_file_is_dictated_and_the_script_runs(
    aiohttp_server: ServerFactory, store: TranscriptStore, menu_wav: bytes
) -> None:
    url = await menu_bot(aiohttp_server, menu_wav)
    events = await run_call(url, store, CallerScript.from_inline("press 2"))
    assert chosen(events) == "support"
    fetched = next(e.payload for e in events if "recognition" in e.payload)
    assert fetched["recognition"]["mode"] == "dictation"
    assert isinstance(fetched["recognized_text"], str)


async def test_a_file_is_transcribed_once_per_uri_for_the_same_phrases(
    aiohttp_server: ServerFactory, store: TranscriptStore, menu_wav: bytes
) -> None:
    url = await menu_bot(aiohttp_server, menu_wav)
    cache: dict[str, Media] = {}
    await run_call(url, store, RULED, cache)
    (known,) = cache.values()
    assert known.listened == ("main menu",) and known.text is not None
    second = await run_call(url, store, RULED, cache)
    assert not any("recognition" in e.payload for e in second)  # not fetched, not transcribed
    assert chosen(second) == "sales"  # the cached text still answers the rule


async def test_expect_prompts_matches_the_recognised_words(
    aiohttp_server: ServerFactory, store: TranscriptStore, menu_wav: bytes
) -> None:
    scenario = load_scenario_text(
        "name: file menu\n"
        "caller:\n"
        "  steps: [{press: '2'}]\n"
        "  when: [{prompt: main menu, do: [{press: '1'}]}]\n"
        "expect:\n"
        "  prompts: {items: [{matches: 'main menu'}]}\n"
    )
    assert scenario.caller is not None
    url = await menu_bot(aiohttp_server, menu_wav)
    events = await run_call(url, store, scenario.caller)
    assert evaluate(scenario, events) == []
    unheard = load_scenario_text(
        "name: file goodbye\ncaller: {steps: [listen]}\n"
        "expect: {prompts: {items: [{matches: goodbye}]}}\n"
    )
    (failure,) = evaluate(unheard, events)
    assert "recognised" in failure.message


def test_a_grammar_of_the_expected_phrase_hears_it_and_nothing_else(menu_wav: bytes) -> None:
    heard = transcribe_prompt(menu_wav, ("main menu", "goodbye"))
    assert heard is not None and heard.mode == "grammar"
    assert heard.text == "main menu"
    other = Synthesizer(AudioCache(None)).speak(Speech("your balance is twelve dollars"))
    nothing = transcribe_prompt(wav_bytes(other), ("main menu",))
    assert nothing is not None and nothing.text == ""


def test_recognition_is_bounded_in_audio_and_time(menu_wav: bytes) -> None:
    recognizer = Recognizer(notice=lambda _: None)
    long = encode_recording(RecordingFormat.WAV, 25.0, [(1.0, 24.0)])
    samples = decode_samples(long, 120.0)
    assert len(samples) == 25 * SAMPLE_RATE
    bounded = recognizer.transcribe(samples, max_seconds=3.0)
    assert bounded is not None and bounded.seconds == 3.0 and not bounded.cut
    stopped = recognizer.transcribe(samples, max_seconds=60.0, time_limit=-1.0)
    assert stopped is not None and stopped.cut and stopped.text == ""
    assert len(decode_samples(long, 2.0)) == 2 * SAMPLE_RATE


def test_phrases_are_read_from_when_patterns() -> None:
    patterns = ["main menu", r"^goodbye\b|bye", r"(?i)thank\s+you", "[0-9]+", "sales.*desk"]
    assert listen_phrases(patterns) == ("main menu", "goodbye", "bye", "thank you", "sales desk")
    assert phrase_words("Press ONE, for sales!") == ("press", "one", "for", "sales")


async def test_a_scenarios_expected_prompts_shape_the_grammar_without_any_when_rule(
    aiohttp_server: ServerFactory, store: TranscriptStore, menu_wav: bytes
) -> None:
    from emulator.runner.calls import expected_prompts

    two = load_scenario_text(
        "name: two\ncaller: [listen]\n"
        "expect:\n  prompts: {items: [{contains: main menu}, {matches: 'sales|support'}]}\n"
    )
    assert expected_prompts(two) == ("main menu", "sales|support")
    scenario = load_scenario_text(
        "name: file menu, no rules\ncaller: [listen, {press: '1'}]\n"
        "expect:\n  prompts: {items: [{matches: 'main menu.*(sales|support)'}]}\n"
    )
    url = await menu_bot(aiohttp_server, menu_wav)
    settings = CallSettings(bot_url=url, caller=scenario.caller or CallerScript(), seed=3,
                            retry=FAST, listen_for=expected_prompts(scenario))  # fmt: skip
    report = await place_call(settings, store)
    events = store.events(report.call_id)
    fetched = next(e.payload for e in events if "recognition" in e.payload)
    assert fetched["recognition"]["mode"] == "grammar"  # not dictation
    assert fetched["recognition"]["phrases"] == ["main menu sales", "support"]
    assert evaluate(scenario, events) == []
