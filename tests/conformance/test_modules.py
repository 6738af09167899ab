"""The conformance modules after their split: each name is importable from the module it always
came from, and is the one object, wherever it is imported from."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from emulator.conformance import (
    auth,
    auth_calling,
    auth_cases,
    probing,
    rules,
    tls,
    tls_cases,
    tokens,
)


@pytest.mark.parametrize("module", ["auth", "tls"])
def test_every_name_in_all_is_there(module: str) -> None:
    loaded = importlib.import_module(f"emulator.conformance.{module}")
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert not missing


def test_the_parts_are_the_objects_the_probes_use() -> None:
    assert auth.ProbeError is tls.ProbeError is probing.ProbeError is auth_calling.ProbeError
    assert auth.TokenFactory is tokens.TokenFactory is auth_calling.TokenFactory
    assert auth.Case is probing.Case and auth.Attempt is probing.Attempt
    assert auth.CASES is auth_cases.CASES and auth.RULES is rules.AUTH_RULES
    assert tls.Case is tls_cases.Case and tls.RULES is rules.TLS_RULES
    assert auth_calling.RULES is rules.AUTH_CALLING_RULES
    # AUTH-ANONYMOUS is the probe's verdict on a bot that takes a request with no token, no case
    assert {c.rule for c in auth.CASES} == set(auth.RULES.ids()) - {"AUTH-ANONYMOUS"}


def test_no_module_imports_a_layer_above_the_package() -> None:
    above = ("emulator.service", "emulator.runner", "emulator.cli", "emulator.scenario",
             "emulator.logview")  # fmt: skip
    for path in Path(auth.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names]
                assert not [n for n in names if n.startswith(above)], (path.name, names)
