"""Signed 16-bit mono PCM at ``SAMPLE_RATE``, held in ``array.array("h")`` (native byte order):
silence, resampling, fades, the little-endian bytes a WAV file or the cache holds.

Pure Python over ``array`` (numpy is not a dependency): slice assignment and ``zip`` do the bulk
work, so a second of audio costs a few milliseconds.
"""

from __future__ import annotations

import array
import io
import sys
import wave
from typing import Final

SAMPLE_RATE: Final = 16000
"""Every track and every synthesized prompt is 16 kHz: the rate of the platform's recordings
(``emulator.calling.media.SAMPLE_RATE``), wideband telephony."""


def silence(seconds: float) -> array.array[int]:
    """``seconds`` of digital silence (none for a negative length)."""
    return array.array("h", bytes(2 * frames(seconds)))


def frames(seconds: float) -> int:
    """Whole samples in ``seconds`` at ``SAMPLE_RATE`` (never negative)."""
    return max(0, round(seconds * SAMPLE_RATE))


def resample(samples: array.array[int], source_rate: int) -> array.array[int]:
    """``samples`` at ``source_rate`` as samples at ``SAMPLE_RATE``: linear interpolation,
    after a [1, 2, 1] / 4 low-pass when going down (it takes eSpeak's 22,050 Hz to zero at its
    Nyquist frequency and to about -15 dB at 8 kHz, enough against aliasing for speech)."""
    if source_rate <= 0:
        raise ValueError(f"a sample rate must be positive, not {source_rate}")
    if source_rate == SAMPLE_RATE or not samples:
        return array.array("h", samples)
    source: list[int] = samples.tolist()
    if source_rate > SAMPLE_RATE:
        padded = [source[0], *source, source[-1]]
        source = [
            (a + b + b + c) >> 2 for a, b, c in zip(padded, padded[1:], padded[2:], strict=False)
        ]
    count = max(1, round(len(source) * SAMPLE_RATE / source_rate))
    step = source_rate / SAMPLE_RATE
    source.append(source[-1])  # the last sample's right neighbour
    out = array.array("h", bytes(2 * count))
    for i in range(count):
        x = i * step
        j = int(x)
        a = source[j]
        out[i] = round(a + (source[j + 1] - a) * (x - j)) if j + 1 < len(source) else a
    return out


def fade_out(samples: array.array[int], seconds: float = 0.01) -> array.array[int]:
    """``samples`` with their last ``seconds`` faded to zero (a cut without a click)."""
    out = array.array("h", samples)
    n = min(len(out), frames(seconds))
    start = len(out) - n
    for k in range(n):
        out[start + k] = out[start + k] * (n - k) // n
    return out


def fit(samples: array.array[int], length: int) -> array.array[int]:
    """``samples`` made exactly ``length`` long: cut (faded) or padded with silence."""
    if len(samples) > length:
        return fade_out(samples[:length])
    return samples + array.array("h", bytes(2 * (length - len(samples))))


def to_le_bytes(samples: array.array[int]) -> bytes:
    """The samples as little-endian bytes (WAV's and the cache's order)."""
    if sys.byteorder == "big":
        samples = array.array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def from_le_bytes(data: bytes) -> array.array[int]:
    """Little-endian 16-bit bytes as samples (a trailing odd byte is dropped)."""
    out = array.array("h", data[: len(data) & ~1])
    if sys.byteorder == "big":
        out.byteswap()
    return out


def wav_bytes(samples: array.array[int]) -> bytes:
    """Mono samples as the bytes of a 16-bit WAV file at ``SAMPLE_RATE``."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(to_le_bytes(samples))
    return buf.getvalue()


def wav_mono(data: bytes, max_seconds: float) -> array.array[int]:
    """A PCM WAV file (8 or 16 bits, any channels and rate) as mono samples at ``SAMPLE_RATE``,
    at most ``max_seconds`` of it. Raises ``wave.Error``, ``EOFError`` or ``ValueError``."""
    with wave.open(io.BytesIO(data), "rb") as w:
        width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
        if width not in (1, 2) or channels < 1 or rate <= 0:
            raise ValueError(f"unsupported WAV: {8 * width}-bit, {channels} channels, {rate} Hz")
        raw = w.readframes(min(w.getnframes(), round(max_seconds * rate)))
    if width == 1:
        samples = array.array("h", ((b - 128) << 8 for b in raw))
    else:
        samples = from_le_bytes(raw)
    if channels > 1:
        samples = samples[::channels]  # the first channel
    return resample(samples, rate)
