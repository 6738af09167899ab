"""Conversation recordings as scenarios: a ``.transcript`` (a JSON array of activities, as the
platform's emulator, its ``TranscriptLoggerMiddleware`` and ``botemu transcript export --format
transcript`` write it) or a ``.chat`` (the ``chatdown`` format) becomes a conversation
``Scenario`` that ``botemu test`` runs like a YAML one.

The recording's activities are read in order (``transcript_file.py``, ``chatdown.py``) as
``FileActivity`` values, each with its index in the file and its line. Then:

- the user's activities are the scenario's ``messaging`` turns, sent in order: a message (its
  text and value), an event or invoke (name, value, text), a conversationUpdate (its members);
  a user's typing is not sent. The first activity, when it is the user's conversationUpdate, is
  the conversation's opening: botemu opens every conversation with its own (the user and the bot
  join), so it is not sent twice;
- the bot's activities are one ``RepliesInOrder`` expectation: exactly these, in order, each
  compared by type, text, attachments' content types, suggested actions (and, when the recording
  gives them, attachmentLayout and name), everything else masked; typing and trace are skipped on
  both sides, as the platform's transcript test runner skips them.

A turn the recording answers with nothing waits ``QUIET_WAIT`` for the bot instead of the run's
default (a reply that comes later is still caught: the next turn's replies are compared too).

Errors are ``ReplayError`` (line, column, message); ``loader.py`` makes them ``ScenarioError``.
What is read is bounded: ``MAX_REPLAY_BYTES`` of a regular file, ``MAX_ACTIVITIES`` activities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from emulator.inputs import InputError, read_bytes
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.expect_in_order import attachment_types, suggested_actions
from emulator.scenario.judging import short
from emulator.scenario.model import ExpectedReply, RepliesInOrder, Scenario, Turn

REPLAY_SUFFIXES = (".transcript", ".chat")
MAX_REPLAY_BYTES = 4 * 1024 * 1024
"""A recording larger than this is refused (a transcript holds its cards and images inline)."""
MAX_ACTIVITIES = 10_000
"""As many activities as a scenario has turns at most (``build.MAX_STEPS``)."""
IGNORED = ("typing", "trace")
TurnType: TypeAlias = Literal["message", "event", "invoke", "conversationUpdate"]
QUIET_WAIT = 0.5
"""Seconds a turn waits for the bot when the recording has no reply to it."""
_SENT: tuple[TurnType, ...] = ("message", "event", "invoke", "conversationUpdate")


class ReplayError(Exception):
    """A recording cannot be read or is malformed: ``line`` and ``column`` (1-based, None when
    the whole file is meant), ``message`` one line; ``unreadable`` when not read at all."""

    def __init__(
        self, line: int | None, column: int | None, message: str, *, unreadable: bool = False
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message
        self.unreadable = unreadable


@dataclass(frozen=True, slots=True)
class FileActivity:
    """One activity of a recording: who sent it, the activity, its index among the file's
    activities (from 0) and its line (and column) in the file."""

    role: Literal["user", "bot"]
    activity: JSONObject
    index: int
    line: int | None = None
    column: int | None = None


def read_recording(path: Path) -> str:
    """The text of a regular file: UTF-8 (a BOM is allowed), at most ``MAX_REPLAY_BYTES``."""
    try:
        data = read_bytes(path, MAX_REPLAY_BYTES)
    except InputError as e:
        raise ReplayError(None, None, e.message, unreadable=True) from None
    if len(data) > MAX_REPLAY_BYTES:
        limit = f"{MAX_REPLAY_BYTES // (1024 * 1024)} MiB"
        raise ReplayError(None, None, f"larger than {limit}", unreadable=True)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = len(data[data.rfind(b"\n", 0, e.start) + 1 : e.start].decode("utf-8", "replace"))
        message = f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise ReplayError(line, column + 1, message, unreadable=True) from e


def recording_scenario(
    path: Path, activities: Sequence[FileActivity], channel: str | None, tag: str
) -> Scenario:
    """The scenario of a recording's activities (see the module's docstring)."""
    turns: list[Turn] = []
    expected: list[ExpectedReply] = []
    answered: list[int] = []  # how many replies each turn has
    after: str | None = None
    opened = False
    for item in activities:
        kind = item.activity.get("type")
        kind = kind if isinstance(kind, str) else ""
        if kind.lower() in IGNORED:
            continue
        if item.role == "bot":
            expected.append(_expected(item, kind, after))
            if answered:
                answered[-1] += 1
            continue
        if kind.lower() == "conversationupdate" and not turns and not opened:
            opened = True  # the opening: botemu sends its own
            continue
        turns.append(_turn(item, kind))
        answered.append(0)
        after = _described(item, kind)
    if not turns and expected:  # only the opening's answers: open the conversation as a turn
        turns.append(Turn(type="conversationUpdate", line=1))
        answered.append(len(expected))
    waited = [t if n else Turn(t.type, t.text, t.name, t.value, QUIET_WAIT, t.line)
              for t, n in zip(turns, answered, strict=True)]  # fmt: skip
    return Scenario(
        name=path.name,
        description=f"a replay of {path}: the user's activities sent in order, the bot's "
        "expected in order",
        tags=("replay", tag),
        channel=channel,
        messaging=tuple(waited),
        expect=(RepliesInOrder(tuple(expected), line=1),),
        path=path,
        line=1,
    )


def _turn(item: FileActivity, kind: str) -> Turn:
    activity = item.activity
    canonical = next((k for k in _SENT if k.lower() == kind.lower()), None)
    where = f"activity #{item.index}"
    if canonical is None:
        raise ReplayError(item.line, item.column, f"{where}: a user's {kind or 'untyped'} activity "
                          "cannot be sent: botemu sends a user's message, event, invoke and "
                          "conversationUpdate")  # fmt: skip
    if activity.get("attachments"):
        raise ReplayError(item.line, item.column, f"{where}: a user's attachments cannot be "
                          "sent: botemu sends the text, name and value of a user's activity")  # fmt: skip
    text, name = activity.get("text"), activity.get("name")
    value: JSON = activity.get("value")
    if canonical == "conversationUpdate":
        members: JSONObject = {k: activity[k] for k in ("membersAdded", "membersRemoved")
                               if k in activity}  # fmt: skip
        value = members or None
        text = name = None
    return Turn(
        type=canonical,
        text=text if isinstance(text, str) else None,
        name=name if isinstance(name, str) else None,
        value=value,
        line=item.line,
    )


def _expected(item: FileActivity, kind: str, after: str | None) -> ExpectedReply:
    activity = item.activity
    text, layout, name = (
        activity.get("text"),
        activity.get("attachmentLayout"),
        activity.get("name"),
    )
    return ExpectedReply(
        type=kind or "message",
        text=text if isinstance(text, str) else None,
        attachments=attachment_types(activity),
        layout=layout if isinstance(layout, str) and layout else None,
        suggested_actions=suggested_actions(activity),
        name=name if isinstance(name, str) else None,
        activity=item.index,
        after=after,
        line=item.line,
    )


def _described(item: FileActivity, kind: str) -> str:
    text, name = item.activity.get("text"), item.activity.get("name")
    if isinstance(text, str) and text:
        return f"user activity #{item.index} {short(text, 40)!r}"
    label = f" {name}" if isinstance(name, str) else ""
    return f"user activity #{item.index} ({kind}{label})"
