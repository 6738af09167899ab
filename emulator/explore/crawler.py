"""The breadth-first crawl of a calling bot's call flow.

A path is a sequence of moves. Each path is one fresh call (a new call id) whose caller takes
the path's moves and then hangs up at the next waiting point; the Workflows the bot answered show every waiting point the
call reached, so the state a path leads to is the waiting point after its last move, or the end
of the call (a leaf: the bot hung up, transferred, failed...). A state is expanded once, from
the first (shortest) path that reaches it, with every move ``edges.moves`` gives it. Calls run
``jobs`` at a time in virtual time; the graph is built in path order whatever order they finish
in, so the same bot gives the same graph. The crawl stops at ``max_depth`` moves and
``max_calls`` calls, and says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from emulator.calling.caller import CallerScript
from emulator.calling.events import EndReason
from emulator.calling.model import PlayPrompt, Recognize, Record, Workflow
from emulator.calling.session import CallSettings, place_call
from emulator.calling.wire import loads, read_workflow
from emulator.errors import WireError
from emulator.explore.edges import Move, moves
from emulator.explore.states import DEFAULT_MASKER, Masker, State, observe
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import TranscriptStore

THEN = ("silence 0.1s", "hangup")
"""What a path's caller does after its moves: at the next waiting point (an input turn), a
moment of silence and a hang-up. A prompt that is not a turn (a goodbye) is heard out, so a bot
that hangs up after it ends the call itself."""
START = "start"
"""The id of the node every crawl starts from (the call being placed)."""


@dataclass(frozen=True, slots=True)
class Edge:
    """A move from a state and where it led: a state (``to``) or the end of the call."""

    source: str
    move: Move
    to: str | None
    end: str | None
    call_id: str
    errors: tuple[Finding, ...] = ()
    steps: tuple[str, ...] = ()
    """The caller steps of the whole path, from the start of the call."""


@dataclass
class Graph:
    """The call flow: states by id (in the order found), edges in path order, the bounds hit."""

    states: dict[str, State] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    calls: int = 0
    bounds: list[str] = field(default_factory=list)

    def edges_from(self, state_id: str) -> list[Edge]:
        return [e for e in self.edges if e.source == state_id]


@dataclass(frozen=True)
class Visit:
    """One path's call: the waiting points it reached, how it ended, its error findings."""

    states: tuple[State, ...]
    end: EndReason
    call_id: str
    errors: tuple[Finding, ...]


def waiting_points(workflows: Sequence[Workflow], masker: Masker = DEFAULT_MASKER) -> list[State]:
    """The states of a call's Workflows, in order: each recognize or record, with the prompts
    played since the one before."""
    states: list[State] = []
    heard: list[PlayPrompt] = []
    for workflow in workflows:
        for action in workflow.actions:
            if isinstance(action, PlayPrompt):
                heard.append(action)
            elif isinstance(action, Recognize | Record):
                states.append(observe(action, heard, masker))
                heard = []
    return states


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
    ) -> None:
        self.settings = settings
        self.store = store
        self.max_depth = max_depth
        self.max_calls = max_calls
        self.jobs = jobs
        self.masker = masker
        self.graph = Graph()

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
        return self.graph

    async def visit_all(self, paths: list[tuple[Move, ...]]) -> list[Visit]:
        gate = asyncio.Semaphore(self.jobs)

        async def one(path: tuple[Move, ...]) -> Visit:
            async with gate:
                return await self.visit(path)

        visits = await asyncio.gather(*(one(path) for path in paths))
        self.graph.calls += len(paths)
        return list(visits)

    def grow(
        self, frontier: list[tuple[str, tuple[Move, ...]]], visits: list[Visit]
    ) -> list[tuple[str, tuple[Move, ...]]]:
        """Record each path's edge; the next level's paths, from the states found first."""
        following: list[tuple[str, tuple[Move, ...]]] = []
        for (source, path), visit in zip(frontier, visits, strict=True):
            reached = visit.states[len(path)] if len(visit.states) > len(path) else None
            if reached is None:
                self.add_edge(source, path, None, visit)
                continue
            self.add_edge(source, path, reached.id, visit)
            if reached.id in self.graph.states:
                continue
            self.graph.states[reached.id] = reached
            if len(path) >= self.max_depth:
                self.note_bound(f"max depth ({self.max_depth})")
                continue
            following += [(reached.id, (*path, move)) for move in moves(reached)]
        return following

    def add_edge(self, source: str, path: tuple[Move, ...], to: str | None, visit: Visit) -> None:
        move = path[-1] if path else Move("call", ())  # no move: the call placed, from the start
        steps = tuple(step for m in path for step in m.steps)
        self.graph.edges.append(Edge(source, move, to, None if to else visit.end, visit.call_id,
                                     visit.errors, steps))  # fmt: skip

    def note_bound(self, bound: str) -> None:
        if bound not in self.graph.bounds:
            self.graph.bounds.append(bound)

    async def visit(self, path: tuple[Move, ...]) -> Visit:
        """One call: the path's moves, then a hang-up at the next waiting point (``THEN``)."""
        steps = [step for move in path for step in move.steps] + list(THEN)
        workflows: list[Workflow] = []

        def listen(kind: str, payload: JSONObject, vtime: float) -> None:
            if kind == "http.response":
                workflow = _workflow_of(payload)
                if workflow is not None:
                    workflows.append(workflow)

        settings = replace(self.settings, caller=CallerScript.from_inline("; ".join(steps)))
        report = await place_call(settings, self.store, listener=listen)
        errors = tuple(f for f in report.findings if f.severity is Severity.ERROR)
        return Visit(tuple(waiting_points(workflows, self.masker)), report.end_reason,
                     report.call_id, errors)  # fmt: skip


def _workflow_of(payload: JSONObject) -> Workflow | None:
    """The Workflow a 2xx answer carried, when it reads as one."""
    status, body = payload.get("status"), payload.get("body")
    if not isinstance(status, int) or not 200 <= status < 300 or not isinstance(body, str):
        return None
    try:
        return read_workflow(loads(body))
    except WireError:
        return None
