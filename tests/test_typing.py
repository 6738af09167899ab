"""The package type-checks under mypy --strict (configuration in pyproject.toml).

mypy runs incrementally, on the project's own cache (``.mypy_cache``, as ``mypy emulator`` by
hand): it checks again every module whose source (or whose dependencies) changed since, and
reads the rest from the cache; a fresh clone checks everything (about 15 s)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_strict_on_the_package() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "emulator"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
