"""Scenarios: YAML files that script a caller and say what the bot must do; the language only.
It may import calling (caller scripts, faults), the connector (what a streamed reply is),
transcripts and the infrastructure; it runs nothing.

``load_scenario(path)`` reads and checks a file against the package's JSON Schema
(``SCHEMA_PATH``) and returns a ``Scenario``; every problem is a ``ScenarioError`` that names the
file, line and column. The format is documented in docs/scenarios.md.

The names below are loaded on first use, so importing one submodule loads no other.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.scenario.loader import (
        SCHEMA_PATH,
        Scenario,
        ScenarioError,
        ScenarioFileError,
        load_scenario,
        load_scenario_text,
        schema,
    )

__all__ = [
    "SCHEMA_PATH",
    "Scenario",
    "ScenarioError",
    "ScenarioFileError",
    "load_scenario",
    "load_scenario_text",
    "schema",
]


def __getattr__(name: str) -> object:
    """The names of ``__all__``, imported from ``loader.py`` when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("emulator.scenario.loader"), name)
    globals()[name] = value
    return value
