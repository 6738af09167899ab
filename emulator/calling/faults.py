"""Platform faults: what the calling platform does wrong on purpose, to test a bot's resilience.

``PlatformFaults`` is a setting of a call (``CallSettings.faults``); the session applies it. Callback
numbers count the requests after the Conversation, from 1 (0 names the Conversation itself).

=====================  ==========================================================================
``fail_callbacks``     callback N is delivered, then its answer is treated as a 5xx once and the
                       request is retried with the same message id (the bot sees N twice; a note
                       says the failure was injected; no CALL-HTTP-5XX finding)
``duplicate_callbacks``  callback N is delivered twice with the same message id; the second answer
                       is used, and CALL-DUPLICATE-DIFFERS (warning) is found when the two answers
                       differ materially (``material``)
``drop_callbacks``     callback N is never delivered: the call ends as "platform hung up: callback
                       delivery failed", with a note and no retries
``unknown_fields``     every platform payload carries ``"botemuProbe": {"note": "unknown field"}``:
                       the Conversation, the ConversationResult and its operationOutcome
``unknown_enums``      unknown enum values (spec, Versioning 4), only where a correct bot still
                       knows what happened (``inject_unknown_enums``): the Conversation's
                       ``presentedModalityTypes`` gets ``"botemuFutureModality"`` after the real
                       ones; a result of a live call (callState ``established``) gets callState
                       ``"botemuFutureCallState"``, and, when its outcome is ``success``, every
                       completionReason becomes ``"botemuFutureCompletionReason"``; the result
                       with callState ``terminated`` keeps it and gets ``outcome``
                       ``"botemuFutureOutcome"`` and that completionReason (``encode_result``)
``caller_delay``       the caller waits that many seconds before each input step (``slow_caller``)
``reject_workflows``   the bot's Workflow N (1 answers the Conversation) is answered with the
                       validation outcome as if it were invalid, and none of it runs; a
                       CALL-FORCED-INVALID finding (info) says it was forced (the session does this)
=====================  ==========================================================================

``Injector`` delivers a call's messages with the faults that apply to each; everything else here
is pure. Nothing above the calling layer is imported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from emulator.calling import exchange_rules as X
from emulator.calling.caller import CallerScript, Press, Say, Silence, Step, Talk
from emulator.calling.delivery import Deliverer, Delivery, Recorder
from emulator.calling.effects import Steps
from emulator.calling.model import CallState, Conversation, ConversationResult, Outcome
from emulator.calling.wire import DEFAULT_OPTIONS, WireOptions, to_json
from emulator.findings import Finding
from emulator.jsonutil import JSON, JSONObject, dumps

PROBE_FIELD = "botemuProbe"
PROBE_VALUE: JSONObject = {"note": "unknown field"}
FUTURE_MODALITY = "botemuFutureModality"
"""The unknown enum value written into the Conversation's ``presentedModalityTypes``."""
FUTURE_CALL_STATE = "botemuFutureCallState"
"""The unknown callState of a result of a live call (instead of ``established``)."""
FUTURE_OUTCOME = "botemuFutureOutcome"
"""The unknown ``outcome`` of the result with callState ``terminated``."""
FUTURE_COMPLETION_REASON = "botemuFutureCompletionReason"
"""The unknown completionReason of a successful outcome, and of the terminated result's."""
FUTURE_VALUES = frozenset(
    {FUTURE_MODALITY, FUTURE_CALL_STATE, FUTURE_OUTCOME, FUTURE_COMPLETION_REASON}
)
"""Every unknown enum value ``unknown_enums`` writes; nothing else botemu writes is unknown."""
_NESTED_OUTCOMES = ("choiceOutcome", "collectDigitsOutcome")
IGNORED_KEYS = frozenset({"operationid"})
"""Members left out when two answers to one message are compared (any depth, any case)."""

_INPUT_STEPS = (Press, Say, Talk)


@dataclass(frozen=True, slots=True)
class PlatformFaults:
    """The faults of one call. The default injects nothing."""

    fail_callbacks: tuple[int, ...] = ()
    duplicate_callbacks: tuple[int, ...] = ()
    drop_callbacks: tuple[int, ...] = ()
    unknown_fields: bool = False
    unknown_enums: bool = False
    caller_delay: float = 0.0
    reject_workflows: tuple[int, ...] = ()

    @property
    def any(self) -> bool:
        return self != NO_FAULTS

    def describe(self) -> str:
        """One line: ``fail callback 2; duplicate callback 1; unknown fields``."""
        parts = [f"fail callback {n}" for n in self.fail_callbacks]
        parts += [f"duplicate callback {n}" for n in self.duplicate_callbacks]
        parts += [f"drop callback {n}" for n in self.drop_callbacks]
        if self.unknown_fields:
            parts.append("unknown fields")
        if self.unknown_enums:
            parts.append("unknown enum values")
        if self.caller_delay > 0:
            parts.append(f"caller waits {self.caller_delay:g}s before each input")
        parts += [f"reject workflow {n}" for n in self.reject_workflows]
        return "; ".join(parts) or "none"

    def to_json(self) -> JSONObject:
        return {
            "fail_callbacks": list(self.fail_callbacks),
            "duplicate_callbacks": list(self.duplicate_callbacks),
            "drop_callbacks": list(self.drop_callbacks),
            "unknown_fields": self.unknown_fields,
            "unknown_enums": self.unknown_enums,
            "caller_delay": self.caller_delay,
            "reject_workflows": list(self.reject_workflows),
        }

    # --- payloads ---

    def encode_conversation(self, conversation: Conversation) -> bytes:
        """The Conversation's bytes with the unknown field and enum value, as asked."""
        if self.unknown_fields:
            conversation = replace(conversation, extra=_probed(conversation.extra))
        document = to_json(conversation)
        if self.unknown_enums:
            modalities = document.get("presentedModalityTypes")
            if isinstance(modalities, list):
                document["presentedModalityTypes"] = [*modalities, FUTURE_MODALITY]
        return dumps(document)

    def result(self, result: ConversationResult) -> ConversationResult:
        """The ConversationResult with the unknown field on it and on its outcome, as asked."""
        if not self.unknown_fields:
            return result
        outcome = result.operation_outcome
        return replace(
            result,
            operation_outcome=replace(outcome, extra=_probed(outcome.extra)),
            extra=_probed(result.extra),
        )

    def encode_result(
        self, result: ConversationResult, options: WireOptions = DEFAULT_OPTIONS
    ) -> bytes:
        """The ConversationResult's bytes with the unknown fields (``result``, idempotent) and
        the unknown enum values (``inject_unknown_enums``), as asked."""
        document = to_json(self.result(result), options)
        if self.unknown_enums:
            inject_unknown_enums(document, result)
        return dumps(document)

    # --- the caller ---

    def caller(self, script: CallerScript) -> CallerScript:
        return slow_caller(script, self.caller_delay)


NO_FAULTS = PlatformFaults()


def _probed(extra: dict[str, JSON]) -> dict[str, JSON]:
    return {**extra, PROBE_FIELD: dict(PROBE_VALUE)}


def inject_unknown_enums(document: JSONObject, result: ConversationResult) -> None:
    """Write unknown enum values into the JSON of ``result``, in place, only where a bot that
    treats an unknown value as NotUnderstood (spec, Versioning 4) still knows what happened:

    - callState ``established`` becomes ``FUTURE_CALL_STATE``: a bot tells the end of a call by
      callState ``terminated``, which is never replaced, and a call not yet answered keeps
      ``incoming`` (the bot must still answer or reject it);
    - a successful outcome's completionReasons (its own, or its choiceOutcome's or
      collectDigitsOutcome's) become ``FUTURE_COMPLETION_REASON``: what the bot acts on is the
      success and its choiceName, digits or recording. A failure keeps its reason, which a bot
      uses to choose its recovery (ask again after silence, or give up);
    - the terminated result keeps its callState, and its ``outcome`` and completionReasons
      become ``FUTURE_OUTCOME`` and ``FUTURE_COMPLETION_REASON``: the call is over, whatever
      the outcome says.
    """
    state = result.call_state
    if state is CallState.ESTABLISHED:
        document["callState"] = FUTURE_CALL_STATE
    elif state is not CallState.TERMINATED:
        return
    outcome = document.get("operationOutcome")
    if not isinstance(outcome, dict):
        return
    if state is CallState.TERMINATED:
        outcome["outcome"] = FUTURE_OUTCOME
    elif result.operation_outcome.outcome is not Outcome.SUCCESS:
        return
    for holder in (outcome, *(outcome.get(key) for key in _NESTED_OUTCOMES)):
        if isinstance(holder, dict) and "completionReason" in holder:
            holder["completionReason"] = FUTURE_COMPLETION_REASON


def slow_caller(script: CallerScript, delay: float) -> CallerScript:
    """The script with ``delay`` seconds of silence before each input step (press, say, talk),
    in its sequential steps and in the steps of its ``when`` rules.

    A silence at the head of a turn is counted from the end of the prompt (it never barges in),
    so the caller hears each prompt out and then waits: a delay longer than the bot's
    initialSilenceTimeout makes that turn time out, and the input moves to the next turn."""
    if delay <= 0:
        return script
    rules = tuple(replace(r, steps=_slowed(r.steps, delay)) for r in script.rules)
    return replace(script, steps=_slowed(script.steps, delay), rules=rules)


def _slowed(steps: tuple[Step, ...], delay: float) -> tuple[Step, ...]:
    out: list[Step] = []
    for step in steps:
        if isinstance(step, _INPUT_STEPS):
            out.append(Silence(delay))
        out.append(step)
    return tuple(out)


# --- delivering with faults -------------------------------------------------------------------


class Injector:
    """Delivers the messages of one call (the Conversation is message 0, callback N message N)
    with the faults that apply to each, through the call's ``Deliverer``."""

    def __init__(self, faults: PlatformFaults, deliverer: Deliverer, record: Recorder) -> None:
        self.faults = faults
        self.deliverer = deliverer
        self.record = record
        self.sent = 0

    def note(self, summary: str, fault: str, n: int, label: str, message_id: str) -> None:
        self.record("note", {"summary": summary, "fault": fault, "callback": n, "label": label,
                             "message_id": message_id}, None)  # fmt: skip

    def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        *,
        label: str,
        message_id: str,
        parts: JSONObject | None = None,
        meta: JSONObject | None = None,
    ) -> Steps[Delivery]:
        faults, n = self.faults, self.sent
        self.sent += 1
        if n in faults.drop_callbacks:
            self.note(f"fault injected: callback {n} ({label}) dropped, never delivered; the "
                      "platform hangs up", "drop_callback", n, label, message_id)  # fmt: skip
            return Delivery(None, b"", {}, 0, failure="dropped (fault injected)")
        first = yield from self.deliverer.post(url, body, headers, label=label, message_id=message_id,
                                          parts=parts, meta=meta,
                                          fail_once=n in faults.fail_callbacks)  # fmt: skip
        if n not in faults.duplicate_callbacks or not first.delivered:
            return first
        self.note(f"fault injected: callback {n} ({label}) delivered again with the same "
                  "message id", "duplicate_callback", n, label, message_id)  # fmt: skip
        second = yield from self.deliverer.post(
            url, body, headers, label=label, message_id=message_id, parts=parts, meta=meta
        )
        findings = first.findings + second.findings
        differs = None
        if second.delivered:
            one, other = material(first.status, first.body), material(second.status, second.body)
            differs = first_difference(one, other)
        if differs is not None:
            path, a, b = differs
            findings += (Finding(
                X.CALL_DUPLICATE_DIFFERS.id, X.CALL_DUPLICATE_DIFFERS.severity, label,
                f"{label} was delivered twice with message id {message_id}, and the bot "
                f"answered differently the second time (at {path.replace('$.', '', 1)}): a bot "
                "must be idempotent",
                evidence=f"{path}: first {show(a)}, then {show(b)}",
            ),)  # fmt: skip
        return replace(second, findings=findings)


# --- comparing two answers to one message ------------------------------------------------------


def material(status: int | None, body: bytes) -> JSON:
    """What matters in an answer, for telling whether a bot answered one message twice alike:
    the status class and the body, as JSON without ``operationId`` members (a bot may mint fresh
    operation ids for a retry: the platform correlates outcomes with the Workflow it runs, the
    last one). Everything else counts, ``appState`` included: a bot that advanced twice shows it
    there. A body that is not JSON is compared as text, trimmed."""
    text = body.decode("utf-8", "replace").strip()
    value: JSON
    try:
        value = _strip(json.loads(text)) if text else None
    except ValueError:
        value = text
    klass = None if status is None else status // 100
    return {"status": f"{klass}xx" if klass is not None else None, "body": value}


def _strip(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k.lower() not in IGNORED_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def first_difference(a: JSON, b: JSON, path: str = "$") -> tuple[str, JSON, JSON] | None:
    """The first place where two JSON values differ: (path, one, other); None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return f"{path}.{key}", a.get(key), b.get(key)
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(a) != len(b):
            return f"{path}.length", len(a), len(b)
        return None
    same = a == b and isinstance(a, bool) == isinstance(b, bool)
    return None if same else (path, a, b)


def show(value: JSON, limit: int = 120) -> str:
    """A JSON value as short text, for a finding's message or evidence."""
    try:
        text = dumps(value).decode("utf-8")
    except ValueError:  # pragma: no cover - values come from json.loads: always writable
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
