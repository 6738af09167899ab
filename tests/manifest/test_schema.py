"""The skill manifest JSON Schema: a valid draft-07 schema that says what the spec's tables say."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft7Validator

from emulator.manifest import SCHEMA_ID, SCHEMA_PATH, SCHEMA_VERSION, schema
from emulator.manifest.validate import FORMATS, is_uri

SCHEMA = schema()
DEFS: dict[str, Any] = SCHEMA["definitions"]  # type: ignore[assignment]
PROPS: dict[str, Any] = SCHEMA["properties"]  # type: ignore[assignment]
OTHER_TYPES = [
    "messageReaction",
    "endOfConversation",
    "handoff",
    "typing",
    "conversationUpdate",
    "trace",
    "installationUpdate",
    "contactRelationUpdate",
    "suggestion",
    "deleteUserData",
    "messageUpdate",
    "messageDelete",
]


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node and node["$ref"].startswith("#/definitions/"):
        node = DEFS[node["$ref"].removeprefix("#/definitions/")]
    return node


def walk(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key not in ("enum", "examples", "default"):
                yield from walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{where}/{i}")


def test_the_schema_is_a_valid_draft_07_schema() -> None:
    Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_id_and_version_name_2_1_preview_1() -> None:
    assert SCHEMA["$version"] == SCHEMA_VERSION == "2.1.preview-1"
    assert SCHEMA["$id"] == SCHEMA_ID
    assert SCHEMA_ID.endswith("/skill-manifest-2.1.preview-1.json")
    assert is_uri(SCHEMA_ID)


def test_the_schema_ships_in_the_package() -> None:
    packaged = resources.files("emulator.manifest").joinpath("skill-manifest-2.1.preview-1.json")
    assert packaged.is_file()
    assert json.loads(SCHEMA_PATH.read_text(encoding="utf-8")) == SCHEMA


def test_schema_returns_a_copy() -> None:
    schema()["title"] = "changed"
    assert schema()["title"] == "skill manifest"


def test_every_local_ref_resolves_and_every_pattern_compiles() -> None:
    for where, node in walk(SCHEMA):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            assert ref.removeprefix("#/definitions/") in DEFS, where
        if "pattern" in node:
            re.compile(node["pattern"])


def test_top_level_table() -> None:
    assert SCHEMA["required"] == ["$id", "$schema", "name", "version", "publisherName", "endpoints"]
    assert SCHEMA["additionalProperties"] is False
    assert set(PROPS) == {
        "$schema", "$id", "name", "version", "description", "publisherName", "privacyUrl",
        "copyright", "license", "iconUrl", "tags", "endpoints", "dispatchModels", "activities",
        "activitiesSent", "definitions",
    }  # fmt: skip
    for name in ("$schema", "privacyUrl", "iconUrl"):
        assert PROPS[name] == {
            "description": PROPS[name]["description"],
            "type": "string",
            "format": "uri",
        }
    assert PROPS["tags"]["uniqueItems"] is True
    assert PROPS["endpoints"]["minItems"] == 1
    assert PROPS["endpoints"]["uniqueItems"] is True
    assert PROPS["endpoints"]["items"] == {"$ref": "#/definitions/endpoint"}


def test_endpoint_table() -> None:
    endpoint = DEFS["endpoint"]
    assert endpoint["required"] == ["name", "endpointUrl", "platformAppId"]
    assert endpoint["additionalProperties"] is False
    assert set(endpoint["properties"]) == {
        "name",
        "protocol",
        "description",
        "endpointUrl",
        "platformAppId",
    }
    assert endpoint["properties"]["name"]["default"] == "default"
    assert endpoint["properties"]["protocol"]["default"] == "ConnectorV3"
    assert endpoint["properties"]["endpointUrl"]["format"] == "uri"


def test_dispatch_models_and_language_model_tables() -> None:
    dispatch = PROPS["dispatchModels"]
    assert dispatch["additionalProperties"] is False
    assert set(dispatch["properties"]) == {"languages", "intents"}
    languages = dispatch["properties"]["languages"]
    assert languages["minProperties"] == 1
    models = languages["additionalProperties"]
    assert (models["minItems"], models["uniqueItems"]) == (1, True)
    assert resolve(models["items"]) is DEFS["languageModel"]
    assert dispatch["properties"]["intents"]["uniqueItems"] is True
    model = DEFS["languageModel"]
    assert model["required"] == ["name", "contentType", "url"]
    assert model["additionalProperties"] is False
    assert model["properties"]["url"]["format"] == "uri"
    assert resolve(model["properties"]["name"]) is DEFS["cultureName"]
    assert "propertyNames" not in languages  # culture names: MF-CULTURE-NAME, not the schema


def kinds(section: str) -> list[str]:
    return [
        b["$ref"].removeprefix("#/definitions/")
        for b in PROPS[section]["additionalProperties"]["oneOf"]
    ]


def test_activity_maps_are_one_of_the_kinds_and_activities_sent_has_no_invoke() -> None:
    assert kinds("activities") == [
        "eventActivity",
        "invokeActivity",
        "messageActivity",
        "otherActivities",
    ]
    assert kinds("activitiesSent") == ["eventActivity", "messageActivity", "otherActivities"]


@pytest.mark.parametrize(
    ("kind", "required", "constant"),
    [
        pytest.param("eventActivity", ["type", "name"], "event", id="event"),
        pytest.param("invokeActivity", ["type", "name"], "invoke", id="invoke"),
        pytest.param("messageActivity", ["type"], "message", id="message"),
    ],
)
def test_activity_kinds(kind: str, required: list[str], constant: str) -> None:
    definition = DEFS[kind]
    assert definition["required"] == required
    assert definition["additionalProperties"] is False
    assert definition["properties"]["type"]["const"] == constant
    assert ("name" in definition["properties"]) is (constant != "message")
    for field in ("value", "resultValue"):
        assert resolve(definition["properties"][field]) is DEFS["payloadSchema"]


def test_other_activities_enumerate_fifteen_types_but_the_pattern_excludes_three() -> None:
    other = DEFS["otherActivities"]
    assert other["additionalProperties"] is True
    assert other["required"] == ["type"]
    kind = other["properties"]["type"]
    assert kind["enum"] == ["message", "event", "invoke", *OTHER_TYPES]
    for name in OTHER_TYPES:
        assert re.search(kind["pattern"], name), name
    for name in ("message", "event", "invoke"):
        assert not re.search(kind["pattern"], name), name


def test_payload_schemas_are_objects_valid_against_the_draft_07_metaschema() -> None:
    assert DEFS["payloadSchema"]["type"] == "object"
    assert DEFS["payloadSchema"]["allOf"] == [{"$ref": "http://json-schema.org/draft-07/schema#"}]
    assert PROPS["definitions"]["additionalProperties"] == {"$ref": "#/definitions/payloadSchema"}


APP_IDS = Draft7Validator(
    {"$ref": "#/definitions/endpoint/properties/platformAppId", "definitions": DEFS}
)
CULTURES = Draft7Validator({"$ref": "#/definitions/cultureName", "definitions": DEFS})


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c", True, id="lowercase"),
        pytest.param("2B5F3A8C-0D1E-4F6A-9B7C-1D2E3F4A5B6C", True, id="uppercase"),
        pytest.param("2b5F3a8C-0d1E-4f6A-9b7C-1d2E3f4A5b6C", True, id="mixed-case"),
        pytest.param("00000000-0000-0000-0000-000000000000", True, id="zeros"),
        pytest.param("2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6", False, id="short-last-group"),
        pytest.param("2b5f3a8c0d1e4f6a9b7c1d2e3f4a5b6c", False, id="no-hyphens"),
        pytest.param("{2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c}", False, id="braces"),
        pytest.param("2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6g", False, id="not-hex"),
        pytest.param("2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c\n", False, id="trailing-newline"),
        pytest.param(" 2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c", False, id="leading-space"),
    ],
)
def test_platform_app_id_pattern(value: str, valid: bool) -> None:
    assert APP_IDS.is_valid(value) is valid


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("en-US", id="en-US"),
        pytest.param("en-us", id="lowercase-region"),
        pytest.param("en", id="no-region"),
        pytest.param("SkillBot LU (English)", id="display-name"),
        pytest.param("en-US\n", id="trailing-newline"),
    ],
)
def test_the_schema_does_not_constrain_culture_names_as_the_published_one(value: str) -> None:
    """Regression: the published schema accepts any string as a culture name, and real manifests
    write en-us, en and display names; the spec's form is MF-CULTURE-NAME (a warning)."""
    assert CULTURES.is_valid(value)
    assert set(DEFS["cultureName"]) == {"description", "type"}
    assert not CULTURES.is_valid(5)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("https://skill.example.com/api/messages", True, id="https"),
        pytest.param("http://localhost:3978/api/messages", True, id="http-port"),
        pytest.param("https://[::1]:8443/x?y=1#z", True, id="ipv6-query-fragment"),
        pytest.param("https://example.com/a%20b", True, id="percent-escape"),
        pytest.param("urn:botemu:skill", True, id="urn"),
        pytest.param("file:///models/x.lu", True, id="file"),
        pytest.param("mailto:skills@example.com", True, id="mailto"),
        pytest.param("/api/messages", False, id="relative"),
        pytest.param("www.example.com", False, id="no-scheme"),
        pytest.param("https://exa mple.com", False, id="space"),
        pytest.param("https://example.com/ä", False, id="non-ascii"),
        pytest.param("https://example.com/%zz", False, id="bad-percent"),
        pytest.param("https://example.com:port/", False, id="bad-port"),
        pytest.param("https:", False, id="scheme-only"),
        pytest.param("https:///path", False, id="http-without-host"),
        pytest.param("1http://example.com", False, id="bad-scheme"),
        pytest.param("https://example.com/a#b#c", False, id="two-fragments"),
        pytest.param("https://[::1/x", False, id="open-bracket"),
        pytest.param("", False, id="empty"),
    ],
)
def test_uri_format_is_enforced(value: str, valid: bool) -> None:
    assert is_uri(value) is valid
    assert FORMATS.conforms(value, "uri") is valid


def test_formats_only_constrain_strings() -> None:
    assert is_uri(5) and FORMATS.conforms(None, "uri")
    assert FORMATS.conforms("[a-z]+", "regex") and not FORMATS.conforms("[a-z", "regex")
