"""The breadth-first crawl of a calling bot's call flow.

A path is a sequence of moves. Each path is one fresh call (a new call id) whose caller takes
the path's moves and then hangs up at the next waiting point; the Workflows the bot answered
show every waiting point the call reached, so the state a path leads to is the waiting point
after its last move, or the end of the call (a leaf: the bot hung up, transferred, failed...).
A state is expanded once, from the first (shortest) path that reaches it, with every move
``edges.moves`` gives it. Calls run ``jobs`` at a time in virtual time; the graph is built in
path order whatever order they finish in, so the same bot gives the same graph. The crawl stops
at ``max_depth`` moves, ``max_calls`` calls and ``max_time`` seconds (no call starts after it,
and a call under way then is cut off: its path counts as not followed), and says so. Then the
follow-up calls (``probes``) check what one path per move cannot show: loops followed in one
call, and choices compared to the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from emulator.calling.caller import CallerScript
from emulator.calling.model import Hangup, PlayPrompt, Recognize, Record, Reject, Workflow
from emulator.calling.session import CallCut, CallSettings, RunTime, place_call
from emulator.calling.wire import loads, read_workflow
from emulator.errors import WireError
from emulator.explore.edges import Move, moves
from emulator.explore.graph import START, Check, Edge, Graph, Visit
from emulator.explore.probes import follow_up
from emulator.explore.states import (
    DEFAULT_MASKER,
    Masker,
    State,
    observe,
    prompt_text,
    said_text,
)
from emulator.findings import Severity
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import TranscriptStore

THEN = ("silence 0.1s", "hangup")
"""What a path's caller does after its moves: at the next waiting point (an input turn), a
moment of silence and a hang-up. A prompt that is not a turn (a goodbye) is heard out, so a bot
that hangs up after it ends the call itself."""
__all__ = [
    "START",
    "THEN",
    "Check",
    "Crawler",
    "Edge",
    "Graph",
    "Hearing",
    "Visit",
    "hearing",
    "waiting_points",
]


def waiting_points(workflows: Sequence[Workflow], masker: Masker = DEFAULT_MASKER) -> list[State]:
    """The states of a call's Workflows, in order: each recognize or record, with the prompts
    played since the one before."""
    return hearing(workflows, masker).states


@dataclass(frozen=True, slots=True)
class Hearing:
    """What a call's Workflows let the caller hear: its waiting points, every prompt (masked),
    the prompts after the last waiting point (masked, and as said: at most ``MAX_HEARD``), and
    how many Workflows in a row at the end played prompts with a callback and never listened."""

    states: list[State]
    every: tuple[str, ...]
    tail: tuple[str, ...]
    said: tuple[str, ...]
    stalled: int


MAX_HEARD = 20
"""The prompts after the last input an edge keeps as said (a bot that holds for ever plays
dozens)."""


def hearing(workflows: Sequence[Workflow], masker: Masker = DEFAULT_MASKER) -> Hearing:
    """A call's waiting points, every prompt it played (masked), those after the last waiting
    point, and the Workflows at the end that never listened (``Hearing``)."""
    states: list[State] = []
    heard: list[PlayPrompt] = []
    every: list[str] = []
    stalled = 0
    for workflow in workflows:
        stalled = stalled + 1 if _stalls(workflow) else 0
        for action in workflow.actions:
            if isinstance(action, PlayPrompt):
                heard.append(action)
            elif isinstance(action, Recognize | Record):
                state = observe(action, heard, masker)
                states.append(state)
                every += state.prompts
                heard = []
    prompts = [p for play in heard for p in play.prompts]
    tail = tuple(prompt_text(p, masker) for p in prompts)
    said = tuple(said_text(p, masker) for p in prompts[:MAX_HEARD])
    return Hearing(states, (*every, *tail), tail, said, stalled)


def _stalls(workflow: Workflow) -> bool:
    """Whether ``workflow`` keeps the call going without listening: it has a callback and
    neither waits for input nor hangs up."""
    listens = (Recognize, Record, Hangup, Reject)
    return workflow.callback is not None and not any(
        isinstance(action, listens) for action in workflow.actions
    )


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a crawl has gone: calls made, states found, calls with an error finding."""

    calls: int = 0
    states: int = 0
    errors: int = 0


class Crawler:
    """Explores the bot of ``settings`` (its URL, TLS, token...) into a ``Graph``."""

    def __init__(
        self,
        settings: CallSettings,
        store: TranscriptStore,
        *,
        max_depth: int = 8,
        max_calls: int = 500,
        jobs: int = 4,
        masker: Masker = DEFAULT_MASKER,
        progress: Callable[[Progress], None] | None = None,
        max_time: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.progress = progress
        self.done = Progress()
        self.store = store
        self.max_depth = max_depth
        self.max_calls = max_calls
        self.jobs = jobs
        self.masker = masker
        self.graph = Graph()
        self.max_time = max_time
        self.time = RunTime(max_time, clock)
        self.cut = 0
        """Paths not followed because ``max_time`` ran out."""
        self._known: dict[State, State] = {}
        """Each state heard once: a state heard in many calls is kept as one object."""

    async def crawl(self) -> Graph:
        frontier: list[tuple[str, tuple[Move, ...]]] = [(START, ())]
        while frontier:
            room = self.max_calls - self.graph.calls
            if len(frontier) > room:
                self.note_bound(f"max calls ({self.max_calls})")
                frontier = frontier[:room]
                if not frontier:
                    break
            visits = await self.visit_all([path for _, path in frontier])
            frontier = self.grow(frontier, visits)
        if self.time.over():
            self.note_time(f"{self.cut} paths not followed, follow-up checks not made"
                           if self.cut else "follow-up checks not made")  # fmt: skip
        else:
            cut = await follow_up(self.graph, self.call, self.max_calls, self.jobs,
                                  self.time.over)  # fmt: skip
            if cut:
                self.note_time(f"{cut} follow-up checks cut off")
        return self.graph

    def note_time(self, what: str) -> None:
        """The bound ``max_time`` hit, with what it cut off (replacing what was said before)."""
        head = f"max time ({self.max_time:g} s)"
        self.graph.bounds[:] = [b for b in self.graph.bounds if not b.startswith(head)]
        self.graph.bounds.append(f"{head}: {what}")

    async def visit_all(self, paths: list[tuple[Move, ...]]) -> list[Visit | None]:
        """Each path's call (None: not made, ``max_time`` ran out)."""
        gate = asyncio.Semaphore(self.jobs)

        async def one(path: tuple[Move, ...]) -> Visit | None:
            async with gate:
                if self.time.over():
                    return None
                try:
                    return await self.visit(path)
                except CallCut:  # under way when the time ran out: it shows nothing sure
                    self.graph.calls += 1  # made all the same
                    self.tell(errors=False)
                    return None

        visits = await asyncio.gather(*(one(path) for path in paths))
        self.graph.calls += sum(v is not None for v in visits)
        return list(visits)

    def grow(
        self, frontier: list[tuple[str, tuple[Move, ...]]], visits: list[Visit | None]
    ) -> list[tuple[str, tuple[Move, ...]]]:
        """Record each path's edge; the next level's paths, from the states found first."""
        following: list[tuple[str, tuple[Move, ...]]] = []
        cut = sum(v is None for v in visits)
        for (source, path), visit in zip(frontier, visits, strict=True):
            if visit is None:  # not made: the calls that were made still say what they found
                continue
            reached = visit.states[len(path)] if len(visit.states) > len(path) else None
            if reached is None:
                self.add_edge(source, path, None, visit)
                continue
            found = reached.id  # a hash of the whole state: of a 5,000-choice menu, 8 ms
            self.add_edge(source, path, found, visit)
            if found in self.graph.states:
                continue
            self.graph.states[found] = reached
            if len(path) >= self.max_depth:
                self.note_bound(f"max depth ({self.max_depth})")
                continue
            following += [(found, (*path, move)) for move in moves(reached)]
        if cut:
            self.cut += cut
            self.note_time(f"{self.cut} paths not followed")
            return []
        return following

    def add_edge(self, source: str, path: tuple[Move, ...], to: str | None, visit: Visit) -> None:
        move = path[-1] if path else Move("call", (), "call")  # no move: the call placed
        steps = tuple(step for m in path for step in m.steps)
        ended = to is None
        self.graph.edges.append(Edge(source, move, to, visit.end if ended else None,
                                     visit.call_id, visit.errors, steps, len(path),
                                     visit.tail if ended else (), visit.said if ended else (),
                                     visit.stalled if ended else 0))  # fmt: skip

    def note_bound(self, bound: str) -> None:
        if bound not in self.graph.bounds:
            self.graph.bounds.append(bound)

    async def visit(self, path: tuple[Move, ...]) -> Visit:
        """One call: the path's moves, then a hang-up at the next waiting point (``THEN``)."""
        return await self.call([step for move in path for step in move.steps])

    async def call(self, steps: list[str]) -> Visit:
        """One call whose caller takes ``steps``, then ``THEN``; ``CallCut`` if ``max_time``
        runs out while it is under way."""
        steps = steps + list(THEN)
        workflows: list[Workflow] = []

        def listen(kind: str, payload: JSONObject, vtime: float) -> None:
            if kind == "http.response":
                workflow = answered_workflow(payload)
                if workflow is not None:
                    workflows.append(workflow)

        settings = replace(self.settings, caller=CallerScript.from_inline("; ".join(steps)))
        report = await place_call(settings, self.store, listener=listen, cut=self.time.left())
        errors = tuple(f for f in report.findings if f.severity is Severity.ERROR)
        heard = hearing(workflows, self.masker)
        del workflows[:]  # the call's Workflows are not needed once its states are read
        states = [self.known(state) for state in heard.states]
        self.tell(errors=bool(errors))
        return Visit(tuple(states), report.end_reason, report.call_id, errors, heard.every,
                     heard.tail, heard.said, heard.stalled)  # fmt: skip

    def tell(self, *, errors: bool) -> None:
        """One more call made (with an error finding or not), to ``progress``."""
        self.done = Progress(self.done.calls + 1, len(self.graph.states), self.done.errors + errors)
        if self.progress is not None:
            self.progress(self.done)

    def known(self, state: State) -> State:
        """The one object of ``state`` (at most ``MAX_KNOWN`` remembered)."""
        found = self._known.get(state)
        if found is None:
            if len(self._known) >= MAX_KNOWN:
                self._known.clear()
            found = self._known[state] = self.graph.states.get(state.id, state)
        return found


MAX_KNOWN = 4096
"""Distinct states a crawl remembers the one object of."""


def answered_workflow(payload: JSONObject) -> Workflow | None:
    """The Workflow a call's ``http.response`` event (a 2xx answer) carried, when it reads as
    one."""
    status, body = payload.get("status"), payload.get("body")
    if not isinstance(status, int) or not 200 <= status < 300 or not isinstance(body, str):
        return None
    if len(body) <= READ_CACHE_MAX_CHARS:
        return _read_cached(body)
    return _read(body)


def _read(body: str) -> Workflow | None:
    """The Workflow ``body`` reads as, if it does."""
    try:
        return read_workflow(loads(body))
    except WireError:
        return None


READ_CACHE_MAX_CHARS = 8 * 1024
"""The longest body whose Workflow ``answered_workflow`` remembers (a menu's is about 1 KB; a
Workflow read takes some six times its body's memory, so the 512 remembered take at most about
100 MB)."""
_read_cached = lru_cache(maxsize=512)(_read)
"""``_read``, memoized as the platform's own reading is (``judging.judge``): a bot sends the
same Workflows call after call, and explore and fuzz read every answer of every call (a
seventh of a fuzz run's CPU against the reference bot)."""
