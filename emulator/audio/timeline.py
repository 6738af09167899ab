"""A stored call's sounds on one timeline, read from its transcript events (the JSON payloads
the calling session stores; docs/transcripts.md, "What a call records"), never from the calling
package's types.

- ``http.response`` bodies holding a Workflow give each prompt's fields (``voice``, ``culture``,
  ``sayAs``, ``silenceLengthInMilliseconds``, ``value``, ``fileUri``) by the operation id and
  index the engine reports when it plays it (a recognize or record reports its own id);
- ``platform`` events: ``prompt played`` (``at``, ``end``: the prompt's leading silence, then its
  text or file until ``end``, which is where barge-in or a hangup cut it), ``beep played``, and a
  fetched prompt file (``uri``; a WAV blob beside it, when a transcript holds one, is its audio);
- ``caller`` events: ``caller pressed`` (``keys`` at ``times``), ``caller spoke`` (``text``, or
  null for talk, from ``at`` to ``end``).

Every time is clipped to the call; a payload of the wrong shape is skipped, never fatal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from emulator.audio.synth import Speech
from emulator.audio.tones import BEEP_SECONDS, DTMF_SECONDS
from emulator.transcripts.store import StoredEvent

PLATFORM: Final = 0  # the left channel
CALLER: Final = 1  # the right channel

SoundKind = Literal["speech", "file", "placeholder", "beep", "dtmf", "talk"]
_WIRE_VOICES: Final = ("male", "female")


@dataclass(frozen=True, slots=True)
class Segment:
    """One sound of the call: ``kind`` from ``start`` to ``end`` (seconds of virtual time; the
    sound is cut there, or padded with silence) on ``channel``."""

    start: float
    end: float
    channel: int
    kind: SoundKind
    speech: Speech | None = None
    key: str = ""
    audio: bytes | None = None  # a prompt file's WAV
    seed: int = 0


def segments(
    events: Iterable[StoredEvent],
    duration: float,
    blob: Callable[[int], bytes | None] = lambda seq: None,
) -> list[Segment]:
    """The sounds of a call's ``events``, in order of start, within ``[0, duration]``;
    ``blob(seq)`` reads an event's blob (a fetched prompt file's audio)."""
    prompts: dict[tuple[str, int], dict[str, Any]] = {}
    files: dict[str, bytes] = {}
    found: list[Segment] = []
    for event in events:
        payload = event.payload
        kind = payload.get("kind")
        if event.kind == "http.response":
            prompts.update(workflow_prompts(payload.get("body")))
        elif event.kind == "platform" and kind == "prompt played":
            found.extend(prompt_segment(payload, prompts, files))
        elif event.kind == "platform" and kind == "beep played":
            at = _number(payload.get("at"))
            if at is not None:
                found.append(Segment(at, at + BEEP_SECONDS, PLATFORM, "beep"))
        elif event.kind == "platform" and isinstance(uri := payload.get("uri"), str):
            data = blob(event.seq) if event.has_blob else None
            if data:
                files[uri] = data
        elif event.kind == "caller" and kind == "caller pressed":
            found.extend(_keys(payload))
        elif event.kind == "caller" and kind == "caller spoke":
            found.extend(_spoke(payload, event.seq))
    clipped = [_clip(s, duration) for s in found]
    return sorted((s for s in clipped if s is not None), key=lambda s: (s.start, s.channel))


def workflow_prompts(body: object) -> dict[tuple[str, int], dict[str, Any]]:
    """The prompts of a Workflow's JSON text by (operation id, index): a recognize's or a
    record's own prompts under its own id too. Nothing for anything else."""
    if not isinstance(body, str) or '"actions"' not in body:
        return {}
    try:
        document = json.loads(body)
    except ValueError:
        return {}
    actions = document.get("actions") if isinstance(document, dict) else None
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for action in actions if isinstance(actions, list) else ():
        if not isinstance(action, dict):
            continue
        inner = action.get("playPrompt")
        holder = inner if isinstance(inner, dict) else action
        listed = holder.get("prompts")
        for index, prompt in enumerate(listed if isinstance(listed, list) else ()):
            if not isinstance(prompt, dict):
                continue
            for op in (action.get("operationId"), holder.get("operationId")):
                if isinstance(op, str):
                    out[(op, index)] = prompt
    return out


def prompt_segment(
    payload: dict[str, Any],
    prompts: dict[tuple[str, int], dict[str, Any]],
    files: dict[str, bytes],
) -> list[Segment]:
    """The sound of a ``prompt played`` payload (none, or one segment), with the fields of its
    Workflow's prompt (``prompts``) and a file prompt's audio (``files``, by URI)."""
    at, end = _number(payload.get("at")), _number(payload.get("end"))
    op, index = payload.get("operation_id"), payload.get("index")
    if at is None or end is None or end <= at:
        return []
    fields = prompts.get((op, index), {}) if isinstance(op, str) and isinstance(index, int) else {}
    silence = _number(fields.get("silenceLengthInMilliseconds")) or 0.0
    start = at + max(0.0, silence) / 1000.0
    if start >= end:
        return []
    text, uri = payload.get("text"), payload.get("file_uri")
    if isinstance(text, str) and text.strip():
        voice = fields.get("voice")
        say_as, culture = fields.get("sayAs"), fields.get("culture")
        speech = Speech(
            text,
            voice=voice if voice in _WIRE_VOICES else "female",
            say_as=say_as if isinstance(say_as, str) else None,
            culture=culture if isinstance(culture, str) else "en-US",
        )
        return [Segment(start, end, PLATFORM, "speech", speech=speech)]
    if not isinstance(uri, str):
        return []  # a prompt of silence alone
    if uri in files:
        return [Segment(start, end, PLATFORM, "file", audio=files[uri])]
    return [Segment(start, end, PLATFORM, "placeholder")]


def _keys(payload: dict[str, Any]) -> list[Segment]:
    keys, times = payload.get("keys"), payload.get("times")
    if not isinstance(keys, str) or not isinstance(times, list):
        return []
    stamps = [_number(t) for t in times]
    out = []
    for i, (key, at) in enumerate(zip(keys, stamps, strict=False)):
        if at is None:
            continue
        following = stamps[i + 1] if i + 1 < len(stamps) else None
        length = DTMF_SECONDS
        if following is not None and following > at:  # keys closer than a tone: shorter tones
            length = min(length, (following - at) * 0.8)
        out.append(Segment(at, at + length, CALLER, "dtmf", key=key))
    return out


def _spoke(payload: dict[str, Any], seq: int) -> list[Segment]:
    at, end, text = _number(payload.get("at")), _number(payload.get("end")), payload.get("text")
    if at is None or end is None or end <= at:
        return []
    if isinstance(text, str) and text.strip():
        return [Segment(at, end, CALLER, "speech", speech=Speech(text, voice="caller"))]
    return [Segment(at, end, CALLER, "talk", seed=seq)]


def _clip(segment: Segment, duration: float) -> Segment | None:
    start, end = max(0.0, segment.start), min(duration, segment.end)
    if end <= start:
        return None
    if (start, end) == (segment.start, segment.end):
        return segment
    return Segment(start, end, segment.channel, segment.kind, segment.speech, segment.key,
                   segment.audio, segment.seed)  # fmt: skip


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
