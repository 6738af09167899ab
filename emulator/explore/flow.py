"""Questions about the shape of an explored call flow, answered from its graph alone: which edges
end the call well, which states have no way out, which moves go round in a loop, how to get from
a state to a good end, and which menus are entered fresh. Pure: no I/O.

- **A good end** is the bot's own: it hung up, rejected the call, or ran a last Workflow with no
  callback (a goodbye: the platform hangs up after it). The caller's hang-up is not a way out, nor
  a call the platform ended because the bot failed.
- **A state is complete** when every move ``edges.moves`` gives it was taken. A state cut off by
  a bound is not complete, and is taken to have a way out (the crawl cannot tell), so a bound
  never makes a dead end.
"""

from __future__ import annotations

from collections import deque

from emulator.calling.events import EndReason
from emulator.explore.edges import RETRY_KINDS, Move, moves
from emulator.explore.graph import START, Edge, Graph

GOOD_ENDS = frozenset({EndReason.BOT_HUNG_UP, EndReason.BOT_REJECTED, EndReason.NO_CALLBACK})
PLATFORM_ENDS = frozenset({EndReason.WORKFLOW_LIMIT, EndReason.DEADLINE})
"""The ends the platform comes to by itself, whatever the bot meant."""
STALLED = 10
"""Workflows in a row that play prompts with a callback and neither listen nor hang up, after
which a call that ends is taken to have had no exit (a hold for ever): fewer than the 13 after
which a real call was dropped, more than a bot's few status prompts before a goodbye."""
REPEAT_WORDS = frozenset(
    {"again", "back", "help", "main", "menu", "options", "previous", "repeat", "replay", "start"}
)
"""A choice whose name or speech has one of these words may bring the same menu back."""


def ends_well(edge: Edge) -> bool:
    return edge.to is None and not edge.errors and edge.end in GOOD_ENDS


def no_exit(edge: Edge) -> bool:
    """Whether ``edge`` ended a call the platform had to end by itself: its workflow limit or
    deadline reached, or ``STALLED`` Workflows in a row that never listened, and no good end."""
    if edge.to is not None or edge.end in GOOD_ENDS:
        return False
    return edge.end in PLATFORM_ENDS or edge.stalled >= STALLED


def complete(graph: Graph, state_id: str) -> bool:
    return len(graph.edges_from(state_id)) >= len(moves(graph.states[state_id]))


def dead_ends(graph: Graph) -> list[str]:
    """The states from which no path of the graph reaches a good end, in the order found."""
    out: dict[str, list[Edge]] = {state_id: [] for state_id in graph.states}
    for edge in graph.edges:
        if edge.source in out:
            out[edge.source].append(edge)
    free: set[str] = set()
    changed = True
    while changed:  # at most one pass per state
        changed = False
        for state_id, edges in out.items():
            if state_id in free:
                continue
            if not complete(graph, state_id) or any(ends_well(e) or e.to in free for e in edges):
                free.add(state_id)
                changed = True
    return [state_id for state_id in graph.states if state_id not in free]


def move_edge(graph: Graph, state_id: str, kind: str) -> Edge | None:
    """The first edge from ``state_id`` whose move is of ``kind``."""
    return next((e for e in graph.edges_from(state_id) if e.move.kind == kind), None)


def loops(graph: Graph, kind: str) -> list[list[Edge]]:
    """Each cycle the moves of ``kind`` go round (silence after silence leads back to a menu
    already heard), once, as its edges from the state where it closes."""
    found: list[list[Edge]] = []
    seen: set[frozenset[str]] = set()
    for state_id in graph.states:
        chain: list[str] = [state_id]
        edges: list[Edge] = []
        while (edge := move_edge(graph, chain[-1], kind)) is not None:
            if edge.to is None or edge.errors:
                break
            edges.append(edge)
            if edge.to in chain:
                start = chain.index(edge.to)
                cycle = frozenset(chain[start:])
                if cycle not in seen:
                    seen.add(cycle)
                    found.append(edges[start:])
                break
            chain.append(edge.to)
    return found


def route(graph: Graph, state_id: str) -> list[Move] | None:
    """The moves of a shortest way from ``state_id`` to a good end (the first found in edge
    order), or None when there is none."""
    queue: deque[tuple[str, list[Move]]] = deque([(state_id, [])])
    seen = {state_id}
    while queue:
        at, taken = queue.popleft()
        for edge in graph.edges_from(at):
            if ends_well(edge):
                return [*taken, edge.move]
            if edge.to is not None and not edge.errors and edge.to not in seen:
                seen.add(edge.to)
                queue.append((edge.to, [*taken, edge.move]))
    return None


def choice_edges(graph: Graph, state_id: str) -> dict[str, Edge]:
    """A menu's choices by name, each by its first edge (its DTMF key when it has one)."""
    found: dict[str, Edge] = {}
    for edge in graph.edges_from(state_id):
        if edge.move.kind == "choice" and edge.move.choice is not None:
            found.setdefault(edge.move.choice, edge)
    return found


def may_repeat(graph: Graph, state_id: str, choice: str) -> bool:
    """Whether ``choice`` says it brings the menu back (``REPEAT_WORDS``)."""
    named = next((c for c in graph.states[state_id].choices if c.name == choice), None)
    words = " ".join([choice, *(named.speech if named else ())]).casefold().split()
    return any(word.strip(".,!?") in REPEAT_WORDS for word in words)


def fresh(graph: Graph) -> set[str]:
    """The states entered by a move that is not a retry (a choice, digits, speech, the call
    itself): a menu met for the first time rather than asked again."""
    return {
        e.to
        for e in graph.edges
        if e.to is not None and (e.source == START or e.move.kind not in RETRY_KINDS)
    }
