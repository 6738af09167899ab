"""How the platform judges a bot's answer, without any I/O: the HTTP status and body of a
delivery, the Workflow in it (parsed, validated and read, memoized), whether a scenario forces
the platform to refuse it, and where the validation outcome of an invalid one can go.

Each judgement returns the findings it makes, in order, for the session to record.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from emulator.calling import exchange_rules as X
from emulator.calling.events import EndReason
from emulator.calling.model import Workflow
from emulator.calling.rules import RuleContext, validate_workflow
from emulator.calling.wire import loads, read_workflow
from emulator.errors import WireError
from emulator.findings import Finding, Rule, Severity
from emulator.jsonutil import JSON, JSONObject, find_key

if TYPE_CHECKING:
    from emulator.calling.delivery import Delivery
    from emulator.calling.faults import PlatformFaults
    from emulator.calling.tokens import TokenSource

JSON_TYPE = "application/json"
"""The Content-Type of a Workflow, and what the platform accepts."""


@dataclass(frozen=True, slots=True)
class Judged:
    """What the platform makes of a response body: the JSON, the findings, the Workflow."""

    document: JSON
    findings: tuple[Finding, ...]
    workflow: Workflow | None = None
    not_json: WireError | None = None
    read_error: WireError | None = None


JUDGE_CACHE_MAX_BODY = 8 * 1024
"""The longest body whose judgement is remembered (a menu's Workflow is about 1 KB). A judgement
keeps the parsed JSON and the Workflow read, some seven times its body's memory: the 512 kept
take at most about 30 MB (at 64 KB, 473 MiB was measured)."""


def judge(body: bytes, context: RuleContext) -> Judged:
    """Parse, validate and read a Workflow body. A pure function of its arguments, so small
    bodies are memoized: a bot under test sends the same Workflows call after call."""
    if len(body) <= JUDGE_CACHE_MAX_BODY:
        return _judge_cached(body, context)
    return _judge(body, context)


def _judge(body: bytes, context: RuleContext) -> Judged:
    try:
        document = loads(body)
    except WireError as e:
        return Judged(None, (), not_json=e)
    findings = tuple(validate_workflow(document, context))
    if any(f.severity is Severity.ERROR for f in findings):
        return Judged(document, findings)
    try:
        return Judged(document, findings, read_workflow(document))
    except WireError as e:
        return Judged(document, findings, read_error=e)


_judge_cached = lru_cache(maxsize=512)(_judge)


def _finding(rule: Rule, where: str, message: str) -> Finding:
    return Finding(rule.id, rule.severity, where, message)


def judge_delivery(
    delivery: Delivery,
    *,
    final: bool,
    max_body: int,
    tokens: TokenSource | None,
    app_id: str | None,
) -> tuple[list[Finding], EndReason | None]:
    """What the delivery found (its own findings first), and the reason to end the call if it
    must end: not delivered, refused, or too large. ``final``: the call is over, so a body is
    ignored (with a warning)."""
    findings = list(delivery.findings)
    if not delivery.delivered:
        return findings, EndReason.DELIVERY_FAILED
    status = delivery.status
    assert status is not None
    if not 200 <= status < 300:
        hint = refusal_hint(status, tokens, app_id)
        findings.append(_finding(X.CALL_HTTP_STATUS, "response",
                                 f"the bot answered HTTP {status}; the platform hangs up{hint}"))  # fmt: skip
        return findings, EndReason.BOT_REFUSED
    if delivery.oversized:
        findings.append(_finding(X.CALL_BODY_TOO_LARGE, "response",
                                 f"the response is over {max_body} bytes"))  # fmt: skip
        return findings, EndReason.BAD_RESPONSE
    if final and delivery.body.strip():
        findings.append(_finding(X.CALL_AFTER_END, "response",
                                 "the call is over: the bot's answer to the final result is ignored"))  # fmt: skip
    return findings, None


def refusal_hint(status: int, tokens: TokenSource | None, app_id: str | None) -> str:
    """Why a bot may have refused a request with 401 or 403: the token."""
    if status not in (401, 403):
        return ""
    if tokens is None and app_id is not None:
        return " (no Authorization header was sent: --no-token)"
    if tokens is None:
        return (" (no Authorization header was sent: give the bot's app id with --app-id, "
                "or register the bot with botemu serve)")  # fmt: skip
    return (f" (a Bearer token for app id {tokens.app_id} from {tokens.origin} was sent: "
            "check the bot's app id, and that its OpenID metadata URL is botemu's)")  # fmt: skip


def judge_answer(
    delivery: Delivery, context: RuleContext
) -> tuple[list[Finding], Judged | EndReason]:
    """The Workflow a delivered 2xx answer carries, judged; or why the call ends (no Workflow,
    not JSON). The findings are about the answer itself, not the Workflow's own."""
    if not delivery.body.strip():
        empty = _finding(
            X.CALL_EMPTY_BODY, "response", "the bot sent no Workflow; the platform hangs up"
        )
        return [empty], EndReason.NO_WORKFLOW
    findings = []
    content_type = delivery.headers.get("Content-Type", "")
    if content_type.split(";")[0].strip().lower() != JSON_TYPE:
        findings.append(_finding(X.CALL_CONTENT_TYPE, "response",
                                 f"Content-Type is {content_type or 'missing'}, not application/json"))  # fmt: skip
    judged = judge(delivery.body, context)
    if judged.not_json is not None:
        e = judged.not_json
        where = f"response:{e.line}:{e.column}" if e.line is not None else "response"
        findings.append(_finding(X.CALL_NOT_JSON, where, e.message))
        return findings, EndReason.BAD_RESPONSE
    return findings, judged


def forced_refusal(
    faults: PlatformFaults | None, number: int, judged: Judged, *, errors: bool
) -> tuple[JSONObject | None, Finding | None]:
    """Whether the scenario forces the platform to refuse Workflow ``number`` as if it were
    invalid (``reject_workflows``): the note to record about the fault (None when it is not
    asked for), and the CALL-FORCED-INVALID finding when it is injected. An invalid Workflow is
    refused anyway; one without a callback cannot get the validation outcome, so it runs."""
    if faults is None or number not in faults.reject_workflows:
        return None, None
    workflow = judged.workflow
    if errors or workflow is None:
        return {"summary": f"fault not needed: Workflow {number} is invalid and refused as "
                "usual", "fault": "reject_workflow", "workflow": number}, None  # fmt: skip
    if workflow.callback is None:
        return {"summary": f"fault not injected: Workflow {number} has no callback for the "
                "validation outcome, so it runs", "fault": "reject_workflow",
                "workflow": number}, None  # fmt: skip
    note: JSONObject = {"summary": f"fault injected: Workflow {number} refused as if it were "
                        "invalid", "fault": "reject_workflow", "workflow": number}  # fmt: skip
    finding = Finding(
        X.CALL_FORCED_INVALID.id, X.CALL_FORCED_INVALID.severity, f"Workflow {number}",
        f"Workflow {number} is valid; the scenario forced the platform to answer it with the "
        "validation outcome (reject_workflow), so nothing of it ran",
    )  # fmt: skip
    return note, finding


def usable_callback(document: JSON, allow_http: bool) -> str | None:
    """The callback of an invalid Workflow, if the validation outcome can be posted to it."""
    if not isinstance(document, dict):
        return None
    links = document.get(find_key(document, "links") or "links")
    if not isinstance(links, dict):
        return None
    callback = links.get(find_key(links, "callback") or "callback")
    if not isinstance(callback, str):
        return None
    parts = urlsplit(callback)
    schemes = ("https", "http") if allow_http else ("https",)
    return callback if parts.scheme.lower() in schemes and parts.hostname else None


def raw_app_state(document: JSON) -> str | None:
    """The appState of an invalid Workflow, when it is a string: the validation outcome echoes
    it."""
    if isinstance(document, dict):
        value = document.get(find_key(document, "appState") or "appState")
        if isinstance(value, str):
            return value
    return None
