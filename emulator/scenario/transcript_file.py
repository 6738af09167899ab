"""Reading a ``.transcript`` file: a JSON array of activities, each with ``type`` and
``from.role`` (``user`` or ``bot``), as the platform's emulator, its ``TranscriptLoggerMiddleware``
and ``botemu transcript export --format transcript`` write them.

Each activity's line is where it starts in the file (``jsonpos.locate_paths``, at C speed), so a
problem with one, and a failed comparison later, names ``file:line``.
"""

from __future__ import annotations

import json

from emulator.jsonpos import NUMBER_TOO_LONG, is_number_too_long, locate_paths, long_number_at
from emulator.jsonutil import JSON, kind_of
from emulator.scenario.replay_files import MAX_ACTIVITIES, FileActivity, ReplayError

ROLES = ("user", "bot")


def parse_transcript(text: str) -> tuple[list[FileActivity], str | None]:
    """The activities of a ``.transcript`` text, and the channel of its user's first activity
    when botemu has that channel (None: the default). Raises ``ReplayError``."""
    data = _decode(text)
    if not isinstance(data, list):
        raise ReplayError(1, 1, "expected a JSON array of activities (a .transcript file), "
                          f"got {kind_of(data)}")  # fmt: skip
    if len(data) > MAX_ACTIVITIES:
        at = locate_paths(text, [f"$[{MAX_ACTIVITIES}]"]).get(f"$[{MAX_ACTIVITIES}]", (1, 1))
        raise ReplayError(*at, f"more than {MAX_ACTIVITIES} activities: split the recording")
    positions = locate_paths(text, [f"$[{i}]" for i in range(len(data))])
    out: list[FileActivity] = []
    for index, activity in enumerate(data):
        line, column = positions.get(f"$[{index}]", (None, None))
        where = f"activity #{index}"
        if not isinstance(activity, dict):
            raise ReplayError(line, column, f"{where}: expected an activity (a JSON object), "
                              f"got {kind_of(activity)}")  # fmt: skip
        kind = activity.get("type")
        if not isinstance(kind, str) or not kind:
            raise ReplayError(line, column, f"{where}: expected 'type' (message, event, ...), "
                              f"got {_got(kind)}")  # fmt: skip
        sender = activity.get("from")
        role = sender.get("role") if isinstance(sender, dict) else None
        if not isinstance(role, str) or role.lower() not in ROLES:
            raise ReplayError(line, column, f"{where}: expected 'from.role' user or bot (who "
                              f"sent it), got {_got(role)}")  # fmt: skip
        out.append(FileActivity("user" if role.lower() == "user" else "bot", activity, index,
                                line, column))  # fmt: skip
    return out, _channel(out)


def _decode(text: str) -> JSON:
    try:
        data: JSON = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReplayError(e.lineno, e.colno, f"not JSON: {e.msg}") from None
    except RecursionError:
        raise ReplayError(None, None, "not a transcript: nested too deeply") from None
    except ValueError as e:
        if is_number_too_long(e):
            line, column = long_number_at(text) or (None, None)
            raise ReplayError(line, column, f"{NUMBER_TOO_LONG}: not a transcript") from None
        raise ReplayError(None, None, f"not JSON: {e}") from None
    return data


def _channel(activities: list[FileActivity]) -> str | None:
    from emulator.channels import CHANNELS

    for item in activities:
        if item.role == "user":
            channel = item.activity.get("channelId")
            return channel if isinstance(channel, str) and channel in CHANNELS else None
    return None


def _got(value: JSON) -> str:
    if value is None:
        return "none"
    return repr(value[:40]) if isinstance(value, str) else kind_of(value)
