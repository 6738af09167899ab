"""The ``botemu probe tls`` and ``botemu probe auth`` subcommands (wired in by ``emulator.cli``).

``register(subparsers)`` adds them both; ``add_tls_probe_parser`` (``emulator.cli.probe_tls``) and
``add_auth_probe_parser`` add one each to an existing ``probe`` subparsers action.
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
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from emulator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from emulator.cli.probe_tls import DEFAULT_DIR, add_tls_probe_parser, seconds
from emulator.cli.report import (
    colour_of,
    dump,
    emulator_url,
    fail,
    finding,
    mark,
    post_route,
    post_route_here,
    summary,
)
from emulator.config import DEFAULT_HOST, DEFAULT_PORT, BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity

ROUTE = "/_botemu/probe/auth"


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
    _auth_bot_options(parser)
    _auth_emulator_options(parser)
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=10.0,
        metavar="S",
        help="seconds allowed for each request (default 10)",
    )
    parser.set_defaults(handler=probe_auth_handler)
    return parser


def _auth_bot_options(parser: argparse.ArgumentParser) -> None:
    """The bot probed, and its credentials."""
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


def _auth_emulator_options(parser: argparse.ArgumentParser) -> None:
    """The botemu the probe runs in, its certificates and its keys' endorsements."""
    from emulator.client import DEFAULT_EMULATOR

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


# --- probe auth ---------------------------------------------------------------------------------


def probe_auth_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.conformance import auth

    try:
        auth.check_url(args.bot, "calling address" if args.calling else "messaging endpoint")
        emulator = emulator_url(args.emulator)
        report = asyncio.run(_probe_auth(args, emulator))
        findings = [finding(item) for item in report.get("findings") or []]
        if not findings:
            raise BotemuError(f"the botemu at {emulator} ran no case")
    except OSError as e:  # the in-process botemu cannot listen
        fail("probe auth", f"cannot start a botemu at {args.emulator}: {e.strerror or e}")
        return EXIT_USAGE
    except BotemuError as e:
        fail("probe auth", str(e))
        return EXIT_USAGE
    if args.json:
        dump(out, _auth_json(args, emulator, report, findings))
    else:
        _auth_human(args, emulator, report, findings, out)
    return EXIT_FAILED if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


def _auth_json(
    args: argparse.Namespace, emulator: str, report: dict[str, Any], findings: list[Finding]
) -> dict[str, object]:
    from emulator.conformance import auth

    errors = sum(f.severity is Severity.ERROR for f in findings)
    key = "call_id" if args.calling else "conversation_id"  # the probe's transcript
    return {
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
    }


def _auth_human(
    args: argparse.Namespace,
    emulator: str,
    report: dict[str, Any],
    findings: list[Finding],
    out: TextIO,
) -> None:
    from emulator.conformance import auth

    colour = colour_of(out)
    probe = "Calling auth probe" if args.calling else "Auth probe"
    out.write(f"{probe} of {args.bot} (app id {report.get('app_id')}) from {emulator}\n")
    width = max(len(f.where) for f in findings)
    for f in findings:
        shown = _skip_mark(colour) if auth.skipped(f) else mark(f, colour)
        out.write(f"  {f.where:{width}} {shown}  {f.message} [{f.rule}]\n")
    out.write(summary(args.bot, findings, skipped=sum(auth.skipped(f) for f in findings)) + "\n")


def _skip_mark(colour: bool) -> str:
    """A case the probe did not run: neither a pass nor a failure."""
    return "\x1b[36mskip\x1b[0m" if colour else "skip"


async def _probe_auth(args: argparse.Namespace, emulator: str) -> dict[str, Any]:
    """The route's answer, from the botemu at ``emulator`` or from one started here (with its
    keys endorsed for ``--endorse``)."""
    from emulator.client import running
    from emulator.identity.keys import endorsed_channels

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
    config = _local_config(args, emulator, endorsements)
    return await post_route_here(config, emulator, ROUTE, body, _limit(body, args.timeout),
                                 Path(args.certs))  # fmt: skip


def _local_config(
    args: argparse.Namespace, emulator: str, endorsements: tuple[str, ...]
) -> ServiceConfig:
    """The botemu to start here at ``emulator``, with the probed bot registered."""
    parts = urlsplit(emulator)
    bot = (
        BotRegistration(args.app_id, args.app_password or "", calling_endpoint=args.bot)
        if args.calling
        else BotRegistration(args.app_id, args.app_password or "", args.bot)
    )
    return ServiceConfig(
        host=parts.hostname or DEFAULT_HOST,
        port=parts.port or DEFAULT_PORT,
        bots=(bot,),
        endorsements=endorsements,
        certs_dir=Path(args.certs),
    )


async def _post_probe(
    emulator: str, body: dict[str, Any], timeout: float, certs: Path | None = None
) -> dict[str, Any]:
    """``certs``: the botemu's certificates directory, which holds its control secret."""
    return await post_route(emulator, ROUTE, body, _limit(body, timeout), certs)


def _limit(body: dict[str, Any], timeout: float) -> float:
    """Seconds the whole probe may take: each of its requests may take ``timeout``."""
    from emulator.conformance import auth, auth_calling

    requests = auth_calling.REQUESTS if body.get("calling") else len(auth.CASES)
    return requests * timeout + 30
