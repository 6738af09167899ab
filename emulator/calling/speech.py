"""Speech timing and matching: how long words take to say, and when two phrases are the same.

Both the platform's text-to-speech and the scripted caller speak at 150 words a minute;
``sayAs`` letters and telephone speak each character. The recognizer compares speech with case,
punctuation and spacing folded. ``SpeechSpan`` is where a caller spoke in a recording, with the
words said (so that the recording can speak them). ``spoken_key`` names the utterance of a text
prompt, as the synthesizer speaks it (``EngineConfig.spoken`` holds its length by that key when
prompts are timed from their audio).
"""

from __future__ import annotations

import array
import re
from dataclasses import dataclass
from functools import lru_cache

from emulator.audio.pcm import from_le_bytes
from emulator.calling.model import Prompt, SayAs

SECONDS_PER_WORD = 0.4
"""150 words a minute."""
SECONDS_PER_SPELLED_CHARACTER = 0.3

_WORD = re.compile(r"\S+")
_PUNCTUATION = re.compile(r"[^\w\s]+")


SpokenKey = tuple[str, str, str | None, str]
"""A text prompt's utterance: its text, voice (``female`` or ``male``), sayAs and culture (wire
values), the fields of ``emulator.audio.synth.Speech`` in order."""

_VOICES = ("female", "male")


def spoken_key(prompt: Prompt) -> SpokenKey | None:
    """The utterance of a prompt that has text (None for a file or silence), as botemu's
    synthesizer speaks it: a voice it does not know is female, a prompt with no culture en-US."""
    if prompt.value is None or not prompt.value.strip():
        return None
    voice = prompt.voice.value if prompt.voice is not None else "female"
    return (
        prompt.value,
        voice if voice in _VOICES else "female",
        prompt.say_as.value if prompt.say_as is not None else None,
        prompt.culture.value if prompt.culture is not None else "en-US",
    )


@lru_cache(maxsize=4096)
def speech_seconds(text: str, say_as: SayAs | None = None) -> float:
    """Estimated duration of speaking ``text``."""
    if say_as in (SayAs.LETTERS, SayAs.TELEPHONE):
        return max(1, sum(c.isalnum() for c in text)) * SECONDS_PER_SPELLED_CHARACTER
    return max(1, len(_WORD.findall(text))) * SECONDS_PER_WORD


@dataclass(frozen=True, slots=True, eq=False)
class Sound:
    """What a live caller's microphone captured: 16-bit little-endian mono PCM at ``rate``,
    ``skip`` seconds of it before the span it fills (held before recording began)."""

    pcm: bytes | bytearray
    rate: int
    skip: float = 0.0

    def samples(self) -> array.array[int]:
        """The audio from where its span begins, as samples in native byte order."""
        return from_le_bytes(bytes(self.pcm[2 * max(0, round(self.skip * self.rate)) :]))


class SpeechSpan(tuple[float, float]):
    """A ``(start, end)`` span of a recording in which the caller spoke, carrying ``text``: the
    words said, or None for talk (sound with no words), and ``sound``: the microphone's audio of
    a live caller's talk, or None. It is the pair wherever a pair is expected (it compares and
    serializes as one); the recording's encoder reads ``text`` and ``sound``."""

    text: str | None
    sound: Sound | None

    def __new__(
        cls, span: tuple[float, float], text: str | None = None, sound: Sound | None = None
    ) -> SpeechSpan:
        made = super().__new__(cls, span)
        made.text = text
        made.sound = sound
        return made

    def __getnewargs__(self) -> tuple[tuple[float, float], str | None, Sound | None]:
        return (self[0], self[1]), self.text, self.sound


def spoken_words(span: tuple[float, float]) -> str | None:
    """The words said in a span of a recording (None for talk, or a plain pair)."""
    return span.text if isinstance(span, SpeechSpan) else None


def captured(span: tuple[float, float]) -> Sound | None:
    """The microphone's audio of a span of a recording (None but for a live caller's talk)."""
    return span.sound if isinstance(span, SpeechSpan) else None


@lru_cache(maxsize=4096)
def normalize_speech(text: str) -> str:
    """Speech as the recognizer compares it: case, punctuation and spacing folded."""
    return " ".join(_PUNCTUATION.sub(" ", text.lower()).split())
