"""The command line, through main(argv) in process and once as a real subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.cli import main
from emulator.rulebook import rules_markdown

ROOT = Path(__file__).resolve().parents[2]
WELCOME = ROOT / "examples" / "workflows" / "welcome.json"
BROKEN = ROOT / "examples" / "workflows" / "broken.json"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lint_valid_workflow_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["lint", str(WELCOME), "--first"], capsys)
    assert code == 0
    assert "valid Workflow, no findings" in out
    assert err == ""


def test_lint_invalid_workflow_exits_1_with_file_line_col(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["lint", str(BROKEN), "--first"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert (
        f"{BROKEN}:3:65: error: $.actions[0].prompts[0]: a prompt has value or fileUri, never both [WF-PROMPT-BOTH]"
        in lines
    )
    assert any("[WF-FIRST-ACTION]" in line for line in lines)
    assert any("did you mean 'bargeInAllowed'?" in line for line in lines)
    assert lines[-1] == f"{BROKEN}: invalid Workflow: 6 errors, 2 warnings"


def test_lint_findings_are_in_file_order(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["lint", str(BROKEN), "--first"], capsys)
    positions = [tuple(int(n) for n in line.split(":")[1:3]) for line in out.splitlines()[:-1]]
    assert positions == sorted(positions)


def test_lint_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["lint", str(BROKEN), "--json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert report["valid"] is False
    assert report["errors"] == sum(f["severity"] == "error" for f in report["findings"])
    casing = next(f for f in report["findings"] if f["rule"] == "WF-CASING")
    assert casing == {
        "rule": "WF-CASING",
        "severity": "warning",
        "where": "$.actions[0].action",
        "message": "'PlayPrompt' is written 'playPrompt'",
        "evidence": "PlayPrompt",
        "line": 3,
        "column": 28,
    }


def test_lint_warnings_only_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"Actions": [{"operationId": "1", "action": "hangup"}]}')
    code, out, _ = run(["lint", str(path)], capsys)
    assert code == 0
    assert "[WF-CASING]" in out
    assert out.splitlines()[-1].endswith("valid Workflow: 0 errors, 1 warning")


def test_lint_http_callback_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.json"
    path.write_text(
        '{"actions": [{"operationId": "1", "action": "playPrompt", "prompts": [{"value": "hi"}]}],'
        ' "links": {"callback": "http://localhost:9000/cb"}}'
    )
    assert run(["lint", str(path)], capsys)[0] == 1
    code, out, _ = run(["lint", str(path), "--allow-http"], capsys)
    assert code == 0
    assert "warning: $.links.callback" in out


def test_lint_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(WELCOME.read_bytes())))
    code, out, _ = run(["lint", "-", "--first"], capsys)
    assert code == 0
    assert out.startswith("<stdin>: valid Workflow")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b'{"actions": [\n', "x.json:2:1: not JSON: Expecting value", id="truncated"),
        pytest.param(b"\xff\xfe{}", "x.json: not UTF-8 text (byte 0)", id="not-utf8"),
        pytest.param(b"", "x.json:1:1: not JSON: Expecting value", id="empty"),
        pytest.param(b"[NaN]", "x.json: not JSON: NaN is not a JSON value", id="nan"),
    ],
)
def test_lint_unreadable_input_exits_2_with_one_line(
    content: bytes,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("x.json").write_bytes(content)
    code, out, err = run(["lint", "x.json"], capsys)
    assert code == 2
    assert out == ""
    assert err == f"botemu lint: {expected}\n"


def test_lint_missing_file_and_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["lint", str(tmp_path / "nope.json")], capsys)
    assert (code, err) == (2, f"botemu lint: {tmp_path / 'nope.json'}: no such file\n")
    code, _, err = run(["lint", str(tmp_path)], capsys)
    assert (code, err) == (2, f"botemu lint: {tmp_path}: is a directory, not a file\n")


def test_a_json_value_that_is_not_a_workflow_is_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.json"
    path.write_text("[1, 2]")
    code, out, _ = run(["lint", str(path)], capsys)
    assert code == 1
    assert "[WF-NOT-OBJECT]" in out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([], capsys)
    assert code == 2
    assert "usage: botemu" in err


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param(["lint"], id="missing-file"),
        pytest.param(["lint", "x", "--bogus"], id="bad-flag"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err
    assert "Traceback" not in err


def test_rules_markdown_matches_docs(capsys: pytest.CaptureFixture[str]) -> None:
    docs = (ROOT / "docs" / "rules.md").read_text()
    assert rules_markdown() == docs, "regenerate: botemu rules --markdown > docs/rules.md"
    code, out, _ = run(["rules", "--markdown"], capsys)
    assert (code, out) == (0, docs)


def test_rules_json_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.rulebook import REGISTRIES

    code, out, _ = run(["rules", "--json"], capsys)
    assert code == 0
    listed = [r["id"] for r in json.loads(out)]
    assert listed == [rule for registry in REGISTRIES for rule in registry.ids()]
    assert {"WF-ORDER", "CALL-DELIVERY-FAILED", "TLS-WRONG-CN"} <= set(listed)
    assert len(listed) == len(set(listed)), "rule ids are unique across areas"


def test_rules_human(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules"], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith("WF-NOT-OBJECT")


@pytest.mark.slow
def test_cli_as_a_subprocess() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "emulator", "lint", str(BROKEN), "--first", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["errors"] == 6
    version = subprocess.run(
        [sys.executable, "-m", "emulator", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert version.returncode == 0
    assert version.stdout.startswith("botemu ")
