"""The scenario language as typed values: what happens, what is expected, and how it is run.

``loader.py`` reads YAML into these; ``emulator.runner`` runs them; ``expectations.py`` judges the
transcript against them; ``reports.py`` renders the results. Every value is frozen. ``line`` fields
point back into the file, so a failure names ``file:line``.

A scenario is one of three kinds: a **call** (``caller``: a caller script, optionally with reactive
``when`` rules), a **conversation** (``messaging``: the user's turns), or a **probe** (``probe``: a
conformance probe run against a bot: ``auth``, ``auth-calling``). Each kind carries ``expect``
(checked after the run; a probe takes only ``findings``), ``faults`` (what the platform does wrong
on purpose: calls), ``variables`` (``${name}`` in strings), and a ``matrix`` (one run per
parameter set).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from emulator.calling.caller import CallerScript
from emulator.calling.faults import PlatformFaults
from emulator.jsonutil import JSON
from emulator.patterns import compile_pattern

EndedBy = Literal["bot", "caller", "platform"]
ProbeName = Literal["auth", "auth-calling"]
"""The probes a scenario can run (``probe: auth``: ``emulator.conformance.auth``, against the
messaging bot; ``probe: auth-calling``: ``emulator.conformance.auth_calling``, against the calling
bot)."""
Kind = Literal["call", "conversation", "probe"]


@dataclass(frozen=True, slots=True)
class TextMatch:
    """How a text is matched: exactly, as a substring, or by a regular expression (search)."""

    equals: str | None = None
    contains: str | None = None
    matches: str | None = None

    def test(self, text: str | None) -> bool:
        if text is None:
            return False
        if self.equals is not None and text != self.equals:
            return False
        if self.contains is not None and self.contains not in text:
            return False
        return not (self.matches is not None and compile_pattern(self.matches).search(text) is None)

    def describe(self) -> str:
        parts = []
        if self.equals is not None:
            parts.append(f"equals {self.equals!r}")
        if self.contains is not None:
            parts.append(f"contains {self.contains!r}")
        if self.matches is not None:
            parts.append(f"matches /{self.matches}/")
        return " and ".join(parts) or "any text"


# --- expectations ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallExpect:
    """Call level: how the call went as a whole."""

    answered: bool | None = None
    rejected: bool | None = None
    ended_by: EndedBy | tuple[EndedBy, ...] | None = None
    """Who ended the call; a tuple: any one of these (``ended_by: [bot, caller]``)."""
    final_state: str | None = None
    max_workflows: int | None = None
    min_duration: float | None = None
    max_duration: float | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class PromptExpect:
    """Prompts the platform played: each item is a text match or a file URI (substring)."""

    items: tuple[TextMatch | str, ...]
    in_order: bool = True
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ChoicesExpect:
    """The choice names a recognize offered (``index``: the n-th recognize, 0-based; None: any)."""

    names: tuple[str, ...]
    index: int | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class OutcomeExpect:
    """An outcome the platform posted (``index``: the n-th posted, 0-based; None: any)."""

    type: str | None = None
    outcome: Literal["success", "failure"] | None = None
    completion_reason: str | None = None
    choice: str | None = None
    digits: str | None = None
    index: int | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class RecordingExpect:
    format: str | None = None
    min_length: float | None = None
    max_length: float | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ReplyExpect:
    """A bot reply in a conversation (``index``: the n-th reply, 0-based; None: any)."""

    text: TextMatch | None = None
    type: str | None = None
    attachments: int | None = None
    """At least this many attachments."""
    suggested_actions: tuple[str, ...] | None = None
    """These action titles (or values) are offered."""
    streamed: bool | None = None
    """True: the reply came as a stream, ended by its final message (``text`` is then the final
    text); False: it came as one activity. None: either."""
    chunks: int | None = None
    """Streamed, in at least this many chunks before the final message."""
    index: int | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ExpectedReply:
    """A bot activity of a replayed recording (a ``.transcript`` or ``.chat`` file), as it is
    compared: its ids, timestamps, service URL, conversation, channel, sender and recipient are
    masked, and only these fields count."""

    type: str
    text: str | None = None
    attachments: tuple[str, ...] = ()
    """The content type of each attachment, in order."""
    layout: str | None = None
    """``attachmentLayout``, compared only when the recording gives one."""
    suggested_actions: tuple[str, ...] = ()
    """The title (or, without one, the value) of each suggested action, in order."""
    name: str | None = None
    """An event's or invoke's name, compared only when the recording gives one."""
    activity: int = 0
    """Its index among the recording's activities, from 0."""
    after: str | None = None
    """The user activity it answers, in a few words (None: the conversation's opening)."""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class RepliesInOrder:
    """Exactly these replies, in this order (a replayed recording): every activity the bot sent,
    except those of ``ignored`` types, against the one at the same place."""

    replies: tuple[ExpectedReply, ...]
    ignored: tuple[str, ...] = ("typing", "trace")
    line: int | None = None


@dataclass(frozen=True, slots=True)
class LatencyExpect:
    """The bot's answers, p95 over the run, are at most this many milliseconds."""

    p95_ms: float
    line: int | None = None


@dataclass(frozen=True, slots=True)
class FindingsExpect:
    """``none``: no error finding at all. Otherwise exactly these rule ids must be found (each at
    least once), and no error of another rule (for testing a bot's error handling)."""

    none: bool = True
    rules: tuple[str, ...] = ()
    line: int | None = None


Expectation = (
    CallExpect
    | PromptExpect
    | ChoicesExpect
    | OutcomeExpect
    | RecordingExpect
    | ReplyExpect
    | RepliesInOrder
    | LatencyExpect
    | FindingsExpect
)


# --- what happens ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn of a conversation: a message, an event or invoke, conversationUpdate, or a
    sign-in (``signIn``: ``text`` is the test user, or ``refuse:``)."""

    type: Literal["message", "event", "invoke", "conversationUpdate", "signIn"] = "message"
    text: str | None = None
    name: str | None = None
    value: JSON = None
    wait: float | None = None
    """Seconds to wait for the bot's replies before the next turn (default: the run's setting)."""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Faults:
    """What the platform does wrong on purpose. Callback numbers count the requests after the
    Conversation, from 1.

    ``fail_callbacks``: the platform treats the answer to callback N as a 5xx once and retries it
    with the same message id (the bot sees N twice). ``duplicate_callbacks``: callback N is
    delivered twice with the same message id (the second answer is the one used).
    ``drop_callbacks``: callback N is never delivered (the call waits, then the platform hangs
    up). ``unknown_fields`` / ``unknown_enums``: platform payloads carry an unknown field / an
    unknown enum value where a bot must tolerate it (spec, Versioning 4). ``caller_delay``: seconds
    the caller waits before each input step (a slow caller)."""

    fail_callbacks: tuple[int, ...] = ()
    duplicate_callbacks: tuple[int, ...] = ()
    drop_callbacks: tuple[int, ...] = ()
    unknown_fields: bool = False
    unknown_enums: bool = False
    caller_delay: float = 0.0
    reject_workflows: tuple[int, ...] = ()

    @property
    def any(self) -> bool:
        return self != Faults()

    def platform_faults(self) -> PlatformFaults:
        """These settings as the calling session understands them."""
        return PlatformFaults(
            fail_callbacks=self.fail_callbacks,
            duplicate_callbacks=self.duplicate_callbacks,
            drop_callbacks=self.drop_callbacks,
            unknown_fields=self.unknown_fields,
            unknown_enums=self.unknown_enums,
            caller_delay=self.caller_delay,
            reject_workflows=self.reject_workflows,
        )


@dataclass(frozen=True, slots=True)
class Platform:
    """How the calling platform places a scenario's call. ``app_id``: the bot's app id (the
    audience of the Bearer token, ``appId`` of results); ``legacy_validation_outcome``: the
    validation outcome type spelt ``worfklowValidationOutcome``, as the real SDKs spelt it;
    ``prompt_timing``: ``estimate`` or ``speech`` (None: the run's default)."""

    app_id: str | None = None
    legacy_validation_outcome: bool = False
    prompt_timing: str | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario (one matrix entry, variables substituted), read and checked."""

    name: str
    description: str | None = None
    tags: tuple[str, ...] = ()
    channel: str | None = None
    """A conversation's channel (``emulator.channels``; None: the default)."""
    caller: CallerScript | None = None
    messaging: tuple[Turn, ...] | None = None
    probe: ProbeName | None = None
    """A probe scenario: the conformance probe to run (``auth`` against the messaging bot,
    ``auth-calling`` against the calling bot)."""
    expect: tuple[Expectation, ...] = ()
    faults: Faults = field(default_factory=Faults)
    platform: Platform = field(default_factory=Platform)
    variables: tuple[tuple[str, str], ...] = ()
    """The matrix entry (or variables) this instance was made with, for its test id."""
    spec: str | None = None
    """The spec section the scenario tests (bundled conformance scenarios name one)."""
    path: Path | None = None
    line: int | None = None

    @property
    def kind(self) -> Kind:
        if self.probe is not None:
            return "probe"
        return "conversation" if self.messaging is not None else "call"

    @property
    def id(self) -> str:
        """A stable test id: the name, plus the matrix entry when there is one."""
        if not self.variables:
            return self.name
        return f"{self.name}[{','.join(f'{k}={v}' for k, v in self.variables)}]"
