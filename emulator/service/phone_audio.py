"""The live phone's loudspeaker: the audio of each prompt of a live call as it begins, for the
page to play (``#/phone``).

When a prompt begins (``live.playing``), ``PromptAudio.frame`` renders it off the event loop:
a text prompt spoken by eSpeak NG with the Workflow's ``voice``, ``sayAs`` and ``culture`` (the
track's synthesis, ``emulator.audio``), a file prompt's own audio (decoded from the bytes the
platform fetched, which a live call keeps in its transcript), tones where neither can be had. It
is sent as one binary WebSocket frame: a 4-byte big-endian length, a JSON header (``op``
``audio``, ``operation_id``, ``index``, ``at``, ``delay``: the prompt's leading silence,
``seconds``, ``source``), then a 16 kHz mono WAV. The page plays it at the call's pace and stops
it where the prompt is cut.

Bounds: a prompt's audio is at most ``MAX_SECONDS`` long; a call renders at most ``MAX_RENDERING``
prompts at once (a prompt that begins while they are busy is not heard, and its text still
shows); a call keeps the audio of at most ``MAX_FILES`` prompt files.
"""

from __future__ import annotations

import json
import struct
from collections import OrderedDict
from typing import Any, Final

from emulator.audio.pcm import SAMPLE_RATE, fit, frames, wav_bytes
from emulator.audio.shared import shared_synthesizer
from emulator.audio.synth import Synthesizer
from emulator.audio.timeline import Segment, prompt_segment, workflow_prompts
from emulator.audio.track import render
from emulator.calling.media import MediaError, decode_samples
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import TranscriptStore

MAX_SECONDS: Final = 60.0
MAX_RENDERING: Final = 2
MAX_FILES: Final = 8


class PromptAudio:
    """What one live call needs to render its prompts: the prompt fields of its last Workflow
    and the prompt files it fetched."""

    def __init__(self, store: TranscriptStore, synthesizer: Synthesizer | None = None) -> None:
        self.store = store
        self.synthesizer = synthesizer
        self.prompts: dict[tuple[str, int], dict[str, Any]] = {}
        self.files: OrderedDict[str, bytes] = OrderedDict()
        self.rendering = 0
        self.seen = 0
        """The last event of the call read for prompt files."""

    def workflow(self, body: object) -> None:
        """A Workflow the bot answered (its JSON text): its prompts are the ones that play."""
        found = workflow_prompts(body)
        if found:
            self.prompts = found

    def fetched(self, call_id: str, uri: str) -> None:
        """The platform fetched the prompt file ``uri`` (the call's transcript holds its bytes,
        for its first files): the events since the last look are read, not the whole call."""
        events = self.store.events(call_id, after=self.seen)
        self.seen = max((e.seq for e in events), default=self.seen)
        for event in reversed(events):
            if event.has_blob and event.payload.get("uri") == uri:
                data = self.store.blob(call_id, event.seq)
                if data:
                    self.files[uri] = data
                    self.files.move_to_end(uri)
                    while len(self.files) > MAX_FILES:
                        self.files.popitem(last=False)
                return

    def segment(self, payload: JSONObject) -> Segment | None:
        """The sound of a prompt as it begins (``live.playing``'s payload), or None (silence)."""
        found = prompt_segment(payload, self.prompts, dict(self.files))
        return found[0] if found else None

    def frame(self, payload: JSONObject, segment: Segment) -> bytes:
        """The binary frame of a prompt's audio (CPU work: run it off the event loop)."""
        length = frames(min(segment.end - segment.start, MAX_SECONDS))
        synthesizer = self.synthesizer or shared_synthesizer()
        source = "tones"
        if segment.kind == "file" and segment.audio is not None:
            try:
                samples, source = decode_samples(segment.audio, MAX_SECONDS), "file"
            except MediaError:
                samples = render(segment, synthesizer)
        else:
            samples = render(segment, synthesizer)
            source = synthesizer.engine if segment.kind == "speech" else source
        samples = fit(samples, length)
        header = json.dumps({
            "op": "audio", "operation_id": payload.get("operation_id"),
            "index": payload.get("index"), "at": payload.get("at"),
            "delay": round(segment.start - float(payload.get("at") or 0.0), 3),  # type: ignore[arg-type]
            "seconds": round(length / SAMPLE_RATE, 3), "source": source,
        }).encode()  # fmt: skip
        return struct.pack(">I", len(header)) + header + wav_bytes(samples)
