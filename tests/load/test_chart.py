"""The chart of a load run: one point per history entry, text escaped, bounded, never a crash on
an entry it cannot read."""

from __future__ import annotations

import re

from emulator.load import chart
from emulator.load.chart import latency_chart


def entry(second: int, p50: float, p95: float, rps: float) -> dict[str, object]:
    at = f"2026-11-25T01:00:{second:02d}Z"
    return {
        "time": at,
        "response_time_percentile_0.5": [at, p50],
        "response_time_percentile_0.95": [at, p95],
        "current_rps": [at, rps],
        "current_fail_per_sec": [at, 0],
    }


def test_each_series_is_a_line_with_a_point_per_second() -> None:
    svg = latency_chart([entry(s, 2, 5 + s, 100) for s in range(10)], "a run")
    lines = re.findall(r'points="([^"]*)"', svg)
    assert len(lines) == 4 and all(len(line.split()) == 10 for line in lines)
    assert "seconds into the run" in svg


def test_the_title_is_text_not_markup_and_no_data_says_so() -> None:
    svg = latency_chart([], "<script>alert(1)</script>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "no data yet" in svg


def test_unreadable_entries_are_left_out_and_a_long_run_is_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(chart, "MAX_POINTS", 5)
    history = [{"time": "not a time"}, {"nothing": 1}] + [entry(s, 1, 2, 3) for s in range(20)]
    lines = re.findall(r'points="([^"]*)"', latency_chart(history, "t"))
    assert all(len(line.split()) == 5 for line in lines)
