"""Input turns in virtual time: what recognize and record make of the caller's steps.

A *machine* is the platform's side of one input action: a deadline (when it completes if nothing
more happens) and reactions to keys, speech and a hangup. ``drive`` feeds it the caller's steps,
one after another from the moment the turn opens, until it completes. Steps that had not started
by then stay for the next turn. The machines are in ``machines.py`` (re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

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
from emulator.calling.events import (
    CallerPressed,
    CallerSilent,
    CallerSpoke,
    Event,
    InputIgnored,
    TimerSet,
)
from emulator.calling.machines import (
    ChoiceMachine,
    DigitsMachine,
    Done,
    Machine,
    RecordMachine,
    recognize_machine,
    system_failure,
    timer,
)
from emulator.calling.speech import speech_seconds
from emulator.calling.values import quick_init

__all__ = [
    "ChoiceMachine",
    "DigitsMachine",
    "Done",
    "Machine",
    "Played",
    "RecordMachine",
    "Turn",
    "drive",
    "recognize_machine",
    "system_failure",
    "timer",
]

INF = math.inf


@quick_init
@dataclass(frozen=True, slots=True)
class Played:
    """How far a playPrompt got: its end time, whether it was cut short, a media failure."""

    end: float
    cut: bool
    failure: str | None = None


@dataclass(slots=True)
class Turn:
    """What one input turn did."""

    done: Done
    cursor: int
    events: list[Event] = field(default_factory=list)
    barge_in_at: float | None = None
    """When the first input the action acted on came (it stops a prompt still playing)."""
    hung_up_at: float | None = None
    """When the caller hung up, if it did by the time the action completed."""
    hangup_at: float | None = None
    """When the caller will hang up (now, or later), once it has reached a hangup step."""


def drive(
    machine: Machine,
    steps: Sequence[Step],
    cursor: int,
    start: float,
    hangup_at: float | None,
) -> Turn:
    """Feed the caller's steps from ``cursor``, starting at ``start``, until the action completes."""
    driver = _Driver(machine, hangup_at)
    t = start
    index = cursor
    count = len(steps)
    while index < count and driver.result is None:
        step = steps[index]
        if isinstance(step, Listen):
            index += 1
            continue
        if isinstance(step, At):  # a live caller's moment: the action may complete before it
            if driver.stop_before(step.at):
                break
            t, index = max(t, step.at), index + 1
            continue
        if isinstance(step, HangUp):
            if step.during is None:
                driver.pending = min(driver.pending, t + step.after)
                index += 1
            break  # a hangup waiting for another action: the caller gives no more input now
        if driver.stop_before(t):
            break
        index += 1
        t = driver.step(step, t)
    driver.stop_before(INF)
    result = driver.result
    assert result is not None
    pending = driver.pending
    hung = pending if pending <= result.at else None
    return Turn(
        result, index, driver.events, driver.heard, hung, None if pending == INF else pending
    )


class _Driver:
    __slots__ = ("events", "heard", "machine", "pending", "result")

    def __init__(self, machine: Machine, hangup_at: float | None) -> None:
        self.machine = machine
        self.pending = INF if hangup_at is None else hangup_at
        self.result: Done | None = None
        self.events: list[Event] = []
        self.heard: float | None = None

    def stop_before(self, at: float) -> bool:
        """Complete the action if its deadline or the caller's hangup comes no later than ``at``."""
        if self.result is not None:
            return True
        deadline = self.machine.deadline
        if deadline <= at and deadline <= self.pending:
            self.result = self.machine.timeout()
        elif self.pending <= at:
            self.result = self.machine.hang(self.pending)
        return self.result is not None

    def react(self, at: float, reaction: Done | bool, shown: str) -> None:
        if isinstance(reaction, Done):
            if reaction.at > self.pending:
                reaction = self.machine.hang(self.pending)
            self.result = reaction
            self.heard = at if self.heard is None else self.heard
        elif reaction:
            self.heard = at if self.heard is None else self.heard
            self.events.append(timer(self.machine, at))
        else:
            self.events.append(InputIgnored(at, shown, self.machine.ignored))

    def keys(self, digits: str, t: float, gap: float) -> float:
        """Press ``digits`` from ``t``, ``gap`` apart; the time of the last key pressed. Every key
        is the hot path of a call: ``stop_before`` and the timer a key sets are written out."""
        machine, events, pending = self.machine, self.events, self.pending
        op = machine.action.operation_id
        for i, key in enumerate(digits):
            at = t + i * gap
            deadline = machine.deadline  # stop_before(at); no result yet
            if deadline <= at and deadline <= pending:
                self.result = machine.timeout()
                return at
            if pending <= at:
                self.result = machine.hang(pending)
                return at
            events.append(CallerPressed(at, key))
            reaction = machine.key(at, key)
            if reaction is True:  # the key moved the timer
                if self.heard is None:
                    self.heard = at
                events.append(TimerSet(at, op, machine.deadline, machine.reason._value_,
                                       machine.limit))  # fmt: skip
                continue
            self.react(at, reaction, f"key {key}")
            if self.result is not None:
                return at
        return t + max(0, len(digits) - 1) * gap

    def step(self, step: Step, t: float) -> float:
        """Run one step from ``t``; its end time."""
        if isinstance(step, Press):
            return self.keys(step.digits, t + step.after, step.gap)
        if isinstance(step, Silence):
            end = t + step.seconds
            self.stop_before(end)
            stop = min(end, self.result.at) if self.result is not None else end
            self.events.append(CallerSilent(t, stop))
            return end
        if isinstance(step, Say | Talk):
            text = step.text if isinstance(step, Say) else None
            end = t + (speech_seconds(step.text) if isinstance(step, Say) else step.seconds)
            self.events.append(CallerSpoke(t, end, text))
            reaction = self.machine.speech(t, end, text)
            self.react(t, reaction, f"speech {text!r}" if text else "talk")
            if reaction is True and not self.stop_before(end):
                self.events.append(timer(self.machine, end))  # the silence counts from here
            if self.result is None and isinstance(step, Talk) and step.then:
                if not self.stop_before(end):
                    return self.keys(step.then, end, DEFAULT_DIGIT_GAP)
            return end
        return t
