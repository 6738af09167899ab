"""Tests for the I/O-free parts of a call (emulator/calling/judging.py, outgoing.py, calllog.py)
and the transcript events of a delivery (delivery.py): each is a pure function of its arguments.
The call as a whole is tested end to end in test_session.py.
"""

from __future__ import annotations

from emulator.calling import exchange_rules as X
from emulator.calling.calllog import transcript_rows
from emulator.calling.delivery import Answer, Delivery, request_event, response_event
from emulator.calling.events import (
    ActionCompleted,
    ActionStarted,
    CallEnded,
    CallerPressed,
    EndReason,
    StateChanged,
)
from emulator.calling.faults import PlatformFaults
from emulator.calling.judging import (
    forced_refusal,
    judge,
    judge_answer,
    judge_delivery,
    raw_app_state,
    usable_callback,
)
from emulator.calling.model import (
    ActionType,
    CallState,
    Outcome,
    RecordingCompletionReason,
    RecordingFormat,
    RecordOutcome,
)
from emulator.calling.outgoing import recording_cut, request_headers
from emulator.calling.rules import RuleContext
from emulator.jsonutil import JSON
from emulator.transcripts.store import EventKind

WORKFLOW = (
    b'{"actions": [{"operationId": "a", "action": "answer"}, {"operationId": "h", '
    b'"action": "hangup"}], "links": {"callback": "https://bot.example/cb"}}'
)
JSON_HEADERS = {"Content-Type": "application/json; charset=utf-8"}


def _delivery(
    status: int | None = 200,
    body: bytes = WORKFLOW,
    headers: dict[str, str] = JSON_HEADERS,
    failure: str | None = None,
) -> Delivery:
    return Delivery(status, body, headers, 1, failure)


def test_a_2xx_answer_is_accepted_without_findings() -> None:
    assert judge_delivery(_delivery(), final=False, max_body=100, tokens=None, app_id=None) == (
        [],
        None,
    )


def test_a_refused_request_ends_the_call_with_a_hint_about_the_token() -> None:
    findings, reason = judge_delivery(
        _delivery(401), final=False, max_body=100, tokens=None, app_id="app"
    )
    assert reason is EndReason.BOT_REFUSED
    assert [f.rule for f in findings] == [X.CALL_HTTP_STATUS.id]
    assert findings[0].message.endswith("(no Authorization header was sent: --no-token)")


def test_an_undelivered_message_ends_the_call_with_the_delivery_findings() -> None:
    failed = _delivery(None, b"", failure="timeout")
    assert judge_delivery(failed, final=False, max_body=1, tokens=None, app_id=None) == (
        [],
        EndReason.DELIVERY_FAILED,
    )


def test_an_answer_to_the_final_result_is_ignored_with_a_warning() -> None:
    findings, reason = judge_delivery(
        _delivery(), final=True, max_body=10**6, tokens=None, app_id=None
    )
    assert reason is None
    assert [f.rule for f in findings] == [X.CALL_AFTER_END.id]


def test_an_empty_answer_sends_no_workflow() -> None:
    findings, judged = judge_answer(_delivery(body=b" "), RuleContext())
    assert judged is EndReason.NO_WORKFLOW
    assert [f.rule for f in findings] == [X.CALL_EMPTY_BODY.id]


def test_the_content_type_is_judged_before_the_body() -> None:
    findings, judged = judge_answer(_delivery(body=b"{", headers={}), RuleContext())
    assert judged is EndReason.BAD_RESPONSE
    assert [f.rule for f in findings] == [X.CALL_CONTENT_TYPE.id, X.CALL_NOT_JSON.id]


def test_a_valid_workflow_is_read() -> None:
    findings, judged = judge_answer(_delivery(), RuleContext(first=True))
    assert findings == []
    assert not isinstance(judged, EndReason)
    assert judged.workflow is not None
    assert judged.workflow.callback == "https://bot.example/cb"


def test_a_forced_refusal_notes_the_fault_and_makes_a_finding() -> None:
    judged = judge(WORKFLOW, RuleContext(first=True))
    faults = PlatformFaults(reject_workflows=(1,))
    note, finding = forced_refusal(faults, 1, judged, errors=False)
    assert note is not None and note["fault"] == "reject_workflow"
    assert finding is not None and finding.rule == X.CALL_FORCED_INVALID.id
    assert forced_refusal(faults, 2, judged, errors=False) == (None, None)
    assert forced_refusal(None, 1, judged, errors=False) == (None, None)
    note, finding = forced_refusal(faults, 1, judged, errors=True)
    assert note is not None and finding is None


def test_the_callback_and_app_state_of_an_invalid_workflow() -> None:
    doc: JSON = {"Links": {"CALLBACK": "http://bot.example/cb"}, "appState": "s"}
    assert usable_callback(doc, allow_http=False) is None
    assert usable_callback(doc, allow_http=True) == "http://bot.example/cb"
    assert usable_callback([], allow_http=True) is None
    assert raw_app_state(doc) == "s"
    assert raw_app_state({"appState": 1}) is None


def test_a_recording_over_the_node_sdk_part_limit_is_said_to_be_cut() -> None:
    outcome = RecordOutcome(
        id="r",
        outcome=Outcome.SUCCESS,
        completion_reason=RecordingCompletionReason.MAX_RECORDING_TIMEOUT,
        length_of_recording_in_secs=64.0,
    )
    assert recording_cut(outcome, RecordingFormat.WAV, X.NODE_SDK_PART_LIMIT) is None
    cut = recording_cut(outcome, RecordingFormat.WAV, 2 * X.NODE_SDK_PART_LIMIT)
    assert cut is not None
    assert "about the first 32s" in cut
    assert "or recordingFormat wma or mp3" in cut


def test_request_headers_carry_the_chain_and_message_ids() -> None:
    headers = request_headers("application/json", "chain", "message")
    assert headers["X-Platform-Chain-ID"] == "chain"
    assert headers["X-Platform-Message-ID"] == "message"
    assert "Authorization" not in headers


def test_transcript_rows_fold_actions_and_key_runs() -> None:
    events = [
        ActionStarted(1.0, "menu", ActionType.RECOGNIZE),
        CallerPressed(2.0, "1"),
        CallerPressed(2.5, "#"),
        ActionCompleted(3.0, "menu", ActionType.RECOGNIZE, Outcome.SUCCESS),
        StateChanged(3.0, CallState.ESTABLISHED, CallState.TERMINATED),
        CallEnded(3.0, EndReason.BOT_HUNG_UP),
    ]
    rows = list(transcript_rows(events))
    assert [(at, kind) for at, kind, _ in rows] == [
        (2.5, EventKind.CALLER),
        (3.0, EventKind.PLATFORM),
        (3.0, EventKind.STATE),
    ]
    assert rows[0][2]["keys"] == "1#"
    assert rows[0][2]["times"] == [2.0, 2.5]
    assert rows[1][2]["kind"] == "action"
    assert rows[1][2]["start"] == 1.0


def test_request_and_response_events_keep_binary_bodies_as_blobs() -> None:
    headers = {"Authorization": "Bearer a.b.c"}
    request, blob = request_event(
        "https://bot", b"\xff", headers, "Conversation", "m", 2, None, None
    )
    assert blob == b"\xff"
    assert request["body"] is None
    assert request["summary"] == "→ Conversation (attempt 2)"
    assert request["headers"] == {"Authorization": "Bearer a.b.<signature removed>"}
    answer = Answer(200, b"{}", False, {"Content-Type": "application/json"}, {})
    response, blob = response_event(answer, 12.0, 100, "Conversation", "m", 1)
    assert blob is None
    assert response["body"] == "{}"
    assert response["summary"] == "← 200 in 12 ms"


def test_what_the_judgements_remembered_take_is_bounded() -> None:
    """A bot whose Workflows differ from call to call fills the judgements remembered. Each
    keeps the JSON and the Workflow, some seven times its body: 100 bodies of 60 KB (under the
    old 64 KB limit) held 30 MiB, and the 512 remembered up to 473 MiB. Only bodies up to
    ``JUDGE_CACHE_MAX_BODY`` (8 KB) are remembered now."""
    import gc
    import json
    import tracemalloc

    from emulator.calling.judging import JUDGE_CACHE_MAX_BODY
    from emulator.calling.rules import RuleContext

    def body(n: int) -> bytes:
        prompts = [{"value": f"prompt {n} {i} " + "x" * 40} for i in range(880)]
        return json.dumps({
            "actions": [{"operationId": "p", "action": "playPrompt", "prompts": prompts}],
            "links": {"callback": "https://127.0.0.1:1/cb"},
        }).encode()  # fmt: skip

    assert JUDGE_CACHE_MAX_BODY < len(body(0)) < 64 * 1024
    gc.collect()
    tracemalloc.start()
    try:
        for n in range(100):
            judge(body(n), RuleContext())
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 3 * 2**20, f"{held / 2**20:.0f} MiB held"
