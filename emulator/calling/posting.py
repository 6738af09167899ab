"""Sending the platform's requests of one call: the headers (with a Bearer token when a token
source is set), the JSON posts, and a record result with its audio as multipart; through the
fault injector when the scenario sets faults. No I/O: the token is a ``Token`` effect, the
recording's encoding a ``Compute`` effect, and each attempt a ``Post`` effect of the deliverer.
"""

from __future__ import annotations

import random

from emulator.calling import exchange_rules as X
from emulator.calling.calllog import CallLog
from emulator.calling.delivery import Deliverer, Delivery
from emulator.calling.effects import Compute, Steps, Token
from emulator.calling.events import RecordingMade
from emulator.calling.faults import Injector
from emulator.calling.judging import JSON_TYPE
from emulator.calling.media import CONTENT_TYPES, encode_recording
from emulator.calling.model import RecordOutcome
from emulator.calling.outgoing import (
    multipart_body,
    recording_cut,
    recording_event,
    request_headers,
)
from emulator.calling.speech import Sound, SpeechSpan, spoken_words
from emulator.calling.tokens import TokenUnavailable
from emulator.ids import new_id
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import EventKind

MAX_CLIPS = 2
"""A live call keeps the microphone's audio of its last two holds (each at most 2 minutes)."""


class Poster:
    """Posts one call's messages: each gets a fresh message id, the call's chain id and, when
    the call has a token source (``tokens``), a Bearer token; ``injector`` (faults) or
    ``deliverer`` delivers it."""

    def __init__(
        self,
        log: CallLog,
        deliverer: Deliverer,
        injector: Injector | None,
        *,
        tokens: bool,
        chain_id: str,
        rng: random.Random,
    ) -> None:
        self.log = log
        self.deliverer = deliverer
        self.injector = injector
        self.tokens = tokens
        self.chain_id = chain_id
        self.rng = rng
        """The call's seeded generator: a recording's audio draws its seed from it."""
        self.clips: list[tuple[float, Sound]] = []
        """A live caller's microphone audio, by the virtual time its talk began (the last
        ``MAX_CLIPS``): a recording's talk that began then sounds as it."""

    def keep(self, at: float, sound: Sound) -> None:
        """Keep the microphone's audio of a talk that began at ``at``, for its recording (in
        place of what was kept for that moment before)."""
        others = [(begun, kept) for begun, kept in self.clips if abs(begun - at) > 1e-9]
        self.clips = [*others[-(MAX_CLIPS - 1) :], (at, sound)]

    def heard(self, recording: RecordingMade) -> tuple[tuple[float, float], ...]:
        """The recording's speech spans, each talk with the microphone's audio when a live
        caller held to talk it."""
        spans: list[tuple[float, float]] = []
        for span in recording.speech:
            begun = recording.at + span[0]
            sound = next((s for at, s in self.clips if abs(at - begun) < 1e-3), None)
            talk = sound is not None and spoken_words(span) is None
            spans.append(SpeechSpan(span, None, sound) if talk else span)
        return tuple(spans)

    def headers(self, content_type: str, message_id: str) -> Steps[dict[str, str]]:
        headers = request_headers(content_type, self.chain_id, message_id)
        if self.tokens:
            token = yield Token()
            if isinstance(token, TokenUnavailable):
                self.log.record(EventKind.NOTE, {"summary": f"sent without a token: {token}"})
            else:
                headers["Authorization"] = f"Bearer {token}"
        return headers

    def post(
        self, url: str, body: bytes, label: str, meta: JSONObject | None = None
    ) -> Steps[Delivery]:
        """Deliver one request. ``meta``: more to record with each attempt (the result as the
        platform made it, when a fault changed its bytes)."""
        message_id = new_id()
        headers = yield from self.headers(JSON_TYPE, message_id)
        return (yield from self.deliver(url, body, headers, label, message_id, meta=meta))

    def post_recording(
        self,
        url: str,
        json_body: bytes,
        outcome: RecordOutcome,
        recording: RecordingMade,
        label: str,
        meta: JSONObject | None = None,
    ) -> Steps[Delivery]:
        """Deliver a record result with its audio, encoded now, as two multipart parts."""
        fmt = recording.format
        audio: bytes = yield Compute(
            encode_recording, (fmt, outcome.length_of_recording_in_secs, self.heard(recording)),
            {"seed": self.rng.getrandbits(32)},
        )  # fmt: skip
        self.log.record(EventKind.PLATFORM, recording_event(outcome, fmt, len(audio)), audio)
        cut = recording_cut(outcome, fmt, len(audio))
        if cut is not None:
            self.log.found(X.CALL_RECORDING_OVER_1MIB, f"recordedAudio ({outcome.id})", cut)
        message_id = new_id()
        boundary = f"botemu-{message_id}"
        body = multipart_body(boundary, json_body, audio, CONTENT_TYPES[fmt])
        parts: JSONObject = {
            "conversationResult": json_body.decode("utf-8"),
            "recordedAudio": {"content_type": CONTENT_TYPES[fmt], "bytes": len(audio)},
        }
        headers = yield from self.headers(f"multipart/form-data; boundary={boundary}", message_id)
        return (yield from self.deliver(url, body, headers, label, message_id, parts=parts,
                                        meta=meta))  # fmt: skip

    def deliver(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        label: str,
        message_id: str,
        *,
        parts: JSONObject | None = None,
        meta: JSONObject | None = None,
    ) -> Steps[Delivery]:
        if self.injector is not None:
            return (yield from self.injector.post(
                url, body, headers, label=label, message_id=message_id, parts=parts, meta=meta
            ))  # fmt: skip
        return (yield from self.deliverer.post(
            url, body, headers, label=label, message_id=message_id, parts=parts, meta=meta
        ))  # fmt: skip
