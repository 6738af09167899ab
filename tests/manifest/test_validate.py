"""validate_manifest and load_manifest: the team's manifests, one case per rule, exact pointers
and lines, and properties that hold for any input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from emulator.findings import Finding, Severity
from emulator.manifest import (
    RULES,
    Manifest,
    ManifestError,
    NotAnObjectError,
    load_manifest,
    load_manifest_text,
    position_of,
    schema,
    validate_manifest,
)
from emulator.manifest.validate import FORMATS, MAX_DEPTH, STRICT_RULES

HERE = Path(__file__).parent / "manifests"
BASE: dict[str, Any] = json.loads((HERE / "minimal.json").read_text(encoding="utf-8"))
TRAVEL: dict[str, Any] = json.loads((HERE / "travel-skill.json").read_text(encoding="utf-8"))
REMOVE = object()
APP_ID = "2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c"
MODEL = {"name": "en-US", "contentType": "application/lu", "url": "https://x.example.com/m.lu"}
EVENT = {"type": "event", "name": "BookFlight"}
KEYWORDS = {
    "required",
    "additionalProperties",
    "type",
    "format",
    "pattern",
    "maxLength",
    "minItems",
    "minProperties",
    "uniqueItems",
    "oneOf",
}
"""Every schema keyword the manifest schema can fail with (const and enum only inside oneOf)."""


def mutate(document: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy with each pointer set to its value (REMOVE deletes it; parents are created)."""
    result = copy.deepcopy(document)
    for pointer, value in changes.items():
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
        node: Any = result
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if value is REMOVE:
            del node[int(last) if isinstance(node, list) else last]
        elif isinstance(node, list) and int(last) == len(node):
            node.append(value)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return result


def found(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.rule, f.where) for f in findings]


def nested(depth: int) -> dict[str, Any]:
    schema_: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema_ = {"not": schema_}
    return schema_


# (changes to minimal.json, expected [(rule, pointer)]). Each case names its rule in its id.
CASES = [
    # required
    *(
        pytest.param({f"/{name}": REMOVE}, [("required", "")], id=f"required-{name}")
        for name in ("$schema", "$id", "name", "version", "publisherName", "endpoints")
    ),
    *(
        pytest.param(
            {f"/endpoints/0/{name}": REMOVE},
            [("required", "/endpoints/0")],
            id=f"required-endpoint-{name}",
        )
        for name in ("name", "endpointUrl", "platformAppId")
    ),
    *(
        pytest.param(
            {"/dispatchModels/languages/en-US": [{k: v for k, v in MODEL.items() if k != name}]},
            [("required", "/dispatchModels/languages/en-US/0")],
            id=f"required-languageModel-{name}",
        )
        for name in ("name", "contentType", "url")
    ),
    pytest.param(
        {"/activities/a": {"type": "event"}},
        [("required", "/activities/a")],
        id="required-event-name",
    ),
    pytest.param(
        {"/activities/a": {"type": "invoke"}},
        [("required", "/activities/a")],
        id="required-invoke-name",
    ),
    pytest.param(
        {"/activitiesSent/a": {"type": "event"}},
        [("required", "/activitiesSent/a")],
        id="required-sent-event-name",
    ),
    pytest.param(
        {"/activities/a": {"name": "X"}},
        [("required", "/activities/a")],
        id="required-activity-type",
    ),
    # additionalProperties
    pytest.param(
        {"/skillName": "x"}, [("additionalProperties", "/skillName")], id="additionalProperties-top"
    ),
    pytest.param(
        {"/endpoints/0/appId": APP_ID},
        [("additionalProperties", "/endpoints/0/appId")],
        id="additionalProperties-endpoint",
    ),
    pytest.param(
        {"/dispatchModels/models": []},
        [("additionalProperties", "/dispatchModels/models")],
        id="additionalProperties-dispatchModels",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-US": [{**MODEL, "locale": "en-US"}]},
        [("additionalProperties", "/dispatchModels/languages/en-US/0/locale")],
        id="additionalProperties-languageModel",
    ),
    pytest.param(
        {"/activities/a": {**EVENT, "text": "hi"}},
        [("additionalProperties", "/activities/a/text")],
        id="additionalProperties-event",
    ),
    pytest.param(
        {"/activities/a": {"type": "invoke", "name": "X", "code": 1}},
        [("additionalProperties", "/activities/a/code")],
        id="additionalProperties-invoke",
    ),
    pytest.param(
        {"/activities/a": {"type": "message", "name": "X"}},
        [("additionalProperties", "/activities/a/name")],
        id="additionalProperties-message-name",
    ),
    pytest.param(
        {"/activities/a": {"type": "typing", "any": {"thing": 1}}},
        [],
        id="valid-otherActivities-allow-more",
    ),
    # type
    pytest.param({"/name": 5}, [("type", "/name")], id="type-name"),
    pytest.param({"/tags": ["travel", 1]}, [("type", "/tags/1")], id="type-tags-item"),
    pytest.param(
        {"/endpoints": {"name": "default"}}, [("type", "/endpoints")], id="type-endpoints"
    ),
    pytest.param(
        {"/endpoints/0": "https://x.example.com"}, [("type", "/endpoints/0")], id="type-endpoint"
    ),
    pytest.param({"/dispatchModels": []}, [("type", "/dispatchModels")], id="type-dispatchModels"),
    pytest.param({"/activities": []}, [("type", "/activities")], id="type-activities"),
    pytest.param({"/activities/a": "event"}, [("type", "/activities/a")], id="type-activity"),
    pytest.param(
        {"/activities/a": {"type": 5}}, [("type", "/activities/a/type")], id="type-activity-type"
    ),
    pytest.param(
        {"/activities/a": {**EVENT, "value": "string"}},
        [("type", "/activities/a/value")],
        id="type-value",
    ),
    pytest.param(
        {"/activities/a": {"type": "message", "resultValue": True}},
        [("type", "/activities/a/resultValue")],
        id="type-resultValue",
    ),
    pytest.param({"/definitions/a": True}, [("type", "/definitions/a")], id="type-definition"),
    # format
    pytest.param(
        {"/$schema": "skill-manifest-2.1.preview-1.json"},
        [("format", "/$schema")],
        id="format-$schema",
    ),
    pytest.param(
        {"/privacyUrl": "www.example.com/privacy"},
        [("format", "/privacyUrl")],
        id="format-privacyUrl",
    ),
    pytest.param(
        {"/iconUrl": "https://exa mple.com/i.png"}, [("format", "/iconUrl")], id="format-iconUrl"
    ),
    pytest.param(
        {"/endpoints/0/endpointUrl": "/api/messages"},
        [("format", "/endpoints/0/endpointUrl")],
        id="format-endpointUrl",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-US": [{**MODEL, "url": "models/x.lu"}]},
        [("format", "/dispatchModels/languages/en-US/0/url")],
        id="format-languageModel-url",
    ),
    # pattern, maxLength, propertyNames
    pytest.param(
        {"/endpoints/0/platformAppId": "my-skill"},
        [("pattern", "/endpoints/0/platformAppId")],
        id="pattern-platformAppId",
    ),
    pytest.param(
        {"/endpoints/0/platformAppId": APP_ID[:-1]},
        [("pattern", "/endpoints/0/platformAppId")],
        id="pattern-platformAppId-short",
    ),
    pytest.param(
        {"/endpoints/0/platformAppId": APP_ID.upper()}, [], id="valid-platformAppId-uppercase"
    ),
    pytest.param(
        {"/endpoints/0/platformAppId": APP_ID + "\n"},
        [("maxLength", "/endpoints/0/platformAppId")],
        id="maxLength-platformAppId-newline",
    ),
    # culture names: the spec's form, not the published schema's (a warning unless strict)
    pytest.param(
        {"/dispatchModels/languages/en-US": [{**MODEL, "name": "English"}]},
        [("MF-CULTURE-NAME", "/dispatchModels/languages/en-US/0/name")],
        id="MF-CULTURE-NAME-languageModel-name",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-us": [MODEL]},
        [("MF-CULTURE-NAME", "/dispatchModels/languages/en-us")],
        id="MF-CULTURE-NAME-key-lower-case",
    ),
    pytest.param(
        {"/dispatchModels/languages/en": [MODEL]},
        [("MF-CULTURE-NAME", "/dispatchModels/languages/en")],
        id="MF-CULTURE-NAME-key-bare",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-US\n": [{**MODEL, "name": "en-US\n"}]},
        [
            ("MF-CULTURE-NAME", "/dispatchModels/languages/en-US\n"),
            ("MF-CULTURE-NAME", "/dispatchModels/languages/en-US\n/0/name"),
        ],
        id="MF-CULTURE-NAME-trailing-newline",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-US": [{**MODEL, "name": 5}]},
        [("type", "/dispatchModels/languages/en-US/0/name")],
        id="type-languageModel-name",
    ),
    # minItems, minProperties, uniqueItems
    pytest.param({"/endpoints": []}, [("minItems", "/endpoints")], id="minItems-endpoints"),
    pytest.param(
        {"/dispatchModels/languages/en-US": []},
        [("minItems", "/dispatchModels/languages/en-US")],
        id="minItems-language-models",
    ),
    pytest.param(
        {"/dispatchModels/languages": {}},
        [("minProperties", "/dispatchModels/languages")],
        id="minProperties-languages",
    ),
    pytest.param({"/tags": ["a", "b", "a"]}, [("uniqueItems", "/tags/2")], id="uniqueItems-tags"),
    pytest.param(
        {"/dispatchModels/intents": ["Book", "Book"]},
        [("uniqueItems", "/dispatchModels/intents/1")],
        id="uniqueItems-intents",
    ),
    pytest.param(
        {"/dispatchModels/languages/en-US": [MODEL, MODEL]},
        [("uniqueItems", "/dispatchModels/languages/en-US/1")],
        id="uniqueItems-language-models",
    ),
    pytest.param(
        {"/endpoints/1": BASE["endpoints"][0]},
        [("uniqueItems", "/endpoints/1"), ("MF-ENDPOINT-NAME-UNIQUE", "/endpoints/1/name")],
        id="uniqueItems-endpoints",
    ),
    # oneOf
    pytest.param(
        {"/activities/a": {"type": "evnt", "name": "X"}},
        [("oneOf", "/activities/a/type")],
        id="oneOf-unknown-type",
    ),
    pytest.param(
        {"/activitiesSent/a": {"type": "invoke", "name": "X"}},
        [("oneOf", "/activitiesSent/a/type")],
        id="oneOf-activitiesSent-invoke",
    ),
    pytest.param(
        {"/activities/a": {"type": "invoke", "name": "X"}}, [], id="valid-activities-invoke"
    ),
    # value, resultValue and definitions are draft-07 schemas
    pytest.param(
        {"/activities/bookFlight": {**EVENT, "value": {"properties": {"date": {"type": "strin"}}}}},
        [("MF-PAYLOAD-SCHEMA", "/activities/bookFlight/value/properties/date/type")],
        id="MF-PAYLOAD-SCHEMA-value",
    ),
    pytest.param(
        {"/activities/a": {"type": "message", "resultValue": {"required": "id"}}},
        [("MF-PAYLOAD-SCHEMA", "/activities/a/resultValue/required")],
        id="MF-PAYLOAD-SCHEMA-resultValue",
    ),
    pytest.param(
        {"/activitiesSent/a": {**EVENT, "value": {"minLength": -1}}},
        [("MF-PAYLOAD-SCHEMA", "/activitiesSent/a/value/minLength")],
        id="MF-PAYLOAD-SCHEMA-sent-value",
    ),
    pytest.param(
        {"/definitions/a": {"properties": {"x": "string"}}},
        [("MF-PAYLOAD-SCHEMA", "/definitions/a/properties/x")],
        id="MF-PAYLOAD-SCHEMA-definition",
    ),
    pytest.param(
        {"/definitions/a": {"pattern": "[a-z"}},
        [("MF-PAYLOAD-SCHEMA", "/definitions/a/pattern")],
        id="MF-PAYLOAD-SCHEMA-regex",
    ),
    pytest.param(
        {"/definitions/a": {"type": ["string", "strng"]}},
        [("MF-PAYLOAD-SCHEMA", "/definitions/a/type/1")],
        id="MF-PAYLOAD-SCHEMA-type-list",
    ),
    pytest.param(
        {"/definitions/a": {"$schema": "draft 7"}},
        [("MF-PAYLOAD-SCHEMA", "/definitions/a/$schema")],
        id="MF-PAYLOAD-SCHEMA-uri",
    ),
    pytest.param(
        {"/definitions/a": {"items": "string"}},
        [("MF-PAYLOAD-SCHEMA", "/definitions/a/items")],
        id="MF-PAYLOAD-SCHEMA-anyOf",
    ),
    # $ref
    pytest.param(
        {"/activities/a": {**EVENT, "value": {"$ref": "#/definitions/booking"}}},
        [("MF-REF-UNRESOLVED", "/activities/a/value/$ref")],
        id="MF-REF-UNRESOLVED-value",
    ),
    pytest.param(
        {"/definitions/a": {"type": "array", "items": {"$ref": "#/definitions/b"}}},
        [("MF-REF-UNRESOLVED", "/definitions/a/items/$ref")],
        id="MF-REF-UNRESOLVED-definition",
    ),
    pytest.param(
        {"/definitions/a": {"$ref": "#/name"}},
        [("MF-REF-UNRESOLVED", "/definitions/a/$ref")],
        id="MF-REF-UNRESOLVED-not-a-schema",
    ),
    pytest.param(
        {
            "/definitions/a~1b": {"type": "string"},
            "/definitions/c": {"allOf": [{"$ref": "#/definitions/a~1b"}]},
        },
        [],
        id="valid-ref-escaped",
    ),
    pytest.param(
        {
            "/definitions/a": {
                "$id": "https://x.example.com/a.json",
                "definitions": {"b": {}},
                "$ref": "#/definitions/b",
            }
        },
        [],
        id="valid-ref-own-id",
    ),
    # what the schema cannot say
    pytest.param(
        {
            "/endpoints/1": {
                **BASE["endpoints"][0],
                "endpointUrl": "https://eu.example.com/api/messages",
            }
        },
        [("MF-ENDPOINT-NAME-UNIQUE", "/endpoints/1/name")],
        id="MF-ENDPOINT-NAME-UNIQUE",
    ),
    pytest.param(
        {"/endpoints/0/endpointUrl": "http://localhost:3978/api/messages"},
        [("MF-ENDPOINT-HTTPS", "/endpoints/0/endpointUrl")],
        id="MF-ENDPOINT-HTTPS",
    ),
    pytest.param(
        {"/$schema": "https://schemas.platform.example/schemas/skills/skill-manifest-2.0.0.json"},
        [("MF-SCHEMA-VERSION", "/$schema")],
        id="MF-SCHEMA-VERSION",
    ),
    pytest.param(
        {"/$schema": "https://skills.example.net/v2/skill-manifest-2.1.preview-1.json#"},
        [],
        id="valid-$schema-same-file",
    ),
    pytest.param(
        {
            "/$schema": "https://schemas.example.org/schemas/skills/v2.1.preview-1/skill-manifest.json"
        },
        [],
        id="valid-$schema-published-location",
    ),
    pytest.param(
        {"/$schema": "https://cdn.example.com/v2.1.preview-1/skill-manifest.json#"},
        [],
        id="valid-$schema-published-location-other-host-fragment",
    ),
    pytest.param(
        {
            "/$schema": "http://schemas.example.org/schemas/skills/v2.1.preview-1/skill-manifest.json"
        },
        [("MF-SCHEMA-VERSION", "/$schema")],
        id="MF-SCHEMA-VERSION-published-location-over-http",
    ),
    pytest.param(
        {"/$schema": "https://schemas.example.org/schemas/skills/v2.0/skill-manifest.json"},
        [("MF-SCHEMA-VERSION", "/$schema")],
        id="MF-SCHEMA-VERSION-published-location-other-version",
    ),
    pytest.param(
        {"/$schema": "https://schemas.example.org/schemas/skills/v2.1.preview-1/manifest.json"},
        [("MF-SCHEMA-VERSION", "/$schema")],
        id="MF-SCHEMA-VERSION-published-version-other-file",
    ),
    pytest.param(
        {"/activities/status": EVENT, "/activitiesSent/status": EVENT},
        [("MF-ACTIVITY-NAME-COLLISION", "/activitiesSent/status")],
        id="MF-ACTIVITY-NAME-COLLISION",
    ),
    pytest.param(
        {"/definitions/deep": nested(MAX_DEPTH)},
        [("MF-DEPTH", "/definitions/deep" + "/not" * (MAX_DEPTH - 1))],
        id="MF-DEPTH",
    ),
    pytest.param({"/definitions/deep": nested(MAX_DEPTH - 3)}, [], id="valid-depth-limit"),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
def test_each_rule(changes: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    findings = validate_manifest(mutate(BASE, changes))
    assert found(findings) == expected
    for finding in findings:
        severity = RULES[finding.rule].severity if finding.rule in RULES.ids() else Severity.ERROR
        assert finding.severity is severity
        assert finding.message and finding.message.isprintable()


def test_the_cases_cover_every_rule_and_keyword() -> None:
    named = {rule for case in CASES for rule, _ in cast(list[tuple[str, str]], case.values[1])}
    assert named >= KEYWORDS | set(RULES.ids())
    assert named <= KEYWORDS | set(RULES.ids())


STANDALONE = Draft7Validator(schema(), format_checker=FORMATS)
BEYOND_THE_SCHEMA = {"MF-REF-UNRESOLVED", "MF-DEPTH"}


@pytest.mark.parametrize(("changes", "expected"), [c for c in CASES if "MF-DEPTH" not in str(c.id)])
def test_the_shipped_schema_alone_gives_the_same_verdict(
    changes: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    """Any draft-07 validator with the shipped file agrees (metaschema included), except on what
    only botemu checks."""
    document = mutate(BASE, changes)
    errors = [f for f in validate_manifest(document) if f.severity is Severity.ERROR]
    assert STANDALONE.is_valid(document) is all(f.rule in BEYOND_THE_SCHEMA for f in errors)


@pytest.mark.parametrize("name", ["minimal.json", "travel-skill.json", "calendar-skill.yaml"])
def test_the_team_manifests_validate_clean(name: str) -> None:
    manifest = load_manifest(HERE / name)
    assert validate_manifest(manifest) == []
    assert STANDALONE.is_valid(manifest.document)


def test_the_travel_manifest_has_everything() -> None:
    assert len(TRAVEL["endpoints"]) >= 3
    assert set(TRAVEL["dispatchModels"]["languages"]) == {"en-US", "de-DE"}
    kinds = {
        a["type"] for section in ("activities", "activitiesSent") for a in TRAVEL[section].values()
    }
    assert {"event", "invoke", "message", "typing", "handoff", "conversationUpdate"} <= kinds
    assert "$ref" in json.dumps(TRAVEL["activities"]) and len(TRAVEL["definitions"]) >= 4


FIVE = [
    ("type", "/version", (5, 3)),
    ("pattern", "/endpoints/0/platformAppId", (11, 7)),
    ("format", "/dispatchModels/languages/en-US/0/url", (17, 60)),
    ("required", "/activities/book", (22, 5)),
    ("additionalProperties", "/activities/greet/name", (23, 34)),
]
FIVE_YAML = [(5, 1), (10, 5), (16, 9), (18, 3), (21, 26)]


@pytest.mark.parametrize(
    ("name", "positions"),
    [
        pytest.param("five-errors.json", [p for _, _, p in FIVE], id="json"),
        pytest.param("five-errors.yaml", FIVE_YAML, id="yaml"),
    ],
)
def test_five_independent_errors_give_five_findings_at_exact_places(
    name: str, positions: list[tuple[int, int]]
) -> None:
    manifest = load_manifest(HERE / name)
    findings = validate_manifest(manifest)
    assert found(findings) == [(rule, where) for rule, where, _ in FIVE]
    assert [position_of(manifest, f.where) for f in findings] == positions


def test_messages_say_what_is_wrong_in_plain_english() -> None:
    findings = validate_manifest(load_manifest(HERE / "five-errors.json"))
    assert [f.message for f in findings] == [
        "expected a string, got a number (2)",
        "expected an application ID: 8-4-4-4-12 hexadecimal digits separated by hyphens, such as "
        "2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c, got a string ('2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6')",
        "expected an absolute URI (a scheme such as https:, no spaces), got a string ('models/five.lu')",
        "an event activity needs 'name'",
        "a message activity has no name: the utterance travels in the text property of the message",
    ]
    assert findings[1].evidence == '"2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6"'


def test_payload_schema_findings_point_inside_the_schemas() -> None:
    manifest = load_manifest(HERE / "payload-schemas.json")
    findings = validate_manifest(manifest)
    assert [(f.rule, f.where, position_of(manifest, f.where)) for f in findings] == [
        ("MF-PAYLOAD-SCHEMA", "/activities/bookFlight/value/properties/date/type", (21, 20)),
        ("MF-PAYLOAD-SCHEMA", "/activities/bookFlight/value/required/1", (24, 30)),
        ("MF-REF-UNRESOLVED", "/activities/bookFlight/resultValue/$ref", (26, 23)),
        ("MF-PAYLOAD-SCHEMA", "/definitions/booking/properties/id/pattern", (33, 34)),
        ("MF-REF-UNRESOLVED", "/definitions/booking/properties/travellers/items/$ref", (34, 51)),
        ("MF-PAYLOAD-SCHEMA", "/definitions/traveller/properties/name", (39, 22)),
    ]
    assert findings[0].message == "'strng' is not a JSON Schema type (did you mean 'string'?)"
    assert "(did you mean 'booking'?)" in findings[2].message
    assert findings[5].message.endswith('(write {"type": "string"})')


def test_warnings_alone_leave_a_manifest_valid() -> None:
    findings = validate_manifest(load_manifest(HERE / "warnings-only.json"))
    assert found(findings) == [
        ("MF-SCHEMA-VERSION", "/$schema"),
        ("MF-ENDPOINT-HTTPS", "/endpoints/0/endpointUrl"),
        ("MF-ENDPOINT-NAME-UNIQUE", "/endpoints/1/name"),
        ("MF-ACTIVITY-NAME-COLLISION", "/activitiesSent/status"),
    ]
    assert all(f.severity is Severity.WARNING for f in findings)


@pytest.mark.parametrize(("changes", "expected"), CASES)
def test_strict_makes_only_the_strict_rules_errors(
    changes: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    """--strict: the same findings at the same places; the culture rule becomes an error, and
    every other finding keeps its severity."""
    document = mutate(BASE, changes)
    default, strict = validate_manifest(document), validate_manifest(document, strict=True)
    assert found(strict) == found(default) == expected
    for lax, letter in zip(default, strict, strict=True):
        assert letter.message == lax.message
        promoted = lax.rule in STRICT_RULES
        assert letter.severity is (Severity.ERROR if promoted else lax.severity)
        assert lax.severity is (Severity.WARNING if promoted else lax.severity)


def test_the_strict_rules_are_the_culture_rule_a_warning_by_default() -> None:
    assert STRICT_RULES == {"MF-CULTURE-NAME"}
    assert RULES["MF-CULTURE-NAME"].severity is Severity.WARNING
    assert "field notes" in RULES["MF-CULTURE-NAME"].source


def test_every_missing_property_is_its_own_finding() -> None:
    findings = validate_manifest({})
    assert [f.message for f in findings] == [
        f"a skill manifest needs '{name}'"
        for name in ("$id", "$schema", "name", "version", "publisherName", "endpoints")
    ]


def test_a_root_that_is_not_an_object() -> None:
    assert found(validate_manifest([BASE])) == [("type", "")]
    assert validate_manifest(Manifest(BASE, "x", {})) == []


def test_did_you_mean() -> None:
    findings = validate_manifest(
        mutate(BASE, {"/endpoints/0/platformAppID": APP_ID, "/endpoints/0/platformAppId": REMOVE})
    )
    assert [f.message for f in findings] == [
        "an endpoint needs 'platformAppId'",
        "'platformAppID' is not allowed in an endpoint (did you mean 'platformAppId'?)",
    ]
    unknown = validate_manifest(mutate(BASE, {"/activities/a": {"type": "Event"}}))
    assert unknown[0].message == "unknown activity type 'Event' (did you mean 'event'?)"


def test_position_of_falls_back_to_the_nearest_ancestor() -> None:
    manifest = load_manifest(HERE / "minimal.json")
    assert position_of(manifest, "") == (1, 1)
    assert position_of(manifest, "/endpoints/0/platformAppId") == (11, 7)
    assert position_of(manifest, "/endpoints/0/protocol") == (8, 5)
    assert position_of(manifest, "/nothing/here") == (1, 1)
    assert position_of(Manifest({}, "x", {}), "/a") is None


# --- reading -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "message", "line"),
    [
        pytest.param(
            "m.json",
            b'{"a": 1,}',
            "not valid JSON: a comma before '}' (JSON allows no trailing comma)",
            1,
            id="trailing-comma",
        ),
        pytest.param(
            "m.json",
            b'{"a": [1 2]}',
            "not valid JSON: Expecting ',' delimiter",
            1,
            id="json-syntax",
        ),
        pytest.param(
            "m.json", b'{"a": NaN}', "not valid JSON: NaN is not a JSON number", None, id="json-nan"
        ),
        pytest.param(
            "m.json", b"name: x", "not valid JSON: Expecting value", 1, id="yaml-in-a-json-file"
        ),
        pytest.param("m.yaml", b"a: [1, 2\nb: 3", "not valid YAML:", 2, id="yaml-syntax"),
        pytest.param(
            "m.yaml",
            b"a: !!binary aGk=",
            "unsupported YAML tag tag:yaml.org,2002:binary",
            1,
            id="yaml-binary",
        ),
        pytest.param(
            "m.yaml", b"a: !custom 1", "unsupported YAML tag !custom", 1, id="yaml-custom-tag"
        ),
        pytest.param(
            "m.yaml",
            b"a: &x {b: 1}\nc:\n  <<: *x",
            "merge keys (<<) are not supported",
            3,
            id="yaml-merge",
        ),
        pytest.param("m.yaml", b"? [a]\n: 1", "a key must be text", 1, id="yaml-complex-key"),
        pytest.param("m.yaml", b"a: .nan", ".nan is not a JSON number", 1, id="yaml-nan"),
        pytest.param("m.yaml", b"a: 1\n---\nb: 2", "not valid YAML:", 2, id="yaml-two-documents"),
        pytest.param("m.json", b"\xef\xbb\xbf  \n", "empty", None, id="empty"),
        pytest.param("m.json", b'{"a": "\xff"}', "not UTF-8 text (byte 0xff)", 1, id="not-utf8"),
        pytest.param("m", b"{oops", "not valid JSON", 1, id="no-suffix-json"),
    ],
)
def test_unreadable_manifests(
    tmp_path: Path, name: str, data: bytes, message: str, line: int | None
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert caught.value.message.startswith(message)
    assert caught.value.line == line
    assert caught.value.source == str(path)
    assert "\n" not in str(caught.value)


def test_yaml_aliases_may_not_explode(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [
        f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]"
        for i in range(1, 7)
    ]
    with pytest.raises(ManifestError, match="more than 100000 values"):
        load_manifest_text("\n".join(lines), format="yaml")


def test_missing_directory_and_too_large(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such file"):
        load_manifest(tmp_path / "absent.json")
    with pytest.raises(ManifestError, match="is a directory"):
        load_manifest(tmp_path)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 1024 * 1024 + b"{}")
    with pytest.raises(ManifestError, match="larger than 1 MiB"):
        load_manifest(big)
    with pytest.raises(ManifestError, match="only http and https"):
        load_manifest("ftp://example.com/manifest.json")


def test_a_root_that_is_not_an_object_is_kept_for_validation() -> None:
    with pytest.raises(NotAnObjectError) as caught:
        load_manifest_text("[1, 2]\n")
    assert caught.value.value == [1, 2]
    assert caught.value.positions["/1"] == (1, 5)
    assert caught.value.message == "a skill manifest is a JSON object, got an array"


def test_json_and_yaml_read_alike() -> None:
    text = (HERE / "calendar-skill.yaml").read_text(encoding="utf-8")
    manifest = load_manifest_text(text, "calendar")
    tabbed = json.dumps(manifest.document, indent="\t")  # PyYAML cannot read this
    again = load_manifest_text(tabbed, format="json")
    assert again.document == manifest.document
    assert manifest.document["version"] == "1.4"
    assert manifest.positions["/activities/createMeeting/value/$ref"] == (36, 13)
    line, column = again.positions["/endpoints/1"]
    assert tabbed.split("\n")[line - 1] == "\t\t{" and column == 3


def test_a_bom_and_a_date_in_yaml() -> None:
    manifest = load_manifest_text("\ufeffversion: 2024-01-31\n1: x\n")
    assert manifest.document == {"version": "2024-01-31", "1": "x"}


# --- properties ----------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
KEYS = sorted(
    {
        *BASE,
        *TRAVEL,
        "type",
        "name",
        "value",
        "resultValue",
        "$ref",
        "properties",
        "items",
        "languages",
        "en-US",
    }
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)


def pointers(value: Any, at: str = "") -> list[str]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += pointers(v, f"{at}/{k.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += pointers(v, f"{at}/{i}")
    return out


TRAVEL_POINTERS = pointers(TRAVEL)[1:]


def well_formed(findings: list[Finding]) -> bool:
    return all(
        (f.where == "" or f.where.startswith("/")) and f.message.isprintable() and f.rule
        for f in findings
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_validate_never_raises_on_any_json_value(value: Any) -> None:
    assert well_formed(validate_manifest(value))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(TRAVEL_POINTERS), json_values | st.just(REMOVE)),
        min_size=1,
        max_size=3,
    )
)
@example([("/definitions/flightRequest/dependencies", {"\x1f": None})])  # a control character
def test_validate_never_raises_on_a_mutated_valid_manifest(changes: list[tuple[str, Any]]) -> None:
    document = copy.deepcopy(TRAVEL)
    for pointer, value in changes:
        try:
            document = mutate(document, {pointer: value})
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            continue  # an earlier change removed or replaced the parent
    findings = validate_manifest(document)
    assert well_formed(findings)
    errors = [
        f for f in findings if f.severity is Severity.ERROR and f.rule not in BEYOND_THE_SCHEMA
    ]
    assert STANDALONE.is_valid(document) is (errors == [])
    strict = validate_manifest(document, strict=True)
    assert [(f.rule, f.where, f.message) for f in strict] == [
        (f.rule, f.where, f.message) for f in findings
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.sampled_from([None, "json", "yaml"]))
def test_reading_any_text_raises_only_manifest_error(text: str, form: Any) -> None:
    try:
        manifest = load_manifest_text(text, format=form)
    except ManifestError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(manifest.document, dict)


MINIMAL_TEXT = (HERE / "minimal.json").read_text(encoding="utf-8")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(MINIMAL_TEXT) - 1), st.integers(0, 5), st.text(max_size=3))
def test_reading_damaged_manifests_raises_only_manifest_error(
    at: int, cut: int, insert: str
) -> None:
    text = MINIMAL_TEXT[:at] + insert + MINIMAL_TEXT[at + cut :]
    for form in (None, "yaml"):
        try:
            manifest = load_manifest_text(text, format=form)
        except ManifestError:
            continue
        assert well_formed(validate_manifest(manifest))


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), json_values, max_size=5), st.sampled_from([None, 2, "\t"])
)
def test_json_positions_are_exact(document: dict[str, Any], indent: Any) -> None:
    text = json.dumps(document, indent=indent)
    manifest = load_manifest_text(text, format="json")
    lines = text.split("\n")
    for pointer in pointers(document):
        line, column = manifest.positions[pointer]
        rest = lines[line - 1][column - 1 :]
        *parents, last = pointer.split("/") if pointer else [""]
        parent: Any = document
        for part in parents[1:]:
            parent = (
                parent[int(part)]
                if isinstance(parent, list)
                else parent[part.replace("~1", "/").replace("~0", "~")]
            )
        if pointer and isinstance(parent, dict):
            assert rest.startswith(json.dumps(last.replace("~1", "/").replace("~0", "~")) + ":")
        else:
            assert rest[:1] in "{[" if pointer == "" else rest[:1] != ""


def test_text_nested_too_deeply_is_refused_and_a_deep_document_is_not_validated() -> None:
    for form in ("json", "yaml"):
        with pytest.raises(ManifestError, match="nested too deeply"):
            load_manifest_text('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}", format=form)
    # YAML is refused as it is scanned, at the bracket with more than 500 collections around it
    # (the flow mapping and 500 brackets): before, the scanner read all 50,000 first (2-5 s).
    with pytest.raises(ManifestError) as refused:
        load_manifest_text('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}", format="yaml")
    assert (refused.value.line, refused.value.column) == (1, 507)
    with pytest.raises(ManifestError, match="nested too deeply"):  # PyYAML's own limit, below it
        load_manifest_text('{"a": ' + "[" * 497 + "]" * 497 + "}", format="yaml")
    deep = load_manifest_text('{"a": ' + "[" * 200 + "]" * 200 + "}")
    assert found(validate_manifest(deep)) == [("MF-DEPTH", "/a" + "/0" * MAX_DEPTH)]


def test_the_docs_name_every_rule_and_keyword() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "manifests.md").read_text(encoding="utf-8")
    for name in sorted(KEYWORDS | set(RULES.ids())):
        assert f"`{name}`" in docs, name


def test_a_payload_pattern_python_warns_about_is_still_a_regex() -> None:
    """Regression: ``format: regex`` on a pattern with ``[[`` let Python's FutureWarning out."""
    manifest = load_manifest_text(json.dumps(mutate(load_manifest(HERE / "travel-skill.json").document, {
        "/activities/bookFlight/value": {"type": "string", "pattern": "^[[]ab]+$"},
    })))  # fmt: skip
    assert not [f for f in validate_manifest(manifest) if "pattern" in f.where]
