"""The ``botemu certs``, ``botemu probe tls`` and ``botemu probe auth`` subcommands (wired in by
``emulator.cli``).

``register(subparsers)`` adds them all; ``add_certs_parser``, ``add_tls_probe_parser`` and
``add_auth_probe_parser`` add one each (the probes to an existing ``probe`` subparsers action).
Exit codes: 0 when everything ran and passed, 1 when the probe found an error, 2 for a usage or
configuration error (one line on standard error, never a traceback).

``probe auth`` runs inside a botemu, because a bot answers an accepted message by replying through
the connector: the one answering at ``--emulator`` (``POST /_botemu/probe/auth``), or else one
started in-process on that address with the bot registered from ``--app-id``/``--app-password``.
``probe auth --calling`` sends a calling bot Conversations instead (``auth_calling``), the same way,
so that the tokens are signed by the keys of the botemu whose OpenID metadata the bot trusts.
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

from emulator.certs import CertError, load_certs
from emulator.client import DEFAULT_EMULATOR, finding_of, post_control, running
from emulator.config import DEFAULT_HOST, DEFAULT_PORT, BotRegistration, ServiceConfig
from emulator.conformance import auth, auth_calling
from emulator.conformance.tls import ProbeError, check_url, probe_tls
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.identity.keys import endorsed_channels
from emulator.service.hosting import serving
from emulator.transcripts.store import TranscriptStore, default_db

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_DIR = "certs"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``probe`` (with ``probe tls`` and ``probe auth``) to a ``botemu`` subparsers action."""
    probe = subparsers.add_parser(
        "probe",
        help="check that a running bot refuses what the platform would never send",
        description="Conformance probes against a running bot. Exit 0: passed; 1: a probe "
        "found an error; 2: usage error or the bot cannot be reached.",
    )
    probes = probe.add_subparsers(dest="probe", metavar="PROBE", required=True)
    add_tls_probe_parser(probes)
    add_auth_probe_parser(probes)


def add_tls_probe_parser(probes: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    tls: argparse.ArgumentParser = probes.add_parser(
        "tls",
        help="connect with client certificates a bot must refuse",
        description="Post a Conversation to the bot over TLS, once with the platform's client "
        "certificate (which it must accept) and once each with no certificate, an expired one, "
        "one not valid yet, one from an unknown CA and one with the wrong common name (which it "
        "must refuse). Exit 0: every case passed; 1: at least one error; 2: usage error, "
        "unreadable certificates, or the bot cannot be reached or verified.",
    )
    tls.add_argument("--bot", required=True, metavar="URL", help="the bot's https calling address")
    tls.add_argument(
        "--certs",
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"the directory written by 'botemu certs' (default {DEFAULT_DIR}/)",
    )
    tls.add_argument(
        "--ca",
        metavar="FILE",
        help="CA file that verifies the bot's server certificate (default: ca.pem in --certs)",
    )
    tls.add_argument("--json", action="store_true", help="print the findings as JSON")
    tls.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds allowed for each case (default 10)",
    )
    tls.set_defaults(handler=probe_tls_handler)
    return tls


def add_auth_probe_parser(probes: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = probes.add_parser(
        "auth",
        help="send a messaging bot tokens it must refuse (and three it must accept)",
        description="Post one message to the bot's messaging endpoint per case: a valid "
        "connector token, one expired within the clock skew and a valid emulator-path token "
        "(which it must accept), and tokens that "
        "break one rule of spec section Authentication each (which it must refuse with 403). "
        "With --calling, post one Conversation per case to a calling bot instead, each followed "
        "by a valid one (the bot must keep answering). The "
        "probe runs in the botemu at --emulator, or in one started here when none answers. "
        "Exit 0: no error; 1: the bot accepted a bad token, crashed, or refused a good one; 2: "
        "usage error, or the bot or the emulator cannot be reached.",
    )
    parser.add_argument(
        "--bot",
        required=True,
        metavar="URL",
        help="the bot's messaging endpoint (or calling address)",
    )
    parser.add_argument(
        "--calling",
        action="store_true",
        help="probe a calling bot: the Bearer token on calling requests (docs/probe-auth.md)",
    )
    parser.add_argument(
        "--app-id",
        help="the bot's app id (default: the bot registered at URL with the botemu; with "
        "--calling, or its only registered bot)",
    )
    parser.add_argument(
        "--app-password",
        help="the bot's password, for a botemu started here (its replies authenticate with it)",
    )
    parser.add_argument(
        "--emulator",
        default=DEFAULT_EMULATOR,
        metavar="URL",
        help=f"the botemu to probe from, started here when none answers (default {DEFAULT_EMULATOR})",
    )
    parser.add_argument(
        "--certs",
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"--calling an https bot: the platform's client certificate, from the directory "
        f"written by 'botemu certs' (default {DEFAULT_DIR}/)",
    )
    parser.add_argument(
        "--ca",
        metavar="FILE",
        help="--calling an https bot: the CA that verifies its server certificate (default: "
        "ca.pem in --certs)",
    )
    parser.add_argument(
        "--endorse",
        action="append",
        metavar="CHANNEL",
        help="for a botemu started here: publish its signing keys endorsed for CHANNEL "
        "(repeatable), so that the probe checks the bot refuses a channel they are not endorsed "
        "for (a running botemu: botemu serve --endorse)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds allowed for each request (default 10)",
    )
    parser.set_defaults(handler=probe_auth_handler)
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600: {text!r}")
    return value


# --- probe tls ----------------------------------------------------------------------------------


def probe_tls_handler(args: argparse.Namespace, out: TextIO) -> int:
    ca_file = None if args.ca is None else Path(args.ca)
    colour = not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty()
    started = False

    def show(f: Finding) -> None:  # human output: one line per case as soon as it is judged
        nonlocal started
        if not started:
            out.write(f"TLS probe of {args.bot}\n")
            started = True
        out.write(f"  {f.where:14} {_mark(f, colour)}  {f.message} [{f.rule}]\n")
        out.flush()

    try:
        check_url(args.bot)
        paths = load_certs(Path(args.certs))
        if ca_file is not None and not ca_file.is_file():
            raise CertError(ca_file, "no such file")
        findings = asyncio.run(
            probe_tls(
                args.bot,
                paths,
                timeout=args.timeout,
                ca_file=ca_file,
                on_finding=None if args.json else show,
            )
        )
    except (ProbeError, CertError) as e:
        _fail("probe tls", str(e))
        return EXIT_USAGE
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        json.dump(
            {
                "bot": args.bot,
                "ca": str(ca_file or paths.ca),
                "passed": errors == 0,
                "errors": errors,
                "warnings": sum(f.severity is Severity.WARNING for f in findings),
                "findings": [f.to_json() for f in findings],
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        out.write(_summary(args.bot, findings) + "\n")
    return EXIT_FAILED if errors else EXIT_OK


_MARKS = {
    Severity.INFO: ("pass", "32"),
    Severity.WARNING: ("warn", "33"),
    Severity.ERROR: ("FAIL", "31"),
}


def _mark(finding: Finding, colour: bool) -> str:
    text, code = _MARKS[finding.severity]
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _summary(url: str, findings: list[Finding], *, skipped: int = 0) -> str:
    """``skipped``: how many of the info findings are cases that were not run."""
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    passed = len(findings) - errors - warnings - skipped
    verdict = "FAILED" if errors else "passed"
    return (
        f"{url}: {verdict}: {passed} of {len(findings)} cases passed, "
        f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
        + (f", {skipped} skipped" if skipped else "")
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _fail(command: str, message: str) -> None:
    print(f"botemu {command}: {message}", file=sys.stderr)


# --- probe auth ---------------------------------------------------------------------------------


def probe_auth_handler(args: argparse.Namespace, out: TextIO) -> int:
    try:
        auth.check_url(args.bot, "calling address" if args.calling else "messaging endpoint")
        emulator = _emulator_url(args.emulator)
        report = asyncio.run(_probe_auth(args, emulator))
        findings = [_finding(item) for item in report.get("findings") or []]
        if not findings:
            raise BotemuError(f"the botemu at {emulator} ran no case")
    except OSError as e:  # the in-process botemu cannot listen
        _fail("probe auth", f"cannot start a botemu at {args.emulator}: {e.strerror or e}")
        return EXIT_USAGE
    except BotemuError as e:
        _fail("probe auth", str(e))
        return EXIT_USAGE
    errors = sum(f.severity is Severity.ERROR for f in findings)
    key = "call_id" if args.calling else "conversation_id"  # the probe's transcript
    if args.json:
        json.dump(
            {
                "bot": args.bot,
                "app_id": report.get("app_id"),
                "emulator": emulator,
                **({"calling": True} if args.calling else {}),
                key: report.get(key),
                "passed": errors == 0,
                "errors": errors,
                "warnings": sum(f.severity is Severity.WARNING for f in findings),
                "skipped": sum(auth.skipped(f) for f in findings),
                "findings": [f.to_json() for f in findings],
            },
            out,
            indent=2,
        )
        out.write("\n")
        return EXIT_FAILED if errors else EXIT_OK
    colour = not os.environ.get("NO_COLOR") and hasattr(out, "isatty") and out.isatty()
    probe = "Calling auth probe" if args.calling else "Auth probe"
    out.write(f"{probe} of {args.bot} (app id {report.get('app_id')}) from {emulator}\n")
    width = max(len(f.where) for f in findings)
    for f in findings:
        mark = _skip_mark(colour) if auth.skipped(f) else _mark(f, colour)
        out.write(f"  {f.where:{width}} {mark}  {f.message} [{f.rule}]\n")
    out.write(_summary(args.bot, findings, skipped=sum(auth.skipped(f) for f in findings)) + "\n")
    return EXIT_FAILED if errors else EXIT_OK


def _skip_mark(colour: bool) -> str:
    """A case the probe did not run: neither a pass nor a failure."""
    return "\x1b[36mskip\x1b[0m" if colour else "skip"


def _emulator_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme != "http" or not parts.hostname:
        raise BotemuError(f"--emulator {text!r} must be an http URL with a host")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise BotemuError(f"--emulator {text!r} has a bad port") from None
    return text.rstrip("/")


async def _probe_auth(args: argparse.Namespace, emulator: str) -> dict[str, Any]:
    """The route's answer, from the botemu at ``emulator`` or from one started here (with its
    keys endorsed for ``--endorse``)."""
    endorsements = endorsed_channels(args.endorse or [])
    if endorsements and args.calling:
        raise BotemuError("--endorse is for messaging bots: a call carries no channelId")
    body: dict[str, Any] = {"bot": args.bot, "timeout": args.timeout}
    if args.app_id:
        body["app_id"] = args.app_id
    if args.calling:
        body["calling"] = True
        if args.bot.lower().startswith("https:"):  # the client certificate, as botemu call has it
            body["certs"] = str(Path(args.certs).resolve())
            if args.ca:
                body["ca"] = str(Path(args.ca).resolve())
    if await running(emulator):
        if endorsements:
            raise BotemuError(
                f"a botemu answers at {emulator}, and it publishes its own keys: give --endorse "
                "to it (botemu serve --endorse CHANNEL), or stop it to probe from one started here"
            )
        return await _post_probe(emulator, body, args.timeout, Path(args.certs))
    if not args.app_id:
        needs = "" if args.calling else " (and --app-password, which the bot's replies need)"
        raise BotemuError(
            f"no botemu answers at {emulator}; to start one here, give --app-id{needs}"
        )
    parts = urlsplit(emulator)
    bot = (
        BotRegistration(args.app_id, args.app_password or "", calling_endpoint=args.bot)
        if args.calling
        else BotRegistration(args.app_id, args.app_password or "", args.bot)
    )
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST,
        port=parts.port or DEFAULT_PORT,
        bots=(bot,),
        endorsements=endorsements,
        certs_dir=Path(args.certs),
    )
    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await _post_probe(emulator, body, args.timeout, Path(args.certs))


async def _post_probe(
    emulator: str, body: dict[str, Any], timeout: float, certs: Path | None = None
) -> dict[str, Any]:
    """``certs``: the botemu's certificates directory, which holds its control secret."""
    requests = auth_calling.REQUESTS if body.get("calling") else len(auth.CASES)
    limit = requests * timeout + 30
    report: dict[str, Any] = await post_control(emulator, "/_botemu/probe/auth", body, limit,
                                                certs=certs)  # fmt: skip
    return report


def _finding(item: object) -> Finding:
    return finding_of(item)
