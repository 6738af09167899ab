"""Judging the call as a whole (EXP-CALL: answered or rejected, ended by whom, final callState,
workflows, duration) and its recording (EXP-RECORDING)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from emulator.findings import Finding
from emulator.scenario.facts import Facts, as_number, lower
from emulator.scenario.judging import Judge, count, event_line
from emulator.scenario.model import CallExpect, RecordingExpect
from emulator.scenario.rules import EXP_CALL, EXP_RECORDING

Check = Callable[[bool, str], None]
"""Records a finding with ``message`` unless ``ok``."""


def judge_call(judge: Judge, e: CallExpect) -> list[Finding]:
    """EXP-CALL: every condition of the call as a whole that does not hold, one finding each."""
    if not judge.is_call:
        return [
            judge.fail(
                EXP_CALL.id,
                e.line,
                f"expected a call, but this scenario is "
                f"{judge.noun}: call-level expectations belong to calls",
            )
        ]
    f = judge.facts
    evidence = [event_line(x) for x in [*f.states, *([f.end] if f.end else [])]]
    out: list[Finding] = []

    def check(ok: bool, message: str) -> None:
        if not ok:
            out.append(judge.fail(EXP_CALL.id, e.line, message, evidence))

    _judge_ending(e, f, check)
    _judge_size(e, f, check)
    return out


def _judge_ending(e: CallExpect, f: Facts, check: Check) -> None:
    """How the call ended: answered, rejected, by whom."""
    ended = f.end_reason or "not ended"
    if e.answered is not None:
        got = f.answered()
        check(
            got == e.answered,
            f"expected the call {_to_be(e.answered)}answered, got "
            f"{'answered' if got else 'never answered'} ({ended})",
        )
    if e.rejected is not None:
        got = ended == "bot rejected"
        check(
            got == e.rejected,
            f"expected the call {_to_be(e.rejected)}rejected by the bot, got {ended}",
        )
    if e.ended_by is not None:
        who = f.ended_by()
        allowed = (e.ended_by,) if isinstance(e.ended_by, str) else e.ended_by
        check(
            who in allowed,
            f"expected the call to be ended by the {_either(allowed)}, got "
            + (f"ended by the {who} ({ended})" if who else ended),
        )


def _judge_size(e: CallExpect, f: Facts, check: Check) -> None:
    """Where the call ended and how long it was: callState, workflows, duration."""
    if e.final_state is not None:
        state = f.final_state()
        check(
            lower(state) == e.final_state.lower(),
            f"expected final callState {e.final_state}, got {state or 'none'}",
        )
    if e.max_workflows is not None:
        check(
            f.workflows <= e.max_workflows,
            f"expected at most {count(e.max_workflows, 'workflow')}, got {f.workflows}",
        )
    seconds = f.vtime or 0.0
    if e.min_duration is not None:
        check(
            seconds >= e.min_duration,
            f"expected the call to last at least {e.min_duration:g}s, got {seconds:.2f}s",
        )
    if e.max_duration is not None:
        check(
            seconds <= e.max_duration,
            f"expected the call to last at most {e.max_duration:g}s, got {seconds:.2f}s",
        )


def judge_recording(judge: Judge, e: RecordingExpect) -> list[Finding]:
    """EXP-RECORDING: a recording in the expected format and length was made."""
    made = judge.facts.recordings
    want = _describe_recording(e)
    if not made:
        return [
            judge.fail(
                EXP_RECORDING.id,
                e.line,
                f"expected a recording{want}, got none",
                ["(no recording was sent to the bot)"],
            )
        ]
    for event in made:
        fmt, seconds = event.payload.get("format"), as_number(event.payload.get("seconds"))
        if e.format is not None and lower(fmt) != e.format.lower():
            continue
        if e.min_length is not None and (seconds is None or seconds < e.min_length):
            continue
        if e.max_length is not None and (seconds is None or seconds > e.max_length):
            continue
        return []
    got = "; ".join(
        f"{r.payload.get('format')}, {as_number(r.payload.get('seconds')) or 0:g}s" for r in made
    )
    return [
        judge.fail(
            EXP_RECORDING.id,
            e.line,
            f"expected a recording{want}, got {got}",
            [event_line(r) for r in made],
        )
    ]


def _describe_recording(e: RecordingExpect) -> str:
    parts = []
    if e.format is not None:
        parts.append(f"in {e.format}")
    if e.min_length is not None:
        parts.append(f"at least {e.min_length:g}s long")
    if e.max_length is not None:
        parts.append(f"at most {e.max_length:g}s long")
    return (" " + ", ".join(parts)) if parts else ""


def _either(names: Sequence[str]) -> str:
    """``bot`` / ``bot or caller`` / ``bot, caller or platform``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def _to_be(flag: bool) -> str:
    return "to be " if flag else "not to be "
