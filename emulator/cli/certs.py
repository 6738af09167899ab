"""``botemu certs``: the CA, the bot's server certificate, the platform's client certificate and
the CA's revocation list, written into a directory (``emulator.certs`` does the work)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from emulator.certs import CertPaths

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_DIR = "certs"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    add_certs_parser(subparsers)


def add_certs_parser(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    from emulator.certs import PLATFORM_CN

    certs: argparse.ArgumentParser = subparsers.add_parser(
        "certs",
        help="write a CA, the bot's server certificate and the platform's client certificate",
        description="Write a CA, a server certificate for the bot (localhost, 127.0.0.1, ::1) "
        "and the calling platform's client certificate into a directory. Existing files are "
        "kept (above all the CA, which bots trust) unless --force. Key files are mode 0600.",
    )
    certs.add_argument(
        "--dir", default=DEFAULT_DIR, metavar="DIR", help=f"where to write (default {DEFAULT_DIR}/)"
    )
    certs.add_argument(
        "--client-cn",
        metavar="CN",
        help=f"common name of the platform's client certificate (default {PLATFORM_CN})",
    )
    certs.add_argument("--force", action="store_true", help="replace every file, the CA included")
    certs.set_defaults(handler=certs_handler)
    return certs


# --- certs --------------------------------------------------------------------------------------


def _describe(paths: CertPaths, cn: str) -> list[tuple[Path, str]]:
    return [
        (paths.ca, "CA certificate: bots trust it for the platform's client certificate"),
        (paths.ca_key, "CA private key (0600): botemu issues further certificates with it"),
        (paths.bot_cert, "bot server certificate (localhost, 127.0.0.1, ::1), then the CA"),
        (paths.bot_key, "bot server private key (0600)"),
        (paths.client_cert, f"platform client certificate (CN {cn}), then the CA"),
        (paths.client_key, "platform client private key (0600)"),
        (paths.crl, "the CA's revocation list: bots load it to refuse revoked certificates"),
        (paths.revoked_cert, f"a revoked platform client certificate (CN {cn}), for probe tls"),
        (paths.revoked_key, "its private key (0600)"),
    ]


def certs_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.certs import PLATFORM_CN, CertError, CertPaths, common_name, ensure_certs

    directory = Path(args.dir)
    paths = CertPaths.of(directory)
    before = {p: _stamp(p) for p, _ in _describe(paths, "")}
    try:
        if args.client_cn is not None and not args.force and paths.client_cert.is_file():
            existing = common_name(paths.client_cert)
            if existing != args.client_cn:
                _fail(
                    "certs",
                    f"{paths.client_cert} was issued for CN {existing!r}, not {args.client_cn!r}; "
                    f"delete {paths.client_cert.name} and {paths.client_key.name} to reissue it "
                    "from the same CA, or use --force for a new CA",
                )
                return EXIT_USAGE
        ensure_certs(directory, client_cn=args.client_cn or PLATFORM_CN, force=args.force)
        cn = common_name(paths.client_cert) or "none"
    except CertError as e:
        _fail("certs", str(e))
        return EXIT_USAGE
    width = max(len(str(p)) for p, _ in _describe(paths, cn))
    for path, what in _describe(paths, cn):
        state = "kept" if before[path] is not None and before[path] == _stamp(path) else "written"
        out.write(f"{path!s:{width}}  {state:7}  {what}\n")
    out.write(
        f"A bot serves {paths.bot_cert.name} with {paths.bot_key.name} and requires client "
        f"certificates that chain to {paths.ca.name} and are not listed in {paths.crl.name}; see "
        "certs/README.md.\n"
    )
    return EXIT_OK


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _fail(command: str, message: str) -> None:
    print(f"botemu {command}: {message}", file=sys.stderr)
