"""Delivering one platform request to a bot: POST, retries, time-outs, size limits.

``Deliverer.post`` sends one message (the Conversation or a ConversationResult) and retries it on
a 5xx answer, a time-out, or a connection failure, with the same ``X-Platform-Message-ID``. It
does no I/O itself: each attempt is a ``Post`` effect (``effects``) that the call's driver
carries out. Every
attempt, answer, failure and retry is handed to a recorder as it happens, so the transcript holds
the exact bytes that crossed the wire (a response event also carries the request headers exactly
as the HTTP client sent them: Host, Content-Length and the rest). It never raises for anything the bot does.

Defaults (docs/calling-http.md): 3 attempts, 0.5 s back-off doubling up to 30 s, 15 s time-out per
attempt (a related platform required answers within 15 s), 1 MiB response limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import cast

from emulator.calling import exchange_rules as X
from emulator.calling.effects import Answer, Failed, Post, Steps
from emulator.findings import Finding
from emulator.httpio import redact_authorization
from emulator.jsonutil import JSONObject

Recorder = Callable[[str, JSONObject, bytes | None], None]
"""(event kind, payload, blob): appends one event to the call's transcript."""

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How the platform delivers one message. ``attempts`` counts the first try."""

    attempts: int = 3
    backoff: float = 0.5
    backoff_factor: float = 2.0
    timeout: float = 15.0
    max_body: int = MIB
    max_delay: float = 30.0
    """The longest back-off: with many attempts the doubling stops here (30 s by default)."""

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry), at most
        ``max_delay``."""
        try:
            delay = self.backoff * self.backoff_factor ** (retry - 1)
        except OverflowError:  # a huge retry count: far past any max_delay
            return self.max_delay
        return min(delay, self.max_delay)


@dataclass(frozen=True, slots=True)
class Delivery:
    """The end of one delivery: the last answer if any attempt got one, or why none did."""

    status: int | None
    body: bytes
    headers: Mapping[str, str]
    attempts: int
    failure: str | None = None
    oversized: bool = False
    findings: tuple[Finding, ...] = field(default=())

    @property
    def delivered(self) -> bool:
        return self.status is not None and self.failure is None


class Deliverer:
    """Delivers the messages of one call: each attempt is a ``Post`` effect, each back-off a
    wait of the call's (``wait``: virtual time, and real time at the call's pace)."""

    def __init__(
        self, *, policy: RetryPolicy, record: Recorder, wait: Callable[[float], Steps[None]]
    ) -> None:
        self.policy = policy
        self.record = record
        self.wait = wait

    def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        *,
        label: str,
        message_id: str,
        parts: JSONObject | None = None,
        fail_once: bool = False,
        meta: JSONObject | None = None,
    ) -> Steps[Delivery]:
        """Deliver ``body`` to ``url``; retry per the policy. ``label`` names the message;
        ``parts`` describes a multipart body for the transcript (the bytes are kept as a blob);
        ``meta`` is recorded with each attempt too (``platform_result``: the result as the
        platform made it, when a fault changed the bytes sent).
        ``fail_once`` (a fault): the first answer that would be accepted is treated as a 5xx and
        the message is retried, in an attempt added to the policy's (a note, no finding)."""
        findings: list[Finding] = []
        policy = self.policy
        total = policy.attempts + fail_once
        last: Delivery | None = None
        for attempt in range(1, total + 1):
            if attempt > 1:
                yield from self._retry(label, message_id, attempt, total)
            last, finding = yield from self._attempt(
                url, body, headers, label, message_id, attempt, parts, meta
            )
            if finding is not None:
                findings.append(finding)
            if last.failure is None and last.status is not None and last.status < 500:
                if not fail_once:
                    break
                fail_once = False
                self.record("note", {
                    "summary": f"fault injected: the platform treats the HTTP {last.status} "
                    f"answer to {label} as a 5xx and retries it with the same message id",
                    "fault": "fail_callback", "message_id": message_id, "attempt": attempt,
                    "label": label,
                }, None)  # fmt: skip
            elif fail_once and attempt == policy.attempts:
                break  # the extra attempt is for the injected failure only
        assert last is not None
        return _concluded(label, last, attempt, findings)

    def _retry(self, label: str, message_id: str, attempt: int, total: int) -> Steps[None]:
        """Record the retry, then wait its back-off."""
        delay = self.policy.delay(attempt - 1)
        self.record(
            "retry",
            {
                "summary": f"retry {attempt}/{total} of {label} in {delay:g}s",
                "message_id": message_id,
                "attempt": attempt,
                "delay": delay,
            },
            None,
        )
        yield from self.wait(delay)

    def _attempt(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        label: str,
        message_id: str,
        attempt: int,
        parts: JSONObject | None,
        meta: JSONObject | None = None,
    ) -> Steps[tuple[Delivery, Finding | None]]:
        request, blob = request_event(url, body, headers, label, message_id, attempt, parts, meta)
        self.record("http.request", request, blob)
        started = time.perf_counter()
        answer = yield Post(url, body, headers, self.policy.timeout, self.policy.max_body, label)
        if isinstance(answer, Failed):
            return self._failed(label, message_id, attempt, answer)
        latency = (time.perf_counter() - started) * 1000
        response, blob = response_event(
            answer, latency, self.policy.max_body, label, message_id, attempt
        )
        self.record("http.response", response, blob)
        finding = None
        if answer.status >= 500:
            finding = Finding(
                X.CALL_HTTP_5XX.id, X.CALL_HTTP_5XX.severity, label,
                f"the bot answered {label} with HTTP {answer.status} (attempt {attempt})",
            )  # fmt: skip
        delivery = Delivery(
            answer.status, answer.data, answer.headers, attempt, None, answer.oversized
        )
        return delivery, finding

    def _failed(
        self, label: str, message_id: str, attempt: int, failed: Failed
    ) -> tuple[Delivery, Finding]:
        detail = _detail(failed, self.policy.timeout)
        rule = X.CALL_TIMEOUT if failed.kind == "timeout" else X.CALL_CONNECTION
        self.record(
            "http.error",
            {
                "summary": f"✗ {label}: {detail}",
                "error": failed.kind,
                "detail": detail,
                "message_id": message_id,
                "attempt": attempt,
                "label": label,
            },
            None,
        )
        finding = Finding(rule.id, rule.severity, label, f"{detail} (attempt {attempt})")
        return Delivery(None, b"", {}, attempt, detail), finding


def _detail(failed: Failed, timeout: float) -> str:
    """What an attempt that got no answer says, by kind."""
    if failed.kind == "timeout":
        return f"no answer within {timeout:g}s"
    if failed.kind == "tls":
        return f"TLS handshake failed: {failed.reason}"
    return f"connection failed: {failed.reason}"


def _concluded(label: str, last: Delivery, attempts: int, findings: list[Finding]) -> Delivery:
    """The delivery after its last attempt: failed (with a finding) when that attempt got no
    answer or a 5xx."""
    if last.failure is not None or (last.status is not None and last.status >= 500):
        why = last.failure or f"HTTP {last.status}"
        findings.append(
            Finding(
                X.CALL_DELIVERY_FAILED.id,
                X.CALL_DELIVERY_FAILED.severity,
                label,
                f"{label} not delivered after {attempts} attempts (last: {why}); "
                "the platform hangs up",
            )
        )
        return Delivery(
            last.status, last.body, last.headers, attempts, why, last.oversized,
            tuple(findings),
        )  # fmt: skip
    return Delivery(
        last.status, last.body, last.headers, last.attempts, None, last.oversized,
        tuple(findings),
    )  # fmt: skip


def request_event(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    label: str,
    message_id: str,
    attempt: int,
    parts: JSONObject | None,
    meta: JSONObject | None,
) -> tuple[JSONObject, bytes | None]:
    """The transcript event of one attempt's request, and the body kept as a blob (a multipart
    or non-UTF-8 body), if any."""
    request: JSONObject = {
        "summary": f"→ {label}" + (f" (attempt {attempt})" if attempt > 1 else ""),
        "method": "POST",
        "url": url,
        "headers": _json_headers(headers),
        "label": label,
        "message_id": message_id,
        "attempt": attempt,
    }
    text = None if parts is not None else _text(body)
    request["body"] = text
    if parts is not None:
        request["parts"] = parts
    if meta:
        request.update(meta)
    return request, None if text is not None else body


def response_event(
    answer: Answer, latency: float, max_body: int, label: str, message_id: str, attempt: int
) -> tuple[JSONObject, bytes | None]:
    """The transcript event of one answer (``latency`` in ms), and the body kept as a blob
    when it is not UTF-8."""
    data = answer.data
    shown = _text(data)
    summary = f"← {answer.status}" + (" (empty)" if not data else "") + f" in {latency:.0f} ms"
    if answer.oversized:
        summary += f" (body over {max_body} bytes, cut)"
    response: JSONObject = {
        "summary": summary,
        "status": answer.status,
        "headers": cast(JSONObject, answer.headers),  # plain str keys: ``_headers``
        "request_headers": cast(JSONObject, answer.sent_headers),
        "body": shown,
        "latency_ms": round(latency, 3),
        "message_id": message_id,
        "attempt": attempt,
        "oversized": answer.oversized,
        "label": label,
    }
    return response, None if shown is not None else data


def plain_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers as a plain dict, repeated names joined with ", ". Keys become exact ``str``:
    aiohttp's are ``istr``, which the transcript's fast JSON encoder refuses (every response
    event then went through the slow encoder)."""
    out: dict[str, str] = {}
    for key, value in headers.items():
        name = str(key)
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def _json_headers(headers: Mapping[str, str]) -> JSONObject:
    out: JSONObject = {str(key): value for key, value in headers.items()}
    if "Authorization" in out:
        out["Authorization"] = redact_authorization(str(out["Authorization"]))
    return out


def _text(data: bytes) -> str | None:
    """The body as text when it is UTF-8 (JSON, HTML, plain text), else None (kept as a blob)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
