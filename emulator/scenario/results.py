"""What a run of scenarios is, for the reports: a ``RunReport`` of ``Entry`` values (a result
and its seed), each result ``passed``, ``failed``, ``error`` or ``skipped`` (``status_of``), and
the counts of a run or of one file.

A result is anything shaped like the runner's ``ScenarioResult`` (``ScenarioResultLike``); a
``SkippedResult`` is one that was not run. ``reports.py`` has the whole account.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from emulator.findings import Finding, Rule
from emulator.scenario.model import Scenario

Status = Literal["passed", "failed", "error", "skipped"]
RuleLookup = Callable[[str], Rule | None]


class ScenarioResultLike(Protocol):
    """What a report needs of a scenario's result (``emulator.runner.runner.ScenarioResult``).

    ``failures``: the findings that made it fail (expectations not met, error findings the
    scenario did not expect); ``findings``: every finding of the run. ``ladder``: the transcript
    as ``botemu call`` prints it, one line per event. ``duration``: wall seconds; ``vtime``:
    virtual seconds of a call (None for a conversation). ``error``: why it could not run at all (None when it ran)."""

    @property
    def scenario(self) -> Scenario: ...
    @property
    def passed(self) -> bool: ...
    @property
    def failures(self) -> Sequence[Finding]: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def transcript_ids(self) -> Sequence[str]: ...
    @property
    def duration(self) -> float: ...
    @property
    def vtime(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def ladder(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class SkippedResult:
    """A scenario that was not run: the run has no target of the kind it needs (a calling bot
    for a call or ``probe: auth-calling``, a messaging bot for a conversation or ``probe:
    auth``). ``skipped`` is the reason, one line. ``passed`` is True so that a skipped scenario
    fails nothing (``status_of`` says ``skipped``)."""

    scenario: Scenario
    skipped: str
    passed: bool = True
    failures: tuple[Finding, ...] = ()
    findings: tuple[Finding, ...] = ()
    transcript_ids: tuple[str, ...] = ()
    duration: float = 0.0
    vtime: float | None = None
    error: str | None = None
    ladder: tuple[str, ...] = ()


def skip_reason(result: ScenarioResultLike) -> str | None:
    """Why ``result`` was skipped, or None when it ran (or tried to)."""
    reason = getattr(result, "skipped", None)
    return reason if isinstance(reason, str) else None


def status_of(result: ScenarioResultLike) -> Status:
    """``skipped``, ``error`` (it could not run), ``passed`` or ``failed``."""
    if skip_reason(result) is not None:
        return "skipped"
    if result.error is not None:
        return "error"
    return "passed" if result.passed and not result.failures else "failed"


@dataclass(frozen=True, slots=True)
class Entry:
    """One scenario of a run: its result and the seed it ran with."""

    result: ScenarioResultLike
    seed: int

    @property
    def status(self) -> Status:
        return status_of(self.result)


@dataclass(frozen=True, slots=True)
class Counts:
    """How many scenarios, by status, and their wall seconds."""

    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    time: float = 0.0
    skipped: int = 0

    def add(self, entry: Entry) -> Counts:
        """These counts with ``entry``."""
        status = entry.status
        return Counts(
            self.tests + 1,
            self.passed + (status == "passed"),
            self.failed + (status == "failed"),
            self.errors + (status == "error"),
            self.time + entry.result.duration,
            self.skipped + (status == "skipped"),
        )

    @property
    def ran(self) -> int:
        return self.tests - self.skipped


@dataclass(frozen=True, slots=True)
class RunReport:
    """A whole run. ``seed`` is the run's seed (``--seed``); ``started`` wall-clock epoch
    seconds; ``duration`` wall seconds of the whole run (less than the sum with ``-j``)."""

    entries: tuple[Entry, ...]
    seed: int
    started: float
    duration: float
    deselected: int = 0
    jobs: int = 1
    db: str | None = None

    @property
    def counts(self) -> Counts:
        total = Counts()
        for entry in self.entries:
            total = total.add(entry)
        return total

    def files(self) -> list[tuple[str, list[Entry]]]:
        """The entries by file, files in order of first appearance."""
        groups: dict[str, list[Entry]] = {}
        for entry in self.entries:
            groups.setdefault(file_of(entry.result.scenario), []).append(entry)
        return list(groups.items())

    @property
    def exit_code(self) -> int:
        """0 when every scenario that ran passed; 1 when one failed or could not run, or when
        the report is empty; 2 when every scenario was skipped (no target for any: the command
        refuses that run before there is a report). Skipped scenarios count neither way."""
        counts = self.counts
        if counts.tests and not counts.ran:
            return 2
        return 0 if counts.ran and counts.passed == counts.ran else 1

    def skipped(self) -> list[tuple[str, int]]:
        """Each reason scenarios were skipped for, with how many, in order of first appearance."""
        reasons: dict[str, int] = {}
        for entry in self.entries:
            reason = skip_reason(entry.result)
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
        return list(reasons.items())


def file_of(scenario: Scenario) -> str:
    """The file a scenario came from, as reports name it."""
    return str(scenario.path) if scenario.path is not None else "<scenario>"


def location_of(scenario: Scenario) -> str:
    """``file:line`` of a scenario (its file, without a line)."""
    file = file_of(scenario)
    return f"{file}:{scenario.line}" if scenario.line is not None else file
