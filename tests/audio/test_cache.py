"""The cache of synthesized speech: memory LRU, disk bounded in bytes, shared by processes
(emulator/audio/cache.py)."""

from __future__ import annotations

import array
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator.audio import cache as cache_module
from emulator.audio.cache import MAGIC, AudioCache, default_dir


def sound(n: int, value: int = 7) -> array.array[int]:
    return array.array("h", [value] * n)


def test_memory_is_an_lru_bounded_in_entries_and_bytes() -> None:
    cache = AudioCache(None, max_entries=2, max_memory_bytes=1000)
    cache.put(("a",), sound(10))
    cache.put(("b",), sound(10))
    assert cache.get(("a",)) == sound(10)  # a is now the most recent
    cache.put(("c",), sound(10))
    assert cache.get(("b",)) is None
    assert cache.get(("a",)) is not None and cache.get(("c",)) is not None
    cache.put(("big",), sound(600))  # 1200 bytes: more than the whole bound, not kept
    assert cache.get(("big",)) is None
    cache.put(("d",), sound(400))  # 800 bytes: the others make room
    assert cache.get(("d",)) is not None and cache.get(("a",)) is None


def test_a_copy_is_returned() -> None:
    cache = AudioCache(None)
    cache.put(("k",), sound(4))
    cache.get(("k",))[0] = 99  # type: ignore[index]
    assert cache.get(("k",)) == sound(4)


def test_keys_are_whole_tuples() -> None:
    cache = AudioCache(None)
    cache.put(("ab", "c"), sound(2, 1))
    assert cache.get(("a", "bc")) is None


def test_disk_files_are_whole_and_bounded_least_recently_used_first(tmp_path: Path) -> None:
    per_file = len(MAGIC) + 32 + 2000
    cache = AudioCache(tmp_path, max_disk_bytes=3 * per_file)
    for i, name in enumerate("abcd"):
        cache.put((name,), sound(1000, i))
        time.sleep(0.01)  # distinct times of last use
    files = sorted(tmp_path.iterdir())
    assert len(files) == 3
    assert all(p.suffix == ".pcm" and p.stat().st_size == per_file for p in files)
    fresh = AudioCache(tmp_path, max_disk_bytes=3 * per_file)
    assert fresh.get(("a",)) is None  # the oldest went
    assert fresh.get(("d",)) == sound(1000, 3)


def test_a_foreign_or_short_file_is_ignored(tmp_path: Path) -> None:
    cache = AudioCache(tmp_path)
    cache.put(("k",), sound(10))
    (path,) = tmp_path.iterdir()
    path.write_bytes(path.read_bytes()[:-1])  # an odd length: cut short
    assert AudioCache(tmp_path).get(("k",)) is None
    path.write_bytes(b"RIFF" + bytes(60))
    assert AudioCache(tmp_path).get(("k",)) is None


def test_an_unwritable_directory_leaves_the_memory_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    cache = AudioCache(blocked / "cache")
    cache.put(("k",), sound(3))
    assert cache.get(("k",)) == sound(3)


def test_default_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cache_module.ENV_DIR, raising=False)
    assert default_dir() == Path(".botemu") / "audio-cache"
    monkeypatch.setenv(cache_module.ENV_DIR, str(tmp_path))
    assert default_dir() == tmp_path
    monkeypatch.setenv(cache_module.ENV_DIR, "off")
    assert default_dir() is None


WRITER = """
import array, sys
from pathlib import Path
from emulator.audio.cache import AudioCache
cache = AudioCache(Path(sys.argv[1]), max_disk_bytes=200_000)
for round_ in range(30):
    for k in range(8):
        cache.put((str(k),), array.array("h", [k] * 5000))
        got = AudioCache(Path(sys.argv[1])).get((str((k + 3) % 8),))
        assert got is None or got == array.array("h", [(k + 3) % 8] * 5000), "torn read"
"""


@pytest.mark.slow
def test_processes_sharing_the_directory_never_see_a_part(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=root,
                              stderr=subprocess.PIPE) for _ in range(3)]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 200_000
    assert not [p for p in tmp_path.iterdir() if not p.name.endswith(".pcm")]
