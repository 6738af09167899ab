"""The scenario expectations' rules (EXP-*): data only, so that ``botemu rules`` and the log view
list them without loading the scenario language."""

from __future__ import annotations

from emulator.findings import RuleRegistry, Severity

SOURCE = "the scenario's expect"
RULES = RuleRegistry("Scenario expectations")
_r = RULES.add
ERROR = Severity.ERROR

# fmt: off
EXP_CALL = _r("EXP-CALL", ERROR, SOURCE,
    "The call went as expected: answered or rejected, ended by whom, final callState, workflows, duration.")
EXP_PROMPTS = _r("EXP-PROMPTS", ERROR, SOURCE,
    "The platform played the expected prompts (text or file), in order or anywhere.")
EXP_CHOICES = _r("EXP-CHOICES", ERROR, SOURCE,
    "A recognize offered exactly the expected choice names (in any order).")
EXP_OUTCOME = _r("EXP-OUTCOME", ERROR, SOURCE,
    "The platform posted the expected outcome: type, outcome, completion reason, choice, digits.")
EXP_RECORDING = _r("EXP-RECORDING", ERROR, SOURCE,
    "A recording was made in the expected format and length.")
EXP_REPLY = _r("EXP-REPLY", ERROR, SOURCE,
    "The bot replied through the connector as expected: text, type, attachments, suggested actions.")
EXP_LATENCY = _r("EXP-LATENCY", ERROR, SOURCE,
    "The bot's answers came within the expected time (p95 over the run).")
EXP_FINDINGS = _r("EXP-FINDINGS", ERROR, SOURCE,
    "No error finding (the default), or exactly the expected rules were found.")
EXP_RUN = _r("EXP-RUN", ERROR, "botemu (docs/scenarios-running.md)",
    "The scenario could run: a target for its kind was given, and the bot could be reached.")
# fmt: on
