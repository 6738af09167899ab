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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from emulator.calling import timelines
from emulator.calling.caller import CallerScript, HangUp, Listen, Silence, Step
from emulator.calling.events import (
    ActionCompleted,
    ActionStarted,
    BeepPlayed,
    CallEnded,
    CallerHungUp,
    EndReason,
    Event,
    PromptPlayed,
    RecordingMade,
    StateChanged,
)
from emulator.calling.model import (
    Action,
    ActionType,
    Answer,
    AnswerOutcome,
    CallState,
    ConversationResult,
    Hangup,
    HangupOutcome,
    OperationOutcome,
    Outcome,
    PlayPrompt,
    PlayPromptOutcome,
    Prompt,
    PromptCompletionReason,
    Recognize,
    Record,
    Reject,
    RejectOutcome,
    WorkflowValidationOutcome,
)
from emulator.calling.model import Workflow as Workflow
from emulator.calling.speech import speech_seconds
from emulator.findings import Finding, Severity

BEEP_SECONDS = 0.5
DEFAULT_MEDIA_SECONDS = 3.0
"""Duration assumed for a prompt file whose real duration is not known (lint, dry runs)."""
DEFAULT_MAX_WORKFLOWS = 50


@dataclass(frozen=True, slots=True)
class Media:
    """What the platform learned fetching one fileUri: its duration, or why it failed."""

    seconds: float | None = None
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Platform behaviour that is not in a Workflow.

    ``max_workflows``: the platform's limit of Workflows in one call (field notes: a real call was
    dropped after about 13 round trips). ``media``: prompt files by fileUri. ``fail_actions``:
    actions of these kinds fail with temporarySystemFailure (fault injection).
    """

    max_workflows: int = DEFAULT_MAX_WORKFLOWS
    media: Mapping[str, Media] = field(default_factory=dict)
    fail_actions: frozenset[ActionType] = frozenset()
    beep_seconds: float = BEEP_SECONDS


@dataclass(frozen=True, slots=True)
class CallProgress:
    """The state of a call between Workflows."""

    now: float = 0.0
    call_state: CallState = CallState.INCOMING
    cursor: int = 0
    """Index of the caller's next step."""
    workflows: int = 0
    hangup_at: float | None = None
    """When the caller will hang up, once a hangup step has been reached."""
    ended: EndReason | None = None
    rules_used: frozenset[int] = frozenset()
    """Indexes of the caller's ``once`` rules that have been used (each is used at most once)."""

    @property
    def answered(self) -> bool:
        return self.call_state is not CallState.INCOMING


@dataclass(slots=True)
class _Live:
    """CallProgress while a Workflow runs (mutable: the engine's hot path avoids copies)."""

    now: float
    call_state: CallState
    cursor: int
    workflows: int
    hangup_at: float | None
    ended: EndReason | None
    rules_used: frozenset[int]

    def freeze(self) -> CallProgress:
        return CallProgress(
            self.now,
            self.call_state,
            self.cursor,
            self.workflows,
            self.hangup_at,
            self.ended,
            self.rules_used,
        )


@dataclass(frozen=True, slots=True)
class WorkflowRun:
    """What running one Workflow did.

    ``outcome`` is what the platform posts (None when nothing ran: the call had ended, or the
    workflow limit was hit). ``post`` says whether it is posted: there is a callback.
    ``recording`` describes the audio of a record outcome, for the session to encode.
    """

    outcome: OperationOutcome | None
    events: tuple[Event, ...]
    progress: CallProgress
    post: bool
    recording: RecordingMade | None = None

    @property
    def call_state(self) -> CallState:
        return self.progress.call_state

    @property
    def ended(self) -> EndReason | None:
        return self.progress.ended


def prompt_seconds(prompt: Prompt, media: Mapping[str, Media]) -> float:
    """How long a prompt plays: its leading silence, then its text or file."""
    seconds = prompt.silence
    if prompt.value is not None and prompt.value.strip():
        seconds += speech_seconds(prompt.value, prompt.say_as)
    elif prompt.file_uri is not None:
        known = media.get(prompt.file_uri)
        seconds += known.seconds if known and known.seconds is not None else DEFAULT_MEDIA_SECONDS
    return seconds


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
    run = _Run(caller, progress, config)
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


class _Run:
    """Mutable scratch state while one Workflow runs; only its results leave the engine."""

    def __init__(self, caller: CallerScript, progress: CallProgress, config: EngineConfig) -> None:
        self.caller = caller
        self.p = _Live(
            progress.now,
            progress.call_state,
            progress.cursor,
            progress.workflows,
            progress.hangup_at,
            progress.ended,
            progress.rules_used,
        )
        self.config = config
        self.events: list[Event] = []
        self.recording: RecordingMade | None = None
        self.hung_up_at: float | None = None
        """Set when the caller hangs up during the action being run."""
        self.heard = ""
        """The text of the last prompt played in this Workflow (what ``when`` rules test)."""

    # --- call-level changes ---

    def set_state(self, at: float, state: CallState) -> None:
        if state is not self.p.call_state:
            self.events.append(StateChanged(at, self.p.call_state, state))
            self.p.call_state = state

    def end(self, reason: EndReason, at: float | None = None) -> None:
        at = self.p.now if at is None else at
        self.set_state(at, CallState.TERMINATED)
        self.events.append(CallEnded(at, reason))
        self.p.ended, self.p.now = reason, max(self.p.now, at)

    def caller_hangs_up(self, at: float) -> None:
        self.events.append(CallerHungUp(at))
        self.end(EndReason.CALLER_HUNG_UP, at)

    # --- caller steps outside input turns ---

    def hangup_for_prompt(self, start: float) -> None:
        """A plain playPrompt is about to play: a hangup step at the head may fire during it."""
        if self.p.hangup_at is not None or self.p.cursor >= len(self.caller.steps):
            return
        step = self.caller.steps[self.p.cursor]
        if isinstance(step, HangUp) and step.during in (None, ActionType.PLAY_PROMPT):
            self.p.hangup_at, self.p.cursor = start + step.after, self.p.cursor + 1

    def turn_steps(self, action: Recognize | Record) -> tuple[Sequence[Step], int, bool]:
        """The steps an input turn draws from, the index to start at, and whether they are the
        sequential script (whose cursor then moves). The first ``when`` rule that matches the
        turn's prompt text (or, with no prompt, the last prompt played in this Workflow)
        supplies the turn's steps instead; a ``once`` rule is then marked as used."""
        caller = self.caller
        if caller.rules and self.p.hangup_at is None:
            heard = self.heard if action.play_prompt is None else _text(action.play_prompt)
            index = caller.rule_for(heard, self.p.rules_used)
            if index is not None:
                rule = caller.rules[index]
                if rule.once:
                    self.p.rules_used = self.p.rules_used | {index}
                return rule.steps, 0, False
        return caller.steps, self.p.cursor, True

    def open_turn(
        self,
        kind: ActionType,
        start: float,
        prompt_end: float,
        steps: Sequence[Step],
        cursor: int,
    ) -> tuple[bool, int]:
        """An input turn begins: consume leading ``listen`` steps and a hangup aimed at this
        action. Returns whether the caller listens to the prompt to its end, and the index of
        the next step."""
        listen = False
        while cursor < len(steps) and isinstance(steps[cursor], Listen):
            listen, cursor = True, cursor + 1
        if cursor < len(steps) and isinstance(steps[cursor], Silence):
            listen = True  # silence never barges in: it is counted from the end of the prompt
        if self.p.hangup_at is None and cursor < len(steps):
            step = steps[cursor]
            if isinstance(step, HangUp) and step.during is None:
                self.p.hangup_at = (prompt_end if listen else start) + step.after
                cursor += 1
            elif isinstance(step, HangUp) and step.during is kind:
                self.p.hangup_at = start + step.after
                cursor += 1
        return listen, cursor

    # --- actions ---

    def execute(self, action: Action) -> OperationOutcome:
        start = self.p.now
        self.events.append(ActionStarted(start, action.operation_id, action.kind))
        if isinstance(action, Answer):
            outcome: OperationOutcome = AnswerOutcome(
                id=action.operation_id, outcome=Outcome.SUCCESS
            )
            self.set_state(start, CallState.ESTABLISHED)
        elif isinstance(action, Reject | Hangup):
            cls = RejectOutcome if isinstance(action, Reject) else HangupOutcome
            outcome = cls(id=action.operation_id, outcome=Outcome.SUCCESS)
            self.end(
                EndReason.BOT_REJECTED if isinstance(action, Reject) else EndReason.BOT_HUNG_UP
            )
        elif action.kind in self.config.fail_actions:
            outcome = timelines.system_failure(action, "temporary system failure (injected)")
        elif isinstance(action, PlayPrompt):
            outcome = self.play_prompt(action, start)
        elif isinstance(action, Recognize | Record):
            outcome = self.input_turn(action, start)
        else:  # pragma: no cover - every readable action is one of the above
            outcome = timelines.system_failure(action, f"cannot run {action.kind.value}")
        reason = getattr(outcome, "completion_reason", None)
        shown = reason.value if reason is not None else _sub_reason(outcome)
        self.events.append(
            ActionCompleted(self.p.now, action.operation_id, action.kind, outcome.outcome, shown)
        )
        if self.hung_up_at is not None:
            self.caller_hangs_up(self.hung_up_at)
        return outcome

    def play_prompt(self, action: PlayPrompt, start: float) -> OperationOutcome:
        self.hangup_for_prompt(start)
        played = self.play(action, start, stop_at=self.p.hangup_at)
        self.p.now = played.end
        if played.failure is not None:
            return PlayPromptOutcome(
                id=action.operation_id,
                outcome=Outcome.FAILURE,
                completion_reason=PromptCompletionReason.TEMPORARY_SYSTEM_FAILURE,
                failure_reason=played.failure,
            )
        if played.cut:
            self.hung_up_at = played.end
            return PlayPromptOutcome(
                id=action.operation_id,
                outcome=Outcome.FAILURE,
                completion_reason=PromptCompletionReason.CALL_TERMINATED,
            )
        return PlayPromptOutcome(
            id=action.operation_id,
            outcome=Outcome.SUCCESS,
            completion_reason=PromptCompletionReason.COMPLETED_SUCCESSFULLY,
        )

    def play(
        self, action: PlayPrompt, start: float, stop_at: float | None, operation_id: str = ""
    ) -> timelines.Played:
        """Play every prompt from ``start``; stop at ``stop_at`` (barge-in or hangup).
        ``operation_id`` names the action the prompt belongs to (record, recognize)."""
        self.heard = _text(action)
        at = start
        for index, prompt in enumerate(action.prompts):
            media = self.config.media.get(prompt.file_uri) if prompt.file_uri else None
            if media is not None and media.failure is not None and not (prompt.value or "").strip():
                return timelines.Played(
                    at, cut=False, failure=f"{prompt.file_uri}: {media.failure}"
                )
            end = at + prompt_seconds(prompt, self.config.media)
            cut = stop_at is not None and stop_at < end
            stop = stop_at if cut and stop_at is not None else end
            self.events.append(
                PromptPlayed(
                    at,
                    max(at, stop),
                    operation_id or action.operation_id,
                    index,
                    prompt.value,
                    prompt.file_uri,
                    cut,
                )
            )
            if cut:
                return timelines.Played(max(at, stop), cut=True)
            at = end
        return timelines.Played(at, cut=False)

    def prompt_end(self, prompt: PlayPrompt | None, start: float) -> float:
        end = start
        for p in prompt.prompts if prompt is not None else ():
            end += prompt_seconds(p, self.config.media)  # summed as play() sums: same floats
        return end

    def input_turn(self, action: Recognize | Record, start: float) -> OperationOutcome:
        prompt_end = self.prompt_end(action.play_prompt, start)
        steps, cursor, scripted = self.turn_steps(action)
        listen, cursor = self.open_turn(action.kind, start, prompt_end, steps, cursor)
        if isinstance(action, Record):
            beep = self.config.beep_seconds if action.play_beep in (None, True) else 0.0
            window = prompt_end + beep
            machine: timelines.Machine = timelines.RecordMachine(action, window)
        else:
            window = start if action.barge_in and not listen else prompt_end
            machine = timelines.recognize_machine(action, prompt_end)
        if self.p.hangup_at is not None:
            steps = ()
        turn = timelines.drive(machine, steps, cursor, window, self.p.hangup_at)
        if action.play_prompt is not None:
            stop_at = turn.barge_in_at if turn.barge_in_at is not None else None
            if turn.hung_up_at is not None and (stop_at is None or turn.hung_up_at < stop_at):
                stop_at = turn.hung_up_at
            played = self.play(action.play_prompt, start, stop_at, action.operation_id)
            if played.failure is not None:
                self.p.now = played.end
                return timelines.system_failure(action, played.failure)
        if (
            isinstance(action, Record)
            and turn.done.at >= window
            and action.play_beep in (None, True)
        ):
            if turn.hung_up_at is None or turn.hung_up_at > prompt_end:
                self.events.append(BeepPlayed(prompt_end, action.operation_id))
        self.events.extend(turn.events)
        if scripted:  # a rule's steps that the turn did not reach are dropped
            self.p.cursor = turn.cursor
        self.p.now, self.p.hangup_at = turn.done.at, turn.hangup_at
        if isinstance(turn.done.recording, RecordingMade):
            self.events.append(turn.done.recording)
            self.recording = turn.done.recording
        self.hung_up_at = turn.hung_up_at
        return turn.done.outcome


def _text(prompt: PlayPrompt) -> str:
    """The text of a playPrompt as the caller hears it: its prompts' values, in order."""
    return " ".join(p.value.strip() for p in prompt.prompts if p.value and p.value.strip())


def _sub_reason(outcome: OperationOutcome) -> str | None:
    choice = getattr(outcome, "choice_outcome", None)
    digits = getattr(outcome, "collect_digits_outcome", None)
    sub = choice or digits
    return None if sub is None else str(sub.completion_reason.value)
