"""State files: atomic private writes, tightened modes, and the directory lock."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from emulator.files import lock_file, tighten, write_atomic


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_atomic_replaces_the_file_with_the_mode_asked(tmp_path: Path) -> None:
    target = tmp_path / "key.pem"
    target.write_bytes(b"old")
    write_atomic(target, b"new", 0o600)
    assert target.read_bytes() == b"new"
    assert mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["key.pem"]  # no temporary file left


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_atomic(tmp_path / "missing-dir" / "x", b"data", 0o644)
    target = tmp_path / "a-directory"
    target.mkdir()
    with pytest.raises(OSError):  # rename over a directory fails after the temporary is written
        write_atomic(target, b"data", 0o644)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory"]


def test_tighten_makes_a_loose_file_private(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(b"k")
    os.chmod(key, 0o644)
    tighten(key)
    assert mode(key) == 0o600


def test_the_lock_serialises_two_holders(tmp_path: Path) -> None:
    order: list[str] = []

    def second() -> None:
        with lock_file(tmp_path / ".lock"):
            order.append("second")

    with lock_file(tmp_path / ".lock") as held:
        assert held
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.2)  # the second holder waits for the lock meanwhile
        order.append("first")
    thread.join(timeout=10)
    assert order == ["first", "second"]
    assert mode(tmp_path / ".lock") == 0o600
