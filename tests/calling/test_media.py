"""Tests for emulator/calling/media.py: real recordings in three formats, and prompt media checks.

Recordings are decoded here with PyAV (and ``wave`` for WAV) independently of the module's own
``decode_duration``, so that a bug in one is not hidden by the same bug in the other.
"""

from __future__ import annotations

import array
import inspect
import io
import math
import struct
import wave
from typing import Literal

import av
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.calling.media import (
    ASF_GUID,
    CONTENT_TYPES,
    MAX_PROMPT_BYTES,
    SAMPLE_RATE,
    MediaError,
    MediaProblem,
    PromptMedia,
    decode_duration,
    encode_recording,
    inspect_prompt_media,
    synthesize,
)
from emulator.calling.model import RecordingFormat
from emulator.errors import BotemuError

WAV, WMA, MP3 = RecordingFormat.WAV, RecordingFormat.WMA, RecordingFormat.MP3

EXPECTED = {  # container, codec (canonical name)
    WAV: ("wav", "pcm_s16le"),
    WMA: ("asf", "wmav2"),
    MP3: ("mp3", "mp3"),
}


class Decoded:
    """A file decoded with PyAV into mono s16 samples at SAMPLE_RATE."""

    def __init__(self, data: bytes) -> None:
        self.samples = array.array("h")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        with av.open(io.BytesIO(data), "r") as container:
            self.container = container.format.name
            stream = container.streams.audio[0]
            self.codec = stream.codec_context.codec.canonical_name
            self.rate = stream.codec_context.sample_rate
            assert container.duration is not None
            self.header_seconds = container.duration / 1_000_000
            for frame in container.decode(stream):
                for out in resampler.resample(frame):
                    self.samples.frombytes(bytes(out.planes[0])[: 2 * out.samples])
            for out in resampler.resample(None):
                self.samples.frombytes(bytes(out.planes[0])[: 2 * out.samples])

    @property
    def seconds(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    def rms(self, start: float, end: float) -> float:
        part = self.samples[round(start * SAMPLE_RATE) : round(end * SAMPLE_RATE)]
        assert len(part) > 0
        return math.sqrt(sum(v * v for v in part) / len(part))


FORMATS = [pytest.param(f, id=f.value) for f in (WAV, WMA, MP3)]
RECORDINGS = [
    pytest.param(f, s, id=f"{f.value}-{s}s") for f in (WAV, WMA, MP3) for s in (0.5, 4.0, 30.25)
]


def speech_for(seconds: float) -> tuple[tuple[float, float], ...]:
    return ((0.3 * seconds, 0.7 * seconds),)


# -- encode_recording -----------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "seconds"), RECORDINGS)
def test_recording_decodes_to_the_requested_format_and_length(
    fmt: RecordingFormat, seconds: float
) -> None:
    data = encode_recording(fmt, seconds, speech_for(seconds), seed=7)
    decoded = Decoded(data)

    assert (decoded.container, decoded.codec) == EXPECTED[fmt]
    assert decoded.rate == SAMPLE_RATE
    assert abs(decoded.seconds - seconds) <= 0.05
    assert abs(decoded.header_seconds - seconds) <= 0.05  # what a bot reading the header sees
    assert abs(decode_duration(data) - decoded.seconds) < 1e-9
    if fmt is WMA:
        assert data.startswith(ASF_GUID)
        assert -0.032 <= decoded.seconds - seconds <= 0  # whole 512-sample frames, never longer
    else:  # exact to the sample: MP3 carries a LAME gapless header
        assert len(decoded.samples) == round(seconds * SAMPLE_RATE)
    if fmt is MP3:
        assert data[0] == 0xFF and data[1] & 0xE0 == 0xE0  # an MPEG audio frame, no ID3 tag
    if fmt is WAV:
        assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
        with wave.open(io.BytesIO(data), "rb") as w:
            assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
            assert w.getnframes() == round(seconds * SAMPLE_RATE)


@pytest.mark.parametrize(("fmt", "seconds"), RECORDINGS)
def test_speech_spans_carry_energy_and_silence_does_not(
    fmt: RecordingFormat, seconds: float
) -> None:
    decoded = Decoded(encode_recording(fmt, seconds, speech_for(seconds), seed=7))
    guard = 0.06  # codecs smear a transient over a frame or two

    speech = decoded.rms(0.3 * seconds, 0.7 * seconds)
    before = decoded.rms(0, 0.3 * seconds - guard)
    after = decoded.rms(0.7 * seconds + guard, min(seconds, decoded.seconds))

    assert speech > 1000  # about -30 dBFS or louder
    assert before < 30 and after < 30  # about -60 dBFS or quieter
    assert speech > 50 * max(before, after, 1.0)


def correlation(a: array.array[int], b: array.array[int]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.parametrize("fmt", FORMATS)
def test_speech_lands_where_the_spans_say_with_no_codec_delay(fmt: RecordingFormat) -> None:
    speech = ((0.5, 1.5),)
    reference = synthesize(2.0, speech, seed=5)
    decoded = Decoded(encode_recording(fmt, 2.0, speech, seed=5)).samples
    window = slice(round(0.4 * SAMPLE_RATE), round(1.6 * SAMPLE_RATE))

    if fmt is WAV:
        assert decoded == reference
    assert correlation(reference[window], decoded[window]) > 0.9  # measured: 0.98 for WMA, MP3


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_seed_same_bytes_other_seed_other_speech(fmt: RecordingFormat) -> None:
    speech = ((0.5, 1.5), (2.0, 2.6))
    first = encode_recording(fmt, 3.0, speech, seed=11)

    assert encode_recording(fmt, 3.0, speech, seed=11) == first
    assert Decoded(encode_recording(fmt, 3.0, speech, seed=12)).samples != Decoded(first).samples


@pytest.mark.parametrize("fmt", FORMATS)
def test_recording_with_no_speech_is_quiet(fmt: RecordingFormat) -> None:
    decoded = Decoded(encode_recording(fmt, 2.0))

    assert decoded.rms(0, 1.9) < 30


def test_speech_spans_are_clipped_to_the_recording() -> None:
    data = encode_recording(WAV, 1.0, ((-3.0, 0.2), (0.9, 7.0), (0.5, 0.5), (0.7, 0.6)))
    decoded = Decoded(data)

    assert len(decoded.samples) == SAMPLE_RATE
    assert decoded.rms(0, 0.2) > 1000
    assert decoded.rms(0.3, 0.55) < 30  # the empty and the reversed span add nothing


@pytest.mark.parametrize(
    "seconds", [pytest.param(1 / SAMPLE_RATE, id="one-sample"), pytest.param(0.02, id="20ms")]
)
@pytest.mark.parametrize("fmt", FORMATS)
def test_very_short_recordings_still_decode(fmt: RecordingFormat, seconds: float) -> None:
    data = encode_recording(fmt, seconds, ((0.0, seconds),))

    assert 0 < decode_duration(data) <= seconds + 0.05


def test_longest_recording_is_exact() -> None:
    data = encode_recording(WAV, 600.0, ((10.0, 20.0),))

    assert decode_duration(data) == 600.0


@pytest.mark.parametrize(
    ("fmt", "seconds"),
    [
        pytest.param(WAV, 0.0, id="zero"),
        pytest.param(WAV, -1.0, id="negative"),
        pytest.param(MP3, 600.01, id="over-600"),
        pytest.param(WMA, math.nan, id="nan"),
        pytest.param(WAV, math.inf, id="inf"),
        pytest.param(RecordingFormat.NOT_UNDERSTOOD, 1.0, id="not-understood"),
    ],
)
def test_encode_refuses_what_it_cannot_make(fmt: RecordingFormat, seconds: float) -> None:
    with pytest.raises(MediaError) as caught:
        encode_recording(fmt, seconds)

    assert caught.value.problem is MediaProblem.BAD_REQUEST
    assert isinstance(caught.value, BotemuError)


def test_encode_refuses_a_speech_span_that_is_not_finite() -> None:
    with pytest.raises(MediaError, match="not finite"):
        encode_recording(WAV, 1.0, ((0.0, math.nan),))


def test_content_types_cover_every_format() -> None:
    assert set(CONTENT_TYPES) == {f for f in RecordingFormat if f.name != "NOT_UNDERSTOOD"}
    assert CONTENT_TYPES[WMA] == "audio/x-ms-wma"
    assert CONTENT_TYPES[WAV] == "audio/wav"
    assert CONTENT_TYPES[MP3] == "audio/mpeg"


# -- inspect_prompt_media ---------------------------------------------------------------------


def test_wav_prompt_is_measured_from_its_header() -> None:
    data = encode_recording(WAV, 4.0, ((1.0, 3.0),))

    assert inspect_prompt_media(data) == PromptMedia("wav", 4.0, len(data))


def test_wma_prompt_is_measured_by_decoding() -> None:
    data = encode_recording(WMA, 4.0, ((1.0, 3.0),))

    media = inspect_prompt_media(data)

    assert (media.format, media.size) == ("wma", len(data))
    assert media.seconds == pytest.approx(4.0, abs=0.05)


def test_mu_law_wav_is_wav_measured_by_pyav() -> None:
    # The wave module reads only PCM; telephony prompts are often G.711 mu-law.
    buf = io.BytesIO()
    with av.open(buf, "w", format="wav") as out:
        stream = out.add_stream("pcm_mulaw", rate=8000, layout="mono")
        frame = av.AudioFrame(format="s16", layout="mono", samples=12000)
        frame.sample_rate = 8000
        frame.planes[0].update(bytes(24000))
        out.mux(stream.encode(frame))
        out.mux(stream.encode(None))

    media = inspect_prompt_media(buf.getvalue())

    assert media.format == "wav"
    assert media.seconds == pytest.approx(1.5)


def asf_with(*, video: bool, audio_codec: Literal["wmav2", "libmp3lame"]) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, "w", format="asf") as out:
        picture = out.add_stream("wmv2", rate=10) if video else None
        sound = out.add_stream(audio_codec, rate=16000, layout="mono")
        sound.codec_context.bit_rate = 32000
        if picture is not None:
            picture.width, picture.height, picture.pix_fmt = 64, 64, "yuv420p"
            for pts in range(3):
                image = av.VideoFrame(64, 64, "yuv420p")
                image.pts = pts
                out.mux(picture.encode(image))
            out.mux(picture.encode(None))
        frame = av.AudioFrame(format="s16", layout="mono", samples=8000)
        frame.sample_rate = 16000
        frame.pts = 0
        frame.planes[0].update(bytes(16000))
        out.mux(sound.encode(frame))
        out.mux(sound.encode(None))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            asf_with(video=True, audio_codec="wmav2"),
            "not WAV or WMA: an ASF file holding video (WMV)",
            id="wmv",
        ),
        pytest.param(
            asf_with(video=False, audio_codec="libmp3lame"),
            "not WAV or WMA: an ASF file holding mp3 audio",
            id="mp3-in-asf",
        ),
    ],
)
def test_asf_that_is_not_wma_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(MediaError) as caught:
        inspect_prompt_media(data)

    assert str(caught.value) == message
    assert caught.value.problem is MediaProblem.NOT_WAV_OR_WMA
    assert decode_duration(data) == pytest.approx(0.5, abs=0.1)  # measurable (MP3 delay in ASF)


def test_the_bytes_decide_never_a_name() -> None:
    # There is no name to pass: a WAV served as "hello.wma" is a WAV, and the reverse.
    assert list(inspect.signature(inspect_prompt_media).parameters) == ["data"]
    assert inspect_prompt_media(encode_recording(WAV, 1.0)).format == "wav"
    assert inspect_prompt_media(encode_recording(WMA, 1.0)).format == "wma"


def exact_wav(size: int) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(b"\x80" * (size - 44))
    assert len(buf.getvalue()) == size
    return buf.getvalue()


def test_a_prompt_of_exactly_the_limit_is_accepted() -> None:
    media = inspect_prompt_media(exact_wav(MAX_PROMPT_BYTES))

    assert media.size == MAX_PROMPT_BYTES


def riff(kind: bytes, body: bytes = b"\0" * 64) -> bytes:
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + kind + body


def ogg_page() -> bytes:
    return b"OggS\x00\x02" + bytes(20) + b"\x01\x1e\x01vorbis" + bytes(40)


def wav_16k(seconds: float) -> bytes:
    return encode_recording(WAV, seconds)


BAD_PROMPTS = [
    pytest.param(b"", MediaProblem.EMPTY, r"^prompt media is empty \(0 bytes\)$", id="empty"),
    pytest.param(
        wav_16k(20.0),
        MediaProblem.TOO_LARGE,
        r"^prompt media is 626 KB \(640044 bytes\); the limit is 512 KB \(524288 bytes\)$",
        id="long-wav",
    ),
    pytest.param(
        exact_wav(MAX_PROMPT_BYTES + 1),
        MediaProblem.TOO_LARGE,
        r"is 513 KB .*the limit is 512 KB",
        id="one-byte-over",
    ),
    pytest.param(
        encode_recording(MP3, 1.0),
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like MP3 \(first bytes ff f3 ",
        id="mp3",
    ),
    pytest.param(
        b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(100),
        MediaProblem.NOT_WAV_OR_WMA,
        r"looks like MP3 \(first bytes 49 44 33 04",
        id="mp3-id3",
    ),
    pytest.param(
        ogg_page(),
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like OGG \(first bytes 4f 67 67 53 00 02 00 00\)$",
        id="ogg",
    ),
    pytest.param(
        b"<!DOCTYPE html>\n<html><body>404 Not Found</body></html>",
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like HTML \(first bytes 3c 21 44 4f",
        id="html",
    ),
    pytest.param(
        b"\xde\xad\xbe\xef" * 10,
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like unknown \(first bytes de ad be ef de ad be ef\)$",
        id="unknown",
    ),
    pytest.param(
        riff(b"AVI "),
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like a RIFF file of type 'AVI ', not WAVE",
        id="riff-avi",
    ),
    pytest.param(
        wav_16k(2.0)[:32000],
        MediaProblem.CORRUPT,
        r"^truncated WAV: the header declares 2.000 s of audio but the file holds 0.999 s$",
        id="truncated-wav",
    ),
    pytest.param(wav_16k(2.0)[:30], MediaProblem.CORRUPT, r"^corrupt WAV: ", id="wav-header-only"),
    pytest.param(riff(b"WAVE"), MediaProblem.CORRUPT, r"^corrupt WAV: ", id="wave-no-chunks"),
    pytest.param(
        wav_16k(0.5)[:20] + b"\x00\x00" + wav_16k(0.5)[22:],  # format tag 0
        MediaProblem.CORRUPT,
        r"^corrupt WAV: its audio codec is unknown$",
        id="wav-format-tag-0",
    ),
    pytest.param(
        b"RIFF\x10\x00",
        MediaProblem.NOT_WAV_OR_WMA,
        r"^not WAV or WMA: looks like a truncated RIFF header",
        id="riff-truncated",
    ),
    pytest.param(wav_16k(0.5)[:44], MediaProblem.CORRUPT, r"^truncated WAV", id="wav-no-data"),
    pytest.param(
        encode_recording(WMA, 2.0)[:9000],
        MediaProblem.CORRUPT,
        r"^truncated WMA: the header declares \d+ bytes but the file has 9000$",
        id="truncated-wma",
    ),
    pytest.param(ASF_GUID + bytes(8), MediaProblem.CORRUPT, r"^truncated WMA", id="asf-guid-only"),
    pytest.param(
        ASF_GUID + b"\xff" * 200, MediaProblem.CORRUPT, r"^corrupt WMA: ", id="asf-garbage"
    ),
]


@pytest.mark.parametrize(("data", "problem", "message"), BAD_PROMPTS)
def test_bad_prompt_media_is_refused_with_a_clear_message(
    data: bytes, problem: MediaProblem, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(MediaError, match=message) as caught:
        inspect_prompt_media(data)

    assert caught.value.problem is problem
    assert "\n" not in str(caught.value)
    assert capfd.readouterr().err == ""  # FFmpeg's log stays quiet


def test_pyav_errors_are_chained_not_leaked() -> None:
    with pytest.raises(MediaError) as caught:
        inspect_prompt_media(ASF_GUID + b"\xff" * 200)

    assert isinstance(caught.value.__cause__, av.FFmpegError)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(ogg_page(), id="ogg"),
        pytest.param(b"<html></html>", id="html"),
    ],
)
def test_decode_duration_refuses_unknown_bytes(data: bytes) -> None:
    with pytest.raises(MediaError, match=r"^not WAV, WMA or MP3: looks like ") as caught:
        decode_duration(data)

    assert caught.value.problem is MediaProblem.UNKNOWN_FORMAT


# -- robustness: only MediaError, whatever the bytes ------------------------------------------


def check_any(data: bytes) -> None:
    try:
        media = inspect_prompt_media(data)
    except MediaError as e:
        assert "\n" not in str(e)
    else:
        assert media.format in ("wav", "wma")
        assert media.seconds > 0 and media.size == len(data)
    try:
        assert decode_duration(data) > 0
    except MediaError:
        pass


PREFIXES = [b"", b"RIFF", riff(b"WAVE")[:12], ASF_GUID, b"ID3", b"\xff\xf3", b"OggS"]
VALID = [
    encode_recording(WAV, 0.1, ((0.0, 0.1),)),
    encode_recording(WMA, 0.1, ((0.0, 0.1),)),
    encode_recording(MP3, 0.1, ((0.0, 0.1),)),
]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.sampled_from(PREFIXES), st.binary(max_size=600))
def test_arbitrary_bytes_only_ever_raise_media_error(prefix: bytes, rest: bytes) -> None:
    check_any(prefix + rest)


@FAST
@given(
    st.sampled_from(VALID),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=12),
    st.integers(0, 10**6),
)
def test_mutated_files_only_ever_raise_media_error(
    valid: bytes, flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(valid)
    for at, value in flips:
        data[at % len(data)] = value
    check_any(bytes(data[: max(1, len(data) - cut % len(data))]))
