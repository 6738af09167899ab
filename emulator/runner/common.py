"""What the ways of running a scenario share: the ``Target``, the ``ScenarioResult``, ``CannotRun``
and the helpers that turn a transcript into a result (its ladder, its findings).

Calls (``calls.py``), conversations (``conversations.py``) and probes (``probes.py``) build their
results from these; ``runner.py`` re-exports the public names.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.guard import control_headers as _control_headers
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.expectations import EXP_RUN, where
from emulator.scenario.model import Scenario
from emulator.transcripts.store import EventKind, StoredEvent

DEFAULT_WAIT = 2.0
"""Seconds a conversation turn waits for the bot's replies, unless the turn says."""
QUIET = 0.3
"""A turn stops waiting this long after the bot's last reply."""
POLL = 0.05
DEFAULT_APP_ID = "botemu-test-bot"
"""The app id registered with an in-process emulator when the target gives none."""
TRANSCRIPT_SETTLE = 1.0
"""Seconds to wait for another process's botemu to commit a conversation's events."""


@dataclass(frozen=True)
class Target:
    """What the scenarios run against."""

    bot_url: str | None = None
    """The calling bot's address (http or https)."""
    messaging_bot: str | None = None
    """The messaging bot's endpoint."""
    app_id: str | None = None
    app_password: str | None = None
    """The messaging bot's registration (also the calling bot's app id in the Conversation)."""
    certs: Path | None = None
    ca: Path | None = None
    """For an https calling bot: the certificates directory (default ``certs``) and the CA the
    bot's certificate chains to (default its ``ca.pem``). ``certs`` also keeps an in-process
    emulator's signing keys."""
    emulator: str | None = None
    """A running botemu (for conversations and probes); None: the runner starts one in-process.
    Calls take their Bearer token from it too (``emulator.calling.tokens.resolve``)."""
    control_certs: Path | None = None
    """The running botemu's certificates directory, which holds its control secret
    (emulator/guard.py); None: ``certs``, else ``certs/``."""
    no_token: bool = False
    """Calls carry no Authorization header (a bot that relies on the client certificate)."""
    legacy_validation_outcome: bool = False
    """Write the validation outcome type as ``worfklowValidationOutcome`` in every call."""


@dataclass(frozen=True)
class ScenarioResult:
    """How one scenario went."""

    scenario: Scenario
    passed: bool
    failures: tuple[Finding, ...]
    """Failed expectations (EXP-*), plus an EXP-RUN error when it could not run."""
    findings: tuple[Finding, ...]
    """Every protocol finding of the run."""
    transcript_ids: tuple[str, ...]
    duration: float
    """Wall-clock seconds."""
    vtime: float | None
    """Virtual seconds of a call; None for a conversation."""
    error: str | None = None
    """Why it could not run (no target for its kind, bot unreachable, ...)."""
    ladder: tuple[str, ...] = ()
    """The run's summary lines, one per transcript event (for reports' system-out)."""


class CannotRun(BotemuError):
    """A scenario cannot run: the message says why (it becomes ``ScenarioResult.error``)."""


def derive_seed(seed: int, scenario_id: str) -> int:
    """A scenario's seed: a 32-bit number from the run's seed and the scenario's id, so the same
    ``--seed`` reproduces every scenario and scenarios do not share one caller."""
    digest = hashlib.sha256(f"{seed}\x00{scenario_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# --- results -----------------------------------------------------------------------------------


def not_run(
    scenario: Scenario, error: str, started: float, ids: tuple[str, ...] = ()
) -> ScenarioResult:
    """A scenario that could not run: failed, with ``error`` and one ``EXP-RUN`` finding."""
    failure = Finding(EXP_RUN.id, Severity.ERROR, where(scenario, scenario.line), error)
    return ScenarioResult(scenario, False, (failure,), (), ids,
                          time.perf_counter() - started, None, error)  # fmt: skip


def with_run(
    result: ScenarioResult,
    *,
    findings: tuple[Finding, ...],
    vtime: float | None,
    ladder: tuple[str, ...],
) -> ScenarioResult:
    """``result`` with the findings, virtual time and ladder of the run it comes from."""
    return ScenarioResult(result.scenario, result.passed, result.failures, findings,
                          result.transcript_ids, result.duration, vtime, result.error, ladder)  # fmt: skip


def finding_of(p: dict[str, Any]) -> Finding:
    """A finding from its JSON form (``Finding.to_json``: a transcript event, a route's report)."""
    try:
        severity = Severity(str(p.get("severity")).lower())
    except ValueError:
        severity = Severity.INFO
    evidence = p.get("evidence")
    return Finding(str(p.get("rule")), severity, str(p.get("where", "")),
                   str(p.get("message", "")), evidence if isinstance(evidence, str) else None)  # fmt: skip


def ladder(events: list[StoredEvent]) -> tuple[str, ...]:
    """One line per event, as ``botemu call`` prints them."""
    lines: list[str] = []
    for event in events:
        summary = event.payload.get("summary")
        text = summary if isinstance(summary, str) else f"{event.kind} {_compact(event.payload)}"
        if event.kind == EventKind.FINDING:
            lines.append(f"  ! {text}")
        elif event.kind in (EventKind.CALL_START, EventKind.CALL_END):
            lines.append(text)
        elif event.vtime is not None:
            lines.append(f"{event.vtime:7.2f}s  {text}")
        else:
            lines.append(f"          {text}")
    return tuple(lines)


def _compact(payload: dict[str, JSON]) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 160 else text[:159] + "\u2026"


# --- talking to a running botemu ---------------------------------------------------------------


def control_headers(certs: Path | None) -> dict[str, str]:
    """The control secret of the botemu whose certificates directory is ``certs``."""
    try:
        return _control_headers(certs)
    except BotemuError as e:
        raise CannotRun(str(e)) from None


async def get_json(http: aiohttp.ClientSession, url: str) -> Any:
    """``GET url`` (5 s at most): its JSON; an HTTP error raises ``aiohttp.ClientResponseError``."""
    async with http.get(url, timeout=aiohttp.ClientTimeout(total=5)) as response:
        response.raise_for_status()
        return await response.json()


async def post_json(
    http: aiohttp.ClientSession, url: str, body: JSONObject, headers: dict[str, str]
) -> Any:
    """``POST url`` (5 s at most): its JSON; anything but 200 is ``CannotRun``."""
    async with http.post(url, json=body, headers=headers,
                         timeout=aiohttp.ClientTimeout(total=5)) as response:  # fmt: skip
        if response.status != 200:
            raise CannotRun(f"POST {url}: HTTP {response.status}: {(await response.text())[:200]}")
        return await response.json()
