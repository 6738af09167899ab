"""``botemu fuzz``: a failure printed as rule · state · steps, written as a scenario that
``botemu test`` fails with the same rule; the JSON; exit codes 0, 1 and 2."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from emulator.cli import main
from tests.support import free_port, served_bot

ROOT = Path(__file__).resolve().parents[2]


def fuzz_bot(kind: str) -> AbstractContextManager[str]:
    """A bot of ``tests/bots/fuzz_bots.py`` in its own process; its calling URL."""
    return served_bot("fuzz_bots", kind)


@pytest.mark.slow
def test_a_failure_is_printed_written_and_fails_botemu_test_with_the_same_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, report = tmp_path / "found", tmp_path / "fuzz.json"
    with fuzz_bot("operator") as url:
        code = main(["fuzz", "--bot", url, "--no-token", "--db", str(tmp_path / "t.db"),
                     "--out", str(out_dir), "--json", str(report), "--examples", "none"])  # fmt: skip
        out, err = capsys.readouterr()
        assert code == 1, err
        lines = out.splitlines()
        [scenario] = sorted(out_dir.glob("*.yaml"))
        assert lines[0].startswith("CALL-HTTP-5XX · ") and lines[0].endswith(
            " · press 9; silence 3s; press #"
        )
        assert lines[1] == f"  {scenario}" and lines[-1].startswith("1 failures, ")
        document = json.loads(report.read_text())
        [failure] = document["failures"]
        assert failure["steps"] == ["press 9", "silence 3s", "press #"] and failure["confirmed"]
        assert failure["replayed"]
        assert main(["scenario", "check", str(scenario)]) == 0
        capsys.readouterr()
        run = ["test", str(scenario), "--bot", url, "--no-token", "--db", str(tmp_path / "r.db")]
        assert main(run) == 1
        assert "CALL-HTTP-5XX" in capsys.readouterr().out


@pytest.mark.slow
def test_nothing_found_is_exit_0_and_an_unreachable_bot_or_a_bad_bound_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fuzz_bot("sound") as url:
        code = main(["fuzz", "--bot", url, "--no-token", "--budget", "30", "--db",
                     str(tmp_path / "t.db"), "--out", str(tmp_path / "none")])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0 and out.endswith("0 failures, 30 calls (budget 30)\n")
    assert not (tmp_path / "none").exists()
    port = free_port()  # nothing listens there
    assert main(["fuzz", "--bot", f"http://127.0.0.1:{port}/api/calls", "--no-token"]) == 2
    assert "cannot reach the bot" in capsys.readouterr().err
    assert main(["fuzz", "--bot", "http://127.0.0.1:1/x", "--max-steps", "51"]) == 2
    assert "--max-steps at most 50" in capsys.readouterr().err
