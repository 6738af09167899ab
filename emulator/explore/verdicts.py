"""The findings of an exploration, from its graph: paths that crash the bot (EXPLORE-CRASH-PATH,
with the caller steps that lead there), prompts too long before a waiting point
(EXPLORE-LONG-PROMPT) and menus with more choices than a caller can hold (EXPLORE-LONG-MENU).
"""

from __future__ import annotations

from emulator.explore.crawler import Graph
from emulator.explore.rules import EXPLORE_CRASH_PATH, EXPLORE_LONG_MENU, EXPLORE_LONG_PROMPT
from emulator.findings import Finding

MAX_PROMPT_SECONDS = 30.0
MAX_CHOICES = 5


def judge(
    graph: Graph, *, max_prompt: float = MAX_PROMPT_SECONDS, max_choices: int = MAX_CHOICES
) -> list[Finding]:
    """Every finding of ``graph``, the crash paths first (in path order), then the states'."""
    found: list[Finding] = []
    for edge in graph.edges:
        if edge.errors:
            first = edge.errors[0]
            steps = "; ".join(edge.steps) or "(the call placed)"
            found.append(Finding(EXPLORE_CRASH_PATH.id, EXPLORE_CRASH_PATH.severity, steps,
                                 f"{first.rule}: {first.message}",
                                 evidence=f"call {edge.call_id}"))  # fmt: skip
    for state_id, state in graph.states.items():
        if state.heard_seconds > max_prompt:
            found.append(Finding(EXPLORE_LONG_PROMPT.id, EXPLORE_LONG_PROMPT.severity, state_id,
                                 f"the caller hears {state.heard_seconds:.0f} s of prompts before "
                                 f"this {state.kind} (more than {max_prompt:g} s)"))  # fmt: skip
        if len(state.choices) > max_choices:
            found.append(Finding(EXPLORE_LONG_MENU.id, EXPLORE_LONG_MENU.severity, state_id,
                                 f"the menu offers {len(state.choices)} choices (more than "
                                 f"{max_choices}, as many as a caller can hold)"))  # fmt: skip
    return found
