"""The search's choice of callers, guided by novelty.

Most calls (three in four, while there is one) go to the frontier: the first state, in the order
found, with a common move (``moves.offered``) that no caller has tried there. The call replays
the steps that first led to that state and takes that move. The others start from steps that led
somewhere new before (``Guide.starts``), or from nothing (one in ``FRESH_ODDS``); a start is drawn
with the weight ``1 / ((1 + picks) ** 2 * steps)``, so that the newest and the shortest are
tried first and none is forgotten. Past its start and its aim, a caller takes in each state a
rare move one time in ``RARE_ODDS``, and otherwise the move tried least often in that state
after the same last ``CONTEXT`` steps over the whole search, ties drawn at random: the search
covers the short sequences of moves a bug may hang on instead of walking the same ones again.
Every call goes on until the bot ends it or the steps run out; one caller in ``HOLD_ODDS`` never
hangs up by itself, so that it goes deeper.

After each call, whatever it showed for the first time, a state, a move from a state to the
next, or two such moves in a row, makes the steps that led to it a new start.

Pure: the caller's steps come from ``Walk.draw`` as the engine asks for them; a seeded
``random.Random`` makes every choice, so that the same seed against the same bot makes the same
calls. Bounded: at most ``MAX_STARTS`` starts, ``MAX_SEEN`` things seen and counts kept, and
``MAX_STATES`` states.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from emulator.calling.caller import HangUp, Listen, Step, describe
from emulator.calling.model import ActionType
from emulator.explore.states import State
from emulator.fuzz.caller import Listening
from emulator.fuzz.moves import RARE_ODDS, Offer, offered

FRESH_ODDS = 5
"""One call in ``FRESH_ODDS`` starts from nothing."""
FRONTIER_ODDS = 4
"""Three calls in ``FRONTIER_ODDS`` go to the frontier, while there is one."""

HOLD_ODDS = 2
"""One caller in ``HOLD_ODDS`` never hangs up by itself, so that it goes deeper."""
CONTEXT = 3
"""Past its start, a caller takes the move tried least often after the same last ``CONTEXT``
steps."""
MAX_STARTS = 10_000
MAX_SEEN = 200_000
MAX_STATES = 10_000


@dataclass
class Start:
    """Steps that led somewhere new, and how many callers have started from them."""

    steps: tuple[Step, ...]
    state: str
    """The state the steps led to."""
    picks: int = 0


@dataclass
class Walk:
    """One caller: its start's steps first, then its aim (a state's untried move, taken when
    the bot waits in that state), then drawn moves. ``trail`` is what it did: for each step, the
    state the bot waited in when it was asked for (``start`` before any)."""

    guide: Guide
    listening: Listening
    pending: list[Step]
    aim: tuple[str, Offer] | None = None
    trail: list[tuple[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    fresh: tuple[str, str, bool] | None = None
    """The last step began a move drawn here: its state, its label, whether it was the aim."""

    def __post_init__(self) -> None:
        self.held = self.aim
        self.holds = HOLD_ODDS > 0 and self.guide.rng.randrange(HOLD_ODDS) == 0

    def draw(self) -> Step:
        self.fresh = None
        if not self.pending and not self.listening.waiting:
            # The engine reads the next step before a plain prompt of a Workflow that waits
            # for nothing (a goodbye), and uses it there only if it is a hang-up: a move drawn
            # now would be counted as tried in a state that is gone. A listen is used only at
            # an input turn, if one comes; now and then a hang-up in the prompt.
            rare = self.guide.rng.randrange(RARE_ODDS) == 0 and not self.holds
            step: Step = HangUp(ActionType.PLAY_PROMPT, 1.0) if rare else Listen()
            self.fresh = ("no input", "", False)
            return self._took("no input", step)
        state = self.listening.state
        where = state.id if state is not None else "start"
        if not self.pending:
            offers = self.guide.offers_in(where, state)
            aimed = self.aim is not None and self.aim[0] == where
            move = (
                self.aim[1]
                if self.aim is not None and aimed
                else self.guide.choose(
                    where, offers, tuple(d for _, d in self.trail[-CONTEXT:]), self.holds
                )
            )
            if aimed:  # counted as tried when it was aimed at (``Guide.walk``)
                self.aim = None
            self.fresh = (where, move.label, aimed)
            self.pending.extend(move.steps)
        return self._took(where, self.pending.pop(0))

    def _took(self, where: str, step: Step) -> Step:
        self.trail.append((where, describe(step)))
        self.steps.append(step)
        return step

    def renew(self) -> Step | None:
        """The last step again, for the state of now, when it began a move drawn here (not one
        of its start's): it was drawn for a state that is gone, and never used
        (``caller.DrawnSteps``). None: it stays."""
        if self.fresh is None:
            return None
        where, label, aimed = self.fresh
        self.trail.pop()
        self.steps.pop()
        self.pending.clear()
        if aimed:
            self.aim = self.held
        elif label:
            self.guide.tried[where, label] -= 1
        return self.draw()


class Guide:
    """Chooses each call's caller (``walk``) and learns from what it did (``learn``)."""

    def __init__(self, rng: random.Random, max_steps: int) -> None:
        self.rng = rng
        self.max_steps = max_steps
        self.starts: list[Start] = []
        self.seen: set[tuple[str, ...]] = set()
        self.tried: Counter[tuple[str, str]] = Counter()
        self.after: Counter[tuple[str, tuple[str, ...], str]] = Counter()
        self.offers: dict[str, list[Offer]] = {}
        self.first: dict[str, tuple[Step, ...]] = {}
        """Each state found, in order, with the steps that first led to it."""

    def offers_in(self, where: str, state: State | None) -> list[Offer]:
        """The moves from ``state`` (named ``where``), kept once made."""
        offers = self.offers.get(where)
        if offers is None:
            offers = offered(state)
            if len(self.offers) < MAX_STATES:
                self.offers[where] = offers
        return offers

    def walk(self, listening: Listening) -> Walk:
        """A new caller; ``listening`` tells what the bot waits for now."""
        if self.rng.randrange(FRONTIER_ODDS) != 0:
            aim = self.frontier()
            if aim is not None:
                self.tried[aim[0], aim[1].label] += 1  # taken or not, it counts
                return Walk(self, listening, list(self.first[aim[0]]), aim)
        if not self.starts or self.rng.randrange(FRESH_ODDS) == 0:
            return Walk(self, listening, [])
        return Walk(self, listening, list(self.pick(self.starts)))

    def pick(self, starts: list[Start]) -> tuple[Step, ...]:
        """One of ``starts``, drawn with the weight ``1 / ((1 + picks) ** 2 * steps)``: its
        steps."""
        weights = [1 / ((1 + s.picks) ** 2 * len(s.steps)) for s in starts]
        start = self.rng.choices(starts, weights)[0]
        start.picks += 1
        return start.steps

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
               holds: bool = False) -> Offer:  # fmt: skip
        """A move from the state ``where`` after the steps ``recent``: a rare one one time in
        ``RARE_ODDS``; among those tried least often here after the same steps. A caller that
        ``holds`` never hangs up."""
        if holds:
            offers = [o for o in offers if not isinstance(o.steps[0], HangUp)] or offers
        rare = [o for o in offers if o.rare]
        pool = [o for o in offers if not o.rare] or rare
        if rare and self.rng.randrange(RARE_ODDS) == 0:
            pool = rare
        if len(self.after) >= MAX_SEEN:
            self.after.clear()
        label = self._fewest(where, recent, [o.label for o in pool])
        move = next(o for o in pool if o.label == label)
        self.after[where, recent, label] += 1
        self.tried[where, move.label] += 1
        return move

    def _fewest(self, where: str, recent: tuple[str, ...], labels: list[str]) -> str:
        """One of ``labels`` tried least often in ``where`` after ``recent`` (ties at random)."""
        fewest = min(self.after[where, recent, label] for label in labels)
        least = [label for label in labels if self.after[where, recent, label] == fewest]
        return least[self.rng.randrange(len(least))]

    def learn(self, walk: Walk, end: str) -> int:
        """Keeps, as new starts, the steps that led to what ``walk`` showed first; ``end`` is
        how the call ended. Returns how many things it showed first."""
        trail = [*walk.trail, (f"end {end}", "")]
        for i, (where, _) in enumerate(walk.trail):
            if where != "no input" and where not in self.first and len(self.first) < MAX_STATES:
                self.first[where] = tuple(walk.steps[:i])
        new = 0
        for i in range(1, len(trail)):
            here, step = trail[i - 1]
            there = trail[i][0]
            found = [(there,), (here, step, there)]
            if i >= 2:
                found.append((*trail[i - 2], here, step, there))
            fresh = [f for f in found if f not in self.seen]
            if not fresh or len(self.seen) >= MAX_SEEN:
                continue
            self.seen.update(fresh)
            new += len(fresh)
            if i < len(walk.steps) and i < self.max_steps and len(self.starts) < MAX_STARTS:
                self.starts.append(Start(tuple(walk.steps[:i]), there))
        return new
