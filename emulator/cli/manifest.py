"""``botemu manifest``: validate skill manifests, print their JSON Schema.

``register(subparsers)`` adds ``manifest validate`` and ``manifest schema`` to a parser built
elsewhere (``emulator/cli.py``). ``add_manifest_parser(subparsers)`` returns the subparsers of
``manifest`` itself (creating the command once), so other areas add their own subcommands to it,
before or after ``register``. Handlers take ``(args, out)`` and return the exit code: 0 every
manifest is valid (warnings allowed), 1 at least one is not, 2 one cannot be read (missing, too
large, an HTTP error, not UTF-8, not JSON or YAML). ``--strict`` holds manifests to the letter of
the spec: the rules of ``STRICT_RULES`` (culture names) are errors, not warnings.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.common import count, painter
from emulator.findings import Finding, Severity

if TYPE_CHECKING:
    from emulator.jsonutil import JSONObject
    from emulator.manifest.validate import ManifestError, Position

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
SubParsers = argparse._SubParsersAction  # the object ArgumentParser.add_subparsers() returns


def add_manifest_parser(subparsers: SubParsers[Any]) -> SubParsers[Any]:
    """The subparsers of ``botemu manifest``, adding the command the first time."""
    manifest: argparse.ArgumentParser | None = subparsers.choices.get("manifest")
    if manifest is None:
        manifest = subparsers.add_parser(
            "manifest",
            help="validate skill manifests, print their JSON Schema",
            description="Work with skill manifests (docs/manifests.md).",
        )
        manifest.set_defaults(handler=_help(manifest))
    for action in manifest._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return manifest.add_subparsers(dest="manifest_command", metavar="COMMAND")


def register(subparsers: SubParsers[Any]) -> SubParsers[Any]:
    """Add ``manifest validate FILE...`` and ``manifest schema``; returns the ``manifest``
    subparsers (as ``add_manifest_parser`` does)."""
    commands = add_manifest_parser(subparsers)
    if "validate" not in commands.choices:
        validate = commands.add_parser(
            "validate",
            help="validate skill manifests against the 2.1.preview-1 schema",
            description="Validate skill manifests (JSON or YAML files, or http(s) URLs) against "
            "the 2.1.preview-1 schema and the spec, reporting every violation as "
            "file:line:col: severity: /pointer: message [rule]. Exit 0: all valid (warnings "
            "allowed); 1: at least one invalid; 2: one cannot be read.",
        )
        validate.add_argument(
            "sources",
            metavar="FILE",
            nargs="+",
            help="a manifest file (.json, .yaml, .yml), an http(s) URL, or - for standard input",
        )
        validate.add_argument("--json", action="store_true", help="print the results as JSON")
        validate.add_argument(
            "--strict",
            action="store_true",
            help="the letter of the spec: culture names that are not xx-XX (MF-CULTURE-NAME) are "
            "errors, not warnings",
        )
        validate.set_defaults(handler=validate_handler)
    if "schema" not in commands.choices:
        show = commands.add_parser(
            "schema",
            help="print the skill manifest JSON Schema",
            description="Print the skill manifest JSON Schema (draft-07, 2.1.preview-1).",
        )
        show.set_defaults(handler=schema_handler)
    return commands


def register_commands(subparsers: SubParsers[Any]) -> None:
    """``register``, then ``manifest check`` (``emulator.cli.manifest_check``)."""
    from emulator.cli.manifest_check import add_check_parser

    add_check_parser(register(subparsers))


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace, TextIO], int]:
    def handler(args: argparse.Namespace, out: TextIO) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return handler


class _Result:
    """One source: its findings and positions, or why it cannot be read."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.findings: list[Finding] = []
        self.positions: dict[str, Position] = {}
        self.unreadable: ManifestError | None = None
        self.document: JSONObject | None = None
        """The manifest read (None: unreadable, or not a JSON object)."""

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def valid(self) -> bool:
        return self.unreadable is None and self.errors == 0

    def at(self, finding: Finding) -> Position | None:
        from emulator.manifest.source import nearest

        return nearest(self.positions, finding.where)


def check(source: str, *, strict: bool = False, max_bytes: int | None = None) -> _Result:
    """Read and validate one manifest source (a path, a URL or ``-``); ``strict`` as in
    ``validate_manifest``; ``max_bytes``: the largest it may be (default ``source.MAX_BYTES``)."""
    from emulator.manifest.source import MAX_BYTES
    from emulator.manifest.validate import (
        ManifestError,
        NotAnObjectError,
        load_manifest,
        load_manifest_bytes,
        validate_manifest,
    )

    result = _Result("<stdin>" if source == "-" else source)
    limit = MAX_BYTES if max_bytes is None else max_bytes
    try:
        if source == "-":
            data = sys.stdin.buffer.read(limit + 1)
            manifest = load_manifest_bytes(data, result.source, max_bytes=limit)
        else:
            manifest = load_manifest(source, max_bytes=limit)
    except NotAnObjectError as e:
        result.findings, result.positions = validate_manifest(e.value, strict=strict), e.positions
    except ManifestError as e:
        result.unreadable = e
    else:
        result.findings = validate_manifest(manifest, strict=strict)
        result.positions, result.document = manifest.positions, manifest.document
    return result


def validate_handler(args: argparse.Namespace, out: TextIO) -> int:
    strict = bool(getattr(args, "strict", False))
    results = [check(source, strict=strict) for source in args.sources]
    if args.json:
        json.dump([_json(r) for r in results], out, indent=2)
        out.write("\n")
    else:
        paint = painter(out)
        for result in results:
            if result.unreadable is not None:
                print(f"botemu manifest validate: {result.unreadable}", file=sys.stderr)
                continue
            for finding in result.findings:
                out.write(finding_line(result, finding, paint) + "\n")
            out.write(_summary(result) + "\n")
    if any(r.unreadable is not None for r in results):
        return EXIT_USAGE
    return EXIT_OK if all(r.valid for r in results) else EXIT_FAILED


def schema_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.manifest.validate import schema

    json.dump(schema(), out, indent=2)
    out.write("\n")
    return EXIT_OK


def finding_line(result: _Result, finding: Finding, paint: Callable[[str, str], str]) -> str:
    """A finding as ``botemu manifest validate`` prints it: ``file:line:col: severity:
    /pointer: message [RULE]``."""
    pos = result.at(finding)
    at = f"{result.source}:{pos[0]}:{pos[1]}" if pos else result.source
    colour = "31" if finding.severity is Severity.ERROR else "33"
    where = finding.where or "(root)"
    return f"{at}: {paint(finding.severity.value, colour)}: {where}: {finding.message} [{finding.rule}]"


def _summary(result: _Result) -> str:
    errors = result.errors
    warnings = len(result.findings) - errors
    if not result.findings:
        return f"{result.source}: valid skill manifest, no findings"
    verdict = "invalid" if errors else "valid"
    return f"{result.source}: {verdict} skill manifest: {count(errors, 'error')}, {count(warnings, 'warning')}"


def _json(result: _Result) -> dict[str, object]:
    if result.unreadable is not None:
        e = result.unreadable
        problem = {"message": e.message, "line": e.line, "column": e.column}
        return {"file": result.source, "readable": False, "valid": False, "error": problem}
    findings: list[dict[str, object]] = []
    for finding in result.findings:
        item: dict[str, object] = dict(finding.to_json())
        pos = result.at(finding)
        if pos is not None:
            item["line"], item["column"] = pos
        findings.append(item)
    return {
        "file": result.source,
        "readable": True,
        "valid": result.valid,
        "errors": result.errors,
        "warnings": len(result.findings) - result.errors,
        "findings": findings,
    }
