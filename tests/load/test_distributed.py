"""Locust's own distribution with CallerUser: a master and two worker processes on loopback
(``--master``, ``--worker``, ``--expect-workers 2``, headless, a short run). Both workers place
calls (their transcripts name two writer processes), and the master's aggregated stats count
every call the bot answered (its final figures, ``--json-file``; the CSV files are Locust's
periodic ones)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.load.calling_bot import calling_bot
from tests.support import free_port, run_python

ROOT = Path(__file__).resolve().parents[2]
LOCUSTFILE = ROOT / "emulator" / "load" / "locustfile.py"
USERS = 4


@pytest.mark.slow
def test_a_master_and_two_workers_place_calls_and_the_master_counts_them_all(
    tmp_path: Path,
) -> None:
    port, db, prefix = free_port(), tmp_path / "t.db", tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    locust = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE)]
    ours = ["--botemu-caller", "press 1", "--botemu-keep", "all", "--botemu-db", str(db)]
    with calling_bot() as bot:
        master = subprocess.Popen(
            [*locust, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port",
             str(port), "--expect-workers", "2", "--headless", "-u", str(USERS), "-r",
             str(USERS), "-t", "4s", "--host", bot.url, "--csv", str(prefix), "--json-file",
             str(tmp_path / "final"), *ours],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        logs = [(tmp_path / f"worker-{n}.log").open("w") for n in range(2)]
        workers = [
            subprocess.Popen(
                [
                    *locust,
                    "--worker",
                    "--master-host",
                    "127.0.0.1",
                    "--master-port",
                    str(port),
                    *ours,
                ],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            for log in logs
        ]
        try:
            output, _ = master.communicate(timeout=120)
            if master.returncode == 0:  # else no worker ever connects: say why, at once
                for worker in workers:
                    worker.wait(timeout=60)
        finally:
            for process in (*workers, master):
                process.kill()
                process.wait()
            for log in logs:
                log.close()
        answered = bot.calls
    assert master.returncode == 0, output[-3000:]
    assert Path(f"{prefix}_stats.csv").is_file()
    final = json.loads((tmp_path / "final.json").read_text())  # the master's final aggregate
    counted = next(e["num_requests"] for e in final if e["name"] == "Conversation")
    assert counted > 20
    assert counted <= answered <= counted + USERS  # the calls cut off by the end of the run
    with sqlite3.connect(db) as conn:
        writers = conn.execute("SELECT COUNT(DISTINCT writer_pid) FROM calls").fetchone()[0]
    said = "".join(p.read_text()[-2000:] for p in tmp_path.glob("worker-*.log"))
    assert writers == 2, said  # each worker placed calls and kept them


def test_a_worker_reads_a_spawn_message_without_building_an_argument_parser_per_option() -> None:
    """Locust's worker called ``default_args_dict()`` (a whole argument parser) once for each
    option of a spawn message: seconds on a busy machine without a heartbeat, and the master
    dropped both workers (the run stopped with no request counted). Importing botemu's
    locustfile builds the defaults once; counted here as Locust's worker reads the options of a
    spawn message."""
    code = (
        "import locust.argument_parser as ap\n"
        "import emulator.load.locustfile\n"
        "built = 0\n"
        "setup = ap.setup_parser_arguments\n"
        "def counted(*a, **k):\n"
        "    global built\n"
        "    built += 1\n"
        "    return setup(*a, **k)\n"
        "ap.setup_parser_arguments = counted\n"
        "sent = {**ap.default_args_dict(), 'botemu_pace': 1.0, 'botemu_db': 't.db'}\n"
        "custom = {k: v for k, v in sent.items() if k not in ap.default_args_dict()}\n"
        "from emulator.load.metrics import default_options_once\n"
        "cached = ap.default_args_dict\n"
        "default_options_once()  # again: wrapped once\n"
        "print(built, sorted(custom), len(sent) > 40, ap.default_args_dict is cached)\n"
    )
    assert run_python(code).strip() == "1 ['botemu_db', 'botemu_pace'] True True"
