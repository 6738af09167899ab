"""Issuing certificates from the botemu CA: leaves in trustme's profile that name a CRL
distribution point, the persisted CA, and what signs with it.

Leaves are EC P-256 with trustme's key usages (servers and clients alike); a host-name-like common
name is also the subject alternative name; every leaf from the botemu CA names
``<base URL>/_botemu/pki/crl`` as its CRL distribution point.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from emulator.certs.paths import CertError, CertPaths, read_cert, read_pem

PLATFORM_CN = "platform.botemu.local"
BOT_IDENTITIES = ("localhost", "127.0.0.1", "::1")
ORGANIZATION = "botemu"

# Where certificates say their CRL is: a botemu's base URL (its default address) + CRL_PATH.
DEFAULT_PKI_BASE_URL = "http://127.0.0.1:9070"
CRL_PATH = "/_botemu/pki/crl"
OCSP_PATH = "/_botemu/pki/ocsp"
# The validity of persisted leaves: trustme's defaults, so nothing expires under a test suite.
NOT_BEFORE = datetime(2000, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(3000, 1, 1, tzinfo=UTC)


def crl_url(base_url: str) -> str:
    """The CRL distribution point of a botemu at ``base_url`` (``http://host:port``)."""
    return base_url.rstrip("/") + CRL_PATH


def crl_distribution_points(cert_file: Path) -> list[str]:
    """The URIs in the CRL distribution point extension of the first certificate in a PEM file."""
    try:
        ext = read_cert(cert_file).extensions.get_extension_for_class(x509.CRLDistributionPoints)
    except x509.ExtensionNotFound:
        return []
    return [
        name.value
        for point in ext.value
        for name in point.full_name or ()
        if isinstance(name, x509.UniformResourceIdentifier)
    ]


def load_ca(paths: CertPaths) -> trustme.CA:
    """The persisted CA (``ca.pem`` and ``ca.key``), ready to issue certificates."""
    cert_pem = read_pem(paths.ca)
    key_pem = read_pem(paths.ca_key)
    certificate = read_cert(paths.ca)
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as e:
        raise CertError(paths.ca_key, f"not an unencrypted PEM private key ({e})") from None
    if key.public_key() != certificate.public_key():
        raise CertError(paths.ca_key, f"does not belong to {paths.ca.name}; use --force")
    return trustme.CA.from_pem(cert_pem, key_pem)


def signer(
    ca: trustme.CA,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey]:
    """The certificate and private key of a trustme CA (a fresh one, or one from ``load_ca``):
    what signs leaves, CRLs and OCSP responses."""
    key = ca._private_key
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise CertError(None, f"the CA's key is a {type(key).__name__}; use --force")
    return ca._certificate, key


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
    check_name(common_name, "common name")
    if ca == "unknown":
        issuer, crl = trustme.CA(organization_name="unknown"), None
    else:
        issuer = load_ca(paths)
        points = crl_distribution_points(paths.client_cert) if paths.client_cert.exists() else []
        crl = points[0] if points else crl_url(DEFAULT_PKI_BASE_URL)
    return issue_leaf(
        issuer, "client", (), common_name, not_before=not_before, not_after=not_after, crl=crl
    )


def issue_leaf(
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
    builder = _leaf_builder(
        ca_cert, key.public_key(), _subject(unit, common_name), not_before, not_after
    )
    if identities:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_general_name(i) for i in identities]), critical=False
        )
    if crl is not None:
        builder = builder.add_extension(_distribution_points(crl), critical=False)
    leaf = builder.sign(ca_key, hashes.SHA256())
    pem = serialization.Encoding.PEM
    chain = leaf.public_bytes(pem) + ca_cert.public_bytes(pem)
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return chain, key_pem


_LEAF_KEY_USAGE = x509.KeyUsage(
    digital_signature=True,
    content_commitment=False,
    key_encipherment=True,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=False,
    crl_sign=False,
    encipher_only=False,
    decipher_only=False,
)
_LEAF_EXTENDED_USAGE = x509.ExtendedKeyUsage(
    [
        ExtendedKeyUsageOID.CLIENT_AUTH,
        ExtendedKeyUsageOID.SERVER_AUTH,
        ExtendedKeyUsageOID.CODE_SIGNING,
    ]
)
"""A leaf's key usages, as trustme gives them (both critical)."""


def _subject(unit: str, common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _leaf_builder(
    ca_cert: x509.Certificate,
    public_key: ec.EllipticCurvePublicKey,
    subject: x509.Name,
    not_before: datetime | None,
    not_after: datetime | None,
) -> x509.CertificateBuilder:
    """A leaf of the CA ``ca_cert``, up to its key usages (the default dates: trustme's)."""
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or NOT_BEFORE)
        .not_valid_after(not_after or NOT_AFTER)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .add_extension(_LEAF_KEY_USAGE, critical=True)
        .add_extension(_LEAF_EXTENDED_USAGE, critical=True)
    )


def _distribution_points(url: str) -> x509.CRLDistributionPoints:
    point = x509.DistributionPoint(
        full_name=[x509.UniformResourceIdentifier(url)],
        relative_name=None,
        reasons=None,
        crl_issuer=None,
    )
    return x509.CRLDistributionPoints([point])


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


def check_name(name: str, what: str) -> None:
    """``CertError`` unless ``name`` can be a common name (1 to 64 printable characters)."""
    if not name or not name.isprintable() or len(name) > 64:
        raise CertError(None, f"{what} {name!r}: expected 1 to 64 printable characters")
