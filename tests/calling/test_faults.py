"""Platform faults: the knobs themselves, then calls over loopback HTTP with each fault set."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript, Listen, Press, Say, Silence, Talk, WhenRule
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.faults import (
    FUTURE_MODALITY,
    NO_FAULTS,
    PlatformFaults,
    first_difference,
    material,
    slow_caller,
)
from emulator.calling.model import (
    CallState,
    ChoiceOutcome,
    Conversation,
    ConversationResult,
    ModalityType,
    Outcome,
    Participant,
    RecognitionCompletionReason,
    RecognizeOutcome,
)
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.transcripts.store import StoredEvent, TranscriptStore
from tests.bots.calling_bots import STATE, BotState, make_bot

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
