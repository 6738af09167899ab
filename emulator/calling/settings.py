"""What one call is given and what it reports: ``CallSettings`` (everything about a call that
is not the bot's doing) and ``CallReport`` (its ids, why it ended, its findings).
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from typing import Final, Literal, get_args
from urllib.parse import urlsplit

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.faults import NO_FAULTS, PlatformFaults
from emulator.calling.model import ActionType
from emulator.calling.outgoing import CallerIdentity
from emulator.calling.progress import DEFAULT_MAX_WORKFLOWS
from emulator.calling.tokens import TokenSource
from emulator.calling.wire import DEFAULT_OPTIONS, WireOptions
from emulator.config import platform_url
from emulator.findings import Finding, Severity

DEFAULT_DEADLINE = 300.0
"""Wall-clock seconds one call may take by default (``CallSettings.deadline``, ``--deadline``)."""


PromptTiming = Literal["estimate", "speech"]
"""How long a text prompt plays: ``estimate``, 0.4 s a word (docs/engine.md, Timing); ``speech``,
as long as its synthesized audio (docs/audio.md)."""
PROMPT_TIMINGS: Final[tuple[PromptTiming, ...]] = get_args(PromptTiming)
PROMPT_TIMING_ENV: Final = "BOTEMU_PROMPT_TIMING"
"""The prompt timing of calls whose settings do not choose one (a run's ``--prompt-timing`` and
a scenario's ``platform: {prompt_timing}`` do); ``estimate`` when unset or not a timing."""


def default_prompt_timing() -> PromptTiming:
    """``$BOTEMU_PROMPT_TIMING`` when it names a timing, else ``estimate``."""
    value = os.environ.get(PROMPT_TIMING_ENV, "").strip().lower()
    return "speech" if value == "speech" else "estimate"


@dataclass(frozen=True, slots=True)
class CallSettings:
    """Everything about one call that is not the bot's doing.

    ``allow_http``: accept http callbacks (with a warning); by default, when the bot's own address
    is http (local work). ``pace``: 0 runs in virtual time; 1.0 in real time for a person watching.
    ``faults``: what the platform does wrong on purpose (``faults.py``); none by default.
    ``tokens``: where the Bearer token of every request comes from (``tokens.py``); None sends
    no Authorization header. ``deadline``: wall-clock seconds the whole call may take (every
    request, retry, prompt file and paced wait); when they pass, the platform hangs up
    (``CALL-DEADLINE``). None: no deadline. ``prompt_timing``: how long text prompts play
    (``PromptTiming``; ``$BOTEMU_PROMPT_TIMING``, else ``estimate``).
    """

    bot_url: str
    caller: CallerScript = field(default_factory=CallerScript)
    seed: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_workflows: int = DEFAULT_MAX_WORKFLOWS
    pace: float = 0.0
    allow_http: bool | None = None
    wire: WireOptions = DEFAULT_OPTIONS
    app_id: str | None = None
    platform_url: str = field(default_factory=platform_url)
    ssl_context: ssl.SSLContext | None = None
    fail_actions: frozenset[ActionType] = frozenset()
    scenario: str | None = None
    media_timeout: float = 10.0
    faults: PlatformFaults = NO_FAULTS
    tokens: TokenSource | None = None
    deadline: float | None = DEFAULT_DEADLINE
    listen_for: tuple[str, ...] = ()
    """More patterns a recorded prompt is listened for (a scenario's expected prompts), beside
    the caller's ``when`` rules: the phrases of recognition's grammar (``listen_phrases``)."""
    live: bool = False
    """The caller is a person acting in real time (``live.LiveCaller``, given to the driver):
    each Workflow plays at ``pace`` (1.0 when 0) and the caller's acts come as they are made."""
    prompt_timing: PromptTiming = field(default_factory=default_prompt_timing)
    caller_id: CallerIdentity | None = None
    """Who calls (identity, display name, multiparty); None: a caller made up from the seed."""

    @property
    def http_allowed(self) -> bool:
        if self.allow_http is not None:
            return self.allow_http
        return urlsplit(self.bot_url).scheme.lower() == "http"


@dataclass(frozen=True, slots=True)
class CallReport:
    """How a call went: its ids, why it ended, and every finding."""

    call_id: str
    chain_id: str
    end_reason: EndReason
    findings: tuple[Finding, ...]
    workflows: int
    vtime: float

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)
