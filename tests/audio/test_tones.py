"""DTMF pairs, the beep, the file placeholder and talk (emulator/audio/tones.py)."""

from __future__ import annotations

import pytest

from emulator.audio import tones
from emulator.audio.pcm import SAMPLE_RATE
from tests.audio.sound import goertzel, rms

ALL = (*tones.DTMF_ROWS, *tones.DTMF_COLUMNS)


def test_key_5_is_770_and_1336_hz_and_little_else() -> None:
    samples = tones.dtmf("5")
    assert len(samples) == round(tones.DTMF_SECONDS * SAMPLE_RATE)
    power = {f: goertzel(samples, f) for f in ALL}
    present = min(power[770.0], power[1336.0])
    others = max(p for f, p in power.items() if f not in (770.0, 1336.0))
    assert present > 100 * others, power


@pytest.mark.parametrize("key", "0123456789*#ABCD")
def test_every_key_has_its_row_and_column(key: str) -> None:
    samples = tones.dtmf(key)
    row, column = tones.DTMF_FREQUENCIES[key]
    power = {f: goertzel(samples, f) for f in ALL}
    strongest = sorted(power, key=power.__getitem__, reverse=True)[:2]
    assert set(strongest) == {row, column}


def test_an_unknown_key_is_silence() -> None:
    assert rms(tones.dtmf("x")) == 0


def test_the_beep_is_1_khz_for_half_a_second() -> None:
    samples = tones.beep()
    assert len(samples) == SAMPLE_RATE // 2
    assert goertzel(samples, 1000.0) > 100 * goertzel(samples, 770.0)


def test_the_placeholder_is_sound_with_pauses() -> None:
    samples = tones.placeholder(2.0)
    assert len(samples) == 2 * SAMPLE_RATE
    assert rms(samples[:8000]) > 1000  # the first pulse
    assert rms(samples[8400:11600]) == 0  # the pause after it (0.525-0.725 s)


def test_talk_fills_its_length_with_syllables_and_is_repeatable() -> None:
    one = tones.talk(1.5, low=True, seed=3)
    assert len(one) == round(1.5 * SAMPLE_RATE)
    assert rms(one) > 500
    assert one == tones.talk(1.5, low=True, seed=3)
    assert one != tones.talk(1.5, low=False, seed=3)
