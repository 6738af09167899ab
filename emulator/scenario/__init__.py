"""Scenarios: YAML files that script a caller (and, later, what the bot must do).

``load_scenario(path)`` reads and checks a file against the package's JSON Schema
(``SCHEMA_PATH``) and returns a ``Scenario``; every problem is a ``ScenarioError`` that names the
file, line and column. The format is documented in docs/scenarios.md.
"""

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
