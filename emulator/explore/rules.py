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
EXPLORE_DEAD_END = _r("EXPLORE-DEAD-END", Severity.ERROR, SOURCE,
    "From every state of the call flow some path reaches a goodbye, a hang-up or a rejection by "
    "the bot: a caller is never stuck where only their own hang-up ends the call.")
EXPLORE_NO_EXIT = _r("EXPLORE-NO-EXIT", Severity.ERROR, SOURCE,
    "No path leaves the platform to end the call by itself: the workflow limit or the call's "
    "deadline is never reached, and the bot never sends 10 Workflows in a row that play prompts "
    "with a callback and neither listen nor hang up (a hold for ever).")
EXPLORE_ENDLESS_RETRY = _r("EXPLORE-ENDLESS-RETRY", Severity.ERROR, SOURCE,
    "Silence, or a wrong key, is asked about again a limited number of times: followed 12 times "
    "over in one call, the bot ends the call rather than asking for ever.")
EXPLORE_INERT_CHOICE = _r("EXPLORE-INERT-CHOICE", Severity.WARNING, SOURCE,
    "Every choice a menu offers acts: it does not bring the same menu back (unless it says it "
    "repeats), and no two choices take the caller through the same prompts to the same end.")
EXPLORE_INCONSISTENT = _r("EXPLORE-INCONSISTENT", Severity.WARNING, SOURCE,
    "A wrong key, or silence, is handled alike in every menu met fresh: where one menu asks "
    "again, another does not end the call or fail.")
EXPLORE_LONG_PROMPT = _r("EXPLORE-LONG-PROMPT", Severity.WARNING, SOURCE,
    "What a caller hears before a menu, digits or a record lasts at most 30 s (--max-prompt).")
EXPLORE_LONG_MENU = _r("EXPLORE-LONG-MENU", Severity.WARNING, SOURCE,
    "A menu offers at most 5 choices, as many as a caller can hold (--max-choices).")
# fmt: on
