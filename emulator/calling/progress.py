"""The values the engine works with: its configuration (``EngineConfig``, ``Media``), the state
of a call between Workflows (``CallProgress``, and ``LiveProgress`` while one runs), what running
one Workflow did (``WorkflowRun``), and how long a prompt plays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from emulator.calling.events import EndReason, Event, RecordingMade
from emulator.calling.model import ActionType, CallState, OperationOutcome, Prompt
from emulator.calling.speech import SpokenKey, speech_seconds, spoken_key
from emulator.calling.values import quick_init

BEEP_SECONDS = 0.5
DEFAULT_MEDIA_SECONDS = 3.0
"""Duration assumed for a prompt file whose real duration is not known (lint, dry runs)."""
DEFAULT_MAX_WORKFLOWS = 50


@dataclass(frozen=True, slots=True)
class Media:
    """What the platform learned fetching one fileUri: its duration, or why it failed."""

    seconds: float | None = None
    failure: str | None = None
    rule: str | None = None
    """The id of the rule a failure broke (CALL-MEDIA-FETCH, -SIZE, -FORMAT)."""
    text: str | None = None
    """What speech recognition heard in the file (lower-case words, empty for nothing); None
    when it was not transcribed. The caller's ``when`` rules hear it as the prompt's text."""
    listened: tuple[str, ...] | None = None
    """The phrases recognition listened for (``()``: dictation); None: not transcribed."""


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Platform behaviour that is not in a Workflow.

    ``max_workflows``: the platform's limit of Workflows in one call (field notes: a real call was
    dropped after about 13 round trips). ``media``: prompt files by fileUri. ``fail_actions``:
    actions of these kinds fail with temporarySystemFailure (fault injection). ``spoken``: the
    length in seconds of text prompts as synthesized, by ``speech.spoken_key`` (prompt timing
    ``speech``, measured before the run); a text prompt not in it is timed by the estimate of
    ``speech.speech_seconds`` (0.4 s a word).
    """

    max_workflows: int = DEFAULT_MAX_WORKFLOWS
    media: Mapping[str, Media] = field(default_factory=dict)
    fail_actions: frozenset[ActionType] = frozenset()
    beep_seconds: float = BEEP_SECONDS
    spoken: Mapping[SpokenKey, float] = field(default_factory=dict)


@quick_init
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
class LiveProgress:
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


@quick_init
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


def prompt_seconds(
    prompt: Prompt,
    media: Mapping[str, Media],
    spoken: Mapping[SpokenKey, float] | None = None,
) -> float:
    """How long a prompt plays: its leading silence, then its text (its synthesized length in
    ``spoken``, else the estimate) or file."""
    seconds = prompt.silence
    if prompt.value is not None and prompt.value.strip():
        key = spoken_key(prompt) if spoken else None
        heard = spoken.get(key) if spoken and key is not None else None
        seconds += heard if heard is not None else speech_seconds(prompt.value, prompt.say_as)
    elif prompt.file_uri is not None:
        known = media.get(prompt.file_uri)
        seconds += known.seconds if known and known.seconds is not None else DEFAULT_MEDIA_SECONDS
    return seconds
