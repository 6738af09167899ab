"""The caller's possible moves from a state, each as steps of the scripted caller (the inline
form ``botemu call --caller`` takes), so that a path is a caller script:

- a menu (recognize with choices): each choice by its first DTMF key and by its first speech
  variation; one wrong key outside the choices; silence past the initial-silence timeout; a
  hang-up in the middle of the prompt;
- digits (collectDigits): a valid-looking digit string (as many digits as the bot takes, and its
  stop tone), an empty one (the stop tone alone, or silence when there is none); silence; a
  hang-up;
- a record: speech followed by silence, speech ended by a stop tone (when the bot gives one);
  silence; a hang-up.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from emulator.explore.states import State

KEYS = "0123456789*#"
DEFAULT_SILENCE = 5.0
"""The platform's initial-silence timeout when the action gives none (seconds)."""
DEFAULT_DIGITS = 4
KINDS = ("call", "choice", "wrong", "digits", "empty", "speak", "silence", "hangup")
"""The sorts of move: the call placed (the first edge), a menu choice, a wrong key, digits, no
digits (a stop tone alone), speech into a record, silence, a hang-up."""
RETRY_KINDS = frozenset({"wrong", "empty", "silence"})
"""The moves a bot answers by asking again, when it handles them."""


@dataclass(frozen=True, slots=True)
class Move:
    """One move: ``label`` names it in the graph, ``steps`` are the caller's steps, ``kind`` what
    sort of move it is (``KINDS``), ``choice`` the menu choice it takes (a ``choice`` move)."""

    label: str
    steps: tuple[str, ...]
    kind: str = "choice"
    choice: str | None = None

    @property
    def script(self) -> str:
        return "; ".join(self.steps)


def moves(state: State) -> list[Move]:
    """The moves from ``state``, in a fixed order (the same state, the same moves)."""
    if state.kind == "recognize":
        found = _menu(state)
    elif state.kind == "digits":
        found = _digits(state)
    else:
        found = _record(state)
    return [*found, _silence(state), Move("hang up", ("hangup",), "hangup")]


def _menu(state: State) -> list[Move]:
    found: list[Move] = []
    for choice in state.choices:
        if choice.dtmf:
            found.append(Move(f"press {choice.dtmf}", (f"press {choice.dtmf}",),
                              choice=choice.name))  # fmt: skip
        if choice.speech:
            found.append(Move(f"say {choice.speech[0]}", (f"say {choice.speech[0]}",),
                              choice=choice.name))  # fmt: skip
    used = {c.dtmf[0] for c in state.choices if c.dtmf}
    wrong = next((key for key in KEYS if key not in used), None)
    if wrong is not None and state.choices:
        found.append(Move(f"wrong key {wrong}", (f"press {wrong}",), "wrong"))
    return found


def _digits(state: State) -> list[Move]:
    count = state.max_digits or DEFAULT_DIGITS
    stop = state.stop_tones[0] if state.stop_tones else ""
    digits = ("1234567890" * (count // 10 + 1))[:count]
    found = [Move(f"digits {digits}{stop}", (f"press {digits}{stop}",), "digits")]
    if stop:
        found.append(Move(f"empty {stop}", (f"press {stop}",), "empty"))
    return found


def _record(state: State) -> list[Move]:
    wait = _seconds(state) + 1
    found = [Move("speak, then silence", ("talk 3s", f"silence {wait:g}s"), "speak")]
    if state.stop_tones:
        tone = state.stop_tones[0]
        found.append(Move(f"speak, then {tone}", ("talk 3s", f"press {tone}"), "speak"))
    return found


def _silence(state: State) -> Move:
    wait = _seconds(state) + 1
    return Move(f"silence {wait:g}s", (f"silence {wait:g}s",), "silence")


def _seconds(state: State) -> float:
    return state.silence_timeout if state.silence_timeout else DEFAULT_SILENCE
