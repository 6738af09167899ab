"""Judging a run against its scenario's expectations, from the transcript alone.

``evaluate(scenario, transcript, report)`` reads the events of one call or conversation (as the
store returns them) and returns one ``Finding`` per failed expectation, ``[]`` when every one
holds. Nothing else is consulted, so a synthetic event list is judged exactly like a real run.
Where each fact comes from (docs/scenarios-running.md has the full account):

=============  ==================================================================================
call level     ``report`` (the call's summary: end reason, workflows, virtual duration) and the
               ``state`` events (answered: it reached ``established``; final callState: the last)
prompts        ``platform`` events whose payload ``kind`` is ``prompt played``
choices        the bodies of the Workflows that ran: the ``http.response`` answered last before
               each ``Workflow [...]`` note
outcomes       the ConversationResults posted (``http.request`` bodies, or the multipart
               ``parts.conversationResult``), once per message id
recording      the ``platform`` event with ``recording: true``
replies        the bot's accepted ``POST /v3/conversations/{id}/activities[/{id}]`` requests
latency        ``http.response`` ``latency_ms`` (the bot's answers), p95 by nearest rank
findings       ``finding`` events (of a probe: one per case of the probe)
=============  ==================================================================================

Without a ``findings`` expectation a scenario expects ``findings: none``: no error finding. A
``none`` expectation in a scenario that injects duplicate deliveries also fails on
CALL-DUPLICATE-DIFFERS (a warning elsewhere): that fault exists to test idempotency.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from emulator.findings import Finding, Rule, RuleRegistry, Severity
from emulator.jsonutil import JSON, JSONObject, find_key
from emulator.scenario.model import (
    CallExpect,
    ChoicesExpect,
    Expectation,
    FindingsExpect,
    LatencyExpect,
    OutcomeExpect,
    PromptExpect,
    RecordingExpect,
    ReplyExpect,
    Scenario,
    TextMatch,
)
from emulator.transcripts.store import EventKind, StoredEvent

SOURCE = "the scenario's expect"
RULES = RuleRegistry("Scenario expectations")
_r = RULES.add
ERROR = Severity.ERROR

# fmt: off
EXP_CALL = _r("EXP-CALL", ERROR, SOURCE,
    "The call went as expected: answered or rejected, ended by whom, final callState, workflows, duration.")
EXP_PROMPTS = _r("EXP-PROMPTS", ERROR, SOURCE,
    "The platform played the expected prompts (text or file), in order or anywhere.")
EXP_CHOICES = _r("EXP-CHOICES", ERROR, SOURCE,
    "A recognize offered exactly the expected choice names (in any order).")
EXP_OUTCOME = _r("EXP-OUTCOME", ERROR, SOURCE,
    "The platform posted the expected outcome: type, outcome, completion reason, choice, digits.")
EXP_RECORDING = _r("EXP-RECORDING", ERROR, SOURCE,
    "A recording was made in the expected format and length.")
EXP_REPLY = _r("EXP-REPLY", ERROR, SOURCE,
    "The bot replied through the connector as expected: text, type, attachments, suggested actions.")
EXP_LATENCY = _r("EXP-LATENCY", ERROR, SOURCE,
    "The bot's answers came within the expected time (p95 over the run).")
EXP_FINDINGS = _r("EXP-FINDINGS", ERROR, SOURCE,
    "No error finding (the default), or exactly the expected rules were found.")
EXP_RUN = _r("EXP-RUN", ERROR, "botemu (docs/scenarios-running.md)",
    "The scenario could run: a target for its kind was given, and the bot could be reached.")
# fmt: on

T = TypeVar("T")
DUPLICATE_RULE = "CALL-DUPLICATE-DIFFERS"
EVIDENCE_LINES = 12
_REPLY_PATH = re.compile(r"^/v3/conversations/[^/?]+/activities(?:/(?P<id>[^/?]+))?(?:\?.*)?$")
_LEGACY_TYPES = {"worfklowvalidationoutcome": "workflowvalidationoutcome"}


class CallOutline(Protocol):
    """What ``evaluate`` needs of a call as a whole: a ``CallSummary`` (``store.call(id)``) or a
    ``CallReport`` both fit."""

    @property
    def end_reason(self) -> str | None: ...

    @property
    def workflows(self) -> int: ...

    @property
    def vtime(self) -> float | None: ...


def evaluate(
    scenario: Scenario, transcript: Sequence[StoredEvent], report: CallOutline | None = None
) -> list[Finding]:
    """Every failed expectation of ``scenario`` in this run, as findings (``[]``: it passed)."""
    facts = _Facts.read(transcript, report)
    expectations: tuple[Expectation, ...] = scenario.expect
    if not any(isinstance(e, FindingsExpect) for e in expectations):
        expectations = (*expectations, FindingsExpect(line=scenario.line))
    judge = _Judge(scenario, facts)
    out: list[Finding] = []
    for expectation in expectations:
        out.extend(judge(expectation))
    return out


def where(scenario: Scenario, line: int | None) -> str:
    """``file:line`` of an expectation (the scenario's own line when it has none)."""
    name = str(scenario.path) if scenario.path is not None else scenario.name
    line = line if line is not None else scenario.line
    return f"{name}:{line}" if line is not None else name


# --- facts read from the transcript -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Posted:
    event: StoredEvent
    result: JSONObject
    outcome: JSONObject


@dataclass(slots=True)
class _Facts:
    prompts: list[StoredEvent] = field(default_factory=list)
    ran: list[JSON] = field(default_factory=list)
    rejected: int = 0
    posted: list[_Posted] = field(default_factory=list)
    recordings: list[StoredEvent] = field(default_factory=list)
    replies: list[tuple[StoredEvent, JSONObject]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    findings: list[StoredEvent] = field(default_factory=list)
    states: list[StoredEvent] = field(default_factory=list)
    end: StoredEvent | None = None
    end_reason: str | None = None
    workflows: int = 0
    vtime: float | None = None

    @classmethod
    def read(cls, events: Sequence[StoredEvent], report: CallOutline | None) -> _Facts:
        facts = cls()
        answer: str | None = None  # the body of the last accepted answer, until a Workflow runs
        messages: set[str] = set()
        for i, event in enumerate(events):
            kind, p = event.kind, event.payload
            if kind == EventKind.PLATFORM:
                if p.get("kind") == "prompt played":
                    facts.prompts.append(event)
                elif p.get("recording") is True:
                    facts.recordings.append(event)
                elif _summary(event).startswith("platform rejected the Workflow"):
                    facts.rejected += 1
            elif kind == EventKind.HTTP_RESPONSE:
                latency = p.get("latency_ms")
                if isinstance(latency, int | float) and not isinstance(latency, bool):
                    facts.latencies.append(float(latency))
                status, body = p.get("status"), p.get("body")
                ok = isinstance(status, int) and 200 <= status < 300
                answer = body if ok and isinstance(body, str) else None
            elif kind == EventKind.NOTE and _summary(event).startswith("Workflow ["):
                facts.ran.append(_json(answer))
                answer = None
            elif kind == EventKind.HTTP_REQUEST:
                facts._request(event, events[i + 1] if i + 1 < len(events) else None, messages)
            elif kind == EventKind.FINDING:
                facts.findings.append(event)
            elif kind == EventKind.STATE:
                facts.states.append(event)
            elif kind == EventKind.CALL_END:
                facts.end = event
        reason = facts.end.payload.get("reason") if facts.end is not None else None
        facts.end_reason = str(reason) if isinstance(reason, str) else None
        facts.workflows = len(facts.ran) + facts.rejected
        times = [e.vtime for e in events if e.vtime is not None]
        facts.vtime = max(times) if times else None
        if report is not None:
            facts.end_reason = report.end_reason or facts.end_reason
            facts.workflows = report.workflows
            facts.vtime = report.vtime if report.vtime is not None else facts.vtime
        return facts

    def _request(self, event: StoredEvent, after: StoredEvent | None, seen: set[str]) -> None:
        p = event.payload
        path = p.get("path")
        if isinstance(path, str):  # the connector's record of a bot's request
            match = _REPLY_PATH.match(path)
            if p.get("method") != "POST" or match is None or match.group("id") == "history":
                return
            if after is None or after.kind != EventKind.HTTP_RESPONSE:
                return
            status = after.payload.get("status")
            activity = _json(p.get("body"))
            if isinstance(status, int) and 200 <= status < 300 and isinstance(activity, dict):
                self.replies.append((event, activity))
            return
        message_id = p.get("message_id")
        if isinstance(message_id, str):
            if message_id in seen:
                return  # a retry or a duplicate delivery: the same message
            seen.add(message_id)
        body = p.get("body")
        parts = p.get("parts")
        if body is None and isinstance(parts, dict):
            body = parts.get("conversationResult")
        # What the platform did, when a fault (unknown enum values) changed the bytes it sent.
        made = p.get("platform_result")
        result = made if isinstance(made, dict) else _json(body)
        if isinstance(result, dict):
            outcome = _member(result, "operationOutcome")
            if isinstance(outcome, dict):
                self.posted.append(_Posted(event, result, outcome))

    # --- derived ---

    def recognizes(self) -> list[tuple[str, tuple[str, ...]]]:
        """(operation id, choice names) of every recognize that ran, in order."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for workflow in self.ran:
            actions = _member(workflow, "actions") if isinstance(workflow, dict) else None
            for action in actions if isinstance(actions, list) else ():
                if not isinstance(action, dict) or _lower(_member(action, "action")) != "recognize":
                    continue
                choices = _member(action, "choices")
                names = tuple(
                    str(_member(c, "name"))
                    for c in (choices if isinstance(choices, list) else ())
                    if isinstance(c, dict) and isinstance(_member(c, "name"), str)
                )
                out.append((str(_member(action, "operationId") or "?"), names))
        return out

    def answered(self) -> bool:
        return any(_lower(e.payload.get("new")) == "established" for e in self.states)

    def final_state(self) -> str | None:
        """The last state the call reached (``state`` events); without any, the callState of
        the last ConversationResult posted."""
        if self.states:
            state = self.states[-1].payload.get("new")
            return state if isinstance(state, str) else None
        if self.posted:
            state = _member(self.posted[-1].result, "callState")
            return state if isinstance(state, str) else None
        return None

    def ended_by(self) -> str | None:
        reason = (self.end_reason or "").lower()
        if reason.startswith("bot "):
            return "bot"
        if reason.startswith("caller "):
            return "caller"
        if reason.startswith("platform "):
            return "platform"
        return None


# --- judging -----------------------------------------------------------------------------------


class _Judge:
    def __init__(self, scenario: Scenario, facts: _Facts) -> None:
        self.scenario = scenario
        self.facts = facts
        self.is_call = scenario.kind == "call"
        self.noun = "a probe" if scenario.kind == "probe" else "a conversation"

    def __call__(self, e: Expectation) -> list[Finding]:
        if isinstance(e, CallExpect):
            return self.call(e)
        if isinstance(e, PromptExpect):
            return self.only_calls(e.line, EXP_PROMPTS, "prompts") or self.prompts(e)
        if isinstance(e, ChoicesExpect):
            return self.only_calls(e.line, EXP_CHOICES, "choices") or self.choices(e)
        if isinstance(e, OutcomeExpect):
            return self.only_calls(e.line, EXP_OUTCOME, "outcomes") or self.outcome(e)
        if isinstance(e, RecordingExpect):
            return self.only_calls(e.line, EXP_RECORDING, "a recording") or self.recording(e)
        if isinstance(e, ReplyExpect):
            return self.reply(e)
        if isinstance(e, LatencyExpect):
            return self.latency(e)
        return self.findings(e)

    def fail(
        self, rule_id: str, line: int | None, message: str, evidence: Iterable[str] = ()
    ) -> Finding:
        lines = list(evidence)
        if len(lines) > EVIDENCE_LINES:
            more = len(lines) - EVIDENCE_LINES
            lines = [*lines[:EVIDENCE_LINES], f"... and {more} more"]
        return Finding(
            rule_id, ERROR, where(self.scenario, line), message, "\n".join(lines) or None
        )

    def only_calls(self, line: int | None, rule: Rule, what: str) -> list[Finding]:
        if self.is_call:
            return []
        return [self.fail(rule.id, line, f"expected {what}, but this scenario is {self.noun}: "
                          f"{what} belong to calls")]  # fmt: skip

    # --- call level ---

    def call(self, e: CallExpect) -> list[Finding]:
        if not self.is_call:
            return [self.fail(EXP_CALL.id, e.line, f"expected a call, but this scenario is "
                              f"{self.noun}: call-level expectations belong to calls")]  # fmt: skip
        f = self.facts
        evidence = [_line(x) for x in [*f.states, *([f.end] if f.end else [])]]
        out: list[Finding] = []

        def check(ok: bool, message: str) -> None:
            if not ok:
                out.append(self.fail(EXP_CALL.id, e.line, message, evidence))

        ended = f.end_reason or "not ended"
        if e.answered is not None:
            got = f.answered()
            check(got == e.answered, f"expected the call {_to_be(e.answered)}answered, got "
                  f"{'answered' if got else 'never answered'} ({ended})")  # fmt: skip
        if e.rejected is not None:
            got = ended == "bot rejected"
            check(got == e.rejected, f"expected the call {_to_be(e.rejected)}rejected by the bot, "
                  f"got {ended}")  # fmt: skip
        if e.ended_by is not None:
            who = f.ended_by()
            allowed = (e.ended_by,) if isinstance(e.ended_by, str) else e.ended_by
            check(who in allowed, f"expected the call to be ended by the {_either(allowed)}, got "
                  + (f"ended by the {who} ({ended})" if who else ended))  # fmt: skip
        if e.final_state is not None:
            state = f.final_state()
            check(_lower(state) == e.final_state.lower(),
                  f"expected final callState {e.final_state}, got {state or 'none'}")  # fmt: skip
        if e.max_workflows is not None:
            check(f.workflows <= e.max_workflows,
                  f"expected at most {_count(e.max_workflows, 'workflow')}, got {f.workflows}")  # fmt: skip
        seconds = f.vtime or 0.0
        if e.min_duration is not None:
            check(seconds >= e.min_duration, f"expected the call to last at least "
                  f"{e.min_duration:g}s, got {seconds:.2f}s")  # fmt: skip
        if e.max_duration is not None:
            check(seconds <= e.max_duration, f"expected the call to last at most "
                  f"{e.max_duration:g}s, got {seconds:.2f}s")  # fmt: skip
        return out

    # --- prompts ---

    def prompts(self, e: PromptExpect) -> list[Finding]:
        played = self.facts.prompts
        evidence = [_line(p) for p in played] or ["(no prompt was played)"]
        start = 0
        for number, item in enumerate(e.items, 1):
            pool = played[start:] if e.in_order else played
            hit = next((i for i, p in enumerate(pool) if _prompt_matches(item, p)), None)
            if hit is None:
                which = f" (item {number} of {len(e.items)}, in order)" if e.in_order else ""
                after = " after the ones before it" if e.in_order and number > 1 else ""
                got = ", ".join(_prompt_text(p) for p in played) or "no prompt at all"
                message = f"expected a prompt that {_describe_item(item)}{which}{after}, got {got}"
                return [self.fail(EXP_PROMPTS.id, e.line, message, evidence)]
            if e.in_order:
                start += hit + 1
        return []

    # --- choices, outcomes, replies: the n-th one, or any ---

    def pick(
        self,
        rule: Rule,
        line: int | None,
        noun: str,
        items: Sequence[T],
        index: int | None,
        want: str,
        matches: Callable[[T], bool],
        show: Callable[[T], str],
    ) -> list[Finding]:
        """``want`` completes "expected the recognize #0 ...": ``to offer [sales]``."""
        evidence = [f"#{i} {show(item)}" for i, item in enumerate(items)] or [f"(no {noun})"]
        if index is not None:
            if index >= len(items):
                got = f"only {_count(len(items), noun)}" if items else f"no {noun} at all"
                return [self.fail(rule.id, line, f"expected {noun} #{index} {want}, got {got}",
                                  evidence)]  # fmt: skip
            if not matches(items[index]):
                return [self.fail(rule.id, line, f"expected {noun} #{index} {want}, got "
                                  f"{show(items[index])}", evidence)]  # fmt: skip
            return []
        if any(matches(item) for item in items):
            return []
        got = "; ".join(show(item) for item in items) or f"no {noun} at all"
        article = "an" if noun[0] in "aeiou" else "a"
        return [self.fail(rule.id, line, f"expected {article} {noun} {want}, got {got}", evidence)]

    def choices(self, e: ChoicesExpect) -> list[Finding]:
        want = sorted(e.names)
        return self.pick(EXP_CHOICES, e.line, "recognize", self.facts.recognizes(), e.index,
                         f"to offer {_names(e.names)}", lambda r: sorted(r[1]) == want,
                         lambda r: f"{_names(r[1])} ({r[0]})")  # fmt: skip

    def outcome(self, e: OutcomeExpect) -> list[Finding]:
        return self.pick(EXP_OUTCOME, e.line, "outcome", self.facts.posted, e.index,
                         f"to be {_describe_expected_outcome(e)}",
                         lambda p: _outcome_matches(e, p), lambda p: _describe_outcome(p.outcome))  # fmt: skip

    # --- recording ---

    def recording(self, e: RecordingExpect) -> list[Finding]:
        made = self.facts.recordings
        want = _describe_recording(e)
        if not made:
            return [self.fail(EXP_RECORDING.id, e.line, f"expected a recording{want}, got none",
                              ["(no recording was sent to the bot)"])]  # fmt: skip
        for event in made:
            fmt, seconds = event.payload.get("format"), _number(event.payload.get("seconds"))
            if e.format is not None and _lower(fmt) != e.format.lower():
                continue
            if e.min_length is not None and (seconds is None or seconds < e.min_length):
                continue
            if e.max_length is not None and (seconds is None or seconds > e.max_length):
                continue
            return []
        got = "; ".join(
            f"{r.payload.get('format')}, {_number(r.payload.get('seconds')) or 0:g}s" for r in made
        )
        return [self.fail(EXP_RECORDING.id, e.line, f"expected a recording{want}, got {got}",
                          [_line(r) for r in made])]  # fmt: skip

    # --- replies ---

    def reply(self, e: ReplyExpect) -> list[Finding]:
        if self.scenario.kind != "conversation":
            what = "a call" if self.is_call else self.noun
            return [self.fail(EXP_REPLY.id, e.line, "expected a bot reply, but this scenario is "
                              f"{what}: replies belong to conversations")]  # fmt: skip
        replies = [activity for _, activity in self.facts.replies]
        return self.pick(EXP_REPLY, e.line, "reply", replies, e.index,
                         f"to be {_describe_expected_reply(e)}", lambda a: _reply_matches(e, a),
                         _describe_reply)  # fmt: skip

    # --- latency ---

    def latency(self, e: LatencyExpect) -> list[Finding]:
        times = sorted(self.facts.latencies)
        if not times:
            return [self.fail(EXP_LATENCY.id, e.line, f"expected the bot's answers within "
                              f"{e.p95_ms:g} ms (p95), got no answer to measure")]  # fmt: skip
        p95 = times[max(0, math.ceil(0.95 * len(times)) - 1)]
        if p95 <= e.p95_ms:
            return []
        message = (f"expected the bot's answers within {e.p95_ms:g} ms (p95), got {p95:.0f} ms "
                   f"(p95 of {_count(len(times), 'answer')}; slowest {times[-1]:.0f} ms)")  # fmt: skip
        slow = [f"{t:.0f} ms" for t in reversed(times) if t > e.p95_ms]
        return [self.fail(EXP_LATENCY.id, e.line, message, slow)]

    # --- findings ---

    def findings(self, e: FindingsExpect) -> list[Finding]:
        found = self.facts.findings
        errors = [x for x in found if _is_error(x)]
        if not e.rules:
            if not e.none:
                return []
            duplicates = bool(self.scenario.faults.duplicate_callbacks)
            bad = [x for x in found if _is_error(x) or (duplicates and _rule(x) == DUPLICATE_RULE)]
            if not bad:
                return []
            rules = _unique(_rule(x) for x in bad)
            what = "no error finding" + (f" (nor {DUPLICATE_RULE})" if duplicates else "")
            return [self.fail(EXP_FINDINGS.id, e.line, f"expected {what}, got "
                              f"{_count(len(bad), 'finding')}: {', '.join(rules)}",
                              [_summary(x) for x in bad])]  # fmt: skip
        ids = {_rule(x) for x in found}
        missing = [r for r in e.rules if r not in ids]
        others = [x for x in errors if x.payload.get("rule") not in e.rules]
        out: list[Finding] = []
        if missing:
            got = ", ".join(sorted(ids)) or "no finding at all"
            out.append(self.fail(EXP_FINDINGS.id, e.line, f"expected the findings "
                                 f"{', '.join(e.rules)}; missing {', '.join(missing)}, got {got}",
                                 [_summary(x) for x in found]))  # fmt: skip
        if others:
            rules = _unique(_rule(x) for x in others)
            out.append(self.fail(EXP_FINDINGS.id, e.line, f"expected no error finding but "
                                 f"{', '.join(e.rules)}, got also {', '.join(rules)}",
                                 [_summary(x) for x in others]))  # fmt: skip
        return out


# --- matching and describing -------------------------------------------------------------------


def _prompt_matches(item: TextMatch | str, event: StoredEvent) -> bool:
    if isinstance(item, str):
        uri = event.payload.get("file_uri")
        return isinstance(uri, str) and item in uri
    text = event.payload.get("text")
    return item.test(text if isinstance(text, str) else None)


def _describe_item(item: TextMatch | str) -> str:
    return f"plays the file {item!r}" if isinstance(item, str) else item.describe()


def _prompt_text(event: StoredEvent) -> str:
    text, uri = event.payload.get("text"), event.payload.get("file_uri")
    if isinstance(text, str):
        return repr(_short(text))
    return str(uri) if isinstance(uri, str) else "silence"


def _outcome_matches(e: OutcomeExpect, posted: _Posted) -> bool:
    o = posted.outcome
    if e.type is not None and _type(_member(o, "type")) != _type(e.type):
        return False
    if e.outcome is not None and _lower(_member(o, "outcome")) != e.outcome.lower():
        return False
    if e.completion_reason is not None and e.completion_reason.lower() not in _reasons(o):
        return False
    choice = _member(_member(o, "choiceOutcome"), "choiceName")
    if e.choice is not None and choice != e.choice:
        return False
    digits = _member(_member(o, "collectDigitsOutcome"), "digits")
    if isinstance(digits, list):
        digits = "".join(str(d) for d in digits)
    return e.digits is None or digits == e.digits


def _reasons(outcome: JSONObject) -> set[str]:
    out = {_lower(_member(outcome, "completionReason"))}
    for sub in ("choiceOutcome", "collectDigitsOutcome"):
        out.add(_lower(_member(_member(outcome, sub), "completionReason")))
    return {r for r in out if r}


def _type(value: JSON) -> str:
    lowered = _lower(value)
    return _LEGACY_TYPES.get(lowered, lowered)


def _describe_outcome(o: JSONObject) -> str:
    words = [str(_member(o, "type") or "?"), str(_member(o, "outcome") or "?")]
    reason = _member(o, "completionReason")
    if isinstance(reason, str):
        words.append(reason)
    for sub, key in (("choiceOutcome", "choiceName"), ("collectDigitsOutcome", "digits")):
        part = _member(o, sub)
        if isinstance(part, dict):
            reason = _member(part, "completionReason")
            if isinstance(reason, str):
                words.append(reason)
            value = _member(part, key)
            if value is not None:
                words.append(f"{'choice' if key == 'choiceName' else 'digits'}={_flat(value)}")
    return " ".join(words)


def _describe_expected_outcome(e: OutcomeExpect) -> str:
    words = [e.type or "any outcome"]
    if e.outcome is not None:
        words.append(e.outcome)
    if e.completion_reason is not None:
        words.append(f"with completion reason {e.completion_reason}")
    if e.choice is not None:
        words.append(f"with choice {e.choice!r}")
    if e.digits is not None:
        words.append(f"with digits {e.digits!r}")
    return " ".join(words)


def _describe_recording(e: RecordingExpect) -> str:
    parts = []
    if e.format is not None:
        parts.append(f"in {e.format}")
    if e.min_length is not None:
        parts.append(f"at least {e.min_length:g}s long")
    if e.max_length is not None:
        parts.append(f"at most {e.max_length:g}s long")
    return (" " + ", ".join(parts)) if parts else ""


def _reply_matches(e: ReplyExpect, activity: JSONObject) -> bool:
    if e.type is not None and _lower(activity.get("type")) != e.type.lower():
        return False
    if e.text is not None:
        text = activity.get("text")
        if not e.text.test(text if isinstance(text, str) else None):
            return False
    if e.attachments is not None and len(_list(activity.get("attachments"))) < e.attachments:
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
    for action in _list(actions):
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
        words.append(f"with at least {_count(e.attachments, 'attachment')}")
    if e.suggested_actions is not None:
        words.append(f"offering {', '.join(repr(a) for a in e.suggested_actions)}")
    return " ".join(words)


def _describe_reply(activity: JSONObject) -> str:
    words = [str(activity.get("type") or "activity")]
    text = activity.get("text")
    if isinstance(text, str):
        words.append(repr(_short(text)))
    attachments = _list(activity.get("attachments"))
    if attachments:
        words.append(f"with {_count(len(attachments), 'attachment')}")
    offered = _offered_actions(activity)
    if offered:
        words.append(f"offering {', '.join(sorted(offered))}")
    return " ".join(words)


# --- small helpers -----------------------------------------------------------------------------


def _json(text: JSON) -> JSON:
    if not isinstance(text, str):
        return None
    try:
        value: JSON = json.loads(text)
    except ValueError:
        return None
    return value


def _member(obj: JSON, name: str) -> JSON:
    if not isinstance(obj, dict):
        return None
    key = find_key(obj, name)
    return None if key is None else obj[key]


def _lower(value: object) -> str:
    return value.lower() if isinstance(value, str) else ""


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


def _number(value: JSON) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _flat(value: JSON) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _is_error(event: StoredEvent) -> bool:
    return _lower(event.payload.get("severity")) == "error"


def _rule(event: StoredEvent) -> str:
    return str(event.payload.get("rule"))


def _summary(event: StoredEvent) -> str:
    summary = event.payload.get("summary")
    return summary if isinstance(summary, str) else event.kind


def _line(event: StoredEvent) -> str:
    at = f"{event.vtime:7.2f}s" if event.vtime is not None else "       -"
    return f"{at}  {_summary(event)}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _names(names: Iterable[str]) -> str:
    return "[" + ", ".join(names) + "]"


def _either(names: Sequence[str]) -> str:
    """``bot`` / ``bot or caller`` / ``bot, caller or platform``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def _to_be(flag: bool) -> str:
    return "to be " if flag else "not to be "


def _count(n: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
