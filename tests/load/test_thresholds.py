"""``--fail-on``: the grammar, each error message, and the verdicts against a summary."""

from __future__ import annotations

import pytest

from emulator.load.summary import Generator, Row, Summary
from emulator.load.thresholds import Threshold, ThresholdError, evaluate, parse


def row(name: str, **figures: float) -> Row:
    base = {"count": 100, "failures": 0, "median": 50.0, "p95": 200.0, "p99": 400.0,
            "max": 900.0, "rps": 20.0} | figures  # fmt: skip
    return Row(name=name, method="CALL", **base)  # type: ignore[arg-type]


def summary(*rows: Row, total: Row | None = None) -> Summary:
    total = total or row("Aggregated")
    return Summary(rows, total, {}, {}, Generator(), 10.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("p99<800ms", [Threshold("p99<800ms", "p99", 800.0)]),
        ("p50<0.5s", [Threshold("p50<0.5s", "p50", 500.0)]),
        ("max < 2 s", [Threshold("max < 2 s", "max", 2000.0)]),
        ("errors<0.1%", [Threshold("errors<0.1%", "errors", 0.001)]),
        ("errors<0.02", [Threshold("errors<0.02", "errors", 0.02)]),
        ("rps>5", [Threshold("rps>5", "rps", 5.0)]),
        (
            "Conversation:p99<800ms",
            [Threshold("Conversation:p99<800ms", "p99", 800.0, "Conversation")],
        ),
        (
            "p99<800ms, errors<1%,p95<1s",
            [
                Threshold("p99<800ms", "p99", 800.0),
                Threshold("errors<1%", "errors", 0.01),
                Threshold("p95<1s", "p95", 1000.0),
            ],
        ),
    ],
)
def test_good_expressions_parse(text: str, expected: list[Threshold]) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--fail-on is empty: expected e.g. 'p99<800ms,errors<0.1%'"),
        ("p99<800ms,,errors<1%", "--fail-on 'p99<800ms,,errors<1%': an empty threshold between commas"),
        ("p99", "--fail-on 'p99': expected METRIC<VALUE, e.g. p99<800ms"),
        ("p90<800ms", "--fail-on 'p90<800ms': unknown metric 'p90' (expected one of p50, p95, p99, max, errors, rps)"),
        ("p99>800ms", "--fail-on 'p99>800ms': p99 takes '<' (an upper bound: p99<VALUE)"),
        ("p99<=800ms", "--fail-on 'p99<=800ms': p99 takes '<' (an upper bound: p99<VALUE)"),
        ("rps<5", "--fail-on 'rps<5': rps takes '>' (a floor: rps>VALUE)"),
        ("p99<800", "--fail-on 'p99<800': a time needs a unit, ms or s (e.g. p99<800ms)"),
        ("p99<800%", "--fail-on 'p99<800%': a time needs a unit, ms or s (e.g. p99<800ms)"),
        ("p99<fast", "--fail-on 'p99<fast': 'fast' is not a number"),
        ("errors<5", "--fail-on 'errors<5': errors takes a rate, a percentage (0.1%) or a fraction (0.001)"),
        ("errors<5ms", "--fail-on 'errors<5ms': errors takes a rate, a percentage (0.1%) or a fraction (0.001)"),
        ("rps>5%", "--fail-on 'rps>5%': rps takes requests per second, a number without unit"),
        (":p99<1s", "--fail-on ':p99<1s': an empty request name before ':'"),
    ],
)  # fmt: skip
def test_bad_expressions_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ThresholdError) as caught:
        parse(text)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_times_are_kept_strictly_below_and_rps_strictly_above() -> None:
    figures = summary(row("Conversation"), total=row("Aggregated", p99=400.0, rps=20.0))
    verdicts = evaluate(parse("p99<401ms,p99<400ms,rps>19.9,rps>20"), figures)
    assert [v.passed for v in verdicts] == [True, False, True, False]
    assert verdicts[0].value == 400.0
    assert verdicts[1].describe() == "p99<400ms: FAILED (p99 400.0ms)"
    assert verdicts[2].describe() == "rps>19.9: ok (rps 20.00/s)"


def test_p50_is_the_median_and_errors_the_failure_rate() -> None:
    figures = summary(total=row("Aggregated", count=1000, failures=2, median=30.0))
    verdicts = evaluate(parse("p50<31ms,errors<0.1%,errors<0.3%"), figures)
    assert [v.passed for v in verdicts] == [True, False, True]
    assert verdicts[1].value == pytest.approx(0.002)
    assert verdicts[1].describe() == "errors<0.1%: FAILED (errors 0.2%)"


def test_a_named_threshold_judges_that_request_and_a_missing_name_fails() -> None:
    figures = summary(row("Conversation", p99=900.0), row("answerOutcome", p99=100.0))
    verdicts = evaluate(
        parse("Conversation:p99<800ms,answerOutcome:p99<800ms,Nope:p99<1s"), figures
    )
    assert [v.passed for v in verdicts] == [False, True, False]
    assert verdicts[2].value is None
    assert verdicts[2].describe() == "Nope:p99<1s: FAILED (no request named 'Nope')"
    assert verdicts[0].to_json() == {
        "threshold": "Conversation:p99<800ms", "name": "Conversation", "metric": "p99",
        "limit": 800.0, "value": 900.0, "passed": False,
    }  # fmt: skip
