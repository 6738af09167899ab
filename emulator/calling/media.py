"""Real audio bytes for the calling emulator: recordings it sends, prompt media it fetches.

``encode_recording`` makes the audio of a record action (spec C, recordOutcome; field notes,
"Calling: HTTP") in the requested RecordingFormat: WAV through the stdlib ``wave`` module, WMA
(wmav2 in ASF) and MP3 (LAME) through PyAV. The audio is mono, ``SAMPLE_RATE`` Hz, and its decoded
length matches ``lengthOfRecordingInSecs``: to the sample for WAV and MP3 (the MP3 carries a LAME
gapless header), and for WMA 0-32 ms short (whole 512-sample frames; the ASF header then says
0-32 ms long). Speech sits exactly where the spans say in every format: the WMA is given one frame
of lead-in for its decoder's delay. Outside the caller's speech the audio holds a very low noise
floor (about -84 dBFS); inside (``synthesize``), the words the caller said, synthesized by
``emulator.audio`` (eSpeak NG, or its fallback of tones) in the caller's voice, or for ``talk``
the seeded voice-like syllables of ``emulator.audio.tones.talk``. Encoding is CPU work (MP3 is
the slowest, about 5-10 ms per second of audio; a phrase not yet synthesized costs tens of
milliseconds more): callers on an event loop may want ``asyncio.to_thread``.

``inspect_prompt_media`` checks a Prompt's fileUri content the way the platform does (spec C,
Limits): at most ``MAX_PROMPT_BYTES``, really WAV or WMA judged from its bytes, never its name, and
its real duration. ``decode_duration`` measures any of the three formats.

Errors (all under ``emulator.errors.BotemuError``)::

    BotemuError
    └── MediaError      audio could not be made or is not acceptable (has .problem, a MediaProblem)

PyAV is always given bytes through ``io.BytesIO``; its exceptions never leave this module except
as a ``MediaError`` chained to them. FFmpeg's log is left as PyAV sets it by default (discarded);
this module does not change that process-wide setting.
"""

from __future__ import annotations

import array
import contextlib
import enum
import io
import math
import operator
import random
import struct
import wave
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

if TYPE_CHECKING:
    import av

from emulator.audio.pcm import fit, wav_bytes, wav_mono
from emulator.audio.shared import shared_synthesizer
from emulator.audio.synth import Speech, Synthesizer
from emulator.audio.tones import talk
from emulator.calling.model import RecordingFormat
from emulator.calling.speech import captured, spoken_words
from emulator.errors import BotemuError

CONTENT_TYPES: Final[Mapping[RecordingFormat, str]] = MappingProxyType(
    {
        RecordingFormat.WMA: "audio/x-ms-wma",
        RecordingFormat.WAV: "audio/wav",
        RecordingFormat.MP3: "audio/mpeg",
    }
)
"""The Content-Type of the recordedAudio part for each format (field notes, "Calling: HTTP")."""

MAX_PROMPT_BYTES: Final = 512 * 1024
"""The largest prompt media file the platform accepts (spec C, Limits: 512 kb)."""

SAMPLE_RATE: Final = 16000
"""Recordings are 16 kHz mono. It is wideband telephony, the rate speech recognisers expect
from a recording, and a rate both codecs take natively: MP3 as MPEG-2 Layer III and wmav2 with
its 512-sample frames. 8 kHz would halve the size, but LAME would need MPEG-2.5 for it."""

MAX_RECORDING_SECONDS: Final = 600.0
"""The longest recording there can be (field notes: maxDurationInSeconds is at most 600)."""

BIT_RATE: Final = 32000
"""The bit rate for MP3 and WMA: clear speech at 16 kHz (wmav2 needs at least 24 kbit/s)."""

ASF_GUID: Final = bytes.fromhex("3026b2758e66cf11a6d900aa0062ce6c")
"""The ASF Header Object GUID that every WMA file starts with."""

WMA_CODECS: Final = frozenset({"wmav1", "wmav2", "wmapro", "wmavoice", "wmalossless"})

_WMA_FRAME = 512  # wmav2's frame at 16 kHz; its decoder drops the first frame (the MDCT delay)
_CHUNK = 16 * _WMA_FRAME  # samples handed to PyAV at a time
_FLOOR = 3  # the noise floor spans -3..3 (RMS 2, about -84 dBFS)
_PEAK = 32767 - _FLOOR  # the loudest sample a sound may have and still take the floor


_FLOOR_TABLE: Final = tuple(b % (2 * _FLOOR + 1) - _FLOOR for b in range(256))  # byte -> floor


class MediaProblem(enum.StrEnum):
    """What kind of problem a MediaError reports."""

    BAD_REQUEST = "bad request"  # encode_recording was asked for something it cannot make
    EMPTY = "empty"
    TOO_LARGE = "too large"
    NOT_WAV_OR_WMA = "not wav or wma"
    UNKNOWN_FORMAT = "unknown format"  # decode_duration did not recognise the bytes
    CORRUPT = "corrupt"


class MediaError(BotemuError):
    """Audio could not be made, read, or accepted. The message is one line, fit to be used as a
    failureReason or a Finding message; ``problem`` says which kind of problem it is."""

    def __init__(self, message: str, problem: MediaProblem = MediaProblem.CORRUPT) -> None:
        super().__init__(message)
        self.message = message
        self.problem = problem


@dataclass(frozen=True, slots=True)
class PromptMedia:
    """What the platform learnt about a prompt's media file: its format, real duration, size."""

    format: Literal["wav", "wma"]
    seconds: float
    size: int


# -- making recordings ------------------------------------------------------------------------


def encode_recording(
    fmt: RecordingFormat,
    seconds: float,
    speech: Sequence[tuple[float, float]] = (),
    *,
    seed: int = 0,
    synthesizer: Synthesizer | None = None,
) -> bytes:
    """The bytes of a ``seconds``-long mono recording in ``fmt``, with caller speech in the
    ``speech`` spans ((start, end) offsets in seconds, clipped to the recording; a
    ``SpeechSpan`` with text holds those words) and a very low noise floor elsewhere. The same
    arguments always give the same bytes (words: once synthesized, from the synthesizer's
    cache). ``synthesizer`` speaks the words (by default the process's shared one)."""
    if not 0 < seconds <= MAX_RECORDING_SECONDS:  # also rejects NaN
        raise MediaError(
            f"cannot record {seconds} s: a recording lasts more than 0 and at most"
            f" {MAX_RECORDING_SECONDS:g} s",
            MediaProblem.BAD_REQUEST,
        )
    for start, end in speech:
        if not (math.isfinite(start) and math.isfinite(end)):
            raise MediaError(
                f"speech span ({start}, {end}) is not finite", MediaProblem.BAD_REQUEST
            )
    if fmt not in CONTENT_TYPES:
        raise MediaError(f"cannot encode a recording as {fmt.value}", MediaProblem.BAD_REQUEST)
    pcm = synthesize(seconds, speech, seed=seed, synthesizer=synthesizer)
    if fmt is RecordingFormat.WAV:
        return wav_bytes(pcm)
    if fmt is RecordingFormat.MP3:
        return _pyav_encode(pcm, "mp3", "libmp3lame", {"id3v2_version": "0", "fflags": "+bitexact"})
    # wmav2 codes whole 512-sample frames, and FFmpeg's decoder drops the first one (the MDCT
    # delay) while the ASF header still counts it. So: one frame of lead-in, then the audio cut to
    # whole frames. Decoded, it is 0-32 ms short of `seconds`; by the header, 0-32 ms long.
    frames = max(1, len(pcm) // _WMA_FRAME)
    del pcm[frames * _WMA_FRAME :]
    pcm.extend(array.array("h", bytes(2 * (frames * _WMA_FRAME - len(pcm)))))
    lead_in = array.array("h", bytes(2 * _WMA_FRAME))
    return _pyav_encode(lead_in + pcm, "asf", "wmav2", {"fflags": "+bitexact"})


def synthesize(
    seconds: float,
    speech: Sequence[tuple[float, float]] = (),
    *,
    seed: int = 0,
    synthesizer: Synthesizer | None = None,
) -> array.array[int]:
    """The signed 16-bit samples (native byte order) that ``encode_recording`` encodes: the
    noise floor, and in each span the caller's sound added to it. A span that carries words
    (``speech.SpeechSpan`` with text: a ``say``) holds them synthesized in the caller's voice,
    spoken faster if they would outlast the span and cut at its end; a span with ``sound`` (a
    live caller's microphone) holds that audio, cut at the span's end; any other span (``talk``)
    holds voice-like syllables (``emulator.audio.tones.talk``) in a voice the seed picks."""
    rng = random.Random(seed)
    total = max(1, round(seconds * SAMPLE_RATE))
    floor = array.array("h", map(_FLOOR_TABLE.__getitem__, rng.randbytes(SAMPLE_RATE)))
    pcm = floor * (total // SAMPLE_RATE + 1)
    del pcm[total:]
    low = rng.randrange(2) == 0
    for span in speech:
        start, end = span
        a = min(total, max(0, round(start * SAMPLE_RATE)))
        b = min(total, max(0, round(end * SAMPLE_RATE)))
        if a >= b:
            continue
        words, heard = spoken_words(span), captured(span)
        span_seconds = (b - a) / SAMPLE_RATE
        if heard is not None:
            sound = heard.samples()
        elif words is not None and words.strip():
            voice = synthesizer if synthesizer is not None else shared_synthesizer()
            sound = voice.speak(Speech(words, voice="caller"), within=span_seconds)
        else:
            sound = talk(span_seconds, low=low, seed=rng.getrandbits(32))
        _mix(pcm, a, fit(sound, b - a))
    return pcm


def _mix(pcm: array.array[int], at: int, sound: array.array[int]) -> None:
    """Add ``sound`` to ``pcm`` from sample ``at`` (the noise floor stays under it)."""
    if sound and (max(sound) > _PEAK or min(sound) < -_PEAK):  # no room for the floor: clip
        sound = array.array("h", (max(-_PEAK, min(_PEAK, v)) for v in sound))
    end = at + len(sound)
    pcm[at:end] = array.array("h", map(operator.add, pcm[at:end], sound))


def _pyav_encode(
    pcm: array.array[int],
    container: Literal["mp3", "asf"],
    codec: Literal["libmp3lame", "wmav2"],
    options: dict[str, str],
) -> bytes:
    import av  # imported when audio is first coded: 90 ms a process that never does

    buf = io.BytesIO()
    try:
        with av.open(buf, "w", format=container, container_options=options) as out:
            stream = out.add_stream(codec, rate=SAMPLE_RATE, layout="mono")
            stream.codec_context.bit_rate = BIT_RATE
            for at in range(0, len(pcm), _CHUNK):
                chunk = pcm[at : at + _CHUNK]
                frame = av.AudioFrame(format="s16", layout="mono", samples=len(chunk))
                frame.sample_rate = SAMPLE_RATE
                frame.time_base = Fraction(1, SAMPLE_RATE)
                frame.pts = at
                frame.planes[0].update(chunk.tobytes())
                out.mux(stream.encode(frame))
            out.mux(stream.encode(None))
    except av.FFmpegError as e:
        raise MediaError(f"{codec} encoder failed: {e}", MediaProblem.BAD_REQUEST) from e
    return buf.getvalue()


# -- reading media ----------------------------------------------------------------------------


def inspect_prompt_media(data: bytes) -> PromptMedia:
    """Check prompt media as the platform does and measure it; MediaError says what is wrong."""
    size = len(data)
    if size == 0:
        raise MediaError("prompt media is empty (0 bytes)", MediaProblem.EMPTY)
    if size > MAX_PROMPT_BYTES:
        raise MediaError(
            f"prompt media is {_kib(size)} KB ({size} bytes); the limit is"
            f" {MAX_PROMPT_BYTES // 1024} KB ({MAX_PROMPT_BYTES} bytes)",
            MediaProblem.TOO_LARGE,
        )
    if _is_wav(data):
        return PromptMedia("wav", _wav_seconds(data), size)
    if data.startswith(ASF_GUID):
        _check_asf_size(data)
        decoded = _pyav_decode(data, "asf", "WMA")
        if decoded.video or decoded.codec not in WMA_CODECS:
            what = "video (WMV)" if decoded.video else f"{decoded.codec} audio"
            raise MediaError(
                f"not WAV or WMA: an ASF file holding {what}", MediaProblem.NOT_WAV_OR_WMA
            )
        return PromptMedia("wma", decoded.seconds, size)
    raise MediaError(
        f"not WAV or WMA: looks like {_looks_like(data)} (first bytes {_first_bytes(data)})",
        MediaProblem.NOT_WAV_OR_WMA,
    )


def decode_duration(data: bytes) -> float:
    """The real duration in seconds of WAV, WMA or MP3 bytes, by decoding them."""
    if _is_wav(data):
        return _wav_seconds(data)
    if data.startswith(ASF_GUID):
        _check_asf_size(data)
        return _pyav_decode(data, "asf", "WMA").seconds
    if _is_mp3(data):
        return _pyav_decode(data, "mp3", "MP3").seconds
    raise MediaError(
        f"not WAV, WMA or MP3: looks like {_looks_like(data)} (first bytes {_first_bytes(data)})",
        MediaProblem.UNKNOWN_FORMAT,
    )


def decode_samples(data: bytes, max_seconds: float) -> array.array[int]:
    """At most ``max_seconds`` of WAV or WMA bytes as 16 kHz mono samples (for recognition)."""
    if _is_wav(data):
        with contextlib.suppress(wave.Error, EOFError, ValueError):
            return wav_mono(data, max_seconds)  # PCM: stdlib; mu-law and the rest: FFmpeg
    import av

    out, limit = array.array("h"), round(max_seconds * SAMPLE_RATE)
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    try:
        with av.open(io.BytesIO(data), "r", metadata_errors="replace") as inp:
            for frame in inp.decode(inp.streams.audio[0]):
                for got in resampler.resample(frame):
                    out.frombytes(bytes(got.planes[0])[: 2 * got.samples])
                if len(out) >= limit:
                    break
    except (av.FFmpegError, ValueError, OSError, EOFError, IndexError, UnicodeError) as e:
        raise MediaError(f"cannot decode the audio: {_why(e)}") from e
    return out[:limit]  # FFmpeg's s16 is in native byte order, as array's


def _is_wav(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WAVE"


def _is_mp3(data: bytes) -> bool:
    if data.startswith(b"ID3"):
        return True
    return len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06 != 0


def _wav_seconds(data: bytes) -> float:
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            rate, declared = w.getframerate(), w.getnframes()
            width = w.getsampwidth() * w.getnchannels()
            held = len(w.readframes(declared)) // width
    except wave.Error as e:
        if str(e).startswith("unknown format"):  # not PCM (mu-law, ADPCM, extensible): use FFmpeg
            return _pyav_decode(data, "wav", "WAV").seconds
        raise MediaError(f"corrupt WAV: {e}") from e
    except (
        EOFError,
        struct.error,
        ZeroDivisionError,
        ValueError,
        OverflowError,
        RuntimeError,
    ) as e:
        raise MediaError(f"corrupt WAV: truncated or malformed header ({_why(e)})") from e
    if rate <= 0:
        raise MediaError(f"corrupt WAV: sample rate is {rate}")
    if held < declared:
        raise MediaError(
            f"truncated WAV: the header declares {declared / rate:.3f} s of audio but the file"
            f" holds {held / rate:.3f} s"
        )
    if held == 0:
        raise MediaError("corrupt WAV: it holds no audio")
    return held / rate


_ASF_FILE_PROPERTIES: Final = bytes.fromhex("a1dcab8c47a9cf118ee400c00c205365")


def _check_asf_size(data: bytes) -> None:
    """Compare the file size the ASF File Properties Object declares with the bytes at hand."""
    if len(data) < 30:
        raise MediaError(f"truncated WMA: {len(data)} bytes is shorter than an ASF header")
    header_end = min(len(data), struct.unpack_from("<Q", data, 16)[0])
    at = 30  # Header Object: GUID, size, object count (4 bytes), two reserved bytes
    while at + 24 <= header_end:
        guid, size = data[at : at + 16], struct.unpack_from("<Q", data, at + 16)[0]
        if guid == _ASF_FILE_PROPERTIES and at + 92 <= len(data):
            declared, flags = struct.unpack_from("<Q", data, at + 40)[0], data[at + 88]
            if not flags & 1 and declared > len(data):  # bit 0: broadcast, sizes not known
                raise MediaError(
                    f"truncated WMA: the header declares {declared} bytes but the file has"
                    f" {len(data)}"
                )
            return
        if size < 24:
            break
        at += size


class _Decoded(NamedTuple):
    codec: str  # FFmpeg's canonical codec name: wmav2, mp3, pcm_mulaw...
    seconds: float
    video: bool  # whether the container also holds video


def _pyav_decode(data: bytes, container: str, label: str) -> _Decoded:
    """Decode the first audio stream of ``data`` and measure it."""
    import av

    seconds = Fraction(0)
    try:
        with av.open(io.BytesIO(data), "r", format=container, metadata_errors="replace") as inp:
            if not inp.streams.audio:
                raise MediaError(f"corrupt {label}: no audio stream")
            video = bool(inp.streams.video)
            stream = inp.streams.audio[0]
            context: av.AudioCodecContext | None = stream.codec_context
            if context is None:  # FFmpeg has no decoder for what the header names
                raise MediaError(f"corrupt {label}: its audio codec is unknown")
            codec = context.codec.canonical_name
            for frame in inp.decode(stream):
                if frame.sample_rate > 0:
                    seconds += Fraction(frame.samples, frame.sample_rate)
    except MediaError:
        raise
    except (av.FFmpegError, ValueError, OSError, EOFError, IndexError, UnicodeError) as e:
        raise MediaError(f"corrupt {label}: {_why(e)}") from e
    if seconds <= 0:
        raise MediaError(f"corrupt {label}: it holds no decodable audio")
    return _Decoded(codec, float(seconds), video)


def _looks_like(data: bytes) -> str:
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if _is_mp3(data):
        return "MP3"
    checks = [
        (data.startswith(b"RIFF") and len(data) < 12, "a truncated RIFF header"),
        (
            data.startswith(b"RIFF"),
            f"a RIFF file of type {data[8:12].decode('latin-1')!r}, not WAVE",
        ),
        (data.startswith(b"OggS"), "OGG"),
        (data.startswith(b"fLaC"), "FLAC"),
        (data[4:8] == b"ftyp", "MP4/M4A"),
        (len(data) >= 2 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0, "AAC"),
        (data.startswith(b"#!AMR"), "AMR"),
        (data.startswith((b"FORM",)) and data[8:12] in (b"AIFF", b"AIFC"), "AIFF"),
        (head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")), "HTML"),
        (head.startswith(b"<"), "XML/HTML"),
        (head.startswith((b"{", b"[")), "JSON"),
    ]
    return next((name for hit, name in checks if hit), "unknown")


def _first_bytes(data: bytes) -> str:
    return data[:8].hex(" ")


def _kib(size: int) -> int:
    return -(-size // 1024)


def _why(e: BaseException) -> str:
    import av

    if isinstance(e, av.FFmpegError) and e.strerror:
        return e.strerror[:1].lower() + e.strerror[1:]
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
