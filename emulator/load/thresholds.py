"""``--fail-on``: thresholds a load run must keep, parsed and judged against a ``Summary``.

Grammar: comma-separated ``[NAME:]METRIC<VALUE``. ``p50``, ``p95``, ``p99`` and ``max`` take a
time (``800ms``, ``1.5s``); ``errors`` a rate (``0.1%`` or a fraction, ``0.001``); ``rps`` is a
floor and takes ``>`` (``rps>50``). ``NAME:`` judges one request name instead of the total
(``Conversation:p99<800ms``). A threshold is kept when the figure is strictly below (above, for
``rps``) the value. Pure: no Locust here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from emulator.load.summary import Row, Summary

TIMES = ("p50", "p95", "p99", "max")
METRICS = (*TIMES, "errors", "rps")
_ITEM = re.compile(
    r"^(?:(?P<name>.*):)?\s*(?P<metric>[A-Za-z]\w*)\s*(?P<op><=|>=|=|<|>)\s*(?P<value>.*)$"
)
_NUMBER = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|%)?$")


class ThresholdError(ValueError):
    """A ``--fail-on`` expression that does not parse: one line naming the part at fault."""


@dataclass(frozen=True)
class Threshold:
    text: str
    metric: str
    limit: float
    """Milliseconds for times, a fraction for ``errors``, per second for ``rps``."""
    name: str | None = None

    def figure(self, row: Row) -> float:
        if self.metric == "errors":
            return row.error_rate
        return float(getattr(row, "median" if self.metric == "p50" else self.metric))

    def kept_by(self, value: float) -> bool:
        return value > self.limit if self.metric == "rps" else value < self.limit


@dataclass(frozen=True)
class Verdict:
    threshold: Threshold
    value: float | None
    """The figure judged; ``None`` when no request has the threshold's name."""

    @property
    def passed(self) -> bool:
        return self.value is not None and self.threshold.kept_by(self.value)

    def describe(self) -> str:
        t = self.threshold
        if self.value is None:
            return f"{t.text}: FAILED (no request named {t.name!r})"
        return f"{t.text}: {'ok' if self.passed else 'FAILED'} ({t.metric} {_show(t.metric, self.value)})"

    def to_json(self) -> dict[str, Any]:
        t = self.threshold
        return {"threshold": t.text, "name": t.name, "metric": t.metric, "limit": t.limit,
                "value": self.value, "passed": self.passed}  # fmt: skip


def _show(metric: str, value: float) -> str:
    if metric == "errors":
        return f"{value * 100:.3g}%"
    if metric == "rps":
        return f"{value:.2f}/s"
    return f"{value:.1f}ms"


def parse(text: str) -> list[Threshold]:
    """The thresholds of a ``--fail-on`` expression; ``ThresholdError`` names what is wrong."""
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ThresholdError("--fail-on is empty: expected e.g. 'p99<800ms,errors<0.1%'")
    if not all(items):
        raise ThresholdError(f"--fail-on {text!r}: an empty threshold between commas")
    return [_parse_item(item) for item in items]


def _parse_item(item: str) -> Threshold:
    match = _ITEM.match(item)
    if not match:
        raise ThresholdError(f"--fail-on {item!r}: expected METRIC<VALUE, e.g. p99<800ms")
    name, metric, op, value = (match.group(k) for k in ("name", "metric", "op", "value"))
    name = name.strip() if name is not None else None
    if name == "":
        raise ThresholdError(f"--fail-on {item!r}: an empty request name before ':'")
    if metric not in METRICS:
        raise ThresholdError(
            f"--fail-on {item!r}: unknown metric {metric!r} (expected one of {', '.join(METRICS)})"
        )
    wanted = ">" if metric == "rps" else "<"
    if op != wanted:
        kind = "a floor: rps>VALUE" if metric == "rps" else f"an upper bound: {metric}<VALUE"
        raise ThresholdError(f"--fail-on {item!r}: {metric} takes {wanted!r} ({kind})")
    return Threshold(item, metric, _limit(item, metric, value.strip()), name)


def _limit(item: str, metric: str, value: str) -> float:
    match = _NUMBER.match(value)
    if not match:
        raise ThresholdError(f"--fail-on {item!r}: {value!r} is not a number")
    number, unit = float(match.group(1)), match.group(2)
    if metric in TIMES:
        if unit not in ("ms", "s"):
            raise ThresholdError(
                f"--fail-on {item!r}: a time needs a unit, ms or s (e.g. {metric}<800ms)"
            )
        return number * (1000.0 if unit == "s" else 1.0)
    if metric == "errors":
        if unit == "%":
            return number / 100.0
        if unit is not None or number > 1:
            raise ThresholdError(
                f"--fail-on {item!r}: errors takes a rate, a percentage (0.1%) or a fraction (0.001)"
            )
        return number
    if unit is not None:
        raise ThresholdError(
            f"--fail-on {item!r}: rps takes requests per second, a number without unit"
        )
    return number


def evaluate(thresholds: list[Threshold], summary: Summary) -> list[Verdict]:
    """Each threshold judged against the run's figures."""
    verdicts = []
    for t in thresholds:
        row = summary.row(t.name)
        verdicts.append(Verdict(t, t.figure(row) if row is not None else None))
    return verdicts
