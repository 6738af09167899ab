"""The record of one call: ``CallLog`` appends every event to the transcript store as it happens
(and hands it to a listener), keeps the call's findings (a repeated warning is counted, not
recorded again), and ``transcript_rows`` turns the engine's events into transcript rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Protocol

from emulator.calling.events import (
    ActionCompleted,
    ActionStarted,
    CallEnded,
    CallerHungUp,
    CallerPressed,
    CallerSilent,
    CallerSpoke,
    Event,
    StateChanged,
    TimerSet,
)
from emulator.findings import Finding, Rule, Severity
from emulator.jsonutil import JSON, JSONObject
from emulator.transcripts.store import EventKind

Listener = Callable[[str, JSONObject, float], None]
"""Called with (event kind, payload, virtual time) for every event, as it is recorded."""


class CallStore(Protocol):
    """Where a call's events go: ``TranscriptStore`` (SQLite), or a store that keeps only some
    calls (``emulator.load``: every failing call and a sample of the rest)."""

    def start(self, *, bot: str, kind: str = ..., call_id: str | None = ...,
              caller: str | None = ..., chain_id: str | None = ...,
              scenario: str | None = ...) -> str: ...  # fmt: skip

    def append(self, call_id: str, kind: str, payload: dict[str, JSON], *,
               vtime: float | None = ..., blob: bytes | None = ...) -> int: ...  # fmt: skip

    def count_workflow(self, call_id: str) -> None: ...

    def finish(self, call_id: str, *, reason: str, passed: bool | None = ...) -> None: ...


class CallLog:
    """The transcript and findings of one call, at its virtual time ``vtime``."""

    def __init__(self, store: CallStore, call_id: str, listener: Listener | None) -> None:
        self.store = store
        self.call_id = call_id
        self.listener = listener
        self.vtime = 0.0
        self.findings: list[Finding] = []

    def record(self, kind: str, payload: JSONObject, blob: bytes | None = None) -> None:
        self.store.append(self.call_id, kind, payload, vtime=self.vtime, blob=blob)
        if self.listener is not None:
            self.listener(kind, payload, self.vtime)

    def finding(self, finding: Finding) -> None:
        """Record a finding. A warning this call already found at the same place (rule and
        where) is not recorded again: its first finding counts it (``Finding.count``), and a
        note at the end of the call says how often it repeated. Errors are never folded."""
        if finding.severity is Severity.WARNING:
            for index, seen in enumerate(self.findings):  # a few distinct findings per call
                if (seen.rule, seen.where, seen.severity) == (finding.rule, finding.where,
                                                              Severity.WARNING):  # fmt: skip
                    self.findings[index] = replace(seen, count=seen.count + 1)
                    return
        self.findings.append(finding)
        self.record(EventKind.FINDING, {"summary": str(finding), **finding.to_json()})

    def found(self, rule: Rule, where: str, message: str) -> None:
        self.finding(Finding(rule.id, rule.severity, where, message))

    def note_repeats(self) -> None:
        """One note for each warning ``finding`` folded: how often it repeated."""
        for f in self.findings:
            if f.count > 1:
                more = f.count - 1
                self.record(EventKind.NOTE, {
                    "summary": f"{f.severity.value} {f.rule} at {f.where} repeated {more} more "
                    f"time{'s' if more > 1 else ''} in this call (recorded once, above)",
                    "repeated": {"rule": f.rule, "severity": f.severity.value, "where": f.where,
                                 "count": f.count},
                })  # fmt: skip


LIVE_TIMER = "live.timer"
"""The kind of a live call's timer rows (``transcript_rows(timers=True)``): told to the live
caller's page, never recorded."""


def transcript_rows(
    events: Sequence[Event], *, timers: bool = False
) -> Iterator[tuple[float, str, JSONObject]]:
    """(time, kind, payload) of the transcript row of each engine event, in order: one "action"
    row per action, written at its end; one row per run of keys pressed; no row for the end of
    the call (the session records it, with its final reason). A timer (``TimerSet``) has a row
    of kind ``LIVE_TIMER`` with ``timers`` (a live call), none otherwise; there a run of keys
    ends at each timer it set, so that a key a live caller presses later in the run adds rows
    and moves none (a live call is played by row index, ``liveplay.due_rows``)."""
    started: dict[str, float] = {}
    index = 0
    while index < len(events):
        event = events[index]
        index += 1
        if isinstance(event, CallEnded):
            continue
        if isinstance(event, TimerSet):
            if timers:
                yield event.at, LIVE_TIMER, event.to_json()
            continue
        if isinstance(event, ActionStarted):
            started[event.operation_id] = event.at
            continue
        if isinstance(event, CallerPressed):  # one row per run of keys: "pressed 1234#"
            keys = [event]
            while index < len(events) and isinstance(events[index], CallerPressed | TimerSet):
                if isinstance(events[index], TimerSet) and timers:
                    break  # a live call: each key's row, then the timer it set
                if isinstance(events[index], CallerPressed):
                    keys.append(events[index])  # type: ignore[arg-type]
                index += 1
            yield keys[-1].at, EventKind.CALLER, _pressed(keys)
            continue
        payload = event.to_json()
        payload["summary"] = event.describe()
        if isinstance(event, ActionCompleted):
            payload["kind"] = "action"
            payload["start"] = started.pop(event.operation_id, event.at)
        yield event.at, _kind_of(event), payload


def _pressed(keys: list[CallerPressed]) -> JSONObject:
    """One transcript event for keys pressed one after another."""
    digits = "".join(k.key for k in keys)
    return {
        "kind": "caller pressed",
        "at": round(keys[0].at, 6),
        "keys": digits,
        "times": [round(k.at, 6) for k in keys],
        "summary": f"caller pressed {digits}",
    }


def _kind_of(event: Event) -> str:
    kind = _KINDS.get(type(event))
    if kind is None:
        if isinstance(event, CallerPressed | CallerSpoke | CallerSilent | CallerHungUp):
            kind = EventKind.CALLER
        elif isinstance(event, StateChanged):
            kind = EventKind.STATE
        else:
            kind = EventKind.PLATFORM
        _KINDS[type(event)] = kind
    return kind


_KINDS: dict[type[Event], str] = {}
"""Event class -> transcript kind, learnt on first sight (``_kind_of`` is on the hot path)."""
