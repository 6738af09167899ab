"""Certificates for TLS between the calling platform and a bot (spec: Authentication).

One persisted CA signs two leaf certificates; all six files live in one directory:

``ca.pem``, ``ca.key``              the botemu CA; a bot trusts it for client certificates
``bot.pem``, ``bot.key``            the bot's server certificate (localhost, 127.0.0.1, ::1)
``platform.pem``, ``platform.key``  the platform's client certificate (``platform.botemu.local``)

The ``.pem`` files of the leaves hold the leaf, then the CA. Key files are mode 0600. Certificates
come from trustme; trustme (>= 1.2) reloads a persisted CA with ``CA.from_pem``, so ``ca.key`` is
kept and later runs issue more certificates from the same CA (re-issues, and the TLS probe's
deliberately bad ones, which stay in memory). Every error is a ``CertError``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from emulator.errors import BotemuError

PLATFORM_CN = "platform.botemu.local"
BOT_IDENTITIES = ("localhost", "127.0.0.1", "::1")
ORGANIZATION = "botemu"

CA_FILE, CA_KEY_FILE = "ca.pem", "ca.key"
BOT_CERT_FILE, BOT_KEY_FILE = "bot.pem", "bot.key"
CLIENT_CERT_FILE, CLIENT_KEY_FILE = "platform.pem", "platform.key"
LOCK_FILE = ".lock"

KEY_MODE = 0o600
CERT_MODE = 0o644


class CertError(BotemuError):
    """A certificate directory or file could not be created, read or used, or a name is unusable.

    ``path`` is the file or directory at fault (None for a bad argument); ``message`` says what is
    wrong, in one line.
    """

    def __init__(self, path: Path | None, message: str) -> None:
        super().__init__(message if path is None else f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class CertPaths:
    """Where the files of one certificate directory are (they exist once ``ensure_certs`` ran)."""

    dir: Path
    ca: Path
    ca_key: Path
    bot_cert: Path
    bot_key: Path
    client_cert: Path
    client_key: Path

    @classmethod
    def of(cls, directory: Path) -> CertPaths:
        """The fixed file names inside ``directory`` (nothing is read or written)."""
        d = Path(directory)
        return cls(
            dir=d,
            ca=d / CA_FILE,
            ca_key=d / CA_KEY_FILE,
            bot_cert=d / BOT_CERT_FILE,
            bot_key=d / BOT_KEY_FILE,
            client_cert=d / CLIENT_CERT_FILE,
            client_key=d / CLIENT_KEY_FILE,
        )

    def pairs(self) -> tuple[tuple[Path, Path], ...]:
        """(certificate, key) for the CA, the bot and the platform client."""
        return (
            (self.ca, self.ca_key),
            (self.bot_cert, self.bot_key),
            (self.client_cert, self.client_key),
        )


# --- writing and reading ------------------------------------------------------------------------


def ensure_certs(
    directory: Path, *, client_cn: str = PLATFORM_CN, force: bool = False
) -> CertPaths:
    """Create the CA, the bot's server certificate and the platform's client certificate.

    Existing files are kept (the CA above all: bots trust it), unless ``force``, which replaces
    everything with a new CA. A missing leaf pair is issued from the existing CA. Without the CA,
    or with ``force``, every file is written anew. ``client_cn`` is the common name of a newly
    issued platform certificate; an existing one keeps its name (see ``common_name``).
    """
    paths = CertPaths.of(directory)
    _check_name(client_cn, "client common name")
    try:
        paths.dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CertError(paths.dir, "exists and is not a directory") from None
    except OSError as e:
        raise CertError(paths.dir, f"cannot create: {e.strerror or e}") from None
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "exists and is not a directory")

    with _locked(paths.dir):
        _fill(paths, client_cn, force)
    return paths


def _fill(paths: CertPaths, client_cn: str, force: bool) -> None:
    """The work of ``ensure_certs``, under the directory's lock."""
    fresh = force or not (paths.ca.exists() or paths.ca_key.exists())
    if fresh:
        ca = trustme.CA(organization_name=ORGANIZATION, organization_unit_name="botemu local CA")
        _write(paths.ca, ca.cert_pem.bytes(), CERT_MODE)
        _write(paths.ca_key, ca.private_key_pem.bytes(), KEY_MODE)
    else:
        ca = load_ca(paths)
    leaves = (
        (paths.bot_cert, paths.bot_key, "bot server", BOT_IDENTITIES, "localhost"),
        (paths.client_cert, paths.client_key, "calling platform client", (), client_cn),
    )
    for cert, key, unit, identities, cn in leaves:
        if fresh or not (cert.exists() and key.exists()):
            chain, key_pem = _issue(ca, unit, identities, cn)
            _write(key, key_pem, KEY_MODE)
            _write(cert, chain, CERT_MODE)
        else:
            _read_cert(cert)  # kept: it must at least be a certificate
            _tighten(key)


def load_certs(directory: Path) -> CertPaths:
    """The paths of an existing certificate directory; ``CertError`` names the first missing file."""
    paths = CertPaths.of(directory)
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "no such directory; run 'botemu certs' first")
    for cert, key in paths.pairs():
        for path in (cert, key):
            if not path.is_file():
                raise CertError(path, "missing; run 'botemu certs' (--force to start over)")
    return paths


def load_ca(paths: CertPaths) -> trustme.CA:
    """The persisted CA (``ca.pem`` and ``ca.key``), ready to issue certificates."""
    cert_pem = read_pem(paths.ca)
    key_pem = read_pem(paths.ca_key)
    certificate = _read_cert(paths.ca)
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as e:
        raise CertError(paths.ca_key, f"not an unencrypted PEM private key ({e})") from None
    if key.public_key() != certificate.public_key():
        raise CertError(paths.ca_key, f"does not belong to {paths.ca.name}; use --force")
    return trustme.CA.from_pem(cert_pem, key_pem)


def common_name(cert_file: Path) -> str | None:
    """The subject common name of the first certificate in a PEM file, or None."""
    names = _read_cert(cert_file).subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names:
        return None
    value = names[0].value
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def issue_client_cert(
    paths: CertPaths,
    *,
    common_name: str,
    not_before: datetime,
    not_after: datetime,
    ca: Literal["botemu", "unknown"] = "botemu",
) -> tuple[bytes, bytes]:
    """A client certificate, in memory: (certificate chain PEM, private key PEM).

    ``ca="botemu"`` signs with the persisted CA; ``ca="unknown"`` with a throwaway CA that no bot
    trusts (its certificate ends the chain). Nothing is written to ``paths``.
    """
    _check_name(common_name, "common name")
    issuer = load_ca(paths) if ca == "botemu" else trustme.CA(organization_name="unknown")
    return _issue(issuer, "client", (), common_name, not_before=not_before, not_after=not_after)


# --- ssl contexts -------------------------------------------------------------------------------


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


def server_ssl_context(paths: CertPaths, *, require_client_cert: bool = True) -> ssl.SSLContext:
    """A bot's side (for bots and tests): serves ``bot.pem`` and checks client certificates
    against ``ca.pem``: required, or with ``require_client_cert=False`` only checked when sent."""
    ctx = _context(ssl.Purpose.CLIENT_AUTH, paths.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED if require_client_cert else ssl.CERT_OPTIONAL
    _load_chain(ctx, paths.bot_cert, paths.bot_key)
    return ctx


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
        _write(path, data, KEY_MODE)
        yield path


# --- helpers ------------------------------------------------------------------------------------


def _issue(
    ca: trustme.CA,
    unit: str,
    identities: tuple[str, ...],
    common_name: str,
    *,
    not_before: datetime | None = None,
    not_after: datetime | None = None,
) -> tuple[bytes, bytes]:
    """(leaf + CA certificate PEM, key PEM). A host-name-like common name is also the SAN."""
    if not identities and _is_hostname(common_name):
        identities = (common_name,)
    leaf = ca.issue_cert(
        *identities,
        common_name=common_name,
        organization_name=ORGANIZATION,
        organization_unit_name=unit,
        not_before=not_before,
        not_after=not_after,
    )
    chain = b"".join(blob.bytes() for blob in leaf.cert_chain_pems) + ca.cert_pem.bytes()
    return chain, leaf.private_key_pem.bytes()


def _is_hostname(name: str) -> bool:
    """An ASCII DNS name or an IP address (what may go into a subject alternative name)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return _HOSTNAME.fullmatch(name) is not None and len(name) <= 253
    return True


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def _check_name(name: str, what: str) -> None:
    if not name or not name.isprintable() or len(name) > 64:
        raise CertError(None, f"{what} {name!r}: expected 1 to 64 printable characters")


def read_pem(path: Path) -> bytes:
    """The bytes of a certificate or key file; ``CertError`` when it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CertError(path, "missing; run 'botemu certs' (--force to start over)") from None
    except OSError as e:
        raise CertError(path, f"cannot read: {e.strerror or e}") from None


def _read_cert(path: Path) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(read_pem(path))
    except ValueError:
        raise CertError(path, "not a PEM certificate; use --force to replace it") from None


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically: a private temporary file (0600 from the start), then chmod and rename."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise CertError(path, f"cannot write: {e.strerror or e}") from None


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise ``ensure_certs`` runs on one directory (POSIX; elsewhere a no-op), so that two
    processes never mix certificates from two new CAs."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, KEY_MODE)
    except OSError:  # a read-only directory: nothing can be written anyway, so reading is safe
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _tighten(key: Path) -> None:
    """A kept key file is made 0600 too."""
    try:
        if key.stat().st_mode & 0o777 != KEY_MODE:
            os.chmod(key, KEY_MODE)
    except OSError as e:
        raise CertError(key, f"cannot set mode 0600: {e.strerror or e}") from None
