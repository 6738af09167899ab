"""The TLS probe's cases: its rules (``RULES``) and the client certificates a calling bot must
refuse or accept (``cases``), the bad ones issued in memory but for the revoked one
(``revoked_case``). The module docstring of ``tls`` lists them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from cryptography import x509

from emulator.certs import (
    PLATFORM_CN,
    CertError,
    CertPaths,
    common_name,
    issue_client_cert,
    read_crl,
    read_pem,
)

WRONG_CN = "intruder.example.invalid"


@dataclass(frozen=True, slots=True)
class Case:
    """One connection attempt: a name (the findings' ``where``), its rule and what it presents.
    ``skipped`` says why the case cannot run (it is then a warning, with no connection)."""

    name: str
    rule: str
    presents: str
    chain_pem: bytes | None
    key_pem: bytes | None
    skipped: str | None = None


def cases(paths: CertPaths, *, now: datetime | None = None) -> list[Case]:
    """The seven cases, the positive control first; the bad certificates are issued in memory,
    but for the revoked one (``revoked_case``)."""
    now = now or datetime.now(UTC)
    cn = common_name(paths.client_cert) or PLATFORM_CN
    day, month = timedelta(days=1), timedelta(days=30)

    def issue(
        name: str, start: datetime, end: datetime, ca: Literal["botemu", "unknown"] = "botemu"
    ) -> tuple[bytes, bytes]:
        return issue_client_cert(paths, common_name=name, not_before=start, not_after=end, ca=ca)

    valid = (read_pem(paths.client_cert), read_pem(paths.client_key))
    return [
        Case("valid", "TLS-VALID-ACCEPTED", f"the platform's certificate for {cn}", *valid),
        Case("no-cert", "TLS-NO-CERT", "no client certificate", None, None),
        Case(
            "expired", "TLS-EXPIRED", "an expired certificate", *issue(cn, now - month, now - day)
        ),
        Case(
            "not-yet-valid",
            "TLS-NOT-YET-VALID",
            "a certificate that is not valid yet",
            *issue(cn, now + day, now + month),
        ),
        Case(
            "unknown-ca",
            "TLS-UNKNOWN-CA",
            "a certificate from an unknown CA",
            *issue(cn, now - day, now + month, ca="unknown"),
        ),
        Case(
            "wrong-cn",
            "TLS-WRONG-CN",
            f"a certificate for the wrong common name {WRONG_CN}",
            *issue(WRONG_CN, now - day, now + month),
        ),
        revoked_case(paths),
    ]


def revoked_case(paths: CertPaths) -> Case:
    """The ``revoked`` case: ``platform-revoked.pem`` when ``ca.crl.pem`` lists it, else a
    skipped case saying what to run."""
    name, rule = "revoked", "TLS-REVOKED"

    def skipped(reason: str) -> Case:
        return Case(name, rule, "a revoked certificate", None, None, reason)

    files = (paths.revoked_cert, paths.revoked_key, paths.crl)
    missing = [p.name for p in files if not p.is_file()]
    if missing:
        return skipped(
            f"no {' or '.join(missing)} in {paths.dir}; 'botemu certs --dir {paths.dir}' "
            "adds them and keeps the CA"
        )
    try:
        chain, key = read_pem(paths.revoked_cert), read_pem(paths.revoked_key)
        serial = x509.load_pem_x509_certificate(chain).serial_number
        listed = read_crl(paths.crl).get_revoked_certificate_by_serial_number(serial) is not None
    except CertError as e:
        return skipped(str(e))
    except ValueError:
        return skipped(f"{paths.revoked_cert}: not a PEM certificate")
    if not listed:
        return skipped(
            f"{paths.crl} does not list {paths.revoked_cert.name}; 'botemu certs --dir "
            f"{paths.dir}' renews it"
        )
    presents = f"a revoked certificate (serial {serial:x}, listed in {paths.crl.name})"
    return Case(name, rule, presents, chain, key)
