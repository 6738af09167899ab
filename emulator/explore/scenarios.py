"""The regression suite an exploration writes (``--write-scenarios DIR``): one scenario per
distinct path to a leaf (each edge that ended the call), made from the call that took it by
``emulator.replay`` (``botemu transcript to-scenario``): its caller steps, its prompts with their
volatile parts as patterns (the masks the states were keyed by), its outcomes and its ending. Run
again with ``botemu test`` against the same bot, each passes; when the bot changes, each that
no longer holds says where.

Above the scenario, comments name its path as the explorer saw it: each state with its last
prompt as the bot said it, and how the call ended with what the caller heard after the last
input; the expectations themselves keep the volatile parts as patterns.

A scenario is named after its path (``explore: press 1; press 12345678#``) and its file after
the path too, numbered in path order. Paths are written in the graph's order, at most
``MAX_SCENARIOS``; a call that cannot be made a scenario is skipped with its reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from emulator.explore.graph import START, Edge, Graph
from emulator.explore.report import PROMPT_WIDTH, describe
from emulator.explore.states import spoken
from emulator.replay.convert import SCHEMA, ReplayError, replay_of
from emulator.replay.masking import Masker
from emulator.transcripts.store import TranscriptStore

MAX_SCENARIOS = 1000
MAX_SLUG = 60


@dataclass(frozen=True, slots=True)
class Written:
    """One leaf's scenario: its file name, its text, and what it cannot reproduce exactly
    (``notes``); or, when it could not be made, ``skipped`` says why."""

    name: str
    text: str = ""
    notes: tuple[str, ...] = ()
    skipped: str | None = None


def leaf_scenarios(
    graph: Graph, store: TranscriptStore, masker: Masker, schema: str | None = None
) -> list[Written]:
    """A scenario for each path of ``graph`` that ended the call, in path order."""
    made: list[Written] = []
    leaves = [e for e in graph.edges if e.to is None][:MAX_SCENARIOS]
    for n, edge in enumerate(leaves, 1):
        steps = "; ".join(edge.steps) or "(the call placed)"
        name = f"{n:03d}-{_slug(steps)}.yaml"
        try:
            replay = replay_of(store, edge.call_id, masker=masker, schema=schema or SCHEMA)
        except ReplayError as e:
            made.append(Written(name, skipped=str(e)))
            continue
        text = _renamed(replay.text, f"explore: {steps}"[:300], _path(graph, edge))
        made.append(Written(name, text, replay.notes))
    return made


def _slug(steps: str) -> str:
    slug = re.sub(r"[^a-z0-9#*]+", "-", steps.lower()).replace("#", "pound").replace("*", "star")
    return slug.strip("-")[:MAX_SLUG].strip("-") or "call"


def _path(graph: Graph, leaf: Edge) -> list[str]:
    """The comment lines that name ``leaf``'s path: each move and where it led, as said."""
    chain = [leaf]
    while chain[-1].source != START and len(chain) <= leaf.depth:
        into = graph.reached_by(chain[-1].source)
        if into is None:
            break
        chain.append(into)
    lines = ["# The path, as the bot said it:"]
    for edge in reversed(chain):
        if edge.to is not None:
            lines.append(f"#   {edge.move.label} -> {describe(graph.states[edge.to])}")
        else:
            heard = f" after {spoken(edge.heard, len(edge.tail), PROMPT_WIDTH)}" if edge.tail else ""
            lines.append(f"#   {edge.move.label} -> end: {edge.end}{heard}")
    return [" ".join(line.splitlines()) for line in lines]


def _renamed(text: str, name: str, comments: list[str]) -> str:
    """``text`` with its top-level ``name:`` line naming the path instead of the call, and
    ``comments`` above it."""
    line = "\n".join([*comments, f"name: {json.dumps(name, ensure_ascii=False)}"])
    return re.sub(r"^name: .*$", lambda _: line, text, count=1, flags=re.M)
