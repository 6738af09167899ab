"""Speech timing and matching: how long words take to say, and when two phrases are the same.

Both the platform's text-to-speech and the scripted caller speak at 150 words a minute;
``sayAs`` letters and telephone speak each character. The recognizer compares speech with case,
punctuation and spacing folded.
"""

from __future__ import annotations

import re
from functools import lru_cache

from emulator.calling.model import SayAs

SECONDS_PER_WORD = 0.4
"""150 words a minute."""
SECONDS_PER_SPELLED_CHARACTER = 0.3

_WORD = re.compile(r"\S+")
_PUNCTUATION = re.compile(r"[^\w\s]+")


@lru_cache(maxsize=4096)
def speech_seconds(text: str, say_as: SayAs | None = None) -> float:
    """Estimated duration of speaking ``text``."""
    if say_as in (SayAs.LETTERS, SayAs.TELEPHONE):
        return max(1, sum(c.isalnum() for c in text)) * SECONDS_PER_SPELLED_CHARACTER
    return max(1, len(_WORD.findall(text))) * SECONDS_PER_WORD


@lru_cache(maxsize=4096)
def normalize_speech(text: str) -> str:
    """Speech as the recognizer compares it: case, punctuation and spacing folded."""
    return " ".join(_PUNCTUATION.sub(" ", text.lower()).split())
