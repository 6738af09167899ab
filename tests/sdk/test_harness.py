"""The SDK tests' cached installs (``tests/sdk/harness.py``): made once while other workers
wait, and a package's tarball unpacked only when it is the pinned one."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import threading
import time
from pathlib import Path

import pytest

from tests.sdk.harness import install_whole, unpack_checked


def test_an_install_asked_for_by_two_at_once_is_made_once_and_both_find_it(
    tmp_path: Path,
) -> None:
    target = tmp_path / "cache" / "abc"
    made: list[Path] = []

    def fill(work: Path) -> None:
        work.mkdir()
        time.sleep(0.3)  # the other asks meanwhile
        (work / "installed").write_text("yes")
        made.append(work)

    def ask() -> None:
        install_whole(target, lambda t: (t / "installed").is_file(), fill)

    askers = [threading.Thread(target=ask) for _ in range(2)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(timeout=10)
    assert len(made) == 1, made
    assert (target / "installed").read_text() == "yes"
    assert sorted(p.name for p in target.parent.iterdir()) == ["abc", "abc.lock"]  # no partial


def tarball(folder: Path) -> tuple[Path, str]:
    """A package's tarball as npm packs one (``package/package.json``), and its integrity."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b'{"name": "p", "version": "1.0.0"}'
        info = tarfile.TarInfo("package/package.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    path = folder / "p-1.0.0.tgz"
    path.write_bytes(buffer.getvalue())
    digest = base64.b64encode(hashlib.sha512(buffer.getvalue()).digest()).decode()
    return path, f"sha512-{digest}"


def test_a_tarball_is_unpacked_when_it_is_the_pinned_one(tmp_path: Path) -> None:
    path, integrity = tarball(tmp_path)
    unpack_checked(path, integrity, "p@1.0.0")
    assert (tmp_path / "package" / "package.json").is_file() and not path.exists()


def test_a_tarball_that_is_not_the_pinned_one_fails_and_nothing_is_unpacked(
    tmp_path: Path,
) -> None:
    path, integrity = tarball(tmp_path)
    other = "sha512-" + base64.b64encode(hashlib.sha512(b"another").digest()).decode()
    with pytest.raises(AssertionError, match=r"p@1\.0\.0: sha512-.*not the pinned sha512-"):
        unpack_checked(path, other, "p@1.0.0")
    assert not (tmp_path / "package").exists() and path.exists()
    assert integrity != other
