"""Tests of examples/ivr_bot.py, the reference IVR calling bot.

The bot is standalone (it does not import ``emulator``), so it is imported by path. The tests play
the calling platform by hand: they post the camelCase JSON the spec and field notes describe
(lowercase enum values, the X-Platform-* headers) and read the Workflows back. Every Workflow the
bot sends is also checked with botemu's own validator. One test drives whole calls through
botemu's engine with scripted callers, and one serves the bot over TLS with client certificates.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import ssl
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import pytest
import trustme
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.calling import wire
from emulator.calling.caller import CallerScript
from emulator.calling.engine import CallProgress, result_for, run_workflow
from emulator.calling.rules import RuleContext, validate_workflow
from tests.support import load_module

ROOT = Path(__file__).resolve().parents[2]
JsonObject = dict[str, Any]
ClientFactory = Callable[..., Awaitable[TestClient[web.Request, web.Application]]]


def _load_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "ivr_bot.py", "ivr_bot")


ivr = _load_bot()


# --- What the platform sends -------------------------------------------------------------------


def conversation(call_id: str = "call-1") -> JsonObject:
    return {
        "id": call_id,
        "participants": [
            {
                "identity": "8:orgid:caller",
                "displayName": "A Caller",
                "languageId": "en-US",
                "originator": True,
            },
            {"identity": "28:bot", "originator": False},
        ],
        "presentedModalityTypes": ["audio"],
        "isMultiparty": False,
        "callState": "incoming",
        "links": {"call": f"https://platform.example/v1/calls/{call_id}"},
    }


def chose(op: str, name: str, reason: str = "dtmfOptionMatched") -> JsonObject:
    return {
        "type": "recognizeOutcome",
        "id": op,
        "outcome": "success",
        "choiceOutcome": {"completionReason": reason, "choiceName": name},
    }


def no_choice(op: str, reason: str) -> JsonObject:
    return {
        "type": "recognizeOutcome",
        "id": op,
        "outcome": "failure",
        "choiceOutcome": {"completionReason": reason},
    }


def entered(op: str, digits: str, reason: str = "completedStopToneDetected") -> JsonObject:
    return {
        "type": "recognizeOutcome",
        "id": op,
        "outcome": "success",
        "collectDigitsOutcome": {"completionReason": reason, "digits": digits},
    }


def no_digits(op: str, reason: str = "initialSilenceTimeout") -> JsonObject:
    return {
        "type": "recognizeOutcome",
        "id": op,
        "outcome": "failure",
        "collectDigitsOutcome": {"completionReason": reason},
    }


def recorded(op: str, seconds: float = 4.2) -> JsonObject:
    return {
        "type": "recordOutcome",
        "id": op,
        "outcome": "success",
        "completionReason": "completedStopToneDetected",
        "lengthOfRecordingInSecs": seconds,
        "format": "wav",
    }


def not_recorded(op: str) -> JsonObject:
    return {
        "type": "recordOutcome",
        "id": op,
        "outcome": "failure",
        "completionReason": "initialSilenceTimeout",
        "lengthOfRecordingInSecs": 0,
        "format": "wav",
    }


def simple(kind: str, op: str, outcome: str = "success", **extra: Any) -> JsonObject:
    return {"type": kind, "id": op, "outcome": outcome, **extra}


# --- Reading what the bot sends ----------------------------------------------------------------


def kinds(wf: JsonObject) -> list[str]:
    return [a["action"] for a in wf["actions"]]


def last_op(wf: JsonObject) -> str:
    op = wf["actions"][-1]["operationId"]
    assert isinstance(op, str)
    return op


def spoken(wf: JsonObject) -> str:
    """Every prompt text of a Workflow, nested prompts included, in order."""
    texts: list[str] = []
    for action in wf["actions"]:
        for prompt in action.get("prompts", []) + action.get("playPrompt", {}).get("prompts", []):
            texts.append(prompt["value"])
    return " | ".join(texts)


def state(wf: JsonObject) -> JsonObject:
    doc = json.loads(wf["appState"])
    assert isinstance(doc, dict)
    return doc


def check_workflow(wf: JsonObject, *, first: bool, https: bool = False) -> None:
    """botemu's validator finds nothing wrong (over http, only the http callback warning)."""
    findings = validate_workflow(wf, RuleContext(first=first, allow_http=not https))
    unexpected = [f for f in findings if not (f.rule == "WF-CALLBACK-HTTPS" and not https)]
    assert unexpected == [], unexpected
    op_ids = [a["operationId"] for a in wf["actions"]]
    op_ids += [a["playPrompt"]["operationId"] for a in wf["actions"] if "playPrompt" in a]
    assert len(op_ids) == len(set(op_ids))
    assert len(wf["appState"]) <= 1024


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return float(self.now)


class Platform:
    """Plays the calling platform for one call: posts messages, checks every Workflow."""

    def __init__(
        self, client: TestClient[web.Request, web.Application], call_id: str = "call-1"
    ) -> None:
        self.client = client
        self.call_id = call_id
        self.chain_id = str(uuid.uuid4())
        self.workflow: JsonObject = {}
        self.all_workflows: list[JsonObject] = []
        self.op_ids: set[str] = set()

    @property
    def store(self) -> Any:
        return self.client.app[ivr.STORE] if self.client.app is not None else None

    async def post(
        self, body: bytes | str, *, message_id: str | None = None, **kwargs: Any
    ) -> aiohttp.ClientResponse:
        headers = {
            "Accept": "application/json",
            "X-Platform-Chain-ID": self.chain_id,
            "X-Platform-Message-ID": message_id or str(uuid.uuid4()),
            **kwargs.pop("headers", {}),
        }
        if "Content-Type" not in headers:
            headers["Content-Type"] = "application/json"
        return await self.client.post("/api/calls", data=body, headers=headers, **kwargs)

    async def deliver(
        self, doc: JsonObject, *, message_id: str | None = None, first: bool = False
    ) -> JsonObject | None:
        """Post a message; the Workflow it gets (checked), or None for 200 with an empty body."""
        response = await self.post(json.dumps(doc), message_id=message_id)
        assert response.status == 200, await response.text()
        body = await response.read()
        if not body:
            return None
        assert response.content_type == "application/json"
        wf = json.loads(body)
        self.accept(wf, first=first)
        return wf  # type: ignore[no-any-return]

    def accept(self, wf: JsonObject, *, first: bool) -> None:
        check_workflow(wf, first=first)
        if "links" in wf:
            assert wf["links"] == {"callback": str(self.client.make_url("/api/calls"))}
        else:
            assert kinds(wf)[-1] in ("hangup", "reject")
        ops = {a["operationId"] for a in wf["actions"]}
        assert not ops & self.op_ids, "operationIds are unique across the call"
        self.op_ids |= ops
        self.workflow = wf
        self.all_workflows.append(wf)

    async def start(self) -> JsonObject:
        wf = await self.deliver(conversation(self.call_id), first=True)
        assert wf is not None
        return wf

    def result(
        self, outcome: JsonObject, call_state: str = "established", app_state: Any = ...
    ) -> JsonObject:
        doc: JsonObject = {
            "id": self.call_id,
            "appId": "6b3a7c4e-0000-4000-8000-000000000001",
            "callState": call_state,
            "operationOutcome": outcome,
            "links": {"call": f"https://platform.example/v1/calls/{self.call_id}"},
        }
        app_state = self.workflow.get("appState") if app_state is ... else app_state
        if app_state is not None:
            doc["appState"] = app_state
        return doc

    async def send(
        self, make: Callable[[str], JsonObject], call_state: str = "established", **kw: Any
    ) -> JsonObject | None:
        """Post the result of the last Workflow's last action, built by ``make(operationId)``."""
        doc = self.result(make(last_op(self.workflow)), call_state)
        return await self.deliver(doc, first=call_state == "incoming", **kw)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def voicemail_dir(tmp_path: Path) -> Path:
    return tmp_path / "voicemail"


@pytest.fixture
async def platform(
    aiohttp_client: ClientFactory, clock: FakeClock, voicemail_dir: Path
) -> Platform:
    app = ivr.make_app(voicemail_dir=voicemail_dir, clock=clock, state_ttl=300)
    return Platform(await aiohttp_client(app))


# --- The flow, branch by branch ------------------------------------------------------------------


async def test_first_workflow_answers_greets_and_offers_the_menu(platform: Platform) -> None:
    wf = await platform.start()
    assert kinds(wf) == ["answer", "playPrompt", "recognize"]
    assert wf["actions"][0]["acceptModalityTypes"] == ["audio"]
    menu = wf["actions"][2]
    assert menu["choices"] == [
        {"name": "sales", "dtmfVariation": "1", "speechVariation": ["sales"]},
        {"name": "support", "dtmfVariation": "2", "speechVariation": ["support"]},
        {"name": "voicemail", "dtmfVariation": "3", "speechVariation": ["voicemail", "message"]},
    ]
    assert "collectDigits" not in menu
    text = spoken(wf)
    assert text.startswith(ivr.WELCOME)
    for words in ("press 1", "sales", "press 2", "support", "press 3", "voicemail"):
        assert words in text
    assert state(wf) == {"step": "menu", "retries": 0, "turn": 1}
    assert wf["notificationSubscriptions"] == ["callStateChange"]
    assert "callState" not in wf
    assert platform.call_id in platform.store.calls


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("sales", "dtmfOptionMatched"),
        ("sales", "speechOptionMatched"),
        ("support", "dtmfOptionMatched"),
        ("support", "speechOptionMatched"),
    ],
)
async def test_sales_and_support_collect_and_read_back_the_account_number(
    platform: Platform, name: str, reason: str
) -> None:
    await platform.start()
    wf = await platform.send(lambda op: chose(op, name, reason))
    assert wf is not None
    assert kinds(wf) == ["recognize"]
    ask = wf["actions"][0]
    assert ask["collectDigits"] == {"maxNumberOfDtmfs": 8, "stopTones": ["#"]}
    assert "choices" not in ask
    assert spoken(wf) == ivr.ASK_ACCOUNT
    assert state(wf) == {"step": "account", "retries": 0, "turn": 2, "topic": name}

    wf = await platform.send(lambda op: entered(op, "12345678"))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"]
    assert "links" not in wf  # nothing comes back after a hangup
    prompts = wf["actions"][0]["prompts"]
    assert {"value": "12345678", "sayAs": "telephone"} in prompts
    assert f"A {name} representative" in spoken(wf)
    assert prompts[-1] == {"value": ivr.GOODBYE}
    assert state(wf)["step"] == "goodbye"
    assert platform.store.calls == {}  # the call is over for the bot


async def test_digits_cut_short_by_a_pause_are_accepted(platform: Platform) -> None:
    """interdigitTimeout is a success for digit collection: the digits so far are returned."""
    await platform.start()
    await platform.send(lambda op: chose(op, "support"))
    wf = await platform.send(lambda op: entered(op, "42", "interdigitTimeout"))
    assert wf is not None
    assert "42" in spoken(wf) and kinds(wf)[-1] == "hangup"


@pytest.mark.parametrize(
    ("reason", "by"), [("dtmfOptionMatched", "3"), ("speechOptionMatched", "message")]
)
async def test_voicemail_records_then_says_goodbye(
    platform: Platform, reason: str, by: str
) -> None:
    await platform.start()
    wf = await platform.send(lambda op: chose(op, "voicemail", reason))
    assert wf is not None
    assert kinds(wf) == ["record"]
    record = wf["actions"][0]
    assert {k: v for k, v in record.items() if k not in ("operationId", "playPrompt")} == {
        "action": "record",
        "maxDurationInSeconds": 60,
        "initialSilenceTimeoutInSeconds": 5,
        "maxSilenceTimeoutInSeconds": 5,
        "recordingFormat": "wav",
        "stopTones": ["#"],
        "playBeep": True,
    }
    assert "leave a message after the tone" in spoken(wf)
    assert state(wf)["step"] == "record"

    wf = await platform.send(recorded)
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"]
    assert spoken(wf) == f"{ivr.MESSAGE_SAVED} | {ivr.GOODBYE}"


async def test_a_failed_recording_says_goodbye(platform: Platform) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "voicemail"))
    wf = await platform.send(not_recorded)
    assert wf is not None
    assert spoken(wf) == f"{ivr.NO_MESSAGE} | {ivr.GOODBYE}"
    assert kinds(wf) == ["playPrompt", "hangup"]


@pytest.mark.parametrize("reason", ["initialSilenceTimeout", "incorrectDtmf", "interdigitTimeout"])
async def test_menu_asks_again_twice_then_gives_up(platform: Platform, reason: str) -> None:
    await platform.start()
    for retries in (1, 2):
        wf = await platform.send(lambda op: no_choice(op, reason))
        assert wf is not None
        assert kinds(wf) == ["recognize"]
        assert spoken(wf) == f"{ivr.NOT_UNDERSTOOD} | {ivr.MENU}"
        assert state(wf) == {"step": "menu", "retries": retries, "turn": retries + 1}
    wf = await platform.send(lambda op: no_choice(op, reason))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"]
    assert spoken(wf) == ivr.GOODBYE


async def test_menu_retry_then_success(platform: Platform) -> None:
    await platform.start()
    await platform.send(lambda op: no_choice(op, "initialSilenceTimeout"))
    wf = await platform.send(lambda op: chose(op, "sales"))
    assert wf is not None
    assert state(wf) == {"step": "account", "retries": 0, "turn": 3, "topic": "sales"}


async def test_a_choice_the_bot_does_not_know_counts_as_a_miss(platform: Platform) -> None:
    await platform.start()
    wf = await platform.send(lambda op: chose(op, "billing"))
    assert wf is not None
    assert state(wf)["step"] == "menu" and state(wf)["retries"] == 1


async def test_account_number_asked_again_once_then_goodbye(platform: Platform) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "sales"))
    wf = await platform.send(no_digits)
    assert wf is not None
    assert kinds(wf) == ["recognize"]
    assert spoken(wf) == f"{ivr.NO_DIGITS} | {ivr.ASK_ACCOUNT}"
    assert state(wf) == {"step": "account", "retries": 1, "turn": 3, "topic": "sales"}
    wf = await platform.send(lambda op: no_digits(op, "interdigitTimeout"))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"] and spoken(wf) == ivr.GOODBYE


async def test_empty_digits_are_no_digits(platform: Platform) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "sales"))
    wf = await platform.send(lambda op: entered(op, ""))
    assert wf is not None
    assert state(wf)["retries"] == 1


# --- Every outcome type ----------------------------------------------------------------------------


@pytest.mark.parametrize("step", ["welcome", "menu", "account", "record"])
async def test_temporary_system_failure_apologizes_and_says_goodbye(
    platform: Platform, step: str
) -> None:
    await platform.start()
    failure = {"outcome": "failure", "failureReason": "media processor unavailable"}
    if step == "welcome":  # the welcome prompt failed: its outcome is posted, the menu never ran
        outcome = simple(
            "playPromptOutcome", "welcome-1", completionReason="temporarySystemFailure", **failure
        )
    elif step == "menu":
        outcome = no_choice(last_op(platform.workflow), "temporarySystemFailure")
    elif step == "account":
        await platform.send(lambda op: chose(op, "support"))
        outcome = no_digits(last_op(platform.workflow), "temporarySystemFailure")
    else:
        await platform.send(lambda op: chose(op, "voicemail"))
        outcome = {
            **not_recorded(last_op(platform.workflow)),
            "completionReason": "temporarySystemFailure",
        }
    wf = await platform.deliver(platform.result(outcome))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"]
    assert spoken(wf) == f"{ivr.SYSTEM_FAILURE} | {ivr.GOODBYE}"


@pytest.mark.parametrize("spelling", ["workflowValidationOutcome", "worfklowValidationOutcome"])
async def test_validation_outcome_logs_and_falls_back_to_goodbye(
    platform: Platform, spelling: str, caplog: pytest.LogCaptureFixture
) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "sales"))
    reason = "WF-DIGITS-LIMIT at $.actions[0].collectDigits: collectDigits needs a limit"
    caplog.set_level(logging.ERROR, logger="ivr_bot")
    wf = await platform.send(lambda op: simple(spelling, op, "failure", failureReason=reason))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"] and spoken(wf) == ivr.GOODBYE
    assert reason in caplog.text


@pytest.mark.parametrize("spelling", ["workflowValidationOutcome", "WorfklowValidationOutcome"])
async def test_validation_outcome_before_answering_rejects(
    platform: Platform, spelling: str
) -> None:
    """Nothing of an invalid first Workflow ran, so the call is still incoming: a Workflow must
    start with answer or reject. The safe fallback is reject, alone."""
    await platform.start()
    outcome = simple(spelling, "answer-1", "failure", failureReason="WF-ORDER at $.actions[1]")
    wf = await platform.deliver(platform.result(outcome, "incoming"), first=True)
    assert wf is not None
    assert kinds(wf) == ["reject"] and "links" not in wf
    assert platform.store.calls == {}


async def test_failed_answer_rejects(platform: Platform) -> None:
    await platform.start()
    outcome = simple("answerOutcome", "answer-1", "failure", failureReason="media negotiation")
    wf = await platform.deliver(platform.result(outcome, "incoming"), first=True)
    assert wf is not None and kinds(wf) == ["reject"]


@pytest.mark.parametrize(
    "outcome",
    [
        simple("answerOutcome", "answer-1"),
        simple("playPromptOutcome", "welcome-1", completionReason="callTerminated"),
        no_choice("menu-1", "callTerminated"),
        simple("hangupOutcome", "hangup-9"),
        {"type": "somethingNew", "id": "x", "outcome": "failure"},
    ],
    ids=lambda o: str(o["type"]),
)
async def test_terminated_result_cleans_up_and_answers_empty(
    platform: Platform, outcome: JsonObject
) -> None:
    await platform.start()
    assert platform.store.calls
    response = await platform.post(json.dumps(platform.result(outcome, "terminated")))
    assert response.status == 200
    assert await response.read() == b""
    assert platform.store.calls == {}


@pytest.mark.parametrize("kind", ["hangupOutcome", "rejectOutcome"])
async def test_call_ended_outcomes_get_no_workflow(platform: Platform, kind: str) -> None:
    await platform.start()
    assert await platform.send(lambda op: simple(kind, op)) is None
    assert platform.store.calls == {}


@pytest.mark.parametrize(
    "outcome",
    [
        {"type": "transferOutcome", "id": "t-1", "outcome": "success"},
        {"id": "no-type", "outcome": "success"},
        simple("answerOutcome", "answer-1"),  # expected only as a failure, never at this step
        simple("playPromptOutcome", "welcome-1", completionReason="completedSuccessfully"),
        recorded("menu-1"),  # a record outcome while the menu was asked
    ],
    ids=["unknown-type", "no-type", "answer", "playPrompt", "record-at-menu"],
)
async def test_unknown_or_unexpected_outcome_says_goodbye_never_500(
    platform: Platform, outcome: JsonObject
) -> None:
    await platform.start()
    wf = await platform.deliver(platform.result(outcome))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"] and spoken(wf) == ivr.GOODBYE


async def test_enum_values_and_names_are_read_case_insensitively(platform: Platform) -> None:
    await platform.start()
    doc = {
        "Id": platform.call_id,
        "CallState": "Established",
        "OperationOutcome": {
            "Type": "RecognizeOutcome",
            "Id": last_op(platform.workflow),
            "Outcome": "Success",
            "ChoiceOutcome": {"CompletionReason": "DtmfOptionMatched", "ChoiceName": "sales"},
            "futureField": {"nested": [1, 2]},
        },
        "AppState": platform.workflow["appState"],
        "somethingNew": True,
    }
    wf = await platform.deliver(doc)
    assert wf is not None
    assert state(wf)["step"] == "account"
    # A completion reason the bot does not know is not an error: a failure is a failure.
    wf = await platform.send(lambda op: no_digits(op, "somethingNew"))
    assert wf is not None
    assert state(wf)["step"] == "account" and state(wf)["retries"] == 1


# --- appState --------------------------------------------------------------------------------------


async def test_app_state_round_trip_carries_the_dialogue(platform: Platform) -> None:
    """The bot reads its position from the echoed appState, not from memory."""
    await platform.start()
    await platform.send(lambda op: chose(op, "support"))
    account_state = platform.workflow["appState"]
    # A result echoing an older appState is judged by that Workflow: here, the menu again.
    menu_state = platform.all_workflows[0]["appState"]
    wf = await platform.deliver(
        platform.result(no_choice("menu-1", "incorrectDtmf"), app_state=menu_state)
    )
    assert wf is not None and state(wf)["step"] == "menu"
    # And the account step's appState still leads to the read-back, topic included.
    wf = await platform.deliver(
        platform.result(entered("account-2", "777"), app_state=account_state)
    )
    assert wf is not None
    assert "A support representative" in spoken(wf)


@pytest.mark.parametrize("app_state", [None, "not json", '{"step": 3}', "x" * 2000])
async def test_missing_app_state_falls_back_to_the_remembered_position(
    platform: Platform, app_state: str | None
) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "sales"))
    wf = await platform.deliver(
        platform.result(entered(last_op(platform.workflow), "5"), app_state=app_state)
    )
    assert wf is not None
    assert "5" in spoken(wf) and kinds(wf)[-1] == "hangup"


async def test_unknown_call_without_app_state_says_goodbye(platform: Platform) -> None:
    platform.workflow = {"actions": [{"operationId": "menu-1", "action": "recognize"}]}
    wf = await platform.deliver(platform.result(chose("menu-1", "sales"), app_state=None))
    assert wf is not None
    assert kinds(wf) == ["playPrompt", "hangup"]


# --- Idempotency -----------------------------------------------------------------------------------


async def test_retried_messages_get_the_same_bytes_and_do_not_advance(platform: Platform) -> None:
    first = await platform.post(json.dumps(conversation()), message_id="m-1")
    first_bytes = await first.read()
    again = await platform.post(json.dumps(conversation()), message_id="m-1")
    assert await again.read() == first_bytes
    platform.accept(json.loads(first_bytes), first=True)

    result = json.dumps(platform.result(no_choice("menu-1", "initialSilenceTimeout")))
    replies = [await (await platform.post(result, message_id="m-2")).read() for _ in range(3)]
    assert replies[0] == replies[1] == replies[2]
    assert state(json.loads(replies[0]))["retries"] == 1
    assert platform.store.calls[platform.call_id].workflows == 2  # not 4
    platform.accept(json.loads(replies[0]), first=False)

    # The next (new) message continues from retries 1, not from a state advanced by the retries.
    wf = await platform.send(lambda op: no_choice(op, "initialSilenceTimeout"))
    assert wf is not None and state(wf)["retries"] == 2


async def test_retry_after_the_call_ended_gets_the_same_goodbye(platform: Platform) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "sales"))
    body = json.dumps(platform.result(entered(last_op(platform.workflow), "9")))
    goodbye = await (await platform.post(body, message_id="bye")).read()
    assert platform.store.calls == {}
    retry = await (await platform.post(body, message_id="bye")).read()
    assert retry == goodbye
    assert platform.store.calls == {}  # the retry did not bring the call back


async def test_retry_without_app_state_is_not_advanced_twice(platform: Platform) -> None:
    """Without an echoed appState the bot uses its memory, which a retry must not move on."""
    await platform.start()
    body = json.dumps(platform.result(no_choice("menu-1", "incorrectDtmf"), app_state=None))
    one = await (await platform.post(body, message_id="m-x")).read()
    two = await (await platform.post(body, message_id="m-x")).read()
    assert one == two and state(json.loads(one))["retries"] == 1


async def test_concurrent_deliveries_of_one_message_advance_once(platform: Platform) -> None:
    await platform.start()
    body = json.dumps(platform.result(no_choice("menu-1", "incorrectDtmf"), app_state=None))
    responses = await asyncio.gather(*(platform.post(body, message_id="m-c") for _ in range(5)))
    bodies = {await r.read() for r in responses}
    assert len(bodies) == 1
    assert platform.store.calls[platform.call_id].workflows == 2


def test_reply_cache_is_a_bounded_lru() -> None:
    cache = ivr.ReplyCache(size=3)
    for i in range(3):
        cache.put(f"m{i}", ivr.Reply(200, str(i).encode()))
    assert cache.get("m0") is not None  # m0 is now the most recently used
    cache.put("m3", ivr.EMPTY)
    assert len(cache) == 3
    assert cache.get("m1") is None
    assert [cache.get(m) is not None for m in ("m0", "m2", "m3")] == [True, True, True]


# --- Per-call state clean-up -----------------------------------------------------------------------


async def test_state_is_dropped_after_the_time_out(platform: Platform, clock: FakeClock) -> None:
    store = platform.store
    await platform.start()
    clock.now += 200
    await platform.send(lambda op: no_choice(op, "initialSilenceTimeout"))  # heard from: refreshed
    clock.now += 299
    assert store.sweep() == []
    assert platform.call_id in store.calls
    clock.now += 2
    assert store.sweep() == [platform.call_id]
    assert store.calls == {}
    # A late callback still gets a sensible reply: its appState says where the call was.
    wf = await platform.send(lambda op: chose(op, "voicemail"))
    assert wf is not None and kinds(wf) == ["record"]


async def test_background_sweeper_drops_stale_calls(
    aiohttp_client: ClientFactory, clock: FakeClock, voicemail_dir: Path
) -> None:
    app = ivr.make_app(voicemail_dir=voicemail_dir, clock=clock, state_ttl=10, sweep_interval=0.01)
    platform = Platform(await aiohttp_client(app))
    await platform.start()
    await asyncio.sleep(0.05)
    assert platform.call_id in platform.store.calls
    clock.now += 11
    for _ in range(100):
        if not platform.store.calls:
            break
        await asyncio.sleep(0.01)
    assert platform.store.calls == {}


# --- Multipart record results ----------------------------------------------------------------------


def multipart(
    doc: JsonObject, audio: bytes | None, audio_type: str = "audio/wav"
) -> aiohttp.MultipartWriter:
    """A record result the way the field notes describe it: no filename on either part."""
    writer = aiohttp.MultipartWriter("form-data")
    part = writer.append(json.dumps(doc), {"Content-Type": "application/json; charset=utf-8"})
    part.set_content_disposition("form-data", name="conversationResult")
    if audio is not None:
        part = writer.append(audio, {"Content-Type": audio_type})
        part.set_content_disposition("form-data", name="recordedAudio")
    return writer


WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(256)) * 40


async def test_multipart_record_result_is_saved(platform: Platform, voicemail_dir: Path) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "voicemail"))
    op = last_op(platform.workflow)
    response = await platform.client.post(
        "/api/calls",
        data=multipart(platform.result(recorded(op)), WAV),
        headers={"X-Platform-Chain-ID": platform.chain_id, "X-Platform-Message-ID": "rec-1"},
    )
    assert response.status == 200
    wf = await response.json()
    platform.accept(wf, first=False)
    assert spoken(wf) == f"{ivr.MESSAGE_SAVED} | {ivr.GOODBYE}"
    saved = voicemail_dir / f"{platform.call_id}-{op}.wav"
    assert saved.read_bytes() == WAV
    assert list(voicemail_dir.iterdir()) == [saved]


@pytest.mark.parametrize(("audio_type", "ext"), [("audio/x-ms-wma", "wma"), ("audio/mpeg", "mp3")])
async def test_saved_audio_extension_follows_its_content_type(
    platform: Platform, voicemail_dir: Path, audio_type: str, ext: str
) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "voicemail"))
    op = last_op(platform.workflow)
    response = await platform.client.post(
        "/api/calls", data=multipart(platform.result(recorded(op)), b"audio", audio_type)
    )
    assert response.status == 200
    assert (voicemail_dir / f"{platform.call_id}-{op}.{ext}").read_bytes() == b"audio"


async def test_caller_hanging_up_after_speaking_still_leaves_a_message(
    platform: Platform, voicemail_dir: Path
) -> None:
    await platform.start()
    await platform.send(lambda op: chose(op, "voicemail"))
    op = last_op(platform.workflow)
    outcome = {**recorded(op, 2.5), "completionReason": "callTerminated"}
    response = await platform.client.post(
        "/api/calls", data=multipart(platform.result(outcome, "terminated"), WAV)
    )
    assert response.status == 200 and await response.read() == b""
    assert (voicemail_dir / f"{platform.call_id}-{op}.wav").read_bytes() == WAV
    assert platform.store.calls == {}


async def test_ids_from_the_platform_never_escape_the_voicemail_dir(
    aiohttp_client: ClientFactory, voicemail_dir: Path
) -> None:
    platform = Platform(await aiohttp_client(ivr.make_app(voicemail_dir=voicemail_dir)), "../../x")
    await platform.start()
    await platform.send(lambda op: chose(op, "voicemail"))
    doc = platform.result(recorded("../../etc/passwd"))
    response = await platform.client.post("/api/calls", data=multipart(doc, WAV))
    assert response.status == 200
    (saved,) = voicemail_dir.iterdir()
    assert saved.parent == voicemail_dir and saved.read_bytes() == WAV


async def test_multipart_without_a_result_part_is_400(platform: Platform) -> None:
    writer = aiohttp.MultipartWriter("form-data")
    writer.append(WAV, {"Content-Type": "audio/wav"}).set_content_disposition(
        "form-data", name="recordedAudio"
    )
    response = await platform.client.post("/api/calls", data=writer)
    assert response.status == 400
    assert "conversationResult" in (await response.json())["error"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"--nope\r\nno headers here", "multipart/form-data; boundary=other"),
        (b"--B\r\nbroken header line\r\n\r\nx\r\n--B--\r\n", "multipart/form-data; boundary=B"),
        (
            b'--B\r\nContent-Disposition: form-data; name="conversationResult"\r\n\r\n{"id"',
            "multipart/form-data; boundary=B",
        ),
        (b"--B\r\n\r\nx\r\n--B--\r\n", "multipart/form-data"),
        (
            b"--B\r\nContent-Type: multipart/mixed; boundary=C\r\n\r\n--C\r\n\r\nx\r\n--C--\r\n--B--\r\n",
            "multipart/form-data; boundary=B",
        ),
    ],
    ids=["wrong-boundary", "bad-part-header", "truncated", "no-boundary", "nested"],
)
async def test_malformed_multipart_is_400(
    platform: Platform, body: bytes, content_type: str
) -> None:
    response = await platform.post(body, headers={"Content-Type": content_type})
    assert response.status == 400
    assert "\n" not in await response.text()


# --- Bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"\xff\xfe\x00",
        b"[1, 2]",
        b'"a string"',
        b"null",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"participants": []}',
        b'{"id": 42, "participants": []}',
        b'{"id": "call-1", "callState": "established"}',
        b'{"id": "call-1", "operationOutcome": "success"}',
    ],
    ids=[
        "empty",
        "text",
        "binary",
        "array",
        "string",
        "null",
        "deep",
        "no-id",
        "id-not-string",
        "no-outcome",
        "outcome-not-object",
    ],
)
async def test_bad_bodies_get_400_with_a_one_line_json_error(
    platform: Platform, body: bytes
) -> None:
    response = await platform.post(body)
    assert response.status == 400
    text = await response.text()
    assert "\n" not in text
    assert set(json.loads(text)) == {"error"}


@pytest.mark.parametrize("chunked", [False, True])
async def test_oversized_body_is_413(platform: Platform, chunked: bool) -> None:
    big = json.dumps({"id": "call-1", "padding": "x" * (1024 * 1024)}).encode()

    async def stream() -> Any:
        for i in range(0, len(big), 65536):
            yield big[i : i + 65536]

    # Known length (Content-Length) or chunked: the bot refuses both.
    response = await platform.post(stream() if chunked else io.BytesIO(big))  # type: ignore[arg-type]
    assert response.status == 413
    assert "error" in await response.json()


async def test_other_paths_and_methods_are_not_served(platform: Platform) -> None:
    assert (await platform.client.get("/api/calls")).status == 405
    assert (await platform.client.post("/other", data=b"{}")).status == 404


# --- The emulator's engine plays the caller --------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "heard", "workflows"),
    [
        ("press 1; press 1234#", "1234", 3),
        ("say support; press 42#", "A support representative", 3),
        ("press 3; talk 4s then #", ivr.MESSAGE_SAVED, 3),
        ("silence 6s; silence 6s; silence 6s", ivr.GOODBYE, 4),
        ("press 9; press 2; silence 6s; silence 6s", ivr.GOODBYE, 5),
    ],
)
async def test_whole_calls_through_the_engine(
    platform: Platform, script: str, heard: str, workflows: int
) -> None:
    caller = CallerScript.from_inline(script)
    progress = CallProgress()
    wf: JsonObject | None = await platform.start()
    while wf is not None:
        run = run_workflow(wire.read_workflow(wf), caller, progress)
        progress = run.progress
        result = result_for(platform.call_id, run, app_state=wf.get("appState"))
        if result is None or not run.post:
            break
        wf = await platform.deliver(wire.to_json(result), first=not progress.answered)
    assert progress.ended is not None
    assert heard in spoken(platform.workflow)
    assert len(platform.all_workflows) == workflows
    assert platform.store.calls == {}


async def test_caller_hanging_up_mid_menu_through_the_engine(platform: Platform) -> None:
    wf = await platform.start()
    run = run_workflow(wire.read_workflow(wf), CallerScript.from_inline("hangup"), CallProgress())
    result = result_for(platform.call_id, run, app_state=wf["appState"])
    assert result is not None and run.call_state.value == "terminated"
    assert await platform.deliver(wire.to_json(result)) is None
    assert platform.store.calls == {}


# --- The flow on its own ---------------------------------------------------------------------------


def test_flow_is_pure_and_deterministic() -> None:
    flow = ivr.IvrFlow()
    callback = "https://bot.example/api/calls"
    assert flow.welcome(callback) == flow.welcome(callback)
    result = {
        "id": "c",
        "callState": "established",
        "operationOutcome": chose("menu-1", "voicemail"),
        "appState": '{"step":"menu","retries":0,"turn":1}',
    }
    wf = flow.next(result, callback)
    assert wf == flow.next(result, callback)
    check_workflow(wf, first=False, https=True)
    assert kinds(wf) == ["record"]


def test_position_reads_only_its_own_documents() -> None:
    load = ivr.Position.load
    assert load('{"step":"menu","retries":1,"turn":2}') == ivr.Position("menu", 1, 2)
    assert load('{"Step":"account","Retries":0,"Turn":3,"Topic":"sales","x":1}') == ivr.Position(
        "account", 0, 3, "sales"
    )
    for junk in (None, 5, "", "[]", '{"step":"menu","retries":-1,"turn":1}', '{"retries":true}'):
        assert load(junk) is None


# --- TLS with the platform's client certificate ----------------------------------------------------


async def test_tls_requires_the_platform_client_certificate(
    aiohttp_client: ClientFactory, tmp_path: Path
) -> None:
    ca = trustme.CA()
    certs = tmp_path / "certs"
    certs.mkdir()
    ca.cert_pem.write_to_path(str(certs / "ca.pem"))
    server_cert = ca.issue_cert("127.0.0.1")
    server_cert.private_key_pem.write_to_path(str(certs / "bot.key"))
    (certs / "bot.pem").write_bytes(b"".join(blob.bytes() for blob in server_cert.cert_chain_pems))
    platform_cert = ca.issue_cert("platform.botemu.local", common_name="platform.botemu.local")
    impostor_cert = ca.issue_cert("impostor.example", common_name="impostor.example")
    stranger_cert = trustme.CA().issue_cert(
        "platform.botemu.local", common_name="platform.botemu.local"
    )

    app = ivr.make_app(voicemail_dir=tmp_path / "vm", platform_cn="platform.botemu.local")
    server = TestServer(app)
    await server.start_server(ssl=ivr.tls_context(certs))

    async def client_with(cert: trustme.LeafCert | None) -> TestClient[Any, Any]:
        context = ssl.create_default_context()
        ca.configure_trust(context)
        if cert is not None:
            cert.configure_cert(context)
        return await aiohttp_client(server, connector=aiohttp.TCPConnector(ssl=context))

    platform = Platform(await client_with(platform_cert))
    response = await platform.post(json.dumps(conversation()))
    assert response.status == 200
    wf = await response.json()
    check_workflow(wf, first=True, https=True)  # an https callback: no finding at all
    assert wf["links"]["callback"] == f"https://127.0.0.1:{server.port}/api/calls"

    impostor = Platform(await client_with(impostor_cert))
    response = await impostor.post(json.dumps(conversation("call-2")))
    assert response.status == 403
    assert "error" in await response.json()
    assert "call-2" not in platform.store.calls

    for cert in (None, stranger_cert):  # no certificate, or one from another CA
        anonymous = Platform(await client_with(cert))
        with pytest.raises(aiohttp.ClientError):
            await anonymous.post(json.dumps(conversation("call-3")))
    assert "call-3" not in platform.store.calls


# --- The command line ------------------------------------------------------------------------------


def test_main_reports_missing_tls_files(tmp_path: Path) -> None:
    assert ivr.main(["--port", "0", "--tls", str(tmp_path / "missing")]) == 2


def test_main_rejects_a_bad_ttl() -> None:
    with pytest.raises(SystemExit):
        ivr.main(["--state-ttl", "0"])
