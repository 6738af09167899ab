"""Activities: the types the connector knows, the check of an Activity body, and the state's
operations on activities (send, reply, update, delete, upload history).

Pure: ``check_activity`` returns a deep copy of the activity and the warnings about it, or raises
the domain errors of ``errors.py`` (BadArgument, MissingProperty); ``ActivityOps`` is a part of
``models.ConnectorState``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from emulator.connector.bodies import copies
from emulator.connector.conversations import DEFAULT_CHANNEL, Conversation
from emulator.connector.errors import ConnectorError, bad_argument, missing_property
from emulator.connector.state import StateCore
from emulator.connector.streams import Chunk, Stream, StreamLimits, admit, chunk_of
from emulator.jsonutil import JSON, JSONObject, copy_object, kind_of

CHANNEL_ID = DEFAULT_CHANNEL
"""The ``channelId`` of a conversation that names none (each conversation has its own)."""
ACTIVITY_TYPES = tuple(
    "message event invoke messageReaction endOfConversation handoff typing conversationUpdate"
    " trace installationUpdate contactRelationUpdate suggestion deleteUserData messageUpdate"
    " messageDelete".split()
)
"""The activity types of spec section Events, "Activities through the connector"."""
_BY_LOWER = {t.lower(): t for t in ACTIVITY_TYPES}
_STRINGS = tuple(
    "id text speak name locale textFormat inputHint replyToId attachmentLayout summary"
    " topicName timestamp localTimestamp".split()
)
_OBJECTS = tuple("from recipient conversation suggestedActions relatesTo".split())
_ARRAYS = tuple(
    "attachments entities membersAdded membersRemoved reactionsAdded reactionsRemoved".split()
)
_CONTENT = ("text", "speak", "attachments", "suggestedActions", "channelData", "value")
"""A message with none of these (non-empty) is empty: accepted, with a warning."""


def check_activity(value: object, path: str = "$") -> tuple[JSONObject, list[str]]:
    """Check an Activity body; return a deep copy of it and the warnings about it.

    Refused (400): not an object or a non-string ``type`` or a mistyped well-known property
    (BadArgument), no ``type`` or an attachment or entity without its ``contentType``/``type``
    (MissingProperty). Accepted with a warning: an unknown type (forward compatibility), a
    known type in another case, an empty message, an event or invoke without ``name``."""
    warnings = activity_warnings(value, path)
    return copy_object(cast(Mapping[str, JSON], value)), warnings


def activity_warnings(value: object, path: str = "$") -> list[str]:
    """``check_activity`` without the copy: the warnings about an activity, or the same error."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise bad_argument(f"{path}: an activity must be a JSON object, got {kind_of(value)}")
    if value.get("type") is None:
        raise missing_property(f"{path}.type", f"{path}.type is required (the activity type)")
    kind = value["type"]
    if not isinstance(kind, str):
        raise bad_argument(f"{path}.type must be a string, got {kind_of(kind)}")
    if not kind.strip():
        raise bad_argument(f"{path}.type must not be empty")
    if type(value) is not dict or not _well_typed(value):
        for name, wanted in _TYPED.items():  # the first mistyped property, in _TYPED's order
            item = value.get(name)
            if item is not None and not isinstance(item, wanted):
                raise bad_argument(f"{path}.{name} must be {_NOUN[wanted]}, got {kind_of(item)}")
    for name in _ACCOUNTS:
        account = value.get(name)
        if account is not None and (type(account) is dict or isinstance(account, Mapping)):
            if not isinstance(account.get("id", ""), str | None):
                raise bad_argument(f"{path}.{name}.id must be a string")
    if "attachments" in value:
        _check_items(value, "attachments", "contentType", path)
    if "entities" in value:
        _check_items(value, "entities", "type", path)
    return _warnings(value, kind)


_ACCOUNTS = ("from", "recipient", "conversation")


_NOUN: dict[object, str] = {str: "a string", Mapping: "an object", list: "an array"}
_TYPED: dict[str, type] = {
    **dict.fromkeys(_STRINGS, str),
    **dict.fromkeys(_OBJECTS, Mapping),
    **dict.fromkeys(_ARRAYS, list),
}
"""The well-known properties and the type each must have when present and not null."""


def _well_typed(activity: dict[str, JSON]) -> bool:
    """Whether every well-known property of ``activity`` present and not null has its type: a
    pass over the properties it has rather than over every name of ``_TYPED``."""
    for name, item in activity.items():
        wanted = _TYPED.get(name)
        if wanted is not None and item is not None and not isinstance(item, wanted):
            return False
    return True


def _check_items(activity: Mapping[str, JSON], name: str, key: str, path: str) -> None:
    items = activity.get(name)
    for i, item in enumerate(items if isinstance(items, list) else ()):
        where = f"{path}.{name}[{i}]"
        if not isinstance(item, Mapping):
            raise bad_argument(f"{where} must be an object, got {kind_of(item)}")
        if item.get(key) is None:
            raise missing_property(f"{where}.{key}")
        if not isinstance(item[key], str):
            raise bad_argument(f"{where}.{key} must be a string, got {kind_of(item[key])}")


def _warnings(activity: Mapping[str, JSON], kind: str) -> list[str]:
    known = _BY_LOWER.get(kind.lower())
    if known is None:
        return [f"unknown activity type {kind!r}: stored and passed on as is"]
    out = [] if known == kind else [f"activity type {kind!r} is written {known!r} in the spec"]
    if known == "message" and not _has_content(activity):
        out.append(
            "an empty message (no text, attachments, suggestedActions, channelData or "
            "value): accepted, but real channels may refuse it or show nothing"
        )
    if known in ("event", "invoke") and not activity.get("name"):
        out.append(f"an {known} without a name: the name selects the task (spec, Events)")
    return out


_EMPTY: tuple[JSON, ...] = (None, "", [], {})


def _has_content(activity: Mapping[str, JSON]) -> bool:
    for name in _CONTENT:
        if activity.get(name) not in _EMPTY:
            return True
    return False


class ActivityOps(StateCore):
    """The operations of ``ConnectorState`` on a conversation's activities."""

    stream_limits = StreamLimits()
    """The bounds of a streamed reply (``streams.StreamLimits``)."""
    activities_kept = 100
    """Activities of one conversation kept in memory, the last ones (``MemoryLimits``); up to a
    quarter more wait between two trims."""

    def post_activity(
        self,
        conversation_id: str,
        activity: Mapping[str, JSON],
        *,
        reply_to: str | None = None,
        from_bot: bool = True,
        bot: str | None = None,
        warnings_out: list[str] | None = None,
        fresh: bool = False,
    ) -> str:
        """Check and store an activity (send, or reply when ``reply_to`` is given); return its id.

        botemu sets ``id``, ``timestamp``, ``serviceUrl``, ``channelId`` and ``conversation``;
        an absent ``from`` becomes the bot (or, for ``from_bot=False``, the first user) and an
        absent ``recipient`` the other party of a 1:1 conversation. ``warnings_out`` receives
        the warnings about the activity as soon as it passed its check (so the transcript need
        not check it again). ``fresh``: ``activity`` was just read from a request body and
        nothing will change it, so it is stored without a deep copy (its values, not itself)."""
        conversation = self.conversation(conversation_id, bot=bot)
        if fresh:
            warnings = activity_warnings(activity)
            checked = dict(activity)
        else:
            checked, warnings = check_activity(activity)
        if warnings_out is not None:
            warnings_out.extend(warnings)
        if reply_to is not None:
            if not conversation.dropped:  # else it may be one of those no longer kept
                conversation.activity(reply_to)
            checked["replyToId"] = reply_to
        chunk = chunk_of(checked) if from_bot else None
        if chunk is not None:
            return self._post_chunk(conversation, checked, chunk, warnings)
        stored = self._stamp(conversation, checked, from_bot=from_bot)
        self._store(conversation, stored, warnings)
        return str(stored["id"])

    def _post_chunk(
        self, conversation: Conversation, checked: JSONObject, chunk: Chunk, warnings: list[str]
    ) -> str:
        """Store a chunk of a streamed reply (``streams.py``): the stream is one activity of
        the conversation, with the stream's id, replaced by each chunk; listeners hear the
        chunk itself. Returns the stream's id, which answers every chunk."""
        now = self._clock()
        try:
            stream = admit(conversation.streams, chunk, channel=conversation.channel_id, now=now,
                           limits=self.stream_limits)  # fmt: skip
        except ConnectorError:
            known = conversation.streams.get(chunk.stream_id or "")
            if known is not None and known.id in conversation.activity_members:
                conversation.activities[conversation.index_of(known.id)] = known.head()  # expired
            raise
        new = stream is None
        if stream is None:
            taken = conversation.activity_members
            given = chunk.stream_id
            stream_id = given if given is not None and given not in taken else self._new_id(taken)
            stream = conversation.streams[stream_id] = Stream(stream_id, now)
        stored = self._stamp(conversation, checked, from_bot=True)
        stored["id"] = stream.id
        stream.add(chunk, stored)
        if new or stream.id not in conversation.activity_members:  # new, or its head deleted
            self._store(conversation, stream.head(), warnings, notice=stored)
        else:
            conversation.activities[conversation.index_of(stream.id)] = stream.head()
            if warnings:
                conversation.warnings.extend(f"activity {stream.id}: {w}" for w in warnings)
            if self._listeners:
                self._notify(conversation.id, stored)
        return stream.id

    def update_activity(
        self,
        conversation_id: str,
        activity_id: str,
        activity: Mapping[str, JSON],
        *,
        bot: str | None = None,
        warnings_out: list[str] | None = None,
    ) -> str:
        """Replace a stored activity, keeping its id, timestamp and (when absent from the new
        one) its ``from``, ``recipient`` and ``replyToId``. Returns the id. ``warnings_out``: as
        for ``post_activity``."""
        conversation = self.conversation(conversation_id, bot=bot)
        checked, warnings = check_activity(activity)
        if warnings_out is not None:
            warnings_out.extend(warnings)
        index = conversation.index_of(activity_id)
        old = conversation.activities[index]
        new = dict(checked)
        for key in ("from", "recipient", "replyToId"):
            if new.get(key) is None and key in old:
                new[key] = old[key]
        new.update(self._envelope(conversation), id=activity_id, timestamp=old.get("timestamp"))
        conversation.activities[index] = new
        conversation.warnings.extend(f"activity {activity_id}: {w}" for w in warnings)
        self._notify(conversation.id, {**new, "type": "messageUpdate"})
        return activity_id

    def delete_activity(
        self, conversation_id: str, activity_id: str, *, bot: str | None = None
    ) -> None:
        conversation = self.conversation(conversation_id, bot=bot)
        del conversation.activities[conversation.index_of(activity_id)]
        conversation.activity_members.pop(activity_id, None)
        notice: JSONObject = {"type": "messageDelete", "id": activity_id}
        notice.update(self._envelope(conversation), timestamp=self._timestamp())
        self._notify(conversation.id, notice)

    def history(
        self, conversation_id: str, transcript: Mapping[str, JSON], *, bot: str | None = None
    ) -> str:
        """``POST .../activities/history``: store past activities as given (their ids must be
        new to the conversation; absent ids and timestamps are assigned). All or nothing.
        Returns a new id for the upload."""
        conversation = self.conversation(conversation_id, bot=bot)
        if not isinstance(transcript, Mapping):
            raise bad_argument(f"a Transcript must be an object, got {kind_of(transcript)}")
        if "activities" not in transcript:
            raise missing_property("$.activities")
        raw = transcript["activities"]
        if not isinstance(raw, list):
            raise bad_argument(f"$.activities must be an array, got {kind_of(raw)}")
        seen = {a.get("id") for a in conversation.activities}
        checked: list[tuple[JSONObject, list[str]]] = []
        for i, item in enumerate(raw):
            activity, warnings = check_activity(item, f"$.activities[{i}]")
            given = activity.get("id")
            if given is not None and given in seen:
                raise bad_argument(f"$.activities[{i}].id {given!r} is already used")
            seen.add(given)
            checked.append((activity, warnings))
        for activity, warnings in checked:
            stored = self._stamp(conversation, activity, from_bot=True, keep=True)
            self._store(conversation, stored, warnings)
        return self._ids()

    def _envelope(self, conversation: Conversation) -> JSONObject:
        return {
            "conversation": conversation.account(),
            "channelId": conversation.channel_id,
            "serviceUrl": self.service_url,
        }

    def _stamp(
        self,
        conversation: Conversation,
        activity: JSONObject,
        *,
        from_bot: bool,
        keep: bool = False,
    ) -> JSONObject:
        """Add the envelope, an id and a timestamp (``keep``: only where the activity has none)."""
        stored = {**activity, **self._envelope(conversation)}
        if not (keep and stored.get("id") is not None):
            # every stored activity has its entry in activity_members (``_store``) until it is
            # deleted: the ids in use, without a pass over the activities
            stored["id"] = self._new_id(conversation.activity_members)
        if not (keep and stored.get("timestamp") is not None):
            stored["timestamp"] = self._timestamp()
        users = conversation.users
        if stored.get("from") is None:
            if not from_bot and not users:
                raise bad_argument(f"conversation {conversation.id} has no user to send as")
            stored["from"] = copy_object(conversation.bot if from_bot else users[0])
        if stored.get("recipient") is None:
            if not from_bot:
                stored["recipient"] = copy_object(conversation.bot)
            elif not conversation.is_group and users:
                stored["recipient"] = copy_object(users[0])
        return stored

    def _store(
        self,
        conversation: Conversation,
        stored: JSONObject,
        warnings: list[str],
        *,
        notice: JSONObject | None = None,
    ) -> None:
        """Append ``stored``; listeners hear it (or ``notice``: a stream's chunk)."""
        conversation.activities.append(stored)
        activity_id = str(stored["id"])
        previous = conversation.members_seen
        if (
            previous is None or previous != conversation.members
        ):  # a copy per change, not per activity
            previous = conversation.members_seen = copies(conversation.members)
        conversation.activity_members[activity_id] = previous
        if warnings:
            conversation.warnings.extend(f"activity {activity_id}: {w}" for w in warnings)
        if len(conversation.activities) > self.activities_kept + self.activities_kept // 4:
            self._forget_oldest(conversation)  # a quarter at a time: not a shift per activity
        if self._listeners:
            self._notify(conversation.id, stored if notice is None else notice)

    def _forget_oldest(self, conversation: Conversation) -> None:
        """Keep the last ``activities_kept`` activities (and as many warnings) in memory: the
        transcript store has every one. Forgotten ones are counted in ``dropped``."""
        excess = len(conversation.activities) - self.activities_kept
        for old in conversation.activities[:excess]:
            old_id = str(old.get("id"))
            conversation.activity_members.pop(old_id, None)
            conversation.streams.pop(old_id, None)
        del conversation.activities[:excess]
        conversation.dropped += excess
        del conversation.warnings[: max(0, len(conversation.warnings) - self.activities_kept)]
