"""The report the probes and ``manifest check`` print (a line per case marked pass, warn or FAIL,
then a summary, or JSON), and how they reach a running botemu's control route, or one they
start here when none answers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from emulator.cli.common import count
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity

if TYPE_CHECKING:
    from emulator.config import ServiceConfig


def colour_of(out: TextIO) -> bool:
    return bool(not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty())


def dump(out: TextIO, value: object) -> None:
    json.dump(value, out, indent=2)
    out.write("\n")


MARKS = {
    Severity.INFO: ("pass", "32"),
    Severity.WARNING: ("warn", "33"),
    Severity.ERROR: ("FAIL", "31"),
}


def mark(finding: Finding | Severity, colour: bool) -> str:
    """pass, warn or FAIL, for a finding or a severity."""
    severity = finding if isinstance(finding, Severity) else finding.severity
    text, code = MARKS[severity]
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def summary(url: str, findings: list[Finding], *, skipped: int = 0) -> str:
    """``skipped``: how many of the info findings are cases that were not run."""
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    passed = len(findings) - errors - warnings - skipped
    verdict = "FAILED" if errors else "passed"
    return (
        f"{url}: {verdict}: {passed} of {len(findings)} cases passed, "
        f"{count(errors, 'error')}, {count(warnings, 'warning')}"
        + (f", {skipped} skipped" if skipped else "")
    )


def fail(command: str, message: str) -> None:
    print(f"botemu {command}: {message}", file=sys.stderr)


def emulator_url(text: str) -> str:
    """An ``--emulator`` URL, checked (http or https, a host, a numeric port), without its last
    slash. An https botemu is trusted as ``emulator.client.control_ssl`` says (certs/ca.pem)."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BotemuError(f"--emulator {text!r} must be an http(s) URL with a host")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise BotemuError(f"--emulator {text!r} has a bad port") from None
    return text.rstrip("/")


def finding(item: object) -> Finding:
    """A finding a control route answered (one BotemuError line when it cannot be read)."""
    from emulator.client import finding_of

    return finding_of(item)


async def post_route(
    emulator: str, path: str, body: dict[str, Any], limit: float, certs: Path | None = None
) -> dict[str, Any]:
    """The JSON answer of a control route of the botemu at ``emulator``; ``certs``: its
    certificates directory, which holds its control secret."""
    from emulator.client import post_control

    report: dict[str, Any] = await post_control(emulator, path, body, limit, certs=certs)
    return report


async def post_route_here(
    config: ServiceConfig,
    emulator: str,
    path: str,
    body: dict[str, Any],
    limit: float,
    certs: Path | None = None,
) -> dict[str, Any]:
    """``post_route`` to a botemu started here with ``config`` for the time of the request."""
    from emulator.service.hosting import serving
    from emulator.transcripts.store import TranscriptStore, default_db

    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await post_route(emulator, path, body, limit, certs)
