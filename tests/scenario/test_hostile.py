"""Hostile scenario files: each test is named after the attack and reproduces it.

The memory ones run ``botemu`` in a subprocess and measure its own peak resident size
(``tests.support.run_measured``: ``os.wait4`` on that child) against ``PEAK_BOUND``; the child
also gets an address-space limit, so that a regression fails here with a ``MemoryError`` instead
of taking the machine's memory.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator.scenario.build import MAX_STEPS
from emulator.scenario.loader import (
    MAX_EXPANDED_TEXT,
    ScenarioError,
    load_scenarios,
    load_scenarios_text,
)
from emulator.scenario.yamldoc import MAX_TEXT
from tests.support import run_measured

PEAK_BOUND = 400 * 1024 * 1024  # bytes; a check takes about 100 MB
ADDRESS_SPACE = 3 * 1024 * 1024 * 1024  # the child's limit: a regression fails, fast
TIMEOUT = 60


def botemu(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``botemu`` in a subprocess: its result, and its own peak resident size, in bytes."""
    command = [sys.executable, "-m", "emulator", *args]
    return run_measured(command, cwd=cwd, timeout=TIMEOUT, address_space=ADDRESS_SPACE)


def _lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return (result.stdout + result.stderr).strip().splitlines()


@pytest.mark.slow
def test_alias_bomb_one_long_string_aliased_90000_times(tmp_path: Path) -> None:
    # 860 KB of YAML: under 100,000 values, but 45 GB of text once expanded. It took 5.2 GB and
    # died with a MemoryError traceback (jsonschema renders the expanded list in a message).
    big = "x" * 500_000
    (tmp_path / "bomb.yaml").write_text(
        f'name: bomb\nvariables:\n  big: &b "{big}"\ncaller:\n  - listen\n'
        f"expect:\n  findings: [{', '.join(['*b'] * 90_000)}]\n"
    )
    result, peak = botemu("scenario", "check", "bomb.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    assert _lines(result) == [
        "bomb.yaml:3:8: more than 4 MiB of text once aliases are expanded "
        "(do aliases repeat a long value?)"
    ]
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.0f} MiB"
    result, peak = botemu("test", "bomb.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "bomb.yaml:3:8: more than 4 MiB of text once aliases are expanded" in result.stderr
    assert "Traceback" not in result.stderr
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize(
    "body",
    [
        # 100 failing rule ids of 40 KB each: just under the limit, every one an error
        "caller: [listen]\nexpect:\n  findings: [" + ", ".join(["*b"] * 100) + "]\n",
        # 50 failing steps, each a oneOf whose alternatives all render the step
        "caller:\n  - &s {press: *b, gap: *b}\n" + "  - *s\n" * 49,
        # the root's oneOf (caller or messaging): the whole document, 4 MB of it, fails
        "caller:\n  - &s {say: *b}\n" + "  - *s\n" * 48 + "messaging:\n  - *b\n",
    ],
    ids=["rule-ids", "steps", "root"],
)
def test_alias_bomb_just_under_the_text_limit_stays_small(tmp_path: Path, body: str) -> None:
    big = "x" * 40_000
    (tmp_path / "s.yaml").write_text(f'name: s\nvariables: {{big: &b "{big}"}}\n{body}')
    result, peak = botemu("scenario", "check", "s.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    lines = _lines(result)
    assert lines and all(line.startswith("s.yaml:") for line in lines), lines[:3]
    assert max(map(len, lines)) < 1100  # no instance is rendered whole into a message
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.0f} MiB"


def test_include_fan_out_of_1kb_of_files_to_ten_million_steps(tmp_path: Path) -> None:
    for level in range(7):  # each file includes the next ten times: 10^7 steps
        if level < 6:
            body = f"- include: _f{level + 1}.yaml\n" * 10
        else:
            body = "- listen\n" * 10
        (tmp_path / f"_f{level}.yaml").write_text(body)
    (tmp_path / "fan.yaml").write_text(
        "name: fan\ninclude: [_f0.yaml]\ncaller:\n  - listen\n  - include: _f0.yaml\n"
    )
    started = time.monotonic()
    result, peak = botemu("scenario", "check", "fan.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    assert _lines(result) == [
        f"fan.yaml:5:14: more than {MAX_STEPS:,} steps (or turns) once includes are spliced; "
        "each include counts as one"
    ]
    assert time.monotonic() - started < TIMEOUT / 2
    assert peak < PEAK_BOUND


def test_include_fan_out_in_a_conversation(tmp_path: Path) -> None:
    (tmp_path / "_t1.yaml").write_text("- hello\n" * 200)
    (tmp_path / "_t0.yaml").write_text("- include: _t1.yaml\n" * 100)
    (tmp_path / "c.yaml").write_text(
        "name: c\ninclude: [_t0.yaml]\nmessaging:\n  - hi\n  - include: _t0.yaml\n"
    )
    with pytest.raises(ScenarioError) as e:
        load_scenarios(tmp_path / "c.yaml")
    assert (e.value.line, e.value.column) == (5, 14)
    assert e.value.message.startswith("more than 10,000 steps (or turns)")


def test_a_scenario_of_exactly_the_step_limit_is_read(tmp_path: Path) -> None:
    (tmp_path / "_s.yaml").write_text("- listen\n" * 99)
    (tmp_path / "ok.yaml").write_text(
        "name: ok\ninclude: [_s.yaml]\ncaller:\n" + "  - include: _s.yaml\n" * 100
    )
    (scenario,) = load_scenarios(tmp_path / "ok.yaml")  # 100 includes + 9,900 steps
    assert scenario.caller is not None and len(scenario.caller.steps) == 9_900


def test_variable_bomb_one_long_value_referenced_100000_times() -> None:
    big = "x" * 400_000
    text = f'name: v\nvariables:\n  big: "{big}"\ncaller:\n  - say: "' + "${big}" * 100_000 + '"\n'
    started = time.process_time()  # CPU: a loaded machine's waits are not the code's
    with pytest.raises(ScenarioError) as e:
        load_scenarios_text(text, "v.yaml")
    mib = MAX_EXPANDED_TEXT // 2**20
    assert str(e.value) == f"v.yaml:2:1: more than {mib} MiB of text once variables are substituted"
    assert time.process_time() - started < 20


def test_matrix_bomb_every_entry_copies_a_long_value() -> None:
    big = "x" * 400_000
    matrix = "".join(f"  - {{k: '{i}'}}\n" for i in range(1000))
    text = f'name: "m ${{k}}"\nvariables:\n  big: "{big}"\nmatrix:\n{matrix}'
    text += 'caller:\n  - say: "${big}${k}"\n'
    started = time.process_time()  # CPU: a loaded machine's waits are not the code's
    with pytest.raises(ScenarioError) as e:
        load_scenarios_text(text, "m.yaml")
    assert "MiB of text once variables are substituted (matrix entry" in str(e.value)
    assert str(e.value).startswith("m.yaml:")
    assert time.process_time() - started < 20


@pytest.mark.slow
def test_matrix_of_20000_mappings_with_one_repeated_is_checked_in_linear_time() -> None:
    # jsonschema's uniqueItems compares every pair of mappings: minutes for this list
    matrix = "".join(f"  - {{k: '{i}'}}\n" for i in range(20_000)) + "  - {k: '7'}\n"
    text = f'name: "m ${{k}}"\nmatrix:\n{matrix}caller: [listen]\n'
    started = time.process_time()  # CPU: a loaded machine's waits are not the code's
    with pytest.raises(ScenarioError) as e:
        load_scenarios_text(text, "m.yaml")
    assert str(e.value) == 'm.yaml:20003:5: {"k": "7"} is listed twice'
    assert time.process_time() - started < 20


def test_a_number_too_long_for_python_says_so_without_python_advice() -> None:
    for number in ("1" * 5000, "0x" + "f" * 50_000):
        with pytest.raises(ScenarioError) as e:
            load_scenarios_text(f"name: n\ncaller: [listen]\ndescription: {number}\n", "n.yaml")
        assert "too long" in str(e.value) and "set_int_max_str_digits" not in str(e.value)
        assert str(e.value).startswith("n.yaml:3:14: ")


def test_the_text_limit_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "scenarios.md").read_text()
    assert f"{MAX_TEXT // 2**20} MiB" in docs and f"{MAX_STEPS:,}" in docs


@pytest.mark.slow
@pytest.mark.parametrize(
    "head",
    [
        "name: r\n",  # 100,000 unknown variables in one string
        "name: r\nvariables: {a: b}\nmatrix: [{a: c}, {b: d}]\n",  # unset in matrix entry 1
    ],
    ids=["unknown", "unset"],
)
def test_100000_bad_references_in_one_string_are_placed_in_linear_time(head: str) -> None:
    # Finding the n-th occurrence of each in the file searched from the start every time.
    name = "nope" if "matrix" not in head else "b"
    text = head + 'caller:\n  - say: "' + ("${" + name + "}") * 100_000 + '"\n'
    started = time.process_time()  # CPU: a loaded machine's waits are not the code's
    with pytest.raises(ScenarioError) as e:
        load_scenarios_text(text, "r.yaml")
    line = text.count("\n")
    column = len('  - say: "') + 1
    errors = e.value.errors
    assert len(errors) == 100_000
    assert (errors[0].line, errors[0].column) == (line, column)
    assert (errors[-1].line, errors[-1].column) == (line, column + (len(name) + 3) * 99_999)
    assert time.process_time() - started < 30


def test_scenario_check_of_an_endless_stdin_reads_no_more_than_its_limit() -> None:
    """``botemu scenario check -`` read all of standard input before checking its size."""
    from emulator.scenario.loader import MAX_BYTES

    done = subprocess.run(
        [sys.executable, "-m", "emulator", "scenario", "check", "-"],
        input=b"x" * (MAX_BYTES * 4), capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        f"botemu scenario check: <stdin>: larger than {MAX_BYTES} bytes"
    )


def test_the_peak_measured_is_the_childs_own_not_an_earlier_childs(tmp_path: Path) -> None:
    # Regression: RUSAGE_CHILDREN reported the largest child the worker had ever waited for (a
    # mypy run of another test, 587 MiB), and a 100 MB check failed its 400 MiB bound.
    big = [sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"]
    _, peak_big = run_measured(big, cwd=tmp_path, timeout=TIMEOUT)
    _, peak_small = run_measured([sys.executable, "-c", "pass"], cwd=tmp_path, timeout=TIMEOUT)
    assert peak_big > 300 * 2**20 > 100 * 2**20 > peak_small
