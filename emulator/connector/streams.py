"""Streamed replies: what a chunk of a stream says, and the platform's rules on a stream.

A bot streams its answer as ``typing`` activities with an entity ``{"type": "streaminfo",
"streamType": "informative" | "streaming", "streamSequence": N}``; the id the first chunk is
answered with becomes the ``streamId`` every later chunk carries (in its streaminfo entity, or
in ``channelData`` in the older Teams shape); each chunk's text is the whole message so far; a
``message`` whose entity says ``streamType: "final"`` ends the stream. The Python Agents SDK
chooses the stream's id itself on webchat and directline: a first chunk (``streamSequence`` 1)
may carry an id the connector has never seen.

Pure: ``chunk_of`` reads an activity, ``admit`` judges a chunk against the conversation's
streams (raising the platform's answer, with its finding: ``rules.py``, ``CONN-STREAM-*``),
``Stream.add`` keeps an accepted chunk and ``Stream.head`` is what readers see of the stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from emulator.connector.errors import (
    ConnectorError,
    ContentStreamNotAllowed,
    ContentStreamSequenceOrderPreConditionFailed,
    bad_argument,
    with_finding,
)
from emulator.connector.rules import (
    STREAM_CHANNEL,
    STREAM_ENDED,
    STREAM_ENTITY,
    STREAM_ID,
    STREAM_ORDER,
    STREAM_SHRINK,
    STREAM_SIZE,
    STREAM_TIMEOUT,
    stream_finding,
)
from emulator.findings import Rule
from emulator.jsonutil import JSON, JSONObject, kind_of

STREAMING_CHANNELS = frozenset({"msteams", "webchat", "directline", "emulator"})
"""The channels on which a bot may stream (field notes, The Microsoft 365 Agents SDK)."""
STREAM_TYPES = ("informative", "streaming", "final")
STREAM_KEY = "botemuStream"
"""The property of a stream's stored activity that holds the stream (docs/decisions.md,
"A streamed reply is one activity")."""


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """A chunk's text in UTF-8 bytes (a message's size), chunks per stream, and how long a
    stream may last from its first chunk, in seconds."""

    text_bytes: int = 28 * 1024
    chunks: int = 500
    seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class Chunk:
    """What one activity says about its stream."""

    stream_type: str
    sequence: int
    stream_id: str | None
    text: str | None

    @property
    def final(self) -> bool:
        return self.stream_type == "final"


def _refuse(error: ConnectorError, rule: Rule) -> ConnectorError:
    return with_finding(error, stream_finding(rule, error.message))


def _malformed(message: str) -> ConnectorError:
    return _refuse(bad_argument(message), STREAM_ENTITY)


def _streaminfo(activity: Mapping[str, JSON]) -> Mapping[str, JSON] | None:
    entities = activity.get("entities")
    for entity in entities if isinstance(entities, list) else ():
        if isinstance(entity, dict) and str(entity.get("type")).lower() == "streaminfo":
            return entity
    data = activity.get("channelData")
    if isinstance(data, dict) and data.get("streamType") is not None:  # the older Teams shape
        return data
    return None


def _stream_id(activity: Mapping[str, JSON], info: Mapping[str, JSON]) -> JSON:
    """The chunk's ``streamId``: its streaminfo entity's, else ``channelData``'s, else any other
    entity's (the JavaScript SDK writes it into the first entity, whatever its type)."""
    found = info.get("streamId")
    data = activity.get("channelData")
    if found in (None, "") and isinstance(data, dict):
        found = data.get("streamId")
    entities = activity.get("entities")
    for entity in entities if isinstance(entities, list) else ():
        if found not in (None, ""):
            break
        if isinstance(entity, dict):
            found = entity.get("streamId")
    return None if found == "" else found


def chunk_of(activity: Mapping[str, JSON]) -> Chunk | None:
    """The stream ``activity`` is a chunk of, or None when it is no part of one. A malformed
    streaminfo is a BadArgument (``CONN-STREAM-ENTITY``)."""
    info = _streaminfo(activity)
    if info is None:
        return None
    stream_type = info.get("streamType")
    if stream_type not in STREAM_TYPES:
        raise _malformed(f"streamType must be informative, streaming or final, got {stream_type!r}")
    sequence = info.get("streamSequence")
    if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 1:
        raise _malformed(f"streamSequence must be a positive integer, got {kind_of(sequence)} "
                         f"{str(sequence)[:40]}")  # fmt: skip
    stream_id = _stream_id(activity, info)
    if stream_id is not None and not isinstance(stream_id, str):
        raise _malformed(f"streamId must be a string, got {kind_of(stream_id)}")
    wanted = "message" if stream_type == "final" else "typing"
    kind = str(activity.get("type"))
    if kind.lower() != wanted.lower():
        raise _malformed(f"a {stream_type} chunk of a stream is a {wanted} activity, not {kind!r}")
    text = activity.get("text")
    return Chunk(str(stream_type), sequence, stream_id, text if isinstance(text, str) else None)


@dataclass(slots=True)
class Stream:
    """One stream of a conversation: its id, when its first chunk came, every chunk accepted
    (as stored, the final message included), the last sequence and the text streamed so far.
    ``state``: ``open``, ``final``, or ``expired`` (refused for lasting too long)."""

    id: str
    started: float
    chunks: list[JSONObject] = field(default_factory=list)
    last_sequence: int = 0
    text: str = ""
    state: str = "open"

    def add(self, chunk: Chunk, stored: JSONObject) -> None:
        self.chunks.append(stored)
        self.last_sequence = chunk.sequence
        if chunk.stream_type != "informative" and chunk.text is not None:
            self.text = chunk.text
        if chunk.final:
            self.state = "final"

    def head(self) -> JSONObject:
        """What readers see of the stream: its latest chunk (the final message, once it came)
        with the stream under ``STREAM_KEY``: id, state, and every chunk."""
        latest = self.chunks[-1]
        about: JSONObject = {"id": self.id, "state": self.state, "chunks": list(self.chunks)}
        return {**latest, STREAM_KEY: about}


def admit(
    streams: Mapping[str, Stream], chunk: Chunk, *, channel: str, now: float, limits: StreamLimits
) -> Stream | None:
    """The stream ``chunk`` continues, or None when it starts one; raises the platform's answer
    (with its finding) when a rule is broken. An expired stream is marked so."""
    if channel not in STREAMING_CHANNELS:
        raise _refuse(ContentStreamNotAllowed(
            f"Content stream is not allowed: channel {channel!r} does not stream (only "
            f"{', '.join(sorted(STREAMING_CHANNELS))} do)"), STREAM_CHANNEL)  # fmt: skip
    size = len((chunk.text or "").encode("utf-8", "surrogatepass"))
    if size > limits.text_bytes:
        raise _refuse(ContentStreamNotAllowed(
            f"Message size too large: the chunk's text is {size} bytes, over "
            f"{limits.text_bytes}"), STREAM_SIZE)  # fmt: skip
    if chunk.stream_id is None:
        if chunk.sequence > 1:
            raise _refuse(bad_argument(
                f"a later chunk (streamSequence {chunk.sequence}) has no streamId: every chunk "
                "after the first carries the id the first one was answered with"), STREAM_ID)  # fmt: skip
        return None
    stream = streams.get(chunk.stream_id)
    if stream is None:
        if chunk.sequence == 1:  # the bot chose the stream's id itself
            return None
        raise _refuse(bad_argument(
            f"streamId {chunk.stream_id[:80]!r} names no stream of this conversation"), STREAM_ID)  # fmt: skip
    _continues(stream, chunk, now, limits)
    return stream


def _continues(stream: Stream, chunk: Chunk, now: float, limits: StreamLimits) -> None:
    if stream.state == "final":
        raise _refuse(ContentStreamNotAllowed(
            "Content stream is not allowed on an already completed streamed message "
            f"(stream {stream.id})"), STREAM_ENDED)  # fmt: skip
    if stream.state == "expired" or now - stream.started > limits.seconds:
        stream.state = "expired"
        raise _refuse(ContentStreamNotAllowed(
            f"Content stream finished due to exceeded streaming time: stream {stream.id} began "
            f"{now - stream.started:.0f} s ago, over {limits.seconds:g} s"), STREAM_TIMEOUT)  # fmt: skip
    if chunk.sequence <= stream.last_sequence:
        raise _refuse(ContentStreamSequenceOrderPreConditionFailed(
            f"PreCondition failed: streamSequence {chunk.sequence} is not above "
            f"{stream.last_sequence}, the stream's latest; the chunk is ignored"), STREAM_ORDER)  # fmt: skip
    if len(stream.chunks) >= limits.chunks:
        raise _refuse(ContentStreamNotAllowed(
            f"Message size too large: stream {stream.id} has {len(stream.chunks)} chunks, the "
            "most a stream may have"), STREAM_SIZE)  # fmt: skip
    if chunk.stream_type != "informative" and chunk.text is not None:
        if not chunk.text.startswith(stream.text):
            raise _refuse(ContentStreamNotAllowed(
                "Request streamed content should contain the previously streamed content: "
                f"the chunk's text does not start with the {len(stream.text)} characters "
                "streamed so far"), STREAM_SHRINK)  # fmt: skip
