"""The follow-up calls of an exploration: what one call per move cannot show.

A state is expanded once, so the crawl sees one silence in a menu, not the tenth. Two checks
need calls of their own, made after the crawl and counted in its calls:

- **loops**: where silence (or a wrong key) leads back round to a menu already heard, one call
  goes to that menu and takes the loop's moves ``REPEATS`` times over. If the bot still asks
  again after that, only the caller's hang-up would end the call: an endless retry.
- **twins**: where two choices of a menu lead to the same state, one call per choice takes it and
  then the same way to a good end (``flow.route``). If every one of them hears the same prompts
  (masked) and ends the same way, the choices do not act: the bot never tells them apart.

At most ``MAX_CHECKS`` of each; when ``max_calls`` leaves no room, the checks not made are
named in the graph's bounds. A check one of whose calls was cut off (``CallCut``) or never
started because the crawl's time ran out is not judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from emulator.calling.events import EndReason
from emulator.calling.session import CallCut
from emulator.explore.flow import choice_edges, complete, loops, route
from emulator.explore.graph import Check, Edge, Graph, Visit

Call = Callable[[list[str]], Awaitable[Visit]]
REPEATS = 12
"""How many times over a loop is followed in one call."""
MAX_CHECKS = 20
LOOP_KINDS = ("silence", "wrong")
ENDLESS = frozenset({EndReason.WORKFLOW_LIMIT, EndReason.DEADLINE})
Judge = Callable[[list[Visit]], Check]
Plan = tuple[Judge, list[list[str]]]
"""A check to make: its verdict on the visits of its runs, and each run's caller steps."""


async def follow_up(
    graph: Graph, call: Call, max_calls: int, jobs: int = 4, stopped: Callable[[], bool] = bool
) -> int:
    """Make the follow-up calls of ``graph``, adding their ``Check``s to it; none starts once
    ``stopped()``. Returns the number of checks not judged because a call of theirs was cut off
    or never started for lack of time."""
    planned = _loop_plans(graph) + _twin_plans(graph)
    made: list[Plan] = []
    for plan in planned:
        if graph.calls + sum(len(runs) for _, runs in made) + len(plan[1]) > max_calls:
            _note(graph, f"max calls ({max_calls}): {len(planned) - len(made)} follow-up "
                         "checks not made")  # fmt: skip
            break
        made.append(plan)
    gate = asyncio.Semaphore(jobs)
    started = 0

    async def one(steps: list[str]) -> Visit | None:
        nonlocal started
        async with gate:
            if stopped():
                return None
            started += 1  # a call cut off was made all the same
            try:
                return await call(steps)
            except CallCut:
                return None

    cut = 0
    for (judge, _runs), visits in zip(
        made, await asyncio.gather(*(_all(one, runs) for _, runs in made)), strict=True
    ):
        done = [visit for visit in visits if visit is not None]
        if len(done) < len(visits):
            cut += 1
            continue
        graph.checks.append(judge(done))
    graph.calls += started
    return cut


async def _all(
    one: Callable[[list[str]], Awaitable[Visit | None]], runs: list[list[str]]
) -> list[Visit | None]:
    return list(await asyncio.gather(*(one(steps) for steps in runs)))


def _loop_plans(graph: Graph) -> list[Plan]:
    plans: list[Plan] = []
    for kind in LOOP_KINDS:
        for cycle in loops(graph, kind)[:MAX_CHECKS]:
            reach = graph.reached_by(cycle[0].source)
            if reach is None:
                continue
            steps = list(reach.steps)
            for n in range(REPEATS):
                steps += cycle[n % len(cycle)].move.steps
            plans.append((_loop_judge(cycle[0], reach.depth), [steps]))
    return plans


def _loop_judge(entry: Edge, depth: int) -> Judge:
    def judge(visits: list[Visit]) -> Check:
        [visit] = visits
        broken = len(visit.states) > depth + REPEATS or visit.end in ENDLESS
        return Check("loop", entry.source, entry.move.kind, broken, entry.steps,
                     (visit.call_id,), repeats=REPEATS)  # fmt: skip

    return judge


def _twin_plans(graph: Graph) -> list[Plan]:
    plans: list[Plan] = []
    for state_id in graph.states:
        if graph.states[state_id].kind != "recognize" or not complete(graph, state_id):
            continue
        reach = graph.reached_by(state_id)
        groups: dict[str, list[Edge]] = {}
        for edge in choice_edges(graph, state_id).values():
            if edge.to is not None and edge.to != state_id and not edge.errors:
                groups.setdefault(edge.to, []).append(edge)
        for to, edges in groups.items():
            way = route(graph, to)
            if len(edges) < 2 or reach is None or way is None:
                continue
            after = [step for move in way for step in move.steps]
            runs = [[*reach.steps, *e.move.steps, *after] for e in edges]
            plans.append((_twin_judge(state_id, edges), runs))
    return plans[:MAX_CHECKS]


def _twin_judge(state_id: str, edges: list[Edge]) -> Judge:
    def judge(visits: list[Visit]) -> Check:
        alike = len({(v.heard, v.end) for v in visits}) == 1
        names = tuple(e.move.choice or e.move.label for e in edges)
        return Check("twins", state_id, "choice", alike, edges[0].steps,
                     tuple(v.call_id for v in visits), choices=names)  # fmt: skip

    return judge


def _note(graph: Graph, bound: str) -> None:
    if bound not in graph.bounds:
        graph.bounds.append(bound)
