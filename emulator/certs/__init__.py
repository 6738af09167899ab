"""Certificates for TLS between the calling platform and a bot (spec: Authentication).
May import: only the infrastructure (config, errors, findings, jsonutil, ids, inputs, patterns).

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

The modules: ``paths.py`` (the files of a directory, reading and writing them, ``CertError``),
``issuing.py`` (the CA and the leaves it issues), ``crl.py`` (the revocation list),
``directory.py`` (``ensure_certs``) and ``contexts.py`` (SSL contexts). This package re-exports
their public names; import them from ``emulator.certs``.
"""

from __future__ import annotations

from emulator.certs.contexts import (
    client_ssl_context,
    client_ssl_context_for,
    load_crl,
    server_ssl_context,
)
from emulator.certs.crl import (
    CRL_LIFETIME,
    CRL_RENEW_BEFORE,
    current_crl,
    read_crl,
)
from emulator.certs.directory import (
    ensure_certs,
)
from emulator.certs.issuing import (
    BOT_IDENTITIES,
    CRL_PATH,
    DEFAULT_PKI_BASE_URL,
    NOT_AFTER,
    NOT_BEFORE,
    OCSP_PATH,
    ORGANIZATION,
    PLATFORM_CN,
    crl_distribution_points,
    crl_url,
    issue_client_cert,
    load_ca,
    signer,
)
from emulator.certs.paths import (
    BOT_CERT_FILE,
    BOT_KEY_FILE,
    CA_FILE,
    CA_KEY_FILE,
    CERT_MODE,
    CLIENT_CERT_FILE,
    CLIENT_KEY_FILE,
    CRL_FILE,
    KEY_MODE,
    LOCK_FILE,
    REVOKED_CERT_FILE,
    REVOKED_KEY_FILE,
    CertError,
    CertPaths,
    common_name,
    load_certs,
    read_pem,
)

__all__ = [
    "BOT_CERT_FILE",
    "BOT_IDENTITIES",
    "BOT_KEY_FILE",
    "CA_FILE",
    "CA_KEY_FILE",
    "CERT_MODE",
    "CLIENT_CERT_FILE",
    "CLIENT_KEY_FILE",
    "CRL_FILE",
    "CRL_LIFETIME",
    "CRL_PATH",
    "CRL_RENEW_BEFORE",
    "DEFAULT_PKI_BASE_URL",
    "KEY_MODE",
    "LOCK_FILE",
    "NOT_AFTER",
    "NOT_BEFORE",
    "OCSP_PATH",
    "ORGANIZATION",
    "PLATFORM_CN",
    "REVOKED_CERT_FILE",
    "REVOKED_KEY_FILE",
    "CertError",
    "CertPaths",
    "client_ssl_context",
    "client_ssl_context_for",
    "common_name",
    "crl_distribution_points",
    "crl_url",
    "current_crl",
    "ensure_certs",
    "issue_client_cert",
    "load_ca",
    "load_certs",
    "load_crl",
    "read_crl",
    "read_pem",
    "server_ssl_context",
    "signer",
]
