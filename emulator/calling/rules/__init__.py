"""Validation of a Workflow the way the calling platform validates it. Pure: it imports the wire
format's field tables, findings and the JSON helpers, nothing that does I/O.

``validate_workflow(document, context)`` takes the Workflow as parsed JSON (not as a typed value:
casing, bare strings and wrong types are themselves findings) and returns every ``Finding``.
Severity ``error`` means the platform answers with the validation outcome and runs nothing;
``warning`` means it runs the Workflow but the bot deviates from the spec or from what real SDKs
send. Every rule is registered in ``RULES`` with its source; ``docs/rules.md`` lists them.

A Workflow with no error-severity finding always reads with ``wire.read_workflow``.

The checks are split by the part of the Workflow they judge: ``workflow`` (the whole, appState,
callState, subscriptions), ``actions`` (the list, order, answer), ``links``, ``prompts``,
``record`` and ``recognize``; ``checker`` holds what they share.
"""

from __future__ import annotations

from emulator.calling.rules.actions import MAX_ACTIONS
from emulator.calling.rules.checker import FINDINGS_PER_RULE, MAX_STOP_TONES, RuleContext
from emulator.calling.rules.prompts import MAX_PROMPTS, PROMPT_VALUE_MAX
from emulator.calling.rules.workflow import (
    APPSTATE_MAX,
    VALIDATION_OUTCOME_ID,
    first_operation_id,
    validate_workflow,
)
from emulator.calling.ruleset import RULES
from emulator.calling.wire.fields import PROMPT_FIELDS, WORKFLOW_FIELDS

__all__ = [
    "APPSTATE_MAX",
    "FINDINGS_PER_RULE",
    "MAX_ACTIONS",
    "MAX_PROMPTS",
    "MAX_STOP_TONES",
    "PROMPT_FIELDS",
    "PROMPT_VALUE_MAX",
    "RULES",
    "VALIDATION_OUTCOME_ID",
    "WORKFLOW_FIELDS",
    "RuleContext",
    "first_operation_id",
    "validate_workflow",
]
