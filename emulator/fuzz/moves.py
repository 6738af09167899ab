"""What a fuzzed caller may do at a waiting point: the moves the bot offers there.

The moves of a state are drawn from what the bot shows (``explore.states.State``):

- common, the moves of ``botemu explore`` (``explore.edges.moves``): at a menu each choice by its
  key and by its first speech variation (or its name), one wrong key, silence past the
  initial-silence timeout, a hang-up; at digits a digit string as long as the bot takes with its
  stop tone, the stop tone alone; at a record talk then silence, talk then the stop tone;
- at digits, the strings at their boundaries: one digit, the most the bot takes without the stop
  tone, one more than it takes;
- rare (``Offer.rare``), drawn one time in ``RARE_ODDS``: every other key, two to eight keys at
  once, a choice's key after hearing the prompt out (``listen``; without it a key barges in where
  the menu allows), non-speech sound, a short silence, a hang-up one second into the next prompt
  or recognize, "hello" and "operator" said.

Each move is one or a few steps of the scripted caller. The same state gives the same moves, in
the same order. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from emulator.calling.caller import (
    CallerScript,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
    describe,
)
from emulator.calling.model import ActionType
from emulator.explore.edges import moves as explore_moves
from emulator.explore.states import State

KEYS = "0123456789*#"
DEFAULT_TIMEOUT = 5.0
RARE_ODDS = 8
"""One move in ``RARE_ODDS`` is drawn from the rare moves."""


@dataclass(frozen=True, slots=True)
class Offer:
    """One move: ``label`` names it (the same in every call), ``steps`` are the caller's."""

    label: str
    steps: tuple[Step, ...]
    rare: bool = False


def offered(state: State | None) -> list[Offer]:
    """The moves from ``state`` (None: the bot has not waited for anything yet), common first."""
    if state is None:
        return [
            *(Offer(f"press {k}", (Press(k),)) for k in KEYS),
            Offer("silence", (Silence(DEFAULT_TIMEOUT + 1),)),
            Offer("hang up", (HangUp(),)),
        ]
    common = [Offer(m.label, CallerScript.from_inline(m.script).steps)
              for m in explore_moves(state)]  # fmt: skip
    common.extend(_named(state))
    if state.kind == "digits":
        common.extend(_boundaries(state))
    return [*common, *_rare(state, {describe(o.steps[0]) for o in common if len(o.steps) == 1})]


def _named(state: State) -> list[Offer]:
    """A choice said by its name, where it has no speech variation to say."""
    return [Offer(f"say {c.name}", (Say(c.name),)) for c in state.choices if not c.speech]


def _boundaries(state: State) -> list[Offer]:
    most = state.max_digits or 4
    digits = ("1234567890" * (most // 10 + 2))[: most + 1]
    stop = state.stop_tones[0] if state.stop_tones else ""
    found = [Offer(f"digits {digits[:most]}", (Press(digits[:most]),)),
             Offer(f"digits {digits}", (Press(digits),))]  # fmt: skip
    if most > 1:
        found.append(Offer(f"digits 1{stop}", (Press("1" + stop),)))
    return found


def _rare(state: State, taken: set[str]) -> list[Offer]:
    timeout = state.silence_timeout or DEFAULT_TIMEOUT
    found = [Offer(f"press {k}", (Press(k),), True) for k in KEYS if f"press {k}" not in taken]
    keys = [c.dtmf for c in state.choices if c.dtmf]
    found.extend(Offer(f"listen, press {k}", (Listen(), Press(k)), True) for k in keys)
    found.append(Offer("keys 12#", (Press("12#"),), True))
    found.append(Offer("keys 98765432", (Press("98765432"),), True))
    for said in ("hello", "operator"):
        if f"say {said}" not in taken:
            found.append(Offer(f"say {said}", (Say(said),), True))
    found.append(Offer("talk 2s", (Talk(2.0),), True))
    found.append(Offer("talk 6s then #", (Talk(6.0, "#"),), True))
    if timeout > 1:
        found.append(Offer("silence 1s", (Silence(1.0),), True))
    found.append(Offer("hang up in the prompt", (HangUp(ActionType.PLAY_PROMPT, 1.0),), True))
    found.append(Offer("hang up in the recognize", (HangUp(ActionType.RECOGNIZE, 1.0),), True))
    return found
