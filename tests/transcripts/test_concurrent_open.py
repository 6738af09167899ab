"""Several processes opening one new transcript file at the same moment (the workers of a load
run, two commands): each one opens it, none fails with "database is locked"."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPENER = """
import sys, time
from pathlib import Path
from emulator.transcripts.store import TranscriptStore
start = float(sys.argv[2])
while time.time() < start:
    pass
with TranscriptStore(Path(sys.argv[1]), write_behind=True) as store:
    call = store.start(bot="http://bot/api/calls")
    store.append(call, "note", {"summary": "opened"})
    store.finish(call, reason="bot hung up")
print("ok")
"""


@pytest.mark.slow
def test_processes_that_open_a_new_file_at_once_all_open_it(tmp_path: Path) -> None:
    for attempt in range(4):  # the race is a matter of timing: try it a few times
        db = tmp_path / f"t{attempt}.db"
        start = time.time() + 1.0  # every process past its imports, then all at once
        openers = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, str(db), str(start)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for opener in openers:
            out, err = opener.communicate(timeout=60)
            assert opener.returncode == 0 and out.strip() == "ok", err[-2000:]
