"""Shrinking is 1-minimal, for each kind of step: after ``tidy``, no step, key, word, second of
silence or talk, or hang-up moment can be taken away and the caller still fail the same way.

Each bot here is a rule over the caller's steps (a stand-in for a call): the failure comes when
the rule holds. The caller the search found is padded with steps the failure does not need."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from itertools import pairwise

import pytest

from emulator.calling.caller import HangUp, Listen, Press, Say, Silence, Step, Talk
from emulator.calling.faults import NO_FAULTS, PlatformFaults
from emulator.calling.model import ActionType
from emulator.fuzz.scenarios import MAX_REPLAYS, smaller, tidy
from emulator.fuzz.verdict import Failure

Rule = Callable[[tuple[Step, ...]], bool]


def keys(steps: tuple[Step, ...]) -> str:
    return "".join(s.digits for s in steps if isinstance(s, Press))


def shrunk(rule: Rule, found: tuple[Step, ...]) -> tuple[tuple[Step, ...], int]:
    async def replay(steps: tuple[Step, ...], faults: PlatformFaults) -> Failure | None:
        return Failure("CALL-HTTP-5XX", "s1", "boom", steps, faults, "c") if rule(steps) else None

    assert rule(found)
    done = asyncio.run(tidy(Failure("CALL-HTTP-5XX", "s1", "boom", found, NO_FAULTS, "c"),
                            replay))  # fmt: skip
    assert done.confirmed and rule(done.failure.steps)
    one_less = [s for s in smaller(done.failure.steps) if rule(s)]
    assert one_less == [], f"not 1-minimal: {done.failure.steps} still fails as {one_less[0]}"
    return done.failure.steps, done.replays


PADDING = (Listen(), Say("hello there"), Silence(2.0))
CASES: dict[str, tuple[Rule, tuple[Step, ...], tuple[Step, ...]]] = {
    "key": (
        lambda steps: "9" in keys(steps),
        (Press("1"), *PADDING, Press("2093#"), HangUp()),
        (Press("9"),),
    ),
    "digits": (  # six digits and the stop tone, in one string
        lambda steps: any(
            sum(c.isdigit() for c in s.digits) >= 6 and s.digits.endswith("#")
            for s in steps
            if isinstance(s, Press)
        ),
        (Press("5"), *PADDING, Press("123456789#"), HangUp()),
        (Press("456789#"),),  # the first keys go first
    ),
    "silence": (  # a timeout of 3 s, then a key
        lambda steps: any(
            isinstance(a, Silence) and a.seconds >= 3 and b == Press("#")
            for a, b in pairwise(steps)
        ),
        (Press("9"), Silence(9.0), Press("#"), *PADDING),
        (Silence(3.0), Press("#")),
    ),
    "speech": (
        lambda steps: any(isinstance(s, Say) and "news" in s.text.split() for s in steps),
        (Press("1"), Say("the news please"), *PADDING, HangUp()),
        (Say("news"),),
    ),
    "hang-up": (  # a hang-up during the recognize, at any moment
        lambda steps: any(
            isinstance(s, HangUp) and s.during is ActionType.RECOGNIZE for s in steps
        ),
        (Press("9"), *PADDING, HangUp(ActionType.RECOGNIZE, 3.0)),
        (HangUp(ActionType.RECOGNIZE),),
    ),
    "hang-up at once": (  # any hang-up after the operator's menu
        lambda steps: Press("9") in steps and any(isinstance(s, HangUp) for s in steps),
        (Press("9"), *PADDING, HangUp(ActionType.PLAY_PROMPT, 2.0)),
        (Press("9"), HangUp()),
    ),
    "talk": (  # two seconds of sound into a record
        lambda steps: any(isinstance(s, Talk) and s.seconds >= 2 for s in steps),
        (Press("2"), Talk(20.0, "#"), *PADDING),
        (Talk(2.0),),
    ),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_shrinking_is_one_minimal_for_each_kind_of_step(kind: str) -> None:
    rule, found, smallest = CASES[kind]
    steps, replays = shrunk(rule, found)
    assert steps == smallest
    assert replays <= MAX_REPLAYS


def test_shrinking_stops_at_its_bound_of_replays() -> None:
    """50 strings of 8 keys, failing with 390 keys or more: some 50 replays for each key taken
    away, and then 440 to find that none can go."""
    calls: list[int] = []

    async def replay(steps: tuple[Step, ...], faults: PlatformFaults) -> Failure | None:
        calls.append(1)
        return Failure("R", "s", "m", steps, faults, "c") if len(keys(steps)) >= 390 else None

    long = tuple(Press(str(n % 10) * 8) for n in range(50))
    done = asyncio.run(tidy(Failure("R", "s", "m", long, NO_FAULTS, "c"), replay))
    assert done.confirmed and done.replays == len(calls) == MAX_REPLAYS
    assert len(keys(done.failure.steps)) == 390
