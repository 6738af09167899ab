"""A master that quits waits for its workers' final reports (emulator/load/metrics.py): Locust
waits half a second, and a worker still stopping its users on a busy machine had its last
samples left out of the master's final figures. The checks run in a process of their own
(``quit_check.py``: importing Locust monkey-patches with gevent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
def test_a_quitting_master_waits_for_every_final_report_and_no_longer() -> None:
    done = subprocess.run([sys.executable, "-m", "tests.load.quit_check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["sent"] == [["quit", "w1"], ["quit", "w2"]] and seen["quit"] == [True, True]
    assert 0 <= seen["after_last_report"] < 0.5  # it quit once the later worker's report came
    assert seen["waited_both"] < 5
    assert 0.3 <= seen["waited_never"] < 2  # a periodic report is not the final one: bounded
    assert seen["awaiting_never"] == ["w3"]
    assert seen["installed"].startswith("_quit_after_final_reports")
