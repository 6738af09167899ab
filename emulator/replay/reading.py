"""A stored call read for replay: what the platform ran (actions with their times), what the
caller did (keys, speech, silences, the hang-up), what it heard (prompts), what was posted to the
bot (outcomes), the recording, how the call ended and its error findings.

Everything comes from the transcript events the calling session writes (``calllog.py``; the
table is in docs/transcripts.md). A payload is read leniently: a member of the wrong type counts
as absent, so a damaged transcript gives a smaller recording of the call, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from emulator.jsonutil import JSON, JSONObject
from emulator.transcripts.store import CallSummary, EventKind, StoredEvent

INPUT_ACTIONS = ("recognize", "record")


@dataclass(frozen=True, slots=True)
class ActionRow:
    """One action the platform ran: its kind (``playPrompt``, ``recognize``...), id, start and
    end in virtual seconds, outcome and completion reason."""

    seq: int
    action: str
    operation_id: str
    start: float
    end: float
    outcome: str | None
    reason: str | None

    @property
    def is_input(self) -> bool:
        return self.action in INPUT_ACTIONS


@dataclass(frozen=True, slots=True)
class CallerAct:
    """One thing the caller did: ``kind`` is ``press`` (``keys``, ``times``), ``say``
    (``text``), ``talk``, ``silence`` or ``hangup``; ``at`` and ``end`` in virtual seconds."""

    seq: int
    kind: str
    at: float
    end: float
    keys: str = ""
    times: tuple[float, ...] = ()
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Heard:
    """A prompt the platform played: its text, or its file's URI (neither: a silence); where
    it ended, and whether the caller cut it there (a barge-in)."""

    seq: int
    at: float
    text: str | None
    file_uri: str | None
    operation_id: str
    end: float | None = None
    interrupted: bool = False


@dataclass(slots=True)
class Recorded:
    """A stored call, as replay needs it. ``timeline`` holds the actions and the caller's acts
    in transcript order (a turn's acts come before its action's row, a hang-up after the row of
    the action it cut)."""

    summary: CallSummary
    timeline: list[ActionRow | CallerAct] = field(default_factory=list)
    prompts: list[Heard] = field(default_factory=list)
    outcomes: list[tuple[float | None, JSONObject]] = field(default_factory=list)
    """(virtual time, operationOutcome) of each ConversationResult posted, once per message."""
    beeps: dict[str, float] = field(default_factory=dict)
    """When each record action's beep began, by operation id."""
    recordings: list[tuple[str, float]] = field(default_factory=list)
    """(format, seconds) of each recording sent to the bot."""
    answered: bool = False
    end_reason: str | None = None
    error_rules: list[str] = field(default_factory=list)
    faults: JSONObject | None = None
    """The platform faults of a call placed with them (``PlatformFaults.to_json``)."""
    ran: list[JSON] = field(default_factory=list)
    """The Workflows that ran, in order (the body of the bot's last 2xx answer before each)."""
    media: dict[str, float] = field(default_factory=dict)
    """Seconds of each prompt file the platform fetched, by URI."""
    media_failures: dict[str, str] = field(default_factory=dict)
    """Why each prompt file the platform could not use failed (its ``CALL-MEDIA-*`` finding)."""
    prompt_timing: str = "estimate"
    """How long its text prompts played: ``estimate`` (a transcript that does not say), or
    ``speech``, as long as their synthesized audio (``call.start``'s ``prompt_timing``)."""
    speech_engine: str | None = None
    """What synthesized them with prompt timing ``speech`` (its note's ``engine``)."""

    @property
    def actions(self) -> list[ActionRow]:
        return [item for item in self.timeline if isinstance(item, ActionRow)]

    @property
    def acts(self) -> list[CallerAct]:
        return [item for item in self.timeline if isinstance(item, CallerAct)]


def read_call(summary: CallSummary, events: Sequence[StoredEvent]) -> Recorded:
    """The replay's view of a call from its stored events."""
    call = Recorded(summary, end_reason=summary.end_reason)
    answer: str | None = None
    messages: set[str] = set()
    for event in events:
        kind, p = event.kind, event.payload
        if kind == EventKind.PLATFORM:
            _platform(call, event)
        elif kind == EventKind.CALLER:
            act = caller_act(event.seq, p)
            if act is not None:
                call.timeline.append(act)
        elif kind == EventKind.STATE and p.get("new") == "established":
            call.answered = True
        elif kind == EventKind.HTTP_RESPONSE:
            status, body = p.get("status"), p.get("body")
            ok = isinstance(status, int) and 200 <= status < 300 and isinstance(body, str)
            answer = body if ok and isinstance(body, str) else None
        elif kind == EventKind.NOTE:
            answer = _note(call, p, answer)
        elif kind == EventKind.CALL_START and p.get("prompt_timing") == "speech":
            call.prompt_timing = "speech"
        elif kind == EventKind.HTTP_REQUEST:
            _posted(call, event, messages)
        elif kind == EventKind.FINDING:
            _finding(call, p)
        elif kind == EventKind.CALL_END and call.end_reason is None:
            call.end_reason = _text(p.get("reason"))
    return call


def _note(call: Recorded, p: JSONObject, answer: str | None) -> str | None:
    """Read a note: a Workflow that ran (the answer it came in: None from now on), the faults,
    or what timed the prompts; the bot's last answer, still waiting for its Workflow."""
    note = _text(p.get("summary")) or ""
    if note.startswith("Workflow ["):
        call.ran.append(_json(answer))
        return None
    if note.startswith("faults:") and isinstance(p.get("faults"), dict):
        call.faults = p["faults"]  # type: ignore[assignment]
    elif p.get("prompt_timing") == "speech" and call.speech_engine is None:
        call.speech_engine = _text(p.get("engine"))
    return answer


def _finding(call: Recorded, p: JSONObject) -> None:
    rule, where = _text(p.get("rule")) or "", _text(p.get("where"))
    if p.get("severity") == "error" and rule and rule not in call.error_rules:
        call.error_rules.append(rule)
    if rule.startswith("CALL-MEDIA") and where:
        call.media_failures[where] = _text(p.get("message")) or rule


def _platform(call: Recorded, event: StoredEvent) -> None:
    p = event.payload
    what = p.get("kind")
    if what == "action":
        start, end = _number(p.get("start")), _number(p.get("at"))
        action, op = _text(p.get("action")), _text(p.get("operation_id"))
        if start is not None and end is not None and action:
            row = ActionRow(event.seq, action, op or "", start, end,
                            _text(p.get("outcome")), _text(p.get("reason")))  # fmt: skip
            call.timeline.append(row)
    elif what == "beep played":
        at = _number(p.get("at"))
        if at is not None:
            call.beeps[_text(p.get("operation_id")) or ""] = at
    elif what == "prompt played":
        at = _number(p.get("at"))
        call.prompts.append(Heard(event.seq, at or 0.0, _text(p.get("text")),
                                  _text(p.get("file_uri")), _text(p.get("operation_id")) or "",
                                  _number(p.get("end")), p.get("interrupted") is True))  # fmt: skip
    elif p.get("recording") is True:
        seconds = _number(p.get("seconds"))
        call.recordings.append((_text(p.get("format")) or "", seconds or 0.0))
    elif isinstance(p.get("uri"), str) and _number(p.get("seconds")) is not None:
        call.media[str(p["uri"])] = _number(p.get("seconds")) or 0.0


def caller_act(seq: int, p: JSONObject) -> CallerAct | None:
    """The act of a ``caller`` event's payload; None when it is not one (or damaged)."""
    what, at = p.get("kind"), _number(p.get("at"))
    if at is None:
        return None
    end = _number(p.get("end"))
    if what == "caller pressed":
        keys, times = _text(p.get("keys")) or "", p.get("times")
        stamps = tuple(t for t in (_number(x) for x in times or ()) if t is not None) if isinstance(times, list) else ()  # fmt: skip
        if not keys or len(stamps) != len(keys):
            return None
        return CallerAct(seq, "press", at, stamps[-1], keys=keys, times=stamps)
    if what == "caller spoke" and end is not None:
        text = _text(p.get("text"))
        return CallerAct(seq, "say" if text is not None else "talk", at, end, text=text)
    if what == "caller silent" and end is not None:
        return CallerAct(seq, "silence", at, end)
    if what == "caller hung up":
        return CallerAct(seq, "hangup", at, at)
    return None


def _posted(call: Recorded, event: StoredEvent, seen: set[str]) -> None:
    """A ConversationResult posted to the bot: its outcome, once per message id."""
    p = event.payload
    message_id = p.get("message_id")
    if isinstance(message_id, str):
        if message_id in seen:
            return
        seen.add(message_id)
    body, parts = p.get("body"), p.get("parts")
    if body is None and isinstance(parts, dict):
        body = parts.get("conversationResult")
    made = p.get("platform_result")
    result = made if isinstance(made, dict) else _json(body)
    outcome = member(result, "operationOutcome")
    if isinstance(outcome, dict):
        call.outcomes.append((event.vtime, outcome))


def member(obj: JSON, name: str) -> JSON:
    """``obj[name]``, the name in any case; None when absent or ``obj`` is not an object."""
    if not isinstance(obj, dict):
        return None
    lowered = name.lower()
    return next((v for k, v in obj.items() if k.lower() == lowered), None)


def _json(text: JSON) -> JSON:
    if not isinstance(text, str):
        return None
    try:
        value: JSON = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value


def _text(value: JSON) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: JSON) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def joined_presses(items: Sequence[CallerAct | ActionRow]) -> list[CallerAct]:
    """The caller's acts of ``items`` with presses that follow one another made one run (an
    action's row between them ends it): the transcript cuts a run where the platform ignored a
    key (an ``input ignored`` event between) and, in a live call, at each key (the timer it
    set), not where the caller paused."""
    out: list[CallerAct] = []
    last: CallerAct | None = None
    for item in items:
        if not isinstance(item, CallerAct):
            last = None
            continue
        if last is not None and last.kind == item.kind == "press":
            last = out[-1] = CallerAct(last.seq, "press", last.at, item.end,
                                       keys=last.keys + item.keys, times=last.times + item.times)  # fmt: skip
        else:
            out.append(item)
            last = item
    return out
