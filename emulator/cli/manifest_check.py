"""``botemu manifest check FILE``: a skill manifest checked against the running skill.

``add_check_parser(manifest_subparsers)`` adds ``check`` to the ``manifest`` subcommands. The
command reads the manifest (exit 2 when it cannot), validates it (exit 1 with the findings when it
is invalid; with ``--strict``, MF-CULTURE-NAME is an error), then runs the check
(``emulator.manifest.check``) inside a botemu: the one answering at ``--emulator``
(``POST /_botemu/manifest/check``), where the skill's platformAppId must be registered, or else
one started in-process on that address with the skill registered from the manifest's endpoint and
``--app-password``. Exit 0 when no finding is an error, 1 otherwise, 2 for a usage or
configuration error (one line on standard error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from emulator.client import DEFAULT_EMULATOR, finding_of, post_control, running
from emulator.config import DEFAULT_HOST, DEFAULT_PORT, BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject
from emulator.manifest.check import DEFAULT_CONSUMER, Endpoint, pick_endpoint
from emulator.manifest.validate import (
    Manifest,
    ManifestError,
    load_manifest,
    position_of,
    validate_manifest,
)
from emulator.service.hosting import serving
from emulator.transcripts.store import TranscriptStore, default_db

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
COMMAND = "botemu manifest check"


def add_check_parser(
    manifest_subparsers: argparse._SubParsersAction[Any],
) -> argparse.ArgumentParser:
    """Add ``check`` to the subparsers of ``botemu manifest`` (once); returns its parser."""
    existing: argparse.ArgumentParser | None = manifest_subparsers.choices.get("check")
    if existing is not None:
        return existing
    parser: argparse.ArgumentParser = manifest_subparsers.add_parser(
        "check",
        help="send a running skill each activity its manifest declares and judge the answers",
        description="Validate the manifest, then send the skill (at the endpointUrl of one "
        "endpoint) a sample of each activity in activities, authenticated as a skill consumer, "
        "through a botemu: the one at --emulator, or one started here when none answers. Judge "
        "invoke response bodies and endOfConversation values against resultValue, and what the "
        "skill sends against activitiesSent. Exit 0: no error; 1: the manifest is invalid or the "
        "skill does not do what it declares; 2: usage error, unreadable manifest, or no botemu.",
    )
    parser.add_argument("file", metavar="FILE", help="the skill manifest (JSON)")
    parser.add_argument(
        "--endpoint", metavar="NAME", help="the endpoint to check (default: the first)"
    )
    parser.add_argument(
        "--skill-url",
        metavar="URL",
        help="send to this URL instead of the endpoint's endpointUrl (where the skill listens)",
    )
    parser.add_argument(
        "--consumer",
        default=DEFAULT_CONSUMER,
        metavar="ID",
        help=f"the skill consumer's app id, the token's appid (default {DEFAULT_CONSUMER})",
    )
    parser.add_argument(
        "--app-password",
        help="the skill's password, for a botemu started here (its replies authenticate with it)",
    )
    parser.add_argument(
        "--emulator",
        default=DEFAULT_EMULATOR,
        metavar="URL",
        help=f"the botemu to check from, started here when none answers (default {DEFAULT_EMULATOR})",
    )
    parser.add_argument(
        "--certs",
        type=Path,
        default=Path("certs"),
        metavar="DIR",
        help="the botemu's certificates directory, which holds its control secret (certs/)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="N", help="seed of the sample values (0)"
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=5.0,
        metavar="S",
        help="seconds to wait for the skill's replies after the last answer (default 5)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds allowed for each HTTP exchange with the skill (default 10)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="validate the manifest to the letter of the spec: culture names that are not xx-XX "
        "(MF-CULTURE-NAME) are errors, so the skill is not checked",
    )
    parser.set_defaults(handler=check_handler)
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"must be from 0 to 600: {text!r}")
    return value


def check_handler(args: argparse.Namespace, out: TextIO) -> int:
    try:
        manifest = load_manifest(args.file)
    except ManifestError as e:
        _fail(str(e))
        return EXIT_USAGE
    label = manifest.source
    checked = validate_manifest(manifest, strict=bool(getattr(args, "strict", False)))
    if any(f.severity is Severity.ERROR for f in checked):
        return _report_invalid(args, manifest, checked, out)
    document: JSONObject = dict(manifest.document)
    try:
        endpoint = pick_endpoint(document, args.endpoint)
        if args.skill_url:
            document = _with_url(document, endpoint, args.skill_url)
            endpoint = pick_endpoint(document, args.endpoint)
        emulator = _emulator_url(args.emulator)
        if not args.json:
            out.write(
                f"Skill check of {label}: endpoint {endpoint.name} at {endpoint.url} "
                f"(app id {endpoint.app_id}) from {emulator}, seed {args.seed}\n"
            )
            out.flush()
        report = asyncio.run(_check(args, document, endpoint, emulator))
    except OSError as e:  # the in-process botemu cannot listen
        _fail(f"cannot start a botemu at {args.emulator}: {e.strerror or e}")
        return EXIT_USAGE
    except BotemuError as e:  # SkillCheckError too: no such endpoint, no usable endpointUrl
        _fail(str(e))
        return EXIT_USAGE
    findings = [*checked, *(_finding(item) for item in report.get("findings") or [])]
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        _dump(out, {
            "manifest": label,
            "valid": True,
            "endpoint": endpoint.name,
            "skill": endpoint.url,
            "app_id": endpoint.app_id,
            "consumer": args.consumer,
            "emulator": emulator,
            "seed": args.seed,
            "passed": errors == 0,
            "errors": errors,
            "warnings": sum(f.severity is Severity.WARNING for f in findings),
            "findings": [f.to_json() for f in findings],
        })  # fmt: skip
    else:
        _human(document, findings, label, out)
    return EXIT_FAILED if errors else EXIT_OK


def _with_url(document: JSONObject, endpoint: Endpoint, url: str) -> JSONObject:
    """The document with ``url`` as the endpointUrl of ``endpoint`` (``--skill-url``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BotemuError(f"--skill-url {url!r} must be an http(s) URL with a host")
    endpoints: list[JSON] = []
    done = False
    given = document.get("endpoints")
    for item in given if isinstance(given, list) else []:
        if not done and isinstance(item, dict) and item.get("name", "default") == endpoint.name:
            item, done = {**item, "endpointUrl": url}, True
        endpoints.append(item)
    return {**document, "endpoints": endpoints}


def _emulator_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme != "http" or not parts.hostname:
        raise BotemuError(f"--emulator {text!r} must be an http URL with a host")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise BotemuError(f"--emulator {text!r} has a bad port") from None
    return text.rstrip("/")


async def _check(
    args: argparse.Namespace, document: JSONObject, endpoint: Endpoint, emulator: str
) -> dict[str, Any]:
    """The route's answer, from the botemu at ``emulator`` or from one started here."""
    body: dict[str, Any] = {
        "manifest": document,
        "endpoint": endpoint.name,
        "consumer": args.consumer,
        "seed": args.seed,
        "wait": args.wait,
        "timeout": args.timeout,
    }
    activities = document.get("activities")
    limit = (len(activities) if isinstance(activities, dict) else 1) * args.timeout + args.wait + 30
    if await running(emulator):
        return await _post(emulator, body, limit, args.certs)
    parts = urlsplit(emulator)
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST,
        port=parts.port or DEFAULT_PORT,
        bots=(BotRegistration(endpoint.app_id, args.app_password or "", endpoint.url),),
        certs_dir=args.certs,
    )
    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await _post(emulator, body, limit, args.certs)


async def _post(
    emulator: str, body: dict[str, Any], limit: float, certs: Path | None = None
) -> dict[str, Any]:
    report: dict[str, Any] = await post_control(emulator, "/_botemu/manifest/check", body, limit,
                                                certs=certs)  # fmt: skip
    return report


def _finding(item: object) -> Finding:
    return finding_of(item)


# --- output ---------------------------------------------------------------------------------------

_MARKS = {
    Severity.INFO: ("pass", "32"),
    Severity.WARNING: ("warn", "33"),
    Severity.ERROR: ("FAIL", "31"),
}


def _report_invalid(
    args: argparse.Namespace, manifest: Manifest, findings: list[Finding], out: TextIO
) -> int:
    label = manifest.source
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        _dump(out, {
            "manifest": label,
            "valid": False,
            "passed": False,
            "errors": errors,
            "warnings": sum(f.severity is Severity.WARNING for f in findings),
            "findings": [f.to_json() for f in findings],
        })  # fmt: skip
        return EXIT_FAILED
    for f in findings:
        pos = position_of(manifest, f.where)
        at = f"{label}:{pos[0]}:{pos[1]}" if pos else label
        out.write(f"{at}: {f.severity.value}: {f.where}: {f.message} [{f.rule}]\n")
    out.write(f"{label}: invalid manifest ({_count(errors, 'error')}): the skill was not checked\n")
    return EXIT_FAILED


def _human(document: JSONObject, findings: list[Finding], label: str, out: TextIO) -> None:
    colour = not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty()
    declared = document.get("activities")
    activities = {
        k: v
        for k, v in (declared.items() if isinstance(declared, dict) else [])
        if isinstance(v, dict)
    }
    keys = list(activities)
    by_key: dict[str, list[Finding]] = {k: [] for k in keys}
    others: list[Finding] = []
    for f in findings:
        key = _activity_of(f.where, keys)
        (by_key[key] if key is not None else others).append(f)
    labels = {k: f"{k} ({v.get('type', 'message')})" for k, v in activities.items()}
    width = max([len(v) for v in labels.values()] + [len(f.where) for f in others])
    for f in others:
        out.write(f"  {f.where:{width}}  {_mark(f.severity, colour)}  {f.message} [{f.rule}]\n")
    passed = 0
    for key in keys:
        mine = by_key[key]
        worst = _worst(mine)
        mark = _mark(worst, colour) if worst is not None else "not sent"
        sent = not any(f.rule == "SKILL-SAMPLE" for f in mine)
        passed += sent and worst is not None and worst is not Severity.ERROR
        out.write(f"  {labels[key]:{width}}  {mark}\n")
        for f in mine:
            if f.severity is not Severity.INFO:
                out.write(f"      {f.severity.value}: {f.where}: {f.message} [{f.rule}]\n")
                if f.evidence:
                    out.write(f"        got: {f.evidence}\n")
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    verdict = "FAILED" if errors else "passed"
    out.write(
        f"{label}: {verdict}: {passed} of {len(keys)} activities passed, "
        f"{_count(errors, 'error')}, {_count(warnings, 'warning')}\n"
    )


def _activity_of(where: str, keys: list[str]) -> str | None:
    for key in sorted(keys, key=len, reverse=True):
        prefix = f"activities/{key}"
        if where == prefix or where.startswith(f"{prefix}/") or where.startswith(f"{prefix}:"):
            return key
    return None


def _worst(findings: list[Finding]) -> Severity | None:
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        if any(f.severity is severity for f in findings):
            return severity
    return None


def _mark(severity: Severity, colour: bool) -> str:
    text, code = _MARKS[severity]
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _dump(out: TextIO, value: object) -> None:
    json.dump(value, out, indent=2)
    out.write("\n")


def _fail(message: str) -> None:
    print(f"{COMMAND}: {message}", file=sys.stderr)
