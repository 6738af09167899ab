"""The search's choice of callers, steered to the sequences of moves no caller has made.

Most calls (three in four, while there is one) go to the frontier: the first state, in the order
found, with a common move (``moves.offered``) that no caller has tried there. The call replays the
steps that first led to that state and takes that move. Once there is none, one call in four goes
to the first state and last ``CONTEXT`` steps met (those that came back to their state from
another first) with a common move never taken there after them that, as far as the search has
seen, may end the call: it replays the steps that first led there and takes that move
(``ENDING_CALLS``), each such move once. The others start from nothing. Past
its aim, a caller takes in each state a common move never taken in that state after the same last
``CONTEXT`` steps, if there is one; if not, the first move of one of the shortest ways, as far as
the search has seen where each move leads, to a state and last steps where such a move is left
(``Guide.steer``: ways of moves of one step, at most ``CONTEXT + 1`` long), and follows it while
the bot goes where it went before; failing that, the move tried least often there after the same
steps. Among the shortest ways, one whose last move keeps the call going is preferred until the
caller's last step (``ROOM``); then one that ends it: a call ends once, so every call should end on
a sequence not tried before. Ties are drawn at random. So the search goes to the sequences of up to
four moves a bug may hang on (three steps and a move, within the ``max_steps`` of a call) that it
has not made, instead of walking the same ones again. One caller in ``RARE_CALLERS`` takes a rare
move one time in ``RARE_ODDS``; the others never do, so that their last steps stay among the common
moves the search steers by (swarm testing: a bug that needs a rare move is found by the few that
take them). Every call goes on until the bot ends it or the steps run out.

After each call, the search keeps where each step led (the last time it was taken) and the steps
that first led to each state, and counts what it showed for the first time: a state, a move
from a state to the next, or two such moves in a row.

Pure: the caller's steps come from ``Walk.draw`` as the engine asks for them; a seeded
``random.Random`` makes every choice, so that the same seed against the same bot makes the same
calls. Bounded: at most ``MAX_SEEN`` things seen, last steps counted, steps' next states and
ways not found kept, ``MAX_CONTEXTS`` states after last steps met, ``MAX_STATES`` states (and
the moves and counts of those only), and ``MAX_PLAN`` (state, last steps) looked at for each
move.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

from emulator.calling.caller import HangUp, Listen, Step, describe
from emulator.calling.events import EndReason
from emulator.calling.model import ActionType
from emulator.explore.states import State
from emulator.fuzz.caller import Listening
from emulator.fuzz.moves import RARE_ODDS, Offer, offered

FRONTIER_ODDS = 4
"""Three calls in ``FRONTIER_ODDS`` go to the frontier, while there is one."""

RARE_CALLERS = 4
"""One caller in ``RARE_CALLERS`` takes a rare move one time in ``RARE_ODDS``; the others
never do."""
ENDING_CALLS = 1
"""Of every ``FRONTIER_ODDS`` calls, so many go, once no state has a common move never tried
there, to the first state and last steps met with a move that may end the call never taken
there after those steps (``Guide.ending``): they replay the steps that first led there and take
that move, as a rule ending the call on a sequence never ended on. A call ends once, and a
caller steered to its last step (``ROOM``) ends on a new one of the 1,052 sequences of three
steps and a move that ends the call (``benchmarks/fuzz.py --count``) only about half the
time. The variants measured are in docs/fuzz.md ("The ending frontier")."""
CONTEXT = 3
"""A move is tried once after each sequence of ``CONTEXT`` steps that came to its state."""
MAX_SEEN = 200_000
MAX_STATES = 10_000
ROOM = 1
"""A caller prefers a move that keeps the call going while it has more steps left than this,
then one that ends it: it goes on to its last step, and ends the call there on a move never
taken after its last steps. A move never taken leads, as a rule, to last steps never met, where
every move is untried: so a caller that goes on makes a new sequence at each step, and still
ends on one. Against ``CONTEXT + 1`` (room to come to any last steps before ending), 1,000 calls
made 882-928 of the 1,228 sequences that keep the call going against the bot with no bug of
``tests/bots/deep_bots.py`` instead of 572-597 (docs/fuzz.md, "How callers are made")."""
MAX_CONTEXTS = 20_000
"""At most so many states after last steps are kept with the steps that first led there
(``Guide.contexts``; a few hundred bytes each with ``max_steps`` 50)."""
MAX_PLAN = 5_000
"""At most so many (state, last steps) a caller's way to an untried move is looked for in."""

Context = tuple[str, tuple[str, ...]]
"""A state and the last steps (at most ``CONTEXT``) that came to it."""
Way = tuple[str, tuple[str, ...], str]
"""A move on a caller's way: the state it is taken in, the last steps before it, its label."""


def came_back(where: str, before: list[tuple[str, str]]) -> bool:
    """Whether the last steps (``before``: the state each was taken in, and the step) came back
    to the state ``where`` from another: a menu come back to from a sub-menu, where a bot's
    memory of the call may have gone wrong. Sequences that end the call there are tried first
    (``Guide.ending``): in ``benchmarks/fuzz.py --no-walk --seeds 40``, a bug whose last move
    ends the call after three steps that go out of the main menu and back was found in 37
    searches of 40, against 30 in the order met (docs/fuzz.md)."""
    states = {state for state, _ in before} - {"no input"}
    return where in states and len(states) > 1


@dataclass
class Walk:
    """One caller: the steps that first led to its aim's state, then its aim (a state's untried
    move, taken when the bot waits in that state), or none of them; then drawn moves. ``trail``
    is what it did: for each step, the state the bot waited in when it was asked for (``start``
    before any)."""

    guide: Guide
    listening: Listening
    pending: list[Step]
    aim: tuple[str, Offer] | None = None
    trail: list[tuple[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    fresh: tuple[str, tuple[str, ...], str, bool] | None = None
    """The last step began a move drawn here: its state, the steps before it, its label,
    whether it was the aim."""
    plan: list[Way] = field(default_factory=list)
    """The rest of the way the caller is steered along (``Guide.steer``)."""

    def __post_init__(self) -> None:
        self.held = self.aim
        self.odd = self.guide.rng.randrange(RARE_CALLERS) == 0
        """This caller takes rare moves (``RARE_CALLERS``)."""

    def draw(self) -> Step:
        self.fresh = None
        if not self.pending and not self.listening.waiting:
            # The engine reads the next step before a plain prompt of a Workflow that waits
            # for nothing (a goodbye), and uses it there only if it is a hang-up: a move drawn
            # now would be counted as tried in a state that is gone. A listen is used only at
            # an input turn, if one comes; now and then a hang-up in the prompt.
            rare = self.odd and self.guide.rng.randrange(RARE_ODDS) == 0
            step: Step = HangUp(ActionType.PLAY_PROMPT, 1.0) if rare else Listen()
            self.fresh = ("no input", (), "", False)
            return self._took("no input", step)
        state = self.listening.state
        where = state.id if state is not None else "start"
        if not self.pending:
            offers = self.guide.offers_in(where, state)
            aimed = self.aim is not None and self.aim[0] == where
            recent = tuple(d for _, d in self.trail[-CONTEXT:])
            move = (
                self.aim[1]
                if self.aim is not None and aimed
                else self.guide.choose(
                    where,
                    offers,
                    recent,
                    self.odd,
                    self.guide.max_steps - len(self.steps),
                    self.plan,
                )
            )
            if aimed:  # counted as tried when it was aimed at (``Guide.walk``)
                self.aim = None
                self.plan.clear()
                self.guide.counts_at(where, recent)[move.label] += 1
            self.fresh = (where, recent, move.label, aimed)
            self.pending.extend(move.steps)
        return self._took(where, self.pending.pop(0))

    def _took(self, where: str, step: Step) -> Step:
        self.trail.append((where, describe(step)))
        self.steps.append(step)
        return step

    def renew(self) -> Step | None:
        """The last step again, for the state of now, when it began a move drawn here (not one
        of the steps replayed to the aim's state): it was drawn for a state that is gone, and
        never used (``caller.DrawnSteps``). None: it stays."""
        if self.fresh is None:
            return None
        where, recent, label, aimed = self.fresh
        self.trail.pop()
        self.steps.pop()
        self.pending.clear()
        self.plan.clear()
        if aimed:
            self.aim = self.held
        elif label and (where, label) in self.guide.tried:
            self.guide.tried[where, label] -= 1
        if label:
            self.guide.untake(where, recent, label)
        return self.draw()


class Guide:
    """Chooses each call's caller (``walk``) and learns from what it did (``learn``)."""

    def __init__(self, rng: random.Random, max_steps: int) -> None:
        self.rng = rng
        self.max_steps = max_steps
        self.seen: set[tuple[str, ...]] = set()
        self.tried: Counter[tuple[str, str]] = Counter()
        self.after: dict[tuple[str, tuple[str, ...]], Counter[str]] = {}
        """How often each move was taken in each state after each last ``CONTEXT`` steps."""
        self.offers: dict[str, list[Offer]] = {}
        self.led: dict[tuple[str, str], str] = {}
        """Where each step from each state led last time it was taken."""
        self.moves: dict[str, list[tuple[str, str | None, str | None]]] = {}
        """Each state's common moves, as ``_moves`` gives them."""
        self.stuck: set[tuple[str, tuple[str, ...], int]] = set()
        """Where ``steer`` found no way (state, last steps, moves looked ahead): none comes
        until a step leads somewhere else, a state is found or a move is taken back."""
        self.first: dict[str, tuple[Step, ...]] = {}
        """Each state found, in order, with the steps that first led to it."""
        self.contexts: tuple[list[tuple[Context, tuple[Step, ...]]], ...] = ([], [])
        """Each state after each last ``CONTEXT`` steps met, with the steps that first led
        there (``ending``), in the order met: first those whose last steps came back to their
        state from another (``came_back``), then the others."""
        self._index: dict[Context, tuple[int, int]] = {}
        """Where each of ``contexts`` is: which list, and where in it."""
        self.aimed: set[tuple[Context, str]] = set()
        """The moves ``ending`` gave, after their state and last steps: each is given once,
        taken there or not (a replay may go elsewhere, a step be drawn again for another
        state), as the frontier's moves are counted tried once aimed at."""
        self._ended = [0, 0]
        """How many of each list of ``contexts`` (in order) have no untried move that may end
        the call."""

    def offers_in(self, where: str, state: State | None) -> list[Offer]:
        """The moves from ``state`` (named ``where``), kept once made."""
        offers = self.offers.get(where)
        if offers is None:
            offers = offered(state)
            if len(self.offers) < MAX_STATES:
                self.offers[where] = offers
                self._model_changed()
        return offers

    def walk(self, listening: Listening) -> Walk:
        """A new caller; ``listening`` tells what the bot waits for now."""
        roll = self.rng.randrange(FRONTIER_ODDS)
        if roll != 0:
            aim = self.frontier()
            if aim is not None:
                self.tried[aim[0], aim[1].label] += 1  # taken or not, it counts
                return Walk(self, listening, list(self.first[aim[0]]), aim)
            if roll <= ENDING_CALLS:
                ending = self.ending()
                if ending is not None:
                    key, steps, offer = ending
                    self.tried[key[0], offer.label] += 1
                    if len(self.aimed) >= MAX_SEEN:
                        self.aimed.clear()
                    self.aimed.add((key, offer.label))
                    return Walk(self, listening, list(steps), (key[0], offer))
        return Walk(self, listening, [])

    def ending(self) -> tuple[Context, tuple[Step, ...], Offer] | None:
        """The first state and last steps met (``contexts``, those that came back first) with
        a common move never taken there after those steps, nor given here before (``aimed``),
        that, as far as the search has seen, may end the call (it led to an end, or nowhere
        known yet; a move of several steps): that state and those steps, the steps that first
        led there (fewer than ``max_steps``: a step of a call was taken there), and that move."""
        aimed, ended = self.aimed, self._ended
        for kind, contexts in enumerate(self.contexts):
            while ended[kind] < len(contexts):
                key, steps = contexts[ended[kind]]
                where, done = key[0], self.after.get(key, ())
                for label, _, there in self._moves(where):
                    if there is None and label not in done and (key, label) not in aimed:
                        return key, steps, next(o for o in self.offers[where] if o.label == label)
                ended[kind] += 1
        return None

    def frontier(self) -> tuple[str, Offer] | None:
        """The first state found with a common move never tried there, and that move."""
        for where, steps in self.first.items():
            if len(steps) >= self.max_steps:
                continue
            for offer in self.offers.get(where, ()):
                if not offer.rare and self.tried[where, offer.label] == 0:
                    return where, offer
        return None

    def choose(self, where: str, offers: list[Offer], recent: tuple[str, ...] = (),
               odd: bool = False, left: int = 0, plan: list[Way] | None = None
               ) -> Offer:  # fmt: skip
        """A move from the state ``where`` after the steps ``recent``: a rare one one time in
        ``RARE_ODDS`` for an ``odd`` caller; else one never tried here after the same steps,
        or the first of the fewest moves (``left`` steps at most) that lead, as far as the
        search has seen, to such a move (``steer``; the rest of the way is left in ``plan``,
        and followed while the bot goes where it led before); else one among those tried least
        often here after the same steps."""
        rare = [o for o in offers if o.rare]
        pool = [o for o in offers if not o.rare] or rare
        if rare and odd and self.rng.randrange(RARE_ODDS) == 0:
            pool = rare
        counts = self.counts_at(where, recent)
        steered = None
        if pool is rare:
            if plan is not None:
                plan.clear()  # a step off the way: the rest of it was made for other steps
        elif plan and plan[0][:2] == (where, recent):
            steered = plan.pop(0)[2]
        else:
            way = self.steer(where, recent, left)
            steered = way[0][2] if way else None
            if plan is not None:
                plan[:] = way[1:] if way else []
        label = steered or self._fewest(counts, [o.label for o in pool])
        move = next(o for o in pool if o.label == label)
        counts[label] += 1
        if where in self.offers:
            self.tried[where, move.label] += 1
        return move

    def counts_at(self, where: str, recent: tuple[str, ...]) -> Counter[str]:
        """How often each move was taken in ``where`` after ``recent`` (kept in ``after``)."""
        counts = self.after.get((where, recent))
        if counts is None:
            if len(self.after) >= MAX_SEEN:
                self.after.clear()
                self.stuck.clear()
                self._ended = [0, 0]  # moves never taken again
            counts = self.after[where, recent] = Counter()
        return counts

    def untake(self, where: str, recent: tuple[str, ...], label: str) -> None:
        """A move counted as taken in ``where`` after ``recent`` was not: it is taken back."""
        counts = self.after.get((where, recent))
        if counts is not None and label in counts:
            counts[label] -= 1
            if counts[label] <= 0:
                del counts[label]  # never taken there after those steps
                spot = self._index.get((where, recent))
                if spot is not None:  # looked at again from there
                    self._ended[spot[0]] = min(self._ended[spot[0]], spot[1])
            self.stuck.clear()

    def steer(self, where: str, recent: tuple[str, ...], left: int) -> list[Way] | None:
        """One of the shortest ways (at most ``left`` moves, and at most ``CONTEXT + 1``: enough
        to come to any last steps; drawn at random among them) from ``where`` after ``recent``
        to a common move never tried in its state after its last ``CONTEXT`` steps, by moves of
        one step each that led, last time they were taken, from a state to a state with moves:
        each move's state, the last steps before it and its label, that move last. Among the
        shortest, one that keeps the call going is preferred while there are more than
        ``ROOM`` steps left after it, then one that ends it (or whose next state is not
        known). None: no such way."""
        reach = min(left, CONTEXT + 1)
        if (where, recent, reach) in self.stuck:
            return None
        after, nothing = self.after, Counter[str]()
        frontier: list[tuple[str, tuple[str, ...], tuple[Way, ...]]] = [(where, recent, ())]
        met = {(where, recent)}
        for depth in range(reach):
            going: list[tuple[tuple[Way, ...], Way]] = []
            ending: list[tuple[tuple[Way, ...], Way]] = []
            ways = [(node, self._moves(node[0])) for node in frontier]
            for (state, context, path), moves in ways:
                done = after.get((state, context), nothing)
                for label, _, there in moves:
                    if label not in done:
                        way = (path, (state, context, label))
                        (going if there is not None else ending).append(way)
            found = (going or ending) if left - depth > ROOM else (ending or going)
            if found:
                path, last = found[self.rng.randrange(len(found))]
                return [*path, last]
            frontier = []
            for (state, context, path), moves in ways:
                for label, step, there in moves:
                    if step is None or there is None:
                        continue
                    node = (there, (*context, step)[-CONTEXT:])
                    if node not in met and len(met) < MAX_PLAN:
                        met.add(node)
                        frontier.append((*node, (*path, (state, context, label))))
        if len(self.stuck) >= MAX_SEEN:
            self.stuck.clear()
        self.stuck.add((where, recent, reach))
        return None

    def _moves(self, state: str) -> list[tuple[str, str | None, str | None]]:
        """The common moves from ``state``: label, step (None: a move of several steps, which
        a way does not go through), and the state with moves the step led to last time (None:
        not known, or it led elsewhere). Kept, for a state kept, until a step leads somewhere
        else or a state is found."""
        found = self.moves.get(state)
        if found is None:
            led, offers = self.led, self.offers
            found = []
            for offer in offers.get(state, ()):
                if offer.rare:
                    continue
                step = describe(offer.steps[0]) if len(offer.steps) == 1 else None
                there = led.get((state, step)) if step is not None else None
                found.append((offer.label, step, there if there in offers else None))
            if state in offers:
                self.moves[state] = found
        return found

    def _model_changed(self) -> None:
        """A state was found or a step led somewhere else: each state's moves and the ways not
        found are made again."""
        self.moves.clear()
        self.stuck.clear()
        self._ended = [0, 0]  # a move may now be known to end the call where it was not

    def _fewest(self, counts: Counter[str], labels: list[str]) -> str:
        """One of ``labels`` taken least often by ``counts`` (ties at random)."""
        fewest = min(counts[label] for label in labels)
        least = [label for label in labels if counts[label] == fewest]
        return least[self.rng.randrange(len(least))]

    def _after_last(self, walk: Walk, end: str) -> str:
        """Where the walk's last step led: the end of the call, or, when the caller hung up
        only because its steps ran out (``max_steps``), the state the bot then waited in. That
        step did not end the call: taken as ending it, a move that keeps the call going was
        not steered through, and was counted as ending whenever a caller took it last."""
        listening = walk.listening
        ran_out = (end == EndReason.CALLER_HUNG_UP.value and len(walk.steps) >= self.max_steps
                   and not isinstance(walk.steps[-1], HangUp))  # fmt: skip
        if ran_out and listening.waiting and listening.state is not None:
            return listening.state.id
        return f"end {end}"

    def learn(self, walk: Walk, end: str) -> int:
        """Keeps where each step of ``walk`` led and the steps that first led to each state;
        ``end`` is how the call ended. Returns how many things it showed first: a state, a
        move from a state to the next, or two such moves in a row."""
        trail = [*walk.trail, (self._after_last(walk, end), "")]
        for (here, step), (there, _) in pairwise(trail):
            if self.led.get((here, step)) != there and (
                (here, step) in self.led or len(self.led) < MAX_SEEN
            ):
                self.led[here, step] = there
                self._model_changed()
        done = [step for _, step in walk.trail]
        for i, (where, _) in enumerate(walk.trail):
            if where == "no input":
                continue
            if where not in self.first and len(self.first) < MAX_STATES:
                self.first[where] = tuple(walk.steps[:i])
            key = (where, tuple(done[max(0, i - CONTEXT) : i]))
            if key not in self._index and len(self._index) < MAX_CONTEXTS:
                kind = 0 if came_back(where, walk.trail[max(0, i - CONTEXT) : i]) else 1
                self._index[key] = (kind, len(self.contexts[kind]))
                self.contexts[kind].append((key, tuple(walk.steps[:i])))
        new = 0
        for i in range(1, len(trail)):
            here, step = trail[i - 1]
            there = trail[i][0]
            found = [(there,), (here, step, there)]
            if i >= 2:
                found.append((*trail[i - 2], here, step, there))
            fresh = [f for f in found if f not in self.seen]
            if fresh and len(self.seen) < MAX_SEEN:
                self.seen.update(fresh)
                new += len(fresh)
        return new
