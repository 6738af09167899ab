"""The ``botemu`` command line: a thin shell over the library.

Exit codes a CI can trust: 0 when everything ran and passed, 1 when a check failed, 2 for a usage
error or unreadable input. Errors are one line, never a traceback. Human output by default, a
``--json`` twin for machines; colour unless ``NO_COLOR`` is set or the output is not a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from emulator import __version__
from emulator.calling.exchange_rules import EXCHANGE_RULES
from emulator.calling.rules import RULES, RuleContext, validate_workflow
from emulator.calling.wire import loads
from emulator.conformance.auth import RULES as AUTH_RULES
from emulator.conformance.auth_calling import RULES as AUTH_CALLING_RULES
from emulator.conformance.tls import RULES as TLS_RULES
from emulator.connector.rules import CONNECTOR_RULES
from emulator.errors import WireError
from emulator.findings import Finding, RuleRegistry, Severity
from emulator.inputs import InputError, read_bytes, read_stdin
from emulator.jsonpos import (
    NUMBER_TOO_LONG,
    is_number_too_long,
    locate_paths,
    long_number_at,
    position_of,
)
from emulator.manifest.check import RULES as SKILL_CHECK_RULES
from emulator.manifest.validate import RULES as MANIFEST_RULES
from emulator.scenario.expectations import RULES as EXPECTATION_RULES

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_INPUT_BYTES = 16 * 1024 * 1024


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line and the subcommand's usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="botemu",
        description="A local emulator of a bot platform: calling, connector and identity services.",
    )
    parser.add_argument("--version", action="version", version=f"botemu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    lint = sub.add_parser(
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
    lint.set_defaults(handler=_lint)

    rules = sub.add_parser(
        "rules",
        help="list every protocol rule botemu checks",
        description="List every rule with its id, severity and source.",
    )
    form = rules.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the rules as JSON")
    form.add_argument("--markdown", action="store_true", help="print docs/rules.md")
    rules.set_defaults(handler=_rules)
    # Each area registers its own commands (a thin shell over that area's library).
    from emulator.calling.cli import register as register_call
    from emulator.conformance.cli import register as register_conformance
    from emulator.demo import register as register_demo
    from emulator.logview.cli import register as register_logview
    from emulator.manifest.check_cli import add_check_parser
    from emulator.manifest.cli import register as register_manifest
    from emulator.scenario.cli import register as register_scenario
    from emulator.scenario.testing import register as register_test
    from emulator.service_cli import register as register_service
    from emulator.transcripts.cli import register as register_transcript

    register_call(sub)
    register_test(sub)
    register_scenario(sub)
    register_transcript(sub)
    register_conformance(sub)
    register_service(sub)
    register_demo(sub)
    add_check_parser(register_manifest(sub))
    register_logview(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = args.handler(args, sys.stdout)
    except KeyboardInterrupt:
        print("botemu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    return code


# --- lint --------------------------------------------------------------------------------------


def _read_input(name: str) -> tuple[str, str]:
    """(label, text) of a file or standard input; raises _InputError with one line."""
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


class _InputError(Exception):
    pass


def _lint(args: argparse.Namespace, out: TextIO) -> int:
    try:
        label, text = _read_input(args.file)
        document = loads(text)
    except _InputError as e:
        print(f"botemu lint: {e}", file=sys.stderr)
        return EXIT_USAGE
    except WireError as e:
        line, column, message = e.line, e.column, e.message
        if is_number_too_long(e):  # not Python's advice about sys.set_int_max_str_digits()
            (line, column), message = long_number_at(text) or (None, None), NUMBER_TOO_LONG
        at = label if line is None else f"{label}:{line}:{column}"
        print(f"botemu lint: {at}: {message}", file=sys.stderr)
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
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        items = []
        for f in findings:
            item: dict[str, object] = dict(f.to_json())
            pos = position_of(f.where, positions)
            if pos is not None:
                item["line"], item["column"] = pos
            items.append(item)
        json.dump(
            {
                "file": label,
                "valid": errors == 0,
                "errors": errors,
                "warnings": len(findings) - errors,
                "findings": items,
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        paint = _painter(out)
        for f in findings:
            pos = position_of(f.where, positions)
            at = f"{label}:{pos[0]}:{pos[1]}" if pos else label
            severity = paint(f.severity.value, "31" if f.severity is Severity.ERROR else "33")
            out.write(f"{at}: {severity}: {f.where}: {f.message} [{f.rule}]\n")
        out.write(_summary(label, findings) + "\n")
    return EXIT_FAILED if errors else EXIT_OK


def _summary(label: str, findings: list[Finding]) -> str:
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if not findings:
        return f"{label}: valid Workflow, no findings"
    verdict = "invalid Workflow" if errors else "valid Workflow"
    return f"{label}: {verdict}: {_count(errors, 'error')}, {_count(warnings, 'warning')}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _painter(out: TextIO) -> _Paint:
    colour = not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty()
    return _Paint(colour)


class _Paint:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text


# --- rules -------------------------------------------------------------------------------------

REGISTRIES: tuple[RuleRegistry, ...] = (
    RULES,
    EXCHANGE_RULES,
    TLS_RULES,
    AUTH_RULES,
    AUTH_CALLING_RULES,
    CONNECTOR_RULES,
    MANIFEST_RULES,
    SKILL_CHECK_RULES,
    EXPECTATION_RULES,
)


def rules_markdown(registries: Sequence[RuleRegistry] = REGISTRIES) -> str:
    """The text of docs/rules.md."""
    lines = [
        "# Rules",
        "",
        "Every check botemu makes produces findings that name one of these rules. Severity "
        "`error` means the platform refuses (for a Workflow: it answers with the validation "
        "outcome and runs nothing); `warning` means it is accepted but deviates from the spec or "
        'from what the real platform and SDKs do. "spec" is `platform-spec.md`; "field notes" '
        "are the notes on how the real platform behaved.",
        "",
        "This file is generated: `botemu rules --markdown > docs/rules.md`.",
    ]
    for registry in registries:
        lines += [
            "",
            f"## {registry.area}",
            "",
            "| rule | severity | source | rule says |",
            "|---|---|---|---|",
        ]
        for rule in registry:
            lines.append(
                f"| `{rule.id}` | {rule.severity.value} | {rule.source} | {rule.summary} |"
            )
    return "\n".join(lines) + "\n"


def _rules(args: argparse.Namespace, out: TextIO) -> int:
    if args.markdown:
        out.write(rules_markdown())
    elif args.json:
        items = [
            {
                "id": r.id,
                "area": reg.area,
                "severity": r.severity.value,
                "source": r.source,
                "summary": r.summary,
            }
            for reg in REGISTRIES
            for r in reg
        ]
        json.dump(items, out, indent=2)
        out.write("\n")
    else:
        for reg in REGISTRIES:
            for r in reg:
                out.write(f"{r.id:30} {r.severity.value:8} {r.summary}\n")
    return EXIT_OK
