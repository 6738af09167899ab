"""Judging a conversation's replies: what the bot sent through the connector (EXP-REPLY)."""

from __future__ import annotations

from emulator.connector.streams import STREAM_KEY
from emulator.findings import Finding
from emulator.jsonutil import JSONObject
from emulator.scenario.facts import as_list, lower
from emulator.scenario.judging import Judge, count, short
from emulator.scenario.model import ReplyExpect
from emulator.scenario.rules import EXP_REPLY


def judge_reply(judge: Judge, e: ReplyExpect) -> list[Finding]:
    """EXP-REPLY: the reply #index (or any) the bot sent is the expected one."""
    if judge.scenario.kind != "conversation":
        what = "a call" if judge.is_call else judge.noun
        return [
            judge.fail(
                EXP_REPLY.id,
                e.line,
                "expected a bot reply, but this scenario is "
                f"{what}: replies belong to conversations",
            )
        ]
    replies = [activity for _, activity in judge.facts.replies]
    return judge.pick(
        EXP_REPLY,
        e.line,
        "reply",
        replies,
        e.index,
        f"to be {_describe_expected_reply(e)}",
        lambda a: _reply_matches(e, a),
        _describe_reply,
    )


def _reply_matches(e: ReplyExpect, activity: JSONObject) -> bool:
    if e.type is not None and lower(activity.get("type")) != e.type.lower():
        return False
    if e.text is not None:
        text = activity.get("text")
        if not e.text.test(text if isinstance(text, str) else None):
            return False
    if e.attachments is not None and len(as_list(activity.get("attachments"))) < e.attachments:
        return False
    if e.suggested_actions is not None:
        offered = _offered_actions(activity)
        if any(a not in offered for a in e.suggested_actions):
            return False
    return _stream_matches(e, activity)


def _stream_matches(e: ReplyExpect, activity: JSONObject) -> bool:
    stream = activity.get(STREAM_KEY)
    in_stream = isinstance(stream, dict)
    streamed = isinstance(stream, dict) and stream.get("state") == "final"
    if e.streamed is True and not streamed:  # a stream ended by its final message
        return False
    if e.streamed is False and in_stream:  # no part of a stream at all
        return False
    if e.chunks is not None:
        return streamed and _chunks(activity) >= e.chunks
    return True


def _chunks(activity: JSONObject) -> int:
    """The chunks of a streamed reply before its final message."""
    stream = activity.get(STREAM_KEY)
    chunks = stream.get("chunks") if isinstance(stream, dict) else None
    return max(0, len(chunks) - 1) if isinstance(chunks, list) else 0


def _offered_actions(activity: JSONObject) -> set[str]:
    suggested = activity.get("suggestedActions")
    actions = suggested.get("actions") if isinstance(suggested, dict) else None
    out: set[str] = set()
    for action in as_list(actions):
        if isinstance(action, dict):
            for key in ("title", "value"):
                value = action.get(key)
                if isinstance(value, str):
                    out.add(value)
    return out


def _describe_expected_reply(e: ReplyExpect) -> str:
    words = [f"a {e.type}" if e.type else "an activity"]
    if e.text is not None:
        words.append(f"whose text {e.text.describe()}")
    if e.attachments is not None:
        words.append(f"with at least {count(e.attachments, 'attachment')}")
    if e.suggested_actions is not None:
        words.append(f"offering {', '.join(repr(a) for a in e.suggested_actions)}")
    if e.streamed is False:
        words.append("sent as one activity, not streamed")
    elif e.streamed or e.chunks is not None:
        words.append("streamed" + (f" in at least {count(e.chunks, 'chunk')}" if e.chunks else ""))
    return " ".join(words)


def _describe_reply(activity: JSONObject) -> str:
    words = [str(activity.get("type") or "activity")]
    text = activity.get("text")
    if isinstance(text, str):
        words.append(repr(short(text)))
    attachments = as_list(activity.get("attachments"))
    if attachments:
        words.append(f"with {count(len(attachments), 'attachment')}")
    offered = _offered_actions(activity)
    if offered:
        words.append(f"offering {', '.join(sorted(offered))}")
    stream = activity.get(STREAM_KEY)
    if isinstance(stream, dict):
        state = (
            "" if stream.get("state") == "final" else f" ({stream.get('state')}, no final message)"
        )
        words.append(f"streamed in {count(_chunks(activity), 'chunk')}{state}")
    return " ".join(words)
