"""CallerUser under Locust, in a process of its own (Locust monkey-patches with gevent): a short
headless run of ``botemu load`` against a small calling bot, every exchange reported under its
kind, and a planted fault (a 500 on 1% of callbacks) in Locust's failures under the right name
and rule."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.load.calling_bot import calling_bot
from tests.support import run_python

ROOT = Path(__file__).resolve().parents[2]


def load(tmp_path: Path, host: str, *extra: str, seconds: int = 1) -> Path:
    """``botemu load`` with 4 callers back to back; the prefix of its CSV files (final figures:
    ``botemu load`` rewrites them when the run ends). One second is hundreds of calls on an idle
    machine (about 700), each with its callbacks: ample for the counts checked here."""
    prefix = tmp_path / "run"
    command = [sys.executable, "-m", "emulator", "load", "--bot", host, "--users", "4",
               "--duration", f"{seconds}s", "--pace", "0", "--caller", "press 1", "--no-token",
               "--no-progress", "--csv", str(prefix), "--db", str(tmp_path / "t.db"), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return prefix


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_a_short_run_reports_every_exchange_by_kind(tmp_path: Path) -> None:
    with calling_bot() as bot:
        prefix = load(tmp_path, bot.url)
        answered = bot.calls
    stats = {r["Name"]: r for r in rows(Path(f"{prefix}_stats.csv")) if r["Type"] == "CALL"}
    assert set(stats) == {"Conversation", "recognizeOutcome"}
    counted = int(stats["Conversation"]["Request Count"])
    assert counted > 20 and stats["Conversation"]["Failure Count"] == "0"
    assert counted <= answered <= counted + 4  # the calls cut off by the end of the run
    assert int(stats["recognizeOutcome"]["Request Count"]) >= counted - 4


@pytest.mark.slow
def test_a_planted_5xx_on_callbacks_shows_in_the_failures_under_its_name_and_rule(
    tmp_path: Path,
) -> None:
    with calling_bot(fail_every=25) as bot:  # 4% of callbacks: some, even in a slow second
        prefix = load(tmp_path, bot.url, "--keep", "failures")
        planted = bot.failed
    assert planted > 0
    failures = rows(Path(f"{prefix}_failures.csv"))
    assert [(r["Name"], r["Error"]) for r in failures] == [
        ("recognizeOutcome", "CallFailure('CALL-HTTP-5XX: HTTP 500')")
    ]
    # each planted 500 once, never more; the end of the run may cut off, for each of the four
    # callers, an answer the bot sent that the caller never read
    assert planted - 4 <= int(failures[0]["Occurrences"]) <= planted


@pytest.mark.slow
def test_botemu_load_charts_latency_over_a_real_run(tmp_path: Path) -> None:
    chart = tmp_path / "chart.svg"
    with calling_bot() as bot:
        done = subprocess.run(
            [sys.executable, "-m", "emulator", "load", "--bot", bot.url, "--users", "2",
             "--duration", "4s", "--pace", "0", "--caller", "press 1", "--no-token",
             "--no-progress", "--keep", "none", "--chart", str(chart)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    svg = chart.read_text()
    assert svg.startswith("<svg") and "p95 (ms)" in svg and "requests/s" in svg
    lines = re.findall(r'<polyline [^>]*points="([^"]*)"', svg)
    assert len(lines) == 4 and all(len(points.split()) >= 3 for points in lines)


def test_a_process_that_places_calls_imports_what_its_first_call_needs_before_the_run() -> None:
    """Faker (the caller's name) and PyAV are imported where first used; under load, the first
    call then spent a 1 s run's whole clock importing them, and none finished on a busy machine
    (no ``recognizeOutcome`` at all). Locust's ``init``, before the clock starts, imports them
    in a process that places calls, not in a master of workers."""
    code = (
        "import sys\n"
        "from locust import events\n"
        "from locust.runners import MasterRunner\n"
        "import emulator.load.user\n"
        "assert 'faker' not in sys.modules and 'av' not in sys.modules\n"
        "events.init.fire(environment=None, runner=MasterRunner.__new__(MasterRunner), web_ui=None)\n"
        "print('faker' in sys.modules, 'av' in sys.modules)\n"
        "events.init.fire(environment=None, runner=None, web_ui=None)\n"
        "print('faker' in sys.modules, 'av' in sys.modules)\n"
    )
    assert run_python(code).split() == ["False", "False", "True", "True"]
