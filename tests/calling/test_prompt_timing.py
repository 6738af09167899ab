"""Prompt timing ``speech``: a text prompt lasts as long as its synthesized audio, measured before
the run (emulator/calling/prompt_files.py ``PromptSpeech``) and given to the pure engine
(``EngineConfig.spoken``, emulator/calling/progress.py); the default stays the estimate.

The session tests drive ``CallSession`` by hand (no sockets), each ``Compute`` run inline.
"""

from __future__ import annotations

import io
import json
import wave
from pathlib import Path
from typing import Any

import pytest

from emulator.audio.shared import engine_name, spoken_seconds
from emulator.audio.synth import FALLBACK, Speech
from emulator.calling.caller import CallerScript
from emulator.calling.callsession import CallSession
from emulator.calling.effects import Answer, Compute, Effect, Post, Token, run_blocking
from emulator.calling.engine import CallProgress, EngineConfig, WorkflowRun, run_workflow
from emulator.calling.events import ActionCompleted, PromptPlayed
from emulator.calling.model import CallState, Outcome, Prompt, SayAs, VoiceGender
from emulator.calling.progress import prompt_seconds
from emulator.calling.settings import PROMPT_TIMING_ENV, CallSettings, default_prompt_timing
from emulator.calling.speech import SpeechSpan, speech_seconds, spoken_key, spoken_words
from emulator.calling.wire import read_workflow
from emulator.transcripts.store import TranscriptStore

BOT = "https://bot.example/api/calls"
CALLBACK = "https://bot.example/api/callback"
TEXT = "press one now"  # the estimate: three words, 1.2 s
KEY = (TEXT, "female", None, "en-US")


def menu(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "operationId": "menu",
        "action": "recognize",
        "playPrompt": {"prompts": [{"value": TEXT}]},
        "initialSilenceTimeoutInSeconds": 5,
        "choices": [{"name": "sales", "dtmfVariation": "1"}],
    }
    doc.update(fields)
    return doc


def run(action: dict[str, Any], caller: str, spoken: dict[Any, float] | None) -> WorkflowRun:
    doc: dict[str, Any] = {"actions": [action], "links": {"callback": CALLBACK}}
    config = EngineConfig(spoken=spoken or {})
    progress = CallProgress(call_state=CallState.ESTABLISHED, workflows=1)
    return run_workflow(read_workflow(doc), CallerScript.from_inline(caller), progress, config)


def completed(result: WorkflowRun) -> ActionCompleted:
    return next(e for e in result.events if isinstance(e, ActionCompleted))


def played(result: WorkflowRun) -> PromptPlayed:
    return next(e for e in result.events if isinstance(e, PromptPlayed))


# -- the engine, given lengths --------------------------------------------------------------


def test_the_key_of_a_text_prompt_is_the_utterance_the_synthesizer_speaks() -> None:
    assert spoken_key(Prompt(value=TEXT)) == KEY
    prompt = Prompt(value="555", voice=VoiceGender.MALE, say_as=SayAs.TELEPHONE)
    assert spoken_key(prompt) == ("555", "male", "telephone", "en-US")
    assert spoken_key(Prompt(value="  ")) is None
    assert spoken_key(Prompt(file_uri="https://x/a.wav")) is None
    assert Speech(*KEY) == Speech(TEXT)


def test_a_prompt_lasts_its_given_length_and_the_estimate_without_one() -> None:
    prompt = Prompt(value=TEXT, silence_length_in_milliseconds=500)
    assert prompt_seconds(prompt, {}) == pytest.approx(0.5 + 1.2)
    assert prompt_seconds(prompt, {}, {KEY: 2.25}) == pytest.approx(0.5 + 2.25)
    assert prompt_seconds(Prompt(value="other words"), {}, {KEY: 2.25}) == pytest.approx(0.8)


def test_the_initial_silence_timer_starts_when_the_spoken_prompt_ends() -> None:
    estimate = completed(run(menu(), "silence 9s", None))
    spoken = completed(run(menu(), "silence 9s", {KEY: 2.0}))
    assert estimate.reason == spoken.reason == "initialSilenceTimeout"
    assert estimate.at == pytest.approx(1.2 + 5)
    assert spoken.at == pytest.approx(2.0 + 5)


def test_without_barge_in_keys_count_from_the_end_of_the_spoken_prompt() -> None:
    action = menu(bargeInAllowed=False)
    assert completed(run(action, "press 1", None)).at == pytest.approx(1.2)
    done = completed(run(action, "press 1", {KEY: 1.9}))
    assert done.outcome is Outcome.SUCCESS and done.at == pytest.approx(1.9)


def test_barge_in_cuts_the_spoken_prompt_where_it_would_not_cut_the_estimate() -> None:
    caller = "hangup during recognize after 1.5s"
    assert not played(run(menu(), caller, None)).interrupted  # 1.2 s: over before 1.5 s
    cut = played(run(menu(), caller, {KEY: 2.5}))
    assert cut.interrupted and cut.end == pytest.approx(1.5)


# -- the session: lengths measured before the run ---------------------------------------------


def workflow(*actions: dict[str, Any], callback: str | None = CALLBACK) -> bytes:
    document: dict[str, Any] = {"actions": list(actions)}
    if callback is not None:
        document["links"] = {"callback": callback}
    return json.dumps(document).encode()


class Bot:
    """Answers the Conversation with ``first``, every result with a hang-up."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.computes: list[Compute] = []
        self.posts = 0

    def __call__(self, effect: Effect) -> Any:
        if isinstance(effect, Post):
            self.posts += 1
            body = self.first if self.posts == 1 else workflow(
                {"operationId": "bye", "action": "hangup"}, callback=None
            )  # fmt: skip
            return Answer(200, body, False, {"Content-Type": "application/json"}, {})
        if isinstance(effect, Compute):
            self.computes.append(effect)
            return effect()
        if isinstance(effect, Token):
            return "header.claims.signature"
        return None


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TranscriptStore:
    monkeypatch.setenv("BOTEMU_AUDIO_CACHE", str(tmp_path / "audio"))
    return TranscriptStore(tmp_path / "t.db")


MENU = workflow({"operationId": "answer", "action": "answer"}, menu())


def call(store: TranscriptStore, bot: Bot, caller: str, **settings: Any) -> list[Any]:
    made = CallSettings(bot_url=BOT, caller=CallerScript.from_inline(caller), seed=1, **settings)
    report = run_blocking(CallSession(made, store).run(), bot)
    return store.events(report.call_id)


def prompt_events(events: list[Any]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.payload.get("kind") == "prompt played"]


def test_with_speech_timing_a_prompt_plays_as_long_as_its_audio(store: TranscriptStore) -> None:
    bot = Bot(MENU)
    events = call(store, bot, "silence 9s", prompt_timing="speech")
    audio = spoken_seconds(Speech(TEXT))
    (prompt,) = prompt_events(events)
    assert prompt["end"] - prompt["at"] == pytest.approx(audio, abs=0.01)
    if engine_name() != FALLBACK:  # eSpeak NG: not the estimate (the fallback is timed by it)
        assert audio != pytest.approx(speech_seconds(TEXT))
    start = next(e for e in events if e.kind == "call.start")
    assert start.payload["prompt_timing"] == "speech"
    notes = [e.payload for e in events if e.payload.get("prompt_timing") == "speech"
             and e.kind == "note"]  # fmt: skip
    assert len(notes) == 1 and notes[0]["engine"] == engine_name()
    outcome = next(e.payload for e in events if e.payload.get("action") == "recognize")
    assert outcome["reason"] == "initialSilenceTimeout"
    assert outcome["at"] == pytest.approx(prompt["end"] + 5, abs=1e-6)  # the timer moved too


def test_a_known_utterance_is_looked_up_not_synthesized_again(store: TranscriptStore) -> None:
    spoken_seconds(Speech(TEXT))  # known in this process
    bot = Bot(MENU)
    call(store, bot, "silence 9s", prompt_timing="speech")
    lengths = [c for c in bot.computes if c.function.__name__ == "spoken_lengths"]
    assert len(lengths) == 1 and lengths[0].args == ((),)  # only to name the engine, once


def test_the_default_is_the_estimate_and_says_so(
    store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)
    bot = Bot(MENU)
    events = call(store, bot, "silence 9s")
    (prompt,) = prompt_events(events)
    assert prompt["end"] - prompt["at"] == pytest.approx(1.2)
    assert next(e for e in events if e.kind == "call.start").payload["prompt_timing"] == "estimate"
    assert not bot.computes  # nothing synthesized


def test_the_environment_chooses_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROMPT_TIMING_ENV, "speech")
    assert default_prompt_timing() == "speech"
    assert CallSettings(bot_url=BOT).prompt_timing == "speech"
    monkeypatch.setenv(PROMPT_TIMING_ENV, "nonsense")
    assert default_prompt_timing() == "estimate"


def test_a_recording_posted_in_a_call_speaks_the_callers_words(store: TranscriptStore) -> None:
    record = {"operationId": "rec", "action": "record", "recordingFormat": "wav",
              "playPrompt": {"prompts": [{"value": "leave a message"}]},
              "maxSilenceTimeoutInSeconds": 1}  # fmt: skip
    bot = Bot(workflow({"operationId": "answer", "action": "answer"}, record))
    events = call(store, bot, "say sales please; silence 3s")
    (encode,) = [c for c in bot.computes if c.function.__name__ == "encode_recording"]
    spans = encode.args[2]
    assert [spoken_words(s) for s in spans] == ["sales please"]
    assert isinstance(spans[0], SpeechSpan)
    made = next(e for e in events if e.has_blob)
    data = store.blob(made.call_id, made.seq)
    assert data is not None
    with wave.open(io.BytesIO(data)) as w:
        assert w.getnframes() / w.getframerate() == pytest.approx(made.payload["seconds"], abs=1e-4)


# -- the command line -----------------------------------------------------------------------


def test_botemu_call_takes_the_prompt_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    from emulator.cli import build_parser
    from emulator.cli.call import _settings

    monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)
    argv = ["call", "--bot", "http://127.0.0.1:9/api/calls", "--caller", "hangup"]
    parser = build_parser("call")
    assert _settings(parser.parse_args([*argv, "--prompt-timing", "speech"])).prompt_timing == (
        "speech"
    )
    assert _settings(parser.parse_args(argv)).prompt_timing == "estimate"
    with pytest.raises(SystemExit):
        parser.parse_args([*argv, "--prompt-timing", "slow"])
