"""Findings a call makes about what real SDKs and the real platform do beyond the spec, and how
a call records repeated findings: a recording too long for the Node calling SDK's multipart
parser (``CALL-RECORDING-OVER-1MIB``), a call longer than the one the field notes saw dropped
(``CALL-WORKFLOWS-OVER-13``), and warnings repeated within a call folded into one finding with a
count. Calls run over loopback HTTP in virtual time."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.exchange_rules import (
    CALL_RECORDING_OVER_1MIB,
    CALL_WORKFLOWS_OVER_13,
    EXCHANGE_RULES,
    NODE_SDK_PART_LIMIT,
    REAL_WORKFLOW_DROP,
)
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.findings import Finding, Severity
from emulator.transcripts.store import StoredEvent, TranscriptStore
from tests.bots.calling_bots import make_bot
from tests.support import ROOT, load_module

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
FAST = RetryPolicy(attempts=3, backoff=0.01, timeout=5.0)
ivr = load_module(ROOT / "examples" / "ivr_bot.py", "ivr_bot_for_session_findings")


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


async def call(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    app: web.Application,
    caller: str = "",
    **settings: Any,
) -> tuple[CallReport, list[StoredEvent]]:
    server = await aiohttp_server(app)
    options: dict[str, Any] = {"retry": FAST, "seed": 7} | settings
    report = await place_call(
        CallSettings(
            bot_url=str(server.make_url("/api/calls")),
            caller=CallerScript.from_inline(caller),
            **options,
        ),
        store,
    )
    return report, store.events(report.call_id)


def finding_events(events: list[StoredEvent]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.kind == "finding"]


# --- the rules ---------------------------------------------------------------------------------


def test_the_rules_cite_the_field_notes() -> None:
    assert CALL_RECORDING_OVER_1MIB.id == "CALL-RECORDING-OVER-1MIB"
    assert CALL_RECORDING_OVER_1MIB.severity is Severity.WARNING
    assert CALL_RECORDING_OVER_1MIB.source == "field notes, Calling: wire format (Node calling SDK)"
    assert CALL_WORKFLOWS_OVER_13.id == "CALL-WORKFLOWS-OVER-13"
    assert CALL_WORKFLOWS_OVER_13.severity is Severity.WARNING
    assert CALL_WORKFLOWS_OVER_13.source == (
        "field notes, Calling: how the platform executes a Workflow"
    )
    assert "--max-workflows 13" in CALL_WORKFLOWS_OVER_13.summary
    assert NODE_SDK_PART_LIMIT == 1024 * 1024 and REAL_WORKFLOW_DROP == 13


NOT_NAMED_BEFORE = {
    "CALL-INVALID-NO-CALLBACK",
    "CALL-AFTER-END",
    "CALL-MEDIA-FETCH",
    "CALL-MEDIA-SIZE",
}
"""Exchange rules that no test named when this check was added: it keeps the list from growing
(the Workflow rules have their own check, ``test_rules.py``)."""


def test_every_exchange_rule_is_named_by_a_test() -> None:
    here = Path(__file__).resolve()
    text = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py") if p != here
    )
    own = here.read_text(encoding="utf-8")
    text += re.sub(r"NOT_NAMED_BEFORE = \{.*?\n\}", "", own, flags=re.DOTALL)
    unnamed = {rule.id for rule in EXCHANGE_RULES if rule.id not in text}
    assert unnamed <= NOT_NAMED_BEFORE, f"no test names {sorted(unnamed - NOT_NAMED_BEFORE)}"


# --- a recording over 1 MiB (field notes: the Node SDK keeps the first 1 MiB of a part) ---------


# aiohttp warns about any request body over 1 MiB given as bytes (delivery.py posts bytes).
@pytest.mark.filterwarnings("ignore:Sending a large body directly:ResourceWarning")
@pytest.mark.parametrize(
    ("seconds", "flagged"),
    [
        pytest.param(32, False, id="32s-wav-is-1024044-bytes"),
        pytest.param(33, True, id="33s-wav-is-1056044-bytes"),
        pytest.param(40, True, id="40s-wav"),
    ],
)
async def test_a_wav_recording_over_1_mib_gets_a_warning(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    tmp_path: Path,
    seconds: int,
    flagged: bool,
) -> None:
    voicemail = tmp_path / "voicemail"
    app = ivr.make_app(voicemail_dir=voicemail)  # records WAV, up to 60 s
    report, events = await call(aiohttp_server, store, app, f"press 3; talk {seconds}s then #")
    size = 44 + seconds * 32000  # 16 kHz, 16-bit mono PCM after a 44-byte header
    recorded = next(e for e in events if e.payload.get("recording") is True)
    assert f"{size} bytes" in str(recorded.payload["summary"])
    found = [f for f in report.findings if f.rule == "CALL-RECORDING-OVER-1MIB"]
    assert report.end_reason is EndReason.BOT_HUNG_UP
    (saved,) = voicemail.iterdir()
    assert saved.stat().st_size == size  # botemu posts all of it; the warning is about the SDK
    if not flagged:
        assert found == []
        return
    (finding,) = found
    assert finding.severity is Severity.WARNING
    assert finding.where == "recordedAudio (voicemail-2)"
    kept = round(seconds * NODE_SDK_PART_LIMIT / size)
    assert finding.message == (
        f"the {seconds}s wav recording is {size} bytes, over 1 MiB: the Node calling SDK's "
        "multipart parser keeps only the first 1 MiB of a part, so a bot on that SDK gets about "
        f"the first {kept}s of it (a shorter maxDurationInSeconds, or recordingFormat wma or "
        "mp3, keeps it whole)"
    )
    # Found when the recording is made, before it is posted.
    at = next(i for i, e in enumerate(events) if e.kind == "finding"
              and e.payload["rule"] == "CALL-RECORDING-OVER-1MIB")  # fmt: skip
    assert events[at - 1] is recorded
    assert events[at + 1].kind == "http.request" and "parts" in events[at + 1].payload


def recording_bot(fmt: str, max_seconds: int) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        if "participants" not in await request.text():
            return web.Response(status=200)  # the recording: nothing more to do
        record = {"operationId": "rec", "action": "record", "recordingFormat": fmt,
                  "maxDurationInSeconds": max_seconds, "stopTones": ["#"]}  # fmt: skip
        return web.json_response({
            "actions": [{"operationId": "a", "action": "answer"}, record],
            "links": {"callback": f"http://{request.host}/api/calls"},
        })  # fmt: skip

    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_post("/api/calls", handle)
    return app


@pytest.mark.filterwarnings("ignore:Sending a large body directly:ResourceWarning")
async def test_a_wma_recording_over_1_mib_is_not_told_to_use_wma(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store, recording_bot("wma", 300), "talk 230s then #")
    (finding,) = [f for f in report.findings if f.rule == "CALL-RECORDING-OVER-1MIB"]
    assert finding.where == "recordedAudio (rec)"
    assert finding.message.startswith("the 230s wma recording is ")
    assert finding.message.endswith("(a shorter maxDurationInSeconds keeps it whole)")


async def test_a_long_wma_recording_stays_under_1_mib(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, events = await call(aiohttp_server, store, make_bot("record-wma"), "talk 29s then #")
    recorded = next(e for e in events if e.payload.get("recording") is True)
    assert recorded.payload["format"] == "wma" and recorded.payload["seconds"] == 29
    assert "CALL-RECORDING-OVER-1MIB" not in {f.rule for f in report.findings}


# --- repeated warnings are folded into one finding with a count ---------------------------------


def node_sdk_bot(menus: int) -> web.Application:
    """Writes every Workflow as the Node calling SDK does, with ``agent`` and ``source`` added:
    the menu ``menus`` times (the caller stays silent), then goodbye and hangup."""

    async def handle(request: web.Request) -> web.Response:
        doc = json.loads(await request.read())
        if doc.get("callState") == "terminated":
            return web.Response(status=200)
        turn = 1 if "participants" in doc else int(doc["appState"]) + 1
        menu = {"operationId": f"menu-{turn}", "action": "recognize",
                "choices": [{"name": "sales", "dtmfVariation": "1"}]}  # fmt: skip
        if turn > menus:
            actions: list[dict[str, Any]] = [
                {"operationId": "bye", "action": "playPrompt", "prompts": [{"value": "Bye"}]},
                {"operationId": "hangup", "action": "hangup"},
            ]
            workflow: dict[str, Any] = {"actions": actions}
        else:
            actions = [{"operationId": "answer", "action": "answer"}] if turn == 1 else []
            workflow = {"actions": [*actions, menu], "appState": str(turn),
                        "links": {"callback": f"http://{request.host}/api/calls"}}  # fmt: skip
        workflow |= {"agent": "botbuilder", "source": "node"}
        return web.json_response(workflow)

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


async def test_a_warning_repeated_in_a_call_is_one_finding_with_a_count(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, events = await call(aiohttp_server, store, node_sdk_bot(3), "silence 60s")
    assert report.end_reason is EndReason.BOT_HUNG_UP and report.workflows == 4
    counted = [(f.rule, f.where, f.count) for f in report.findings]
    assert counted == [
        ("WF-UNKNOWN-FIELD", "$.agent", 4),
        ("WF-UNKNOWN-FIELD", "$.source", 4),
        ("WF-CALLBACK-HTTPS", "$.links.callback", 3),  # the goodbye has no callback
    ]
    assert (report.warnings, report.errors) == (3, 0)
    # The transcript is append-only: each warning is recorded once, as it was first found...
    recorded = [(p["rule"], p["where"]) for p in finding_events(events)]
    assert recorded == [(rule, where) for rule, where, _ in counted]
    assert all("count" not in p for p in finding_events(events))
    # ... and one note each at the end of the call says how often it repeated.
    notes = [e for e in events if e.kind == "note" and "repeated" in e.payload]
    assert [n.payload["summary"] for n in notes] == [
        "warning WF-UNKNOWN-FIELD at $.agent repeated 3 more times in this call (recorded once, above)",
        "warning WF-UNKNOWN-FIELD at $.source repeated 3 more times in this call (recorded once, above)",
        "warning WF-CALLBACK-HTTPS at $.links.callback repeated 2 more times in this call "
        "(recorded once, above)",
    ]  # fmt: skip
    assert notes[0].payload["repeated"] == {
        "rule": "WF-UNKNOWN-FIELD", "severity": "warning", "where": "$.agent", "count": 4
    }  # fmt: skip
    assert [e.kind for e in events[-4:]] == ["note", "note", "note", "call.end"]
    summary = store.call(report.call_id)
    assert summary is not None and (summary.warnings, summary.errors) == (3, 0)
    assert str(report.findings[0]).endswith("[WF-UNKNOWN-FIELD] (4 times)")


async def test_the_first_occurrence_is_recorded_where_it_happened(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    _, events = await call(aiohttp_server, store, node_sdk_bot(3), "silence 60s")
    first_answer = next(i for i, e in enumerate(events) if e.kind == "http.response")
    second_answer = next(
        i for i, e in enumerate(events) if e.kind == "http.response" and i > first_answer
    )
    assert {e.kind for e in events[first_answer:second_answer]} >= {"finding"}
    assert all(e.kind != "finding" for e in events[second_answer:])


async def test_a_warning_found_once_has_no_count_and_no_note(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, events = await call(aiohttp_server, store, node_sdk_bot(0), "silence 60s")
    # A goodbye before answering: refused, and with no callback the call ends there.
    assert [(f.rule, f.where, f.count) for f in report.findings] == [
        ("WF-UNKNOWN-FIELD", "$.agent", 1),
        ("WF-UNKNOWN-FIELD", "$.source", 1),
        ("WF-FIRST-ACTION", "$.actions[0]", 1),
        ("CALL-INVALID-NO-CALLBACK", "$.links.callback", 1),
    ]
    assert not [e for e in events if e.kind == "note" and "repeated" in e.payload]


async def test_errors_are_never_folded(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, events = await call(aiohttp_server, store, make_bot("always-500"), "press 1")
    fives = [f for f in report.findings if f.rule == "CALL-HTTP-5XX"]
    assert len(fives) == FAST.attempts and {f.where for f in fives} == {"Conversation"}
    assert all(f.count == 1 for f in report.findings)
    assert [p["rule"] for p in finding_events(events)] == [f.rule for f in report.findings]
    assert not [e for e in events if e.kind == "note" and "repeated" in e.payload]


def test_a_finding_with_a_count_round_trips_and_old_ones_read_as_one() -> None:
    once = Finding("WF-UNKNOWN-FIELD", Severity.WARNING, "$.agent", "unknown field 'agent'")
    assert "count" not in once.to_json() and once.count == 1
    folded = Finding("WF-UNKNOWN-FIELD", Severity.WARNING, "$.agent", "unknown field 'agent'",
                     count=12)  # fmt: skip
    assert folded.to_json()["count"] == 12
    assert Finding.from_json(json.loads(json.dumps(folded.to_json()))) == folded
    old = {"rule": "WF-ORDER", "severity": "error", "where": "$", "message": "m"}  # before count
    assert Finding.from_json(old).count == 1
    assert str(folded) == "warning: $.agent: unknown field 'agent' [WF-UNKNOWN-FIELD] (12 times)"
    for bad in (0, -1, "2", True, 1.5):
        with pytest.raises(ValueError, match="count"):
            Finding.from_json({**old, "count": bad})


# --- a call past 13 Workflows (field notes: a real call was dropped after about 13) -------------


def looping_bot(workflows: int) -> web.Application:
    """Plays a prompt per Workflow, each with a callback, ``workflows`` in all; the last hangs
    up."""

    async def handle(request: web.Request) -> web.Response:
        doc = json.loads(await request.read())
        if doc.get("callState") == "terminated":
            return web.Response(status=200)
        turn = 1 if "participants" in doc else int(doc["appState"]) + 1
        actions: list[dict[str, Any]] = [
            {"operationId": f"p{turn}", "action": "playPrompt", "prompts": [{"value": "Hi"}]}
        ]
        if turn == 1:
            actions.insert(0, {"operationId": "a", "action": "answer"})
        if turn >= workflows:
            actions.append({"operationId": "h", "action": "hangup"})
        callback = {"callback": f"http://{request.host}/api/calls"}
        return web.json_response({"actions": actions, "appState": str(turn), "links": callback})

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


@pytest.mark.parametrize(
    ("workflows", "flagged"),
    [
        pytest.param(13, False, id="13"),
        pytest.param(14, True, id="14"),
        pytest.param(30, True, id="30-once"),
    ],
)
async def test_a_call_past_13_workflows_gets_a_warning_once(
    aiohttp_server: ServerFactory, store: TranscriptStore, workflows: int, flagged: bool
) -> None:
    report, events = await call(aiohttp_server, store, looping_bot(workflows))
    assert report.end_reason is EndReason.BOT_HUNG_UP and report.workflows == workflows
    found = [f for f in report.findings if f.rule == "CALL-WORKFLOWS-OVER-13"]
    assert len(found) == flagged
    if not flagged:
        return
    (finding,) = found
    assert finding.count == 1 and finding.where == "call"
    assert finding.message == (
        "the call went past 13 Workflows: the field notes record a real call dropped after "
        "about 13 (botemu's limit here is 50); --max-workflows 13 shows what the bot does when "
        "the platform hangs up there"
    )
    # Recorded as Workflow 14 ran, before its result was posted.
    ran = [
        i for i, e in enumerate(events) if str(e.payload.get("summary")).startswith("Workflow [")
    ]
    at = next(i for i, e in enumerate(events) if e.payload.get("rule") == "CALL-WORKFLOWS-OVER-13")
    assert ran[13] < at and (len(ran) == 14 or at < ran[14])


async def test_with_the_real_limit_the_call_is_hung_up_instead(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store, looping_bot(30), max_workflows=13)
    assert report.end_reason is EndReason.WORKFLOW_LIMIT and report.workflows == 13
    rules = {f.rule for f in report.findings}
    assert "CALL-WORKFLOW-LIMIT" in rules and "CALL-WORKFLOWS-OVER-13" not in rules
