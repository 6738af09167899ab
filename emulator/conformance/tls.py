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

The rules and the cases are in ``tls_cases``; every name this module had is still importable from
it (``ProbeError``, shared by every probe, is ``probing.ProbeError``).
"""

from __future__ import annotations

import json
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import aiohttp
from yarl import URL

from emulator.certs import CertPaths, client_ssl_context_for
from emulator.conformance.probing import ProbeError
from emulator.conformance.rules import TLS_RULES as RULES
from emulator.conformance.tls_cases import WRONG_CN, Case, cases, revoked_case
from emulator.findings import Finding, Severity
from emulator.httpio import platform_session

__all__ = [
    "RULES",
    "WRONG_CN",
    "Attempt",
    "Case",
    "ProbeError",
    "Verdict",
    "attempt_case",
    "cases",
    "check_url",
    "probe_tls",
    "revoked_case",
]

Verdict = Literal["accepted", "refused", "answered", "timeout", "unreachable"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """What happened to one case: the verdict and the evidence (``HTTP 200``, ``connection reset``)."""

    verdict: Verdict
    detail: str


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
    body = _conversation(case)
    # A TCP connection not made within half the time counts as unreachable, not as a hung bot.
    limits = aiohttp.ClientTimeout(total=timeout, sock_connect=timeout / 2)
    try:
        async with (
            platform_session(timeout=limits) as session,
            session.post(
                bot_url,
                data=body,
                headers=_headers(),
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
    except (aiohttp.ClientError, TimeoutError) as e:
        return _failure(e, timeout)
    return _answer(status)


def _conversation(case: Case) -> bytes:
    """A minimal incoming Conversation (a new call id each time)."""
    body = {
        "id": f"probe-{case.name}-{uuid.uuid4().hex[:12]}",
        "participants": [{"identity": "8:probe", "originator": True}],
        "presentedModalityTypes": ["audio"],
        "isMultiparty": False,
        "callState": "incoming",
    }
    return json.dumps(body).encode()


def _headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-Platform-Chain-ID": str(uuid.uuid4()),
        "X-Platform-Message-ID": str(uuid.uuid4()),
    }


def _failure(error: aiohttp.ClientError | TimeoutError, timeout: float) -> Attempt:
    """What a request that raised ``error`` says (the most specific kinds of error first)."""
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        return Attempt("unreachable", f"no TCP connection within {timeout / 2:g} s")
    if isinstance(error, TimeoutError):
        return Attempt("timeout", f"no answer within {timeout:g} s")
    if isinstance(error, aiohttp.ClientConnectorSSLError):
        return Attempt("refused", f"TLS handshake refused ({_ssl_reason(error.os_error)})")
    if isinstance(error, aiohttp.ClientConnectorError):
        if isinstance(
            error.os_error, ConnectionResetError | ConnectionAbortedError | BrokenPipeError
        ):
            return Attempt("refused", "connection reset during the TLS handshake")
        return Attempt("unreachable", _os_reason(error.os_error))
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return Attempt("refused", "connection closed without an answer")
    if isinstance(error, aiohttp.ClientOSError | aiohttp.ClientPayloadError):
        return Attempt("refused", _closed_reason(error))
    if isinstance(error, aiohttp.ClientResponseError):  # through the handshake, then not HTTP
        reason = str(error.message).strip().split("\n", 1)[0].rstrip(":")
        return Attempt("answered", f"an invalid HTTP response ({reason or error.status})")
    # anything else: not a refusal the probe can vouch for
    return Attempt("answered", f"a client error ({type(error).__name__})")


def _answer(status: int) -> Attempt:
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
    if attempt.verdict == "refused" and control.verdict in ("accepted", "answered"):
        return Finding(
            rule, Severity.INFO, where, f"refused a call with {case.presents} ({detail})"
        )
    severity, message = _problem(case, attempt, timeout)
    return Finding(rule, severity, where, message, detail)


def _problem(case: Case, attempt: Attempt, timeout: float) -> tuple[Severity, str]:
    """The severity and message of a case that was not plainly refused."""
    detail = attempt.detail
    match attempt.verdict:
        case "accepted":
            return (Severity.ERROR,
                    f"the bot accepted a call with {case.presents} ({detail}); it must refuse it")  # fmt: skip
        case "refused":
            return (Severity.WARNING,
                    f"refused a call with {case.presents} ({detail}), but the platform's own "
                    "certificate was not accepted either: inconclusive")  # fmt: skip
        case "answered":
            return (Severity.WARNING,
                    f"{case.presents} got through the TLS handshake and the bot answered {detail}; "
                    "it should refuse in the handshake or with 401/403")  # fmt: skip
        case "timeout":
            return (Severity.WARNING,
                    f"the bot neither accepted nor refused a call with {case.presents} within {timeout:g} s")  # fmt: skip
        case "unreachable":
            return (Severity.ERROR,
                    f"the bot could not be reached any more after earlier cases ({detail}); did "
                    f"{case.presents} make it stop?")  # fmt: skip


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
