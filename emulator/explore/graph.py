"""The call-flow graph an exploration builds: states (``states.State``) by id, the edges between
them (each a path's last move and where it led), the bounds hit, and what the follow-up calls
found (``Check``). Data only."""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.calling.events import EndReason
from emulator.explore.edges import Move
from emulator.explore.states import State
from emulator.findings import Finding

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
    depth: int = 0
    """How many moves the path has (its last one is ``move``)."""
    tail: tuple[str, ...] = ()
    """What the caller heard after the move when it ended the call (a goodbye), masked."""
    heard: tuple[str, ...] = ()
    """The same as the bot said it (the first ``crawler.MAX_HEARD`` prompts)."""
    stalled: int = 0
    """When it ended the call: how many Workflows in a row at the end of the call played
    prompts with a callback and never listened (nor hung up)."""


@dataclass
class Graph:
    """The call flow: states by id (in the order found), edges in path order, the bounds hit."""

    states: dict[str, State] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    calls: int = 0
    bounds: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    """What the follow-up calls found (``probes``): loops followed, choices compared."""

    def edges_from(self, state_id: str) -> list[Edge]:
        return [e for e in self.edges if e.source == state_id]

    def reached_by(self, state_id: str) -> Edge | None:
        """The first edge into ``state_id``: its path is the one the state was expanded from."""
        return next((e for e in self.edges if e.to == state_id), None)


@dataclass(frozen=True, slots=True)
class Check:
    """A follow-up call's verdict: ``kind`` ``loop`` (the bot still asked again after
    ``repeats`` such moves in one call: ``broken``) or ``twins`` (``choices`` of ``state`` led
    the caller through the same prompts to the same end: ``broken``)."""

    kind: str
    state: str
    move: str
    broken: bool
    steps: tuple[str, ...]
    call_ids: tuple[str, ...]
    choices: tuple[str, ...] = ()
    repeats: int = 0


@dataclass(frozen=True)
class Visit:
    """One path's call: the waiting points it reached, how it ended, its error findings."""

    states: tuple[State, ...]
    end: EndReason
    call_id: str
    errors: tuple[Finding, ...]
    heard: tuple[str, ...] = ()
    """Every prompt of the call, in order, masked."""
    tail: tuple[str, ...] = ()
    """The prompts after the last waiting point, masked."""
    said: tuple[str, ...] = ()
    """The same as the bot said them (the first ``crawler.MAX_HEARD``)."""
    stalled: int = 0
    """Workflows in a row at the end of the call that played prompts and never listened."""
