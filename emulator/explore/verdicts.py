"""The findings of an exploration, from its graph and its follow-up checks (``probes``):

- EXPLORE-CRASH-PATH: a path that makes the bot answer 5xx or garbage, or send an invalid
  Workflow, with the caller steps that lead there;
- EXPLORE-NO-EXIT: a path the platform had to end by itself (``flow.no_exit``: the workflow
  limit or the deadline reached, or a bot playing prompts without listening for ever), with
  what the caller heard after its last input;
- EXPLORE-DEAD-END: a state with no way to a good end (``flow.dead_ends``);
- EXPLORE-ENDLESS-RETRY: a loop of silence or wrong keys the bot never ends (``probes``);
- EXPLORE-INERT-CHOICE: a choice that brings its own menu back, or choices the bot never tells
  apart (the same end at once, or the same prompts to the same end: ``probes``);
- EXPLORE-INCONSISTENT: a wrong key or silence asked again in one fresh menu, and ending the call
  or failing in another (``flow.fresh``: a menu asked again after a retry may give up);
- EXPLORE-LONG-PROMPT and EXPLORE-LONG-MENU: prompts too long before a waiting point, menus with
  more choices than a caller can hold.
"""

from __future__ import annotations

from emulator.explore.flow import (
    choice_edges,
    complete,
    dead_ends,
    ends_well,
    fresh,
    may_repeat,
    move_edge,
    no_exit,
)
from emulator.explore.graph import Edge, Graph
from emulator.explore.rules import (
    EXPLORE_CRASH_PATH,
    EXPLORE_DEAD_END,
    EXPLORE_ENDLESS_RETRY,
    EXPLORE_INCONSISTENT,
    EXPLORE_INERT_CHOICE,
    EXPLORE_LONG_MENU,
    EXPLORE_LONG_PROMPT,
    EXPLORE_NO_EXIT,
)
from emulator.explore.states import spoken
from emulator.findings import Finding, Rule

MAX_PROMPT_SECONDS = 30.0
MAX_CHOICES = 5
WHAT = {"silence": "silence", "wrong": "a wrong key", "empty": "no digits"}
WAITS = {"recognize": "menu", "digits": "digits prompt", "record": "record"}


def judge(
    graph: Graph, *, max_prompt: float = MAX_PROMPT_SECONDS, max_choices: int = MAX_CHOICES
) -> list[Finding]:
    """Every finding of ``graph``: the crash paths first (in path order), then the states'."""
    found = [_crash(edge) for edge in graph.edges if edge.errors]
    found += [_no_exit(edge) for edge in graph.edges if no_exit(edge)]
    found += [_dead_end(graph, state_id) for state_id in dead_ends(graph)]
    found += _checks(graph)
    found += _self_loops(graph) + _twin_ends(graph) + _inconsistent(graph)
    for state_id, state in graph.states.items():
        if state.heard_seconds > max_prompt:
            found.append(_finding(EXPLORE_LONG_PROMPT, state_id,
                                  f"the caller hears {state.heard_seconds:.0f} s of prompts "
                                  f"before this {state.kind} (more than {max_prompt:g} s)"))  # fmt: skip
        if len(state.choices) > max_choices:
            found.append(_finding(EXPLORE_LONG_MENU, state_id,
                                  f"the menu offers {len(state.choices)} choices (more than "
                                  f"{max_choices}, as many as a caller can hold)"))  # fmt: skip
    return found


def _finding(rule: Rule, where: str, message: str, evidence: str | None = None) -> Finding:
    return Finding(rule.id, rule.severity, where, message, evidence=evidence)


def _steps(steps: tuple[str, ...]) -> str:
    return "; ".join(steps) or "(the call placed)"


def _crash(edge: Edge) -> Finding:
    first = edge.errors[0]
    return _finding(EXPLORE_CRASH_PATH, _steps(edge.steps), f"{first.rule}: {first.message}",
                    f"call {edge.call_id}")  # fmt: skip


def _no_exit(edge: Edge) -> Finding:
    why = f"the platform ended the call ({edge.end})"
    if edge.stalled:
        why += (f" after {edge.stalled} Workflows in a row that played prompts and neither "
                "listened nor hung up")  # fmt: skip
    return _finding(EXPLORE_NO_EXIT, _steps(edge.steps),
                    f"no exit: {why}; the caller heard {spoken(edge.heard, len(edge.tail))}",
                    f"call {edge.call_id}")  # fmt: skip


def _dead_end(graph: Graph, state_id: str) -> Finding:
    reach = graph.reached_by(state_id)
    kind = WAITS.get(graph.states[state_id].kind, "state")
    return _finding(EXPLORE_DEAD_END, state_id,
                    f"no way out of this {kind}: no path from it reaches a goodbye or a hang-up "
                    "by the bot, and only the caller's hang-up ends the call",
                    f"reached by: {_steps(reach.steps)}" if reach else None)  # fmt: skip


def _checks(graph: Graph) -> list[Finding]:
    found: list[Finding] = []
    for check in graph.checks:
        if not check.broken:
            continue
        calls = ", ".join(f"call {c}" for c in check.call_ids)
        if check.kind == "loop":
            what = WHAT.get(check.move, check.move)
            found.append(_finding(EXPLORE_ENDLESS_RETRY, check.state,
                                  f"{what} is asked about again for ever: after {check.repeats} "
                                  "times over in one call the bot still waits for input "
                                  f"({_steps(check.steps)}, again and again)", calls))  # fmt: skip
        else:
            names = " and ".join(repr(n) for n in check.choices)
            found.append(_finding(EXPLORE_INERT_CHOICE, check.state,
                                  f"choices {names} take the caller through the same prompts to "
                                  "the same end: the bot never tells them apart", calls))  # fmt: skip
    return found


def _self_loops(graph: Graph) -> list[Finding]:
    found: list[Finding] = []
    for state_id in graph.states:
        for name, edge in choice_edges(graph, state_id).items():
            if edge.to == state_id and not may_repeat(graph, state_id, name):
                found.append(_finding(EXPLORE_INERT_CHOICE, state_id,
                                      f"choice {name!r} brings the same menu back, unchanged",
                                      f"call {edge.call_id}"))  # fmt: skip
    return found


def _twin_ends(graph: Graph) -> list[Finding]:
    """Choices of one menu that end the call at once, after the same prompts, the same way."""
    found: list[Finding] = []
    for state_id in graph.states:
        ends: dict[tuple[object, ...], list[str]] = {}
        for name, edge in choice_edges(graph, state_id).items():
            if ends_well(edge):
                ends.setdefault((edge.end, edge.tail), []).append(name)
        for names in ends.values():
            if len(names) > 1:
                listed = " and ".join(repr(n) for n in names)
                found.append(_finding(EXPLORE_INERT_CHOICE, state_id,
                                      f"choices {listed} end the call after the same prompts: the "
                                      "bot never tells them apart"))  # fmt: skip
    return found


def _inconsistent(graph: Graph) -> list[Finding]:
    found: list[Finding] = []
    entered = fresh(graph)
    for kind in ("recognize", "digits"):
        states = [s for s in graph.states if s in entered and graph.states[s].kind == kind]
        for move in ("wrong", "silence"):
            handled: dict[str, str] = {}
            calls: dict[str, str] = {}
            for state_id in states:
                edge = move_edge(graph, state_id, move)
                if edge is not None and complete(graph, state_id):
                    handled[state_id], calls[state_id] = _handling(edge), edge.call_id
            asks = [s for s, how in handled.items() if how == "asks again"]
            if not asks:
                continue
            for state_id, how in handled.items():
                if how != "asks again":
                    found.append(_finding(EXPLORE_INCONSISTENT, state_id,
                                          f"{WHAT[move]} here {how}, while in {WAITS[kind]} "
                                          f"{asks[0]} the bot asks again",
                                          f"call {calls[state_id]}"))  # fmt: skip
    return found


def _handling(edge: Edge) -> str:
    if edge.errors:
        return f"fails ({edge.errors[0].rule})"
    if edge.to is not None:
        return "asks again"
    return f"ends the call ({edge.end})"
