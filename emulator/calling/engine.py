"""The execution engine: what happens when the platform runs a Workflow against a caller.

Pure and in virtual time. ``run_workflow`` takes a validated Workflow, the caller script, the
call's progress so far (virtual clock, call state, the caller's place in its script) and the
configuration; it returns the outcome the platform posts, the timed events, and the new progress.
It never sleeps and never does I/O: prompt media durations come in ``EngineConfig.media``.

Execution follows the spec and the field notes: actions run in order; the first failed action
stops the Workflow and its outcome is posted, otherwise the last action's outcome is; with no
callback every action runs and the platform then hangs up; if the caller hangs up, the outcome is
that of the action cut short (or of the last one completed) with callState ``terminated``.
The input semantics of recognize and record, and of the caller's reactive ``when`` rules, are
described in ``docs/engine.md``.

The values the engine works with are in ``progress.py`` (re-exported here); the running of one
Workflow's actions is ``execution.Execution``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from emulator.calling.caller import CallerScript
from emulator.calling.events import CallEnded, EndReason, Event, StateChanged
from emulator.calling.execution import Execution
from emulator.calling.model import (
    CallState,
    ConversationResult,
    OperationOutcome,
    Outcome,
    Workflow,
    WorkflowValidationOutcome,
)
from emulator.calling.progress import (
    BEEP_SECONDS,
    DEFAULT_MAX_WORKFLOWS,
    DEFAULT_MEDIA_SECONDS,
    CallProgress,
    EngineConfig,
    Media,
    WorkflowRun,
    prompt_seconds,
)
from emulator.findings import Finding, Severity

__all__ = [
    "BEEP_SECONDS",
    "DEFAULT_MAX_WORKFLOWS",
    "DEFAULT_MEDIA_SECONDS",
    "FAILURE_REASON_MAX",
    "CallProgress",
    "EngineConfig",
    "Media",
    "Workflow",
    "WorkflowRun",
    "failure_reason",
    "prompt_seconds",
    "reject_workflow",
    "result_for",
    "run_workflow",
]


def run_workflow(
    workflow: Workflow,
    caller: CallerScript,
    progress: CallProgress,
    config: EngineConfig | None = None,
) -> WorkflowRun:
    """Run one validated Workflow from ``progress``; never raises for a readable Workflow."""
    config = config or EngineConfig()
    if progress.ended is not None:
        return WorkflowRun(None, (), progress, post=False)
    if progress.workflows >= config.max_workflows:
        return _end(progress, EndReason.WORKFLOW_LIMIT, ())
    run = Execution(caller, progress, config)
    run.p.workflows += 1
    callback = workflow.callback is not None
    outcome: OperationOutcome | None = None
    live = run.p
    for action in workflow.actions:
        outcome = run.execute(action)
        if live.ended is not None or (callback and not outcome.succeeded):
            break
    if live.ended is None:
        if live.hangup_at is not None and live.hangup_at <= live.now:
            run.caller_hangs_up(live.hangup_at)
        elif not callback:
            run.end(EndReason.NO_CALLBACK)
    post = callback and outcome is not None
    return WorkflowRun(outcome, tuple(run.events), live.freeze(), post, run.recording)


def reject_workflow(
    findings: Sequence[Finding],
    operation_id: str,
    progress: CallProgress,
    config: EngineConfig | None = None,
) -> WorkflowRun:
    """The platform's answer to an invalid Workflow: run nothing, post the validation outcome
    with the error findings in failureReason. It counts toward the workflow limit."""
    config = config or EngineConfig()
    if progress.ended is not None:
        return WorkflowRun(None, (), progress, post=False)
    if progress.workflows >= config.max_workflows:
        return _end(progress, EndReason.WORKFLOW_LIMIT, ())
    errors = [f for f in findings if f.severity is Severity.ERROR] or findings
    reason = failure_reason(errors)
    outcome = WorkflowValidationOutcome(
        id=operation_id, outcome=Outcome.FAILURE, failure_reason=reason
    )
    return WorkflowRun(outcome, (), replace(progress, workflows=progress.workflows + 1), post=True)


FAILURE_REASON_MAX = 4096
"""Characters of a validation outcome's failureReason: the findings that fit, then a count."""


def failure_reason(findings: Sequence[Finding], limit: int = FAILURE_REASON_MAX) -> str:
    """The findings as one failureReason, at most ``limit`` characters: whole findings while
    they fit, then "... and N more findings (in botemu's transcript)"; a first finding longer
    than the limit is cut."""
    texts = [f"{f.rule} at {f.where}: {f.message}" for f in findings]
    whole = "; ".join(texts)
    if len(whole) <= limit:
        return whole
    size = 0
    for index, text in enumerate(texts):
        rest = len(texts) - index
        tail = f"... and {rest:,} more finding{'s' if rest > 1 else ''} (in botemu's transcript)"
        if size + len(text) + 2 + len(tail) > limit:
            if index == 0:
                return (text[: max(0, limit - len(tail) - 5)] + "...; " + tail)[:limit]
            return "; ".join(texts[:index]) + "; " + tail
        size += len(text) + 2
    return whole[:limit]  # not reached: the whole text is over the limit


def result_for(
    call_id: str,
    run: WorkflowRun,
    *,
    app_state: str | None,
    call_link: str | None = None,
    app_id: str | None = None,
) -> ConversationResult | None:
    """The ConversationResult to post for a run (appState echoed unchanged), if any."""
    if run.outcome is None:
        return None
    return ConversationResult(
        id=call_id,
        app_id=app_id,
        call_state=run.call_state,
        operation_outcome=run.outcome,
        links={"call": call_link} if call_link else {},
        app_state=app_state,
    )


def _end(progress: CallProgress, reason: EndReason, events: tuple[Event, ...]) -> WorkflowRun:
    at = progress.now
    changed: tuple[Event, ...] = ()
    if progress.call_state is not CallState.TERMINATED:
        changed = (StateChanged(at, progress.call_state, CallState.TERMINATED),)
    ended = replace(progress, call_state=CallState.TERMINATED, ended=reason)
    return WorkflowRun(None, (*events, *changed, CallEnded(at, reason)), ended, post=False)
