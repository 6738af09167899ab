"""Holding to talk, played by ``liveplay`` with no sockets: a fake session and the live
caller's acts at chosen virtual moments. The held talk is the one the hold opened (not a talk
before it), its audio is kept for the recording as soon as the engine begins it (so a recording
that ends during the hold holds it), and a hold made while the bot was thinking lasts as long
as its audio."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.calling.caller import CallerScript, Held, Live, Released, Step, Talk
from emulator.calling.calllog import transcript_rows
from emulator.calling.effects import Heard, Listen
from emulator.calling.engine import CallProgress, EngineConfig, WorkflowRun, run_workflow
from emulator.calling.events import RecordingMade
from emulator.calling.liveplay import Holding, play_live
from emulator.calling.model import CallState
from emulator.calling.posting import Poster
from emulator.calling.settings import CallSettings
from emulator.calling.speech import captured
from emulator.calling.wire import read_workflow
from emulator.jsonutil import JSONObject

RATE = 16000
PROMPT = 1.2  # "leave a message": three words
BEEP = 0.5


class Session:
    """What ``play_live`` needs of a call session, recording what it records."""

    def __init__(self) -> None:
        self.caller = CallerScript()
        self.settings = CallSettings(bot_url="http://127.0.0.1:9/api/calls", pace=1.0, live=True)
        self.progress = CallProgress(now=0.0, call_state=CallState.ESTABLISHED, workflows=1)
        self.poster = Poster.__new__(Poster)
        self.poster.clips = []
        self.listener = None
        self.vtime = 0.0
        self.holding: Holding | None = None
        self.recorded: list[JSONObject] = []

    def record(self, kind: str, payload: JSONObject, blob: bytes | None = None) -> None:
        self.recorded.append(payload)

    def rows(self, run: WorkflowRun) -> Any:
        return transcript_rows(run.events, timers=True)

    def note_workflow(self, workflow: Any) -> None:
        pass


def record(**fields: Any) -> dict[str, Any]:
    return {"operationId": "rec", "action": "record",
            "playPrompt": {"prompts": [{"value": "leave a message"}]},
            "maxDurationInSeconds": 60, "initialSilenceTimeoutInSeconds": 10,
            "maxSilenceTimeoutInSeconds": 3, **fields}  # fmt: skip


def play(action: dict[str, Any], acts: list[tuple[float, Step | Live]]) -> tuple[Session, WorkflowRun]:
    """Play a Workflow of ``action`` live, the caller acting at each (virtual time, act)."""
    session = Session()
    workflow = read_workflow({"actions": [action], "links": {"callback": "https://b/c"}})
    run = run_workflow(workflow, session.caller, session.progress, EngineConfig())
    steps = play_live(session, workflow, run, EngineConfig())  # type: ignore[arg-type]
    sent: Heard | None = None
    try:
        while True:
            effect = steps.send(sent)
            assert isinstance(effect, Listen)
            sent = None
            if acts and acts[0][0] <= effect.at + effect.seconds + 1e-9:
                at, act = acts.pop(0)
                sent = Heard(act, max(0.0, at - effect.at))
    except StopIteration as stop:
        return session, stop.value


def audio(seconds: float) -> bytearray:
    return bytearray(b"\x10\x00" * round(seconds * RATE))


def talks(session: Session) -> list[tuple[float, float]]:
    return [(float(p["at"]), float(p["end"])) for p in session.recorded  # type: ignore[arg-type]
            if p.get("kind") == "caller spoke"]  # fmt: skip


def test_the_held_talk_is_the_one_the_hold_opened_not_a_talk_before_it() -> None:
    sound = audio(5.0)
    session, _ = play(record(), [(0.5, Talk(2.0)), (1.0, Held(sound, RATE)), (6.0, Released(5.0))])
    start = PROMPT + BEEP
    assert talks(session) == [(pytest.approx(start), pytest.approx(start + 2.0)),
                              (pytest.approx(start + 2.0), pytest.approx(6.0))]  # to the release
    [(began, kept)] = session.poster.clips
    assert began == pytest.approx(start + 2.0) and kept.pcm is sound  # the live buffer
    assert kept.skip == pytest.approx(start + 2.0 - 1.0)  # held from 1.0: before its span


def test_a_recording_that_ends_during_the_hold_holds_the_microphone() -> None:
    sound = audio(3.0)
    session, run = play(record(maxDurationInSeconds=4), [(2.0, Held(sound, RATE))])
    assert run.recording is not None and isinstance(run.recording, RecordingMade)
    spans = session.poster.heard(run.recording)
    assert [captured(span) is not None for span in spans] == [True]  # not made-up talk


def test_a_hold_made_while_the_bot_was_thinking_lasts_as_long_as_it_was_held() -> None:
    sound = audio(3.0)  # held 3 s and let go before this Workflow: both come at its start
    session, _ = play(record(), [(0.0, Held(sound, RATE)), (0.0, Released(3.0))])
    start = PROMPT + BEEP
    assert talks(session) == [(pytest.approx(start), pytest.approx(start + 3.0))]
    [(began, kept)] = session.poster.clips
    assert began == pytest.approx(start) and kept.skip == 0.0  # the talk is all of its audio
    assert session.holding is None
