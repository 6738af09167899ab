"""What the audio tests measure in a sound: a WAV's channels, RMS by window, the energy at one
frequency (a Goertzel filter), a stored call made of given events."""

from __future__ import annotations

import array
import math
import sys
import wave
from pathlib import Path

from emulator.audio.pcm import SAMPLE_RATE
from emulator.transcripts.store import TranscriptStore

WINDOW = 0.02  # seconds: RMS is measured over 20 ms windows


def read_stereo(path: Path) -> tuple[array.array[int], array.array[int], int]:
    """The left and right channels of a 16-bit stereo WAV, and its rate."""
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (2, 2)
        rate = w.getframerate()
        samples = array.array("h", w.readframes(w.getnframes()))
    if sys.byteorder == "big":
        samples.byteswap()
    return samples[0::2], samples[1::2], rate


def rms(samples: array.array[int] | list[int]) -> float:
    return math.sqrt(sum(s * s for s in samples) / len(samples)) if len(samples) else 0.0


def rms_at(samples: array.array[int], start: float, end: float) -> float:
    """The loudest 20 ms window between ``start`` and ``end`` seconds."""
    n = round(WINDOW * SAMPLE_RATE)
    a, b = round(start * SAMPLE_RATE), round(end * SAMPLE_RATE)
    windows = [rms(samples[i : i + n]) for i in range(a, max(a + 1, b - n + 1), n)]
    return max(windows, default=0.0)


def active_fraction(samples: array.array[int], start: float, end: float) -> float:
    """The share of 20 ms windows between ``start`` and ``end`` with sound (RMS over 100)."""
    n = round(WINDOW * SAMPLE_RATE)
    a, b = round(start * SAMPLE_RATE), round(end * SAMPLE_RATE)
    windows = [rms(samples[i : i + n]) for i in range(a, b - n + 1, n)]
    return sum(w > 100 for w in windows) / len(windows) if windows else 0.0


def goertzel(samples: array.array[int] | list[int], frequency: float) -> float:
    """The power of ``samples`` at ``frequency``, normalised by their length."""
    coefficient = 2 * math.cos(2 * math.pi * frequency / SAMPLE_RATE)
    s1 = s2 = 0.0
    for x in samples:
        s1, s2 = x + coefficient * s1 - s2, s1
    return (s1 * s1 + s2 * s2 - coefficient * s1 * s2) / max(1, len(samples)) ** 2


def stored_call(store: TranscriptStore, events: list[tuple[float, str, dict[str, object]]]) -> str:
    """A finished call in ``store`` made of ``(vtime, kind, payload)`` events."""
    call_id = store.start(bot="http://127.0.0.1:9/api/calls", caller="8:test")
    for vtime, kind, payload in events:
        store.append(call_id, kind, payload, vtime=vtime)  # type: ignore[arg-type]
    store.finish(call_id, reason="bot hung up")
    return call_id
