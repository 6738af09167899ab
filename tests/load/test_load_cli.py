"""``botemu load`` end to end: Locust runs in a subprocess (it monkey-patches with gevent on
import, which would break this process's asyncio tests), against a tiny server in a thread
here, with the test user of ``echo_locustfile.py``. Usage errors are checked in-process: they
end before Locust is imported."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator.cli import main
from tests.load.echo_server import EchoServer, echo_server

ROOT = Path(__file__).resolve().parent.parent.parent
ECHO = Path(__file__).resolve().parent / "echo_locustfile.py"
SHIPPED = ROOT / "emulator" / "load" / "locustfile.py"


def botemu_load(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "emulator", "load", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env)  # fmt: skip


def echo_run(server: EchoServer, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return botemu_load("--bot", server.url, "--user-file", str(ECHO), "--db", str(tmp_path / "t.db"),
                       "--duration", "2s", *args)  # fmt: skip


def test_locustfile_prints_the_shipped_locustfile() -> None:
    result = botemu_load("--locustfile", timeout=30)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == SHIPPED
    if not SHIPPED.exists():
        pytest.skip("emulator/load/locustfile.py is not written yet")
    assert Path(result.stdout.strip()).is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on", "p99<800"], "botemu load: --fail-on 'p99<800': a time needs a unit, ms or s (e.g. p99<800ms)"),
        (["--fail-on", "rps<5"], "botemu load: --fail-on 'rps<5': rps takes '>' (a floor: rps>VALUE)"),
        (["--duration", "soon"], "botemu load: --duration 'soon': expected a duration such as 30s, 2m or 1h"),
        (["--rate", "0"], "botemu load: --rate '0': must be more than 0"),
        (["--keep", "most"], "botemu load: --keep 'most': expected failures, sample:N, all or none"),
        (["--caller", "prss 1"], "botemu load: --caller: step 1 ('prss 1'): unknown step 'prss' (did you mean 'press'?)"),
        (["--scenario", "/nonexistent/s.yaml"], "botemu load: /nonexistent/s.yaml: cannot read it (No such file or directory)"),
        (["--scenario", str(ROOT / "scenarios" / "examples" / "echo.yaml")],
         f"botemu load: no call scenario (caller:) in {ROOT / 'scenarios' / 'examples' / 'echo.yaml'}"),
        (["--scenario", str(ROOT / "scenarios" / "examples" / "_account-number.yaml")],
         f"botemu load: {ROOT / 'scenarios' / 'examples' / '_account-number.yaml'}:4:1: expected a "
         "scenario: a mapping with the keys name and caller (or messaging, or probe), got a list"),
        (["--user-file", "/nonexistent/l.py"], "botemu load: /nonexistent/l.py: cannot read it (No such file or directory)"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["load", "--bot", "http://127.0.0.1:9", "--user-file", str(ECHO), *args]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message
    assert "locust" not in sys.modules and "gevent" not in sys.modules


def test_a_bot_is_required_and_rate_excludes_users(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load"]) == 2
    assert capsys.readouterr().err.strip() == "botemu load: --bot URL is required"
    with pytest.raises(SystemExit) as caught:
        main(["load", "--bot", "http://x", "--rate", "1", "--users", "2"])
    assert caught.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.slow
def test_a_local_run_writes_csv_html_and_json_and_shows_progress(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "examples" / "main-menu.yaml"
    began = time.monotonic()
    with echo_server() as server:
        result = echo_run(
            server, tmp_path, "--users", "2", "--csv", str(tmp_path / "out" / "run"),
            "--html", str(tmp_path / "report.html"), "--json", str(tmp_path / "summary.json"),
            "--scenario", str(scenario), "--pace", "0", "--keep", "all", "--app-id", "app-1",
            "--no-token", "--fail-on", "p99<10s,errors<50%",
        )  # fmt: skip
        received = server.bodies("/api/Conversation")
    assert result.returncode == 0, result.stdout + result.stderr
    assert time.monotonic() - began < 30
    summary = json.loads((tmp_path / "summary.json").read_text())
    names = {r["name"]: r for r in summary["requests"]}
    assert set(names) == {"Conversation", "answerOutcome"}
    assert 0 < names["Conversation"]["count"] <= len(received)
    assert summary["errors_by_rule"] == {"WF-ORDER": names["answerOutcome"]["failures"]}
    assert summary["calls"]["started"] >= names["Conversation"]["count"]
    assert "local" in summary["generator"]["cpu"] and summary["passed"] is True
    assert [t["threshold"] for t in summary["thresholds"]] == ["p99<10s", "errors<50%"]
    with (tmp_path / "out" / "run_stats.csv").open() as f:
        rows = {row["Name"]: row for row in csv.DictReader(f)}
    assert int(rows["Conversation"]["Request Count"]) == names["Conversation"]["count"]
    assert int(rows["Aggregated"]["Request Count"]) == summary["total"]["count"]
    assert (tmp_path / "out" / "run_failures.csv").read_text().count("WF-ORDER") == 1
    assert "<html" in (tmp_path / "report.html").read_text()[:2000].lower()
    assert received[0] == {
        "botemu_scenarios": [str(scenario)], "botemu_pace": 0.0, "botemu_keep": "all",
        "botemu_db": str(tmp_path / "t.db"), "botemu_app_id": "app-1", "botemu_emulator": None,
        "botemu_no_token": True, "botemu_certs": "certs", "pid": received[0]["pid"],
        "host": server.url,
    }  # fmt: skip
    assert re.search(
        r"^\s*1s\s+[\d.]+ calls/s\s+active \d+\s+.*Conversation \d+/\d+/\d+ms", result.stderr, re.M
    )
    assert result.stdout.splitlines()[0].split()[:3] == ["Name", "Count", "Fail"]
    assert "p99<10s: ok" in result.stdout and "errors<50%: ok" in result.stdout


@pytest.mark.slow
def test_a_broken_threshold_exits_1(tmp_path: Path) -> None:
    with echo_server() as server:
        result = echo_run(server, tmp_path, "--users", "1", "--no-progress", "--fail-on", "p99<0.001ms",
                          "--json", str(tmp_path / "summary.json"))  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "p99<0.001ms: FAILED" in result.stdout
    assert json.loads((tmp_path / "summary.json").read_text())["passed"] is False
    assert "calls/s" not in result.stderr


@pytest.mark.slow
def test_two_worker_processes_at_a_rate_add_up_in_the_master(tmp_path: Path) -> None:
    # On a loaded machine, runs of this test made no request at all, or had one worker make
    # none: Locust's worker built an argument parser per option of the spawn message, sent no
    # heartbeat meanwhile, and the master dropped it (metrics.default_options_once)
    with echo_server() as server:
        result = echo_run(server, tmp_path, "--processes", "2", "--rate", "10", "--duration",
                          "5s", "--json", str(tmp_path / "summary.json"))  # fmt: skip
        received = server.bodies("/api/Conversation")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    pids = {body["pid"] for body in received}
    assert len(pids) == 2, pids  # both workers placed calls, not the master
    conversations = next(r for r in summary["requests"] if r["name"] == "Conversation")
    # every call a worker completed is counted; a call cut at the end (started, never done) may
    # be missing, as the server may have its request with no answer read yet: on a loaded machine,
    # five such calls were cut at once (20 received, 15 counted)
    cut = summary["calls"]["started"] - summary["calls"]["done"]
    assert len(received) - cut <= conversations["count"] <= len(received)
    # 10 calls/s for 5 s, however the load splits: each worker's pace starts at its first call,
    # which a machine loaded by the rest of the suite delayed by 1.7 s (13 calls of 30 in 3 s);
    # each worker at the whole rate would make about 100, each at half its share about 25
    assert 28 <= summary["calls"]["started"] <= 65
    assert set(summary["generator"]["cpu"]) == {"master", "worker-1", "worker-2"}
    assert summary["generator"]["late_starts"] >= 0  # 0 unless this machine is very busy
    assert all(body["botemu_db"] == str(tmp_path / "t.db") for body in received)


@pytest.mark.slow
def test_ctrl_c_ends_the_run_early_with_every_report(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with echo_server() as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "emulator", "load", "--bot", server.url, "--user-file", str(ECHO),
             "--db", str(tmp_path / "t.db"), "--duration", "60s", "--users", "1",
             "--json", str(tmp_path / "summary.json"), "--html", str(tmp_path / "r.html")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while not server.bodies("/api/Conversation") and time.monotonic() < deadline:
                time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert json.loads((tmp_path / "summary.json").read_text())["total"]["count"] > 0
    assert (tmp_path / "r.html").stat().st_size > 0


BROKEN_IN_WORKERS = """\
import sys
from locust import User, task
if sys.argv[0] == "-c":  # a worker process (python -c ...), not the master
    raise RuntimeError("no worker here")
class Quiet(User):
    @task
    def nothing(self) -> None:
        pass
"""


@pytest.mark.slow
def test_a_locustfile_that_fails_is_one_line_in_the_master_and_in_the_workers(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no users here')\n")
    result = botemu_load("--bot", "http://127.0.0.1:9", "--user-file", str(broken))
    assert result.returncode == 2
    assert result.stderr.strip() == f"botemu load: {broken}: RuntimeError: no users here"
    workers = tmp_path / "workers.py"
    workers.write_text(BROKEN_IN_WORKERS)
    result = botemu_load(
        "--bot", "http://127.0.0.1:9", "--user-file", str(workers), "--processes", "2"
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "botemu load: a worker process exited (2) before the run"
    assert f"botemu load worker: {workers}: RuntimeError: no worker here" in lines
    assert "Traceback" not in result.stderr
