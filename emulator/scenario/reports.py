"""What a ``botemu test`` run says: the live progress line, the summary table, the details of each
failure, JUnit XML and JSON. Pure functions of the results; nothing here runs a scenario.

A run is a ``RunReport``: one ``Entry`` (a scenario's result and the seed it ran with) per
scenario, in collection order (file by file, matrix entries in file order), whatever order ``-j``
finished them in. A result is anything shaped like the runner's ``ScenarioResult``
(``ScenarioResultLike``). Each result is exactly one of *passed*, *failed* (it ran, and an
expectation or rule failed: its ``failures``), *error* (it could not run: its ``error``) or
*skipped* (it was not run, because the run has no target of the kind it needs: a
``SkippedResult``, whose ``skipped`` says why). A skipped scenario counts neither way: the exit
code is the verdict on the scenarios that ran.

Rule ids are explained through a ``RuleLookup`` (id -> ``Rule``), so that a failure names where
its rule comes from (the spec section or a field note). The formats are documented in
docs/testing.md.

The results are ``results.py``, the human output ``console.py`` and JUnit XML ``junit.py``; the
JSON report is here, and every name is importable from here.
"""

from __future__ import annotations

import time

from emulator import __version__
from emulator.findings import Finding
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.console import (
    CONTEXT,
    PLAIN,
    Paint,
    describe_failure,
    excerpt,
    header,
    progress_line,
    render_failure,
    render_failures,
    split_expected,
    summary,
)
from emulator.scenario.junit import junit_xml
from emulator.scenario.results import (
    Counts,
    Entry,
    RuleLookup,
    RunReport,
    ScenarioResultLike,
    SkippedResult,
    Status,
    file_of,
    location_of,
    skip_reason,
    status_of,
)

__all__ = [
    "CONTEXT",
    "JSON_VERSION",
    "PLAIN",
    "Counts",
    "Entry",
    "Paint",
    "RuleLookup",
    "RunReport",
    "ScenarioResultLike",
    "SkippedResult",
    "Status",
    "describe_failure",
    "excerpt",
    "file_of",
    "header",
    "json_report",
    "junit_xml",
    "location_of",
    "progress_line",
    "render_failure",
    "render_failures",
    "skip_reason",
    "split_expected",
    "status_of",
    "summary",
]

JSON_VERSION = 1
"""The version of the ``--json`` document (bumped when a field changes meaning or goes away)."""


# --- JSON ----------------------------------------------------------------------------------------


def json_report(report: RunReport, rules: RuleLookup) -> JSONObject:
    """The run as one JSON object (docs/testing.md, "JSON report")."""
    total = report.counts
    return {
        "version": JSON_VERSION,
        "botemu": __version__,
        "seed": report.seed,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(report.started)),
        "duration": round(report.duration, 6),
        "jobs": report.jobs,
        "exit_code": report.exit_code,
        "summary": {
            "tests": total.tests,
            "passed": total.passed,
            "failed": total.failed,
            "errors": total.errors,
            "skipped": total.skipped,
            "deselected": report.deselected,
        },
        "db": report.db,
        "scenarios": [_scenario_json(entry, rules) for entry in report.entries],
    }


def _scenario_json(entry: Entry, rules: RuleLookup) -> JSONObject:
    result = entry.result
    scenario = result.scenario
    return {
        "id": scenario.id,
        "name": scenario.name,
        "file": file_of(scenario),
        "line": scenario.line,
        "kind": scenario.kind,
        "tags": list(scenario.tags),
        "variables": dict(scenario.variables),
        "seed": entry.seed,
        "status": entry.status,
        "duration": round(result.duration, 6),
        "vtime": round(result.vtime, 6) if result.vtime is not None else None,
        "error": result.error,
        "skipped": skip_reason(result),
        "failures": [_finding_json(f, rules) for f in result.failures],
        "findings": [_finding_json(f, rules) for f in result.findings],
        "transcripts": list(result.transcript_ids),
        "ladder": list(result.ladder),
    }


def _finding_json(finding: Finding, rules: RuleLookup) -> JSONObject:
    out: JSONObject = dict(finding.to_json())
    rule = rules(finding.rule)
    source: JSON = rule.source if rule is not None else None
    out["source"] = source
    return out
