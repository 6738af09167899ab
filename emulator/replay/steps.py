"""What the caller did, as caller steps that do it again at the same virtual times.

The engine's rules (docs/engine.md, "The caller and input turns") run backwards:

- Each recognize or record action is an input turn, and a turn's steps run back to back from the
  moment its input window opens: the start of a recognize's prompt (barge-in), or the end of it
  after a ``listen`` or a leading ``silence``; for a record, the end of the beep. A turn whose
  first act comes after its recognize started therefore starts with ``listen`` (unless that act
  is a silence, which listens by itself).
- Keys pressed in one run become one ``press`` per stretch of equal gaps (a step starts where the
  one before it ended, at its last key); speech is ``say``, talk ``talk`` (with ``then`` when a
  key run follows at its end with the default gap), a silence ``silence``. A silence the turn's
  end cut short (the transcript keeps what was heard, up to the timeout) is written one second
  longer than its whole seconds, so that it outlasts the turn again whatever the rounding.
- A turn where the caller did nothing, followed later by something the caller did, gets a
  ``silence`` longer than the whole turn: with nothing, the engine would have taken the later
  steps in this turn.
- The hang-up: after the caller's last act in the same turn, ``hangup: {after: t}`` from the end
  of that act; in a turn where the caller did nothing else, ``hangup: {during: recognize|record,
  after: t}`` from the action's start; during a prompt (a playPrompt action), ``hangup: {during:
  playPrompt, after: t}`` from the start of the first playPrompt after the last turn, which is
  where the engine takes that step up. That general form needs a silence in every turn before
  it where the caller did nothing; the caller's original steps may have reached the hang-up
  otherwise (a hang-up already on its way since the last act, one timed from an earlier prompt,
  one kept back by a ``listen``). ``Reconstruction.candidates`` holds those other forms too, and
  ``convert`` keeps the one the engine confirms (``verify.py``), so that the replay has the same
  acts as the call, not extra silences.

Times in a transcript are rounded to the microsecond; ``EPSILON`` absorbs that.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from emulator.calling.caller import (
    DEFAULT_DIGIT_GAP,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
)
from emulator.calling.model import ActionType
from emulator.calling.progress import BEEP_SECONDS
from emulator.replay.reading import ActionRow, CallerAct, Recorded, joined_presses

EPSILON = 1e-5
MAX_OPTIONS = 20
"""Plain prompts tried as the one a hang-up is timed from."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A step and the line that says when and where it happens (a YAML comment)."""

    step: Step
    note: str


@dataclass(frozen=True, slots=True)
class Turn:
    """An input action and what the caller did in it; where its prompt ended (its start when
    it has none; a record's beep's end), and whether the caller cut the prompt there."""

    row: ActionRow
    acts: tuple[CallerAct, ...]
    prompt_end: float | None = None
    barged: bool = False


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """Ways of writing the caller's steps, which differ only in how the hang-up is reached. The
    last is the general form (``steps``); ``convert`` keeps it when the engine confirms it, else
    the first of the others the engine confirms."""

    candidates: tuple[tuple[Placed, ...], ...]
    notes: tuple[str, ...]
    """What could not be reproduced exactly, one line each."""

    @property
    def steps(self) -> tuple[Placed, ...]:
        return self.candidates[-1]


def reconstruct(call: Recorded) -> Reconstruction:
    """The caller steps that reproduce what the caller did in ``call``."""
    turns, hangup, cut, stray = _turns(call)
    notes = [f"{len(stray)} caller acts after the last input action were left out"] if stray else []
    if hangup is None:
        return Reconstruction((tuple(_body(turns, None, fill=False)),), tuple(notes))
    step, why = _hangup(call, turns, hangup, cut)
    if why.endswith("?"):
        notes.append(f"the hang-up at {_at(hangup.at)} may not be reproduced exactly")
    plain = _body(turns, cut, fill=False)
    candidates = [(*plain, *option) for option in _options(call, turns, hangup, cut)]
    candidates.append((*_body(turns, cut, fill=True), Placed(step, why)))
    return Reconstruction(tuple(candidates), tuple(notes))


def _options(
    call: Recorded, turns: Sequence[Turn], hangup: CallerAct, cut: Turn | None
) -> list[tuple[Placed, ...]]:
    """Other ways to reach the hang-up, without silences in the turns before it: from the
    caller's last act (a hang-up already on its way), or during each plain prompt since then
    (after a ``listen`` that keeps the step from the prompts before the next turn, or not)."""
    h, note = hangup.at, f"{_at(hangup.at)}: hang up"
    acted = [turn for turn in turns if turn.acts]
    if cut is not None:
        return [(Placed(_hangup(call, turns, hangup, cut)[0], note),)]
    out: list[tuple[Placed, ...]] = []
    if acted and h >= acted[-1].acts[-1].end:
        out.append((Placed(HangUp(None, _round(h - acted[-1].acts[-1].end)), note),))
    since = acted[-1].row.seq if acted else -1
    prompts = [r for r in call.actions if r.action == "playPrompt" and since < r.seq
               and r.start <= h + EPSILON][:MAX_OPTIONS]  # fmt: skip
    for shield in ((), (Placed(Listen(), f"{_at(h)}: wait for the next turn"),)):
        for row in prompts:
            step = HangUp(ActionType.PLAY_PROMPT, _round(max(0.0, h - row.start)))
            out.append((*shield, Placed(step, f"{_at(h)} {_name(row)}: hang up")))
    return out


def _body(turns: Sequence[Turn], cut: Turn | None, *, fill: bool) -> list[Placed]:
    """The steps of every turn: what the caller did, and a silence in a turn where it did
    nothing when it does something later (``fill``: a hang-up counts)."""
    later = _later_activity(turns, fill)
    out: list[Placed] = []
    for index, turn in enumerate(turns):
        if turn.acts:
            out += _turn_steps(turn, cut=turn is cut)
        elif later[index] and turn is not cut:
            seconds = math.ceil(turn.row.end - turn.row.start) + 1.0
            note = f"{_at(turn.row.start)} {_name(turn.row)}: no input"
            out.append(Placed(Silence(seconds), note))
    return out


def _turns(
    call: Recorded,
) -> tuple[list[Turn], CallerAct | None, Turn | None, list[CallerAct]]:
    """The input turns before the hang-up, the hang-up, the turn it cut (if it cut one), and
    acts that no input action follows."""
    turns: list[Turn] = []
    pending: list[CallerAct] = []
    last: ActionRow | None = None
    for item in call.timeline:
        if isinstance(item, ActionRow):
            last = item
            if item.is_input:
                heard = [h for h in call.prompts if h.operation_id == item.operation_id
                         and item.start - EPSILON <= h.at <= item.end + EPSILON]  # fmt: skip
                end = max((h.end for h in heard if h.end is not None), default=item.start)
                if item.operation_id in call.beeps:  # a record listens after its beep
                    end = call.beeps[item.operation_id] + BEEP_SECONDS
                turns.append(Turn(item, tuple(pending), end, any(h.interrupted for h in heard)))
                pending = []
        elif item.kind == "hangup":
            cut = None
            if last is not None and last.is_input and turns and turns[-1].row is last:
                cut = turns[-1] if abs(last.end - item.at) < EPSILON else None
            return turns, item, cut, pending
        else:
            pending.append(item)
    return turns, None, None, pending


def _later_activity(turns: Sequence[Turn], hangup: bool) -> list[bool]:
    """For each turn, whether the caller does something after it (``hangup``: it hangs up)."""
    out, seen = [], hangup
    for turn in reversed(turns):
        out.append(seen)
        seen = seen or bool(turn.acts)
    return out[::-1]


def _turn_steps(turn: Turn, *, cut: bool) -> list[Placed]:
    """The steps of a turn in which the caller acted (``cut``: the caller's hang-up ended it)."""
    row, acts = turn.row, tuple(joined_presses(turn.acts))
    out: list[Placed] = []
    first = acts[0]
    # A key that cut the prompt barged in that far into it; any other first act came after the
    # prompt, heard out (a live caller's, at any moment after it: pressed ``after`` that long).
    barged = row.action == "recognize" and turn.barged and first.kind == "press"
    ready = row.start if barged else (turn.prompt_end or row.start)
    if not barged and row.action == "recognize" and first.kind != "silence" and (
        first.at > row.start + EPSILON
    ):
        out.append(Placed(Listen(), f"{_at(row.start)} {_name(row)}: hear the prompt out"))
    index = 0
    while index < len(acts):
        act = acts[index]
        index += 1
        where = f"{_at(act.at)} {_name(row)}"
        if act.kind == "press":
            presses = list(_presses(act))
            if act.at > ready + EPSILON:  # a live caller's moment, with no silence before
                key, at = presses[0]
                presses[0] = replace(key, after=_round(act.at - ready)), at
            out += [Placed(step, f"{_at(at)} {_name(row)}") for step, at in presses]
        elif act.kind == "say":
            out.append(Placed(Say(act.text or ""), where))
        elif act.kind == "talk":
            nxt = acts[index] if index < len(acts) else None
            then = _then(act, nxt)
            if then is not None:
                index += 1
            out.append(Placed(Talk(_round(act.end - act.at), then), where))
        elif act.kind == "silence":
            seconds = _round(act.end - act.at)
            if index == len(acts) and abs(act.end - row.end) < EPSILON and not cut:
                seconds = math.floor(seconds + EPSILON) + 1.0  # cut short by the turn's end
            out.append(Placed(Silence(seconds), where))
        ready = acts[index - 1].end
    return out


def _then(talk: CallerAct, nxt: CallerAct | None) -> str | None:
    """The keys of a run pressed right at the end of ``talk`` with the default gap."""
    if nxt is None or nxt.kind != "press" or abs(nxt.at - talk.end) > EPSILON:
        return None
    steps = list(_presses(nxt))
    if len(steps) != 1:
        return None
    press = steps[0][0]
    if not isinstance(press, Press) or press.gap != DEFAULT_DIGIT_GAP:
        return None
    return press.digits


def _presses(act: CallerAct) -> Iterator[tuple[Press, float]]:
    """A run of keys as ``press`` steps, each a stretch of equal gaps starting where the step
    before it ended (a gap the steps cannot make is a pause before the next: ``after``)."""
    keys, times = act.keys, act.times
    start, pause = 0, 0.0
    while start < len(keys):
        end = start + 1
        gap = DEFAULT_DIGIT_GAP
        if end < len(keys):
            gap = times[end] - times[start]
            while end < len(keys) and abs(times[end] - times[end - 1] - gap) < EPSILON:
                end += 1
            if end < len(keys) and abs(times[end] - times[end - 1]) > EPSILON:
                if gap < EPSILON and end - start > 1:
                    end -= 1  # the last key at that moment begins the next step
                else:
                    yield Press(keys[start:end], _gap(gap, end - start), pause), times[start]
                    pause = _round(times[end] - times[end - 1])
                    start = end
                    continue
        yield Press(keys[start:end], _gap(gap, end - start), pause), times[start]
        start, pause = end, 0.0


def _gap(gap: float, count: int) -> float:
    return DEFAULT_DIGIT_GAP if count < 2 else _round(max(0.0, gap))


def _hangup(
    call: Recorded, turns: Sequence[Turn], hangup: CallerAct, cut: Turn | None
) -> tuple[HangUp, str]:
    h = hangup.at
    if cut is not None and cut.acts:
        after = h - cut.acts[-1].end
        return HangUp(None, _round(max(0.0, after))), f"{_at(h)} {_name(cut.row)}: hang up"
    if cut is not None:
        kind = ActionType.RECORD if cut.row.action == "record" else ActionType.RECOGNIZE
        after = max(0.0, h - cut.row.start)
        return HangUp(kind, _round(after)), f"{_at(h)} {_name(cut.row)}: hang up"
    last_turn_end = turns[-1].row.seq if turns else -1
    prompt = next((r for r in call.actions if r.seq > last_turn_end and r.action == "playPrompt"
                   and r.start <= h + EPSILON), None)  # fmt: skip
    if prompt is None:
        return HangUp(), f"{_at(h)}: hang up?"
    after = max(0.0, h - prompt.start)
    return HangUp(ActionType.PLAY_PROMPT, _round(after)), f"{_at(h)} {_name(prompt)}: hang up"


def _round(seconds: float) -> float:
    return round(seconds, 6)


def _at(seconds: float) -> str:
    return f"{seconds:.2f}s"


def _name(row: ActionRow) -> str:
    return f"{row.action} {row.operation_id}".rstrip()
