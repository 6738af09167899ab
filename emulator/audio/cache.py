"""Synthesized speech kept so that a suite synthesizes each distinct prompt once: in memory (an
LRU bounded in entries and bytes) and on disk (a directory bounded in bytes).

A key is a tuple of strings (the engine and its version, the text, voice, sayAs and culture); its
SHA-256 names the file. A file is ``MAGIC``, the key's digest, then the samples as 16-bit
little-endian PCM at ``SAMPLE_RATE``. Several processes may share the directory: each file is
written to a temporary file and renamed into place (a reader sees a whole file or none), a file
that is short, foreign or of another key is ignored, and pruning (oldest first, by the time of
its last use) tolerates files that vanish under it. Errors of the disk never fail a synthesis:
the cache then works from memory.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Final

from emulator.audio.pcm import from_le_bytes, to_le_bytes
from emulator.files import write_atomic

DEFAULT_DIR: Final = Path(".botemu") / "audio-cache"
ENV_DIR: Final = "BOTEMU_AUDIO_CACHE"
"""Where the disk cache lives (default ``.botemu/audio-cache``); ``off`` for none."""

MAGIC: Final = b"BEMUPCM1"
MAX_MEMORY_ENTRIES: Final = 512
MAX_MEMORY_BYTES: Final = 64 * 1024 * 1024
MAX_DISK_BYTES: Final = 256 * 1024 * 1024
_SUFFIX: Final = ".pcm"
_MODE: Final = 0o644


def default_dir() -> Path | None:
    """``$BOTEMU_AUDIO_CACHE`` (None when it is ``off``), else ``.botemu/audio-cache``."""
    value = os.environ.get(ENV_DIR, "").strip()
    if value.lower() in ("off", "0", "no", "none"):
        return None
    return Path(value) if value else DEFAULT_DIR


class AudioCache:
    """Samples by key, in memory and (when ``directory`` is given) on disk."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        max_entries: int = MAX_MEMORY_ENTRIES,
        max_memory_bytes: int = MAX_MEMORY_BYTES,
        max_disk_bytes: int = MAX_DISK_BYTES,
    ) -> None:
        self.directory = directory
        self.max_entries = max(1, max_entries)
        self.max_memory_bytes = max(0, max_memory_bytes)
        self.max_disk_bytes = max(0, max_disk_bytes)
        self._memory: OrderedDict[bytes, array.array[int]] = OrderedDict()
        self._memory_bytes = 0
        self._lock = threading.Lock()
        self.hits = self.disk_hits = self.misses = 0

    def get(self, key: tuple[str, ...]) -> array.array[int] | None:
        """The samples kept for ``key`` (a copy), or None."""
        digest = _digest(key)
        with self._lock:
            held = self._memory.get(digest)
            if held is not None:
                self._memory.move_to_end(digest)
                self.hits += 1
                return array.array("h", held)
        samples = self._read(digest)
        with self._lock:
            if samples is None:
                self.misses += 1
                return None
            self.disk_hits += 1
            self._remember(digest, samples)
        return array.array("h", samples)

    def put(self, key: tuple[str, ...], samples: array.array[int], *, disk: bool = True) -> None:
        """Keep ``samples`` for ``key`` in memory and, with ``disk``, in the directory."""
        digest = _digest(key)
        with self._lock:
            self._remember(digest, array.array("h", samples))
        if disk:
            self._write(digest, samples)

    def _remember(self, digest: bytes, samples: array.array[int]) -> None:
        size = 2 * len(samples)
        if size > self.max_memory_bytes:
            return
        old = self._memory.pop(digest, None)
        if old is not None:
            self._memory_bytes -= 2 * len(old)
        self._memory[digest] = samples
        self._memory_bytes += size
        while len(self._memory) > self.max_entries or self._memory_bytes > self.max_memory_bytes:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= 2 * len(dropped)

    def _path(self, digest: bytes) -> Path | None:
        return None if self.directory is None else self.directory / (digest.hex() + _SUFFIX)

    def _read(self, digest: bytes) -> array.array[int] | None:
        path = self._path(digest)
        if path is None:
            return None
        try:
            with path.open("rb") as f:
                head = f.read(len(MAGIC) + len(digest))
                if head != MAGIC + digest:
                    return None
                data = f.read(self.max_disk_bytes + 1)
            os.utime(path)  # its last use, for pruning
        except OSError:
            return None
        if len(data) % 2 or len(data) > self.max_disk_bytes:
            return None
        return from_le_bytes(data)

    def _write(self, digest: bytes, samples: array.array[int]) -> None:
        path = self._path(digest)
        data = MAGIC + digest + to_le_bytes(samples)
        if path is None or len(data) > self.max_disk_bytes:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, _MODE)
        except OSError:
            return
        self._prune(keep=path)

    def _prune(self, keep: Path) -> None:
        """Delete the least recently used files until the directory is within its bound."""
        assert self.directory is not None
        files: list[tuple[float, int, Path]] = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.directory):
                if entry.name.endswith(_SUFFIX) and entry.is_file():
                    with contextlib.suppress(OSError):
                        stat = entry.stat()
                        files.append((stat.st_mtime, stat.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_disk_bytes:
                break
            if path == keep:
                continue
            with contextlib.suppress(OSError):
                path.unlink()
            total -= size


def _digest(key: tuple[str, ...]) -> bytes:
    h = hashlib.sha256()
    for part in key:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.digest()
