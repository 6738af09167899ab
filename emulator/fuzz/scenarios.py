"""A failure's caller as a scenario that fails the same way: checked by calls, and written.

After the search, each failure's smallest caller is played again as a written script (the steps
it drew, in order). ``tidy`` then tries it without its last hang-up and without each single step,
keeping a shorter script only when it still fails with the same rule in the same state, until
nothing more can go (at most ``len(steps) ** 2`` calls). A failure that does not come back when
replayed is kept as it is and said to be unconfirmed (a bot that answers one caller two ways).

``scenario_text`` writes the scenario: the schema line, a comment naming how it was found, the
caller's steps, the faults, and, for a call that never ended, ``expect: call: {ended_by: [bot,
caller]}`` (an error finding fails a scenario by itself).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from emulator.calling.caller import (
    Step,
)
from emulator.calling.faults import PlatformFaults
from emulator.fuzz.verdict import NEVER_ENDS, Failure
from emulator.replay.writing import step_text

Replay = Callable[[tuple[Step, ...], PlatformFaults], Awaitable[Failure | None]]
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
    while shorter and not past():
        shorter = False
        for steps in _fewer(best.steps):
            if past():
                break
            calls += 1
            tried = await replay(steps, best.faults)
            if tried is not None and (tried.rule, tried.state) == (best.rule, best.state):
                best, shorter = replace(tried, steps=steps), True
                break
    return Confirmed(best, True, calls)


def _fewer(steps: tuple[Step, ...]) -> list[tuple[Step, ...]]:
    """Each script one step shorter: without the last hang-up first, then without each step
    from the last to the first."""
    return [steps[:i] + steps[i + 1 :] for i in range(len(steps) - 1, -1, -1)]


def scenario_text(failure: Failure, *, bot: str, seed: int, confirmed: bool) -> str:
    """The YAML scenario of ``failure``. Its schema line names the package's schema by its
    absolute path, which holds wherever the file goes."""
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
        "" if confirmed else " It did not fail again when replayed: the bot may not answer alike."
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
