"""Checking a reconstruction before it is written: the engine (pure, in virtual time) runs the
Workflows the stored call ran against the reconstructed steps, and what the caller did there
must be what the caller did in the call, act by act, at the same times, with the same outcome
for every action.

The check needs every Workflow that ran as the bot sent it: a Workflow the transcript does not
hold, or one botemu cannot read, leaves the call unchecked. Platform faults do not change what a
Workflow does to the caller (a failed or duplicated callback runs the Workflow of the answer the
platform used, a refused Workflow does not run, a dropped callback ends the call, a slow
caller's silences are in the transcript), so a call placed with faults is checked too.

The engine times the prompts as the call did: a call placed with prompt timing ``speech`` (its
``call.start`` says so) played each text prompt as long as its synthesized audio, so each
Workflow's text prompts are measured again by the code the call measured them with
(``PromptSpeech.measure``: an utterance synthesized before in the process is looked up, the
others are synthesized) and given to the engine (``EngineConfig.spoken``). When this process
speaks with another synthesizer than the call did (eSpeak NG missing, another version), the
lengths would differ and the call is left unchecked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from emulator.audio.shared import engine_name
from emulator.calling.caller import CallerScript, Step
from emulator.calling.calllog import CallLog, transcript_rows
from emulator.calling.effects import Compute, Effect, run_blocking
from emulator.calling.engine import CallProgress, EngineConfig, Media, run_workflow
from emulator.calling.events import Event
from emulator.calling.model import Workflow
from emulator.calling.prompt_files import PromptSpeech
from emulator.calling.speech import SpokenKey
from emulator.calling.wire import read_workflow
from emulator.errors import WireError
from emulator.jsonutil import JSON, JSONObject
from emulator.replay.reading import ActionRow, CallerAct, Recorded, caller_act, joined_presses

TOLERANCE = 1e-4
"""Seconds two times may differ by and still be the same moment (transcripts round to 1 µs)."""
MAX_WORKFLOWS = 100_000


def check(call: Recorded, steps: Sequence[Step]) -> str | None:
    """Why ``steps`` do not reproduce ``call`` (one line), or None when they do. A call that
    cannot be checked gives None and its reason in ``unchecked``."""
    if unchecked(call) is not None:
        return None
    events = _run(call, CallerScript(tuple(steps)))
    if events is None:
        return None
    rows: list[CallerAct | ActionRow] = []
    for seq, (_, _, payload) in enumerate(transcript_rows(events)):
        act = caller_act(seq, payload)
        if act is not None:
            rows.append(act)
        elif payload.get("kind") == "action":  # a turn's end: a run of keys ends with it
            rows.append(ActionRow(seq, "", "", 0.0, 0.0, None, None))
    return _difference(joined_presses(call.timeline), joined_presses(rows)) or _outcomes(
        call, events
    )


def unchecked(call: Recorded) -> str | None:
    """Why the reconstruction of ``call`` cannot be checked, or None when it can."""
    if any(not isinstance(doc, dict) for doc in call.ran):
        return "a Workflow that ran is not in the transcript as JSON"
    known = call.media.keys() | call.media_failures.keys()
    unknown = next((h.file_uri for h in call.prompts if h.file_uri and not (h.text or "").strip()
                    and h.file_uri not in known), None)  # fmt: skip
    if unknown is not None:
        return f"the length of the prompt file {unknown} is not in the transcript (fetched before)"
    if call.prompt_timing == "speech" and call.speech_engine is not None:
        here = engine_name()
        if here != call.speech_engine:
            return (f"the call's text prompts were as long as {call.speech_engine} speaks them, "
                    f"and this botemu speaks with {here}")  # fmt: skip
    return None


def _run(call: Recorded, script: CallerScript) -> list[Event] | None:
    media = {uri: Media(seconds) for uri, seconds in call.media.items()}
    media |= {uri: Media(failure=why) for uri, why in call.media_failures.items()}
    config = EngineConfig(max_workflows=MAX_WORKFLOWS, media=media)
    speech = PromptSpeech(CallLog(_Unkept(), "", None)) if call.prompt_timing == "speech" else None
    progress = CallProgress()
    events: list[Event] = []
    for doc in call.ran:
        try:
            workflow = read_workflow(doc)
        except (WireError, RecursionError):
            return None
        if speech is not None:  # as ``CallSession.execute`` times them
            config = replace(config, spoken=_spoken(speech, workflow))
        run = run_workflow(workflow, script, progress, config)
        events += run.events
        progress = run.progress
        if progress.ended is not None:
            break
    return events


def _spoken(speech: PromptSpeech, workflow: Workflow) -> dict[SpokenKey, float]:
    """The synthesized length of each text prompt of ``workflow``, measured here and now."""
    return run_blocking(speech.measure(workflow), _compute)


def _compute(effect: Effect) -> Any:
    if not isinstance(effect, Compute):
        raise TypeError(f"measuring prompts asked for {type(effect).__name__}, not Compute")
    return effect()


class _Unkept:
    """A ``CallStore`` that keeps nothing: the note measuring writes belongs to a call, and
    checking a reconstruction places none."""

    def start(self, *, bot: str, kind: str = "call", call_id: str | None = None,
              caller: str | None = None, chain_id: str | None = None,
              scenario: str | None = None) -> str:  # fmt: skip
        return call_id or ""

    def append(self, call_id: str, kind: str, payload: dict[str, JSON], *,
               vtime: float | None = None, blob: bytes | None = None) -> int:  # fmt: skip
        return 0

    def count_workflow(self, call_id: str) -> None:
        return None

    def finish(self, call_id: str, *, reason: str, passed: bool | None = None) -> None:
        return None


def _difference(want: Sequence[CallerAct], got: Sequence[CallerAct]) -> str | None:
    for index in range(max(len(want), len(got))):
        a = want[index] if index < len(want) else None
        b = got[index] if index < len(got) else None
        if a is None or b is None or not _same(a, b):
            return f"the call had {_describe(a)}, the steps give {_describe(b)}"
    return None


def _same(a: CallerAct, b: CallerAct) -> bool:
    if (a.kind, a.keys, a.text) != (b.kind, b.keys, b.text):
        return False
    close = abs(a.at - b.at) <= TOLERANCE and abs(a.end - b.end) <= TOLERANCE
    return close and all(abs(x - y) <= TOLERANCE for x, y in zip(a.times, b.times, strict=True))


def _describe(act: CallerAct | None) -> str:
    if act is None:
        return "nothing more"
    what = {"press": f"keys {act.keys}", "say": f"speech {act.text!r}"}.get(act.kind, act.kind)
    span = f" to {act.end:.2f}s" if act.end > act.at else ""
    return f"{what} at {act.at:.2f}s{span}"


def _outcomes(call: Recorded, events: Sequence[Event]) -> str | None:
    """The first action the steps change (its outcome, or when it ends), or a difference in
    the prompts played."""
    rows = [payload for _, _, payload in transcript_rows(events)]
    replayed = [p for p in rows if p.get("kind") == "action"]
    for index in range(max(len(call.actions), len(replayed))):
        row = call.actions[index] if index < len(call.actions) else None
        got = replayed[index] if index < len(replayed) else None
        if row is None or got is None or not _same_action(row, got):
            return f"{_was(row)} in the call, {_now(got)} with the steps"
    heard = [(p.get("text"), p.get("file_uri")) for p in rows if p.get("kind") == "prompt played"]
    if heard != [(h.text, h.file_uri) for h in call.prompts]:
        return f"the call played {len(call.prompts)} prompts, the steps {len(heard)}"
    return None


def _same_action(row: ActionRow, got: JSONObject) -> bool:
    end = got.get("at")
    ended = isinstance(end, int | float) and abs(end - row.end) <= TOLERANCE
    kept = (got.get("operation_id"), got.get("outcome"), got.get("reason"))
    return ended and kept == (row.operation_id, row.outcome, row.reason)


def _was(row: ActionRow | None) -> str:
    if row is None:
        return "no more actions"
    return f"{row.action} {row.operation_id} ended {row.outcome} ({row.reason}) at {row.end:.2f}s"


def _now(got: JSONObject | None) -> str:
    if got is None:
        return "no such action"
    end = got.get("at")
    when = f" at {end:.2f}s" if isinstance(end, int | float) else ""
    return f"{got.get('action')} {got.get('operation_id')} ended {got.get('outcome')} ({got.get('reason')}){when}"
