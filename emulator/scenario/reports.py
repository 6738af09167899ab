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
"""

from __future__ import annotations

import os
import re
import socket
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO

from emulator import __version__
from emulator.findings import Finding, Rule
from emulator.jsonutil import JSON, JSONObject
from emulator.scenario.model import Scenario

Status = Literal["passed", "failed", "error", "skipped"]
RuleLookup = Callable[[str], Rule | None]
JSON_VERSION = 1
"""The version of the ``--json`` document (bumped when a field changes meaning or goes away)."""
CONTEXT = 3
"""Ladder lines shown on each side of the line a failure points at."""


class ScenarioResultLike(Protocol):
    """What a report needs of a scenario's result (``emulator.runner.runner.ScenarioResult``).

    ``failures``: the findings that made it fail (expectations not met, error findings the
    scenario did not expect); ``findings``: every finding of the run. ``ladder``: the transcript
    as ``botemu call`` prints it, one line per event. ``duration``: wall seconds; ``vtime``:
    virtual seconds of a call (None for a conversation). ``error``: why it could not run at all (None when it ran)."""

    @property
    def scenario(self) -> Scenario: ...
    @property
    def passed(self) -> bool: ...
    @property
    def failures(self) -> Sequence[Finding]: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def transcript_ids(self) -> Sequence[str]: ...
    @property
    def duration(self) -> float: ...
    @property
    def vtime(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def ladder(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class SkippedResult:
    """A scenario that was not run: the run has no target of the kind it needs (a calling bot
    for a call or ``probe: auth-calling``, a messaging bot for a conversation or ``probe:
    auth``). ``skipped`` is the reason, one line. ``passed`` is True so that a skipped scenario
    fails nothing (``status_of`` says ``skipped``)."""

    scenario: Scenario
    skipped: str
    passed: bool = True
    failures: tuple[Finding, ...] = ()
    findings: tuple[Finding, ...] = ()
    transcript_ids: tuple[str, ...] = ()
    duration: float = 0.0
    vtime: float | None = None
    error: str | None = None
    ladder: tuple[str, ...] = ()


def skip_reason(result: ScenarioResultLike) -> str | None:
    """Why ``result`` was skipped, or None when it ran (or tried to)."""
    reason = getattr(result, "skipped", None)
    return reason if isinstance(reason, str) else None


def status_of(result: ScenarioResultLike) -> Status:
    if skip_reason(result) is not None:
        return "skipped"
    if result.error is not None:
        return "error"
    return "passed" if result.passed and not result.failures else "failed"


@dataclass(frozen=True, slots=True)
class Entry:
    """One scenario of a run: its result and the seed it ran with."""

    result: ScenarioResultLike
    seed: int

    @property
    def status(self) -> Status:
        return status_of(self.result)


@dataclass(frozen=True, slots=True)
class Counts:
    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    time: float = 0.0
    skipped: int = 0

    def add(self, entry: Entry) -> Counts:
        status = entry.status
        return Counts(
            self.tests + 1,
            self.passed + (status == "passed"),
            self.failed + (status == "failed"),
            self.errors + (status == "error"),
            self.time + entry.result.duration,
            self.skipped + (status == "skipped"),
        )

    @property
    def ran(self) -> int:
        return self.tests - self.skipped


@dataclass(frozen=True, slots=True)
class RunReport:
    """A whole run. ``seed`` is the run's seed (``--seed``); ``started`` wall-clock epoch
    seconds; ``duration`` wall seconds of the whole run (less than the sum with ``-j``)."""

    entries: tuple[Entry, ...]
    seed: int
    started: float
    duration: float
    deselected: int = 0
    jobs: int = 1
    db: str | None = None

    @property
    def counts(self) -> Counts:
        total = Counts()
        for entry in self.entries:
            total = total.add(entry)
        return total

    def files(self) -> list[tuple[str, list[Entry]]]:
        """The entries by file, files in order of first appearance."""
        groups: dict[str, list[Entry]] = {}
        for entry in self.entries:
            groups.setdefault(file_of(entry.result.scenario), []).append(entry)
        return list(groups.items())

    @property
    def exit_code(self) -> int:
        """0 when every scenario that ran passed; 1 when one failed or could not run, or when
        the report is empty; 2 when every scenario was skipped (no target for any: the command
        refuses that run before there is a report). Skipped scenarios count neither way."""
        counts = self.counts
        if counts.tests and not counts.ran:
            return 2
        return 0 if counts.ran and counts.passed == counts.ran else 1

    def skipped(self) -> list[tuple[str, int]]:
        """Each reason scenarios were skipped for, with how many, in order of first appearance."""
        reasons: dict[str, int] = {}
        for entry in self.entries:
            reason = skip_reason(entry.result)
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
        return list(reasons.items())


def file_of(scenario: Scenario) -> str:
    return str(scenario.path) if scenario.path is not None else "<scenario>"


def location_of(scenario: Scenario) -> str:
    file = file_of(scenario)
    return f"{file}:{scenario.line}" if scenario.line is not None else file


# --- colour --------------------------------------------------------------------------------------


class Paint:
    """ANSI colour, or nothing (``NO_COLOR`` set, or not a terminal)."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    @classmethod
    def for_stream(cls, stream: TextIO) -> Paint:
        tty = hasattr(stream, "isatty") and stream.isatty()
        return cls(bool(tty) and not os.environ.get("NO_COLOR"))

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def status(self, status: Status) -> str:
        word, code = {"passed": ("PASS ", "32"), "failed": ("FAIL ", "31"),
                      "error": ("ERROR", "31;1"), "skipped": ("SKIP ", "33")}[status]  # fmt: skip
        return self(word, code)


PLAIN = Paint(False)


# --- human output --------------------------------------------------------------------------------


def progress_line(entry: Entry, paint: Paint = PLAIN) -> str:
    """The line printed as a scenario finishes: ``PASS  main menu, sales by keypad  (0.04 s)``."""
    result = entry.result
    line = f"{paint.status(entry.status)} {result.scenario.id}  ({result.duration:.2f} s)"
    if result.error is not None:
        line += f"  {_one_line(result.error)}"
    reason = skip_reason(result)
    if reason is not None:
        line += f"  {_one_line(reason)}"
    return line


def header(report_size: int, files: int, deselected: int, seed: int, jobs: int) -> str:
    """The line printed before the first scenario runs."""
    more = f", {deselected} deselected" if deselected else ""
    return (
        f"botemu test: {_count(report_size, 'scenario')} from {_count(files, 'file')}{more} · "
        f"seed {seed} · -j {jobs}"
    )


def summary(report: RunReport, paint: Paint = PLAIN) -> str:
    """The table of results per file and in total (with a ``skipped`` column when a scenario
    was skipped), then one line per skip reason, then one verdict line with the seed."""
    total = report.counts
    with_skips = total.skipped > 0

    def row(name: str, c: Counts, seconds: float) -> tuple[str, ...]:
        cells = (name, str(c.tests), str(c.passed), str(c.failed), str(c.errors))
        return (*cells, *((str(c.skipped),) if with_skips else ()), f"{seconds:.2f} s")

    rows: list[tuple[str, ...]] = [
        ("file", "tests", "passed", "failed", "errors", *(("skipped",) if with_skips else ()),
         "time")
    ]  # fmt: skip
    for file, entries in report.files():
        c = Counts()
        for entry in entries:
            c = c.add(entry)
        rows.append(row(file, c, c.time))
    rows.append(row("total", total, report.duration))
    width = max(len(r[0]) for r in rows)
    widths = (width, 5, 6, 6, 6, *((7,) if with_skips else ()), 9)
    lines = [
        "  ".join(
            f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(-1, "-" * len(lines[0]))
    for reason, n in report.skipped():
        lines.append(f"skipped {_count(n, 'scenario')}: {_one_line(reason)}")
    parts = [f"{total.failed} failed"] if total.failed else []
    parts += [_count(total.errors, "error")] if total.errors else []
    parts.append(f"{total.passed} passed")
    parts += [f"{total.skipped} skipped"] if total.skipped else []
    verdict = paint("PASSED", "32;1") if report.exit_code == 0 else paint("FAILED", "31;1")
    lines.append("")
    lines.append(f"{verdict}: {', '.join(parts)} in {report.duration:.2f} s · seed {report.seed} "
                 f"(--seed {report.seed} repeats this run)")  # fmt: skip
    if report.db:
        lines.append(f"transcripts in {report.db} (botemu transcript show ID)")
    return "\n".join(lines)


def render_failure(entry: Entry, rules: RuleLookup, paint: Paint = PLAIN) -> str:
    """Why one scenario failed: expected versus actual for each failure, the rule's source, and
    the transcript around it."""
    result = entry.result
    scenario = result.scenario
    status = entry.status
    title = f"{paint.status(status)} {scenario.id}  ({location_of(scenario)})"
    lines = [title, f"  seed {entry.seed}" + _transcripts(result.transcript_ids)]
    if result.error is not None:
        lines.append(f"  could not run: {result.error}")
    for finding in result.failures:
        lines += ["  " + line for line in describe_failure(finding, rules, paint)]
    if result.ladder:
        lines.append("  transcript:")
        lines += ["    " + line for line in excerpt(result.ladder, _first(result))]
    return "\n".join(lines)


def render_failures(
    results: Iterable[ScenarioResultLike | Entry], rules: RuleLookup, paint: Paint = PLAIN
) -> str:
    """Every failed or errored scenario of ``results``, one block each ('' when all passed).
    Results given without an ``Entry`` show seed 0."""
    blocks = []
    for item in results:
        entry = item if isinstance(item, Entry) else Entry(item, 0)
        if entry.status in ("failed", "error"):
            blocks.append(render_failure(entry, rules, paint))
    return "\n\n".join(blocks)


def describe_failure(finding: Finding, rules: RuleLookup, paint: Paint = PLAIN) -> list[str]:
    """A failure as lines: where, what was expected and what came instead (an expectation's
    message ``expected X, got Y`` is split in two), the rule with its source, and the evidence
    (the transcript facts the finding was judged on), one line each."""
    lines = [f"{paint('✗', '31')} {finding.where}  [{finding.rule}]"]
    expected, actual = split_expected(finding.message)
    if actual is None:
        lines.append(f"    {finding.message}")
    else:
        lines += [f"    expected: {expected}", f"    actual:   {actual}"]
    rule = rules(finding.rule)
    if rule is not None:
        lines.append(f"    rule {rule.id} ({rule.severity.value}, {rule.source}): {rule.summary}")
    if finding.evidence:
        lines.append("    evidence:")
        lines += [f"      {line}" for line in finding.evidence.splitlines()]
    return lines


def split_expected(message: str) -> tuple[str, str | None]:
    """``expected X, got Y`` as (X, Y); any other message as (message, None)."""
    if message.startswith("expected ") and ", got " in message:
        expected, _, actual = message.removeprefix("expected ").partition(", got ")
        return expected, actual
    return message, None


def excerpt(ladder: Sequence[str], finding: Finding | None, context: int = CONTEXT) -> list[str]:
    """The ladder lines around the one that records ``finding`` (marked ``>``), or the end of
    the ladder when no line records it (an expectation is judged after the call)."""
    hit = _find(ladder, finding) if finding is not None else None
    if hit is None:
        start, end = max(0, len(ladder) - (2 * context + 1)), len(ladder)
    else:
        start, end = max(0, hit - context), min(len(ladder), hit + context + 1)
    out = ["  ..."] if start > 0 else []
    out += [("> " if i == hit else "  ") + ladder[i] for i in range(start, end)]
    if end < len(ladder):
        out.append("  ...")
    return out


def _find(ladder: Sequence[str], finding: Finding) -> int | None:
    tag = f"[{finding.rule}]"
    for needle in (f"{finding.message} {tag}", tag, finding.message):
        for i, line in enumerate(ladder):
            if needle and needle in line:
                return i
    return None


def _first(result: ScenarioResultLike) -> Finding | None:
    return result.failures[0] if result.failures else None


def _transcripts(ids: Sequence[str]) -> str:
    if not ids:
        return ""
    shown = ", ".join(i[:12] for i in ids)
    return f" · transcript {shown} (botemu transcript show {ids[0][:12]})"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- JUnit XML -----------------------------------------------------------------------------------

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
        ET.SubElement(case, "skipped", {"message": _xml(_one_line(reason))}).text = _xml(reason)
    elif status == "error":
        error = ET.SubElement(case, "error", {"message": _xml(_one_line(result.error or "")),
                                              "type": "error"})  # fmt: skip
        error.text = _xml(result.error or "")
    elif status == "failed":
        failures = result.failures
        first = failures[0] if failures else None
        message = f"{first.where}: {first.message}" if first else "the scenario failed"
        failure = ET.SubElement(case, "failure", {
            "message": _xml(_one_line(message)),
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
