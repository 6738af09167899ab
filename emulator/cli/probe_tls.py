"""``botemu probe tls`` (wired in by ``emulator.cli.probe``): client certificates a bot must
refuse, a line per case (``emulator.cli.report``), then a summary.

``add_tls_probe_parser`` adds the probe to an existing ``probe`` subparsers action. Exit codes: 0
when every case passed, 1 when the probe found an error, 2 for a usage or configuration error (one
line on standard error, never a traceback).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from emulator.cli.report import colour_of, dump, fail, mark, summary
from emulator.findings import Finding, Severity

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_DIR = "certs"


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
        type=seconds,
        default=10.0,
        metavar="S",
        help="seconds allowed for each case (default 10)",
    )
    tls.set_defaults(handler=probe_tls_handler)
    return tls


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600: {text!r}")
    return value


def probe_tls_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.certs import CertError, load_certs
    from emulator.conformance.tls import ProbeError, check_url, probe_tls

    ca_file = None if args.ca is None else Path(args.ca)
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
                on_finding=None if args.json else _tls_printer(args.bot, out),
            )
        )
    except (ProbeError, CertError) as e:
        fail("probe tls", str(e))
        return EXIT_USAGE
    errors = sum(f.severity is Severity.ERROR for f in findings)
    if args.json:
        dump(out, _tls_json(args.bot, ca_file or paths.ca, findings))
    else:
        out.write(summary(args.bot, findings) + "\n")
    return EXIT_FAILED if errors else EXIT_OK


def _tls_printer(bot: str, out: TextIO) -> Callable[[Finding], None]:
    """The human output of ``probe tls``: one line per case as soon as it is judged, after a
    header line before the first."""
    colour = colour_of(out)
    started = False

    def show(f: Finding) -> None:
        nonlocal started
        if not started:
            out.write(f"TLS probe of {bot}\n")
            started = True
        out.write(f"  {f.where:14} {mark(f, colour)}  {f.message} [{f.rule}]\n")
        out.flush()

    return show


def _tls_json(bot: str, ca: Path, findings: list[Finding]) -> dict[str, object]:
    errors = sum(f.severity is Severity.ERROR for f in findings)
    return {
        "bot": bot,
        "ca": str(ca),
        "passed": errors == 0,
        "errors": errors,
        "warnings": sum(f.severity is Severity.WARNING for f in findings),
        "findings": [f.to_json() for f in findings],
    }
