"""``botemu explore``: the tree of the reference bot's call flow, exit codes, usage errors."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.cli import main
from emulator.cli.common import ProgressLine
from emulator.explore.report import SCHEMA_PATH
from emulator.transcripts.store import TranscriptStore
from tests.cli.test_transcript_to_scenario import replay_bot
from tests.support import ivr_bot as running_ivr_bot


@pytest.fixture(scope="module")
def ivr_bot() -> Iterator[str]:
    with running_ivr_bot() as url:
        yield url


@pytest.mark.slow
def test_explore_prints_the_call_flow_and_exits_0(
    ivr_bot: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explore", "--bot", ivr_bot, "--no-token", "--db", str(tmp_path / "t.db"),
                 "--mask", r"contoso", "--json", str(tmp_path / "flow.json")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("call -> [") and "menu (sales, support, voicemail)" in lines[0]
    assert "  press 3 -> [" in out and "record:" in out
    assert lines[-2] == "5 states, 31 paths, 37 calls"
    saved = lines[-1].split()[1]
    assert (
        lines[-1]
        == f"exploration {saved} saved in {tmp_path / 't.db'} (botemu logview: Explorations)"
    )
    with TranscriptStore(tmp_path / "t.db") as store:  # the log view draws it from there
        stored = store.exploration(saved)
    assert stored is not None and len(stored["states"]) == 5
    assert "no Authorization header" in err
    document = json.loads((tmp_path / "flow.json").read_text())
    Draft7Validator(json.loads(SCHEMA_PATH.read_text())).validate(document)
    assert len(document["states"]) == 5 and document["findings"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bot", "ftp://x"], "botemu explore: --bot 'ftp://x' is not an http(s) URL"),
        (["--bot", "http://127.0.0.1:9/api", "--mask", "("],
         "botemu explore: mask pattern '(': missing ), unterminated subpattern at position 0"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", "--no-token", *args]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == message


def test_a_bound_below_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["explore", "--bot", "http://127.0.0.1:9/api", "--max-depth", "0"])
    assert stop.value.code == 2
    assert "argument --max-depth: '0' is not more than 0" in capsys.readouterr().err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_is_written_over_itself_on_a_terminal_and_not_in_a_log() -> None:
    terminal = Terminal()
    line = ProgressLine(terminal)
    line.show("exploring: 3 calls")
    line.show("exploring: 4 calls")  # within a tenth of a second: not drawn
    line.close()
    assert terminal.getvalue() == "\r\x1b[Kexploring: 3 calls\r\x1b[K"
    log = io.StringIO()
    quiet = ProgressLine(log)
    quiet.show("exploring: 3 calls")
    quiet.close()
    assert log.getvalue() == ""


@pytest.mark.slow
def test_write_scenarios_writes_one_per_leaf_that_passes_and_fails_when_the_bot_changes(
    ivr_bot: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    code = main(["explore", "--bot", ivr_bot, "--no-token", "--db", str(tmp_path / "t.db"),
                 "--write-scenarios", str(suite)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    files = sorted(p.name for p in suite.glob("*.yaml"))
    assert len(files) == 12 and files[0] == "001-hangup.yaml"
    assert "002-press-1-press-12345678pound.yaml" in files
    assert f"12 scenarios written to {suite}" in out
    text = (suite / "002-press-1-press-12345678pound.yaml").read_text()
    assert 'name: "explore: press 1; press 12345678#"' in text
    assert "#   press 1 -> digits (up to 8): 'Please enter your account number," in text  # as said
    assert "#   digits 12345678# -> end: bot hung up after 'You entered', '12345678'," in text
    assert 'matches: "^For sales, press \\\\+?\\\\d' in text  # the expectations stay patterns
    run = ["test", str(suite), "--bot", ivr_bot, "--no-token", "--db", str(tmp_path / "r.db")]
    assert main(run) == 0, capsys.readouterr().out
    capsys.readouterr()
    with replay_bot("swapped") as changed:  # sales and support change keys
        assert main([*run[:2], "--bot", changed, *run[4:]]) == 1
    report = capsys.readouterr().out
    assert "FAIL  explore: press 1; press 12345678#" in report and "[EXP-" in report
