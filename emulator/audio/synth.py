"""Speech as 16 kHz samples: eSpeak NG when it loads, else voice-like tones shaped to the text,
through the cache.

``Synthesizer.speak(Speech(text, voice, say_as, culture))`` gives the samples of one utterance
(no leading silence: a prompt's ``silenceLengthInMilliseconds`` is placed by the track). eSpeak
speaks at 150 words a minute, the rate the engine times speech at (docs/engine.md), with an
eSpeak voice per ``voice`` and ``culture``; ``sayAs`` is rendered by ``emulator.audio.text``.
``speak(..., within=seconds)`` speaks faster (up to 450 words a minute) what would not fit in
the time the engine gave it, so that a track cuts only what barge-in or a hangup cut. When eSpeak is not available the synthesizer says so once, in one line, to its ``notice``
(standard error by default) and gives the fallback: seconds as the engine counts them (0.4 s a
word; 0.3 s a character for ``letters`` and ``telephone``) filled with the syllables of
``emulator.audio.tones.talk`` in a low (male) or high (female) voice.
"""

from __future__ import annotations

import array
import math
import re
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from emulator.audio.cache import AudioCache
from emulator.audio.espeak import Espeak, EspeakUnavailable
from emulator.audio.pcm import SAMPLE_RATE, resample
from emulator.audio.text import spoken_text
from emulator.audio.tones import talk

WORDS_PER_MINUTE: Final = 150
MAX_WORDS_PER_MINUTE: Final = 450  # eSpeak's fastest
MAX_SPEECH_SECONDS: Final = 600.0
"""The longest utterance synthesized; the rest of a longer one is not spoken."""
FALLBACK: Final = "fallback tones"

SECONDS_PER_WORD: Final = 0.4  # the engine's model (emulator.calling.speech)
SECONDS_PER_SPELLED_CHARACTER: Final = 0.3

_LANGUAGES: Final = {"en-us": "en-us"}  # culture (lower case) -> eSpeak language
_VARIANTS: Final = {"female": "+f3", "male": "+m3", "caller": "+m1"}
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Speech:
    """One utterance: its text, and the Prompt fields that change how it sounds. ``voice`` is
    ``female``, ``male`` (the wire values) or ``caller`` (the scripted caller's own voice);
    ``say_as`` and ``culture`` are wire values (``telephone``, ``en-US``)."""

    text: str
    voice: str = "female"
    say_as: str | None = None
    culture: str = "en-US"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class Synthesizer:
    """Speaks ``Speech`` through eSpeak NG, or the fallback, remembering what it said."""

    def __init__(
        self,
        cache: AudioCache | None = None,
        *,
        notice: Callable[[str], None] = _stderr,
        espeak: bool = True,
    ) -> None:
        """``espeak=False``: always the fallback, without a notice."""
        self.use_espeak = espeak
        self.cache = cache if cache is not None else AudioCache()
        self.notice = notice
        self.engine_calls = 0
        self._engine: Espeak | None = None
        self._unavailable: str | None = None

    @property
    def engine(self) -> str:
        """What speaks: ``eSpeak NG 1.52.0``, or ``fallback tones``."""
        espeak = self._load()
        return espeak.version if espeak is not None else FALLBACK

    def speak(self, speech: Speech, *, within: float | None = None) -> array.array[int]:
        """The samples of ``speech`` at ``SAMPLE_RATE``. With ``within`` (seconds), speech
        that would run more than 5% longer is spoken faster to fit, up to 450 words a minute."""
        espeak = self._load()
        samples = self._espeak(espeak, speech, WORDS_PER_MINUTE) if espeak else None
        if espeak is None or samples is None:
            return fallback(speech)
        if within is not None and 0 < within * SAMPLE_RATE * 1.05 < len(samples):
            ratio = len(samples) / (within * SAMPLE_RATE)
            rate = min(MAX_WORDS_PER_MINUTE, math.ceil(WORDS_PER_MINUTE * ratio * 1.05))
            samples = self._espeak(espeak, speech, rate) or samples
        return samples

    def _espeak(self, espeak: Espeak, speech: Speech, rate: int) -> array.array[int] | None:
        """eSpeak's samples through the cache; None (and the notice) if eSpeak fails."""
        key = (espeak.version, speech.text, speech.voice, speech.say_as or "", speech.culture,
               str(rate))  # fmt: skip
        held = self.cache.get(key)
        if held is not None:
            return held
        self.engine_calls += 1
        try:
            raw = espeak.synthesize(
                spoken_text(speech.text, speech.say_as),
                voice=voice_name(speech.voice, speech.culture),
                female=speech.voice == "female",
                words_per_minute=rate,
                max_seconds=MAX_SPEECH_SECONDS,
            )
        except EspeakUnavailable as e:
            self._fail(str(e))
            return None
        samples = resample(raw, espeak.rate)
        self.cache.put(key, samples)
        return samples

    def _load(self) -> Espeak | None:
        if self._engine is None and self._unavailable is None and self.use_espeak:
            try:
                self._engine = Espeak.load()
            except EspeakUnavailable as e:
                self._fail(str(e))
        return self._engine

    def _fail(self, why: str) -> None:
        self._engine = None
        if self._unavailable is None:
            self._unavailable = why
            self.notice(
                f"botemu: no speech synthesis, so speech is voice-like tones as long as the text: "
                f"{why}"
            )


def voice_name(voice: str, culture: str) -> str:
    """The eSpeak voice for a Prompt's ``voice`` and ``culture`` (US English when the culture
    is not one eSpeak is given here)."""
    language = _LANGUAGES.get(culture.lower(), "en-us")
    return language + _VARIANTS.get(voice, _VARIANTS["female"])


def engine_seconds(speech: Speech) -> float:
    """How long the engine takes ``speech`` to last (``emulator.calling.speech``'s model)."""
    if speech.say_as in ("letters", "telephone"):
        return max(1, sum(c.isalnum() for c in speech.text)) * SECONDS_PER_SPELLED_CHARACTER
    return max(1, len(_WORD.findall(speech.text))) * SECONDS_PER_WORD


def fallback(speech: Speech) -> array.array[int]:
    """Voice-like tones as long as the engine times ``speech``, the same for the same text."""
    seconds = min(engine_seconds(speech), MAX_SPEECH_SECONDS)
    seed = zlib.crc32(speech.text.encode("utf-8", "surrogatepass"))
    return talk(seconds, low=speech.voice != "female", seed=seed)
