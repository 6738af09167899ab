"""The layering of the scenario packages: ``emulator.scenario`` (the scenario language) sits below
the running emulator, and ``emulator.runner`` (running scenarios) above it."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from types import ModuleType

import pytest

import emulator.runner
import emulator.scenario

ABOVE_THE_LANGUAGE = ("emulator.service", "emulator.runner", "emulator.cli", "emulator.conformance")


def imported_by(modules: list[str]) -> list[str]:
    """The ``emulator`` modules a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('emulator'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def submodules(package: ModuleType) -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__, f"{package.__name__}."))


@pytest.mark.slow
def test_the_scenario_language_never_imports_the_emulator_or_the_runner() -> None:
    modules = submodules(emulator.scenario)
    assert "emulator.scenario.loader" in modules and "emulator.scenario.expectations" in modules
    loaded = imported_by(modules)
    assert [m for m in loaded if m.startswith(ABOVE_THE_LANGUAGE)] == []


@pytest.mark.slow
def test_the_suite_does_not_start_the_emulator_until_it_runs() -> None:
    """``botemu test``'s module (and its argument parsing) is light: the runner, and the
    emulator it may start, are imported when a run begins."""
    loaded = imported_by(["emulator.runner.suite"])
    assert "emulator.runner.runner" not in loaded
    assert [m for m in loaded if m.startswith("emulator.service")] == []


@pytest.mark.slow
def test_every_module_imports_on_its_own() -> None:
    """No module of the two packages depends on another being imported first (a cycle): each is
    imported with neither package loaded."""
    names = [*submodules(emulator.scenario), *submodules(emulator.runner)]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m.startswith(('emulator.scenario', 'emulator.runner'))]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
