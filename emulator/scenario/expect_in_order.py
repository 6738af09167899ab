"""Judging a replayed recording's replies: exactly these, in this order (EXP-REPLY).

A ``.transcript`` or ``.chat`` file replayed as a scenario (``replay_files.py``) expects every
activity the bot sent, in order, as ``RepliesInOrder``. The bot's replies (``Facts.replies``,
a streamed reply as one), less those of the ignored types (typing and trace, as the platform's
transcript test runner skips them), are set against the expected ones place by place. Only the
fields of ``ExpectedReply`` are compared; ids, timestamps, the service URL, the conversation,
the channel, the sender and the recipient are masked.

The first place that differs is the failure: at the recording's line of the expected activity,
naming it (``activity #3``, its index in the file) and each field that differs (expected vs
actual); the evidence sets out both sequences side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

from emulator.findings import Finding
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.facts import as_list, lower
from emulator.scenario.judging import Judge, count, short
from emulator.scenario.model import ExpectedReply, RepliesInOrder
from emulator.scenario.rules import EXP_REPLY


def judge_in_order(judge: Judge, e: RepliesInOrder) -> list[Finding]:
    """EXP-REPLY: the bot sent exactly ``e.replies``, in order."""
    if judge.scenario.kind != "conversation":
        return [judge.fail(EXP_REPLY.id, e.line, "expected the replies of a recording, but this "
                           f"scenario is {judge.noun if not judge.is_call else 'a call'}")]  # fmt: skip
    ignored = {t.lower() for t in e.ignored}
    actual = [a for _, a in judge.facts.replies if lower(a.get("type")) not in ignored]
    evidence = _evidence(e.replies, actual)
    for place, expected in enumerate(e.replies):
        if place >= len(actual):
            sent = f"the bot sent {count(len(actual), 'reply')}, {len(e.replies)} expected"
            message = (f"{_name(expected)}: expected {describe_expected(expected)}, got no reply "
                       f"({sent})")  # fmt: skip
            return [judge.fail(EXP_REPLY.id, expected.line, message, evidence)]
        differences = compare(expected, actual[place])
        if differences:
            message = f"{_name(expected)}, reply #{place} of the run: " + "; ".join(differences)
            return [judge.fail(EXP_REPLY.id, expected.line, message, evidence)]
    if len(actual) > len(e.replies):
        extra = actual[len(e.replies)]
        message = (f"expected {count(len(e.replies), 'reply')} and no more, got "
                   f"{len(actual)}: reply #{len(e.replies)} {describe_actual(extra)} is not in "
                   "the recording")  # fmt: skip
        line = e.replies[-1].line if e.replies else e.line
        return [judge.fail(EXP_REPLY.id, line, message, evidence)]
    return []


def compare(expected: ExpectedReply, activity: JSONObject) -> list[str]:
    """Each field of ``activity`` that differs from ``expected``: ``field: expected X, got Y``."""
    out: list[str] = []
    got_type = activity.get("type")
    if lower(got_type) != expected.type.lower():
        out.append(f"type: expected {expected.type!r}, got {_shown(got_type)}")
    got_text = _text(activity.get("text"))
    if got_text != _text(expected.text):
        out.append(f"text: expected {_shown(_text(expected.text))}, got {_shown(got_text)}")
    types = attachment_types(activity)
    if types != expected.attachments:
        out.append(f"attachments: expected {_listed(expected.attachments)}, got {_listed(types)}")
    layout = activity.get("attachmentLayout")
    if expected.layout is not None and lower(layout) != expected.layout.lower():
        out.append(f"attachmentLayout: expected {expected.layout!r}, got {_shown(layout)}")
    actions = suggested_actions(activity)
    if actions != expected.suggested_actions:
        out.append(f"suggestedActions: expected {_listed(expected.suggested_actions)}, "
                   f"got {_listed(actions)}")  # fmt: skip
    name = activity.get("name")
    if expected.name is not None and name != expected.name:
        out.append(f"name: expected {expected.name!r}, got {_shown(name)}")
    return out


def attachment_types(activity: JSONObject) -> tuple[str, ...]:
    """The content type of each attachment, in order (``?`` for one without)."""
    out: list[str] = []
    for attachment in as_list(activity.get("attachments")):
        kind = attachment.get("contentType") if isinstance(attachment, dict) else None
        out.append(kind if isinstance(kind, str) else "?")
    return tuple(out)


def suggested_actions(activity: JSONObject) -> tuple[str, ...]:
    """The title (else the value) of each suggested action, in order."""
    suggested = activity.get("suggestedActions")
    actions = suggested.get("actions") if isinstance(suggested, dict) else None
    out: list[str] = []
    for action in as_list(actions):
        if isinstance(action, dict):
            label = action.get("title")
            label = label if isinstance(label, str) else action.get("value")
            out.append(label if isinstance(label, str) else "?")
    return tuple(out)


def describe_expected(e: ExpectedReply) -> str:
    """An expected reply in a few words: ``message 'echo: hello' with 1 attachment``."""
    return _describe(e.type, _text(e.text), e.attachments, e.suggested_actions)


def describe_actual(activity: JSONObject) -> str:
    kind = activity.get("type")
    return _describe(kind if isinstance(kind, str) else "activity", _text(activity.get("text")),
                     attachment_types(activity), suggested_actions(activity))  # fmt: skip


def _describe(kind: str, text: str, attachments: Sequence[str], actions: Sequence[str]) -> str:
    words = [kind]
    if text:
        words.append(repr(short(text)))
    if attachments:
        words.append(f"with {count(len(attachments), 'attachment')} ({', '.join(attachments)})")
    if actions:
        words.append(f"offering {', '.join(actions)}")
    return " ".join(words)


def _evidence(expected: Sequence[ExpectedReply], actual: Sequence[JSONObject]) -> list[str]:
    lines: list[str] = []
    for place in range(max(len(expected), len(actual))):
        want = describe_expected(expected[place]) if place < len(expected) else "(nothing)"
        got = describe_actual(actual[place]) if place < len(actual) else "(nothing)"
        mark = " " if place < len(expected) and place < len(actual) and not compare(
            expected[place], actual[place]) else "✗"  # fmt: skip
        lines.append(f"{mark} #{place} expected {want}; got {got}")
    return lines or ["(no reply expected, none sent)"]


def _name(e: ExpectedReply) -> str:
    after = f" (after {e.after})" if e.after else " (the answer to the conversation's opening)"
    return f"activity #{e.activity}{after}"


def _text(value: JSON) -> str:
    """A text as compared: line ends made ``\\n``, trimmed at both ends; none is empty."""
    if not isinstance(value, str):
        return ""
    return value.replace("\r\n", "\n").strip()


def _shown(value: JSON) -> str:
    if value is None or value == "":
        return "none"
    return repr(short(value, 80)) if isinstance(value, str) else repr(value)


def _listed(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]" if items else "none"
