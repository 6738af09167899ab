"""Running a probe scenario through a botemu's control route (``POST /_botemu/probe/auth``).

``probe: auth`` runs the auth probe against the messaging bot, with that botemu's keys, and
records each finding in the probe conversation's transcript; ``probe: auth-calling`` runs the
calling auth probe (``"calling": true``) against the calling bot (an https one with the client
certificate of ``Target.certs``), recorded in a call transcript. That transcript is judged.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from emulator.conformance.auth import CASES, PROBE_USER
from emulator.conformance.auth_calling import PROBE_CALLER, REQUESTS
from emulator.findings import Finding
from emulator.jsonutil import JSONObject
from emulator.runner.common import (
    DEFAULT_APP_ID,
    POLL,
    TRANSCRIPT_SETTLE,
    CannotRun,
    ScenarioResult,
    control_headers,
    finding_of,
    ladder,
    not_run,
)
from emulator.runner.context import RunContext
from emulator.runner.remote import Remote
from emulator.scenario.expectations import evaluate
from emulator.scenario.model import Scenario
from emulator.transcripts.store import EventKind, StoredEvent

PROBE_TIMEOUT = 10.0
"""Seconds the bot has to answer each case of a probe, unless the runner has a time-out."""
PROBE_CASES = len(CASES)


async def run_probe(runner: RunContext, scenario: Scenario, started: float) -> ScenarioResult:
    """Run the scenario's probe through the in-process botemu, or ``Target.emulator``, and
    judge the transcript it recorded."""
    calling = scenario.probe == "auth-calling"
    bot = _probed_bot(runner, scenario, calling)
    if runner.target.emulator is None:
        await runner.local_emulator()
    base = runner.emulator_url
    assert base is not None
    body, app_id = await _request(runner, base, bot, calling)
    report = await _post_probe(runner, f"{base}/_botemu/probe/auth", body)
    if isinstance(report, str):  # the bot could not be reached
        return not_run(scenario, f"the bot at {bot} {report}", started)
    transcript_id = str(report.get("call_id" if calling else "conversation_id"))
    raw = report.get("findings")
    items = raw if isinstance(raw, list) else []
    findings = tuple(finding_of(f) for f in items if isinstance(f, dict))
    transcript, events = await _probe_transcript(
        runner, scenario, transcript_id, findings, str(report.get("app_id") or app_id), calling
    )
    failures = evaluate(scenario, events, None)
    runner.verdict(transcript, "probe finished", not failures)
    return ScenarioResult(scenario, not failures, tuple(failures), findings, (transcript,),
                          time.perf_counter() - started, None, None, ladder(events))  # fmt: skip


def _probed_bot(runner: RunContext, scenario: Scenario, calling: bool) -> str:
    """The bot the probe runs against; ``CannotRun`` when the target has none, or the scenario
    sets faults."""
    bot = runner.target.bot_url if calling else runner.target.messaging_bot
    if not bot:
        which = "calling bot" if calling else "messaging bot"
        flag = "--bot" if calling else "--messaging-bot"
        raise CannotRun(f"this scenario is a probe ({scenario.probe}), and no {which} was "
                        f"given ({flag} URL)")  # fmt: skip
    if scenario.faults.any:
        raise CannotRun("faults apply to calls; this probe sets some")
    return bot


async def _request(
    runner: RunContext, base: str, bot: str, calling: bool
) -> tuple[dict[str, Any], str | None]:
    """The control route's request body, and the app id the probe uses (None: the running
    botemu's registered calling bot)."""
    target = runner.target
    body: dict[str, Any] = {"bot": bot, "timeout": runner.timeout or PROBE_TIMEOUT}
    app_id: str | None
    if calling:  # without an app id, the running botemu's registered calling bot
        app_id = target.app_id or (None if target.emulator else DEFAULT_APP_ID)
        body.update({"calling": True, "app_id": app_id} if app_id else {"calling": True})
        if urlsplit(bot).scheme.lower() == "https":
            body["certs"] = str((target.certs or Path("certs")).resolve())
            if target.ca is not None:
                body["ca"] = str(target.ca.resolve())
    elif target.emulator is not None:  # it answers, and knows the bot: its app id
        app_id = (await Remote.open(base, bot, target.app_id, runner)).app_id
        body["app_id"] = app_id
    else:
        app_id = body["app_id"] = target.app_id or DEFAULT_APP_ID
    return body, app_id


async def _post_probe(runner: RunContext, url: str, body: dict[str, Any]) -> JSONObject | str:
    """The control route's report; a string: why the bot could not be reached (502)."""
    seconds = float(body["timeout"])
    requests = REQUESTS if body.get("calling") else PROBE_CASES
    timeout = aiohttp.ClientTimeout(total=seconds * requests + 30.0)
    headers = control_headers(runner.control_certs)
    async with runner.session.post(url, json=body, headers=headers,
                                   timeout=timeout) as response:  # fmt: skip
        text = await response.text()
        if response.status == 502:
            return f"could not be reached: {text.strip()[:300]}"
        if response.status != 200:
            raise CannotRun(f"the botemu at {url.split('/_botemu/')[0]} refused the probe: "
                            f"HTTP {response.status}: {text.strip()[:300]}")  # fmt: skip
    try:
        report = json.loads(text)
    except ValueError:
        report = None
    if not isinstance(report, dict):
        raise CannotRun(f"the botemu answered the probe with something other than its report: "
                        f"{text.strip()[:120]!r}")  # fmt: skip
    return report


async def _probe_transcript(
    runner: RunContext,
    scenario: Scenario,
    conversation_id: str,
    findings: tuple[Finding, ...],
    app_id: str,
    calling: bool = False,
) -> tuple[str, list[StoredEvent]]:
    """The probe conversation's (or ``calling``: call's) transcript, when this store has it
    (an in-process botemu, or a running one sharing the file); otherwise one written here
    from the route's report. A calling probe's botemu ends its call after the findings: that
    end is waited for too, so that the verdict written next is not overwritten by it (another
    process's writer may still hold it, queued)."""
    store = runner.store
    deadline = time.monotonic() + TRANSCRIPT_SETTLE
    while (summary := store.call(conversation_id)) is not None:
        events = store.events(conversation_id)
        got = sum(1 for e in events if e.kind == EventKind.FINDING)
        ended = summary.ended is not None or not calling
        if (got >= len(findings) and ended) or time.monotonic() >= deadline:
            return conversation_id, events
        await asyncio.sleep(POLL)
    kind, caller = ("call", PROBE_CALLER) if calling else ("conversation", PROBE_USER["id"])
    transcript = store.start(kind=kind, bot=app_id, caller=str(caller), scenario=scenario.id)
    store.append(transcript, EventKind.NOTE, {
        "summary": f"{scenario.probe} probe in {kind} {conversation_id} through the "
        f"botemu at {runner.emulator_url} (its own transcript is in its database)",
        "conversation_id": conversation_id,
    })  # fmt: skip
    for finding in findings:
        store.append(transcript, EventKind.FINDING,
                     {"summary": str(finding), **finding.to_json()})  # fmt: skip
    return transcript, store.events(transcript)
