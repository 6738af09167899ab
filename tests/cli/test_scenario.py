"""``botemu scenario``: check and schema, through a parser of our own (register is wired into
emulator/cli.py separately)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from emulator.cli.scenario import register
from emulator.scenario import schema
from emulator.scenario.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "scenarios" / "examples"
MAIN_MENU = EXAMPLES / "main-menu.yaml"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, out)
    return code, out.getvalue(), capsys.readouterr().err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_check_a_valid_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scenario", "check", str(MAIN_MENU)], capsys)
    assert (code, out, err) == (0, f"{MAIN_MENU}: ok\n", "")


def test_check_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in EXAMPLES.glob("[!_]*.yaml"))
    code, out, _ = run(["scenario", "check", *files], capsys)
    assert code == 0
    # a file with a matrix is reported once per entry
    expected = [f"{f}{s.id.removeprefix(s.name)}: ok\n" for f in files for s in load_scenarios(f)]
    assert out == "".join(expected)
    assert f"{EXAMPLES / 'menu-rules.yaml'}[department=sales,key=1]: ok\n" in expected


def test_check_a_directory_checks_the_yaml_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "b.yml", "name: b\ncaller: [listen]\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "a.yaml", "name: a\ncaller: [hangup]\n")
    write(tmp_path, "notes.txt", "not a scenario")
    code, out, _ = run(["scenario", "check", str(tmp_path)], capsys)
    assert code == 0
    assert out == f"{tmp_path / 'b.yml'}: ok\n{tmp_path / 'sub' / 'a.yaml'}: ok\n"


def test_check_prints_each_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.yaml", "name: x\ncaller:\n  - prees: '1'\n  - silence: 6x\n")
    code, out, err = run(["scenario", "check", str(MAIN_MENU), str(bad)], capsys)
    assert code == 1
    assert out == (
        f"{MAIN_MENU}: ok\n"
        f"{bad}:3:5: unknown step 'prees' (did you mean 'press'?)\n"
        f"{bad}:4:14: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('6x')\n"
    )
    assert err == ""


def test_an_unknown_key_stands_for_the_key_it_misspells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.yaml", "name: x\ncalller:\n  - prees: '1'\n")
    _, out, _ = run(["scenario", "check", str(bad)], capsys)
    assert out == f"{bad}:2:1: unknown key 'calller' (did you mean 'caller'?)\n"


def test_check_an_unreadable_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.yaml", "name: x\n")
    missing = tmp_path / "missing.yaml"
    code, out, err = run(["scenario", "check", str(missing), str(bad), str(MAIN_MENU)], capsys)
    assert code == 2
    assert err == f"botemu scenario check: {missing}: no such file\n"
    assert (
        out
        == f"{bad}:1:1: missing required key 'caller' (or 'messaging' or 'probe')\n{MAIN_MENU}: ok\n"
    )


def test_check_non_utf8_exits_2_with_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\ncaller: []\n")
    code, _, err = run(["scenario", "check", str(latin)], capsys)
    assert (code, err) == (2, f"botemu scenario check: {latin}:1:10: not UTF-8 text (byte 0xe9)\n")


def test_check_a_directory_without_scenarios_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["scenario", "check", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err == f"botemu scenario check: {tmp_path}: no scenario files (*.yaml, *.yml) here\n"


def test_check_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"name: x\ncaller:\n  - lisen\n"), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = run(["scenario", "check", "-"], capsys)
    assert (code, out) == (1, "<stdin>:3:5: unknown step 'lisen' (did you mean 'listen'?)\n")


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", "name: x\ncaller:\n  - silence: 6 seconds\n")
    code, out, _ = run(["scenario", "check", "--json", str(MAIN_MENU), str(bad)], capsys)
    assert code == 1
    assert json.loads(out) == [
        {
            "file": str(MAIN_MENU),
            "valid": True,
            "readable": True,
            "errors": [],
            "scenarios": [
                {
                    "id": "main menu, sales by keypad",
                    "name": "main menu, sales by keypad",
                    "entry": None,
                    "line": 2,
                },
            ],
        },
        {
            "file": str(bad),
            "valid": False,
            "readable": True,
            "scenarios": [],
            "errors": [
                {
                    "file": str(bad),
                    "line": 3,
                    "column": 14,
                    "message": "expected a duration such as 6s, 500ms, 2m or a number of "
                    "seconds, got a string ('6 seconds')",
                }
            ],
        },
    ]


def test_check_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        run(["scenario", "check"], capsys)
    assert caught.value.code == 2


def test_schema_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["scenario", "schema"], capsys)
    assert code == 0
    assert json.loads(out) == schema()


def test_scenario_alone_prints_its_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scenario"], capsys)
    assert (code, out) == (2, "")
    assert "check" in err and "schema" in err


MATRIX = "name: m\nmatrix: [{lang: en}, {lang: fr}]\ninclude: [_steps.yaml]\ncaller: [include: _steps.yaml]\n"


def test_check_reports_each_matrix_entry_and_skips_included_files_in_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = write(tmp_path, "m.yaml", MATRIX)
    write(tmp_path, "_steps.yaml", "- say: ${lang}\n")
    code, out, err = run(["scenario", "check", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    assert out == f"{matrix}[lang=en]: ok\n{matrix}[lang=fr]: ok\n"


def test_check_json_lists_the_scenarios_of_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = write(tmp_path, "m.yaml", MATRIX)
    write(tmp_path, "_steps.yaml", "- say: ${lang}\n")
    code, out, _ = run(["scenario", "check", "--json", str(matrix)], capsys)
    assert code == 0
    assert json.loads(out)[0]["scenarios"] == [
        {"id": "m[lang=en]", "name": "m", "entry": "lang=en", "line": 2},
        {"id": "m[lang=fr]", "name": "m", "entry": "lang=fr", "line": 2},
    ]


def test_check_points_into_an_included_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = write(tmp_path, "m.yaml", MATRIX)
    steps = write(tmp_path, "_steps.yaml", "- sya: ${lang}\n")
    code, out, _ = run(["scenario", "check", str(matrix)], capsys)
    assert code == 1
    assert out == (
        f"{steps}:1:3: unknown step 'sya' (did you mean 'say'?) (included from {matrix}:3:11)\n"
    )
    code, out, _ = run(["scenario", "check", "--json", str(matrix)], capsys)
    assert json.loads(out)[0]["errors"][0]["file"] == str(steps)


def test_check_standard_input_includes_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "_steps.yaml", "- say: ${lang}\n")
    monkeypatch.chdir(tmp_path)
    stdin = io.TextIOWrapper(io.BytesIO(MATRIX.encode()), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = run(["scenario", "check", "-"], capsys)
    assert (code, out) == (0, "-[lang=en]: ok\n-[lang=fr]: ok\n")
