"""What a ``botemu test`` run prints as it goes and at its end: the header, the progress line of
each scenario, the details of each failure (expected versus actual, the rule and its source, the
transcript around it) and the summary table, in colour on a terminal (``Paint``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TextIO

from emulator.findings import Finding
from emulator.scenario.results import (
    Counts,
    Entry,
    RuleLookup,
    RunReport,
    ScenarioResultLike,
    Status,
    location_of,
    skip_reason,
)

CONTEXT = 3
"""Ladder lines shown on each side of the line a failure points at."""


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
        line += f"  {one_line(result.error)}"
    reason = skip_reason(result)
    if reason is not None:
        line += f"  {one_line(reason)}"
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
        lines.append(f"skipped {_count(n, 'scenario')}: {one_line(reason)}")
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


def one_line(text: str) -> str:
    """``text`` with every run of white space (line breaks too) as one space."""
    return " ".join(text.split())
