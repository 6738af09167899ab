"""What the auth probes share: a case, sending it, running a probe's cases, and the verdicts.

A probe is a table of ``Case`` values (``auth_cases.CASES``, ``auth_calling.CASES``) run by
``run_cases``: each case is sent (``send``: one POST, its Authorization header built by a
``TokenFactory``) and what came back (an ``Attempt``) is judged, the positive control of each
token path by ``judge_control`` and the other cases by ``judge`` against their path's control.
``ProbeError`` is the probe that cannot run at all (the TLS probe raises it too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from ssl import SSLContext

import aiohttp
from yarl import URL

from emulator.conformance.tokens import SKEW, TokenFactory
from emulator.connector.sender import TokenKind
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.httpio import read_limited


class ProbeError(BotemuError):
    """The probe could not run at all: a bad URL, an unreachable bot, or a bot whose server
    certificate does not verify. ``url`` is the bot's address."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.message = message


# --- the cases -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """One request: a name (the findings' ``where``), its rule, the token path, what it presents
    (for messages), how its Authorization header is built (None: no header), and whether the bot
    must accept it. ``control`` marks the positive control of its path (and ``version``: each
    token version of the emulator path has its own). ``refusal`` is the severity of refusing a
    token that must be accepted, and ``no_answer`` that of getting no answer at all (a broken
    connection or a time-out). For messages: ``channel`` gives the activity's ``channelId``
    (None: ``TokenFactory.channel``), and ``skip`` says why the case cannot be run against this
    botemu (None: it can)."""

    name: str
    rule: str
    path: TokenKind
    presents: str
    build: Callable[[TokenFactory], str | None]
    expect_accept: bool = False
    control: bool = False
    refusal: Severity = Severity.ERROR
    no_answer: Severity = Severity.WARNING
    version: str | None = None
    channel: Callable[[TokenFactory], str] | None = None
    skip: Callable[[TokenFactory], str | None] | None = None

    @property
    def lane(self) -> str:
        """The path (and token version) the case is judged on: ``emulator-path (ver 2.0)``."""
        return f"{self.path.value}-path" + (f" (ver {self.version})" if self.version else "")


SKIPPED = "skipped: "
"""How the message of the finding of a case that was not run begins (an info finding)."""


def skipped(finding: Finding) -> bool:
    """Whether ``finding`` reports a case that was not run (it neither passed nor failed)."""
    return finding.severity is Severity.INFO and finding.message.startswith(SKIPPED)


def bearer(token: str) -> str:
    return f"Bearer {token}"


# --- running --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one request got: the HTTP status (None without an answer), the evidence, and the
    body of the answer (at most ``MAX_ANSWER`` bytes)."""

    status: int | None
    detail: str
    unreachable: bool = False
    body: bytes = b""

    @property
    def accepted(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


MAX_ANSWER = 1024 * 1024
"""Bytes of a bot's answer the probes read (the calling platform's own limit)."""

Attempter = Callable[[Case], Awaitable[Attempt]]
"""Sends one case to the bot and says what it got."""
Judge = Callable[[Case, Attempt], Finding]
"""Judges the answer to a path's positive control."""
After = Callable[[Case, Attempt], Awaitable[Finding | None]]
"""Runs after each case; a finding it returns is reported and ends the probe."""


def check_url(bot_url: str, what: str = "messaging endpoint") -> URL:
    """The bot's ``what`` as a URL; ``ProbeError`` unless it is http(s) with a host."""
    try:
        url = URL(bot_url)
    except ValueError as e:
        raise ProbeError(bot_url, f"not a URL ({e})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ProbeError(bot_url, f"the bot's {what} must be an http(s) URL with a host")
    return url


async def run_cases(
    bot_url: str,
    cases: Sequence[Case],
    attempt: Attempter,
    control: Judge,
    *,
    on_finding: Callable[[Finding], None] | None = None,
    after: After | None = None,
    skip: Callable[[Case], str | None] | None = None,
) -> list[Finding]:
    """Send each case with ``attempt`` and judge it: the positive control of each path (and token
    version) with ``control``, the others with ``judge`` against their path's control. ``after``
    runs after each case and may end the probe with a finding. A case for which ``skip`` gives a
    reason is not sent: its finding is an info that says it was skipped, and why. Raises
    ``ProbeError`` when the first case cannot reach the bot at all."""
    findings: list[Finding] = []

    def report(finding: Finding) -> None:
        findings.append(finding)
        if on_finding is not None:
            on_finding(finding)

    controls: dict[tuple[TokenKind, str | None], Attempt] = {}
    for case in cases:
        reason = None if skip is None else skip(case)
        if reason is not None:
            report(Finding(case.rule, Severity.INFO, case.name, f"{SKIPPED}{reason}"))
            continue
        got = await attempt(case)
        if not findings and got.unreachable:
            raise ProbeError(bot_url, f"cannot connect: {got.detail}")
        if case.control:
            controls[case.path, case.version] = got
            report(control(case, got))
        else:
            report(judge(case, got, controls.get((case.path, case.version))))
        stop = None if after is None else await after(case, got)
        if stop is not None:
            report(stop)
            break
    return findings


async def send(
    http: aiohttp.ClientSession,
    bot_url: str,
    body: bytes,
    headers: Mapping[str, str],
    authorization: str | None,
    timeout: float,
    *,
    ssl: SSLContext | None = None,
) -> Attempt:
    """POST ``body`` with ``headers`` and the ``authorization`` header (None: none) and say what
    came back. A TCP connection not made within half the time counts as unreachable."""
    sent = dict(headers)
    if authorization is not None:
        sent["Authorization"] = authorization
    limits = aiohttp.ClientTimeout(total=timeout, sock_connect=timeout / 2)
    try:
        async with http.post(
            bot_url,
            data=body,
            headers=sent,
            timeout=limits,
            allow_redirects=False,
            ssl=ssl if ssl is not None else True,
        ) as response:
            answer, _ = await read_limited(response, MAX_ANSWER)
            return Attempt(response.status, f"HTTP {response.status}", body=answer)
    except aiohttp.ConnectionTimeoutError:
        return Attempt(None, f"no connection within {timeout / 2:g} s", unreachable=True)
    except TimeoutError:
        return Attempt(None, f"no answer within {timeout:g} s")
    except aiohttp.ClientConnectorError as e:
        return Attempt(None, e.os_error.strerror or str(e.os_error), unreachable=True)
    except (aiohttp.ClientError, OSError) as e:
        return Attempt(None, f"connection failed: {str(e) or type(e).__name__}")


# --- verdicts -----------------------------------------------------------------------------------


def judge_control(case: Case, attempt: Attempt, hint: str) -> Finding:
    """The positive control of ``case.path``: accepted, or an error ending with ``hint``."""
    if attempt.accepted:
        return Finding(case.rule, Severity.INFO, case.name,
                       f"accepted {case.presents} ({attempt.detail})")  # fmt: skip
    return Finding(
        case.rule,
        Severity.ERROR,
        case.name,
        f"positive control refused: the bot did not accept {case.presents} ({attempt.detail}), "
        f"so the probe cannot judge the other {case.lane} cases; {hint}",
        attempt.detail,
    )


def judge(case: Case, attempt: Attempt, control: Attempt | None) -> Finding:
    """A case that is not a positive control, given its path's control (None: not sent)."""
    rule, where, detail, status = case.rule, case.name, attempt.detail, attempt.status
    judged = control is None or control.accepted

    def finding(severity: Severity, message: str) -> Finding:
        return Finding(
            rule, severity, where, message, None if severity is Severity.INFO else detail
        )

    if case.expect_accept:
        if attempt.accepted:
            return finding(Severity.INFO, f"accepted {case.presents} ({detail})")
        if status is None:
            return finding(Severity.WARNING, f"no answer to {case.presents}: {detail}")
        if not judged:
            return finding(Severity.WARNING, f"refused {case.presents} ({detail}), but the valid "
                           f"{case.lane} token was refused too: inconclusive")  # fmt: skip
        if status >= 500:
            return finding(Severity.ERROR, f"crashed on {case.presents} ({detail})")
        return finding(case.refusal, f"refused {case.presents} ({detail}); the spec allows "
                       f"{SKEW // 60} minutes of clock skew, so it must be accepted")  # fmt: skip
    if attempt.accepted:
        return finding(Severity.ERROR,
                       f"accepted a bad token (security hole): {case.presents} ({detail})")  # fmt: skip
    if status is None:
        return finding(case.no_answer, f"no answer to {case.presents}: {detail}")
    if not judged:
        return finding(Severity.WARNING, f"refused {case.presents} ({detail}), but the valid "
                       f"{case.lane} token was refused too: inconclusive")  # fmt: skip
    if status == 403:
        return finding(Severity.INFO, f"refused {case.presents} ({detail})")
    if status >= 500:
        return finding(Severity.ERROR, f"crashed on {case.presents} ({detail}); a bad token "
                       "must be refused with 403")  # fmt: skip
    if 400 <= status < 500:
        return finding(Severity.WARNING,
                       f"refused {case.presents} with HTTP {status}; the spec says 403")  # fmt: skip
    return finding(Severity.WARNING,
                   f"answered {case.presents} with HTTP {status}; the spec says 403")  # fmt: skip
