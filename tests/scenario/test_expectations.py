"""Expectations judged against synthetic transcripts: each kind passing and failing.

The event lists are built by hand in the shapes the calling session and the connector write
(docs/transcripts.md), so every rule of ``evaluate`` is pinned without a bot; tests/scenario/
test_runner.py judges real runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from emulator.findings import Severity
from emulator.jsonutil import JSON
from emulator.scenario.expectations import RULES, evaluate, where
from emulator.scenario.model import (
    CallExpect,
    ChoicesExpect,
    Expectation,
    Faults,
    FindingsExpect,
    LatencyExpect,
    OutcomeExpect,
    PromptExpect,
    RecordingExpect,
    ReplyExpect,
    Scenario,
    TextMatch,
    Turn,
)
from emulator.transcripts.store import StoredEvent

PATH = Path("scenarios/menu.yaml")


class Log:
    """A transcript under construction."""

    def __init__(self) -> None:
        self.events: list[StoredEvent] = []

    def add(self, event_kind: str, vtime: float | None = None, **payload: JSON) -> Log:
        seq = len(self.events) + 1
        self.events.append(StoredEvent("c1", seq, vtime, 0.0, event_kind, dict(payload), False))
        return self

    # calls

    def prompt(self, at: float, text: str | None = None, uri: str | None = None) -> Log:
        return self.add(
            "platform",
            at,
            kind="prompt played",
            text=text,
            file_uri=uri,
            summary=f"platform played {text!r}",
        )

    def answer(self, workflow: dict[str, JSON], latency: float = 10.0, status: int = 200) -> Log:
        self.add(
            "http.response",
            None,
            status=status,
            body=json.dumps(workflow),
            latency_ms=latency,
            summary=f"← {status}",
        )
        if 200 <= status < 300:
            self.add("note", None, summary="Workflow [answer, recognize]")
        return self

    def result(
        self,
        outcome: dict[str, JSON],
        state: str = "established",
        message: str = "m",
        multipart: bool = False,
    ) -> Log:
        body = json.dumps({"id": "c1", "callState": state, "operationOutcome": outcome})
        if multipart:
            return self.add(
                "http.request",
                None,
                body=None,
                message_id=message,
                parts={"conversationResult": body},
                summary="→ recordOutcome",
            )
        return self.add("http.request", None, body=body, message_id=message, summary="→ result")

    def state(self, old: str, new: str, at: float = 0.0) -> Log:
        return self.add("state", at, old=old, new=new, summary=f"call {old} -> {new}")

    def finding(self, rule: str, severity: str = "error") -> Log:
        return self.add(
            "finding",
            None,
            rule=rule,
            severity=severity,
            where="$",
            message="x",
            summary=f"{severity}: {rule}",
        )

    def end(self, reason: str, at: float) -> Log:
        return self.add("call.end", at, reason=reason, summary=f"call ended: {reason}")

    # conversations

    def reply(self, activity: dict[str, JSON], status: int = 201, activity_id: str = "") -> Log:
        path = "/v3/conversations/c1/activities" + (f"/{activity_id}" if activity_id else "")
        self.add(
            "http.request",
            None,
            method="POST",
            path=path,
            body=json.dumps(activity),
            summary="← bot sends",
        )
        return self.add("http.response", None, status=status, body="{}", summary=f"→ {status}")


@dataclass(frozen=True)
class Summary:
    end_reason: str | None
    workflows: int
    vtime: float | None


def call_scenario(*expect: Expectation, faults: Faults | None = None) -> Scenario:
    return Scenario(name="menu", expect=expect, path=PATH, line=1, faults=faults or Faults())


def chat_scenario(*expect: Expectation) -> Scenario:
    return Scenario(name="chat", messaging=(Turn(text="hi"),), expect=expect, path=PATH, line=1)


MENU: dict[str, JSON] = {
    "actions": [
        {"operationId": "a", "action": "answer"},
        {
            "operationId": "menu-1",
            "action": "Recognize",
            "choices": [
                {"name": "sales", "dtmfVariation": "1"},
                {"name": "support", "dtmfVariation": "2"},
            ],
        },
    ],
}
SALES: dict[str, JSON] = {
    "type": "recognizeOutcome",
    "id": "menu-1",
    "outcome": "success",
    "choiceOutcome": {"completionReason": "dtmfOptionMatched", "choiceName": "sales"},
}
DIGITS: dict[str, JSON] = {
    "type": "recognizeOutcome",
    "id": "acct",
    "outcome": "success",
    "collectDigitsOutcome": {"completionReason": "completedStopToneDetected", "digits": "1234"},
}


def a_call() -> Log:
    """A menu call: answered, welcome and menu prompts, sales chosen, account digits, bot hangs up."""
    log = Log().add("call.start", 0.0, summary="call c1")
    log.answer(MENU, latency=20).state("incoming", "established")
    log.prompt(0.0, "Welcome to the demo line.").prompt(2.0, "For sales, press 1.")
    log.result(SALES, message="m1").answer({"actions": []}, latency=40)
    log.prompt(5.0, None, "https://bot/media/account.wav").result(DIGITS, message="m2")
    log.result(DIGITS, message="m2")  # a retry: the same message is counted once
    log.result({"type": "hangupOutcome", "id": "h", "outcome": "success"}, "terminated", "m3")
    log.state("established", "terminated", 9.5).end("bot hung up", 9.5)
    return log


def rules(findings: list[object]) -> list[str]:
    return [getattr(f, "rule") for f in findings]  # noqa: B009


def check(scenario: Scenario, log: Log, summary: Summary | None = None) -> list[str]:
    return rules(evaluate(scenario, log.events, summary))  # type: ignore[arg-type]


# --- the registry and where ----------------------------------------------------------------------


def test_rules_registry() -> None:
    assert RULES.area == "Scenario expectations"
    assert RULES.ids() == [
        "EXP-CALL",
        "EXP-PROMPTS",
        "EXP-CHOICES",
        "EXP-OUTCOME",
        "EXP-RECORDING",
        "EXP-REPLY",
        "EXP-LATENCY",
        "EXP-FINDINGS",
        "EXP-RUN",
    ]
    assert all(r.severity is Severity.ERROR for r in RULES)


def test_where_is_file_and_line() -> None:
    scenario = call_scenario()
    assert where(scenario, 7) == "scenarios/menu.yaml:7"
    assert where(scenario, None) == "scenarios/menu.yaml:1"
    assert where(Scenario(name="inline"), None) == "inline"


# --- call level ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(CallExpect(answered=True), [], id="answered"),
        pytest.param(CallExpect(answered=False), ["EXP-CALL"], id="not-answered-fails"),
        pytest.param(CallExpect(rejected=False), [], id="not-rejected"),
        pytest.param(CallExpect(rejected=True), ["EXP-CALL"], id="rejected-fails"),
        pytest.param(CallExpect(ended_by="bot"), [], id="ended-by-bot"),
        pytest.param(CallExpect(ended_by="caller"), ["EXP-CALL"], id="ended-by-caller-fails"),
        pytest.param(CallExpect(final_state="Terminated"), [], id="final-state"),
        pytest.param(CallExpect(final_state="established"), ["EXP-CALL"], id="final-state-fails"),
        pytest.param(CallExpect(max_workflows=2), [], id="workflows"),
        pytest.param(CallExpect(max_workflows=1), ["EXP-CALL"], id="workflows-fail"),
        pytest.param(CallExpect(min_duration=9, max_duration=10), [], id="duration"),
        pytest.param(CallExpect(max_duration=5), ["EXP-CALL"], id="too-long"),
        pytest.param(CallExpect(min_duration=20), ["EXP-CALL"], id="too-short"),
        pytest.param(
            CallExpect(answered=False, ended_by="caller"),
            ["EXP-CALL", "EXP-CALL"],
            id="one-finding-per-attribute",
        ),
    ],
)
def test_call_level(expect: CallExpect, failed: list[str]) -> None:
    assert check(call_scenario(expect), a_call()) == failed


def test_call_level_prefers_the_summary() -> None:
    summary = Summary("platform hung up: callback delivery failed", 7, 30.0)
    got = evaluate(
        call_scenario(CallExpect(ended_by="bot", max_workflows=7, max_duration=20)),
        a_call().events,
        summary,
    )
    assert [f.message for f in got] == [
        "expected the call to be ended by the bot, got ended by the platform "
        "(platform hung up: callback delivery failed)",
        "expected the call to last at most 20s, got 30.00s",
    ]
    assert got[0].where == "scenarios/menu.yaml:1"
    assert got[0].evidence is not None and "call ended: bot hung up" in got[0].evidence


def test_a_rejected_call() -> None:
    log = Log().end("bot rejected", 0.0)
    assert check(call_scenario(CallExpect(rejected=True, answered=False)), log) == []


# --- prompts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(
            PromptExpect((TextMatch(contains="Welcome"), TextMatch(matches="press 1"))),
            [],
            id="in-order",
        ),
        pytest.param(
            PromptExpect((TextMatch(matches="press 1"), TextMatch(contains="Welcome"))),
            ["EXP-PROMPTS"],
            id="out-of-order-fails",
        ),
        pytest.param(
            PromptExpect(
                (TextMatch(matches="press 1"), TextMatch(contains="Welcome")), in_order=False
            ),
            [],
            id="anywhere",
        ),
        pytest.param(
            PromptExpect((TextMatch(equals="Welcome to the demo line."),)), [], id="equals"
        ),
        pytest.param(
            PromptExpect((TextMatch(equals="Welcome"),)), ["EXP-PROMPTS"], id="equals-is-exact"
        ),
        pytest.param(PromptExpect(("account.wav",)), [], id="file"),
        pytest.param(PromptExpect(("goodbye.wav",)), ["EXP-PROMPTS"], id="file-fails"),
    ],
)
def test_prompts(expect: PromptExpect, failed: list[str]) -> None:
    assert check(call_scenario(expect), a_call()) == failed


def test_prompt_failure_message() -> None:
    expect = PromptExpect((TextMatch(contains="Welcome"), TextMatch(contains="Goodbye")), line=4)
    (failure,) = evaluate(call_scenario(expect), a_call().events)
    assert failure.rule == "EXP-PROMPTS" and failure.where == "scenarios/menu.yaml:4"
    assert failure.message == (
        "expected a prompt that contains 'Goodbye' (item 2 of 2, in order) after the ones "
        "before it, got 'Welcome to the demo line.', 'For sales, press 1.', "
        "https://bot/media/account.wav"
    )
    assert failure.evidence is not None
    assert failure.evidence.splitlines()[1] == "   2.00s  platform played 'For sales, press 1.'"


# --- choices -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(ChoicesExpect(("support", "sales")), [], id="any-order"),
        pytest.param(ChoicesExpect(("sales", "support"), index=0), [], id="index"),
        pytest.param(ChoicesExpect(("sales",)), ["EXP-CHOICES"], id="exact-set"),
        pytest.param(
            ChoicesExpect(("sales", "support"), index=1), ["EXP-CHOICES"], id="no-second-recognize"
        ),
    ],
)
def test_choices(expect: ChoicesExpect, failed: list[str]) -> None:
    assert check(call_scenario(expect), a_call()) == failed


def test_choices_of_a_workflow_that_did_not_run_do_not_count() -> None:
    log = Log().add("http.response", None, status=200, body=json.dumps(MENU), latency_ms=1.0)
    log.add("platform", None, summary="platform rejected the Workflow: validation outcome")
    (failure,) = evaluate(call_scenario(ChoicesExpect(("sales", "support"))), log.events)
    assert (
        failure.message == "expected a recognize to offer [sales, support], got no recognize at all"
    )


# --- outcomes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(OutcomeExpect(type="recognizeOutcome", choice="sales"), [], id="choice"),
        pytest.param(
            OutcomeExpect(completion_reason="DTMFOptionMatched", index=0), [], id="reason-any-case"
        ),
        pytest.param(OutcomeExpect(digits="1234", index=1), [], id="digits"),
        pytest.param(
            OutcomeExpect(type="hangupOutcome", outcome="success", index=2),
            [],
            id="third-posted-once-per-message",
        ),
        pytest.param(OutcomeExpect(choice="support"), ["EXP-OUTCOME"], id="choice-fails"),
        pytest.param(OutcomeExpect(digits="9999", index=1), ["EXP-OUTCOME"], id="digits-fail"),
        pytest.param(OutcomeExpect(outcome="failure"), ["EXP-OUTCOME"], id="outcome-fails"),
        pytest.param(OutcomeExpect(index=3), ["EXP-OUTCOME"], id="too-few"),
    ],
)
def test_outcomes(expect: OutcomeExpect, failed: list[str]) -> None:
    assert check(call_scenario(expect), a_call()) == failed


def test_outcome_message_and_evidence() -> None:
    (failure,) = evaluate(call_scenario(OutcomeExpect(choice="support", index=0)), a_call().events)
    assert failure.message == (
        "expected outcome #0 to be any outcome with choice 'support', got recognizeOutcome "
        "success dtmfOptionMatched choice=sales"
    )
    assert failure.evidence is not None
    assert failure.evidence.splitlines()[1] == (
        "#1 recognizeOutcome success completedStopToneDetected digits=1234"
    )


def test_outcomes_of_multipart_results_and_the_legacy_type() -> None:
    record = {
        "type": "recordOutcome",
        "id": "r",
        "outcome": "success",
        "completionReason": "stopToneDetected",
        "lengthOfRecordingInSecs": 8,
    }
    invalid = {"type": "worfklowValidationOutcome", "id": "x", "outcome": "failure"}
    log = Log().result(record, multipart=True, message="a").result(invalid, message="b")
    scenario = call_scenario(
        OutcomeExpect(type="recordOutcome", completion_reason="stopToneDetected"),
        OutcomeExpect(type="workflowValidationOutcome", outcome="failure"),
    )
    assert check(scenario, log) == []


# --- recording -----------------------------------------------------------------------------------


def _recording(fmt: str, seconds: float) -> Log:
    return Log().add(
        "platform",
        9.0,
        recording=True,
        format=fmt,
        seconds=seconds,
        summary=f"recording of {seconds}s",
    )


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(RecordingExpect(), [], id="any"),
        pytest.param(RecordingExpect(format="WAV", min_length=7, max_length=9), [], id="bounds"),
        pytest.param(RecordingExpect(format="wma"), ["EXP-RECORDING"], id="format-fails"),
        pytest.param(RecordingExpect(min_length=10), ["EXP-RECORDING"], id="too-short"),
        pytest.param(RecordingExpect(max_length=5), ["EXP-RECORDING"], id="too-long"),
    ],
)
def test_recording(expect: RecordingExpect, failed: list[str]) -> None:
    assert check(call_scenario(expect), _recording("wav", 8.0)) == failed


def test_no_recording() -> None:
    (failure,) = evaluate(call_scenario(RecordingExpect(format="wav")), a_call().events)
    assert failure.message == "expected a recording in wav, got none"


# --- replies -------------------------------------------------------------------------------------


def a_conversation() -> Log:
    log = Log().add("note", None, summary="conversation c1")
    log.add(
        "http.request",
        None,
        method="POST",
        url="http://bot/api/messages",
        body={"type": "message", "text": "hi"},
        summary="→ bot: message 'hi'",
    )
    log.reply({"type": "message", "text": "Welcome, User!"})
    log.reply(
        {
            "type": "message",
            "text": "echo: hi",
            "attachments": [{"contentType": "image/png"}],
            "suggestedActions": {
                "actions": [{"type": "imBack", "title": "Again", "value": "again"}]
            },
        },
        activity_id="a1",
    )
    log.reply({"type": "message", "text": "refused"}, status=400)
    log.reply({"type": "message", "text": "history"}, activity_id="history")
    log.add("http.response", None, status=200, body="", latency_ms=30.0, summary="← bot 200")
    return log


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(ReplyExpect(text=TextMatch(equals="echo: hi")), [], id="text"),
        pytest.param(ReplyExpect(text=TextMatch(matches=r"^Welcome"), index=0), [], id="regex"),
        pytest.param(ReplyExpect(type="Message", attachments=1, index=1), [], id="attachments"),
        pytest.param(ReplyExpect(suggested_actions=("Again", "again")), [], id="actions"),
        pytest.param(
            ReplyExpect(text=TextMatch(contains="echo"), index=0), ["EXP-REPLY"], id="wrong-index"
        ),
        pytest.param(ReplyExpect(type="typing"), ["EXP-REPLY"], id="type-fails"),
        pytest.param(ReplyExpect(attachments=2), ["EXP-REPLY"], id="attachments-fail"),
        pytest.param(ReplyExpect(suggested_actions=("Stop",)), ["EXP-REPLY"], id="actions-fail"),
        pytest.param(
            ReplyExpect(text=TextMatch(equals="refused")), ["EXP-REPLY"], id="refused-is-no-reply"
        ),
        pytest.param(ReplyExpect(index=2), ["EXP-REPLY"], id="history-is-no-reply"),
    ],
)
def test_replies(expect: ReplyExpect, failed: list[str]) -> None:
    assert check(chat_scenario(expect), a_conversation()) == failed


def test_reply_message() -> None:
    expect = ReplyExpect(text=TextMatch(contains="bye"), index=1)
    (failure,) = evaluate(chat_scenario(expect), a_conversation().events)
    assert failure.message == (
        "expected reply #1 to be an activity whose text contains 'bye', got message 'echo: hi' "
        "with 1 attachment offering Again, again"
    )


def test_kinds_that_belong_to_the_other_kind_of_scenario() -> None:
    assert check(
        chat_scenario(
            PromptExpect((TextMatch(contains="x"),)),
            CallExpect(),
            OutcomeExpect(),
            ChoicesExpect(()),
            RecordingExpect(),
        ),
        a_conversation(),
    ) == ["EXP-PROMPTS", "EXP-CALL", "EXP-OUTCOME", "EXP-CHOICES", "EXP-RECORDING"]
    assert check(call_scenario(ReplyExpect()), a_call()) == ["EXP-REPLY"]


# --- latency -------------------------------------------------------------------------------------


def test_latency_p95_by_nearest_rank() -> None:
    log = Log()
    for ms in [*range(10, 200, 10), 900]:  # 20 answers: p95 is the 19th, 190 ms
        log.add("http.response", None, status=200, latency_ms=float(ms))
    assert check(call_scenario(LatencyExpect(190)), log) == []
    (failure,) = evaluate(call_scenario(LatencyExpect(100)), log.events)
    assert failure.message == (
        "expected the bot's answers within 100 ms (p95), got 190 ms (p95 of 20 answers; "
        "slowest 900 ms)"
    )
    assert failure.evidence is not None and failure.evidence.splitlines()[0] == "900 ms"


def test_latency_of_a_conversation_and_of_nothing() -> None:
    assert check(chat_scenario(LatencyExpect(50)), a_conversation()) == []
    assert check(chat_scenario(LatencyExpect(20)), a_conversation()) == ["EXP-LATENCY"]
    assert check(call_scenario(LatencyExpect(20)), Log()) == ["EXP-LATENCY"]


# --- findings ------------------------------------------------------------------------------------


def test_the_default_is_no_error_finding() -> None:
    log = a_call().finding("WF-CALLBACK-HTTPS", "warning")
    assert check(call_scenario(), log) == []
    log.finding("CALL-HTTP-5XX").finding("CALL-DELIVERY-FAILED")
    (failure,) = evaluate(call_scenario(), log.events)
    assert failure.rule == "EXP-FINDINGS" and failure.where == "scenarios/menu.yaml:1"
    assert failure.message == (
        "expected no error finding, got 2 findings: CALL-HTTP-5XX, CALL-DELIVERY-FAILED"
    )


def test_an_explicit_list_of_expected_rules() -> None:
    log = a_call().finding("WF-RECOGNIZE-ONE-OF").finding("WF-CALLBACK-HTTPS", "warning")
    assert (
        check(call_scenario(FindingsExpect(none=False, rules=("WF-RECOGNIZE-ONE-OF",))), log) == []
    )
    assert check(call_scenario(FindingsExpect(none=False, rules=("CALL-TIMEOUT",))), log) == [
        "EXP-FINDINGS",
        "EXP-FINDINGS",
    ]  # missing CALL-TIMEOUT, and an unexpected error
    assert check(call_scenario(FindingsExpect(none=False)), log) == []  # anything goes


def test_duplicate_delivery_scenarios_also_fail_on_a_bot_that_is_not_idempotent() -> None:
    log = a_call().finding("CALL-DUPLICATE-DIFFERS", "warning")
    assert check(call_scenario(), log) == []
    faults = Faults(duplicate_callbacks=(1,))
    (failure,) = evaluate(call_scenario(faults=faults), log.events)
    assert failure.message == (
        "expected no error finding (nor CALL-DUPLICATE-DIFFERS), got 1 finding: "
        "CALL-DUPLICATE-DIFFERS"
    )


def test_everything_holds_on_a_good_call() -> None:
    scenario = call_scenario(
        CallExpect(answered=True, ended_by="bot", max_workflows=3),
        PromptExpect((TextMatch(contains="Welcome"),)),
        ChoicesExpect(("sales", "support")),
        OutcomeExpect(choice="sales"),
        LatencyExpect(50),
        FindingsExpect(),
    )
    assert evaluate(scenario, a_call().events) == []


# --- streamed replies ----------------------------------------------------------------------------


def _chunk(kind: str, text: str, sequence: int) -> dict[str, JSON]:
    return {"type": "message" if kind == "final" else "typing", "text": text,
            "entities": [{"type": "streaminfo", "streamType": kind, "streamSequence": sequence}]}  # fmt: skip


def a_streamed_conversation(*, final: bool = True, ignored: bool = False) -> Log:
    """A stream of three chunks (informative, two streaming) and its final message, answered
    with the stream's id; ``ignored``: one more chunk answered 202 (out of order)."""
    log = Log().add("note", None, summary="conversation c1")
    steps = [("informative", "Thinking", 1), ("streaming", "Hel", 2), ("streaming", "Hello", 3)]
    if final:
        steps.append(("final", "Hello, world", 4))
    for kind, text, sequence in steps:
        log.add("http.request", None, method="POST", path="/v3/conversations/c1/activities/a1",
                body=json.dumps(_chunk(kind, text, sequence)), summary="← bot sends")  # fmt: skip
        log.add("http.response", None, status=200, body='{"id":"s1"}', summary="→ 200")
    if ignored:
        log.add("http.request", None, method="POST", path="/v3/conversations/c1/activities/a1",
                body=json.dumps(_chunk("streaming", "Hello?", 2)), summary="← bot sends")  # fmt: skip
        log.add("http.response", None, status=202, summary="→ 202",
                body='{"error":{"code":"ContentStreamSequenceOrderPreConditionFailed"}}')  # fmt: skip
    return log


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        pytest.param(
            ReplyExpect(text=TextMatch(equals="Hello, world"), streamed=True, chunks=3, index=0),
            [],
            id="streamed",
        ),
        pytest.param(ReplyExpect(streamed=False), ["EXP-REPLY"], id="not-streamed-fails"),
        pytest.param(ReplyExpect(chunks=4), ["EXP-REPLY"], id="too-few-chunks"),
        pytest.param(ReplyExpect(index=1), ["EXP-REPLY"], id="one-reply-only"),
        pytest.param(ReplyExpect(text=TextMatch(equals="Hello")), ["EXP-REPLY"], id="chunk-text"),
    ],
)
def test_a_streamed_reply_is_one_reply(expect: ReplyExpect, failed: list[str]) -> None:
    assert check(chat_scenario(expect), a_streamed_conversation(ignored=True)) == failed


def test_a_stream_without_its_final_message_is_not_streamed() -> None:
    (failure,) = evaluate(chat_scenario(ReplyExpect(streamed=True)),
                          a_streamed_conversation(final=False).events)  # fmt: skip
    assert failure.message == (
        "expected a reply to be an activity streamed, got typing 'Hello' streamed in 2 chunks "
        "(open, no final message)"
    )


def test_a_reply_not_streamed_is_so() -> None:
    assert check(chat_scenario(ReplyExpect(streamed=False, index=1)), a_conversation()) == []


def test_replies_in_an_answer_to_expect_replies_are_replies() -> None:
    log = Log().add("note", None, summary="conversation c1")
    log.add("note", None, summary="← bot (expectReplies): message 'Echo: hi'",
            expected_reply={"type": "message", "text": "Echo: hi"})  # fmt: skip
    expect = ReplyExpect(text=TextMatch(equals="Echo: hi"), streamed=False)
    assert check(chat_scenario(expect), log) == []
