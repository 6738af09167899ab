"""The botemu CA's certificate revocation list (X.509 CRL v2, ``ca.crl.pem``).

It lists one certificate, the revoked platform certificate (reason: key compromise). It is valid
for 30 days and renewed (a new CRL number; the revocation date is kept) when fewer than 7 are
left, when it is not the CA's, or when it does not list the revoked certificate.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from emulator.certs.issuing import load_ca, signer
from emulator.certs.paths import (
    CERT_MODE,
    CertError,
    CertPaths,
    locked,
    read_cert,
    read_pem,
    write_file,
)

CRL_LIFETIME = timedelta(days=30)  # nextUpdate - thisUpdate
CRL_RENEW_BEFORE = timedelta(days=7)  # a CRL with less left than this is renewed


def current_crl(directory: Path, *, now: datetime | None = None) -> x509.CertificateRevocationList:
    """The CA's current CRL, renewed first (under the directory's lock) when it is missing,
    not the CA's, has under 7 days left or does not list the revoked certificate.

    Needs the CA and the revoked certificate (``ensure_certs`` writes both); ``CertError`` names
    the first missing or unusable file, or the CRL when it cannot be written.
    """
    paths = CertPaths.of(directory)
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "no such directory; run 'botemu certs' first")
    with locked(paths.dir):
        return fill_crl(paths, load_ca(paths), fresh=False, now=now or datetime.now(UTC))


def read_crl(path: Path) -> x509.CertificateRevocationList:
    """A PEM CRL file (``ca.crl.pem``); ``CertError`` when it is missing or not a CRL."""
    try:
        return x509.load_pem_x509_crl(read_pem(path))
    except ValueError:
        raise CertError(path, "not a PEM certificate revocation list") from None


def fill_crl(
    paths: CertPaths, ca: trustme.CA, *, fresh: bool, now: datetime
) -> x509.CertificateRevocationList:
    """Keep ``ca.crl.pem`` when it is current, else sign and write a new one (its CRL number one
    more than the old one's). It lists the revoked certificate's serial number."""
    serial = read_cert(paths.revoked_cert).serial_number
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
    revoked_at = this_update if listed is None else listed.revocation_date_utc
    crl = _sign_crl(ca_cert, ca_key, serial, revoked_at, number=number, this_update=this_update)
    write_file(paths.crl, crl.public_bytes(serialization.Encoding.PEM), CERT_MODE)
    return crl


def _sign_crl(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey,
    serial: int,
    revoked_at: datetime,
    *,
    number: int,
    this_update: datetime,
) -> x509.CertificateRevocationList:
    """A CRL numbered ``number`` that lists ``serial`` (revoked at ``revoked_at``)."""
    entry = (
        x509.RevokedCertificateBuilder()
        .serial_number(serial)
        .revocation_date(revoked_at)
        .add_extension(x509.CRLReason(x509.ReasonFlags.key_compromise), critical=False)
        .build()
    )
    return (
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
