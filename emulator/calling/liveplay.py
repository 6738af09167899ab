"""A live call's Workflows played in real time (``CallSettings(live=True)``): each Workflow
plays at the call's pace while the session waits for the live caller's next act or the next row
of the run, whichever comes first (the ``Listen`` effect). An act joins the caller's steps at its
moment (``At``) and the pure engine runs the Workflow again from where it began: the run is the
same up to that moment, so playing goes on with the rows not yet recorded. A hold's release
(``Released``) gives the talk it opened its real length and keeps the microphone's audio for the
recording. ``CallSession.execute`` calls ``play_live``; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Protocol

from emulator.calling.caller import At, CallerScript, Released, Step, Talk
from emulator.calling.calllog import LIVE_TIMER, Listener
from emulator.calling.effects import Heard, Listen, Steps
from emulator.calling.engine import EngineConfig, WorkflowRun, run_workflow
from emulator.calling.events import CallerSpoke
from emulator.calling.live import OPEN_TALK
from emulator.calling.model import Workflow
from emulator.calling.posting import Poster
from emulator.calling.progress import CallProgress
from emulator.calling.settings import CallSettings
from emulator.calling.speech import Sound
from emulator.jsonutil import JSONObject


class LiveSession(Protocol):
    """What playing live needs of the call session."""

    caller: CallerScript
    settings: CallSettings
    progress: CallProgress
    poster: Poster
    listener: Listener | None
    vtime: float

    def record(self, kind: str, payload: JSONObject, blob: bytes | None = None) -> None: ...
    def rows(self, run: WorkflowRun) -> Iterator[tuple[float, str, JSONObject]]: ...
    def note_workflow(self, workflow: Workflow) -> None: ...


LASTING = ("prompt played", "caller spoke", "recording made")
"""Rows of a live call recorded when what they say has ended."""
DUE_AT_END = LASTING[1:]
"""Rows that come due when they end: the rows within them come first (a prompt's rows come
after it, and the page hears it begin)."""


def due_rows(
    rows: Iterable[tuple[float, str, JSONObject]], played: set[int], until: float
) -> list[tuple[int, float, str, JSONObject]]:
    """A live run's rows not yet ``played`` (by index: the run is the same up to the moment
    of each act), in the order they come due: the caller's speech and a recording when they
    end (by ``until`` at the latest), so that the rows within them (a timer the speech set, a
    key after it) come in time, and a held talk is recorded once its release has ended it."""

    def due(row: tuple[int, float, str, JSONObject]) -> float:
        end = row[3].get("end")
        lasting = row[3].get("kind") in DUE_AT_END and isinstance(end, int | float)
        return min(float(end), until) if lasting else row[1]  # type: ignore[arg-type]

    waiting = [(i, *row) for i, row in enumerate(rows) if i not in played]
    return sorted(waiting, key=due)


def play_live(
    session: LiveSession, workflow: Workflow, run: WorkflowRun, config: EngineConfig
) -> Steps[WorkflowRun]:
    """Play ``run`` in real time as ``replay`` does, listening for the live caller. When it
    acts, the act joins the caller's steps at that moment (``At``) and the Workflow runs
    again from where it began: the engine is pure, so the run is the same up to that
    moment, and playing goes on with the rows not yet recorded (``due_rows``). A prompt's
    row is recorded when the prompt has played out (a barge-in may cut it), and the caller's
    speech when it ends (a held talk's end is known at its release), with the time each
    began, as in every other call; the listener hears ``live.playing`` when a prompt begins."""
    session.note_workflow(workflow)
    played: set[int] = set()
    while True:
        heard: Step | Released | None = None
        for index, at, kind, payload in due_rows(session.rows(run), played, run.progress.now):
            heard = yield from play_row(session, at, kind, payload, run.progress.now)
            if heard is not None:
                break
            played.add(index)
        else:
            heard = yield from listen(session, run.progress.now)
            if heard is None:
                return run
        if isinstance(heard, Released):
            steps = released(session, heard, run)
        else:
            steps = (*session.caller.steps, At(session.vtime), heard)
        session.caller = replace(session.caller, steps=steps)
        run = run_workflow(workflow, session.caller, session.progress, config)


def released(session: LiveSession, released: Released, run: WorkflowRun) -> tuple[Step, ...]:
    """The caller's steps with the talk its hold opened ending now, and the microphone's
    audio kept (``Poster.clips``) for the recording that holds the talk."""
    steps = list(session.caller.steps)
    index = next((i for i in range(len(steps) - 1, 0, -1) if steps[i] == Talk(OPEN_TALK)
                  and isinstance(steps[i - 1], At)), None)  # fmt: skip
    if index is None:
        return tuple(steps)
    held = steps[index - 1]
    assert isinstance(held, At)
    began = next((e.at for e in run.events if isinstance(e, CallerSpoke) and e.text is None
                  and e.at >= held.at - 1e-9), held.at)  # fmt: skip
    steps[index] = Talk(max(0.01, session.vtime - began))
    skip = (began - held.at) * (session.settings.pace or 1.0)  # real seconds held before
    session.poster.keep(began, Sound(released.sound, released.rate, skip))
    return tuple(steps)


def play_row(
    session: LiveSession, at: float, kind: str, payload: JSONObject, until: float
) -> Steps[Step | Released | None]:
    """Record one row when its time comes (a prompt's or the caller's speech when it ends,
    at the latest ``until``), unless the live caller acts first: then its act, and the row
    is left unrecorded."""
    fresh = at >= session.vtime - 1e-3  # not begun yet (a prompt cut by an act began before)
    heard = yield from listen(session, at)
    if heard is not None:
        return heard
    if kind == LIVE_TIMER:  # told to the page, not recorded
        if session.listener is not None:
            session.listener(kind, payload, at)
        return None
    end = payload.get("end") if payload.get("kind") in LASTING else None
    if isinstance(end, int | float) and end > at:
        if session.listener is not None and payload.get("kind") == "prompt played" and fresh:
            session.listener("live.playing", payload, at)
        heard = yield from listen(session, min(end, until))
        if heard is not None:
            return heard
    now, session.vtime = session.vtime, at
    session.record(kind, payload)
    session.vtime = now
    return None


def listen(session: LiveSession, to: float) -> Steps[Step | Released | None]:
    """Let virtual time run to ``to`` in real time at the call's pace, unless the live
    caller acts first: its act, virtual time then standing at that moment."""
    if to <= session.vtime:
        return None
    pace = session.settings.pace or 1.0  # a live call runs in real time
    heard = yield Listen((to - session.vtime) * pace, session.vtime, pace)
    if heard is None:
        session.vtime = to
        return None
    assert isinstance(heard, Heard)
    session.vtime = min(to, session.vtime + heard.after / pace)
    return heard.step
