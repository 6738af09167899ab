"""Tests for emulator/findings.py: Finding, Severity, RuleRegistry, has_errors."""

from __future__ import annotations

import json

import pytest

from emulator.findings import Finding, Rule, RuleRegistry, Severity, has_errors

ORDER = Finding(
    "WF-ORDER",
    Severity.ERROR,
    "$.actions[1]",
    "answer comes after record",
)
HTTP = Finding(
    "WF-CALLBACK-HTTPS",
    Severity.WARNING,
    "$.links.callback",
    "callback uses http, not https",
    evidence="http://localhost/cb",
)


def test_severity_values_are_the_wire_strings() -> None:
    assert [s.value for s in Severity] == ["error", "warning", "info"]
    assert Severity("warning") is Severity.WARNING
    assert str(Severity.INFO) == "info"
    assert Severity.ERROR == "error"


def test_unknown_severity_is_rejected() -> None:
    with pytest.raises(ValueError, match="fatal"):
        Severity("fatal")


def test_to_json_without_evidence_leaves_it_out() -> None:
    assert ORDER.to_json() == {
        "rule": "WF-ORDER",
        "severity": "error",
        "where": "$.actions[1]",
        "message": "answer comes after record",
    }


def test_to_json_with_evidence() -> None:
    out = HTTP.to_json()
    assert out["evidence"] == "http://localhost/cb"
    assert out["severity"] == "warning"
    assert json.loads(json.dumps(out)) == out
    assert all(type(v) is str for v in out.values())


def test_empty_evidence_is_kept() -> None:
    finding = Finding("WF-DTMF-DIGIT", Severity.ERROR, "$.x", "'' is not a digit", evidence="")
    assert finding.to_json()["evidence"] == ""


@pytest.mark.parametrize(
    ("finding", "text"),
    [
        pytest.param(
            ORDER, "error: $.actions[1]: answer comes after record [WF-ORDER]", id="error"
        ),
        pytest.param(
            HTTP,
            "warning: $.links.callback: callback uses http, not https [WF-CALLBACK-HTTPS]",
            id="warning-evidence-not-shown",
        ),
        pytest.param(Finding("X-1", Severity.INFO, "$", "note"), "info: $: note [X-1]", id="info"),
    ],
)
def test_str(finding: Finding, text: str) -> None:
    assert str(finding) == text


def test_findings_are_frozen_values() -> None:
    copy = Finding("WF-ORDER", Severity.ERROR, "$.actions[1]", "answer comes after record")
    assert copy == ORDER
    assert hash(copy) == hash(ORDER)
    with pytest.raises(AttributeError):
        ORDER.rule = "other"  # type: ignore[misc]


def test_registry_keeps_declaration_order() -> None:
    registry = RuleRegistry("demo")
    first = registry.add("D-B", Severity.ERROR, "spec", "B.")
    registry.add("D-A", Severity.WARNING, "field notes", "A.")
    assert registry.area == "demo"
    assert registry.ids() == ["D-B", "D-A"]
    assert len(registry) == 2
    assert [r.id for r in registry] == ["D-B", "D-A"]
    assert registry["D-B"] is first
    assert first == Rule("D-B", Severity.ERROR, "spec", "B.")


def test_registry_rejects_duplicate_ids() -> None:
    registry = RuleRegistry("demo")
    registry.add("D-A", Severity.ERROR, "spec", "A.")
    with pytest.raises(ValueError, match="D-A registered twice"):
        registry.add("D-A", Severity.WARNING, "spec", "A again.")


def test_registry_duplicate_leaves_the_first_rule() -> None:
    registry = RuleRegistry("demo")
    registry.add("D-A", Severity.ERROR, "spec", "A.")
    with pytest.raises(ValueError):
        registry.add("D-A", Severity.WARNING, "notes", "A again.")
    assert registry["D-A"].severity is Severity.ERROR
    assert len(registry) == 1


def test_registry_unknown_id_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        RuleRegistry("demo")["NOPE"]


@pytest.mark.parametrize(
    ("findings", "expected"),
    [
        pytest.param([], False, id="none"),
        pytest.param([HTTP], False, id="warning-only"),
        pytest.param([Finding("I", Severity.INFO, "$", "fyi")], False, id="info-only"),
        pytest.param([ORDER], True, id="error"),
        pytest.param([HTTP, ORDER], True, id="warning-and-error"),
    ],
)
def test_has_errors(findings: list[Finding], expected: bool) -> None:
    assert has_errors(findings) is expected
    assert has_errors(iter(findings)) is expected


def test_from_json_round_trips_and_refuses_what_is_not_a_finding() -> None:
    from emulator.findings import Finding, Severity

    finding = Finding("WF-ORDER", Severity.ERROR, "$.actions[1]", "out of order", "hangup")
    assert Finding.from_json(finding.to_json()) == finding
    assert Finding.from_json(Finding("X-Y", Severity.INFO, "", "m").to_json()).evidence is None
    for bad in ([], {"rule": "X"}, {"rule": "X", "severity": "fatal", "where": "", "message": ""}):
        with pytest.raises(ValueError):
            Finding.from_json(bad)
