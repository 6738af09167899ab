"""The summary of a load run: rows from Locust-like stats entries, failures by rule, the
table, the JSON; and the options and the start pacer. All pure: no Locust in this process."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from emulator.load.options import (
    MAX_POOL,
    LoadOptions,
    OptionError,
    StartPacer,
    parse_duration,
    parse_keep,
    parse_rate,
    pool_size,
)
from emulator.load.summary import Generator, errors_by_rule, rule_of, summarize, table, to_json

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class FakeEntry:
    """What Locust's ``StatsEntry`` shows the summary."""

    name: str
    method: str | None
    num_requests: int
    num_failures: int
    median_response_time: float
    max_response_time: float
    total_rps: float
    percentiles: dict[float, float]

    def get_response_time_percentile(self, percent: float) -> float:
        return self.percentiles[percent]


def entry(name: str, count: int, failures: int, method: str | None = "CALL") -> FakeEntry:
    return FakeEntry(name, method, count, failures, 20, 95.5, count / 10, {0.95: 60, 0.99: 90})


@pytest.mark.parametrize(
    ("error", "rule"),
    [
        ("WF-ORDER: answer before the Conversation", "WF-ORDER"),
        ("CatchResponseError('WF-ORDER: answer before the Conversation')", "WF-ORDER"),
        ('Exception("CALL-TIMEOUT: the bot\'s answer came late")', "CALL-TIMEOUT"),
        ("ConnectionRefusedError(111, 'Connection refused')", "other"),
        ("HTTPError: 500", "other"),
        ("no colon at all", "other"),
    ],
)
def test_a_failure_counts_under_the_rule_its_text_starts_with(error: str, rule: str) -> None:
    assert rule_of(error) == rule


def test_failures_by_rule_add_up_the_most_frequent_first() -> None:
    errors = [("WF-ORDER: a", 2), ("Exception('WF-ORDER: b')", 3), ("boom", 1), ("AUTH-AUD: c", 4)]
    assert list(errors_by_rule(errors).items()) == [("WF-ORDER", 5), ("AUTH-AUD", 4), ("other", 1)]


def test_the_summary_table_and_json_hold_every_figure() -> None:
    generator = Generator({"local": {"avg": 95.0, "max": 99.0}}, late_starts=3)
    summary = summarize(
        [entry("answerOutcome", 10, 1), entry("Conversation", 10, 0)], entry("Aggregated", 20, 1, None),
        [("WF-ORDER: x", 1)], {"started": 10, "done": 10, "failed": 1}, generator, 10.0,
    )  # fmt: skip
    text = table(summary)
    assert text.splitlines()[0].split() == [
        "Name",
        "Count",
        "Fail",
        "Median",
        "p95",
        "p99",
        "Max",
        "Req/s",
    ]
    assert "Conversation" in text.splitlines()[2] and text.splitlines()[4].startswith("Total")
    assert text.splitlines()[4].split() == ["Total", "20", "1", "20", "60", "90", "96", "2.00"]
    assert "failures by rule: WF-ORDER 1" in text
    assert "SATURATED (local at 95% CPU, 3 late call starts)" in text
    document = to_json(summary, [{"threshold": "p99<1s", "passed": True}])
    assert [r["name"] for r in document["requests"]] == ["Conversation", "answerOutcome"]
    assert document["total"]["count"] == 20 and document["total"]["error_rate"] == 0.05
    assert document["requests"][1]["p95"] == 60.0 and document["requests"][1]["p99"] == 90.0
    assert document["generator"]["late_starts"] == 3
    assert document["errors_by_rule"] == {"WF-ORDER": 1}
    assert document["passed"] is True


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("2m", 120.0), ("1h", 3600.0), ("500ms", 0.5), ("90", 90.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_duration("soon"), "--duration 'soon': expected a duration such as 30s, 2m or 1h"),
        (lambda: parse_duration("0s"), "--duration '0s': must be more than 0"),
        (lambda: parse_rate("fast"), "--rate 'fast': expected calls per second, such as 5 or 120/m"),
        (lambda: parse_rate("0"), "--rate '0': must be more than 0"),
        (lambda: parse_keep("some"), "--keep 'some': expected failures, sample:N, all or none"),
    ],
)  # fmt: skip
def test_bad_option_values_name_the_option(call: object, message: str) -> None:
    with pytest.raises(OptionError) as caught:
        call()  # type: ignore[operator]
    assert str(caught.value) == message


def test_rates_keep_and_the_callers_of_a_run() -> None:
    assert parse_rate("5") == 5.0 and parse_rate("120/m") == 2.0 and parse_rate("0.5/s") == 0.5
    assert parse_keep("sample:10") == "sample:10"
    assert pool_size(5, 60) == 301 and pool_size(1000, 3600) == MAX_POOL
    assert LoadOptions(bot="http://x", rate=2.0, duration=10).callers == 21
    assert LoadOptions(bot="http://x", users=7).callers == 7
    assert LoadOptions(bot="http://x").callers == 1
    assert LoadOptions(bot="http://x", pace=0).botemu_options()["botemu_pace"] == 0


def test_the_pacer_spaces_starts_and_counts_late_ones() -> None:
    now = [100.0]
    late: list[int] = []
    pacer = StartPacer(4.0, on_late=lambda: late.append(1), clock=lambda: now[0])
    assert [pacer.delay() for _ in range(3)] == [0.0, 0.25, 0.5]  # three idle callers
    now[0] = 101.0  # slot 100.75 taken 0.25s late: on time, within the tolerance
    assert pacer.delay() == 0.0 and not late
    now[0] = 105.0  # every caller was busy: the slot is late and the backlog dropped
    assert pacer.delay() == 0.0 and late == [1]
    assert pacer.next_due == pytest.approx(104.25)


def test_the_pure_modules_and_the_command_module_load_no_locust_and_no_gevent() -> None:
    code = ("import sys, emulator.load, emulator.load.options, emulator.load.summary, "
            "emulator.load.thresholds, emulator.cli.load\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'locust', 'gevent', 'geventhttpclient'}))")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
