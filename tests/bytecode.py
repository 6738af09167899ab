"""Byte code compiled once, before the xdist workers start.

On a fresh clone no module has byte code yet, and the workers start at the same moment: each
one compiles every module it imports, and rewrites the asserts of every test file it collects
(pytest's assertion rewriting), all four of them the same files at once. On 2 cores that cost
52 s of CPU and 26 s of wall time before the first test (``pytest -k nonexistent`` on a fresh
clone: 49.7 s against 23.7 s with the byte code there). ``warm`` does that work once, on as
many processes as there are cores, for the files that are ``stale``, and writes what each
worker would have written: the ordinary ``.pyc`` of every module, and pytest's own cached
rewrite of every test file and conftest (pytest checks it against the source before using it,
as it does a file it wrote itself).

The rewrite uses pytest's assertion-rewriting module as its import hook does. Should that module
change, the child process fails and writes nothing more, and the workers compile as before: the
warm-up can only save time, never change what runs."""

from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run by each child on its share of the files (its arguments). Each gets the rewrite pytest's
# import hook would cache for it: pytest rewrites the asserts of the test files, the conftests,
# and every module of a plugin's package (botemu's, ``emulator.pytest_plugin``); a rewrite of a
# module pytest imports plainly is never read. All but the test files also get their ordinary
# byte code, for the processes the tests start. Files whose byte code is current are left alone.
_CHILD = """
import compileall, sys
from pathlib import Path
from _pytest.assertion import rewrite

class Quiet:
    def trace(self, message):
        pass

failed = False
for name in sys.argv[1:]:
    source = Path(name)
    pyc = rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)
    try:  # a file that does not compile is left for its import to report
        if rewrite._read_pyc(source, pyc) is None and rewrite.try_makedirs(pyc.parent):
            source_hash, code = rewrite._rewrite_test(source, None)
            rewrite._write_pyc(Quiet(), code, source_hash, pyc)
    except (SyntaxError, ValueError, OSError):
        failed = True
    if not source.name.startswith("test_"):
        failed = not compileall.compile_file(name, quiet=2) or failed
sys.exit(1 if failed else 0)
"""


def modules(folders: Iterable[Path]) -> list[Path]:
    """Every Python module under ``folders`` (a file stands for itself), largest first."""
    found: set[Path] = set()
    for folder in folders:
        if folder.is_file() and folder.suffix == ".py":
            found.add(folder)
        elif folder.is_dir():
            found.update(p for p in folder.rglob("*.py") if "node_modules" not in p.parts)
    return sorted(found, key=lambda p: (-p.stat().st_size, str(p)))


def stale(source: Path) -> bool:
    """Whether ``source`` lacks byte code its import would take as current: pytest's rewrite,
    and but for a test file the ordinary ``.pyc``, each by its header (the magic number, then
    the source's hash or its mtime and size, as the file says it was written: pytest writes
    one or the other by its version). Only headers are read: on a tree compiled already the
    check takes milliseconds, and no process is started. A header of any other form is stale:
    the child then asks pytest's own check."""
    from _pytest.assertion import rewrite

    try:
        pyc = rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)
        if not _current(source, _head(pyc, 16)):
            return True
        if source.name.startswith("test_"):
            return False
        return not _current(source, _head(Path(importlib.util.cache_from_source(str(source))), 16))
    except (OSError, AttributeError, ValueError):
        return True


def _current(source: Path, head: bytes) -> bool:
    if len(head) != 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if head[4:8] == b"\x03\x00\x00\x00":  # a checked hash
        return head[8:] == importlib.util.source_hash(source.read_bytes())[:8]
    if head[4:8] == b"\x00\x00\x00\x00":  # the mtime and size
        st = source.stat()
        return head[8:] == struct.pack(
            "<LL", int(st.st_mtime) & 0xFFFF_FFFF, st.st_size & 0xFFFF_FFFF
        )
    return False


def _head(path: Path, size: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(size)
    except OSError:
        return b""


def warm(folders: Iterable[Path], processes: int, timeout: float = 300) -> tuple[int, bool]:
    """Compile the modules under ``folders`` that are ``stale``, on up to ``processes``
    processes at once (the largest files dealt out first, in turn): how many files were handed
    out, and whether every process succeeded. A failure writes nothing wrong: a file is either
    compiled whole, or left for the import to compile."""
    files = [source for source in modules(folders) if stale(source)]
    shares = [files[i::processes] for i in range(processes) if files[i::processes]]
    quiet = subprocess.DEVNULL
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, *map(str, share)], cwd=ROOT, stdout=quiet, stderr=quiet
        )
        for share in shares
    ]
    ok = True
    for child in children:
        try:
            ok = child.wait(timeout=timeout) == 0 and ok
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            ok = False
    return len(files), ok


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
