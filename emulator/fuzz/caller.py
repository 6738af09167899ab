"""A caller whose steps are drawn while the call runs.

The engine reads a caller's steps as a sequence (its length, one step by index) at each input
turn and before each plain prompt. ``DrawnSteps`` is such a sequence: while the caller has not
stopped it is one step longer than what has been drawn, and reading that step draws it, from
what the bot waits for at that moment (the last waiting action of the bot's last Workflow, kept
by ``Listening`` from the call's events). When the draw says stop, or after ``limit`` steps, the
caller hangs up: that is its last step. ``steps`` is what was drawn, in order: replayed as a
plain script, it makes the same call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from emulator.calling.caller import HangUp, Step
from emulator.calling.model import PlayPrompt, Recognize, Record, Workflow
from emulator.explore.crawler import answered_workflow
from emulator.explore.states import DEFAULT_MASKER, Masker, State, observe
from emulator.jsonutil import JSONObject


class DrawnSteps(Sequence[Step]):
    """The caller's steps, drawn on demand by ``draw`` (None: stop), at most ``limit``."""

    def __init__(self, draw: Callable[[], Step | None], limit: int) -> None:
        self.draw = draw
        self.limit = limit
        self.drawn: list[Step] = []
        self.done = False

    def __len__(self) -> int:
        return len(self.drawn) + (0 if self.done else 1)

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...

    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        if isinstance(index, slice):
            return self.drawn[index]
        while index >= len(self.drawn) and not self.done:
            step = self.draw() if len(self.drawn) < self.limit else None
            if step is None:
                step, self.done = HangUp(), True
            self.drawn.append(step)
        return self.drawn[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(list(self.drawn))  # what has been drawn, never a draw

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self.drawn)


class Listening:
    """Keeps, from a call's events, what the bot waits for now (``state``), the waiting points
    so far (``states``), and the state in which the first error finding came (``failed_in``)."""

    def __init__(self, masker: Masker = DEFAULT_MASKER) -> None:
        self.masker = masker
        self.state: State | None = None
        self.states: list[State] = []
        self.failed_in: str | None = None

    def __call__(self, kind: str, payload: JSONObject, vtime: float) -> None:
        if kind == "http.response":
            workflow = answered_workflow(payload)
            if workflow is not None:
                self.heard(workflow)
        elif kind == "finding" and payload.get("severity") == "error" and self.failed_in is None:
            self.failed_in = self.state.id if self.state is not None else "start"

    def heard(self, workflow: Workflow) -> None:
        played: list[PlayPrompt] = []
        for action in workflow.actions:
            if isinstance(action, PlayPrompt):
                played.append(action)
            elif isinstance(action, Recognize | Record):
                self.state = observe(action, played, self.masker)
                self.states.append(self.state)
                played = []
