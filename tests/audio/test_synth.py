"""Speech through eSpeak NG, the cache in front of it, and the fallback when it cannot load
(emulator/audio/synth.py, espeak.py)."""

from __future__ import annotations

import array
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.audio import espeak as espeak_module
from emulator.audio.cache import AudioCache
from emulator.audio.espeak import Espeak, EspeakUnavailable
from emulator.audio.pcm import SAMPLE_RATE
from emulator.audio.synth import FALLBACK, Speech, Synthesizer, fallback, voice_name
from tests.audio.sound import goertzel, rms


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts eSpeak was asked to speak, one entry a call into the library."""
    calls: list[str] = []
    real = Espeak.synthesize

    def counting(self: Espeak, text: str, **kwargs: object) -> array.array[int]:
        calls.append(text)
        return real(self, text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Espeak, "synthesize", counting)
    return calls


@pytest.fixture
def no_espeak(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """eSpeak made unavailable as if its wheel were not installed (a fresh load that fails)."""
    monkeypatch.setattr(Espeak, "_instance", None)
    monkeypatch.setattr(Espeak, "_failure", None)
    monkeypatch.setitem(sys.modules, "espeakng_loader", None)  # import fails
    yield


def synthesizer(tmp_path: Path | None = None, notes: list[str] | None = None) -> Synthesizer:
    sink = notes if notes is not None else []
    return Synthesizer(AudioCache(tmp_path), notice=sink.append)


def test_espeak_speaks_and_longer_text_takes_longer() -> None:
    synth = synthesizer()
    one = synth.speak(Speech("one"))
    three = synth.speak(Speech("one two three"))
    assert synth.engine.startswith("eSpeak NG ")
    assert 0.2 * SAMPLE_RATE < len(one) < len(three) < 3 * SAMPLE_RATE
    assert rms(one) > 500


def test_espeak_is_not_the_fallback() -> None:
    spoken = synthesizer().speak(Speech("Welcome to the demo line"))
    tones = fallback(Speech("Welcome to the demo line"))
    assert spoken != tones
    assert abs(len(spoken) - len(tones)) > 0.05 * SAMPLE_RATE or spoken[:4000] != tones[:4000]


def test_voices_differ_and_a_female_voice_is_higher() -> None:
    synth = synthesizer()
    female = synth.speak(Speech("Hello there, how are you", voice="female"))
    male = synth.speak(Speech("Hello there, how are you", voice="male"))
    assert female != male
    low = sum(goertzel(male, f) for f in range(90, 150, 10))
    high = sum(goertzel(female, f) for f in range(90, 150, 10))
    assert low > high
    assert voice_name("female", "en-US") == "en-us+f3"
    assert voice_name("male", "notUnderstood") == "en-us+m3"


def test_telephone_is_spoken_digit_by_digit() -> None:
    synth = synthesizer()
    number = synth.speak(Speech("1234"))  # one thousand two hundred thirty four
    digits = synth.speak(Speech("1234", say_as="telephone"))  # one two three four
    assert digits != number


def test_a_second_synthesis_of_the_same_speech_does_not_call_the_library(
    counted: list[str],
) -> None:
    synth = synthesizer()
    first = synth.speak(Speech("Please hold the line"))
    again = synth.speak(Speech("Please hold the line"))
    assert first == again
    assert counted == ["Please hold the line"]
    synth.speak(Speech("Please hold the line", voice="male"))  # another voice: another key
    synth.speak(Speech("Please hold the line", say_as="letters"))
    assert len(counted) == 3
    assert synth.engine_calls == 3 and synth.cache.hits == 1


def test_the_disk_cache_serves_another_synthesizer(tmp_path: Path, counted: list[str]) -> None:
    first = synthesizer(tmp_path).speak(Speech("Your call is important to us"))
    second = synthesizer(tmp_path)
    assert second.speak(Speech("Your call is important to us")) == first
    assert len(counted) == 1
    assert second.cache.disk_hits == 1


def test_without_the_library_speech_is_tones_and_one_message(no_espeak: None) -> None:
    notes: list[str] = []
    synth = synthesizer(notes=notes)
    samples = synth.speak(Speech("one two three"))
    synth.speak(Speech("four five"))
    assert synth.engine == FALLBACK
    assert samples == fallback(Speech("one two three"))
    assert len(samples) == round(1.2 * SAMPLE_RATE)  # 0.4 s a word, as the engine times it
    assert rms(samples) > 500
    assert len(notes) == 1
    assert "\n" not in notes[0]
    assert "espeakng-loader" in notes[0] and "tones" in notes[0]


def test_a_library_that_will_not_load_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Espeak, "_instance", None)
    monkeypatch.setattr(Espeak, "_failure", None)

    class Broken:
        @staticmethod
        def get_library_path() -> str:
            return "/nonexistent/libespeak-ng.so"

        @staticmethod
        def get_data_path() -> str:
            return "/nonexistent"

    monkeypatch.setitem(sys.modules, "espeakng_loader", Broken)
    with pytest.raises(EspeakUnavailable, match="would not load"):
        Espeak.load()
    with pytest.raises(EspeakUnavailable, match="would not load"):  # remembered, not retried
        Espeak.load()


def test_it_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Espeak, "_instance", None)
    monkeypatch.setenv(espeak_module.ENV_SWITCH, "off")
    notes: list[str] = []
    assert synthesizer(notes=notes).speak(Speech("hello")) == fallback(Speech("hello"))
    assert len(notes) == 1 and "BOTEMU_ESPEAK=off" in notes[0]


def test_fallback_counts_spelled_characters() -> None:
    assert len(fallback(Speech("555-0100", say_as="telephone"))) == round(7 * 0.3 * SAMPLE_RATE)


def test_text_eSpeak_cannot_take_is_cleaned() -> None:
    synth = synthesizer()
    assert len(synth.speak(Speech("hello\x00world \ud800"))) > 0.3 * SAMPLE_RATE
    assert len(synth.speak(Speech("   "))) >= 0


def test_speech_longer_than_its_time_is_spoken_faster_to_fit() -> None:
    synth = synthesizer()
    natural = synth.speak(Speech("Goodbye and thank you for calling"))
    fitted = synth.speak(
        Speech("Goodbye and thank you for calling"), within=0.5 * len(natural) / SAMPLE_RATE
    )
    assert 0.3 * len(natural) < len(fitted) < 0.6 * len(natural)
    short = synth.speak(Speech("Goodbye and thank you for calling"), within=60.0)
    assert short == natural  # it fits: spoken as it is


def test_espeak_stops_at_its_bound_and_speaks_nothing_for_no_text() -> None:
    espeak = Espeak.load()
    long = espeak.synthesize("one two three four five " * 20, voice="en-us+f3", female=True,
                             words_per_minute=150, max_seconds=0.5)  # fmt: skip
    assert 0 < len(long) <= 0.5 * espeak.rate
    assert (
        len(espeak.synthesize("", voice="en-us", female=False, words_per_minute=150, max_seconds=5))
        == 0
    )
