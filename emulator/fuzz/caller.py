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
    """The caller's steps, drawn on demand by ``draw`` (None: stop), at most ``limit``.

    With ``epoch`` (a count of the bot's Workflows heard) and ``renew``: the engine may read a
    step at the end of an input turn and use it only in the next one (a turn that ends by a
    timeout after the step is read). When the last step drawn is read again after the bot has
    sent another Workflow, it has not been used, and was drawn for a state that is gone:
    ``renew`` may draw it again for the state of now (None: it stays). The engine never acted
    on the step it replaces, so the steps, replayed as a written script, make the same call.
    A hang-up that waits for another action (``HangUp.during``) is the exception: the engine
    acts on it by reading it (the caller gives no more input in that turn), so it is never
    drawn again (it was, and a call that waited out a menu's silence was replayed as one that
    pressed a key there)."""

    def __init__(
        self,
        draw: Callable[[], Step | None],
        limit: int,
        epoch: Callable[[], int] | None = None,
        renew: Callable[[], Step | None] | None = None,
    ) -> None:
        self.draw = draw
        self.limit = limit
        self.epoch = epoch
        self.renew = renew
        self.drawn: list[Step] = []
        self.drawn_in = -1
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
        if self.epoch is not None and index == len(self.drawn) - 1 and not self.done:
            now = self.epoch()
            last = self.drawn[index]
            waits = isinstance(last, HangUp) and last.during is not None
            if now != self.drawn_in and self.renew is not None and not waits:
                step = self.renew()
                if step is not None:
                    self.drawn[index] = step
            self.drawn_in = now
        while index >= len(self.drawn) and not self.done:
            step = self.draw() if len(self.drawn) < self.limit else None
            if step is None:
                step, self.done = HangUp(), True
            self.drawn.append(step)
            self.drawn_in = self.epoch() if self.epoch is not None else -1
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
        self.waiting = False
        """Whether the bot's last Workflow waits for input (a recognize or a record)."""
        self.heard_count = 0
        """The bot's Workflows heard so far."""

    def __call__(self, kind: str, payload: JSONObject, vtime: float) -> None:
        if kind == "http.response":
            workflow = answered_workflow(payload)
            if workflow is not None:
                self.heard(workflow)
        elif kind == "finding" and payload.get("severity") == "error" and self.failed_in is None:
            self.failed_in = self.state.id if self.state is not None else "start"

    def epoch(self) -> int:
        """The bot's Workflows heard so far."""
        return self.heard_count

    def heard(self, workflow: Workflow) -> None:
        played: list[PlayPrompt] = []
        self.heard_count += 1
        self.waiting = False
        for action in workflow.actions:
            if isinstance(action, PlayPrompt):
                played.append(action)
            elif isinstance(action, Recognize | Record):
                self.state = observe(action, played, self.masker)
                self.states.append(self.state)
                self.waiting = True
                played = []
