"""The TLS probe: does a calling bot refuse client certificates that are not the platform's?

Spec (Authentication, Calling platform to bot, 2): the platform presents a client certificate on
every call, and the bot validates its common name, its validity period, that it is not revoked and
its chain to the platform's CA. The probe posts a minimal Conversation once per case, each over a
new connection that presents one certificate (or none) and verifies the bot against the CA:

``valid``          the platform's own certificate: the positive control, must be accepted
``no-cert``        no client certificate
``expired``        valid CA and name, validity ended yesterday
``not-yet-valid``  valid CA and name, validity starts tomorrow
``unknown-ca``     right name and dates, issued by a CA the bot has never seen
``wrong-cn``       botemu CA and good dates, a common name outside the platform's domain
``revoked``        ``platform-revoked.pem``: botemu CA, the platform's name, good dates, but
                   listed in the CA's CRL (``ca.crl.pem``, served at ``/_botemu/pki/crl``)

The bad certificates of the middle four are issued in memory; the revoked one is persisted by
``botemu certs`` (a bot must have loaded the CRL that lists it before the probe runs). A directory
without it, or whose CRL does not list it, gets a warning for ``revoked`` instead of a connection.

Verdicts: a refused TLS handshake, a reset or closed connection, or HTTP 401/403 is *refused*
(info); HTTP 2xx is *accepted* (an error for every case but ``valid``); any other status or an
invalid HTTP answer is *answered*, and no answer within the timeout is *timeout* (warnings: the
bot neither accepted nor clearly refused). When ``valid`` is not accepted, refusals of the other
cases prove nothing and are warnings. An unreachable bot, or one whose server certificate does not
verify, raises ``ProbeError``.
"""

from __future__ import annotations

import json
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import aiohttp
from cryptography import x509
from yarl import URL

from emulator.certs import (
    PLATFORM_CN,
    CertError,
    CertPaths,
    client_ssl_context_for,
    common_name,
    issue_client_cert,
    read_crl,
    read_pem,
)
from emulator.errors import BotemuError
from emulator.findings import Finding, RuleRegistry, Severity

RULES = RuleRegistry("TLS probe (calling platform to bot)")
_SOURCE = "spec Authentication, Calling platform to bot 2"
_r = RULES.add
_r(
    "TLS-VALID-ACCEPTED",
    Severity.ERROR,
    _SOURCE,
    "The bot accepts the platform's own client certificate (the positive control: when it is "
    "refused, the other cases prove nothing).",
)
_r("TLS-NO-CERT", Severity.ERROR, _SOURCE, "The bot refuses a call without a client certificate.")
_r("TLS-EXPIRED", Severity.ERROR, _SOURCE, "The bot refuses an expired client certificate.")
_r(
    "TLS-NOT-YET-VALID",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate whose validity has not started.",
)
_r(
    "TLS-UNKNOWN-CA",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate that does not chain to the platform's CA.",
)
_r(
    "TLS-WRONG-CN",
    Severity.ERROR,
    _SOURCE + " (common name)",
    "The bot refuses a client certificate whose common name is not the platform's.",
)
_r(
    "TLS-REVOKED",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate that the platform CA's CRL lists as revoked (right "
    "name, good dates).",
)

WRONG_CN = "intruder.example.invalid"
Verdict = Literal["accepted", "refused", "answered", "timeout", "unreachable"]


class ProbeError(BotemuError):
    """The probe could not run at all: a bad URL, an unreachable bot, or a bot whose server
    certificate does not verify. ``url`` is the bot's address."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.message = message


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


@dataclass(frozen=True, slots=True)
class Attempt:
    """What happened to one case: the verdict and the evidence (``HTTP 200``, ``connection reset``)."""

    verdict: Verdict
    detail: str


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


async def probe_tls(
    bot_url: str,
    paths: CertPaths,
    *,
    timeout: float = 10.0,
    ca_file: Path | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> list[Finding]:
    """Run every case against ``bot_url`` (https) and return one finding per case, in order.

    ``ca_file`` verifies the bot's server certificate (default: ``paths.ca``); ``timeout`` bounds
    each case; ``on_finding`` sees each finding as soon as its case is judged (progress). Raises
    ``ProbeError`` when the URL is not https, the bot cannot be reached for the first case, or its
    server certificate does not verify; ``CertError`` when the certificates cannot be read.
    """
    check_url(bot_url)
    ca = ca_file or paths.ca
    findings: list[Finding] = []
    control: Attempt | None = None
    for case in cases(paths):
        if case.skipped is not None:
            finding = _skipped(case)
            findings.append(finding)
            if on_finding is not None:
                on_finding(finding)
            continue
        ctx = client_ssl_context_for(case.chain_pem, case.key_pem, ca_file=ca)
        attempt = await attempt_case(bot_url, case, ctx, timeout=timeout, ca_file=ca)
        if control is None:
            if attempt.verdict == "unreachable":
                raise ProbeError(bot_url, f"cannot connect: {attempt.detail}")
            control = attempt
            finding = _judge_control(case, attempt)
        else:
            finding = _judge(case, attempt, control, timeout)
        findings.append(finding)
        if on_finding is not None:
            on_finding(finding)
    return findings


def check_url(bot_url: str) -> URL:
    try:
        url = URL(bot_url)
    except ValueError as e:
        raise ProbeError(bot_url, f"not a URL ({e})") from None
    if url.scheme != "https" or not url.host:
        raise ProbeError(bot_url, "the bot's address must be an https URL with a host")
    return url


async def attempt_case(
    bot_url: str, case: Case, ctx: ssl.SSLContext, *, timeout: float, ca_file: Path
) -> Attempt:
    """POST a minimal Conversation over a new connection with ``ctx``; classify what happens."""
    body = {
        "id": f"probe-{case.name}-{uuid.uuid4().hex[:12]}",
        "participants": [{"identity": "8:probe", "originator": True}],
        "presentedModalityTypes": ["audio"],
        "isMultiparty": False,
        "callState": "incoming",
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-Platform-Chain-ID": str(uuid.uuid4()),
        "X-Platform-Message-ID": str(uuid.uuid4()),
    }
    # A TCP connection not made within half the time counts as unreachable, not as a hung bot.
    limits = aiohttp.ClientTimeout(total=timeout, sock_connect=timeout / 2)
    try:
        async with (
            aiohttp.ClientSession(timeout=limits) as session,
            session.post(
                bot_url,
                data=json.dumps(body).encode(),
                headers=headers,
                ssl=ctx,
                allow_redirects=False,
            ) as response,
        ):
            status = response.status
    except aiohttp.ClientConnectorCertificateError as e:
        raise ProbeError(
            bot_url,
            f"the bot's server certificate does not verify against {ca_file}: "
            f"{_ssl_reason(e.certificate_error)}; name the bot's CA with --ca",
        ) from None
    except aiohttp.ConnectionTimeoutError:
        return Attempt("unreachable", f"no TCP connection within {timeout / 2:g} s")
    except TimeoutError:
        return Attempt("timeout", f"no answer within {timeout:g} s")
    except aiohttp.ClientConnectorSSLError as e:
        return Attempt("refused", f"TLS handshake refused ({_ssl_reason(e.os_error)})")
    except aiohttp.ClientConnectorError as e:
        if isinstance(e.os_error, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
            return Attempt("refused", "connection reset during the TLS handshake")
        return Attempt("unreachable", _os_reason(e.os_error))
    except aiohttp.ServerDisconnectedError:
        return Attempt("refused", "connection closed without an answer")
    except (aiohttp.ClientOSError, aiohttp.ClientPayloadError) as e:
        return Attempt("refused", _closed_reason(e))
    except aiohttp.ClientResponseError as e:  # through the handshake, then not HTTP
        reason = str(e.message).strip().split("\n", 1)[0].rstrip(":")
        return Attempt("answered", f"an invalid HTTP response ({reason or e.status})")
    except aiohttp.ClientError as e:  # anything else: not a refusal the probe can vouch for
        return Attempt("answered", f"a client error ({type(e).__name__})")
    if 200 <= status < 300:
        return Attempt("accepted", f"HTTP {status}")
    if status in (401, 403):
        return Attempt("refused", f"HTTP {status}")
    return Attempt("answered", f"HTTP {status}")


# --- verdicts -----------------------------------------------------------------------------------


def _judge_control(case: Case, attempt: Attempt) -> Finding:
    where, rule = case.name, case.rule
    if attempt.verdict == "accepted":
        return Finding(
            rule, Severity.INFO, where, f"accepted a call with {case.presents} ({attempt.detail})"
        )
    if attempt.verdict == "answered":
        return Finding(
            rule,
            Severity.WARNING,
            where,
            f"the TLS handshake accepted {case.presents}, but the bot answered the Conversation "
            f"with {attempt.detail}; the other cases are judged on the handshake",
            attempt.detail,
        )
    return Finding(
        rule,
        Severity.ERROR,
        where,
        f"the bot did not accept a call with {case.presents} ({attempt.detail}), so the probe cannot judge "
        "the other cases; does the bot trust this CA for client certificates?",
        attempt.detail,
    )


def _judge(case: Case, attempt: Attempt, control: Attempt, timeout: float) -> Finding:
    where, rule, detail = case.name, case.rule, attempt.detail
    match attempt.verdict:
        case "accepted":
            return Finding(
                rule,
                Severity.ERROR,
                where,
                f"the bot accepted a call with {case.presents} ({detail}); it must refuse it",
                detail,
            )
        case "refused" if control.verdict in ("accepted", "answered"):
            return Finding(
                rule, Severity.INFO, where, f"refused a call with {case.presents} ({detail})"
            )
        case "refused":
            return Finding(
                rule,
                Severity.WARNING,
                where,
                f"refused a call with {case.presents} ({detail}), but the platform's own "
                "certificate was not accepted either: inconclusive",
                detail,
            )
        case "answered":
            return Finding(
                rule,
                Severity.WARNING,
                where,
                f"{case.presents} got through the TLS handshake and the bot answered {detail}; "
                "it should refuse in the handshake or with 401/403",
                detail,
            )
        case "timeout":
            return Finding(
                rule,
                Severity.WARNING,
                where,
                f"the bot neither accepted nor refused a call with {case.presents} within {timeout:g} s",
                detail,
            )
        case "unreachable":
            return Finding(
                rule,
                Severity.ERROR,
                where,
                f"the bot could not be reached any more after earlier cases ({detail}); did "
                f"{case.presents} make it stop?",
                detail,
            )


def _skipped(case: Case) -> Finding:
    return Finding(
        case.rule,
        Severity.WARNING,
        case.name,
        f"not probed: {case.skipped}",
        case.skipped,
    )


def _ssl_reason(error: BaseException | None) -> str:
    if isinstance(error, ssl.SSLCertVerificationError) and error.verify_message:
        return str(error.verify_message)
    if isinstance(error, ssl.SSLError) and error.reason:
        return str(error.reason).lower().replace("_", " ")  # "tlsv13 alert certificate required"
    return str(error) if error is not None else "unknown TLS error"


def _os_reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def _closed_reason(error: BaseException) -> str:
    """The most telling cause of a connection that broke after the handshake."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLError) and not isinstance(seen, ssl.SSLEOFError):
            return _ssl_reason(seen)
        if isinstance(seen, ConnectionResetError):
            return "connection reset"
        seen = seen.__cause__ or seen.__context__
    return "connection closed without an answer"
