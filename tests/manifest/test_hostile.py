"""Hostile manifest files: each test is named after the attack and reproduces it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from emulator.manifest.source import MAX_TEXT, ManifestError, load_manifest, load_manifest_text
from tests.support import run_measured

PEAK_BOUND = 400 * 1024 * 1024  # bytes
ADDRESS_SPACE = 3 * 1024 * 1024 * 1024  # the child's limit: a regression fails, fast


@pytest.mark.slow
def test_alias_bomb_one_long_string_aliased_90000_times(tmp_path: Path) -> None:
    big = "y" * 500_000
    (tmp_path / "m.yaml").write_text(f'name: &b "{big}"\ntags: [{", ".join(["*b"] * 90_000)}]\n')
    command = [sys.executable, "-m", "emulator", "manifest", "validate", "m.yaml"]
    result, peak = run_measured(command, cwd=tmp_path, timeout=60, address_space=ADDRESS_SPACE)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip() == (
        f"botemu manifest validate: m.yaml:1:7: more than {MAX_TEXT // 2**20} MiB of text once "
        "aliases are expanded (do aliases repeat a long value?)"
    )
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.0f} MiB"


def test_alias_bomb_of_long_keys() -> None:
    key = "k" * 100_000
    text = f"a: &m\n  ? {key}\n  : 1\nb: [{', '.join(['*m'] * 100)}]\n"  # an explicit key
    with pytest.raises(ManifestError, match="MiB of text once aliases are expanded"):
        load_manifest_text(text, "m.yaml")


@pytest.mark.parametrize(
    ("name", "text", "at"),
    [
        ("m.json", '{"name": "x",\n  "n": ' + "1" * 5000 + "}", (2, 8)),
        ("m.json", '{"n": [-' + "9" * 5000 + "]}", (1, 8)),
        ("m.yaml", "name: x\nn: " + "1" * 5000 + "\n", (2, 4)),
        ("m.yaml", "name: x\nn: 0x" + "f" * 50_000 + "\n", (2, 4)),  # read, but not printable
    ],
)
def test_a_number_too_long_for_python_says_number_too_long(
    tmp_path: Path, name: str, text: str, at: tuple[int, int]
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ManifestError) as e:
        load_manifest(tmp_path / name)
    assert e.value.message == "number too long"  # not Python's sys.set_int_max_str_digits()
    assert (e.value.line, e.value.column) == at
