"""Judging what any run (a call, a conversation, a probe) must show: the bot's latency
(EXP-LATENCY) and its findings (EXP-FINDINGS: no error finding unless expected)."""

from __future__ import annotations

import math

from emulator.findings import Finding
from emulator.scenario.facts import is_error, rule_of, summary_of
from emulator.scenario.judging import Judge, count, unique
from emulator.scenario.model import FindingsExpect, LatencyExpect
from emulator.scenario.rules import EXP_FINDINGS, EXP_LATENCY

DUPLICATE_RULE = "CALL-DUPLICATE-DIFFERS"


def judge_latency(judge: Judge, e: LatencyExpect) -> list[Finding]:
    """EXP-LATENCY: the p95 of the bot's answers (nearest rank) is within the bound."""
    times = sorted(judge.facts.latencies)
    if not times:
        return [
            judge.fail(
                EXP_LATENCY.id,
                e.line,
                f"expected the bot's answers within "
                f"{e.p95_ms:g} ms (p95), got no answer to measure",
            )
        ]
    p95 = times[max(0, math.ceil(0.95 * len(times)) - 1)]
    if p95 <= e.p95_ms:
        return []
    message = (
        f"expected the bot's answers within {e.p95_ms:g} ms (p95), got {p95:.0f} ms "
        f"(p95 of {count(len(times), 'answer')}; slowest {times[-1]:.0f} ms)"
    )
    slow = [f"{t:.0f} ms" for t in reversed(times) if t > e.p95_ms]
    return [judge.fail(EXP_LATENCY.id, e.line, message, slow)]


def judge_findings(judge: Judge, e: FindingsExpect) -> list[Finding]:
    """EXP-FINDINGS: no error finding (``none``), or the expected rules and no other error."""
    found = judge.facts.findings
    errors = [x for x in found if is_error(x)]
    if not e.rules:
        if not e.none:
            return []
        duplicates = bool(judge.scenario.faults.duplicate_callbacks)
        bad = [x for x in found if is_error(x) or (duplicates and rule_of(x) == DUPLICATE_RULE)]
        if not bad:
            return []
        rules = unique(rule_of(x) for x in bad)
        what = "no error finding" + (f" (nor {DUPLICATE_RULE})" if duplicates else "")
        return [
            judge.fail(
                EXP_FINDINGS.id,
                e.line,
                f"expected {what}, got {count(len(bad), 'finding')}: {', '.join(rules)}",
                [summary_of(x) for x in bad],
            )
        ]
    ids = {rule_of(x) for x in found}
    missing = [r for r in e.rules if r not in ids]
    others = [x for x in errors if x.payload.get("rule") not in e.rules]
    out: list[Finding] = []
    if missing:
        got = ", ".join(sorted(ids)) or "no finding at all"
        out.append(
            judge.fail(
                EXP_FINDINGS.id,
                e.line,
                f"expected the findings "
                f"{', '.join(e.rules)}; missing {', '.join(missing)}, got {got}",
                [summary_of(x) for x in found],
            )
        )
    if others:
        rules = unique(rule_of(x) for x in others)
        out.append(
            judge.fail(
                EXP_FINDINGS.id,
                e.line,
                f"expected no error finding but {', '.join(e.rules)}, got also {', '.join(rules)}",
                [summary_of(x) for x in others],
            )
        )
    return out
