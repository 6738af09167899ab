"""Writing state files safely: atomically and private from the start, with a file mode kept
tight, and a directory's changes serialised by a lock file. The certificates and the signing
keys both keep their files this way; each wraps ``OSError`` in its own error."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

PRIVATE_MODE = 0o600


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Write ``path``: a private temporary file (0600 from the start), then chmod and rename, so
    a reader sees the old file or the new one, never a part. Raises ``OSError``."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def tighten(path: Path, mode: int = PRIVATE_MODE) -> None:
    """Give an existing file ``mode`` when it has another. Raises ``OSError``."""
    if path.stat().st_mode & 0o777 != mode:
        os.chmod(path, mode)


@contextlib.contextmanager
def lock_file(path: Path) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (created 0600) for the block; yields whether it is held:
    False where there are no POSIX locks. Raises ``OSError`` when the file cannot be opened."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield False
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)
