"""The files of the signing-key directory: the key index, atomic writes, file modes and the lock.

The directory is mode 0700, key files 0600 (a kept one is tightened when loaded), certificates
and the index 0644. Every write is atomic (a private temporary file, then chmod and rename), and
changes are serialised with a lock file. Every error is an ``IdentityError`` naming the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from emulator import files
from emulator.files import lock_file, write_atomic
from emulator.identity.errors import IdentityError

INDEX_FILE = "index.json"
LOCK_FILE = ".lock"
DIR_MODE = 0o700
KEY_MODE = 0o600
CERT_MODE = 0o644
_KID = re.compile(r"[A-Za-z0-9_-]{1,128}")


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Create the directory (0700) and hold its lock (POSIX; elsewhere only the directory)."""
    make_dir(directory)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lock_file(directory / LOCK_FILE))
        except OSError as e:
            raise IdentityError(f"cannot lock: {e.strerror or e}", path=directory) from None
        yield


def read_index(path: Path) -> list[tuple[str, float, float | None]]:
    """(kid, created, retired) of every entry; [] when there is no index yet."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except OSError as e:
        raise IdentityError(f"cannot read: {e.strerror or e}", path=path) from None
    except ValueError:
        raise IdentityError("not JSON; remove it to start over", path=path) from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise IdentityError('expected {"keys": [...]}; remove it to start over', path=path)
    result: list[tuple[str, float, float | None]] = []
    for n, entry in enumerate(entries):
        kid = entry.get("kid") if isinstance(entry, dict) else None
        created = entry.get("created") if isinstance(entry, dict) else None
        retired = entry.get("retired") if isinstance(entry, dict) else None
        if (
            not isinstance(kid, str)
            or not _KID.fullmatch(kid)
            or not _is_number(created)
            or not (retired is None or _is_number(retired))
        ):
            raise IdentityError(f"keys[{n}] is not a key entry; remove it to start over", path=path)
        assert isinstance(created, int | float)
        assert retired is None or isinstance(retired, int | float)
        result.append((kid, float(created), None if retired is None else float(retired)))
    return result


def _is_number(value: object) -> bool:
    """A JSON number (``true`` is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def read_file(path: Path) -> bytes:
    """The bytes of a key or certificate file."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise IdentityError(
            f"missing; remove {INDEX_FILE} to start with a new key", path=path
        ) from None
    except OSError as e:
        raise IdentityError(f"cannot read: {e.strerror or e}", path=path) from None


def make_dir(directory: Path) -> None:
    try:
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        if directory.stat().st_mode & 0o777 != DIR_MODE:
            os.chmod(directory, DIR_MODE)
    except FileExistsError:
        raise IdentityError("exists and is not a directory", path=directory) from None
    except OSError as e:
        raise IdentityError(f"cannot create: {e.strerror or e}", path=directory) from None
    if not directory.is_dir():
        raise IdentityError("exists and is not a directory", path=directory)


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (``files.write_atomic``); ``IdentityError`` when it cannot be written."""
    try:
        write_atomic(path, data, mode)
    except OSError as e:
        raise IdentityError(f"cannot write: {e.strerror or e}", path=path) from None


def tighten(key: Path) -> None:
    """A loaded key file is made 0600 too."""
    try:
        files.tighten(key, KEY_MODE)
    except OSError as e:
        raise IdentityError(f"cannot set mode 0600: {e.strerror or e}", path=key) from None
