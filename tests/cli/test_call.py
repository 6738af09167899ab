"""``botemu call`` against the reference IVR bot running in its own process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.cli import main
from tests.support import free_port, ivr_bot

ROOT = Path(__file__).resolve().parent.parent.parent
BOT = ROOT / "examples" / "ivr_bot.py"
SCENARIOS = ROOT / "scenarios" / "examples"


@pytest.fixture(scope="module")
def bot_url() -> Iterator[str]:
    with ivr_bot() as url:
        yield url


def test_call_prints_a_ladder(
    bot_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    code = main(["call", "--bot", bot_url, "--caller", "listen; press 1; press 1234#", "--seed", "1",
                 "--db", str(db)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "→ Conversation" in out
    assert "Workflow [answer, playPrompt, recognize]" in out
    assert "caller pressed 1\n" in out
    assert "caller pressed 1234#\n" in out  # one row per run of keys
    assert "→ recognizeOutcome success dtmfOptionMatched choice=sales" in out
    assert "→ recognizeOutcome success completedStopToneDetected digits=1234" in out
    assert out.splitlines()[-1].startswith("bot hung up · 3 workflows")


def test_call_with_a_scenario_file_and_json(bot_url: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    code = main(["call", "--bot", bot_url, "--scenario", str(SCENARIOS / "voicemail.yaml"),
                 "--db", str(tmp_path / "t.db"), "--json"])  # fmt: skip
    transcript = json.loads(capsys.readouterr().out)
    assert code == 0
    assert transcript["call"]["scenario"] == "voicemail, stopped with pound"
    assert transcript["call"]["end_reason"] == "bot hung up"
    recording = [e for e in transcript["events"] if e["payload"].get("recording")]
    assert len(recording) == 1 and recording[0]["blob_base64"]


def test_an_unreachable_bot_fails_the_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["call", "--bot", f"http://127.0.0.1:{free_port()}/x", "--attempts", "1",
                 "--db", str(tmp_path / "t.db")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "[CALL-DELIVERY-FAILED]" in out
    assert out.splitlines()[-1].startswith("platform hung up: callback delivery failed")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--bot", "ftp://x"], "is not an http(s) URL", id="bad-url"),
        pytest.param(["--bot", "http://127.0.0.1:1/x", "--caller", "prees 1"], "unknown step 'prees'",
                     id="bad-inline-step"),
        pytest.param(["--bot", "http://127.0.0.1:1/x", "--scenario", "nope.yaml"], "nope.yaml",
                     id="missing-scenario"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_exit_2(argv: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    code = main(["call", *argv, "--db", str(tmp_path / "t.db")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_commands_as_subprocesses(bot_url: str, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")

    def botemu(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "emulator", *args], capture_output=True,
                              text=True, timeout=120, check=False, cwd=tmp_path)  # fmt: skip

    called = botemu("call", "--bot", bot_url, "--caller", "press 2; hangup", "--db", db)
    assert called.returncode == 0, called.stderr
    listed = botemu("transcript", "list", "--db", db, "--json")
    assert listed.returncode == 0
    [call] = json.loads(listed.stdout)["calls"]
    shown = botemu("transcript", "show", call["id"][:8], "--db", db)
    assert shown.returncode == 0 and "caller pressed 2" in shown.stdout
    checked = botemu("scenario", "check", str(SCENARIOS))
    assert checked.returncode == 0
    certs = botemu("certs", "--dir", str(tmp_path / "certs"))
    assert certs.returncode == 0 and (tmp_path / "certs" / "platform.pem").exists()
