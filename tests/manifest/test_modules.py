"""The manifest modules after their split: each name is importable from the module it always came
from, and is the one object, wherever it is imported from."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from emulator.manifest import (
    check,
    check_rules,
    document,
    explain,
    rules,
    samples,
    source,
    validate,
    words,
)


@pytest.mark.parametrize("module", ["check", "explain", "samples", "source", "validate"])
def test_every_name_in_all_is_there(module: str) -> None:
    loaded = importlib.import_module(f"emulator.manifest.{module}")
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert not missing


def test_the_parts_are_the_objects_the_package_uses() -> None:
    assert source.ManifestError is document.ManifestError is validate.ManifestError
    assert validate.RULES is rules.RULES and check.RULES is check_rules.RULES
    assert explain.closest is words.closest
    assert samples.SampleError.__module__ == "emulator.manifest.samples"


def test_no_module_imports_a_layer_above_the_package() -> None:
    """Not even for type checking: ``check`` takes a ``SkillCheckHost``, not the service's type."""
    above = ("emulator.service", "emulator.runner", "emulator.cli", "emulator.scenario",
             "emulator.logview")  # fmt: skip
    for path in Path(check.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names]
                assert not [n for n in names if n.startswith(above)], (path.name, names)
