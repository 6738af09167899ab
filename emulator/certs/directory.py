"""Writing a certificate directory: ``ensure_certs`` creates or completes it.

The CA first (kept unless ``force``: bots trust it), then the bot's server certificate, the
platform's client certificate, its revoked twin, and the CA's CRL, all under the directory's
lock, so that two processes never mix certificates from two new CAs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import trustme

from emulator.certs.crl import fill_crl
from emulator.certs.issuing import (
    BOT_IDENTITIES,
    DEFAULT_PKI_BASE_URL,
    ORGANIZATION,
    PLATFORM_CN,
    check_name,
    crl_url,
    issue_leaf,
    load_ca,
)
from emulator.certs.paths import (
    CERT_MODE,
    KEY_MODE,
    CertError,
    CertPaths,
    common_name,
    locked,
    read_cert,
    tighten,
    write_file,
)


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
    check_name(client_cn, "client common name")
    try:
        paths.dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CertError(paths.dir, "exists and is not a directory") from None
    except OSError as e:
        raise CertError(paths.dir, f"cannot create: {e.strerror or e}") from None
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "exists and is not a directory")

    with locked(paths.dir):
        _fill(paths, client_cn, force, crl_url(base_url))
    return paths


def _fill(paths: CertPaths, client_cn: str, force: bool, distribution_point: str) -> None:
    """The work of ``ensure_certs``, under the directory's lock."""
    fresh = force or not (paths.ca.exists() or paths.ca_key.exists())
    if fresh:
        ca = trustme.CA(organization_name=ORGANIZATION, organization_unit_name="botemu local CA")
        write_file(paths.ca, ca.cert_pem.bytes(), CERT_MODE)
        write_file(paths.ca_key, ca.private_key_pem.bytes(), KEY_MODE)
    else:
        ca = load_ca(paths)
    leaves = (
        (paths.bot_cert, paths.bot_key, "bot server", BOT_IDENTITIES, "localhost"),
        (paths.client_cert, paths.client_key, "calling platform client", (), client_cn),
    )
    for cert, key, unit, identities, cn in leaves:
        if fresh or not (cert.exists() and key.exists()):
            chain, key_pem = issue_leaf(ca, unit, identities, cn, crl=distribution_point)
            write_file(key, key_pem, KEY_MODE)
            write_file(cert, chain, CERT_MODE)
        else:
            read_cert(cert)  # kept: it must at least be a certificate
            tighten(key)
    _fill_revoked(paths, ca, client_cn, fresh=fresh, distribution_point=distribution_point)
    fill_crl(paths, ca, fresh=fresh, now=datetime.now(UTC))


def _fill_revoked(
    paths: CertPaths, ca: trustme.CA, client_cn: str, *, fresh: bool, distribution_point: str
) -> None:
    """The revoked twin of the platform certificate: same name and dates, listed in the CRL. It
    is reissued when missing or when its name no longer matches the platform certificate's, so
    that the probe's "revoked" case differs from the accepted one by revocation alone."""
    platform_cn = common_name(paths.client_cert) or client_cn
    revoked = paths.revoked_cert, paths.revoked_key
    if (
        fresh
        or not all(p.exists() for p in revoked)
        or common_name(paths.revoked_cert) != platform_cn
    ):
        chain, key_pem = issue_leaf(
            ca, "calling platform client (revoked)", (), platform_cn, crl=distribution_point
        )
        write_file(paths.revoked_key, key_pem, KEY_MODE)
        write_file(paths.revoked_cert, chain, CERT_MODE)
    else:
        tighten(paths.revoked_key)
