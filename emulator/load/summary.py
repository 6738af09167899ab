"""The figures of a load run, computed from Locust's stats: one row per request name (count,
failures, median, p95, p99, max, requests per second), the total, failures grouped by rule, the
calls and the generator's own saturation; as a table and as JSON. Pure: it reads Locust's stats
objects by their attributes and imports no Locust."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

_RULE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
_REPR = re.compile(r"^[\w.]+\((['\"])(.*)\1,?\)$", re.S)


class Entry(Protocol):
    """What summary reads of a ``locust.stats.StatsEntry``."""

    @property
    def name(self) -> str: ...
    @property
    def method(self) -> str | None: ...
    @property
    def num_requests(self) -> int: ...
    @property
    def num_failures(self) -> int: ...
    @property
    def max_response_time(self) -> float: ...
    @property
    def median_response_time(self) -> float: ...
    @property
    def total_rps(self) -> float: ...

    def get_response_time_percentile(self, percent: float) -> float: ...


@dataclass(frozen=True)
class Row:
    """One request name (or the total): times in milliseconds."""

    name: str
    method: str
    count: int
    failures: int
    median: float
    p95: float
    p99: float
    max: float
    rps: float

    @property
    def error_rate(self) -> float:
        return self.failures / self.count if self.count else 0.0


@dataclass(frozen=True)
class Generator:
    """The load generator's own state: CPU per process (percent, averaged over the run and the
    highest sample), and calls that started later than the rate asked."""

    cpu: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    late_starts: int = 0

    @property
    def saturated(self) -> list[str]:
        """Why the figures may be the generator's rather than the bot's (empty: they are not)."""
        why = [f"{name} at {cpu['avg']:.0f}% CPU" for name, cpu in self.cpu.items()
               if cpu.get("avg", 0.0) >= 90.0]  # fmt: skip
        if self.late_starts:
            why.append(f"{self.late_starts} late call starts")
        return why


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    total: Row
    errors_by_rule: Mapping[str, int]
    calls: Mapping[str, int]
    generator: Generator
    duration: float
    exceptions: int = 0
    """Exceptions the users raised (bugs, not failed requests: Locust's reports list them)."""

    def row(self, name: str | None) -> Row | None:
        """The row of a request name (``None``: the total)."""
        if name is None:
            return self.total
        return next((r for r in self.rows if r.name == name), None)


def row_of(entry: Entry) -> Row:
    return Row(
        name=entry.name,
        method=entry.method or "",
        count=entry.num_requests,
        failures=entry.num_failures,
        median=float(entry.median_response_time or 0),
        p95=float(entry.get_response_time_percentile(0.95) or 0),
        p99=float(entry.get_response_time_percentile(0.99) or 0),
        max=float(entry.max_response_time or 0),
        rps=float(entry.total_rps or 0),
    )


def rule_of(error: str) -> str:
    """The rule id a failure's text starts with (``WF-ORDER: ...``), else ``other``. Locust keeps
    an exception as its repr (``CatchResponseError('WF-ORDER: ...')``): its message counts."""
    match = _REPR.match(error.strip())
    text = match.group(2) if match else error.strip()
    head = text.split(":", 1)[0].strip()
    return head if ":" in text and _RULE.match(head) else "other"


def errors_by_rule(errors: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Occurrences of failures by rule, the most frequent first."""
    counts: dict[str, int] = {}
    for error, occurrences in errors:
        rule = rule_of(error)
        counts[rule] = counts.get(rule, 0) + occurrences
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summarize(
    entries: Iterable[Entry],
    total: Entry,
    errors: Iterable[tuple[str, int]],
    calls: Mapping[str, int],
    generator: Generator,
    duration: float,
    exceptions: int = 0,
) -> Summary:
    rows = tuple(sorted((row_of(e) for e in entries), key=lambda r: (r.method, r.name)))
    by_rule = errors_by_rule(errors)
    return Summary(rows, row_of(total), by_rule, dict(calls), generator, duration, exceptions)


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def table(summary: Summary) -> str:
    """The summary as text: the table, then failures by rule, the calls and the generator."""
    width = max([len(r.name) for r in summary.rows] + [len("Total")])
    head = f"{'Name':<{width}}  {'Count':>7} {'Fail':>6} {'Median':>7} {'p95':>7} {'p99':>7} {'Max':>7} {'Req/s':>7}"
    lines = [head, "-" * len(head)]
    for r in (*summary.rows, summary.total):
        name = "Total" if r is summary.total else r.name
        lines.append(f"{name:<{width}}  {r.count:>7} {r.failures:>6} {_ms(r.median):>7} "
                     f"{_ms(r.p95):>7} {_ms(r.p99):>7} {_ms(r.max):>7} {r.rps:>7.2f}")  # fmt: skip
    lines.append("(times in ms)")
    if summary.errors_by_rule:
        lines.append(
            "failures by rule: " + ", ".join(f"{k} {v}" for k, v in summary.errors_by_rule.items())
        )
    if summary.calls:
        lines.append("calls: " + ", ".join(f"{k} {v}" for k, v in summary.calls.items()))
    if summary.exceptions:
        lines.append(f"user exceptions: {summary.exceptions} (the HTML report and CSV list them)")
    lines.append("generator: " + generator_text(summary.generator))
    return "\n".join(lines)


def generator_text(generator: Generator) -> str:
    cpu = ", ".join(f"{name} {c.get('avg', 0.0):.0f}%" + (f" (max {c['max']:.0f}%)" if c.get("max") else "")
                    for name, c in generator.cpu.items())  # fmt: skip
    text = f"CPU {cpu or 'unknown'}; late call starts {generator.late_starts}"
    if generator.saturated:
        text += (
            "; SATURATED ("
            + ", ".join(generator.saturated)
            + "): the figures may be the generator's"
        )
    return text


def to_json(summary: Summary, verdicts: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The summary as a JSON object, with the ``--fail-on`` verdicts."""
    verdicts = list(verdicts)
    return {
        "duration": round(summary.duration, 3),
        "requests": [asdict(r) | {"error_rate": r.error_rate} for r in summary.rows],
        "total": asdict(summary.total) | {"error_rate": summary.total.error_rate},
        "errors_by_rule": dict(summary.errors_by_rule),
        "calls": dict(summary.calls),
        "exceptions": summary.exceptions,
        "generator": {
            "cpu": {k: dict(v) for k, v in summary.generator.cpu.items()},
            "late_starts": summary.generator.late_starts,
            "saturated": summary.generator.saturated,
        },
        "thresholds": verdicts,
        "passed": all(v.get("passed", True) for v in verdicts),
    }
