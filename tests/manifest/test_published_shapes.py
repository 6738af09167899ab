"""Manifests shaped like the published ones (issue "Real skill manifests pass").

Real manifests with ``dispatchModels`` write the language-map keys in lower case (``en-us``) or bare
(``en``), give ``languageModel.name`` as a display name ("SkillBot LU (English)") and point
``$schema`` at the published location (``.../v2.1.preview-1/skill-manifest.json``). The published
schema constrains none of that; the spec constrains the culture names (field notes: a warning by
default, an error with ``--strict``). ``manifests/published-shapes.json`` is written for these
tests in that shape, with a neutral host.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from emulator.findings import Finding, Severity
from emulator.manifest import load_manifest, load_manifest_text, position_of, schema
from emulator.manifest import validate_manifest as validate
from emulator.manifest.validate import FORMATS, SCHEMA_ID

HERE = Path(__file__).parent / "manifests"
SHAPES = HERE / "published-shapes.json"
DOCUMENT: dict[str, Any] = json.loads(SHAPES.read_text(encoding="utf-8"))
MINIMAL: dict[str, Any] = json.loads((HERE / "minimal.json").read_text(encoding="utf-8"))
PUBLISHED = "https://schemas.skills.example.org/schemas/skills/v2.1.preview-1/skill-manifest.json"
MODEL = {"name": "en-US", "contentType": "application/lu", "url": "https://x.example.com/m.lu"}
STANDALONE = Draft7Validator(schema(), format_checker=FORMATS)

CULTURES = [
    ("/dispatchModels/languages/en-us", (24, 7)),
    ("/dispatchModels/languages/en-us/0/name", (26, 11)),
    ("/dispatchModels/languages/fr", (32, 7)),
    ("/dispatchModels/languages/fr/0/name", (34, 11)),
    ("/dispatchModels/languages/de-DE/0/name", (41, 11)),
]
"""Every place of published-shapes.json that is not a culture name in the spec's form."""


def with_languages(languages: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(MINIMAL)
    document["dispatchModels"] = {"languages": languages}
    return document


def places(findings: list[Finding]) -> list[tuple[str, str, Severity]]:
    return [(f.rule, f.where, f.severity) for f in findings]


def test_real_manifest_shapes_lower_case_culture_keys_are_a_warning() -> None:
    document = with_languages({"en-us": [MODEL]})
    assert places(validate(document)) == [
        ("MF-CULTURE-NAME", "/dispatchModels/languages/en-us", Severity.WARNING)
    ]
    (finding,) = validate(document)
    assert "'en-us'" in finding.message and finding.message.endswith("did you mean 'en-US'?")
    assert finding.evidence == "en-us"
    assert places(validate(document, strict=True)) == [
        ("MF-CULTURE-NAME", "/dispatchModels/languages/en-us", Severity.ERROR)
    ]


def test_real_manifest_shapes_bare_culture_keys_are_a_warning() -> None:
    document = with_languages({"en": [MODEL]})
    (finding,) = validate(document)
    assert (finding.rule, finding.where, finding.severity) == (
        "MF-CULTURE-NAME",
        "/dispatchModels/languages/en",
        Severity.WARNING,
    )
    assert finding.message.endswith("'en' has no region")
    assert [f.severity for f in validate(document, strict=True)] == [Severity.ERROR]


def test_real_manifest_shapes_display_name_language_models_are_a_warning() -> None:
    model = {**MODEL, "name": "SkillBot LU (English)"}
    document = with_languages({"en-US": [model]})
    (finding,) = validate(document)
    assert (finding.rule, finding.where, finding.severity) == (
        "MF-CULTURE-NAME",
        "/dispatchModels/languages/en-US/0/name",
        Severity.WARNING,
    )
    assert "got 'SkillBot LU (English)'" in finding.message
    assert finding.message.endswith("the culture of its key is 'en-US'")
    assert [f.severity for f in validate(document, strict=True)] == [Severity.ERROR]


def test_real_manifest_shapes_lower_case_key_and_display_name_together() -> None:
    """The shape of the SDK's samples: both findings, each at its own place."""
    document = with_languages({"en-us": [{**MODEL, "name": "SkillBot LU (English)"}]})
    assert [f.where for f in validate(document)] == [
        "/dispatchModels/languages/en-us",
        "/dispatchModels/languages/en-us/0/name",
    ]
    assert validate(document)[1].message.endswith("the culture of its key is 'en-US'")


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param(PUBLISHED, id="published-location"),
        pytest.param(
            "https://schemas.example.com/schemas/skills/v2.1.preview-1/skill-manifest.json",
            id="another-host",
        ),
        pytest.param("https://example.net/v2.1.preview-1/skill-manifest.json#", id="fragment"),
        pytest.param("HTTPS://example.net/x/v2.1.preview-1/skill-manifest.json", id="scheme-case"),
        pytest.param(SCHEMA_ID, id="botemu-id"),
        pytest.param(
            "file:///schemas/skill-manifest-2.1.preview-1.json", id="same-file-any-scheme"
        ),
    ],
)
def test_real_manifest_shapes_published_schema_location_is_known(uri: str) -> None:
    assert validate({**MINIMAL, "$schema": uri}) == []


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param(PUBLISHED.replace("https:", "http:"), id="http"),
        pytest.param(PUBLISHED.replace("v2.1.preview-1", "v2.0"), id="other-version"),
        pytest.param(PUBLISHED.replace("v2.1.preview-1", "v2.1.preview-10"), id="longer-version"),
        pytest.param(PUBLISHED + "/", id="trailing-slash"),
        pytest.param(PUBLISHED.replace("/v2.1", "/xv2.1"), id="segment-suffix"),
    ],
)
def test_other_schema_locations_still_warn(uri: str) -> None:
    assert places(validate({**MINIMAL, "$schema": uri})) == [
        ("MF-SCHEMA-VERSION", "/$schema", Severity.WARNING)
    ]


def test_real_manifest_shapes_pass_by_default_and_fail_with_strict() -> None:
    manifest = load_manifest(SHAPES)
    findings = validate(manifest)
    assert [(f.where, position_of(manifest, f.where)) for f in findings] == CULTURES
    assert {(f.rule, f.severity) for f in findings} == {("MF-CULTURE-NAME", Severity.WARNING)}
    strict = validate(manifest, strict=True)
    assert [(f.where, position_of(manifest, f.where)) for f in strict] == CULTURES
    assert {(f.rule, f.severity) for f in strict} == {("MF-CULTURE-NAME", Severity.ERROR)}


def test_real_manifest_shapes_agree_with_the_shipped_schema() -> None:
    """Like the published schema, the shipped one accepts these manifests: any draft-07 validator
    with it and botemu (by default) give the same verdict."""
    assert STANDALONE.is_valid(DOCUMENT)
    assert DOCUMENT["$schema"] == PUBLISHED


def test_real_manifest_shapes_only_the_culture_names_fail_strict() -> None:
    """The spec's form passes strict; other warnings stay warnings under strict."""
    fixed = copy.deepcopy(DOCUMENT)
    languages = fixed["dispatchModels"]["languages"]
    fixed["dispatchModels"]["languages"] = {
        "en-US": [{**languages["en-us"][0], "name": "en-US"}],
        "fr-FR": [{**languages["fr"][0], "name": "fr-FR"}],
        "de-DE": [{**languages["de-DE"][0], "name": "de-DE"}],
    }
    assert validate(fixed, strict=True) == []
    fixed["endpoints"][0]["endpointUrl"] = "http://localhost:3978/api/messages"
    assert places(validate(fixed, strict=True)) == [
        ("MF-ENDPOINT-HTTPS", "/endpoints/0/endpointUrl", Severity.WARNING)
    ]


def test_real_manifest_shapes_in_yaml_keep_their_positions() -> None:
    text = (
        f"$schema: {PUBLISHED}\n"
        "$id: FlightStatusSkill\n"
        "name: Flight status skill\n"
        'version: "1.2"\n'
        "publisherName: Example Airways\n"
        "endpoints:\n"
        "  - name: default\n"
        "    endpointUrl: https://flights.example.org/api/messages\n"
        "    platformAppId: 7d3e9a10-4b2c-4f5e-8a6d-0c1b2a3d4e5f\n"
        "dispatchModels:\n"
        "  languages:\n"
        "    en-us:\n"
        "      - name: FlightStatus LU (English)\n"
        "        contentType: application/lu\n"
        "        url: https://flights.example.org/models/FlightStatus-en.lu\n"
    )
    manifest = load_manifest_text(text, "shapes.yaml", format="yaml")
    for strict, severity in ((False, Severity.WARNING), (True, Severity.ERROR)):
        findings = validate(manifest, strict=strict)
        assert [(f.where, f.severity, position_of(manifest, f.where)) for f in findings] == [
            ("/dispatchModels/languages/en-us", severity, (12, 5)),
            ("/dispatchModels/languages/en-us/0/name", severity, (13, 9)),
        ]
