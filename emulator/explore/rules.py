"""The rules of ``botemu explore`` (EXPLORE-*): data only, so that ``botemu rules`` and the log view
list them without loading the crawler."""

from __future__ import annotations

from emulator.findings import RuleRegistry, Severity

RULES = RuleRegistry("Call-flow exploration")
SOURCE = "botemu explore (docs/explore.md)"
_r = RULES.add

# fmt: off
EXPLORE_CRASH_PATH = _r("EXPLORE-CRASH-PATH", Severity.ERROR, SOURCE,
    "No path of the call flow makes the bot answer 5xx or garbage, or send an invalid Workflow "
    "(the finding names the caller steps that lead there).")
EXPLORE_LONG_PROMPT = _r("EXPLORE-LONG-PROMPT", Severity.WARNING, SOURCE,
    "What a caller hears before a menu, digits or a record lasts at most 30 s (--max-prompt).")
EXPLORE_LONG_MENU = _r("EXPLORE-LONG-MENU", Severity.WARNING, SOURCE,
    "A menu offers at most 5 choices, as many as a caller can hold (--max-choices).")
# fmt: on
