"""Running the actions of one Workflow against the caller script: ``Execution`` holds the
mutable state of one run (clock, call state, the caller's place in its script, the events) and
plays prompts, input turns and the call's end. ``engine.run_workflow`` drives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from emulator.calling import timelines
from emulator.calling.caller import At, CallerScript, HangUp, Listen, Silence, Step
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
    TimerSet,
)
from emulator.calling.model import (
    Action,
    ActionType,
    Answer,
    AnswerOutcome,
    CallState,
    Hangup,
    HangupOutcome,
    OperationOutcome,
    Outcome,
    PlayPrompt,
    PlayPromptOutcome,
    PromptCompletionReason,
    Recognize,
    Record,
    Reject,
    RejectOutcome,
)
from emulator.calling.progress import (
    CallProgress,
    EngineConfig,
    LiveProgress,
    Media,
    prompt_seconds,
)


class Execution:
    """Mutable scratch state while one Workflow runs; only its results leave the engine."""

    def __init__(self, caller: CallerScript, progress: CallProgress, config: EngineConfig) -> None:
        self.caller = caller
        self.p = LiveProgress(
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
        self.last_played: PlayPrompt | None = None
        """The last prompt played in this Workflow: its text is what ``when`` rules test."""

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
        steps, cursor = self.caller.steps, self.p.cursor
        step = steps[cursor]
        if isinstance(step, At) and cursor + 1 < len(steps):  # a live caller hanging up
            after = steps[cursor + 1]
            if isinstance(after, HangUp) and after.during is None:
                self.p.hangup_at, self.p.cursor = max(start, step.at), cursor + 2
            return
        if isinstance(step, HangUp) and step.during in (None, ActionType.PLAY_PROMPT):
            self.p.hangup_at, self.p.cursor = start + step.after, cursor + 1

    def turn_steps(self, action: Recognize | Record) -> tuple[Sequence[Step], int, bool]:
        """The steps an input turn draws from, the index to start at, and whether they are the
        sequential script (whose cursor then moves). The first ``when`` rule that matches the
        turn's prompt text (or, with no prompt, the last prompt played in this Workflow)
        supplies the turn's steps instead; a ``once`` rule is then marked as used."""
        caller = self.caller
        if caller.rules and self.p.hangup_at is None:
            prompt = action.play_prompt or self.last_played
            heard = "" if prompt is None else _text(prompt, self.config.media)
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
        kind = action.kind
        self.events.append(ActionStarted(start, action.operation_id, kind))
        fail = self.config.fail_actions
        if isinstance(action, Recognize | Record) and not (fail and kind in fail):
            outcome: OperationOutcome = self.input_turn(action, start)
        elif isinstance(action, PlayPrompt) and not (fail and kind in fail):
            outcome = self.play_prompt(action, start)
        elif isinstance(action, Answer):
            outcome = AnswerOutcome(id=action.operation_id, outcome=Outcome.SUCCESS)
            self.set_state(start, CallState.ESTABLISHED)
        elif isinstance(action, Reject | Hangup):
            cls = RejectOutcome if isinstance(action, Reject) else HangupOutcome
            outcome = cls(id=action.operation_id, outcome=Outcome.SUCCESS)
            self.end(
                EndReason.BOT_REJECTED if isinstance(action, Reject) else EndReason.BOT_HUNG_UP
            )
        elif kind in fail:
            outcome = timelines.system_failure(action, "temporary system failure (injected)")
        else:  # pragma: no cover - every readable action is one of the above
            outcome = timelines.system_failure(action, f"cannot run {action.kind.value}")
        # ``_value_``: the member's value, as ``.value`` gives it, without the property.
        reason = getattr(outcome, "completion_reason", None)
        shown = reason._value_ if reason is not None else _sub_reason(outcome)
        self.events.append(
            ActionCompleted(self.p.now, action.operation_id, kind, outcome.outcome, shown)
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
        self,
        action: PlayPrompt,
        start: float,
        stop_at: float | None,
        operation_id: str = "",
        seconds: Sequence[float] = (),
    ) -> timelines.Played:
        """Play every prompt from ``start``; stop at ``stop_at`` (barge-in or hangup).
        ``operation_id`` names the action the prompt belongs to (record, recognize);
        ``seconds``, when given, are the prompts' lengths (``prompt_lengths``)."""
        self.last_played = action
        at = start
        media_files, spoken = self.config.media, self.config.spoken
        for index, prompt in enumerate(action.prompts):
            media = media_files.get(prompt.file_uri) if prompt.file_uri else None
            if media is not None and media.failure is not None and not (prompt.value or "").strip():
                return timelines.Played(
                    at, cut=False, failure=f"{prompt.file_uri}: {media.failure}"
                )
            end = at + (seconds[index] if seconds else prompt_seconds(prompt, media_files, spoken))
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

    def prompt_lengths(self, prompt: PlayPrompt | None) -> list[float]:
        """How long each prompt of ``prompt`` plays."""
        if prompt is None:
            return []
        media, spoken = self.config.media, self.config.spoken
        return [prompt_seconds(p, media, spoken) for p in prompt.prompts]

    def input_turn(self, action: Recognize | Record, start: float) -> OperationOutcome:
        lengths = self.prompt_lengths(action.play_prompt)
        prompt_end = start
        for seconds in lengths:
            prompt_end += seconds  # as play() sums

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
        opened = window if isinstance(action, Record) else prompt_end
        timer = timelines.timer(machine, opened)  # the timers run from here
        turn = timelines.drive(machine, steps, cursor, window, self.p.hangup_at)
        if action.play_prompt is not None:
            stop_at = turn.barge_in_at if turn.barge_in_at is not None else None
            if turn.hung_up_at is not None and (stop_at is None or turn.hung_up_at < stop_at):
                stop_at = turn.hung_up_at
            played = self.play(action.play_prompt, start, stop_at, action.operation_id, lengths)
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
        self.events.extend(_with_timer(turn, timer))
        if scripted:  # a rule's steps that the turn did not reach are dropped
            self.p.cursor = turn.cursor
        self.p.now, self.p.hangup_at = turn.done.at, turn.hangup_at
        if isinstance(turn.done.recording, RecordingMade):
            self.events.append(turn.done.recording)
            self.recording = turn.done.recording
        self.hung_up_at = turn.hung_up_at
        return turn.done.outcome


def _with_timer(turn: timelines.Turn, timer: TimerSet) -> list[Event]:
    """The turn's events with the timer as it was set when the action began to listen, in
    time order; without it when the caller's input came first or the action ended before."""
    opened = timer.at
    if turn.done.at <= opened or (turn.barge_in_at is not None and turn.barge_in_at < opened):
        return turn.events
    events = turn.events
    for index, event in enumerate(events):
        if event.at >= opened:
            events.insert(index, timer)
            return events
    events.append(timer)
    return events


def _text(prompt: PlayPrompt, media: Mapping[str, Media]) -> str:
    """The text of a playPrompt as the caller hears it: its prompts' values, in order, and for
    a file prompt what recognition heard in the file (when it was transcribed)."""
    texts = []
    for p in prompt.prompts:
        if p.value and p.value.strip():
            texts.append(p.value.strip())
        elif p.file_uri and (heard := media.get(p.file_uri)) is not None and heard.text:
            texts.append(heard.text)
    return " ".join(texts)


def _sub_reason(outcome: OperationOutcome) -> str | None:
    choice = getattr(outcome, "choice_outcome", None)
    digits = getattr(outcome, "collect_digits_outcome", None)
    sub = choice or digits
    return None if sub is None else str(sub.completion_reason._value_)
