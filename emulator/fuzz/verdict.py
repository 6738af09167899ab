"""A fuzzed call's verdict: the failure it shows, if any, and its key (rule, state)."""

from __future__ import annotations

from dataclasses import dataclass

from emulator.calling.caller import Press, Step
from emulator.calling.events import EndReason
from emulator.calling.faults import PlatformFaults
from emulator.calling.settings import CallReport
from emulator.findings import Severity
from emulator.fuzz.caller import Listening

Key = tuple[str, str]
NEVER_ENDS = {EndReason.WORKFLOW_LIMIT: "CALL-WORKFLOW-LIMIT", EndReason.DEADLINE: "CALL-DEADLINE"}
"""A call that never ended before the platform's limit: the rule its failure is keyed by."""


@dataclass
class Failure:
    """A distinct failure: its rule, the state it came in, and the smallest caller seen."""

    rule: str
    state: str
    message: str
    steps: tuple[Step, ...]
    faults: PlatformFaults
    call_id: str

    @property
    def key(self) -> Key:
        return self.rule, self.state

    @property
    def size(self) -> tuple[int, int]:
        return len(self.steps), sum(len(s.digits) for s in self.steps if isinstance(s, Press))


def judge(
    report: CallReport, listening: Listening, steps: tuple[Step, ...], faults: PlatformFaults
) -> Failure | None:
    """The call's failure, if it failed: its first error finding, or a call that never ended."""
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        state = listening.failed_in or "start"
        return Failure(first.rule, state, first.message, steps, faults, report.call_id)
    rule = NEVER_ENDS.get(report.end_reason)
    if rule is None:
        return None
    state = listening.state.id if listening.state is not None else "start"
    message = f"the call never ended: {report.end_reason.value}"
    return Failure(rule, state, message, steps, faults, report.call_id)
