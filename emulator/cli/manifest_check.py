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
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from emulator.cli.common import count
from emulator.cli.report import (
    colour_of,
    dump,
    emulator_url,
    finding,
    mark,
    post_route,
    post_route_here,
)
from emulator.config import DEFAULT_HOST, DEFAULT_PORT, BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject

if TYPE_CHECKING:
    from emulator.manifest.check import Endpoint
    from emulator.manifest.validate import Manifest

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
COMMAND = "botemu manifest check"
ROUTE = "/_botemu/manifest/check"


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
    _skill_options(parser)
    _emulator_options(parser)
    _run_options(parser)
    parser.set_defaults(handler=check_handler)
    return parser


def _skill_options(parser: argparse.ArgumentParser) -> None:
    """The manifest, the endpoint of it to check, and who the skill is talking to."""
    from emulator.manifest.check import DEFAULT_CONSUMER

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


def _emulator_options(parser: argparse.ArgumentParser) -> None:
    """The botemu the check runs in."""
    from emulator.client import DEFAULT_EMULATOR

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


def _run_options(parser: argparse.ArgumentParser) -> None:
    """The samples, the time allowed, the output and the letter of the spec."""
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


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"must be from 0 to 600: {text!r}")
    return value


def check_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.manifest.validate import ManifestError, load_manifest, validate_manifest

    try:
        manifest = load_manifest(args.file)
    except ManifestError as e:
        _fail(str(e))
        return EXIT_USAGE
    checked = validate_manifest(manifest, strict=bool(getattr(args, "strict", False)))
    if any(f.severity is Severity.ERROR for f in checked):
        return _report_invalid(args, manifest, checked, out)
    try:
        run = _run(args, manifest, out)
    except OSError as e:  # the in-process botemu cannot listen
        _fail(f"cannot start a botemu at {args.emulator}: {e.strerror or e}")
        return EXIT_USAGE
    except BotemuError as e:  # SkillCheckError too: no such endpoint, no usable endpointUrl
        _fail(str(e))
        return EXIT_USAGE
    findings = [*checked, *(finding(item) for item in run.report.get("findings") or [])]
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        dump(out, _json_report(args, manifest.source, run, findings))
    else:
        _human(run.document, findings, manifest.source, out)
    return EXIT_FAILED if errors else EXIT_OK


@dataclass(frozen=True)
class _Run:
    """A check that ran: the manifest as sent (``--skill-url`` in it), the endpoint checked, the
    botemu it ran in, and that botemu's answer."""

    document: JSONObject
    endpoint: Endpoint
    emulator: str
    report: dict[str, Any]


def _run(args: argparse.Namespace, manifest: Manifest, out: TextIO) -> _Run:
    """Run the check of a valid manifest, after a header line (unless ``--json``)."""
    from emulator.manifest.check import pick_endpoint

    document: JSONObject = dict(manifest.document)
    endpoint = pick_endpoint(document, args.endpoint)
    if args.skill_url:
        document = _with_url(document, endpoint, args.skill_url)
        endpoint = pick_endpoint(document, args.endpoint)
    emulator = emulator_url(args.emulator)
    if not args.json:
        out.write(
            f"Skill check of {manifest.source}: endpoint {endpoint.name} at {endpoint.url} "
            f"(app id {endpoint.app_id}) from {emulator}, seed {args.seed}\n"
        )
        out.flush()
    report = asyncio.run(_check(args, document, endpoint, emulator))
    return _Run(document, endpoint, emulator, report)


def _json_report(
    args: argparse.Namespace, label: str, run: _Run, findings: list[Finding]
) -> dict[str, object]:
    errors = sum(f.severity is Severity.ERROR for f in findings)
    return {
        "manifest": label,
        "valid": True,
        "endpoint": run.endpoint.name,
        "skill": run.endpoint.url,
        "app_id": run.endpoint.app_id,
        "consumer": args.consumer,
        "emulator": run.emulator,
        "seed": args.seed,
        "passed": errors == 0,
        "errors": errors,
        "warnings": sum(f.severity is Severity.WARNING for f in findings),
        "findings": [f.to_json() for f in findings],
    }


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


async def _check(
    args: argparse.Namespace, document: JSONObject, endpoint: Endpoint, emulator: str
) -> dict[str, Any]:
    """The route's answer, from the botemu at ``emulator`` or from one started here."""
    from emulator.client import running

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
        return await post_route(emulator, ROUTE, body, limit, args.certs)
    parts = urlsplit(emulator)
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST,
        port=parts.port or DEFAULT_PORT,
        bots=(BotRegistration(endpoint.app_id, args.app_password or "", endpoint.url),),
        certs_dir=args.certs,
    )
    return await post_route_here(config, emulator, ROUTE, body, limit, args.certs)


# --- output ---------------------------------------------------------------------------------------


def _report_invalid(
    args: argparse.Namespace, manifest: Manifest, findings: list[Finding], out: TextIO
) -> int:
    from emulator.manifest.validate import position_of

    label = manifest.source
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        dump(out, {
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
    out.write(f"{label}: invalid manifest ({count(errors, 'error')}): the skill was not checked\n")
    return EXIT_FAILED


def _human(document: JSONObject, findings: list[Finding], label: str, out: TextIO) -> None:
    colour = colour_of(out)
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
        out.write(f"  {f.where:{width}}  {mark(f.severity, colour)}  {f.message} [{f.rule}]\n")
    passed = 0
    for key in keys:
        mine = by_key[key]
        worst = _worst(mine)
        shown = mark(worst, colour) if worst is not None else "not sent"
        sent = not any(f.rule == "SKILL-SAMPLE" for f in mine)
        passed += sent and worst is not None and worst is not Severity.ERROR
        out.write(f"  {labels[key]:{width}}  {shown}\n")
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
        f"{count(errors, 'error')}, {count(warnings, 'warning')}\n"
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


def _fail(message: str) -> None:
    print(f"{COMMAND}: {message}", file=sys.stderr)
