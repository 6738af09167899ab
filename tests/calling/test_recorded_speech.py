"""The caller's words inside recordings (emulator/calling/media.py with emulator.audio): a
``say`` in a record action is synthesized speech of those words in the recorded audio, a
``talk`` is voice-like sound, and the recording keeps the length the outcome reports.

The recordings are decoded here with the stdlib ``wave`` module (WAV) and PyAV (MP3, WMA),
independently of the module's own decoder.
"""

from __future__ import annotations

import array
import io
import math
import sys
import wave
from typing import Any

import av
import pytest

from emulator.audio.cache import AudioCache
from emulator.audio.pcm import fit
from emulator.audio.synth import Speech, Synthesizer
from emulator.calling.caller import CallerScript
from emulator.calling.engine import CallProgress, run_workflow
from emulator.calling.media import SAMPLE_RATE, decode_duration, encode_recording, synthesize
from emulator.calling.model import CallState, RecordingFormat, RecordOutcome
from emulator.calling.speech import SpeechSpan, spoken_words
from emulator.calling.wire import read_workflow

WAV, WMA, MP3 = RecordingFormat.WAV, RecordingFormat.WMA, RecordingFormat.MP3
_FLOOR = 3  # the recordings' noise floor spans -3..3


@pytest.fixture(scope="module")
def voice() -> Synthesizer:
    """A synthesizer of its own (memory cache only): eSpeak NG, or the fallback tones."""
    return Synthesizer(AudioCache(None), notice=lambda _: None)


def record_run(caller: str, fmt: str = "wav") -> tuple[float, tuple[tuple[float, float], ...]]:
    """Run a record action against ``caller``: the recording's length and speech spans."""
    doc: dict[str, Any] = {
        "actions": [{"operationId": "rec", "action": "record", "recordingFormat": fmt,
                     "playPrompt": {"prompts": [{"value": "leave a message"}]},
                     "maxSilenceTimeoutInSeconds": 2}],
        "links": {"callback": "https://bot.example/callback"},
    }  # fmt: skip
    progress = CallProgress(call_state=CallState.ESTABLISHED, workflows=1)
    run = run_workflow(read_workflow(doc), CallerScript.from_inline(caller), progress)
    assert isinstance(run.outcome, RecordOutcome) and run.recording is not None
    return run.outcome.length_of_recording_in_secs, run.recording.speech


def wav_samples(data: bytes) -> array.array[int]:
    with wave.open(io.BytesIO(data), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        samples = array.array("h", w.readframes(w.getnframes()))
    if sys.byteorder == "big":
        samples.byteswap()
    return samples


def pyav_samples(data: bytes) -> array.array[int]:
    samples = array.array("h")
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    with av.open(io.BytesIO(data), "r") as container:
        for frame in container.decode(container.streams.audio[0]):
            for out in resampler.resample(frame):
                samples.frombytes(bytes(out.planes[0])[: 2 * out.samples])
    return samples


def rms(samples: array.array[int]) -> float:
    return math.sqrt(sum(v * v for v in samples) / len(samples)) if samples else 0.0


def voiced_seconds(samples: array.array[int]) -> float:
    """From the first to the last sample louder than the noise floor."""
    loud = [i for i, v in enumerate(samples) if abs(v) > 4 * _FLOOR]
    return (loud[-1] - loud[0] + 1) / SAMPLE_RATE if loud else 0.0


def span_of(samples: array.array[int], span: tuple[float, float]) -> array.array[int]:
    return samples[round(span[0] * SAMPLE_RATE) : round(span[1] * SAMPLE_RATE)]


def correlation(a: array.array[int], b: array.array[int]) -> float:
    n = min(len(a), len(b))
    dot = sum(x * y for x, y in zip(a[:n], b[:n], strict=True))
    return dot / (math.sqrt(sum(x * x for x in a[:n]) * sum(y * y for y in b[:n])) or 1.0)


def test_the_engine_keeps_the_words_of_each_span() -> None:
    length, spans = record_run("say sales; talk 2s; hangup")
    assert [spoken_words(s) for s in spans] == ["sales", None]
    assert spans[0] == (spans[0][0], spans[0][1])  # still the pair everywhere a pair is read
    assert length >= spans[1][1]


def test_said_words_are_their_synthesized_speech_in_the_wav(voice: Synthesizer) -> None:
    length, spans = record_run("say sales; silence 3s")
    data = encode_recording(WAV, length, spans, seed=3, synthesizer=voice)
    samples = wav_samples(data)
    assert len(samples) == round(length * SAMPLE_RATE)  # lengthOfRecordingInSecs, to the sample
    assert decode_duration(data) == pytest.approx(length, abs=1 / SAMPLE_RATE)
    span = spans[0]
    expected = fit(voice.speak(Speech("sales", voice="caller"), within=span[1] - span[0]),
                   len(span_of(samples, span)))  # fmt: skip
    heard = span_of(samples, span)
    assert rms(heard) > 1000  # speech, not the floor (about -84 dBFS)
    # The span holds exactly the synthesized words over the noise floor.
    assert max(abs(h - e) for h, e in zip(heard, expected, strict=True)) <= _FLOOR
    assert voiced_seconds(heard) == pytest.approx(voiced_seconds(expected), abs=0.01)
    assert rms(samples[round(span[1] * SAMPLE_RATE) :]) < 5  # silence after it


def test_words_differ_from_talk(voice: Synthesizer) -> None:
    span = SpeechSpan((0.5, 1.5), "sales department")
    said = wav_samples(encode_recording(WAV, 2.5, [span], seed=3, synthesizer=voice))
    talked = wav_samples(encode_recording(WAV, 2.5, [(0.5, 1.5)], seed=3, synthesizer=voice))
    a, b = span_of(said, (0.5, 1.5)), span_of(talked, (0.5, 1.5))
    assert rms(a) > 1000 and rms(b) > 1000  # both are sound
    assert abs(correlation(a, b)) < 0.3  # and not the same sound
    spoken = voice.speak(Speech("sales department", voice="caller"), within=1.0)
    assert correlation(a, fit(spoken, len(a))) > 0.99
    assert synthesize(2.5, [(0.5, 1.5)], seed=3) == talked  # talk needs no synthesizer


@pytest.mark.parametrize("fmt", [MP3, WMA], ids=["mp3", "wma"])
def test_words_survive_the_lossy_codecs(voice: Synthesizer, fmt: RecordingFormat) -> None:
    span = SpeechSpan((0.5, 1.7), "press one for sales")
    data = encode_recording(fmt, 2.5, [span], seed=1, synthesizer=voice)
    decoded = pyav_samples(data)
    reference = synthesize(2.5, [span], seed=1, synthesizer=voice)
    assert correlation(span_of(decoded, (0.5, 1.7)), span_of(reference, (0.5, 1.7))) > 0.8
    if fmt is MP3:
        assert len(decoded) == len(reference)  # to the sample (LAME's gapless header)


def test_words_that_outlast_their_span_are_cut_at_its_end(voice: Synthesizer) -> None:
    words = "one two three four five six seven eight nine ten"
    samples = wav_samples(
        encode_recording(WAV, 2.0, [SpeechSpan((0.5, 1.0), words)], seed=2, synthesizer=voice)
    )
    assert len(samples) == 2 * SAMPLE_RATE
    assert rms(span_of(samples, (0.5, 1.0))) > 500
    assert rms(span_of(samples, (1.0, 2.0))) < 5


def test_the_fallback_speaks_tones_as_long_as_the_span() -> None:
    tones = Synthesizer(AudioCache(None), espeak=False)
    samples = wav_samples(
        encode_recording(WAV, 2.0, [SpeechSpan((0.4, 0.8), "sales")], seed=4, synthesizer=tones)
    )
    assert len(samples) == 2 * SAMPLE_RATE
    assert rms(span_of(samples, (0.4, 0.8))) > 1000
    assert rms(span_of(samples, (0.85, 2.0))) < 5
