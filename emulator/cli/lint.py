"""``botemu lint``: a Workflow checked the way the calling platform would, with each finding at
its file:line:column. Editors and pre-commit hooks run it on every save, so it imports only the
Workflow rules and the JSON reader, and only when it runs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, count, painter

if TYPE_CHECKING:
    from emulator.findings import Finding
    from emulator.jsonpos import Position
    from emulator.jsonutil import JSON

MAX_INPUT_BYTES = 16 * 1024 * 1024


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    lint = subparsers.add_parser(
        "lint",
        help="validate a Workflow JSON the way the calling platform would",
        description="Validate a Workflow (a bot's reply) the way the calling platform would. "
        "Exit 0: no errors; 1: at least one error; 2: unreadable input.",
    )
    lint.add_argument(
        "file", metavar="FILE", help="the Workflow JSON file, or - for standard input"
    )
    lint.add_argument(
        "--first",
        action="store_true",
        help="the Workflow is the reply to the Conversation (the call is not answered yet)",
    )
    lint.add_argument(
        "--allow-http", action="store_true", help="accept an http callback with a warning"
    )
    lint.add_argument("--json", action="store_true", help="print the findings as JSON")
    lint.set_defaults(handler=lint_handler)


class _InputError(Exception):
    pass


def _read_input(name: str) -> tuple[str, str]:
    """(label, text) of a file or standard input; raises _InputError with one line."""
    from emulator.inputs import InputError, read_bytes, read_stdin

    label = "<stdin>" if name == "-" else name
    try:  # a regular file only (a FIFO would hang), or standard input
        data = read_stdin(MAX_INPUT_BYTES) if name == "-" else read_bytes(name, MAX_INPUT_BYTES)
    except InputError as e:
        raise _InputError(f"{label}: {e.message}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise _InputError(f"{label}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
    try:
        return label, data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _InputError(f"{label}: not UTF-8 text (byte {e.start})") from None


def lint_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.calling.rules import RuleContext, validate_workflow
    from emulator.findings import Severity
    from emulator.jsonpos import locate_paths, position_of

    try:
        label, text, document = _parse(args.file)
    except _InputError as e:
        print(f"botemu lint: {e}", file=sys.stderr)
        return EXIT_USAGE
    # The work is bounded by the input limit, not by what the file holds: validation checks at
    # most MAX_ACTIONS actions and lists at most FINDINGS_PER_RULE findings of a rule, and only
    # the positions of those findings are looked up, never one per value of the file.
    findings = validate_workflow(
        document, RuleContext(first=args.first, allow_http=args.allow_http)
    )
    del document
    positions = locate_paths(text, [f.where for f in findings])
    findings.sort(key=lambda f: position_of(f.where, positions) or (0, 0))
    if args.json:
        _print_json(label, findings, positions, out)
    else:
        _print_text(label, findings, positions, out)
    return EXIT_FAILED if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


def _parse(name: str) -> tuple[str, str, JSON]:
    """(label, text, document) of a file or standard input; raises _InputError with one line,
    at the line and column of a JSON error."""
    from emulator.calling.wire import loads
    from emulator.errors import WireError
    from emulator.jsonpos import NUMBER_TOO_LONG, is_number_too_long, long_number_at

    label, text = _read_input(name)
    try:
        return label, text, loads(text)
    except WireError as e:
        line, column, message = e.line, e.column, e.message
        if is_number_too_long(e):  # not Python's advice about sys.set_int_max_str_digits()
            (line, column), message = long_number_at(text) or (None, None), NUMBER_TOO_LONG
        at = label if line is None else f"{label}:{line}:{column}"
        raise _InputError(f"{at}: {message}") from None


def _print_json(
    label: str, findings: list[Finding], positions: dict[str, Position], out: TextIO
) -> None:
    from emulator.findings import Severity
    from emulator.jsonpos import position_of

    items = []
    for f in findings:
        item: dict[str, object] = dict(f.to_json())
        pos = position_of(f.where, positions)
        if pos is not None:
            item["line"], item["column"] = pos
        items.append(item)
    errors = sum(f.severity is Severity.ERROR for f in findings)
    document = {
        "file": label,
        "valid": errors == 0,
        "errors": errors,
        "warnings": len(findings) - errors,
        "findings": items,
    }
    json.dump(document, out, indent=2)
    out.write("\n")


def _print_text(
    label: str, findings: list[Finding], positions: dict[str, Position], out: TextIO
) -> None:
    from emulator.findings import Severity
    from emulator.jsonpos import position_of

    paint = painter(out)
    for f in findings:
        pos = position_of(f.where, positions)
        at = f"{label}:{pos[0]}:{pos[1]}" if pos else label
        severity = paint(f.severity.value, "31" if f.severity is Severity.ERROR else "33")
        out.write(f"{at}: {severity}: {f.where}: {f.message} [{f.rule}]\n")
    out.write(_summary(label, findings) + "\n")


def _summary(label: str, findings: list[Finding]) -> str:
    from emulator.findings import Severity

    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if not findings:
        return f"{label}: valid Workflow, no findings"
    verdict = "invalid Workflow" if errors else "valid Workflow"
    return f"{label}: {verdict}: {count(errors, 'error')}, {count(warnings, 'warning')}"
