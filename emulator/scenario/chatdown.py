"""Reading a ``.chat`` file (the ``chatdown`` format) into the activities chatdown makes of it.

The format, as chatdown reads it:

- **Header**: the first lines may be ``user=Joe`` (or ``users=Joe,Fred``), ``bot=LulaBot`` and
  ``channelId=...``; the header ends at the first other line.
- **Conversation**: a line starting ``user:``, ``bot:``, a user's or the bot's name (``Joe:``,
  ``LulaBot:``, ignoring case) or ``bot->Joe:`` starts an activity of that speaker; the lines
  after it, up to the next such line, continue it (a message's text is every line, trimmed).
- **Commands** in square brackets (one may span lines) make more of it: ``[Typing]`` a typing
  activity, ``[Delay=3000]`` a pause (timing only), ``[ConversationUpdate=MembersAdded=Sam]``
  (``MembersRemoved``, ``Added``, ``Removed``) a conversationUpdate; ``[Attachment=path type]``
  an attachment (``type`` a content type or one of chatdown's shortcuts: ``hero``,
  ``adaptivecard``, ...; without one, from the path's extension), ``[AttachmentLayout=carousel]``
  (or ``list``), ``[Suggestions=Yes|No]`` suggested actions (imBack), and the cards
  ``[HeroCard ...]``, ``[ThumbnailCard ...]``, ``[AnimationCard ...]``, ``[AudioCard ...]``,
  ``[VideoCard ...]``, ``[MediaCard ...]``, ``[SigninCard ...]``, ``[OAuthCard ...]`` (a
  ``[ReceiptCard ...]`` makes nothing, as in chatdown). botemu also reads ``[AdaptiveCard=path]``
  as an adaptive card. Any other bracketed text is text (``[1]``, a markdown link).
- chatdown begins every conversation with a conversationUpdate (activity #0).

Unlike chatdown, nothing is fetched or read for an attachment: only its content type is
compared, so an attachment whose type cannot be told from its path must say it. A malformed
file is a ``ReplayError`` at its line: a header option that is not ``name=value``, text before
the first speaker, a command that is never closed, a layout, delay or conversationUpdate member
chatdown cannot read, an attachment without a path or a type, an unknown ``channelId``.
"""

from __future__ import annotations

import mimetypes
import re
from urllib.parse import urlsplit

from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.replay_files import MAX_ACTIVITIES, FileActivity, ReplayError

_HEADER = re.compile(r"^(bot|user|users|channelId)=")
_COMMAND = re.compile(r"\[([\s\S]*?)\]")
_OPENED = re.compile(r"\[\s*([A-Za-z]+)")
_CARD = "application/vnd.microsoft.card."
SHORTCUTS = {k: _CARD + v for k, v in (
    ("animation", "animation"), ("audio", "audio"), ("hero", "hero"), ("receipt", "receipt"),
    ("thumbnail", "thumbnail"), ("signin", "signin"), ("oauth", "oauth"), ("media", "media"),
    ("video", "video"), ("adaptivecard", "adaptive"))}  # fmt: skip
"""chatdown's content type shortcuts."""
CARDS = {f"{k}card": _CARD + k for k in (
    "hero", "thumbnail", "animation", "media", "audio", "video", "signin", "oauth")}  # fmt: skip
CARDS["adaptivecard"] = _CARD + "adaptive"
TYPES = {t.lower(): t for t in (
    "message", "contactRelationUpdate", "conversationUpdate", "typing", "ping",
    "endOfConversation", "event", "invoke", "deleteUserData", "messageUpdate", "messageDelete",
    "installationUpdate", "messageReaction", "suggestion")}  # fmt: skip
FIELDS = {"attachment", "attachmentlayout", "suggestions", "receiptcard", *CARDS}
KNOWN = {*TYPES, *FIELDS, "delay"}
_MIME = mimetypes.MimeTypes()  # the built-in table only: the same on every machine


def parse_chat(text: str) -> tuple[list[FileActivity], str | None]:
    """The activities of a ``.chat`` text, and the channel its header names (None: the
    default). Raises ``ReplayError``."""
    return _Chat(text).read()


class _Chat:
    def __init__(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").split("\n")
        self.users: list[str] = []
        self.bot = "bot"
        self.channel: str | None = None
        self.speaker: re.Pattern[str] | None = None
        self.out: list[FileActivity] = []

    def read(self) -> tuple[list[FileActivity], str | None]:
        number = next((i for i, line in enumerate(self.lines) if line.strip()), len(self.lines))
        while number < len(self.lines) and _HEADER.match(self.lines[number]):
            self._option(self.lines[number], number + 1)
            number += 1
        self._start()
        role: str | None = None
        start, block = 0, ""
        for at in range(number, len(self.lines)):
            line = self.lines[at]
            assert self.speaker is not None
            match = self.speaker.match(line)
            if match is None:
                if role is None and line.strip():
                    raise ReplayError(at + 1, 1, "expected 'user:' or 'bot:' (or a name the "
                                      f"header gives) to start the conversation, got {line[:40]!r}")  # fmt: skip
                block += line + "\n"
                continue
            if role is not None:
                _Block(self, role, start, block).read()
            name = match.group(1).lower()
            role = "bot" if name in ("bot", self.bot.lower()) else "user"
            start, block = at + 1, line[match.end() :].strip() + "\n"
        if role is not None:
            _Block(self, role, start, block).read()
        if len(self.out) <= 1:
            raise ReplayError(1, 1, "no conversation: expected lines that start with 'user:' "
                              "or 'bot:'")  # fmt: skip
        return self.out, self.channel

    def _option(self, line: str, number: int) -> None:
        name, *values = line.strip().split("=")
        if len(values) != 1:
            raise ReplayError(number, 1, f"malformed header option {line.strip()[:40]!r}: "
                              "write name=value")  # fmt: skip
        value = values[0].strip()
        if name in ("user", "users"):
            self.users = [u.strip() for u in value.split(",") if u.strip()]
        elif name == "bot":
            self.bot = value or "bot"
        else:
            from emulator.channels import CHANNELS

            if value not in CHANNELS:
                raise ReplayError(number, len(name) + 2, f"channelId {value!r}: botemu's "
                                  f"channels are {', '.join(CHANNELS)}")  # fmt: skip
            self.channel = value

    def _start(self) -> None:
        self.users = self.users or ["user"]
        names = "|".join(re.escape(n) for n in (*self.users, self.bot, "bot", "user"))
        users = "|".join(re.escape(n) for n in self.users)
        self.speaker = re.compile(rf"^({names})(?:->({users}))?:", re.IGNORECASE)
        bot: JSONObject = {"id": self.bot, "name": self.bot, "role": "bot"}
        self.emit("user", {"type": "conversationUpdate", "membersAdded": [bot],
                           "membersRemoved": []}, None)  # fmt: skip

    def emit(self, role: str, activity: JSONObject, line: int | None) -> None:
        if len(self.out) >= MAX_ACTIVITIES:
            raise ReplayError(line, 1, f"more than {MAX_ACTIVITIES} activities: split the file")
        index, column = len(self.out), 1 if line else None
        if role == "bot":
            self.out.append(FileActivity("bot", activity, index, line, column))
        else:
            self.out.append(FileActivity("user", activity, index, line, column))


class _Block:
    """The text of one speaker's turn, from its ``speaker:`` line to the next."""

    def __init__(self, chat: _Chat, role: str, line: int, text: str) -> None:
        self.chat, self.role, self.line, self.text = chat, role, line, text

    def read(self) -> None:
        """chatdown's ``readCommandsFromAggregate``: commands, in order, then the text left."""
        rest = self.text
        current: JSONObject = {"type": "message", "text": ""}
        while (match := _COMMAND.search(rest)) is not None:
            body = match.group(1)
            first = body.split("\n")[0]
            split = first.find("=")
            key = (first[:split] if split > 0 else first).strip().lower()
            value = first[split + 1 :].strip() if split > 0 else None
            if "\n" in body:
                value = body[body.index("\n") + 1 :]
            if key not in KNOWN:  # not a command: text
                current["text"] = str(current["text"]) + rest[: match.end()]
                rest = rest[match.end() :]
                continue
            if key in TYPES:
                before = rest[: match.start()].strip()
                if before:
                    current["text"] = before
                    self.chat.emit(self.role, current, self.line)
                    current = {"type": "message", "text": ""}
                rest = rest[match.start() :]
                self._activity(key, value, body)
            elif key == "delay":
                if value is None or not value.strip().isdigit():
                    raise ReplayError(self._at(body), 1, f"[{first.strip()}]: a delay is a "
                                      "number of milliseconds: [Delay=3000]")  # fmt: skip
            else:
                self._field(current, key, value, body)
            rest = rest.replace(f"[{body}]", "", 1)
        self._unclosed(rest)
        current["text"] = str(current["text"]) + rest.strip()
        suggested = current.get("suggestedActions")
        if current["text"] or current.get("attachments") or suggested:
            self.chat.emit(self.role, current, self.line)

    def _activity(self, key: str, value: str | None, body: str) -> None:
        if key == "typing":
            self.chat.emit(self.role, {"type": "typing"}, self.line)
        elif key == "conversationupdate":
            self.chat.emit("user", self._update(value or "", body), self.line)

    def _update(self, value: str, body: str) -> JSONObject:
        update: JSONObject = {"type": "conversationUpdate", "membersAdded": [],
                              "membersRemoved": []}  # fmt: skip
        for line in value.split("\n"):
            if not line.strip():
                continue
            name, _, names = line.partition("=")
            key = {"added": "membersAdded", "membersadded": "membersAdded", "removed":
                   "membersRemoved", "membersremoved": "membersRemoved"}.get(name.strip().lower())  # fmt: skip
            if key is None:
                raise ReplayError(self._at(body), 1, f"unknown ConversationUpdate property "
                                  f"{name.strip()[:40]!r}: use MembersAdded= or MembersRemoved=")  # fmt: skip
            members: list[JSON] = [{"id": n.strip(), "name": n.strip()}
                                   for n in names.split(",") if n.strip()]  # fmt: skip
            update[key] = members
        return update

    def _field(self, current: JSONObject, key: str, value: str | None, body: str) -> None:
        if key == "attachment":
            _attach(current, self._content_type(value, body))
        elif key == "attachmentlayout":
            layout = (value or "").strip().lower()
            if layout not in ("carousel", "list"):
                raise ReplayError(self._at(body), 1, f"AttachmentLayout {value!r} is not "
                                  "carousel or list")  # fmt: skip
            current["attachmentLayout"] = layout
        elif key == "suggestions":
            titles = [t.strip() for t in (value or "").split("|")]
            current["suggestedActions"] = {"actions": [
                {"type": "imBack", "title": t, "value": t} for t in titles]}  # fmt: skip
        elif key in CARDS:
            _attach(current, CARDS[key])

    def _content_type(self, value: str | None, body: str) -> str:
        parts = (value or "").split()
        if not parts:
            raise ReplayError(self._at(body), 1, "an attachment needs a path or URL: "
                              "[Attachment=card.json adaptivecard]")  # fmt: skip
        given = parts[1].strip("'\"").lower() if len(parts) > 1 else None
        if given:
            return SHORTCUTS.get(given, given)
        guessed, _ = _MIME.guess_type(urlsplit(parts[0]).path or parts[0])
        if guessed is None:
            raise ReplayError(self._at(body), 1, f"the content type of {parts[0][:60]!r} "
                              f"cannot be told from its name: give it, [Attachment={parts[0][:60]} "
                              "image/png] (or a shortcut: hero, adaptivecard, ...)")  # fmt: skip
        return guessed

    def _unclosed(self, rest: str) -> None:
        for match in _OPENED.finditer(rest):
            if match.group(1).lower() in KNOWN and "]" not in rest[match.end() :]:
                found = self.text.find(match.group(0))
                line = self.line + self.text.count("\n", 0, found) if found >= 0 else self.line
                raise ReplayError(line, 1, f"[{match.group(1)} is never closed: end it with ]")

    def _at(self, body: str) -> int:
        """The line of the command ``body`` in the file (the speaker's line when not found)."""
        found = self.text.find("[" + body)
        return self.line + self.text.count("\n", 0, found) if found >= 0 else self.line


def _attach(activity: JSONObject, content_type: str) -> None:
    attachments = activity.get("attachments")
    if not isinstance(attachments, list):
        attachments = activity["attachments"] = []
    attachments.append({"contentType": content_type})
