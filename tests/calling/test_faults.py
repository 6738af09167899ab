"""Platform faults: the knobs themselves, then calls over loopback HTTP with each fault set."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from email import policy as email_policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from aiohttp import BodyPartReader, web
from aiohttp.test_utils import TestServer

from emulator.calling import model as m
from emulator.calling.caller import CallerScript, Listen, Press, Say, Silence, Talk, WhenRule
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.faults import (
    FUTURE_CALL_STATE,
    FUTURE_COMPLETION_REASON,
    FUTURE_MODALITY,
    FUTURE_OUTCOME,
    FUTURE_VALUES,
    NO_FAULTS,
    PlatformFaults,
    first_difference,
    material,
    slow_caller,
)
from emulator.calling.model import (
    AnswerOutcome,
    CallState,
    ChoiceOutcome,
    CollectDigitsOutcome,
    Conversation,
    ConversationResult,
    DigitCollectionCompletionReason,
    ModalityType,
    OperationOutcome,
    Outcome,
    Participant,
    PlayPromptOutcome,
    PromptCompletionReason,
    RecognitionCompletionReason,
    RecognizeOutcome,
    RecordingCompletionReason,
    RecordingFormat,
    RecordOutcome,
    WorkflowValidationOutcome,
)
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.calling.wire import DEFAULT_OPTIONS, WireOptions, encode
from emulator.transcripts.store import StoredEvent, TranscriptStore
from tests.bots.calling_bots import STATE, BotState, make_bot
from tests.support import ROOT, load_module

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
FAST = RetryPolicy(attempts=3, backoff=0.01, timeout=5.0)


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


async def call(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    app: web.Application,
    faults: PlatformFaults,
    caller: str = "press 1",
) -> tuple[CallReport, list[StoredEvent]]:
    server = await aiohttp_server(app)
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")),
        caller=CallerScript.from_inline(caller),
        retry=FAST,
        seed=7,
        faults=faults,
    )
    report = await place_call(settings, store)
    return report, store.events(report.call_id)


def rules_of(report: CallReport) -> list[str]:
    return [f.rule for f in report.findings if f.rule != "WF-CALLBACK-HTTPS"]


def notes(events: list[StoredEvent]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.kind == "note" and "fault" in e.payload]


def message_ids(state: BotState) -> list[str]:
    return [r.headers["X-Platform-Message-ID"] for r in state.received]


# --- bots that notice ------------------------------------------------------------------------


def counting_bot(*, fresh_operation_ids: bool = False) -> web.Application:
    """Not idempotent: every request advances a counter that shows in appState (and, with
    ``fresh_operation_ids``, idempotent but minting a new operationId per answer)."""
    seen: list[int] = [0]

    async def handle(request: web.Request) -> web.Response:
        doc = json.loads(await request.read())
        seen[0] += 1
        if str(doc.get("callState", "")).lower() == "terminated":
            return web.Response(status=200)
        callback = f"http://{request.host}/api/calls"
        if "participants" in doc:
            return web.json_response({"actions": [
                {"operationId": "a", "action": "answer"},
                {"operationId": "p", "action": "playPrompt", "prompts": [{"value": "Hello"}]},
            ], "links": {"callback": callback}, "appState": "start"})  # fmt: skip
        if fresh_operation_ids:
            op, state = f"bye-{seen[0]}", "goodbye"
        else:
            op, state = "bye", f"step-{seen[0]}"
        return web.json_response({"actions": [
            {"operationId": op, "action": "playPrompt", "prompts": [{"value": "Bye"}]},
            {"operationId": "h", "action": "hangup"},
        ], "links": {"callback": callback}, "appState": state})  # fmt: skip

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


def strict_bot() -> web.Application:
    """Crashes (500) on any field it does not know: it fails forward compatibility."""
    known = {"id", "participants", "presentedModalityTypes", "isMultiparty", "callState",
             "links", "appId", "operationOutcome", "appState"}  # fmt: skip

    async def handle(request: web.Request) -> web.StreamResponse:
        doc = json.loads(await request.read())
        if set(doc) - known:
            return web.Response(status=500, text="KeyError: botemuProbe")
        modalities = doc.get("presentedModalityTypes", [])
        if any(m not in ("audio", "video") for m in modalities):
            return web.Response(status=500, text="ValueError: unknown modality")
        return web.json_response({"actions": [
            {"operationId": "a", "action": "answer"},
            {"operationId": "h", "action": "hangup"},
        ]})  # fmt: skip

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


# --- the knobs ---------------------------------------------------------------------------------


def test_no_faults_by_default() -> None:
    assert CallSettings(bot_url="http://x").faults is NO_FAULTS
    assert not NO_FAULTS.any
    assert NO_FAULTS.describe() == "none"
    assert PlatformFaults(caller_delay=0.5).any


def test_describe_names_every_fault() -> None:
    faults = PlatformFaults((2,), (1,), (3,), True, True, 1.5)
    assert faults.describe() == (
        "fail callback 2; duplicate callback 1; drop callback 3; unknown fields; "
        "unknown enum values; caller waits 1.5s before each input"
    )


def _conversation() -> Conversation:
    return Conversation(
        id="c1",
        participants=(Participant(identity="8:u", originator=True),),
        presented_modality_types=(ModalityType.AUDIO,),
        call_state=CallState.INCOMING,
    )


def test_unknown_field_and_enum_on_the_conversation_bytes() -> None:
    faults = PlatformFaults(unknown_fields=True, unknown_enums=True)
    assert faults.encode_conversation(_conversation()) == (
        b'{"id":"c1","participants":[{"identity":"8:u","originator":true}],'
        b'"presentedModalityTypes":["audio","botemuFutureModality"],"isMultiparty":false,'
        b'"callState":"incoming","botemuProbe":{"note":"unknown field"}}'
    )
    only_enums = PlatformFaults(unknown_enums=True).encode_conversation(_conversation())
    assert b"botemuProbe" not in only_enums and FUTURE_MODALITY.encode() in only_enums


def test_unknown_field_on_the_result_and_its_outcome() -> None:
    outcome = RecognizeOutcome(
        id="m",
        outcome=Outcome.SUCCESS,
        choice_outcome=ChoiceOutcome(
            completion_reason=RecognitionCompletionReason.DTMF_OPTION_MATCHED, choice_name="s"
        ),
    )
    result = ConversationResult(
        id="c1", call_state=CallState.ESTABLISHED, operation_outcome=outcome
    )
    assert PlatformFaults().result(result) is result
    probed = PlatformFaults(unknown_fields=True).result(result)
    assert probed.extra == {"botemuProbe": {"note": "unknown field"}}
    assert probed.operation_outcome.extra == {"botemuProbe": {"note": "unknown field"}}
    assert result.extra == {}  # the original is untouched


def test_slow_caller_waits_before_each_input_step() -> None:
    script = CallerScript.of(Listen(), Press("1"), Say("sales"), Silence(2), Talk(3))
    assert slow_caller(script, 1.5).steps == (
        Listen(), Silence(1.5), Press("1"), Silence(1.5), Say("sales"), Silence(2),
        Silence(1.5), Talk(3),
    )  # fmt: skip
    assert slow_caller(script, 0) is script


def test_slow_caller_slows_the_when_rules_too() -> None:
    script = CallerScript((Press("9"),), (WhenRule("menu", (Listen(), Press("1")), once=True),))
    slowed = slow_caller(script, 2.0)
    assert slowed.steps == (Silence(2.0), Press("9"))
    assert slowed.rules == (WhenRule("menu", (Listen(), Silence(2.0), Press("1")), once=True),)


@pytest.mark.parametrize(
    ("one", "other", "differs"),
    [
        pytest.param(b'{"a":1,"operationId":"x"}', b'{"operationId":"y","a":1}', None, id="ids"),
        pytest.param(
            b'{"actions":[{"OperationId":"1"}]}',
            b'{"actions":[{"operationId":"2"}]}',
            None,
            id="nested-ids-any-case",
        ),
        pytest.param(b'{"appState":"1"}', b'{"appState":"2"}', "$.body.appState", id="state"),
        pytest.param(b"[1,2]", b"[1,2,3]", "$.body.length", id="longer"),
        pytest.param(b"<html>", b"<html> ", None, id="text-trimmed"),
        pytest.param(b'{"x":true}', b'{"x":1}', "$.body.x", id="bool-is-not-one"),
    ],
)
def test_material_differences(one: bytes, other: bytes, differs: str | None) -> None:
    found = first_difference(material(200, one), material(200, other))
    assert (found[0] if found else None) == differs


def test_status_class_counts() -> None:
    assert first_difference(material(200, b""), material(204, b"")) is None
    assert first_difference(material(200, b""), material(409, b"")) == ("$.status", "2xx", "4xx")


# --- calls with faults -------------------------------------------------------------------------


async def test_without_faults_nothing_is_noted(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, events = await call(aiohttp_server, store, make_bot("ok"), NO_FAULTS)
    assert report.end_reason is EndReason.BOT_HUNG_UP
    assert not [e for e in events if str(e.payload.get("summary", "")).startswith("fault")]
    assert not [e for e in events if str(e.payload.get("summary", "")).startswith("faults:")]


async def test_fail_callback_retries_with_the_same_message_id(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    report, events = await call(aiohttp_server, store, app, PlatformFaults(fail_callbacks=(1,)))
    ids = message_ids(app[STATE])
    assert len(ids) == 3 and ids[1] == ids[2] != ids[0]  # the Conversation, then callback 1 twice
    assert rules_of(report) == []  # an injected failure is no CALL-HTTP-5XX
    assert report.end_reason is EndReason.BOT_HUNG_UP
    (note,) = notes(events)
    assert note["fault"] == "fail_callback" and note["message_id"] == ids[1]
    at = next(i for i, e in enumerate(events) if "fault" in e.payload)
    assert [e.kind for e in events[at - 1 : at + 3]] == [
        "http.response", "note", "retry", "http.request",
    ]  # fmt: skip
    assert events[0].kind == "call.start" and events[1].payload["faults"]["fail_callbacks"] == [1]


async def test_fail_callback_of_a_multipart_result(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("record-wav")
    report, _ = await call(aiohttp_server, store, app, PlatformFaults(fail_callbacks=(1,)),
                           caller="talk 3s then #")  # fmt: skip
    received = app[STATE].received
    assert [r.content_type for r in received] == ["application/json", "multipart/form-data",
                                                  "multipart/form-data"]  # fmt: skip
    assert received[1].body == received[2].body
    assert rules_of(report) == []


async def test_fail_callback_makes_a_non_idempotent_bot_advance_twice(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    # The platform uses the retry's answer: a bot that advanced on the first delivery shows it.
    _, events = await call(
        aiohttp_server, store, counting_bot(), PlatformFaults(fail_callbacks=(1,))
    )
    bodies = [e.payload["body"] for e in events if e.kind == "http.request"]
    last_result = json.loads(bodies[-1])
    assert last_result["appState"] == "step-3"  # the answer to the retry was used


async def test_duplicate_callback_with_an_idempotent_bot(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    report, events = await call(
        aiohttp_server, store, app, PlatformFaults(duplicate_callbacks=(1,))
    )
    ids = message_ids(app[STATE])
    assert len(ids) == 3 and ids[1] == ids[2]
    assert rules_of(report) == []
    assert [n["fault"] for n in notes(events)] == ["duplicate_callback"]


async def test_duplicate_callback_exposes_a_bot_that_advances_twice(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store, counting_bot(),
                           PlatformFaults(duplicate_callbacks=(1,)))  # fmt: skip
    (finding,) = [f for f in report.findings if f.rule == "CALL-DUPLICATE-DIFFERS"]
    assert finding.severity == "warning"
    assert finding.evidence == '$.body.appState: first "step-2", then "step-3"'
    assert "idempotent" in finding.message
    assert report.end_reason is EndReason.BOT_HUNG_UP  # the second answer was run


async def test_duplicate_callback_ignores_fresh_operation_ids(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store, counting_bot(fresh_operation_ids=True),
                           PlatformFaults(duplicate_callbacks=(1,)))  # fmt: skip
    assert "CALL-DUPLICATE-DIFFERS" not in rules_of(report)


async def test_drop_callback_ends_the_call_without_retries(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    report, events = await call(aiohttp_server, store, app, PlatformFaults(drop_callbacks=(1,)))
    assert len(app[STATE].received) == 1  # only the Conversation
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert rules_of(report) == []  # dropped on purpose: no delivery finding
    (note,) = notes(events)
    assert note["fault"] == "drop_callback" and note["callback"] == 1
    assert not [e for e in events if e.kind == "retry"]


async def test_unknown_fields_reach_the_bot_everywhere(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    await call(aiohttp_server, store, app, PlatformFaults(unknown_fields=True, unknown_enums=True))
    conversation, result = (json.loads(r.body) for r in app[STATE].received)
    assert conversation["botemuProbe"] == {"note": "unknown field"}
    assert conversation["presentedModalityTypes"] == ["audio", "botemuFutureModality"]
    assert result["botemuProbe"] == {"note": "unknown field"}
    assert result["operationOutcome"]["botemuProbe"] == {"note": "unknown field"}
    # press 1 on a live call: the callState and the success's completionReason are unknown.
    assert result["callState"] == FUTURE_CALL_STATE
    assert result["operationOutcome"]["outcome"] == "success"
    assert result["operationOutcome"]["choiceOutcome"] == {
        "completionReason": FUTURE_COMPLETION_REASON, "choiceName": "sales"
    }  # fmt: skip


@pytest.mark.parametrize(
    "faults",
    [
        pytest.param(PlatformFaults(unknown_fields=True), id="unknown-fields"),
        pytest.param(PlatformFaults(unknown_enums=True), id="unknown-enums"),
    ],
)
async def test_a_strict_bot_fails_forward_compatibility(
    aiohttp_server: ServerFactory, store: TranscriptStore, faults: PlatformFaults
) -> None:
    report, _ = await call(aiohttp_server, store, strict_bot(), faults)
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert "CALL-HTTP-5XX" in rules_of(report)


async def test_the_strict_bot_is_fine_without_faults(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store, strict_bot(), NO_FAULTS)
    assert report.end_reason is EndReason.BOT_HUNG_UP


async def test_caller_delay_makes_the_menu_time_out(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    report, events = await call(aiohttp_server, store, app, PlatformFaults(caller_delay=6.0))
    result = json.loads(app[STATE].received[1].body)
    reason = result["operationOutcome"]["choiceOutcome"]["completionReason"]
    assert reason == "initialSilenceTimeout"
    assert events[0].payload["script"] == ["silence 6s", "press 1"]
    assert report.vtime > 6


async def test_a_short_caller_delay_still_gets_through(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    await call(aiohttp_server, store, app, PlatformFaults(caller_delay=1.0))
    result = json.loads(app[STATE].received[1].body)
    assert result["operationOutcome"]["choiceOutcome"]["choiceName"] == "sales"


async def test_fail_callback_after_a_real_5xx(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    # flaky: 500 once per message id. The injected failure falls on the first accepted answer.
    app = make_bot("flaky")
    report, events = await call(aiohttp_server, store, app, PlatformFaults(fail_callbacks=(1,)))
    ids = message_ids(app[STATE])
    assert ids.count(ids[2]) == 3  # callback 1: a real 500, an injected failure, the answer used
    assert rules_of(report).count("CALL-HTTP-5XX") == 2  # the Conversation's and callback 1's
    assert report.end_reason is EndReason.BOT_HUNG_UP
    assert [n["attempt"] for n in notes(events)] == [2]


async def test_an_injected_failure_adds_no_attempt_to_a_delivery_that_fails(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("always-500")
    report, _ = await call(aiohttp_server, store, app, PlatformFaults(fail_callbacks=(0,)))
    assert len(app[STATE].received) == FAST.attempts
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert "Conversation not delivered after 3 attempts" in report.findings[-1].message


# --- unknown enum values in results (spec, Versioning 4) ---------------------------------------


def _recognized(state: CallState, outcome: Outcome, reason: RecognitionCompletionReason) -> bytes:
    result = ConversationResult(
        id="c1",
        call_state=state,
        operation_outcome=RecognizeOutcome(
            id="m",
            outcome=outcome,
            choice_outcome=ChoiceOutcome(
                completion_reason=reason,
                choice_name="sales" if outcome is Outcome.SUCCESS else None,
            ),
        ),
    )
    return PlatformFaults(unknown_enums=True).encode_result(result)


def test_a_live_success_gets_an_unknown_call_state_and_completion_reason() -> None:
    got = _recognized(
        CallState.ESTABLISHED, Outcome.SUCCESS, RecognitionCompletionReason.DTMF_OPTION_MATCHED
    )
    assert json.loads(got) == {
        "id": "c1",
        "callState": FUTURE_CALL_STATE,
        "operationOutcome": {
            "type": "recognizeOutcome", "id": "m", "outcome": "success",
            "choiceOutcome": {"completionReason": FUTURE_COMPLETION_REASON, "choiceName": "sales"},
        },
    }  # fmt: skip


def test_a_live_failure_keeps_its_reason_for_the_bot_to_recover_by() -> None:
    got = _recognized(
        CallState.ESTABLISHED, Outcome.FAILURE, RecognitionCompletionReason.INITIAL_SILENCE_TIMEOUT
    )
    assert json.loads(got)["callState"] == FUTURE_CALL_STATE
    assert json.loads(got)["operationOutcome"] == {
        "type": "recognizeOutcome", "id": "m", "outcome": "failure",
        "choiceOutcome": {"completionReason": "initialSilenceTimeout"},
    }  # fmt: skip


def test_the_terminated_result_keeps_terminated_and_gets_an_unknown_outcome() -> None:
    # A bot tells the end of the call by callState terminated: that is never replaced.
    got = _recognized(
        CallState.TERMINATED, Outcome.FAILURE, RecognitionCompletionReason.CALL_TERMINATED
    )
    assert json.loads(got) == {
        "id": "c1",
        "callState": "terminated",
        "operationOutcome": {
            "type": "recognizeOutcome", "id": "m", "outcome": FUTURE_OUTCOME,
            "choiceOutcome": {"completionReason": FUTURE_COMPLETION_REASON},
        },
    }  # fmt: skip


@pytest.mark.parametrize(
    ("outcome", "reasons"),
    [
        pytest.param(
            PlayPromptOutcome(
                id="p", outcome=Outcome.SUCCESS,
                completion_reason=PromptCompletionReason.COMPLETED_SUCCESSFULLY,
            ),
            {"$": FUTURE_COMPLETION_REASON},
            id="play-prompt",
        ),
        pytest.param(
            RecordOutcome(
                id="r", outcome=Outcome.SUCCESS, length_of_recording_in_secs=3.0,
                completion_reason=RecordingCompletionReason.COMPLETED_STOP_TONE_DETECTED,
                format=RecordingFormat.WAV,
            ),
            {"$": FUTURE_COMPLETION_REASON},
            id="record",
        ),
        pytest.param(
            RecognizeOutcome(
                id="d", outcome=Outcome.SUCCESS,
                collect_digits_outcome=CollectDigitsOutcome(
                    completion_reason=DigitCollectionCompletionReason.INTERDIGIT_TIMEOUT,
                    digits="12",
                ),
            ),
            {"collectDigitsOutcome": FUTURE_COMPLETION_REASON},
            id="collect-digits",
        ),
        pytest.param(AnswerOutcome(id="a", outcome=Outcome.SUCCESS), {}, id="answer"),
    ],
)  # fmt: skip
def test_every_completion_reason_of_a_live_success_is_unknown(
    outcome: OperationOutcome, reasons: dict[str, str]
) -> None:
    result = ConversationResult(id="c", call_state=CallState.ESTABLISHED, operation_outcome=outcome)
    written = json.loads(PlatformFaults(unknown_enums=True).encode_result(result))[
        "operationOutcome"
    ]
    found = {"$": written.get("completionReason")} | {
        key: written[key].get("completionReason")
        for key in ("choiceOutcome", "collectDigitsOutcome")
        if key in written
    }
    assert {k: v for k, v in found.items() if v is not None} == reasons
    assert written["outcome"] == "success"
    if isinstance(outcome, RecordOutcome):
        assert (written["format"], written["lengthOfRecordingInSecs"]) == ("wav", 3.0)


def test_a_call_not_yet_answered_keeps_incoming_and_every_value() -> None:
    # The validation outcome of a first Workflow: the bot must still answer or reject.
    result = ConversationResult(
        id="c", call_state=CallState.INCOMING,
        operation_outcome=WorkflowValidationOutcome(id="w", outcome=Outcome.FAILURE),
    )  # fmt: skip
    faults = PlatformFaults(unknown_enums=True)
    assert faults.encode_result(result) == encode(result)
    legacy = WireOptions(legacy_validation_outcome_type=True)
    assert faults.encode_result(result, legacy) == encode(result, legacy)
    assert b"worfklowValidationOutcome" in faults.encode_result(result, legacy)


def test_encode_result_without_unknown_enums_is_the_plain_encoding() -> None:
    result = ConversationResult(
        id="c", call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="a", outcome=Outcome.SUCCESS),
    )  # fmt: skip
    assert NO_FAULTS.encode_result(result) == encode(result)
    probing = PlatformFaults(unknown_fields=True)
    # ``result`` is idempotent: the session probes the result first, encode_result again.
    assert probing.encode_result(probing.result(result)) == encode(probing.result(result))
    assert b"botemuFuture" not in probing.encode_result(result)


def _posted(store: TranscriptStore, call_id: str) -> list[dict[str, Any]]:
    """Every JSON payload botemu posted in a call, from the exact bytes in the transcript: a
    JSON body, or the conversationResult part of a multipart body (checked against its blob)."""
    out: list[dict[str, Any]] = []
    for event in store.events(call_id):
        if event.kind != "http.request":
            continue
        body = event.payload.get("body")
        if isinstance(body, str):
            out.append(json.loads(body))
            continue
        blob = store.blob(call_id, event.seq)
        assert blob is not None
        content_type = event.payload["headers"]["Content-Type"]  # type: ignore[index]
        message = BytesParser(policy=email_policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + blob
        )
        parts = {p.get_param("name", header="content-disposition"): p for p in message.iter_parts()}
        json_part = parts["conversationResult"].get_payload(decode=True)
        assert json_part.decode() == event.payload["parts"]["conversationResult"]  # type: ignore[index]
        out.append(json.loads(json_part))
    return out


OUTCOME_REASONS: dict[str, type[m.WireEnum]] = {
    "playPromptOutcome": m.PromptCompletionReason,
    "recordOutcome": m.RecordingCompletionReason,
}
NESTED_REASONS: dict[str, type[m.WireEnum]] = {
    "choiceOutcome": m.RecognitionCompletionReason,
    "collectDigitsOutcome": m.DigitCollectionCompletionReason,
}
ENUMS: tuple[type[m.WireEnum], ...] = (
    m.CallState, m.ModalityType, m.Outcome, m.VoiceGender, m.Culture, m.RecordingFormat, m.SayAs,
    m.NotificationType, m.ActionType, m.OutcomeType, m.PromptCompletionReason,
    m.RecordingCompletionReason, m.RecognitionCompletionReason, m.DigitCollectionCompletionReason,
)  # fmt: skip
CANONICAL = {v for cls in ENUMS for v in cls.canonical()} | {m.LEGACY_VALIDATION_OUTCOME}
"""Every enum value as botemu writes it (the legacy spelling of the validation outcome too)."""
ANY_CASE = {str(member.value).lower() for cls in ENUMS for member in cls}


def enum_values(doc: dict[str, Any]) -> list[tuple[str, str, type[m.WireEnum]]]:
    """(path, value, enumeration) of every enum-valued member of a Conversation or a
    ConversationResult, as the spec's tables give them."""
    found: list[tuple[str, str, type[m.WireEnum]]] = [
        ("$.callState", doc["callState"], m.CallState)
    ]
    if "participants" in doc:
        modalities = doc["presentedModalityTypes"]
        found += [
            (f"$.presentedModalityTypes[{i}]", v, m.ModalityType) for i, v in enumerate(modalities)
        ]
        return found
    outcome = doc["operationOutcome"]
    found += [("$.operationOutcome.type", outcome["type"], m.OutcomeType),
              ("$.operationOutcome.outcome", outcome["outcome"], m.Outcome)]  # fmt: skip
    if outcome["type"] in OUTCOME_REASONS:
        found.append(("$.operationOutcome.completionReason", outcome["completionReason"],
                      OUTCOME_REASONS[outcome["type"]]))  # fmt: skip
    if "format" in outcome:
        found.append(("$.operationOutcome.format", outcome["format"], m.RecordingFormat))
    for key, cls in NESTED_REASONS.items():
        if key in outcome:
            found.append((f"$.operationOutcome.{key}.completionReason",
                          outcome[key]["completionReason"], cls))  # fmt: skip
    return found


def injected_at(path: str) -> str:
    """The unknown value ``unknown_enums`` may write at a path."""
    if path.startswith("$.presentedModalityTypes"):
        return FUTURE_MODALITY
    if path.endswith("completionReason"):
        return FUTURE_COMPLETION_REASON
    return {"$.callState": FUTURE_CALL_STATE, "$.operationOutcome.outcome": FUTURE_OUTCOME}.get(
        path, "(none)"
    )


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def every_outcome_bot() -> web.Application:
    """Walks a call through every action that posts an outcome, each Workflow with a callback:
    answer alone, a prompt, an MP3 recording, a digit collection, then goodbye and hangup."""

    async def handle(request: web.Request) -> web.Response:
        if request.content_type == "multipart/form-data":
            part = await (await request.multipart()).next()  # conversationResult comes first
            assert isinstance(part, BodyPartReader) and part.name == "conversationResult"
            doc = json.loads(await part.read())
        else:
            doc = json.loads(await request.read())
        if doc.get("callState") == "terminated":
            return web.Response(status=200)
        callback = {"callback": f"http://{request.host}/api/calls"}
        if "validation" in str(doc.get("operationOutcome", {}).get("type")).lower():
            if doc.get("callState") == "incoming":  # not answered: reject is the way out
                reject = [{"operationId": "x", "action": "reject"}]
                return web.json_response({"actions": reject, "links": callback})
            doc["appState"] = "9"  # answered: goodbye
        step = "0" if "participants" in doc else str(doc.get("appState"))
        actions: dict[str, list[dict[str, Any]]] = {
            "0": [{"operationId": "a", "action": "answer"}],
            "1": [{"operationId": "p", "action": "playPrompt", "prompts": [{"value": "Hello"}]}],
            "2": [{"operationId": "r", "action": "record", "recordingFormat": "mp3",
                   "maxDurationInSeconds": 10, "stopTones": ["#"]}],
            "3": [{"operationId": "d", "action": "recognize",
                   "collectDigits": {"maxNumberOfDtmfs": 2}}],
        }  # fmt: skip
        then = actions.get(step) or [
            {"operationId": "b", "action": "playPrompt", "prompts": [{"value": "Bye"}]},
            {"operationId": "h", "action": "hangup"},
        ]
        return web.json_response(
            {"actions": then, "appState": str(int(step) + 1), "links": callback}
        )

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


ivr = load_module(ROOT / "examples" / "ivr_bot.py", "ivr_bot_for_faults")
CALLS: list[tuple[str, str]] = [
    ("ivr", "press 1; press 1234#"),
    ("ivr", "say support; silence 10s"),
    ("ivr", "press 9; press 3; talk 4s then #"),
    ("ivr", "press 3; talk 4s; hangup"),
    ("ivr", "silence 20s; hangup"),
    ("invalid", "press 1"),
    ("every-outcome", "listen; talk 2s then #; press 12"),
    ("every-outcome", "listen; talk 2s; hangup"),
]
"""(bot, caller): between them, every outcome type, both outcomes, most completion reasons, the
three call states, multipart and JSON results."""
FAULT_PLANS = [
    pytest.param(NO_FAULTS, DEFAULT_OPTIONS, id="none"),
    pytest.param(PlatformFaults(fail_callbacks=(0, 1, 2)), DEFAULT_OPTIONS, id="fail"),
    pytest.param(PlatformFaults(duplicate_callbacks=(0, 1, 2, 3)), DEFAULT_OPTIONS, id="duplicate"),
    pytest.param(PlatformFaults(drop_callbacks=(3,)), DEFAULT_OPTIONS, id="drop"),
    pytest.param(PlatformFaults(unknown_fields=True), DEFAULT_OPTIONS, id="unknown-fields"),
    pytest.param(PlatformFaults(unknown_enums=True), DEFAULT_OPTIONS, id="unknown-enums"),
    pytest.param(PlatformFaults(caller_delay=6.0), DEFAULT_OPTIONS, id="slow-caller"),
    pytest.param(PlatformFaults(reject_workflows=(1, 3)), DEFAULT_OPTIONS, id="reject"),
    pytest.param(
        PlatformFaults(reject_workflows=(1, 2)),
        WireOptions(legacy_validation_outcome_type=True),
        id="reject-legacy-spelling",
    ),
    pytest.param(
        PlatformFaults((1,), (2,), (4,), True, True, 1.0, (3,)), DEFAULT_OPTIONS, id="all"
    ),
]  # fmt: skip


@pytest.mark.parametrize(("faults", "wire"), FAULT_PLANS)
async def test_every_enum_value_posted_is_exact_camel_case(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    tmp_path: Path,
    faults: PlatformFaults,
    wire: WireOptions,
) -> None:
    """The Node calling SDK compares enum values case-sensitively (field notes): every value
    botemu posts, under every fault plan, is exactly the camelCase spelling of its
    enumeration's value; the only other values are the unknown ones ``unknown_enums`` injects,
    each where it belongs."""
    apps = {
        "ivr": ivr.make_app(voicemail_dir=tmp_path / "voicemail"),
        "invalid": make_bot("invalid"),
        "every-outcome": every_outcome_bot(),
    }
    urls = {
        name: str((await aiohttp_server(app)).make_url("/api/calls")) for name, app in apps.items()
    }
    checked: list[tuple[str, str]] = []
    for bot, caller in CALLS:
        settings = CallSettings(bot_url=urls[bot], caller=CallerScript.from_inline(caller),
                                retry=FAST, seed=7, faults=faults, wire=wire)  # fmt: skip
        report = await place_call(settings, store)
        for doc in _posted(store, report.call_id):
            for path, value, cls in enum_values(doc):
                checked.append((path, value))
                legacy = cls is m.OutcomeType and wire.legacy_validation_outcome_type
                if value in cls.canonical() or (legacy and value == m.LEGACY_VALIDATION_OUTCOME):
                    assert re.fullmatch(r"[a-z][A-Za-z0-9]*", value), (path, value)
                    continue
                assert faults.unknown_enums, (bot, caller, path, value)
                assert value == injected_at(path), (bot, caller, path, value)
            # No other member anywhere carries an enum value in another casing.
            assert not [t for t in strings(doc) if t.lower() in ANY_CASE and t not in CANONICAL]
    values = {value for _, value in checked}
    assert {"incoming", "terminated", "success", "failure"} <= values
    if faults is NO_FAULTS:
        assert {
            "established", "audio", "dtmfOptionMatched", "speechOptionMatched", "incorrectDtmf",
            "initialSilenceTimeout", "completedStopToneDetected", "callTerminated",
            "completedSuccessfully", "answerOutcome", "playPromptOutcome", "recordOutcome",
            "hangupOutcome", "workflowValidationOutcome", "wav", "mp3",
        } <= values  # fmt: skip
    if faults.unknown_enums:
        assert FUTURE_VALUES <= values
    else:
        assert not FUTURE_VALUES & values


async def test_unknown_enums_leave_what_the_platform_does_unchanged(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    # The caller leaves a voicemail and hangs up: the terminated result's outcome is unknown to
    # the bot, yet the recording is posted with it (the platform's own outcome is a success),
    # and the reference IVR bot keeps the message and ends the call cleanly.
    voicemail = tmp_path / "voicemail"
    server = await aiohttp_server(ivr.make_app(voicemail_dir=voicemail))
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")),
        caller=CallerScript.from_inline("press 3; talk 4s; hangup"),
        retry=FAST,
        seed=7,
        faults=PlatformFaults(unknown_enums=True),
    )
    report = await place_call(settings, store)
    assert report.end_reason is EndReason.CALLER_HUNG_UP
    assert rules_of(report) == []
    conversation, menu, recording = _posted(store, report.call_id)
    assert conversation["callState"] == "incoming"
    assert menu["callState"] == FUTURE_CALL_STATE
    assert recording["callState"] == "terminated"
    assert recording["operationOutcome"]["outcome"] == FUTURE_OUTCOME
    assert recording["operationOutcome"]["completionReason"] == FUTURE_COMPLETION_REASON
    assert recording["operationOutcome"]["lengthOfRecordingInSecs"] == 4.0
    (saved,) = voicemail.iterdir()
    assert saved.suffix == ".wav" and saved.stat().st_size > 4 * 32000
    labels = [e.payload["label"] for e in store.events(report.call_id) if e.kind == "http.request"]
    assert labels[-1].startswith("recordOutcome success callTerminated")  # the platform's view
