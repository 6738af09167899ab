"""The run as JUnit XML (the Jenkins/Ant format that CI servers read; tests/scenario/junit.xsd
checks it): one ``<testsuite>`` per scenario file, one ``<testcase>`` per scenario."""

from __future__ import annotations

import re
import socket
import time
import xml.etree.ElementTree as ET

from emulator import __version__
from emulator.scenario.console import describe_failure, one_line
from emulator.scenario.results import (
    Counts,
    Entry,
    RuleLookup,
    RunReport,
    file_of,
    location_of,
    skip_reason,
)

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text that XML 1.0 can carry: characters it cannot (NUL, most C0 controls, lone
    surrogates) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(report: RunReport, rules: RuleLookup) -> str:
    """The run as JUnit XML (the Jenkins/Ant format, tests/scenario/junit.xsd): one
    ``<testsuite>`` per scenario file, one ``<testcase>`` per scenario and matrix entry
    (``classname`` the file, ``name`` the scenario id), ``<failure>`` with every failure's
    details, ``<error>`` when it could not run, and its ladder in ``<system-out>``."""
    total = report.counts
    root = ET.Element("testsuites", {
        "name": "botemu test",
        "tests": str(total.tests),
        "failures": str(total.failed),
        "errors": str(total.errors),
        "skipped": str(total.skipped),
        "time": _seconds(report.duration),
    })  # fmt: skip
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(report.started))
    host = _xml(socket.gethostname() or "localhost")
    for index, (file, entries) in enumerate(report.files()):
        c = Counts()
        for entry in entries:
            c = c.add(entry)
        suite = ET.SubElement(root, "testsuite", {
            "name": _xml(file),
            "tests": str(c.tests),
            "failures": str(c.failed),
            "errors": str(c.errors),
            "skipped": str(c.skipped),
            "time": _seconds(c.time),
            "timestamp": stamp,
            "hostname": host,
            "id": str(index),
        })  # fmt: skip
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "seed", "value": str(report.seed)})
        ET.SubElement(properties, "property", {"name": "botemu", "value": __version__})
        for entry in entries:
            _testcase(suite, entry, rules)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _testcase(suite: ET.Element, entry: Entry, rules: RuleLookup) -> None:
    result = entry.result
    scenario = result.scenario
    attributes = {
        "classname": _xml(file_of(scenario)),
        "name": _xml(scenario.id),
        "time": _seconds(result.duration),
        "file": _xml(file_of(scenario)),
    }
    if scenario.line is not None:
        attributes["line"] = str(scenario.line)
    case = ET.SubElement(suite, "testcase", attributes)
    status = entry.status
    if status == "skipped":
        reason = skip_reason(result) or ""
        ET.SubElement(case, "skipped", {"message": _xml(one_line(reason))}).text = _xml(reason)
    elif status == "error":
        error = ET.SubElement(case, "error", {"message": _xml(one_line(result.error or "")),
                                              "type": "error"})  # fmt: skip
        error.text = _xml(result.error or "")
    elif status == "failed":
        failures = result.failures
        first = failures[0] if failures else None
        message = f"{first.where}: {first.message}" if first else "the scenario failed"
        failure = ET.SubElement(case, "failure", {
            "message": _xml(one_line(message)),
            "type": _xml(first.rule if first else "failed"),
        })  # fmt: skip
        details = [line for f in failures for line in describe_failure(f, rules)]
        failure.text = _xml("\n".join(details or [message]))
    out = [f"scenario {scenario.id} ({location_of(scenario)}), seed {entry.seed}"]
    if result.transcript_ids:
        out.append("transcripts: " + ", ".join(result.transcript_ids))
    virtual = f"virtual time {result.vtime:.2f} s, " if result.vtime is not None else ""
    out.append(f"{virtual}wall {result.duration:.3f} s")
    if result.ladder:
        out += ["", *result.ladder]
    ET.SubElement(case, "system-out").text = _xml("\n".join(out) + "\n")


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"
