"""The Workflow as a whole: ``validate_workflow``, which judges each of its parts, and the id a
validation outcome carries (``first_operation_id``).
"""

from __future__ import annotations

from emulator.calling import ruleset as R
from emulator.calling.model import CallState, NotificationType
from emulator.calling.rules.actions import check_actions
from emulator.calling.rules.checker import Checker, RuleContext
from emulator.calling.rules.links import check_links
from emulator.calling.wire.fields import WORKFLOW_FIELDS
from emulator.findings import Finding
from emulator.jsonutil import JSON, child, find_key, kind_of, utf16_length

APPSTATE_MAX = 1024
VALIDATION_OUTCOME_ID = "workflow"
"""The validation outcome's id when the Workflow has no usable first operationId."""


def validate_workflow(document: JSON, context: RuleContext | None = None) -> list[Finding]:
    """Every finding for a Workflow, in document order. The work is bounded whatever the
    document's size: at most ``MAX_ACTIONS`` actions and ``MAX_PROMPTS`` prompts are checked, and
    at most ``FINDINGS_PER_RULE`` findings of one rule are listed, then one summary finding of that
    rule counts the rest ("and 480 more WF-TYPE at $.actions[*]")."""
    checker = Checker(context or RuleContext())
    check_workflow(checker, document)
    return checker.findings + checker.summaries()


def check_workflow(c: Checker, doc: JSON) -> None:
    if not isinstance(doc, dict):
        c.add(R.WF_NOT_OBJECT, "$", f"a Workflow is a JSON object, got {kind_of(doc)}")
        return
    keys = c.fields(doc, "$", WORKFLOW_FIELDS)
    kinds = check_actions(c, doc, keys)
    check_links(c, doc, keys, kinds)
    app_state = c.string(c.get(doc, keys, "appState"), c.where("$", keys, "appState"))
    if app_state is not None and utf16_length(app_state) > APPSTATE_MAX:
        c.add(
            R.WF_APPSTATE_LENGTH,
            c.where("$", keys, "appState"),
            f"appState is {utf16_length(app_state)} characters; the limit is {APPSTATE_MAX}",
        )
    c.enum(
        CallState,
        c.get(doc, keys, "callState"),
        c.where("$", keys, "callState"),
        unknown=R.WF_CALLSTATE,
    )
    subs_where = c.where("$", keys, "notificationSubscriptions")
    subs = c.array(c.get(doc, keys, "notificationSubscriptions"), subs_where)
    for i, sub in enumerate(subs or []):
        if c.not_null(sub, child(subs_where, i), "a string"):
            c.enum(NotificationType, sub, child(subs_where, i), unknown=R.WF_NOTIFICATION)


def first_operation_id(document: JSON) -> str:
    """The id a validation outcome carries: the first action's operationId, if it has one."""
    if isinstance(document, dict):
        actions = document.get(find_key(document, "actions") or "actions")
        if isinstance(actions, list) and actions and isinstance(actions[0], dict):
            first = actions[0]
            op = first.get(find_key(first, "operationId") or "operationId")
            if isinstance(op, str) and op:
                return op
    return VALIDATION_OUTCOME_ID
