"""What a fuzzed caller may do at a waiting point, as Hypothesis strategies.

The caller's next step is drawn when the engine asks for it, from what the bot is waiting for at
that moment (``explore.states.State``): at a menu, mostly a key of one of its choices; then
silence past its timeout, one of its speech variations, a key it does not offer, a digit string,
hearing the prompt out first (``listen``: without it a key barges in when the menu allows), talk,
and a hang-up now or in the middle of the next prompt. At digits: digit strings up to the length
the bot takes, with its stop tone or without, the stop tone alone. At a record: talk, then silence
or the stop tone.

Each strategy shrinks towards the simplest step: the kinds are drawn by an integer whose smaller
values are the commoner, simpler kinds, and within a kind towards the first choice, the shortest
digit string, the full silence. ``KIND_WEIGHTS`` are the kinds' shares when generating.
"""

from __future__ import annotations

from hypothesis import strategies as st

from emulator.calling.caller import HangUp, Listen, Press, Say, Silence, Step, Talk
from emulator.calling.model import ActionType
from emulator.explore.states import State

KEYS = "0123456789*#"
DEFAULT_TIMEOUT = 5.0
KIND_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("input", 45),  # a choice's key, digits the bot takes, talk into a record
    ("silence", 20),
    ("say", 10),
    ("other", 8),  # a key outside the choices, a stop tone alone
    ("string", 4),  # several keys at once
    ("listen", 5),
    ("talk", 4),
    ("hangup", 4),
)
MORE = 9
"""``st.integers(0, MORE)``: 0 stops the caller (it hangs up), so a script of n steps is drawn
with probability (MORE / (MORE + 1)) ** n and shrinks towards fewer steps."""


def kind_of(n: int) -> str:
    for kind, weight in KIND_WEIGHTS:
        if n < weight:
            return kind
        n -= weight
    return KIND_WEIGHTS[-1][0]


KINDS = st.integers(0, sum(w for _, w in KIND_WEIGHTS) - 1).map(kind_of)


def step_for(state: State | None, kind: str) -> st.SearchStrategy[Step]:
    """A strategy for one step of ``kind`` while the bot waits for ``state`` (None: nothing
    known yet)."""
    timeout = (state.silence_timeout if state else None) or DEFAULT_TIMEOUT
    if kind == "silence":
        return st.sampled_from([Silence(timeout + 1), Silence(timeout + 1), Silence(1.0)])
    if kind == "listen":
        return st.just(Listen())
    if kind == "hangup":
        return st.sampled_from([HangUp(), HangUp(ActionType.PLAY_PROMPT, 1.0),
                                HangUp(ActionType.RECOGNIZE, 1.0)])  # fmt: skip
    if kind == "talk":
        return st.builds(Talk, st.sampled_from([2.0, 6.0]), st.sampled_from([None, "#"]))
    if kind == "string":
        return st.text(KEYS, min_size=2, max_size=8).map(Press)
    if kind == "say":
        return _say(state)
    if kind == "other":
        return _other(state)
    return _input(state)


def _input(state: State | None) -> st.SearchStrategy[Step]:
    if state is None:
        return st.sampled_from(KEYS).map(Press)
    if state.kind == "recognize" and any(c.dtmf for c in state.choices):
        return st.sampled_from([c.dtmf for c in state.choices if c.dtmf]).map(Press)
    if state.kind == "digits":
        stop = state.stop_tones[0] if state.stop_tones else ""
        most = max(1, state.max_digits or 8)
        digits = st.text("0123456789", min_size=1, max_size=most)
        return st.builds(lambda d, end: Press(d + (stop if end else "")), digits, st.booleans())
    if state.kind == "record":
        tone = state.stop_tones[0] if state.stop_tones else None
        return st.builds(Talk, st.sampled_from([3.0, 1.0, 20.0]), st.sampled_from([None, tone]))
    return st.sampled_from(KEYS).map(Press)


def _say(state: State | None) -> st.SearchStrategy[Step]:
    phrases = [s for c in (state.choices if state else ()) for s in c.speech[:1]]
    names = [c.name for c in (state.choices if state else ()) if c.name not in phrases]
    return st.sampled_from([*phrases, *names, "hello", "operator"]).map(Say)


def _other(state: State | None) -> st.SearchStrategy[Step]:
    offered = {c.dtmf for c in state.choices if c.dtmf} if state else set()
    keys = [k for k in KEYS if k not in offered] or list(KEYS)
    return st.sampled_from(keys).map(Press)


def draw_step(data: st.DataObject, state: State | None) -> Step | None:
    """The caller's next step while the bot waits for ``state``, or None: the caller stops."""
    if data.draw(st.integers(0, MORE), label="more") == 0:
        return None
    kind = data.draw(KINDS, label="kind")
    return data.draw(step_for(state, kind), label=kind)
