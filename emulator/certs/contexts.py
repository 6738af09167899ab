"""SSL contexts for TLS between the calling platform and a bot, from a certificate directory.

The platform's side presents ``platform.pem`` (or an in-memory certificate) and verifies the bot
against ``ca.pem``; a bot's side serves ``bot.pem``, checks client certificates against
``ca.pem`` and, by default, refuses one that ``ca.crl.pem`` lists. Every error is a ``CertError``.
"""

from __future__ import annotations

import contextlib
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

from emulator.certs.paths import KEY_MODE, CertError, CertPaths, write_file


def client_ssl_context(paths: CertPaths, *, ca_file: Path | None = None) -> ssl.SSLContext:
    """The platform's side: presents ``platform.pem`` and verifies the bot against ``ca.pem``
    (or ``ca_file``), host name included."""
    ctx = _context(ssl.Purpose.SERVER_AUTH, ca_file or paths.ca)
    _load_chain(ctx, paths.client_cert, paths.client_key)
    return ctx


def client_ssl_context_for(
    chain_pem: bytes | None, key_pem: bytes | None, *, ca_file: Path
) -> ssl.SSLContext:
    """Like ``client_ssl_context`` but presenting an in-memory certificate, or none."""
    ctx = _context(ssl.Purpose.SERVER_AUTH, ca_file)
    if chain_pem is not None and key_pem is not None:
        with _temporary_pem(key_pem + chain_pem) as path:
            _load_chain(ctx, path, None)
    return ctx


def server_ssl_context(
    paths: CertPaths, *, require_client_cert: bool = True, check_revocation: bool = True
) -> ssl.SSLContext:
    """A bot's side (for bots and tests): serves ``bot.pem`` and checks client certificates
    against ``ca.pem``: required, or with ``require_client_cert=False`` only checked when sent.
    With ``check_revocation`` (the default) it also loads ``ca.crl.pem`` and refuses a client
    certificate that the CRL lists (``ssl.VERIFY_CRL_CHECK_LEAF``); the CRL must exist then."""
    ctx = _context(ssl.Purpose.CLIENT_AUTH, paths.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED if require_client_cert else ssl.CERT_OPTIONAL
    if check_revocation:
        load_crl(ctx, paths.crl)
    _load_chain(ctx, paths.bot_cert, paths.bot_key)
    return ctx


def load_crl(ctx: ssl.SSLContext, crl_file: Path) -> None:
    """Make ``ctx`` refuse peer certificates that the CRL in ``crl_file`` lists: load it and set
    ``VERIFY_CRL_CHECK_LEAF`` (which then needs a current CRL from the leaf's issuer)."""
    try:
        ctx.load_verify_locations(cafile=str(crl_file))
    except FileNotFoundError:
        raise CertError(crl_file, "missing; run 'botemu certs'") from None
    except ssl.SSLError as e:
        raise CertError(crl_file, f"not a PEM CRL file ({e.reason or e})") from None
    except OSError as e:
        raise CertError(crl_file, f"cannot read: {e.strerror or e}") from None
    ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF


def _context(purpose: ssl.Purpose, ca_file: Path) -> ssl.SSLContext:
    try:
        return ssl.create_default_context(purpose, cafile=str(ca_file))
    except FileNotFoundError:
        raise CertError(ca_file, "no such file") from None
    except ssl.SSLError as e:
        raise CertError(ca_file, f"not a PEM certificate file ({e.reason or e})") from None
    except OSError as e:
        raise CertError(ca_file, f"cannot read: {e.strerror or e}") from None


def _load_chain(ctx: ssl.SSLContext, cert: Path, key: Path | None) -> None:
    try:
        ctx.load_cert_chain(str(cert), None if key is None else str(key))
    except FileNotFoundError:
        raise CertError(cert, "missing; run 'botemu certs'") from None
    except ssl.SSLError as e:
        raise CertError(cert, f"certificate and key do not load ({e.reason or e})") from None
    except OSError as e:
        raise CertError(cert, f"cannot read: {e.strerror or e}") from None


@contextlib.contextmanager
def _temporary_pem(data: bytes) -> Iterator[Path]:
    """A private temporary file (ssl loads certificate chains only from files)."""
    with tempfile.TemporaryDirectory(prefix="botemu-") as d:
        path = Path(d) / "cert.pem"
        write_file(path, data, KEY_MODE)
        yield path
