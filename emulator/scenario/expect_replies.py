"""Judging a conversation's replies: what the bot sent through the connector (EXP-REPLY)."""

from __future__ import annotations

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
    return True


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
    return " ".join(words)
