"""Running a call scenario: ``place_call`` with the scenario's caller script, its faults as
``PlatformFaults``, the run's seed, workflow limit and time-out, then the call's transcript judged.
"""

from __future__ import annotations

import time
from dataclasses import replace
from urllib.parse import urlsplit

from emulator.calling import exchange_rules as X
from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.faults import PlatformFaults
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.calling.settings import PromptTiming
from emulator.calling.tokens import Resolved, resolve
from emulator.calling.wire import WireOptions
from emulator.runner.common import (
    CannotRun,
    ScenarioResult,
    derive_seed,
    ladder,
    not_run,
    with_run,
)
from emulator.runner.context import RunContext
from emulator.scenario.expectations import evaluate
from emulator.scenario.model import Faults, PromptExpect, Scenario, TextMatch


def platform_faults(faults: Faults) -> PlatformFaults:
    """The scenario's fault settings as the calling session understands them."""
    return faults.platform_faults()


async def run_call(runner: RunContext, scenario: Scenario, started: float) -> ScenarioResult:
    """Place the scenario's call against ``Target.bot_url`` and judge it."""
    url = runner.target.bot_url
    if not url:
        raise CannotRun("this scenario is a call, and no calling bot was given (--bot URL)")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise CannotRun(f"the calling bot {url!r} is not an http(s) URL")
    settings = await _settings(runner, scenario, url, https=parts.scheme.lower() == "https")
    report = await place_call(settings, runner.store, http=runner.session,
                              media_cache=runner.media)  # fmt: skip
    ids = (report.call_id,)
    events = runner.store.events(report.call_id)
    lines = ladder(events)
    unreachable = _unreachable(report)
    if unreachable is not None:
        runner.verdict(report.call_id, report.end_reason.value, False)
        result = not_run(scenario, f"the bot at {url} {unreachable}", started, ids)
        return with_run(result, findings=report.findings, vtime=report.vtime, ladder=lines)
    failures = evaluate(scenario, events, runner.store.call(report.call_id) or report)
    runner.verdict(report.call_id, report.end_reason.value, not failures)
    return ScenarioResult(scenario, not failures, tuple(failures), report.findings, ids,
                          time.perf_counter() - started, report.vtime, None, lines)  # fmt: skip


async def _settings(
    runner: RunContext, scenario: Scenario, url: str, *, https: bool
) -> CallSettings:
    """The call the scenario places against the bot at ``url``."""
    retry = RetryPolicy() if runner.timeout is None else RetryPolicy(timeout=runner.timeout)
    resolved = await call_tokens(runner, url, scenario.platform.app_id or runner.target.app_id)
    legacy = runner.target.legacy_validation_outcome or scenario.platform.legacy_validation_outcome
    settings = CallSettings(
        bot_url=url,
        caller=scenario.caller or CallerScript(),
        seed=None if runner.seed is None else derive_seed(runner.seed, scenario.id),
        retry=retry,
        max_workflows=runner.max_workflows,
        wire=WireOptions(legacy_validation_outcome_type=legacy),
        app_id=resolved.app_id,
        ssl_context=runner.ssl_context() if https else None,
        scenario=scenario.id,
        faults=platform_faults(scenario.faults),
        tokens=resolved.tokens,
        listen_for=expected_prompts(scenario),
    )
    timing = prompt_timing(scenario, runner.prompt_timing)
    return settings if timing is None else replace(settings, prompt_timing=timing)


def prompt_timing(scenario: Scenario, run: PromptTiming | None) -> PromptTiming | None:
    """How long the scenario's call plays its text prompts: the scenario's own
    ``platform: {prompt_timing}``, else the run's (``--prompt-timing``), else None (the call's
    default, ``$BOTEMU_PROMPT_TIMING``)."""
    own = scenario.platform.prompt_timing
    if own in ("estimate", "speech"):
        return "speech" if own == "speech" else "estimate"
    return run


def expected_prompts(scenario: Scenario) -> tuple[str, ...]:
    """The texts and patterns of the prompts a scenario expects: what a recorded prompt is
    listened for (the grammar of recognition), beside the caller's ``when`` rules."""
    found: list[str] = []
    for expectation in scenario.expect:
        if isinstance(expectation, PromptExpect):
            for item in expectation.items:
                if isinstance(item, TextMatch):
                    found += [t for t in (item.equals, item.contains, item.matches) if t]
    return tuple(found)


async def call_tokens(runner: RunContext, url: str, app_id: str | None) -> Resolved:
    """The Bearer token source of calls for ``app_id`` (found once per runner)."""
    async with runner.lock:
        found = runner.tokens.get(app_id)
        if found is None:
            target = runner.target
            found = runner.tokens[app_id] = await resolve(
                bot_url=url, app_id=app_id, emulator=target.emulator,
                certs=target.certs, no_token=target.no_token,
                control_certs=target.control_certs,
            )  # fmt: skip
        return found


def _unreachable(report: CallReport) -> str | None:
    """Why the bot could not be reached at all, or None: the Conversation was never delivered
    and every attempt failed to connect."""
    if report.end_reason is not EndReason.DELIVERY_FAILED or report.workflows:
        return None
    rules = {f.rule for f in report.findings}
    if X.CALL_CONNECTION.id not in rules or rules - {
        X.CALL_CONNECTION.id,
        X.CALL_DELIVERY_FAILED.id,
    }:
        return None
    last = [f for f in report.findings if f.rule == X.CALL_CONNECTION.id][-1]
    return f"could not be reached: {last.message}"
