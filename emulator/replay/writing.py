"""The scenario file of a replay, written as YAML text by hand: every string double-quoted (JSON
escapes are YAML escapes, and a quoted ``"yes"`` or ``"0123"`` stays a string), one step or
expectation per line with a comment saying when it happened in the stored call.

The values written are those the scenario language accepts (docs/scenarios.md): the outcome types
and completion reasons of its schema (``OUTCOME_TYPES``, ``COMPLETION_REASONS``; anything else,
such as an unknown enum value a fault injected, is left out of the expectation), durations as
``1.25s``, keys as quoted strings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from emulator.calling.caller import (
    DEFAULT_DIGIT_GAP,
    At,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
)
from emulator.jsonutil import JSON, JSONObject
from emulator.replay.reading import Recorded, member
from emulator.replay.steps import Placed

OUTCOME_TYPES = (
    "answerOutcome",
    "hangupOutcome",
    "rejectOutcome",
    "playPromptOutcome",
    "recordOutcome",
    "recognizeOutcome",
    "workflowValidationOutcome",
)
COMPLETION_REASONS = (
    "completedSuccessfully",
    "callTerminated",
    "temporarySystemFailure",
    "initialSilenceTimeout",
    "maxRecordingTimeout",
    "completedSilenceDetected",
    "completedStopToneDetected",
    "incorrectDtmf",
    "interdigitTimeout",
    "speechOptionMatched",
    "dtmfOptionMatched",
)
RECORDING_FORMATS = ("wav", "wma", "mp3")
_KEYS = re.compile(r"^[0-9*#A-D]+$")
_BY_LOWER = {v.lower(): v for v in (*OUTCOME_TYPES, *COMPLETION_REASONS)}
_BY_LOWER["worfklowvalidationoutcome"] = "workflowValidationOutcome"


def quote(text: str) -> str:
    """A YAML double-quoted scalar of ``text``, with ``${`` written ``$${`` (the scenario
    loader reads ``${name}`` as a variable, ``$${`` as a literal ``${``)."""
    text = text.replace("${", "$${")
    out = json.dumps(text, ensure_ascii=False)
    if out.encode("utf-8", "replace").decode("utf-8") != out or "\u2028" in out or "\u2029" in out:
        out = json.dumps(text)  # a lone surrogate or a line separator: escape all but ASCII
    return out


def duration(seconds: float) -> str:
    """A duration as the scenario language writes it: ``6s``, ``1.25s``, ``0.000001s``."""
    text = f"{max(0.0, seconds):.6f}".rstrip("0").rstrip(".")
    return f"{text or '0'}s"


def flow(pairs: Sequence[tuple[str, str]]) -> str:
    """A flow mapping of values already written as YAML: ``{a: 1, b: "x"}``."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


def commented(line: str, note: str) -> str:
    note = " ".join(note.split())
    return f"{line}  # {note}" if note else line


def step_line(placed: Placed) -> str:
    """One caller step as a list item, with its note."""
    return commented(f"  - {step_text(placed.step)}", placed.note)


def step_text(step: Step) -> str:
    """One caller step as the scenario language writes it: ``press: "1"``, ``silence: 6s``,
    ``hangup: {during: playPrompt, after: 1.5s}``. A live caller's moment (``At``) is not a
    step of the language: ``ValueError``."""
    if isinstance(step, Listen):
        return "listen"
    if isinstance(step, Press):
        keys = quote(step.digits)
        fields = [("digits", keys)]
        fields += [("gap", duration(step.gap))] if step.gap != DEFAULT_DIGIT_GAP else []
        fields += [("after", duration(step.after))] if step.after else []
        return f"press: {keys}" if len(fields) == 1 else f"press: {flow(fields)}"
    if isinstance(step, Say):
        return f"say: {quote(step.text)}"
    if isinstance(step, Silence):
        return f"silence: {duration(step.seconds)}"
    if isinstance(step, Talk):
        if step.then:
            return f"talk: {flow([('for', duration(step.seconds)), ('then', quote(step.then))])}"
        return f"talk: {duration(step.seconds)}"
    if isinstance(step, At):
        raise ValueError("a live caller's moment (at) is not a step of the scenario language")
    return _hangup(step)


def _hangup(step: HangUp) -> str:
    pairs = []
    if step.during is not None:
        pairs.append(("during", step.during.value))
    if step.after:
        pairs.append(("after", duration(step.after)))
    return f"hangup: {flow(pairs)}" if pairs else "hangup"


def outcome_line(index: int, outcome: JSONObject, at: str) -> str:
    """One outcome expectation: its type, outcome, completion reason, choice, digits, index."""
    pairs: list[tuple[str, str]] = []
    kind = _known(member(outcome, "type"))
    if kind in OUTCOME_TYPES:
        pairs.append(("type", kind))
    result = member(outcome, "outcome")
    if isinstance(result, str) and result.lower() in ("success", "failure"):
        pairs.append(("outcome", result.lower()))
    reason = _reason(outcome)
    if reason is not None:
        pairs.append(("completion_reason", reason))
    choice = member(member(outcome, "choiceOutcome"), "choiceName")
    if isinstance(choice, str):
        pairs.append(("choice", quote(choice)))
    digits = member(member(outcome, "collectDigitsOutcome"), "digits")
    if isinstance(digits, list):
        digits = "".join(str(d) for d in digits)
    if isinstance(digits, str) and _KEYS.match(digits):
        pairs.append(("digits", quote(digits)))
    pairs.append(("index", str(index)))
    return commented(f"    - {flow(pairs)}", at)


def _reason(outcome: JSONObject) -> str | None:
    for sub in ("choiceOutcome", "collectDigitsOutcome"):
        reason = _known(member(member(outcome, sub), "completionReason"))
        if reason in COMPLETION_REASONS:
            return reason
    reason = _known(member(outcome, "completionReason"))
    return reason if reason in COMPLETION_REASONS else None


def _known(value: JSON) -> str | None:
    return _BY_LOWER.get(value.lower()) if isinstance(value, str) else None


def recording_line(fmt: str, seconds: float, *, strict: bool) -> str | None:
    """The recording expectation: its format and length (loose: within its whole seconds)."""
    if fmt.lower() not in RECORDING_FORMATS:
        return None
    low, high = (seconds, seconds) if strict else (math.floor(seconds), math.ceil(seconds))
    length = flow([("min", duration(low)), ("max", duration(high))])
    return f"  recording: {flow([('format', fmt.lower()), ('length', length)])}"


_CALLBACK_FAULTS = (
    ("fail_callbacks", "fail_callback"),
    ("duplicate_callbacks", "duplicate_callback"),
    ("drop_callbacks", "drop_callback"),
    ("reject_workflows", "reject_workflow"),
)


def platform_lines(call: Recorded) -> list[str]:
    """The platform faults the call was placed with, as ``faults:`` (not ``slow_caller``: the
    silences it added are in the caller's steps), and ``platform: {legacy_validation_outcome:
    true}`` when the call posted the SDKs' spelling of the validation outcome, with
    ``prompt_timing: speech`` when the call timed its text prompts by their synthesized audio."""
    lines: list[str] = []
    faults = call.faults or {}
    for name, key in _CALLBACK_FAULTS:
        value = faults.get(name)
        numbers = sorted({n for n in value if isinstance(n, int) and n >= 1}) if isinstance(value, list) else []  # fmt: skip
        if numbers:
            lines.append(f"  {key}: [{', '.join(str(n) for n in numbers)}]")
    lines += [
        f"  {key}: true" for key in ("unknown_fields", "unknown_enums") if faults.get(key) is True
    ]
    out = ["faults:", *lines] if lines else []
    legacy = any(
        isinstance(kind := member(o, "type"), str) and kind.lower() == "worfklowvalidationoutcome"
        for _, o in call.outcomes
    )
    platform = [("legacy_validation_outcome", "true")] if legacy else []
    if call.prompt_timing == "speech":
        platform.append(("prompt_timing", "speech"))
    return [*out, f"platform: {flow(platform)}"] if platform else out
