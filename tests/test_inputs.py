"""Reading the files commands are given (``emulator/inputs.py``): regular files only, bounded.

A FIFO made every command that reads a file hang (``open`` waits for a writer, then ``read``
for its end). Each command is run in a subprocess with a FIFO, with a timeout of a few seconds:
it must exit 2 with one line, ``x: not a regular file``, and never hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.inputs import InputError, read_bytes

TIMEOUT = 20  # seconds: a hang fails the test instead of the run; a normal run takes about one

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "emulator", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def test_a_regular_file_is_read_up_to_one_byte_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"x" * 100)
    assert read_bytes(path, 1000) == b"x" * 100
    assert read_bytes(path, 10) == b"x" * 11  # the caller says "larger than"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: os.mkfifo(p), "not a regular file"),
        (lambda p: p.mkdir(), "is a directory, not a file"),
        (lambda p: None, "no such file"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_without_reading(
    tmp_path: Path, make: object, message: str
) -> None:
    path = tmp_path / "x"
    make(path)  # type: ignore[operator]
    with pytest.raises(InputError) as e:
        read_bytes(path, 1000)
    assert e.value.message == message


def test_a_character_device_is_not_a_regular_file() -> None:
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes("/dev/zero", 1000)  # it would be read to the limit, /dev/tty forever


@pytest.mark.parametrize(
    ("args", "prefix"),
    [
        (["lint", "fifo"], "botemu lint: "),
        (["manifest", "validate", "fifo"], "botemu manifest validate: "),
        (["manifest", "check", "fifo"], "botemu manifest check: "),
        (["scenario", "check", "fifo"], "botemu scenario check: "),
        (["test", "fifo"], ""),
    ],
)
def test_a_fifo_as_input_is_refused_not_waited_on(
    tmp_path: Path, args: list[str], prefix: str
) -> None:
    os.mkfifo(tmp_path / "fifo")
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"{prefix}fifo: not a regular file"


def test_a_fifo_as_an_included_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "_steps.yaml")
    (tmp_path / "s.yaml").write_text(
        "name: s\ninclude: [_steps.yaml]\ncaller:\n  - include: _steps.yaml\n"
    )
    result = run("scenario", "check", "s.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the scenario is invalid, at file:line:col
    assert result.stdout.strip() == "s.yaml:2:11: cannot include '_steps.yaml': not a regular file"
    result = run("test", "s.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "s.yaml:2:11: cannot include '_steps.yaml': not a regular file" in result.stderr


def test_lint_of_a_number_too_long_says_number_too_long(tmp_path: Path) -> None:
    (tmp_path / "w.json").write_text('{"actions": [\n  ' + "1" * 5000 + "]}")
    result = run("lint", "w.json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "botemu lint: w.json:2:3: number too long"
