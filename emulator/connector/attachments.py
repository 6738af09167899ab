"""Attachments: an uploaded attachment with its decoded views, the check of AttachmentData, and
the state's operations on attachments (upload, info, views).

Pure: the checks raise the domain errors of ``errors.py`` (BadArgument, MissingProperty);
``AttachmentOps`` is a part of ``models.ConnectorState``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass

from emulator.connector.bodies import optional
from emulator.connector.errors import MessageSizeTooBig, bad_argument, missing_property, not_found
from emulator.connector.state import StateCore
from emulator.jsonutil import JSON, JSONObject, kind_of

UNTYPED_ATTACHMENT = "application/octet-stream"
"""The Content-Type of an attachment uploaded without ``type``."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """An uploaded attachment: its views (``original``, ``thumbnail``) hold the decoded bytes."""

    id: str
    conversation_id: str
    type: str
    name: str | None
    views: Mapping[str, bytes]

    def info(self) -> JSONObject:
        """The wire AttachmentInfo: ``{name, type, views: [{viewId, size}]}``."""
        views: list[JSON] = [{"viewId": v, "size": len(data)} for v, data in self.views.items()]
        return {"name": self.name, "type": self.type, "views": views}


def check_attachment_data(value: object) -> tuple[str, str | None, dict[str, tuple[str, str]]]:
    """Check AttachmentData; return its type, name and views: ``{view: (path, base64 text)}``.

    ``type`` is served back as the views' Content-Type, so it may not hold control characters;
    without it the views are ``application/octet-stream`` (the real service answers such an
    upload with 200 and an id, in the SDK's own recordings). At least one of
    ``originalBase64`` / ``thumbnailBase64`` is required."""
    if not isinstance(value, Mapping):
        raise bad_argument(f"AttachmentData must be an object, got {kind_of(value)}")
    content_type = value.get("type")
    if content_type is None:
        content_type = UNTYPED_ATTACHMENT
    if not isinstance(content_type, str) or not content_type.strip():
        raise bad_argument(f"$.type must be a non-empty string, got {kind_of(content_type)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in content_type):
        raise bad_argument("$.type must not contain control characters")
    name = optional(value, "name", str)
    views: dict[str, tuple[str, str]] = {}
    for view, key in (("original", "originalBase64"), ("thumbnail", "thumbnailBase64")):
        text = optional(value, key, str)
        if text is not None:
            views[view] = (f"$.{key}", text)
    if not views:
        raise missing_property("$.originalBase64", "$.originalBase64 is required")
    return content_type, name, views


def decode_views(encoded: Mapping[str, tuple[str, str]]) -> dict[str, bytes]:
    """The views of ``check_attachment_data`` decoded: ``{view: bytes}``; BadArgument for a view
    that is not base64."""
    views: dict[str, bytes] = {}
    for view, (path, text) in encoded.items():
        try:
            views[view] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as e:
            raise bad_argument(f"{path} is not base64: {e}") from e
    return views


class AttachmentOps(StateCore):
    """The operations of ``ConnectorState`` on uploaded attachments. An attachment belongs to the
    conversation it was uploaded to, and goes with it."""

    _attachments: dict[str, Attachment]
    """Every attachment by id (``ConnectorState.__init__`` makes it)."""
    _attachment_bytes: dict[str, int]
    """Bytes of the stored attachments of each bot's conversations (by app id)."""
    attachment_limits = (256 * 1024 * 1024, 64 * 1024 * 1024)
    """Bytes of stored attachments at most: every bot together, and one bot
    (``MemoryLimits.attachment_bytes``, ``attachment_bytes_per_bot``)."""

    def upload_attachment(
        self, conversation_id: str, data: Mapping[str, JSON], *, bot: str | None = None
    ) -> str:
        """Store AttachmentData (base64 views decoded); return the attachment id."""
        conversation = self.conversation(conversation_id, bot=bot)
        content_type, name, encoded = check_attachment_data(data)
        views = decode_views(encoded)
        size = sum(len(data) for data in views.values())
        self._admit_bytes(conversation.bot_app_id, size)
        attachment = Attachment(
            self._new_id(self._attachments), conversation.id, content_type, name, views
        )
        self._attachments[attachment.id] = attachment
        owner = conversation.bot_app_id
        self._attachment_bytes[owner] = self._attachment_bytes.get(owner, 0) + size
        return attachment.id

    def attachment_room(self, bot_app_id: str) -> int:
        """Bytes the bot ``bot_app_id`` may still store as attachments (0: none)."""
        total, per_bot = self.attachment_limits
        held = self._attachment_bytes.get(bot_app_id, 0)
        return max(0, min(total - sum(self._attachment_bytes.values()), per_bot - held))

    def _admit_bytes(self, bot_app_id: str, size: int) -> None:
        """MessageSizeTooBig (413) when storing ``size`` more bytes of the bot's attachments
        would pass a limit of ``attachment_limits``."""
        total, per_bot = self.attachment_limits
        held = self._attachment_bytes.get(bot_app_id, 0)
        everyone = sum(self._attachment_bytes.values())
        if held + size > per_bot:
            raise MessageSizeTooBig(
                f"the attachments of bot {bot_app_id!r} would take {held + size} bytes, over "
                f"the limit of {per_bot} bytes per bot (botemu serve --max-attachments-per-bot-"
                "mib; POST /_botemu/reset frees them)", limit=per_bot)  # fmt: skip
        if everyone + size > total:
            raise MessageSizeTooBig(
                f"stored attachments would take {everyone + size} bytes, over the limit of "
                f"{total} bytes for every bot together (botemu serve --max-attachments-mib; "
                "POST /_botemu/reset frees them)", limit=total)  # fmt: skip

    def attachment(self, attachment_id: str, *, bot: str | None = None) -> Attachment:
        found = self._attachments.get(attachment_id)
        if found is None or found.conversation_id not in self._conversations:
            raise not_found(f"no attachment {attachment_id!r}")
        self.conversation(found.conversation_id, bot=bot)
        return found

    def attachment_info(self, attachment_id: str, *, bot: str | None = None) -> JSONObject:
        return self.attachment(attachment_id, bot=bot).info()

    def attachment_view(
        self, attachment_id: str, view_id: str, *, bot: str | None = None
    ) -> tuple[bytes, str]:
        """The bytes of one view and the content type they were uploaded with."""
        attachment = self.attachment(attachment_id, bot=bot)
        if view_id not in attachment.views:
            raise not_found(f"attachment {attachment_id!r} has no view {view_id!r}")
        return attachment.views[view_id], attachment.type

    def attachment_conversation(self, attachment_id: str) -> str | None:
        """The conversation an attachment was uploaded to, or None: never raises."""
        found = self._attachments.get(attachment_id)
        return None if found is None else found.conversation_id
