"""The choice of callers (``emulator.fuzz.guided``), against a bot played by the test: the
frontier tries every common move of a state before any twice; past it, the move tried least
often after the same steps; a caller steers to a move never tried after its last steps, going
on while it has steps to spare and ending the call on one when it has not; the same seed, the
same choices; a step drawn for a state that is gone is drawn again."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter

import pytest

from emulator.calling.caller import HangUp, Press, describe
from emulator.explore.states import Choice, State
from emulator.fuzz import guided
from emulator.fuzz.caller import Listening
from emulator.fuzz.guided import Guide, Walk, came_back
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
    counts = [guide.after[MENU.id, ()][label] for label in common]
    assert min(counts) >= 5 and max(counts) - min(counts) <= 1, counts


def test_where_each_step_led_is_kept_and_the_same_seed_makes_the_same_choices() -> None:
    def run(seed: int) -> tuple[list[str], Guide]:
        guide = Guide(random.Random(seed), 8)
        made: list[str] = []
        for n in range(30):
            walk = guide.walk(at(MENU))
            walk.draw()
            walk.listening.state = NEXT if n % 2 else MENU
            walk.draw()
            guide.learn(walk, "bot hung up")
            made.append("; ".join(describe(s) for s in walk.steps))
        return made, guide

    made, guide = run(5)
    assert NEXT.id in guide.first, "the second menu is known, with the steps that led to it"
    assert guide.led[NEXT.id, describe(walk_step(guide, NEXT))] == "end bot hung up"
    assert made == run(5)[0] and made != run(6)[0]


def walk_step(guide: Guide, state: State) -> object:
    """A step some caller took in ``state`` (``Guide.led`` keeps where it led)."""
    for offer in offered(state):
        if (state.id, describe(offer.steps[0])) in guide.led:
            return offer.steps[0]
    raise AssertionError(f"no step taken in {state.prompts}")


def tried_all(guide: Guide, state: State, recent: tuple[str, ...]) -> None:
    """Every common move of ``state`` counted as tried after ``recent``."""
    counts = guide.after.setdefault((state.id, recent), Counter())
    for offer in offered(state):
        counts[offer.label] += 1


def test_a_caller_steers_to_a_move_never_tried_after_its_last_steps() -> None:
    """Every move of the menu was tried at the start of a call; ``press 2``
    led to the second menu, where nothing was tried after it: the caller goes there."""
    guide = Guide(random.Random(7), 8)
    guide.offers_in(MENU.id, MENU), guide.offers_in(NEXT.id, NEXT)
    tried_all(guide, MENU, ())
    for offer in offered(MENU):
        guide.led[MENU.id, describe(offer.steps[0])] = "end bot hung up"
    guide.led[MENU.id, "press 2"] = NEXT.id
    ways = {tuple(guide.steer(MENU.id, (), 8) or ()) for _ in range(20)}
    assert {way[0] for way in ways} == {(MENU.id, (), "press 2")}, "by the second menu"
    assert {way[1][:2] for way in ways} == {(NEXT.id, ("press 2",))}
    assert all(len(way) == 2 for way in ways)
    assert guide.steer(MENU.id, (), 1) is None, "one step left: no way to an untried move"
    tried_all(guide, NEXT, ("press 2",))
    assert guide.steer(MENU.id, (), 8) is None, "nothing left untried within reach"


def test_a_caller_goes_on_while_it_has_steps_to_spare_then_ends_on_an_untried_move() -> None:
    """In the second menu, ``press 3`` goes back to the main menu and a hang-up
    ends the call, both never tried there: with steps to spare the caller goes on, at its last
    step it ends the call there (``ROOM``)."""
    guide = Guide(random.Random(8), 8)
    guide.offers_in(MENU.id, MENU), guide.offers_in(NEXT.id, NEXT)
    common = [o for o in offered(NEXT) if not o.rare]
    for offer in common:
        guide.led[NEXT.id, describe(offer.steps[0])] = "end bot hung up"
    guide.led[NEXT.id, "press 3"] = MENU.id
    going = {tuple(guide.steer(NEXT.id, ("press 2",), 8) or ()) for _ in range(20)}
    assert going == {((NEXT.id, ("press 2",), "press 3"),)}
    going_two = {tuple(guide.steer(NEXT.id, ("press 2",), 2) or ()) for _ in range(20)}
    assert going_two == going, "two steps left: it goes on, and ends on its last (ROOM)"
    ending = {tuple(guide.steer(NEXT.id, ("press 2",), 1) or ()) for _ in range(40)}
    after = ("press 2",)
    assert ending == {((NEXT.id, after, o.label),) for o in common if o.label != "press 3"}


def test_a_step_drawn_for_a_state_that_is_gone_is_drawn_again_and_counted_once() -> None:
    guide = Guide(random.Random(3), 8)
    one_move(guide)
    listening = at(MENU)
    walk = guide.walk(listening)
    before = guide.after[MENU.id, ()].copy()
    first = walk.draw()
    assert walk.fresh is not None
    label = walk.fresh[2]
    listening.state = NEXT
    again = walk.renew()
    assert again is not None and walk.steps == [again] and len(walk.trail) == 1
    assert walk.trail[0][0] == NEXT.id
    assert walk.fresh is not None and guide.tried[NEXT.id, walk.fresh[2]] == 1
    # the move taken back: not counted if it was drawn; an aim stays counted once, and aimed at
    assert guide.tried[MENU.id, label] == (1 if walk.held else 0)
    assert guide.after[MENU.id, ()][label] == before[label], "not taken there"
    assert walk.aim == walk.held
    assert again in {o.steps[0] for o in offered(NEXT)}
    assert first in {o.steps[0] for o in offered(MENU)}


def test_a_workflow_that_waits_for_nothing_gets_listen_or_a_hang_up() -> None:
    guide = Guide(random.Random(4), 8)
    listening = at(MENU)
    listening.waiting = False
    steps = {describe(guide.walk(listening).draw()) for _ in range(400)}
    assert steps == {"listen", "hangup during playPrompt after 1s"}
    assert sum(guide.tried.values()) == 0  # no move of the menu counted


def test_a_way_is_followed_only_after_the_steps_it_was_made_for() -> None:
    """A way made for other last steps (here, a rare move came between) is not followed: the
    caller steers again, to the move never tried after the steps it has."""
    guide = Guide(random.Random(9), 8)
    guide.offers_in(MENU.id, MENU)
    counts = guide.counts_at(MENU.id, ("press 2",))
    for offer in offered(MENU):
        if offer.label != "say alpha":
            counts[offer.label] += 1
    plan = [(MENU.id, ("press 9",), "press 1")]
    move = guide.choose(MENU.id, guide.offers[MENU.id], ("press 2",), False, 8, plan)
    assert move.label == "say alpha" and plan == []


def test_an_aimed_move_is_counted_as_taken_after_its_last_steps() -> None:
    guide = Guide(random.Random(10), 8)
    one_move(guide)
    aimed = [walk.held[1].label for walk in (one_move(guide) for _ in range(12)) if walk.held]
    assert aimed and all(guide.after[MENU.id, ()][label] >= 1 for label in aimed)


def test_a_common_move_of_several_steps_is_steered_to() -> None:
    """At a record, "speak, then silence" is two steps: a way does not go through it, but a
    caller steers to it where it was never taken."""
    record = State("record", ("leave a message",), ())
    guide = Guide(random.Random(11), 8)
    guide.offers_in(record.id, record)
    counts = guide.counts_at(record.id, ())
    for offer in offered(record):
        if offer.label != "speak, then silence":
            counts[offer.label] += 1
    way = guide.steer(record.id, (), 8)
    assert way == [(record.id, (), "speak, then silence")]


def test_a_last_step_cut_short_by_the_steps_running_out_led_to_the_next_state() -> None:
    """A caller that hung up only because its steps ran out (``max_steps``) did not end the
    call by its last move: that move led to the state the bot then waited in, and is kept so
    (it used to be kept as ending the call, so that a move that keeps the call going was taken
    for one that ends it whenever a caller took it last). A last move that is a hang-up, or one
    after which the bot hung up, still ends the call."""
    guide = Guide(random.Random(3), 1)
    walk = guide.walk(at(MENU))
    step = walk.draw()
    walk.listening.state = NEXT  # the bot answered with the second menu; the steps ran out
    guide.learn(walk, "caller hung up")
    assert not isinstance(step, HangUp), "seed 3 draws a move that keeps the call going"
    assert guide.led[MENU.id, describe(step)] == NEXT.id
    walk = guide.walk(at(MENU))
    step = walk.draw()
    walk.listening.waiting = False  # the bot said goodbye
    guide.learn(walk, "bot hung up")
    assert guide.led[MENU.id, describe(step)] == "end bot hung up"
    two = Guide(random.Random(3), 2)  # one step of two taken: the caller did not run out
    walk = two.walk(at(MENU))
    step = walk.draw()
    two.learn(walk, "caller hung up")
    assert two.led[MENU.id, describe(step)] == "end caller hung up"


def met(guide: Guide) -> None:
    """A call: ``press 2`` in the main menu led to the second menu, ``press 3`` there ended it.
    Every state's moves then count as tried (the frontier is done)."""
    guide.offers_in(MENU.id, MENU), guide.offers_in(NEXT.id, NEXT)
    walk = Walk(guide, at(MENU), [Press("2"), Press("3")])
    walk.draw()
    walk.listening.state = NEXT
    walk.draw()
    guide.learn(walk, "bot hung up")
    for state in (MENU, NEXT):
        for offer in offered(state):
            guide.tried[state.id, offer.label] += 1


def test_past_the_frontier_callers_aim_at_a_move_that_may_end_the_call_after_steps_met() -> None:
    """Once every state's common moves were tried, one call in four replays the steps that
    first led to a state after some last steps and takes there a move never taken after them
    that, as far as the search has seen, ends the call (or leads nowhere known): a call ends
    once, so each such call ends, as a rule, on a sequence no call ended on before
    (``Guide.ending``). A move known to keep the call going is never aimed at so, and each move
    is aimed at once."""
    guide = Guide(random.Random(12), 8)
    met(guide)
    counts = guide.counts_at(MENU.id, ())
    for offer in offered(MENU):
        if offer.label != "press 2":  # the one move left there keeps the call going
            counts[offer.label] += 1
    ending = guide.ending()
    assert ending is not None and ending[0] == (NEXT.id, ("press 2",)), "not press 2"
    assert ending[1] == (Press("2"),) and not ending[2].rare
    tried_all(guide, NEXT, ("press 2",))
    assert guide.ending() is None, "every ending move taken after every last steps met"
    guide.untake(NEXT.id, ("press 2",), "press 3")  # never taken there after all
    walks = [guide.walk(at(MENU)) for _ in range(400)]
    aimed = [w for w in walks if w.held is not None]
    assert len(aimed) == 1, "given once"
    assert aimed[0].pending == [Press("2")]
    assert aimed[0].held == (NEXT.id, next(o for o in offered(NEXT) if o.label == "press 3"))
    assert 70 <= sum(guide.rng.randrange(4) == 1 for _ in range(400)) <= 130  # one in four


def test_an_ending_aimed_at_and_taken_is_counted_and_the_next_is_aimed_at() -> None:
    """Each call aimed at the ending frontier takes its move after the steps replayed, and the
    next one aims at another move: every ending move of the second menu after ``press 2``,
    one call each."""
    guide = Guide(random.Random(13), 8)
    met(guide)
    tried_all(guide, MENU, ())
    ends = [o.label for o in offered(NEXT) if not o.rare]  # each led to an end, or is unknown
    taken: list[str] = []
    for _ in range(200):
        walk = guide.walk(at(MENU))
        if walk.held is None:
            continue
        walk.draw()
        walk.listening.state = NEXT
        step = walk.draw()
        taken.append(walk.held[1].label)
        assert walk.trail[-1] == (NEXT.id, describe(step))
        guide.learn(walk, "bot hung up")
    assert sorted(taken) == sorted(ends), taken
    assert all(guide.after[NEXT.id, ("press 2",)][label] == 1 for label in ends)


def test_an_ending_aimed_at_but_drawn_again_for_another_state_is_not_aimed_at_again() -> None:
    """The aimed move was read at the end of a turn and drawn again for the state of the next
    (``Walk.renew``): it was never taken after the steps it was aimed for, but it is not aimed
    at again, or the frontier would stop there for good."""
    guide = Guide(random.Random(14), 8)
    met(guide)
    tried_all(guide, MENU, ())
    third = State("recognize", ("third menu",), (Choice("d", "4", ()),), silence_timeout=3.0)
    guide.offers_in(third.id, third)
    aims: list[tuple[str, tuple[str, ...], str]] = []
    for _ in range(200):
        walk = guide.walk(at(MENU))
        if walk.held is None:
            continue
        aims.append((walk.held[0], tuple(map(describe, walk.pending)), walk.held[1].label))
        walk.draw()
        walk.listening.state = NEXT
        walk.draw()
        walk.listening.state = third  # the turn timed out: the step is drawn again
        walk.renew()
        guide.learn(walk, "bot hung up")
    assert (NEXT.id, ("press 2",), "press 3") in aims
    assert len(aims) == len(set(aims)), aims


def test_an_ending_after_steps_that_came_back_to_their_state_is_aimed_at_first() -> None:
    """A call went from the main menu to the second (``press 2``), back (``press 4``) and on
    (``press 1``): the main menu after ``press 2; press 4`` came back to its state from
    another, and its moves that may end the call are aimed at before those of every state and
    last steps met before it (a menu come back to from a sub-menu is where a bot's memory of
    the call goes wrong: ``came_back``)."""
    guide = Guide(random.Random(15), 8)
    guide.offers_in(MENU.id, MENU), guide.offers_in(NEXT.id, NEXT)
    walk = Walk(guide, at(MENU), [Press("2"), Press("4"), Press("1")])
    for state in (MENU, NEXT, MENU):
        walk.listening.state = state
        walk.draw()
    guide.learn(walk, "bot hung up")
    back = (MENU.id, ("press 2", "press 4"))
    assert [key for key, _ in guide.contexts[0]] == [back]
    assert [key for key, _ in guide.contexts[1]] == [(MENU.id, ()), (NEXT.id, ("press 2",))]
    ending = guide.ending()
    assert ending is not None and ending[0] == back and ending[1] == (Press("2"), Press("4"))
    tried_all(guide, MENU, back[1])
    ending = guide.ending()
    assert ending is not None and ending[0] == (MENU.id, ()), "then in the order met"
    assert came_back(MENU.id, [(MENU.id, "press 2"), (NEXT.id, "press 4")])
    assert not came_back(MENU.id, [(MENU.id, "press 9"), (MENU.id, "press 9")])
    assert not came_back(NEXT.id, [(MENU.id, "press 2")])


def test_the_states_after_last_steps_kept_with_their_steps_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot whose every step makes new last steps (here, keys never pressed before) fills
    ``Guide.contexts``: it keeps ``MAX_CONTEXTS`` of them, each with the steps that first led
    there, under a kilobyte each with the most steps a caller may take (50). Measured at the
    real bound of 20,000: 11.7 MB, and 13.9 MB with every pair met deep in its call."""

    def kept(bound: int) -> tuple[int, int]:
        monkeypatch.setattr(guided, "MAX_CONTEXTS", bound)
        guide = Guide(random.Random(1), 50)
        presses = [[Press(f"{w}{k}") for k in range(50)] for w in range(60)]
        tracemalloc.start()
        try:
            for steps in presses:
                walk = Walk(guide, at(MENU), list(steps))
                for _ in steps:
                    walk.draw()
                guide.learn(walk, "bot hung up")
            return sum(map(len, guide.contexts)), tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    none, without = kept(0)
    some, with_them = kept(2_000)
    assert (none, some) == (0, 2_000)
    assert with_them - without < 2_000 * 1024, with_them - without
