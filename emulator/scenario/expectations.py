"""Judging a run against its scenario's expectations, from the transcript alone.

``evaluate(scenario, transcript, report)`` reads the events of one call or conversation (as the
store returns them) and returns one ``Finding`` per failed expectation, ``[]`` when every one
holds. Nothing else is consulted, so a synthetic event list is judged exactly like a real run.
Where each fact comes from (docs/scenarios-running.md has the full account):

=============  ==================================================================================
call level     ``report`` (the call's summary: end reason, workflows, virtual duration) and the
               ``state`` events (answered: it reached ``established``; final callState: the last)
prompts        ``platform`` events whose payload ``kind`` is ``prompt played``
choices        the bodies of the Workflows that ran: the ``http.response`` answered last before
               each ``Workflow [...]`` note
outcomes       the ConversationResults posted (``http.request`` bodies, or the multipart
               ``parts.conversationResult``), once per message id
recording      the ``platform`` event with ``recording: true``
replies        the bot's accepted ``POST /v3/conversations/{id}/activities[/{id}]`` requests
               (all of them, in order, for a replayed recording: ``expect_in_order.py``)
latency        ``http.response`` ``latency_ms`` (the bot's answers), p95 by nearest rank
findings       ``finding`` events (of a probe: one per case of the probe)
=============  ==================================================================================

Without a ``findings`` expectation a scenario expects ``findings: none``: no error finding. A
``none`` expectation in a scenario that injects duplicate deliveries also fails on
CALL-DUPLICATE-DIFFERS (a warning elsewhere): that fault exists to test idempotency.

The facts are read by ``facts.py``; the rules and the ``Judge`` are ``judging.py``; each kind of
expectation is judged in ``expect_call.py``, ``expect_prompts.py``, ``expect_replies.py`` or
``expect_run.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from emulator.findings import Finding
from emulator.scenario.expect_call import judge_call, judge_recording
from emulator.scenario.expect_in_order import judge_in_order
from emulator.scenario.expect_prompts import judge_choices, judge_outcome, judge_prompts
from emulator.scenario.expect_replies import judge_reply
from emulator.scenario.expect_run import DUPLICATE_RULE, judge_findings, judge_latency
from emulator.scenario.facts import CallOutline, Facts
from emulator.scenario.judging import ERROR, EVIDENCE_LINES, Judge, where
from emulator.scenario.model import (
    CallExpect,
    ChoicesExpect,
    Expectation,
    FindingsExpect,
    LatencyExpect,
    OutcomeExpect,
    PromptExpect,
    RecordingExpect,
    RepliesInOrder,
    ReplyExpect,
    Scenario,
)
from emulator.scenario.rules import (
    EXP_CALL,
    EXP_CHOICES,
    EXP_FINDINGS,
    EXP_LATENCY,
    EXP_OUTCOME,
    EXP_PROMPTS,
    EXP_RECORDING,
    EXP_REPLY,
    EXP_RUN,
    RULES,
    SOURCE,
)
from emulator.transcripts.store import StoredEvent

__all__ = [
    "DUPLICATE_RULE",
    "ERROR",
    "EVIDENCE_LINES",
    "EXP_CALL",
    "EXP_CHOICES",
    "EXP_FINDINGS",
    "EXP_LATENCY",
    "EXP_OUTCOME",
    "EXP_PROMPTS",
    "EXP_RECORDING",
    "EXP_REPLY",
    "EXP_RUN",
    "RULES",
    "SOURCE",
    "CallOutline",
    "evaluate",
    "where",
]


def evaluate(
    scenario: Scenario, transcript: Sequence[StoredEvent], report: CallOutline | None = None
) -> list[Finding]:
    """Every failed expectation of ``scenario`` in this run, as findings (``[]``: it passed)."""
    facts = Facts.read(transcript, report)
    expectations: tuple[Expectation, ...] = scenario.expect
    if not any(isinstance(e, FindingsExpect) for e in expectations):
        expectations = (*expectations, FindingsExpect(line=scenario.line))
    judge = Judge(scenario, facts)
    out: list[Finding] = []
    for expectation in expectations:
        out.extend(_judge(judge, expectation))
    return out


def _judge(judge: Judge, e: Expectation) -> list[Finding]:
    """The failures of one expectation; the call's own ones fail on any other kind of scenario."""
    if isinstance(e, CallExpect):
        return judge_call(judge, e)
    if isinstance(e, PromptExpect):
        return judge.only_calls(e.line, EXP_PROMPTS, "prompts") or judge_prompts(judge, e)
    if isinstance(e, ChoicesExpect):
        return judge.only_calls(e.line, EXP_CHOICES, "choices") or judge_choices(judge, e)
    if isinstance(e, OutcomeExpect):
        return judge.only_calls(e.line, EXP_OUTCOME, "outcomes") or judge_outcome(judge, e)
    if isinstance(e, RecordingExpect):
        return judge.only_calls(e.line, EXP_RECORDING, "a recording") or judge_recording(judge, e)
    if isinstance(e, ReplyExpect):
        return judge_reply(judge, e)
    if isinstance(e, RepliesInOrder):
        return judge_in_order(judge, e)
    if isinstance(e, LatencyExpect):
        return judge_latency(judge, e)
    return judge_findings(judge, e)
