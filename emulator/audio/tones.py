"""Sounds that are not words: DTMF key tones, the record beep, the placeholder of a prompt file
whose audio is not at hand, and voice-like syllables (a caller's ``talk``, and the fallback when
no synthesizer loads).

The syllables are the ``talk`` of the recordings (``emulator.calling.media.synthesize`` uses them):
a few harmonics of a gliding pitch under an attack/release envelope, breath noise and an
occasional fricative onset, at about 115 Hz (a low voice) or 205 Hz (a high one).
"""

from __future__ import annotations

import array
import functools
import math
import random
from typing import Final

from emulator.audio.pcm import SAMPLE_RATE, frames

DTMF_ROWS: Final = (697.0, 770.0, 852.0, 941.0)
DTMF_COLUMNS: Final = (1209.0, 1336.0, 1477.0, 1633.0)
_KEYPAD: Final = ("123A", "456B", "789C", "*0#D")
DTMF_FREQUENCIES: Final[dict[str, tuple[float, float]]] = {
    key: (DTMF_ROWS[r], DTMF_COLUMNS[c])
    for r, row in enumerate(_KEYPAD)
    for c, key in enumerate(row)
}
"""Each key's (row, column) frequency pair, ITU-T Q.23."""

DTMF_SECONDS: Final = 0.1
"""How long a key sounds: 100 ms, a common phone's tone (Q.24 asks at least 40 ms)."""

BEEP_SECONDS: Final = 0.5
"""The record beep, as long as the engine times it (docs/engine.md, Timing)."""
BEEP_HZ: Final = 1000.0

_TONE_LEVEL: Final = 0.3  # each of the two DTMF tones peaks at -10 dBFS; the pair at -4.4 dBFS
_LEVEL: Final = 11000.0  # peak of the voiced syllables, about -9 dBFS
_RAMP: Final = 0.005  # tones rise and fall over 5 ms, so they start and stop without a click


def tone(frequencies: tuple[float, ...], seconds: float, level: float) -> array.array[int]:
    """The sum of sines at ``frequencies``, each peaking at ``level`` (of full scale), with 5 ms
    ramps at both ends."""
    n = frames(seconds)
    ramp = max(1, frames(_RAMP))
    steps = [2 * math.pi * f / SAMPLE_RATE for f in frequencies]
    scale = level * 32767
    out = array.array("h", bytes(2 * n))
    for i in range(n):
        envelope = min(1.0, (i + 1) / ramp, (n - i) / ramp)
        out[i] = round(scale * envelope * sum(math.sin(s * i) for s in steps))
    return out


def dtmf(key: str, seconds: float = DTMF_SECONDS) -> array.array[int]:
    """The tone pair of a key (0-9, *, #, A-D); silence for anything else."""
    pair = DTMF_FREQUENCIES.get(key.upper())
    if pair is None:
        return array.array("h", bytes(2 * frames(seconds)))
    return tone(pair, seconds, _TONE_LEVEL)


def beep(seconds: float = BEEP_SECONDS) -> array.array[int]:
    """The record beep: 1 kHz."""
    return tone((BEEP_HZ,), seconds, 0.4)


def placeholder(seconds: float) -> array.array[int]:
    """What stands for a prompt file whose audio the transcript does not hold: a soft chord
    (440 + 660 Hz) pulsed half a second on, a quarter off, so it is heard as music on hold and
    never taken for speech or a beep."""
    n = frames(seconds)
    pulse = tone((440.0, 660.0), 0.5, 0.15)
    period = len(pulse) + frames(0.25)
    out = array.array("h", bytes(2 * n))
    for at in range(0, n, period):
        take = min(len(pulse), n - at)
        out[at : at + take] = pulse[:take]
    return out


def talk(seconds: float, *, low: bool, seed: int = 0) -> array.array[int]:
    """``seconds`` of speech-like syllables with 25-125 ms pauses between them (a low or high
    voice); the last syllable is cut, with a 10 ms fade, at the end."""
    rng = random.Random(seed)
    total = frames(seconds)
    out = array.array("h", bytes(2 * total))
    bank = _syllables()[0 if low else 1]
    at = 0
    while at < total:
        syllable = bank[rng.randrange(len(bank))]
        take = min(len(syllable), total - at)
        piece = syllable[:take]
        if take < len(syllable):
            fade = min(take, SAMPLE_RATE // 100)
            for j in range(fade):
                piece[take - fade + j] = piece[take - fade + j] * (fade - j) // fade
        out[at : at + take] = piece
        at += take + rng.randrange(SAMPLE_RATE // 40, SAMPLE_RATE // 8)
    return out


@functools.cache
def _syllables() -> tuple[tuple[array.array[int], ...], tuple[array.array[int], ...]]:
    """Two voices (pitch about 115 Hz and 205 Hz) of eight syllables each, made once."""
    rng = random.Random(0x5EED)
    low = tuple(_syllable(rng, 115.0) for _ in range(8))
    high = tuple(_syllable(rng, 205.0) for _ in range(8))
    return low, high


def _syllable(rng: random.Random, pitch: float) -> array.array[int]:
    n = round(rng.uniform(0.12, 0.30) * SAMPLE_RATE)
    f_start, f_end = pitch * rng.uniform(1.0, 1.25), pitch * rng.uniform(0.8, 1.0)
    weights = [rng.uniform(0.3, 1.0) / k for k in range(1, 6)]
    scale = 0.9 / sum(weights)
    weights = [w * scale for w in weights]
    burst = round(rng.uniform(0.02, 0.06) * SAMPLE_RATE) if rng.random() < 0.5 else 0
    attack, release = SAMPLE_RATE // 50, SAMPLE_RATE // 25
    out = array.array("h", bytes(2 * n))
    phase, previous = 0.0, 0.0
    step = 2 * math.pi / SAMPLE_RATE
    for i in range(n):
        phase += step * (f_start + (f_end - f_start) * i / n)
        voiced = sum(w * math.sin(k * phase) for k, w in enumerate(weights, 1))
        noise = rng.uniform(-1.0, 1.0)
        envelope = min(1.0, (i + 1) / attack, (n - i) / release)
        value = envelope * (voiced + 0.05 * noise)
        if i < burst:  # a fricative: differenced (bright) noise giving way to the vowel
            ramp = i / burst
            value = 0.4 * (noise - previous) * (1.0 - ramp) + value * ramp
        previous = noise
        out[i] = round(_LEVEL * value)
    return out
