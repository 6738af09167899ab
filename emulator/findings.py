"""Findings: the one currency of every check botemu makes.

A check (workflow validation, an auth probe, a scenario expectation, ...) produces ``Finding``
values. Each names a rule from the registry below by its stable id. Reports, exports and the log
view all render findings; ``docs/rules.md`` is generated from the registry
(``botemu rules --markdown``) and a test keeps it in step.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


class Severity(enum.StrEnum):
    """How bad a finding is.

    ``error``: the platform would refuse (for a Workflow: answer with the validation outcome).
    ``warning``: accepted, but deviates from the spec or from what real platforms and SDKs do.
    ``info``: worth knowing, not a deviation.
    """

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: stable id, default severity, where it comes from, and what it says."""

    id: str
    severity: Severity
    source: str
    summary: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One result of a check.

    ``where`` is a JSONPath-like location in the checked document (``$.actions[0].operationId``).
    ``evidence`` is the offending value, shown as text, when that helps. ``count`` is how many
    times it was found: a call folds the repeats of a warning at one place into its first
    finding (docs/calling-http.md, "Repeated warnings"); 1 otherwise, and then not written.
    """

    rule: str
    severity: Severity
    where: str
    message: str
    evidence: str | None = None
    count: int = 1

    def to_json(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "where": self.where,
            "message": self.message,
        }
        if self.evidence is not None:
            out["evidence"] = self.evidence
        if self.count != 1:
            out["count"] = self.count
        return out

    def __str__(self) -> str:
        times = f" ({self.count} times)" if self.count != 1 else ""
        return f"{self.severity.value}: {self.where}: {self.message} [{self.rule}]{times}"

    @classmethod
    def from_json(cls, item: object) -> Finding:
        """A finding as ``to_json`` wrote it; ValueError when it is not one. ``count`` is
        optional (1 when absent, as everything written before it existed)."""
        if not isinstance(item, dict):
            raise ValueError("a finding is a JSON object")
        try:
            evidence = item.get("evidence")
            count = item.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"a finding's count is a positive integer, not {count!r}")
            return cls(
                str(item["rule"]),
                Severity(item["severity"]),
                str(item["where"]),
                str(item["message"]),
                None if evidence is None else str(evidence),
                count,
            )
        except KeyError as e:
            raise ValueError(f"a finding has no {e.args[0]!r}") from None


class RuleRegistry:
    """The rules of one area (for example the calling Workflow rules), in declaration order."""

    def __init__(self, area: str) -> None:
        self.area = area
        self._rules: dict[str, Rule] = {}

    def add(self, rule_id: str, severity: Severity, source: str, summary: str) -> Rule:
        if rule_id in self._rules:
            raise ValueError(f"rule {rule_id} registered twice")
        rule = Rule(rule_id, severity, source, summary)
        self._rules[rule_id] = rule
        return rule

    def __getitem__(self, rule_id: str) -> Rule:
        return self._rules[rule_id]

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules.values())

    def __len__(self) -> int:
        return len(self._rules)

    def ids(self) -> list[str]:
        return list(self._rules)


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity is Severity.ERROR for f in findings)
