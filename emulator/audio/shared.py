"""The synthesizer and the speech recognizer a process shares, and the length of each
utterance it has spoken.

The calling platform speaks through one ``Synthesizer`` per process (``shared_synthesizer``:
the disk cache of ``cache.default_dir()``, so a suite's processes share what they synthesized),
for the caller's words inside recordings and for prompt durations timed from the audio.
``spoken_seconds`` synthesizes (CPU work: call it off an event loop) and remembers the length;
``known_seconds`` only looks it up, so a caller on an event loop can tell whether it must hand
the work to a thread. ``shared_recognizer`` is PocketSphinx for the prompt files a bot plays.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

from emulator.audio.cache import AudioCache, default_dir
from emulator.audio.pcm import SAMPLE_RATE
from emulator.audio.recognize import Recognizer
from emulator.audio.synth import Speech, Synthesizer

MAX_LENGTHS: Final = 4096
"""Utterance lengths remembered (least recently used first out)."""

_lock = threading.Lock()
_synthesizer: Synthesizer | None = None
_lengths: OrderedDict[Speech, float] = OrderedDict()


def shared_synthesizer() -> Synthesizer:
    """The process's synthesizer, made on first use."""
    global _synthesizer
    with _lock:
        if _synthesizer is None:
            _synthesizer = Synthesizer(AudioCache(default_dir()))
        return _synthesizer


def spoken_seconds(speech: Speech) -> float:
    """How long ``speech`` lasts as synthesized (no leading or trailing silence), in seconds
    to the sample; synthesized now if it is not known (CPU work)."""
    known = known_seconds(speech)
    if known is not None:
        return known
    samples = shared_synthesizer().speak(speech)
    seconds = len(samples) / SAMPLE_RATE
    with _lock:
        _lengths[speech] = seconds
        while len(_lengths) > MAX_LENGTHS:
            _lengths.popitem(last=False)
    return seconds


def known_seconds(speech: Speech) -> float | None:
    """The length of ``speech`` if it has been synthesized in this process, else None."""
    with _lock:
        seconds = _lengths.get(speech)
        if seconds is not None:
            _lengths.move_to_end(speech)
        return seconds


def engine_name() -> str:
    """What speaks in this process: ``eSpeak NG 1.52.0`` or ``fallback tones`` (loads eSpeak)."""
    return shared_synthesizer().engine


def spoken_lengths(speeches: tuple[Speech, ...]) -> tuple[str, tuple[float, ...]]:
    """What speaks (``engine_name``) and the length of each of ``speeches`` (CPU work)."""
    lengths = tuple(spoken_seconds(speech) for speech in speeches)
    return engine_name(), lengths


_recognizer: Recognizer | None = None


def shared_recognizer() -> Recognizer:
    """The process's speech recognizer (PocketSphinx, loaded on first use)."""
    global _recognizer
    with _lock:
        if _recognizer is None:
            _recognizer = Recognizer()
        return _recognizer
