"""Certificates for TLS between the calling platform and a bot (spec: Authentication).

One persisted CA signs three leaf certificates and a revocation list; all nine files live in one
directory:

``ca.pem``, ``ca.key``              the botemu CA; a bot trusts it for client certificates
``ca.crl.pem``                      the CA's certificate revocation list (X.509 CRL v2)
``bot.pem``, ``bot.key``            the bot's server certificate (localhost, 127.0.0.1, ::1)
``platform.pem``, ``platform.key``  the platform's client certificate (``platform.botemu.local``)
``platform-revoked.pem``, ``.key``  a platform client certificate (same name, good dates) that
                                    the CRL lists as revoked: the TLS probe's ``revoked`` case

The ``.pem`` files of the leaves hold the leaf, then the CA. Key files are mode 0600. The CA comes
from trustme, which (>= 1.2) reloads a persisted CA with ``CA.from_pem``, so ``ca.key`` is kept and
later runs issue more certificates from the same CA (re-issues, and the TLS probe's deliberately bad
ones, which stay in memory). Leaves are built here with ``cryptography`` (trustme's profile: EC
P-256, its key usages; no empty subject alternative name) because every certificate from the
botemu CA also names a CRL distribution point, ``<base URL>/_botemu/pki/crl`` (``pki_routes``
serves it). The CRL is valid for 30 days and renewed (new CRL number) by ``ensure_certs`` or
``current_crl`` when fewer than 7 are left. Every error is a ``CertError``.
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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from emulator.errors import BotemuError

PLATFORM_CN = "platform.botemu.local"
BOT_IDENTITIES = ("localhost", "127.0.0.1", "::1")
ORGANIZATION = "botemu"

CA_FILE, CA_KEY_FILE = "ca.pem", "ca.key"
BOT_CERT_FILE, BOT_KEY_FILE = "bot.pem", "bot.key"
CLIENT_CERT_FILE, CLIENT_KEY_FILE = "platform.pem", "platform.key"
REVOKED_CERT_FILE, REVOKED_KEY_FILE = "platform-revoked.pem", "platform-revoked.key"
CRL_FILE = "ca.crl.pem"
LOCK_FILE = ".lock"

KEY_MODE = 0o600
CERT_MODE = 0o644

# Where certificates say their CRL is: a botemu's base URL (its default address) + CRL_PATH.
DEFAULT_PKI_BASE_URL = "http://127.0.0.1:9070"
CRL_PATH = "/_botemu/pki/crl"
OCSP_PATH = "/_botemu/pki/ocsp"
CRL_LIFETIME = timedelta(days=30)  # nextUpdate - thisUpdate
CRL_RENEW_BEFORE = timedelta(days=7)  # a CRL with less left than this is renewed
# The validity of persisted leaves: trustme's defaults, so nothing expires under a test suite.
NOT_BEFORE = datetime(2000, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(3000, 1, 1, tzinfo=UTC)


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
    crl: Path
    revoked_cert: Path
    revoked_key: Path

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
            crl=d / CRL_FILE,
            revoked_cert=d / REVOKED_CERT_FILE,
            revoked_key=d / REVOKED_KEY_FILE,
        )

    def pairs(self) -> tuple[tuple[Path, Path], ...]:
        """(certificate, key) for the CA, the bot and the platform client (the files every
        use needs: ``load_certs`` requires them; the CRL and the revoked pair are optional)."""
        return (
            (self.ca, self.ca_key),
            (self.bot_cert, self.bot_key),
            (self.client_cert, self.client_key),
        )


# --- writing and reading ------------------------------------------------------------------------


def ensure_certs(
    directory: Path,
    *,
    client_cn: str = PLATFORM_CN,
    force: bool = False,
    base_url: str = DEFAULT_PKI_BASE_URL,
) -> CertPaths:
    """Create the CA, the bot's server certificate, the platform's client certificate, the
    revoked platform certificate and the CA's CRL.

    Existing files are kept (the CA above all: bots trust it), unless ``force``, which replaces
    everything with a new CA. A missing leaf pair is issued from the existing CA; a missing, stale
    (under 7 days left) or foreign CRL is written anew. Without the CA, or with ``force``, every
    file is written anew. ``client_cn`` is the common name of a newly issued platform certificate;
    an existing one keeps its name (see ``common_name``), and the revoked certificate carries the
    platform certificate's name. ``base_url`` is the botemu whose ``/_botemu/pki/crl`` newly issued
    certificates name as their CRL distribution point.
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
        _fill(paths, client_cn, force, crl_url(base_url))
    return paths


def _fill(paths: CertPaths, client_cn: str, force: bool, distribution_point: str) -> None:
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
            chain, key_pem = _issue(ca, unit, identities, cn, crl=distribution_point)
            _write(key, key_pem, KEY_MODE)
            _write(cert, chain, CERT_MODE)
        else:
            _read_cert(cert)  # kept: it must at least be a certificate
            _tighten(key)
    # The revoked twin of the platform certificate: same name and dates, listed in the CRL. It is
    # reissued when missing or when its name no longer matches the platform certificate's, so
    # that the probe's "revoked" case differs from the accepted one by revocation alone.
    platform_cn = common_name(paths.client_cert) or client_cn
    revoked = paths.revoked_cert, paths.revoked_key
    if (
        fresh
        or not all(p.exists() for p in revoked)
        or common_name(paths.revoked_cert) != platform_cn
    ):
        chain, key_pem = _issue(
            ca, "calling platform client (revoked)", (), platform_cn, crl=distribution_point
        )
        _write(paths.revoked_key, key_pem, KEY_MODE)
        _write(paths.revoked_cert, chain, CERT_MODE)
    else:
        _tighten(paths.revoked_key)
    _fill_crl(paths, ca, fresh=fresh, now=datetime.now(UTC))


def current_crl(directory: Path, *, now: datetime | None = None) -> x509.CertificateRevocationList:
    """The CA's current CRL, renewed first (under the directory's lock) when it is missing,
    not the CA's, has under 7 days left or does not list the revoked certificate.

    Needs the CA and the revoked certificate (``ensure_certs`` writes both); ``CertError`` names
    the first missing or unusable file, or the CRL when it cannot be written.
    """
    paths = CertPaths.of(directory)
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "no such directory; run 'botemu certs' first")
    with _locked(paths.dir):
        return _fill_crl(paths, load_ca(paths), fresh=False, now=now or datetime.now(UTC))


def crl_url(base_url: str) -> str:
    """The CRL distribution point of a botemu at ``base_url`` (``http://host:port``)."""
    return base_url.rstrip("/") + CRL_PATH


def crl_distribution_points(cert_file: Path) -> list[str]:
    """The URIs in the CRL distribution point extension of the first certificate in a PEM file."""
    try:
        ext = _read_cert(cert_file).extensions.get_extension_for_class(x509.CRLDistributionPoints)
    except x509.ExtensionNotFound:
        return []
    return [
        name.value
        for point in ext.value
        for name in point.full_name or ()
        if isinstance(name, x509.UniformResourceIdentifier)
    ]


def read_crl(path: Path) -> x509.CertificateRevocationList:
    """A PEM CRL file (``ca.crl.pem``); ``CertError`` when it is missing or not a CRL."""
    try:
        return x509.load_pem_x509_crl(read_pem(path))
    except ValueError:
        raise CertError(path, "not a PEM certificate revocation list") from None


def _fill_crl(
    paths: CertPaths, ca: trustme.CA, *, fresh: bool, now: datetime
) -> x509.CertificateRevocationList:
    """Keep ``ca.crl.pem`` when it is current, else sign and write a new one (its CRL number one
    more than the old one's). It lists the revoked certificate's serial number."""
    serial = _read_cert(paths.revoked_cert).serial_number
    ca_cert, ca_key = signer(ca)
    old: x509.CertificateRevocationList | None = None
    if not fresh and paths.crl.exists():
        with contextlib.suppress(CertError):
            old = read_crl(paths.crl)
    if old is not None and not (
        old.issuer == ca_cert.subject and old.is_signature_valid(ca_key.public_key())
    ):
        old = None  # another CA's (or a damaged) CRL: replaced, numbering starts again
    if old is not None and _crl_is_current(old, serial, now):
        return old
    number = 1 if old is None else _crl_number(old) + 1
    this_update = now - timedelta(minutes=5)  # a little slack for clocks a bit behind
    listed = old.get_revoked_certificate_by_serial_number(serial) if old is not None else None
    entry = (
        x509.RevokedCertificateBuilder()
        .serial_number(serial)
        .revocation_date(this_update if listed is None else listed.revocation_date_utc)
        .add_extension(x509.CRLReason(x509.ReasonFlags.key_compromise), critical=False)
        .build()
    )
    crl = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(this_update)
        .next_update(this_update + CRL_LIFETIME)
        .add_revoked_certificate(entry)
        .add_extension(x509.CRLNumber(number), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write(paths.crl, crl.public_bytes(serialization.Encoding.PEM), CERT_MODE)
    return crl


def _crl_is_current(crl: x509.CertificateRevocationList, serial: int, now: datetime) -> bool:
    next_update = crl.next_update_utc
    return (
        crl.get_revoked_certificate_by_serial_number(serial) is not None
        and crl.last_update_utc <= now + timedelta(minutes=5)
        and next_update is not None
        and next_update - now >= CRL_RENEW_BEFORE
    )


def _crl_number(crl: x509.CertificateRevocationList) -> int:
    try:
        return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
    except x509.ExtensionNotFound:
        return 0


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

    ``ca="botemu"`` signs with the persisted CA, and the certificate names the same CRL
    distribution point as ``platform.pem`` (the default one when it names none); ``ca="unknown"``
    signs with a throwaway CA that no bot trusts (its certificate ends the chain, no distribution
    point). Nothing is written to ``paths``.
    """
    _check_name(common_name, "common name")
    if ca == "unknown":
        issuer, crl = trustme.CA(organization_name="unknown"), None
    else:
        issuer = load_ca(paths)
        points = crl_distribution_points(paths.client_cert) if paths.client_cert.exists() else []
        crl = points[0] if points else crl_url(DEFAULT_PKI_BASE_URL)
    return _issue(
        issuer, "client", (), common_name, not_before=not_before, not_after=not_after, crl=crl
    )


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
    crl: str | None = None,
) -> tuple[bytes, bytes]:
    """(leaf + CA certificate PEM, key PEM): trustme's leaf profile (EC P-256, for servers and
    clients), plus a CRL distribution point when ``crl`` is a URL. A host-name-like common name
    is also the subject alternative name."""
    if not identities and _is_hostname(common_name):
        identities = (common_name,)
    ca_cert, ca_key = signer(ca)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or NOT_BEFORE)
        .not_valid_after(not_after or NOT_AFTER)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [
                    ExtendedKeyUsageOID.CLIENT_AUTH,
                    ExtendedKeyUsageOID.SERVER_AUTH,
                    ExtendedKeyUsageOID.CODE_SIGNING,
                ]
            ),
            critical=True,
        )
    )
    if identities:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_general_name(i) for i in identities]), critical=False
        )
    if crl is not None:
        point = x509.DistributionPoint(
            full_name=[x509.UniformResourceIdentifier(crl)],
            relative_name=None,
            reasons=None,
            crl_issuer=None,
        )
        builder = builder.add_extension(x509.CRLDistributionPoints([point]), critical=False)
    leaf = builder.sign(ca_key, hashes.SHA256())
    pem = serialization.Encoding.PEM
    chain = leaf.public_bytes(pem) + ca_cert.public_bytes(pem)
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return chain, key_pem


def signer(
    ca: trustme.CA,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey]:
    """The certificate and private key of a trustme CA (a fresh one, or one from ``load_ca``):
    what signs leaves, CRLs and OCSP responses."""
    key = ca._private_key
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise CertError(None, f"the CA's key is a {type(key).__name__}; use --force")
    return ca._certificate, key


def _general_name(identity: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(identity))
    except ValueError:
        return x509.DNSName(identity)


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
