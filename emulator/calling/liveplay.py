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
from dataclasses import dataclass, replace
from typing import Protocol

from emulator.calling.caller import At, CallerScript, Held, Live, Released, Step, Talk
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
    holding: Holding | None

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


@dataclass(slots=True)
class Holding:
    """A live caller's hold to talk: its talk (``step``: its index in the caller's steps, of
    ``length``: ``OPEN_TALK`` until the release), begun at virtual time ``at``, and the
    microphone's audio. ``began``: where the engine began the talk, once a run has it (its
    audio is kept for the recording then)."""

    step: int
    at: float
    sound: bytearray
    rate: int
    length: float = OPEN_TALK
    began: float | None = None
    live: bool = True
    """The audio came as the talk went on (False: let go before the talk began, so the talk is
    the whole of it)."""


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
        keep_held(session, run)
        heard: Step | Live | None = None
        for index, at, kind, payload in due_rows(session.rows(run), played, run.progress.now):
            heard = yield from play_row(session, at, kind, payload, run.progress.now)
            if heard is not None:
                break
            played.add(index)
        else:
            heard = yield from listen(session, run.progress.now)
            if heard is None:
                return run
        session.caller = replace(session.caller, steps=acted(session, heard))
        run = run_workflow(workflow, session.caller, session.progress, config)


def acted(session: LiveSession, heard: Step | Live) -> tuple[Step, ...]:
    """The caller's steps with the live caller's act at this moment: a step, a hold's talk
    opened (``Held``), or its talk ended (``Released``)."""
    steps = session.caller.steps
    if isinstance(heard, Released):
        return released(session, heard)
    if isinstance(heard, Held):
        holding = Holding(len(steps) + 1, session.vtime, heard.sound, heard.rate)
        session.holding = holding
        return (*steps, At(session.vtime), Talk(OPEN_TALK))
    return (*steps, At(session.vtime), heard)


def released(session: LiveSession, let_go: Released) -> tuple[Step, ...]:
    """The caller's steps with the talk its hold opened ending now: as long as it has lasted
    since the engine began it, or, if the engine had not begun it yet (the bot was thinking,
    or a prompt played before the turn), as long as the hold lasted, at the call's pace."""
    holding, steps = session.holding, list(session.caller.steps)
    if holding is None or steps[holding.step] != Talk(OPEN_TALK):
        return tuple(steps)
    pace = session.settings.pace or 1.0
    began = holding.began
    if began is not None and began <= session.vtime:  # talking since it began
        holding.length = round(max(0.01, session.vtime - began), 6)
        session.holding = None  # its audio is kept already
    else:  # let go before the talk began: it is all the audio, from where it begins
        holding.length = round(max(0.01, let_go.seconds / pace), 6)
        holding.began, holding.at, holding.live = None, session.vtime, False
    steps[holding.step] = Talk(holding.length)
    return tuple(steps)


def keep_held(session: LiveSession, run: WorkflowRun) -> None:
    """Once a run begins the held talk, keep the microphone's audio (``Poster.keep``) for the
    recording whose span the talk is: the audio from that moment on, still growing while
    held, so a recording that ends during the hold holds what was said by then."""
    holding = session.holding
    if holding is None or holding.began is not None:
        return
    began = next((e.at for e in run.events if isinstance(e, CallerSpoke) and e.text is None
                  and e.at >= holding.at - 1e-9
                  and abs(e.end - e.at - holding.length) < 1e-6), None)  # fmt: skip
    if began is None:
        return
    holding.began = began
    pace = session.settings.pace or 1.0
    skip = (began - holding.at) * pace if holding.live else 0.0  # real seconds held before
    session.poster.keep(began, Sound(holding.sound, holding.rate, skip))
    if holding.length != OPEN_TALK:
        session.holding = None  # released before the talk began: nothing more to follow


def play_row(
    session: LiveSession, at: float, kind: str, payload: JSONObject, until: float
) -> Steps[Step | Live | None]:
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


def listen(session: LiveSession, to: float) -> Steps[Step | Live | None]:
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
