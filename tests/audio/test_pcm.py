"""Resampling, fitting and the bytes of PCM (emulator/audio/pcm.py)."""

from __future__ import annotations

import array
import io
import math
import wave

from emulator.audio import pcm
from emulator.audio.pcm import SAMPLE_RATE
from tests.audio.sound import goertzel, rms


def sine(frequency: float, seconds: float, rate: int) -> array.array[int]:
    n = round(seconds * rate)
    return array.array(
        "h", (round(8000 * math.sin(2 * math.pi * frequency * i / rate)) for i in range(n))
    )


def test_resampling_22050_to_16000_keeps_length_and_pitch() -> None:
    source = sine(440.0, 1.0, 22050)
    out = pcm.resample(source, 22050)
    assert len(out) == SAMPLE_RATE
    assert goertzel(out, 440.0) > 1000 * goertzel(out, 1000.0)
    assert 5000 < rms(out) < 6000  # about 8000 / sqrt(2): the low-pass barely touches 440 Hz


def test_resampling_attenuates_what_16_khz_cannot_hold() -> None:
    high = pcm.resample(sine(10000.0, 0.5, 22050), 22050)  # above the new Nyquist (8 kHz)
    assert rms(high) < 0.25 * 8000 / math.sqrt(2)


def test_resampling_at_the_same_rate_copies_and_upsampling_works() -> None:
    source = sine(300.0, 0.1, SAMPLE_RATE)
    assert pcm.resample(source, SAMPLE_RATE) == source
    assert len(pcm.resample(sine(300.0, 0.1, 8000), 8000)) == 1600
    assert len(pcm.resample(array.array("h"), 22050)) == 0


def test_fit_cuts_with_a_fade_and_pads_with_silence() -> None:
    loud = array.array("h", [10000] * 1000)
    cut = pcm.fit(loud, 500)
    assert len(cut) == 500 and cut[0] == 10000 and abs(cut[-1]) < 100
    padded = pcm.fit(loud, 1500)
    assert (
        len(padded) == 1500
        and padded[999] == 10000
        and padded[1000:] == array.array("h", [0] * 500)
    )


def test_bytes_round_trip_little_endian() -> None:
    samples = array.array("h", [1, -2, 32767, -32768])
    data = pcm.to_le_bytes(samples)
    assert data[:2] == b"\x01\x00"
    assert pcm.from_le_bytes(data + b"\x07") == samples


def test_a_stereo_8_khz_wav_is_read_as_16_khz_mono_within_its_bound() -> None:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(pcm.to_le_bytes(array.array("h", [1000, -5] * 8000)))
    assert len(pcm.wav_mono(buf.getvalue(), 10.0)) == SAMPLE_RATE
    assert len(pcm.wav_mono(buf.getvalue(), 0.5)) == SAMPLE_RATE // 2
