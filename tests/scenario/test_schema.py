"""The scenario JSON Schema: a valid draft-07 schema, in step with the caller model and the docs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from emulator.calling.caller import HANGUP_TARGETS, STEP_NAMES, CallerScript
from emulator.errors import CallerScriptError
from emulator.scenario import SCHEMA_PATH, schema
from emulator.scenario.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("[!_]*.yaml"))
EVERY_FILE = sorted(p for p in (ROOT / "scenarios").rglob("*") if p.suffix in (".yaml", ".yml"))
SCENARIO_FILES = [p for p in EVERY_FILE if not p.name.startswith("_")]
FRAGMENTS = [p for p in EVERY_FILE if p.name.startswith("_")]
VALIDATOR = Draft7Validator(schema())


def test_the_schema_is_a_valid_draft_07_schema() -> None:
    Draft7Validator.check_schema(schema())
    assert schema()["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_the_schema_ships_in_the_package() -> None:
    packaged = resources.files("emulator.scenario").joinpath("schema.json")
    assert packaged.is_file()
    assert SCHEMA_PATH.is_file()
    assert SCHEMA_PATH == ROOT / "emulator" / "scenario" / "schema.json"


def test_schema_returns_a_copy() -> None:
    first = schema()
    first["title"] = "changed"
    assert schema()["title"] == "botemu scenario"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_validates_and_points_editors_at_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert list(VALIDATOR.iter_errors(yaml.safe_load(text))) == []
    first = text.splitlines()[0]
    match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert match, first
    assert (path.parent / match[1]).resolve() == SCHEMA_PATH.resolve()


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT / "scenarios"))


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[relative(p) for p in SCENARIO_FILES])
def test_every_scenario_file_validates_as_written_and_loads(path: Path) -> None:
    """As an editor sees it (before variables are substituted), and as botemu reads it."""
    assert list(VALIDATOR.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))) == []
    assert load_scenarios(path)


@pytest.mark.parametrize("path", FRAGMENTS, ids=[relative(p) for p in FRAGMENTS])
def test_every_included_file_is_a_valid_list_of_steps_or_turns(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    definitions = schema()["definitions"]
    valid = [
        Draft7Validator({"$ref": f"#/definitions/{d}", "definitions": definitions}).is_valid(data)
        for d in ("steps", "turns")
    ]
    assert any(valid)


def test_the_examples_use_when_rules_a_matrix_expectations_and_includes() -> None:
    documents = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in EXAMPLES]
    rules = [d for d in documents if isinstance(d.get("caller"), dict) and d["caller"].get("when")]
    assert [d for d in rules if "matrix" in d and "expect" in d and "include" in d]


def walk(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema with its JSON pointer."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key not in ("examples", "enum"):
                yield from walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{where}/{i}")


def test_every_property_has_a_description_for_editors() -> None:
    missing = [
        f"{where}/properties/{name}"
        for where, node in walk(schema())
        if isinstance(node.get("properties"), dict)
        for name, prop in node["properties"].items()
        if not prop.get("description")
    ]
    assert missing == []


def test_every_mapping_refuses_unknown_keys() -> None:
    open_mappings = [
        where
        for where, node in walk(schema())
        if node.get("type") == "object" and node.get("additionalProperties") is not False
    ]
    assert open_mappings == []


def step_names() -> list[str]:
    names: list[str] = []
    for ref in schema()["definitions"]["step"]["oneOf"]:
        branch = schema()["definitions"][ref["$ref"].rsplit("/", 1)[1]]
        names += branch.get("required", [])
    return names


def test_the_schema_has_exactly_the_caller_models_steps() -> None:
    # ... and include, which splices a file's steps in (the loader's, not the caller model's)
    assert sorted(step_names()) == sorted([*STEP_NAMES, "include"])
    bare = schema()["definitions"]["bareStep"]["enum"]
    assert sorted(bare) == ["hangup", "listen"]


def test_hangup_during_lists_the_caller_models_targets() -> None:
    hangup = schema()["definitions"]["hangupStep"]["properties"]["hangup"]["anyOf"][1]
    assert hangup["properties"]["during"]["enum"] == [t.value for t in HANGUP_TARGETS]


def test_the_docs_describe_every_step() -> None:
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    for name in STEP_NAMES:
        assert f"`{name}" in docs, name


def keys_of(*path: str) -> list[str]:
    node: Any = schema()
    for part in path:
        node = node[part]
    return list(node["properties"])


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(keys_of(), id="top-level"),
        pytest.param(keys_of("definitions", "expect"), id="expect"),
        pytest.param(keys_of("definitions", "faults"), id="faults"),
        pytest.param(keys_of("definitions", "whenRule"), id="when"),
        pytest.param(keys_of("definitions", "expect", "properties", "call"), id="call"),
        pytest.param(
            keys_of("definitions", "expect", "properties", "outcomes", "items"), id="outcomes"
        ),
        pytest.param(
            keys_of("definitions", "expect", "properties", "replies", "items"), id="replies"
        ),
    ],
)
def test_the_docs_describe_every_key(keys: list[str]) -> None:
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert [k for k in keys if f"`{k}" not in docs] == []


def caller_accepts(step: object) -> bool:
    try:
        CallerScript.from_data([step])
    except CallerScriptError:
        return False
    return True


def schema_accepts(step: object) -> bool:
    return bool(VALIDATOR.is_valid({"name": "x", "caller": [step]}))


STEPS = [
    "listen",
    "hangup",
    {"listen": None},
    {"hangup": None},
    {"hangup": {}},
    {"press": "1"},
    {"press": "0123456789*#ABCD"},
    {"press": 5},
    {"press": {"digits": "12#"}},
    {"press": {"digits": "12#", "gap": "0.5s"}},
    {"press": {"digits": 12, "gap": 1}},
    {"say": "sales"},
    {"say": 7},
    {"silence": "6s"},
    {"silence": "500ms"},
    {"silence": "2m"},
    {"silence": "1.5min"},
    {"silence": "3"},
    {"silence": 2.5},
    {"silence": 86400},
    {"talk": "4s"},
    {"talk": {"for": "30s", "then": "#"}},
    {"talk": {"for": 1, "then": None}},
    {"talk": {"for": 1, "then": 9}},
    {"hangup": {"during": "playPrompt", "after": "1.5s"}},
    {"hangup": {"during": "recognize"}},
    {"hangup": {"during": "record", "after": 0}},
    {"hangup": {"after": "2s"}},
    # refused by both
    "press",
    "say",
    "dance",
    5,
    None,
    [],
    {},
    {"listen": 1},
    {"press": ""},
    {"press": "12x"},
    {"press": "e"},
    {"press": -1},
    {"press": True},
    {"press": {"gap": "1s"}},
    {"press": {"digits": "1", "gapp": "1s"}},
    {"press": "1", "say": "x"},
    {"say": ""},
    {"say": "   "},
    {"say": True},
    {"say": None},
    {"silence": "6 seconds"},
    {"silence": "6h"},
    {"silence": -1},
    {"silence": 86401},
    {"silence": True},
    {"silence": None},
    {"talk": {"then": "#"}},
    {"talk": {"for": "1s", "then": "x"}},
    {"talk": {"for": "1s", "after": "1s"}},
    {"hangup": "now"},
    {"hangup": {"during": "answer"}},
    {"hangup": {"during": "dialing"}},
    {"hangup": {"during": "playPrompt", "after": "soon"}},
    {"hangup": {"before": "1s"}},
]


@pytest.mark.parametrize("step", STEPS, ids=[repr(s) for s in STEPS])
def test_the_schema_accepts_what_the_caller_model_accepts(step: object) -> None:
    assert schema_accepts(step) == caller_accepts(step)


NARROWER = [
    pytest.param({"silence": " 6s"}, id="spaces-around-a-duration"),
    pytest.param({"silence": "6 s"}, id="space-before-the-unit"),
    pytest.param({"silence": ".5s"}, id="no-leading-digit"),
    pytest.param({"press": "1 2 3"}, id="spaces-between-keys"),
    pytest.param({"hangup": {"during": "PlayPrompt"}}, id="action-in-another-case"),
    pytest.param(" listen ", id="spaces-around-a-bare-step"),
]


@pytest.mark.parametrize("step", NARROWER)
def test_the_schema_is_deliberately_narrower_for_these_spellings(step: object) -> None:
    """The caller model (which also reads the inline form) is lenient here; files are written in
    one canonical spelling, which is what editors complete (docs/scenarios.md, Decisions)."""
    assert caller_accepts(step)
    assert not schema_accepts(step)


def test_huge_durations_pass_the_schema_and_are_caught_by_the_caller_model() -> None:
    step = {"silence": "100000s"}
    assert schema_accepts(step)
    assert not caller_accepts(step)
