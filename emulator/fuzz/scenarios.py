"""A failure's caller as a scenario that fails the same way: checked by calls, and written.

After the search, each failure's smallest caller is played again as a written script (the steps
it drew, in order). ``tidy`` then shrinks it until it is 1-minimal: it tries it without each
single step, without each key of a key string, with a second less of each silence or talk,
without each word said, a hang-up at once instead of one during an action, a second sooner, and
without a key's delay or a talk's closing key (``smaller``), keeping a smaller script only when
it still fails with the same rule in the same state, until nothing more can go (each kept script
is smaller, so this ends; at most ``MAX_REPLAYS`` calls). A failure that does not come back when
replayed is kept as it is and said to be unconfirmed (a bot that answers one caller two ways).

``scenario_text`` writes the scenario: the schema line, a comment naming how it was found, the
caller's steps, the faults, and, for a call that never ended, ``expect: call: {ended_by: [bot,
caller]}`` (an error finding fails a scenario by itself).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from emulator.calling.caller import HangUp, Press, Say, Silence, Step, Talk
from emulator.calling.faults import PlatformFaults
from emulator.fuzz.verdict import NEVER_ENDS, Failure
from emulator.replay.writing import step_text

Replay = Callable[[tuple[Step, ...], PlatformFaults], Awaitable[Failure | None]]
MAX_REPLAYS = 400
"""At most this many calls tidy one failure."""
SCHEMA = Path(__file__).resolve().parent.parent / "scenario" / "schema.json"


@dataclass
class Confirmed:
    failure: Failure
    confirmed: bool
    replays: int


async def tidy(
    failure: Failure, replay: Replay, past: Callable[[], bool] = lambda: False
) -> Confirmed:
    """``failure`` replayed, then made as short as it will go (see the module's docstring), or
    as short as it got when ``past()`` (the search's time is up)."""
    again = await replay(failure.steps, failure.faults)
    calls = 1
    if again is None or (again.rule, again.state) != (failure.rule, failure.state):
        return Confirmed(failure, False, calls)
    best = again
    shorter = True
    while shorter and not past() and calls < MAX_REPLAYS:
        shorter = False
        for steps in smaller(best.steps):
            if past() or calls >= MAX_REPLAYS:
                break
            calls += 1
            tried = await replay(steps, best.faults)
            if tried is not None and (tried.rule, tried.state) == (best.rule, best.state):
                best, shorter = replace(tried, steps=steps), True
                break
    return Confirmed(best, True, calls)


def smaller(steps: tuple[Step, ...]) -> Iterator[tuple[Step, ...]]:
    """Each script one removal smaller than ``steps``: without one step (the last first), then
    each step made smaller in one way (``_smaller_step``)."""
    for i in range(len(steps) - 1, -1, -1):
        yield steps[:i] + steps[i + 1 :]
    for i, step in enumerate(steps):
        for less in _smaller_step(step):
            yield (*steps[:i], less, *steps[i + 1 :])


def _smaller_step(step: Step) -> Iterator[Step]:
    if isinstance(step, Press):
        if len(step.digits) > 1:
            for j in range(len(step.digits)):
                yield replace(step, digits=step.digits[:j] + step.digits[j + 1 :])
        if step.after:
            yield replace(step, after=max(0.0, step.after - 1))
    elif isinstance(step, Silence | Talk):
        if step.seconds > 1:
            yield replace(step, seconds=step.seconds - 1)
        if isinstance(step, Talk) and step.then:
            yield replace(step, then=None)
    elif isinstance(step, Say):
        words = step.text.split()
        for j in range(len(words) if len(words) > 1 else 0):
            yield Say(" ".join(words[:j] + words[j + 1 :]))
    elif isinstance(step, HangUp):
        if step.during is not None:
            yield HangUp()
        if step.after:
            yield replace(step, after=max(0.0, step.after - 1))


def scenario_text(
    failure: Failure, *, bot: str, seed: int, confirmed: bool, replayed: bool = True
) -> str:
    """The YAML scenario of ``failure``. Its schema line names the package's schema by its
    absolute path, which holds wherever the file goes. Not ``confirmed``: it did not fail again
    when replayed, or (not ``replayed``) the search's time ran out before it was."""
    schema = SCHEMA
    head: dict[str, Any] = {
        "name": f"fuzz: {failure.rule} in state {failure.state}",
        "description": failure.message[:500],
        "tags": ["fuzz"],
    }
    tail: dict[str, Any] = {}
    faults = faults_data(failure.faults)
    if faults:
        tail["faults"] = faults
    if failure.rule in NEVER_ENDS.values():
        tail["expect"] = {"call": {"ended_by": ["bot", "caller"]}}
    note = (
        ""
        if confirmed
        else " It did not fail again when replayed: the bot may not answer alike."
        if replayed
        else " It was not replayed to confirm it: the search's time ran out first."
    )
    lines = [
        f"# yaml-language-server: $schema={schema}",
        f"# Found by botemu fuzz --seed {seed} against {bot}: {failure.rule} in state "
        f"{failure.state} (call {failure.call_id}).{note}",
        _dump(head).rstrip("\n"),
        "caller:" + ("" if failure.steps else " []"),
        *(f"  - {step_text(step)}" for step in failure.steps),
    ]
    if tail:
        lines.append(_dump(tail).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _dump(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def faults_data(faults: PlatformFaults) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if faults.fail_callbacks:
        data["fail_callback"] = list(faults.fail_callbacks)
    if faults.duplicate_callbacks:
        data["duplicate_callback"] = list(faults.duplicate_callbacks)
    if faults.unknown_fields:
        data["unknown_fields"] = True
    if faults.unknown_enums:
        data["unknown_enums"] = True
    return data
