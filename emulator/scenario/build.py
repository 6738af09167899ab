"""Checked scenario data (variables substituted, valid against the schema) to model values.

The schema has already said everything it can; what is left here is what it cannot express:
steps through the caller model, durations, regular expressions that must compile, ranges whose
minimum must not exceed their maximum, expectations and faults that only make sense for one kind
of scenario, and the splicing of included files. Every problem is reported to a ``Site``: the
file (and variables) the data came from, which knows where each path is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from emulator.calling.caller import (
    CallerScript,
    Step,
    WhenRule,
    parse_duration,
    parse_step,
    regex_problem,
)
from emulator.errors import CallerScriptError
from emulator.patterns import compile_pattern
from emulator.scenario.model import (
    CallExpect,
    ChoicesExpect,
    EndedBy,
    Expectation,
    Faults,
    FindingsExpect,
    Kind,
    LatencyExpect,
    OutcomeExpect,
    Platform,
    ProbeName,
    PromptExpect,
    RecordingExpect,
    ReplyExpect,
    TextMatch,
    Turn,
)
from emulator.scenario.yamldoc import DataPath, short

Data = Any
"""A value of checked scenario data: the schema has validated its shape."""

CALL_EXPECTATIONS = ("call", "prompts", "choices", "outcomes", "recording")
CONVERSATION_EXPECTATIONS = ("replies",)
PROBE_EXPECTATIONS = ("findings",)
CALL_FAULTS = (
    "fail_callback",
    "duplicate_callback",
    "drop_callback",
    "slow_caller",
    "reject_workflow",
)
_OF_KIND = {
    "call": "a call (caller:)",
    "conversation": "a conversation (messaging:)",
    "probe": "a probe (probe:)",
}


MAX_STEPS = 10_000
"""Steps (or turns) one scenario may have once its includes are spliced, each include counted
as one: a few small files that include each other ten times over would otherwise make
millions."""


class Site(Protocol):
    """Where data comes from: reports problems at paths, and opens included files."""

    def problem(self, path: DataPath, message: str, *, at_key: bool = False) -> None: ...

    def count(self, path: DataPath) -> None:
        """One more step, turn or include at ``path`` in the scenario; past ``MAX_STEPS`` it
        raises (an exception of the site's own, which ends the building of the scenario)."""
        ...

    def line(self, path: DataPath) -> int:
        """The line in the scenario file of the key (or item) at ``path``."""
        ...

    def include(self, path: DataPath, file: str) -> tuple[Site, Data] | None:
        """The site and the (substituted, checked) list of the file an include at ``path``
        names; None when it cannot be included (the problem is reported)."""
        ...


@dataclass(frozen=True, slots=True)
class Parts:
    """What happens and what is expected, read from one scenario document."""

    caller: CallerScript | None
    messaging: tuple[Turn, ...] | None
    expect: tuple[Expectation, ...]
    faults: Faults
    probe: ProbeName | None = None
    platform: Platform = field(default_factory=Platform)


def kind_of(doc: Data) -> Kind:
    if "caller" in doc:
        return "call"
    return "probe" if "probe" in doc else "conversation"


def parts(doc: Data, site: Site) -> Parts:
    kind = kind_of(doc)
    caller = _caller(doc["caller"], ("caller",), site) if kind == "call" else None
    messaging = turns(doc["messaging"], ("messaging",), site) if kind == "conversation" else None
    probe: ProbeName | None = doc["probe"] if kind == "probe" else None
    expect = expectations(doc.get("expect", {}), ("expect",), kind, site)
    faults = _faults(doc.get("faults", {}), ("faults",), kind, site)
    platform = _platform(doc.get("platform", {}), ("platform",), kind, site)
    if "channel" in doc and kind != "conversation":
        site.problem(("channel",), "a channel applies to conversations; this scenario is a "
                     + kind, at_key=True)  # fmt: skip
    return Parts(caller, messaging, expect, faults, probe, platform)


def _platform(value: Data, path: DataPath, kind: Kind, site: Site) -> Platform:
    if not value:
        return Platform()
    if kind != "call":
        site.problem(path, "platform settings apply to calls; this scenario is a " + kind,
                     at_key=True)  # fmt: skip
        return Platform()
    timing = value.get("prompt_timing")
    return Platform(value.get("app_id"), bool(value.get("legacy_validation_outcome", False)),
                    timing if isinstance(timing, str) else None)  # fmt: skip


# --- what happens ------------------------------------------------------------------------------


def _caller(value: Data, path: DataPath, site: Site) -> CallerScript:
    if isinstance(value, list):
        return CallerScript(steps(value, path, site))
    rules: list[WhenRule] = []
    for index, rule in enumerate(value.get("when", ())):
        at = (*path, "when", index)
        problem = regex_problem(rule["prompt"])
        if problem is not None:
            site.problem((*at, "prompt"), problem)
            continue
        rules.append(
            WhenRule(rule["prompt"], steps(rule["do"], (*at, "do"), site), rule.get("once", False))
        )
    return CallerScript(steps(value.get("steps", ()), (*path, "steps"), site), tuple(rules))


def steps(items: Sequence[Data], path: DataPath, site: Site) -> tuple[Step, ...]:
    """Caller steps, with the steps of included files spliced in."""
    out: list[Step] = []
    for index, item in enumerate(items):
        at = (*path, index)
        site.count(at)
        if isinstance(item, dict) and "include" in item:
            found = site.include(at, item["include"])
            if found is not None:
                out += steps(found[1], (), found[0])
            continue
        try:
            out.append(parse_step(item, where(at)))
        except CallerScriptError as e:
            site.problem(data_path(e.where), e.message)
    return tuple(out)


def turns(items: Sequence[Data], path: DataPath, site: Site) -> tuple[Turn, ...]:
    """User turns, with the turns of included files spliced in."""
    out: list[Turn] = []
    for index, item in enumerate(items):
        at = (*path, index)
        site.count(at)
        line = site.line(at)
        if isinstance(item, str):
            out.append(Turn("message", text=item, line=line))
            continue
        if "include" in item:
            found = site.include(at, item["include"])
            if found is not None:
                out += turns(found[1], (), found[0])
            continue
        wait = _seconds(item["wait"], (*at, "wait"), site) if "wait" in item else None
        if "say" in item:
            out.append(Turn("message", text=item["say"], wait=wait, line=line))
        elif "event" in item or "invoke" in item:
            kind: Literal["event", "invoke"] = "event" if "event" in item else "invoke"
            activity = item[kind]
            name, value = activity["name"], activity.get("value")
            out.append(Turn(kind, name=name, value=value, wait=wait, line=line))
        elif "sign_in" in item:
            given = item["sign_in"]
            who = "refuse:" if given == "refuse" else str(given["as"])
            out.append(Turn("signIn", text=who, wait=wait, line=line))
        else:
            out.append(Turn("conversationUpdate", wait=wait, line=line))
    return tuple(out)


# --- expectations -------------------------------------------------------------------------------


def expectations(expect: Data, path: DataPath, kind: Kind, site: Site) -> tuple[Expectation, ...]:
    out: list[Expectation] = []
    for key, value in expect.items():
        at = (*path, key)
        if _misplaced(key, kind, at, site):
            continue
        out += _expectation(key, value, at, site)
    return tuple(out)


def _misplaced(key: str, kind: Kind, at: DataPath, site: Site) -> bool:
    """Whether the expectation ``key`` belongs to another kind of scenario (reported)."""
    belongs = _expected_of(key)
    if kind == "probe" and key not in PROBE_EXPECTATIONS:
        of = "a call or a conversation" if belongs == "any" else _OF_KIND[belongs]
        message = f"'{key}' is expected of {of}, not a probe: a probe is judged by its findings"
        site.problem(at, message, at_key=True)
        return True
    if belongs != kind and belongs != "any":
        kind_name = "a call" if kind == "call" else "a conversation"
        site.problem(
            at, f"'{key}' is expected of {_OF_KIND[belongs]}, not {kind_name}", at_key=True
        )
        return True
    return False


def _expectation(key: str, value: Data, at: DataPath, site: Site) -> list[Expectation]:
    """The expectations ``key: value`` of ``expect`` makes (a list makes one per item)."""
    line = site.line(at)
    if key == "call":
        return [_call(value, at, line, site)]
    if key == "prompts":
        items = tuple(
            _prompt(item, (*at, "items", i), site) for i, item in enumerate(value["items"])
        )
        return [PromptExpect(items, value.get("in_order", True), line)]
    if key == "choices":
        return [
            ChoicesExpect(tuple(item["names"]), item.get("index"), site.line((*at, i)))
            for i, item in enumerate(value)
        ]
    if key == "outcomes":
        return [_outcome(item, site.line((*at, i))) for i, item in enumerate(value)]
    if key == "recording":
        low, high = _range(value.get("length"), (*at, "length"), site)
        return [RecordingExpect(value.get("format"), low, high, line)]
    if key == "replies":
        return [_reply(item, (*at, i), site) for i, item in enumerate(value)]
    if key == "latency":
        return [LatencyExpect(float(value["p95_ms"]), line)]
    if value == "none":  # findings
        return [FindingsExpect(none=True, line=line)]
    return [FindingsExpect(none=False, rules=tuple(value), line=line)]


def _call(value: Data, at: DataPath, line: int, site: Site) -> CallExpect:
    low, high = _range(value.get("duration"), (*at, "duration"), site)
    return CallExpect(
        answered=value.get("answered"),
        rejected=value.get("rejected"),
        ended_by=_ended_by(value.get("ended_by")),
        final_state=value.get("final_state"),
        max_workflows=value.get("max_workflows"),
        min_duration=low,
        max_duration=high,
        line=line,
    )


def _expected_of(key: str) -> Literal["call", "conversation", "any"]:
    if key in CALL_EXPECTATIONS:
        return "call"
    return "conversation" if key in CONVERSATION_EXPECTATIONS else "any"


def _ended_by(value: Data) -> EndedBy | tuple[EndedBy, ...] | None:
    """``bot`` stays a string; a list is every one of its entries (any of them passes)."""
    if isinstance(value, list):
        return tuple(value)
    return cast(EndedBy | None, value)


def _outcome(item: Data, line: int) -> OutcomeExpect:
    digits = item.get("digits")
    return OutcomeExpect(
        type=item.get("type"),
        outcome=item.get("outcome"),
        completion_reason=item.get("completion_reason"),
        choice=item.get("choice"),
        digits=None if digits is None else str(digits),
        index=item.get("index"),
        line=line,
    )


def _reply(item: Data, path: DataPath, site: Site) -> ReplyExpect:
    text = _text(item["text"], (*path, "text"), site) if "text" in item else None
    actions = item.get("suggested_actions")
    return ReplyExpect(
        text=text,
        type=item.get("type"),
        attachments=item.get("attachments"),
        suggested_actions=None if actions is None else tuple(actions),
        streamed=item.get("streamed"),
        chunks=item.get("chunks"),
        index=item.get("index"),
        line=site.line(path),
    )


def _prompt(item: Data, path: DataPath, site: Site) -> TextMatch | str:
    if isinstance(item, dict) and "file" in item:
        for key in item:
            if key != "file":
                message = f"unexpected key '{key}' beside 'file': a prompt is matched by its text or its file, not both"
                site.problem((*path, key), message, at_key=True)
        return str(item["file"])
    return _text(item, path, site)


def _text(value: Data, path: DataPath, site: Site) -> TextMatch:
    if isinstance(value, str):
        return TextMatch(contains=value)
    pattern = value.get("matches")
    if pattern is not None:
        problem = _regex(pattern)
        if problem is not None:
            site.problem((*path, "matches"), problem)
    return TextMatch(value.get("equals"), value.get("contains"), pattern)


def _regex(pattern: str) -> str | None:
    """Expectations match case-sensitively, as written (``(?i)`` makes a pattern ignore case)."""
    try:
        compile_pattern(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        return f"not a valid regular expression: {e}"
    return None


def _range(value: Data, path: DataPath, site: Site) -> tuple[float | None, float | None]:
    if value is None:
        return None, None
    low = _seconds(value["min"], (*path, "min"), site) if "min" in value else None
    high = _seconds(value["max"], (*path, "max"), site) if "max" in value else None
    if low is not None and high is not None and low > high:
        high_text, low_text = short(str(value["max"])), short(str(value["min"]))
        site.problem((*path, "max"), f"max ({high_text}) is less than min ({low_text})")
    return low, high


def _seconds(value: Data, path: DataPath, site: Site) -> float | None:
    try:
        return parse_duration(value, where(path))
    except CallerScriptError as e:
        site.problem(path, e.message)
        return None


# --- faults ------------------------------------------------------------------------------------


def _faults(value: Data, path: DataPath, kind: Kind, site: Site) -> Faults:
    if kind == "conversation":
        for key in value:
            if key in CALL_FAULTS:
                message = f"'{key}' is a fault of a call (caller:), not of a conversation"
                site.problem((*path, key), message, at_key=True)
    if kind == "probe":
        for key in value:
            message = (
                f"'{key}' is a fault of a call (caller:), not of a probe: a probe runs as it is"
            )
            site.problem((*path, key), message, at_key=True)

    def numbers(key: str) -> tuple[int, ...]:
        given = value.get(key, ())
        return (given,) if isinstance(given, int) else tuple(given)

    failed, duplicated, dropped, rejected = (
        numbers("fail_callback"),
        numbers("duplicate_callback"),
        numbers("drop_callback"),
        numbers("reject_workflow"),
    )
    for number in dropped:
        for key, others in (("fail_callback", failed), ("duplicate_callback", duplicated)):
            if number in others:
                message = f"callback {number} is dropped, so it cannot also be in {key}"
                site.problem((*path, "drop_callback"), message)
    delay = value.get("slow_caller")
    return Faults(
        fail_callbacks=failed,
        duplicate_callbacks=duplicated,
        drop_callbacks=dropped,
        unknown_fields=value.get("unknown_fields", False),
        unknown_enums=value.get("unknown_enums", False),
        caller_delay=(_seconds(delay, (*path, "slow_caller"), site) or 0.0)
        if delay is not None
        else 0.0,
        reject_workflows=rejected,
    )


# --- paths -------------------------------------------------------------------------------------


def where(path: DataPath) -> str:
    """``("caller", 2, "press")`` -> ``caller[2].press`` (the caller model's ``where``)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def data_path(text: str) -> DataPath:
    """``caller[2].press.gap`` -> ``("caller", 2, "press", "gap")``."""
    return tuple(int(m[1]) if m[1] else m[2] for m in re.finditer(r"\[(\d+)\]|([^.\[\]]+)", text))
