"""Running a conversation scenario: each turn goes through a botemu's connector (the in-process
one, ``chat.Local``, or a running one, ``remote.Remote``), then the conversation's transcript is
judged.
"""

from __future__ import annotations

import time

from emulator.runner.chat import Chat
from emulator.runner.common import (
    CannotRun,
    ScenarioResult,
    finding_of,
    ladder,
    not_run,
    with_run,
)
from emulator.runner.context import RunContext
from emulator.runner.remote import Remote
from emulator.scenario.expectations import evaluate
from emulator.scenario.model import Scenario
from emulator.transcripts.store import EventKind


async def run_conversation(
    runner: RunContext, scenario: Scenario, started: float
) -> ScenarioResult:
    """Hold the scenario's conversation with ``Target.messaging_bot`` and judge it."""
    bot = runner.target.messaging_bot
    if not bot:
        raise CannotRun(
            "this scenario is a conversation, and no messaging bot was given (--messaging-bot URL)"
        )
    if scenario.faults.any:
        raise CannotRun("faults apply to calls; this conversation sets some")
    if runner.target.emulator is not None:
        chat: Chat = await Remote.open(runner.target.emulator, bot, runner.target.app_id, runner)
    else:
        chat = await runner.local_emulator()
    conversed = await chat.converse(scenario)
    conversation_id, events = conversed.transcript_id, conversed.events
    ids = (conversation_id,)
    lines = ladder(events)
    findings = tuple(finding_of(e.payload) for e in events if e.kind == EventKind.FINDING)
    if conversed.unreachable is not None:
        runner.verdict(conversation_id, "the bot could not be reached", False)
        why = f"the bot at {bot} {conversed.unreachable}"
        result = not_run(scenario, why, started, ids)
        return with_run(result, findings=findings, vtime=None, ladder=lines)
    failures = evaluate(scenario, events, None)
    runner.verdict(conversation_id, "scenario finished", not failures)
    return ScenarioResult(scenario, not failures, tuple(failures), findings, ids,
                          time.perf_counter() - started, None, None, lines)  # fmt: skip
