"""Judging what the platform played and collected in a call: prompts (EXP-PROMPTS), the choices
a recognize offered (EXP-CHOICES) and the outcomes posted to the bot (EXP-OUTCOME)."""

from __future__ import annotations

from emulator.findings import Finding
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.facts import Posted, flat, lower, member
from emulator.scenario.judging import Judge, event_line, names_of, short
from emulator.scenario.model import ChoicesExpect, OutcomeExpect, PromptExpect, TextMatch
from emulator.scenario.rules import EXP_CHOICES, EXP_OUTCOME, EXP_PROMPTS
from emulator.transcripts.store import StoredEvent

_LEGACY_TYPES = {"worfklowvalidationoutcome": "workflowvalidationoutcome"}


def judge_prompts(judge: Judge, e: PromptExpect) -> list[Finding]:
    """EXP-PROMPTS: every item was played (in order, unless the expectation says any order)."""
    played = judge.facts.prompts
    evidence = [event_line(p) for p in played] or ["(no prompt was played)"]
    start = 0
    for number, item in enumerate(e.items, 1):
        pool = played[start:] if e.in_order else played
        hit = next((i for i, p in enumerate(pool) if _prompt_matches(item, p)), None)
        if hit is None:
            which = f" (item {number} of {len(e.items)}, in order)" if e.in_order else ""
            after = " after the ones before it" if e.in_order and number > 1 else ""
            got = ", ".join(_prompt_text(p) for p in played) or "no prompt at all"
            message = f"expected a prompt that {_describe_item(item)}{which}{after}, got {got}"
            return [judge.fail(EXP_PROMPTS.id, e.line, message, evidence)]
        if e.in_order:
            start += hit + 1
    return []


def judge_choices(judge: Judge, e: ChoicesExpect) -> list[Finding]:
    """EXP-CHOICES: the recognize #index (or any) offered exactly the expected names."""
    want = sorted(e.names)
    return judge.pick(EXP_CHOICES, e.line, "recognize", judge.facts.recognizes(), e.index,
                      f"to offer {names_of(e.names)}", lambda r: sorted(r[1]) == want,
                      lambda r: f"{names_of(r[1])} ({r[0]})")  # fmt: skip


def judge_outcome(judge: Judge, e: OutcomeExpect) -> list[Finding]:
    """EXP-OUTCOME: the outcome #index (or any) posted to the bot is the expected one."""
    return judge.pick(EXP_OUTCOME, e.line, "outcome", judge.facts.posted, e.index,
                      f"to be {_describe_expected_outcome(e)}",
                      lambda p: _outcome_matches(e, p), lambda p: _describe_outcome(p.outcome))  # fmt: skip


def _prompt_matches(item: TextMatch | str, event: StoredEvent) -> bool:
    if isinstance(item, str):
        uri = event.payload.get("file_uri")
        return isinstance(uri, str) and item in uri
    text = event.payload.get("text")
    if not isinstance(text, str):  # a file prompt: what recognition heard in it, if anything
        text = event.payload.get("recognized_text")
    return item.test(text if isinstance(text, str) else None)


def _describe_item(item: TextMatch | str) -> str:
    return f"plays the file {item!r}" if isinstance(item, str) else item.describe()


def _prompt_text(event: StoredEvent) -> str:
    text, uri = event.payload.get("text"), event.payload.get("file_uri")
    if isinstance(text, str):
        return repr(short(text))
    heard = event.payload.get("recognized_text")
    if isinstance(uri, str) and isinstance(heard, str):
        return f"{uri} (recognised {short(heard)!r})"
    return str(uri) if isinstance(uri, str) else "silence"


def _outcome_matches(e: OutcomeExpect, posted: Posted) -> bool:
    o = posted.outcome
    if e.type is not None and _type(member(o, "type")) != _type(e.type):
        return False
    if e.outcome is not None and lower(member(o, "outcome")) != e.outcome.lower():
        return False
    if e.completion_reason is not None and e.completion_reason.lower() not in _reasons(o):
        return False
    choice = member(member(o, "choiceOutcome"), "choiceName")
    if e.choice is not None and choice != e.choice:
        return False
    digits = member(member(o, "collectDigitsOutcome"), "digits")
    if isinstance(digits, list):
        digits = "".join(str(d) for d in digits)
    return e.digits is None or digits == e.digits


def _reasons(outcome: JSONObject) -> set[str]:
    out = {lower(member(outcome, "completionReason"))}
    for sub in ("choiceOutcome", "collectDigitsOutcome"):
        out.add(lower(member(member(outcome, sub), "completionReason")))
    return {r for r in out if r}


def _type(value: JSON) -> str:
    lowered = lower(value)
    return _LEGACY_TYPES.get(lowered, lowered)


def _describe_outcome(o: JSONObject) -> str:
    words = [str(member(o, "type") or "?"), str(member(o, "outcome") or "?")]
    reason = member(o, "completionReason")
    if isinstance(reason, str):
        words.append(reason)
    for sub, key in (("choiceOutcome", "choiceName"), ("collectDigitsOutcome", "digits")):
        part = member(o, sub)
        if isinstance(part, dict):
            reason = member(part, "completionReason")
            if isinstance(reason, str):
                words.append(reason)
            value = member(part, key)
            if value is not None:
                words.append(f"{'choice' if key == 'choiceName' else 'digits'}={flat(value)}")
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
