"""The call flow as a tree a person reads: each state once, under the first move that reached
it, with its last prompt and what it waits for; each move from it on a line of its own, with
where it led (a state, shown again by its id, or how the call ended) and its error findings.
Prompts are shown as the bot said them (``State.said``), the words a caller heard after the last
input of a path that ended the call beside how it ended. And the graph as JSON (``to_json``,
format version 2, described by ``schema.json``: a state's ``prompts`` as said and its ``key``
normalised; an edge that ended the call with what was ``heard``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from emulator.explore.crawler import START, Edge, Graph
from emulator.explore.states import State, spoken
from emulator.findings import Finding

PROMPT_WIDTH = 72


def tree(graph: Graph) -> str:
    lines: list[str] = []
    shown: set[str] = set()
    _node(graph, START, 0, shown, lines)
    if graph.bounds:
        lines.append(f"bounds hit: {', '.join(graph.bounds)}")
    lines.append(f"{len(graph.states)} states, {len(graph.edges)} paths, {graph.calls} calls")
    return "\n".join(lines) + "\n"


def _node(graph: Graph, state_id: str, depth: int, shown: set[str], lines: list[str]) -> None:
    shown.add(state_id)
    for edge in graph.edges_from(state_id):
        lines.append(f"{'  ' * depth}{_edge(graph, edge)}")
        if edge.to is not None and edge.to not in shown:
            _node(graph, edge.to, depth + 1, shown, lines)


def _edge(graph: Graph, edge: Edge) -> str:
    errors = "".join(f"  ! {f.rule}: {f.message}" for f in edge.errors[:3])
    if edge.to is None:
        heard = f" after {spoken(edge.heard, len(edge.tail), PROMPT_WIDTH)}" if edge.tail else ""
        return f"{edge.move.label} -> end: {edge.end}{heard}{errors}"
    return f"{edge.move.label} -> [{edge.to}] {describe(graph.states[edge.to])}{errors}"


def describe(state: State) -> str:
    """A state in one line: what it waits for and the last thing the caller heard."""
    prompts = said(state)
    heard = prompts[-1] if prompts else "(no prompt)"
    if len(heard) > PROMPT_WIDTH:
        heard = heard[: PROMPT_WIDTH - 1] + "…"
    if state.kind == "recognize":
        waits = f"menu ({', '.join(c.name for c in state.choices)})"
    elif state.kind == "digits":
        waits = f"digits (up to {state.max_digits})" if state.max_digits else "digits"
    else:
        waits = "record"
    return f"{waits}: {heard!r}"


def said(state: State) -> tuple[str, ...]:
    """A state's prompts as the bot said them (as normalised for a state made without them)."""
    return state.said or state.prompts


FORMAT_VERSION = 2
SCHEMA_PATH = Path(__file__).with_name("schema.json")
"""The JSON Schema of ``to_json``'s document (draft-07), shipped in the package."""


def to_json(graph: Graph, bot: str, findings: Sequence[Finding]) -> dict[str, Any]:
    """The graph as ``botemu explore --json`` writes it (format ``FORMAT_VERSION``)."""
    return {
        "version": FORMAT_VERSION,
        "bot": bot,
        "states": [_state_json(state_id, state) for state_id, state in graph.states.items()],
        "edges": [
            {
                "from": e.source,
                "move": e.move.label,
                "steps": list(e.steps),
                "to": e.to,
                "end": e.end,
                "call_id": e.call_id,
                "errors": [f.to_json() for f in e.errors],
                "heard": list(e.heard),
            }
            for e in graph.edges
        ],
        "findings": [f.to_json() for f in findings],
        "calls": graph.calls,
        "bounds": list(graph.bounds),
    }


def _state_json(state_id: str, state: State) -> dict[str, Any]:
    return {
        "id": state_id,
        "kind": state.kind,
        "prompts": list(said(state)),
        "key": state.key,
        "choices": [
            {"name": c.name, "dtmf": c.dtmf, "speech": list(c.speech)} for c in state.choices
        ],
        "max_digits": state.max_digits,
        "stop_tones": list(state.stop_tones),
        "heard_seconds": round(state.heard_seconds, 3),
    }
