"""A stored call as one stereo WAV track: the platform in the left channel (prompts, beeps), the
caller in the right (keys as DTMF, speech, talk), silence wherever the call was silent, exactly
as long as the call's virtual duration (``calls.vtime``), 16-bit at ``SAMPLE_RATE``.

Each sound fills its segment of the timeline (``emulator.audio.timeline``): audio longer than its
segment is cut at the segment's end with a 10 ms fade (that is where barge-in or a hangup cut a
prompt, and where the engine's timing of a prompt ends), shorter audio is followed by silence.
The track is written in chunks of ``CHUNK_SECONDS``: memory holds one chunk and the sounds that
overlap it, whatever the call's length. A call longer than ``MAX_TRACK_SECONDS`` is refused.
"""

from __future__ import annotations

import array
import contextlib
import os
import tempfile
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from emulator.audio import tones
from emulator.audio.pcm import SAMPLE_RATE, fit, frames, silence, to_le_bytes, wav_mono
from emulator.audio.synth import Synthesizer, engine_seconds
from emulator.audio.timeline import PLATFORM, Segment, segments
from emulator.errors import BotemuError
from emulator.transcripts.store import TranscriptStore

MAX_TRACK_SECONDS: Final = 2 * 3600.0
"""The longest call rendered: two hours of virtual time (about 460 MB of 16 kHz stereo WAV)."""
CHUNK_SECONDS: Final = 10.0


class TrackError(BotemuError):
    """The track cannot be made; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Track:
    """What was rendered: the call, its length, its sounds and what spoke."""

    call_id: str
    seconds: float
    frames: int
    segments: int
    engine: str


def render_call(
    store: TranscriptStore,
    call_id: str,
    output: Path | BinaryIO,
    synthesizer: Synthesizer,
    *,
    max_seconds: float = MAX_TRACK_SECONDS,
) -> Track:
    """Write the track of the stored call ``call_id`` (a full id or a unique prefix) to
    ``output``. ``TrackError`` when there is no such call, it is a conversation, or it is longer
    than ``max_seconds`` of virtual time."""
    summary = store.call(call_id)
    if summary is None:
        raise TrackError(f"no call matches {call_id!r}")
    if summary.kind != "call":
        raise TrackError(f"{summary.id} is a {summary.kind}: only a call has audio")
    events = store.events(summary.id)
    duration = summary.vtime
    if duration is None:
        duration = max((e.vtime for e in events if e.vtime is not None), default=0.0)
    if not 0 <= duration <= max_seconds:
        raise TrackError(
            f"call {summary.id} lasts {duration:.1f} s of virtual time, more than the"
            f" {max_seconds:g} s a track is made for"
        )
    sounds = segments(events, duration, lambda seq: store.blob(summary.id, seq))
    total = write_track(sounds, duration, output, synthesizer)
    return Track(summary.id, duration, total, len(sounds), synthesizer.engine)


def write_track(
    sounds: Sequence[Segment],
    seconds: float,
    output: Path | BinaryIO,
    synthesizer: Synthesizer,
) -> int:
    """Write ``sounds`` on a ``seconds``-long stereo track to ``output``; its frames. A path is
    written whole or not at all (a temporary file beside it, renamed). Raises ``OSError``."""
    if not isinstance(output, Path):
        return _write(sounds, seconds, output, synthesizer)
    fd, temporary = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            total = _write(sounds, seconds, f, synthesizer)
        os.chmod(temporary, 0o644)  # mkstemp made it private; a track is an ordinary file
        os.replace(temporary, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return total


def _write(
    sounds: Sequence[Segment], seconds: float, output: BinaryIO, synthesizer: Synthesizer
) -> int:
    total = frames(seconds)
    chunk = frames(CHUNK_SECONDS)
    pending = sorted(sounds, key=lambda s: s.start)
    next_sound = 0
    active: list[tuple[int, int, int, array.array[int]]] = []  # start, end, channel, samples
    with wave.open(output, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.setnframes(total)
        for begin in range(0, total, chunk):
            stop = min(total, begin + chunk)
            while next_sound < len(pending) and frames(pending[next_sound].start) < stop:
                sound = pending[next_sound]
                next_sound += 1
                a, b = frames(sound.start), min(total, frames(sound.end))
                if b > a:
                    active.append((a, b, sound.channel, fit(render(sound, synthesizer), b - a)))
            channels = (silence_frames(stop - begin), silence_frames(stop - begin))
            for a, b, channel, samples in active:
                lo, hi = max(a, begin), min(b, stop)
                if hi > lo:
                    channels[channel][lo - begin : hi - begin] = samples[lo - a : hi - a]
            active = [entry for entry in active if entry[1] > stop]
            stereo = array.array("h", bytes(4 * (stop - begin)))
            stereo[0::2], stereo[1::2] = channels
            w.writeframes(to_le_bytes(stereo))
    return total


def silence_frames(n: int) -> array.array[int]:
    return array.array("h", bytes(2 * n))


def render(sound: Segment, synthesizer: Synthesizer) -> array.array[int]:
    """The audio of one sound, not yet fitted to its segment."""
    length = sound.end - sound.start
    if sound.kind == "speech" and sound.speech is not None:
        return synthesizer.speak(sound.speech, within=engine_seconds(sound.speech))
    if sound.kind == "dtmf":
        return tones.dtmf(sound.key, length)
    if sound.kind == "beep":
        return tones.beep(min(length, tones.BEEP_SECONDS))
    if sound.kind == "talk":
        return tones.talk(length, low=True, seed=sound.seed)
    if sound.kind == "file" and sound.audio is not None:
        try:
            return wav_mono(sound.audio, length)
        except (wave.Error, EOFError, ValueError):
            pass  # not a PCM WAV this module reads: the placeholder stands for it
    return tones.placeholder(length) if sound.channel == PLATFORM else silence(length)
