"""The choice of callers (``emulator.fuzz.guided``), against a bot played by the test: the
frontier tries every common move of a state before any twice; past it, the move tried least
often after the same steps; what shows something new becomes a start; the same seed, the same
choices; a step drawn for a state that is gone is drawn again."""

from __future__ import annotations

import random

from emulator.calling.caller import describe
from emulator.explore.states import Choice, State
from emulator.fuzz.caller import Listening
from emulator.fuzz.guided import Guide, Walk
from emulator.fuzz.moves import offered

MENU = State("recognize", ("main menu",), (Choice("a", "1", ("alpha",)), Choice("b", "2", ())),
             silence_timeout=3.0)  # fmt: skip
NEXT = State("recognize", ("second menu",), (Choice("c", "3", ()),), silence_timeout=3.0)


def at(state: State) -> Listening:
    listening = Listening()
    listening.state, listening.waiting = state, True
    return listening


def one_move(guide: Guide, state: State = MENU) -> Walk:
    """A call in which the bot waits in ``state`` and the caller makes one move, then the call
    ends."""
    walk = guide.walk(at(state))
    while True:
        walk.draw()
        if not walk.pending:
            break
    guide.learn(walk, "bot hung up")
    return walk


def test_the_frontier_tries_every_common_move_once_before_any_twice() -> None:
    guide = Guide(random.Random(1), 8)
    common = {o.label for o in offered(MENU) if not o.rare}
    one_move(guide)  # the state is found
    aimed: list[str] = []
    for _ in range(40):
        walk = one_move(guide)
        if walk.held is not None:
            aimed.append(walk.held[1].label)
    assert len(aimed) == len(set(aimed)) and set(aimed) <= common, aimed
    assert all(guide.tried[MENU.id, label] >= 1 for label in common)
    assert guide.frontier() is None


def test_past_the_frontier_the_move_tried_least_often_after_the_same_steps() -> None:
    guide = Guide(random.Random(2), 8)
    for _ in range(200):
        one_move(guide)
    common = {o.label for o in offered(MENU) if not o.rare}
    counts = [guide.after[MENU.id, (), label] for label in common]
    assert min(counts) >= 5 and max(counts) - min(counts) <= 1, counts


def test_something_new_becomes_a_start_and_the_same_seed_makes_the_same_choices() -> None:
    def run(seed: int) -> list[str]:
        guide = Guide(random.Random(seed), 8)
        made: list[str] = []
        for n in range(30):
            walk = guide.walk(at(MENU))
            walk.draw()
            walk.listening.state = NEXT if n % 2 else MENU
            walk.draw()
            guide.learn(walk, "bot hung up")
            made.append("; ".join(describe(s) for s in walk.steps))
        assert any(s.state == NEXT.id for s in guide.starts), "the second menu is a start"
        return made

    assert run(5) == run(5) and run(5) != run(6)


def test_a_step_drawn_for_a_state_that_is_gone_is_drawn_again_and_counted_once() -> None:
    guide = Guide(random.Random(3), 8)
    one_move(guide)
    listening = at(MENU)
    walk = guide.walk(listening)
    first = walk.draw()
    assert walk.fresh is not None
    label = walk.fresh[1]
    listening.state = NEXT
    again = walk.renew()
    assert again is not None and walk.steps == [again] and len(walk.trail) == 1
    assert walk.trail[0][0] == NEXT.id
    assert walk.fresh is not None and guide.tried[NEXT.id, walk.fresh[1]] == 1
    # the move taken back: not counted if it was drawn; an aim stays counted once, and aimed at
    assert guide.tried[MENU.id, label] == (1 if walk.held else 0)
    assert walk.aim == walk.held
    assert again in {o.steps[0] for o in offered(NEXT)}
    assert first in {o.steps[0] for o in offered(MENU)}


def test_a_workflow_that_waits_for_nothing_gets_listen_or_a_hang_up() -> None:
    guide = Guide(random.Random(4), 8)
    listening = at(MENU)
    listening.waiting = False
    steps = {describe(guide.walk(listening).draw()) for _ in range(80)}
    assert steps == {"listen", "hangup during playPrompt after 1s"}
    assert sum(guide.tried.values()) == 0  # no move of the menu counted
