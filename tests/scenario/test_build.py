"""Scenario files to model values: expectations, faults, conversations and reactive callers, and
the exact file:line:col of every mistake in them (emulator/scenario/build.py, through the loader).
"""

from __future__ import annotations

import pytest

from emulator.calling.caller import CallerScript, HangUp, Listen, Press, Say, WhenRule
from emulator.scenario import ScenarioError, load_scenario_text
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

CALL = "name: x\ncaller: [listen]\n"
CHAT = "name: x\nmessaging: [hi]\n"


def load(text: str) -> Scenario:
    return load_scenario_text(text, "s.yaml")


def errors(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_text(text, "s.yaml")
    return [f"{e.line}:{e.column}: {e.message}" for e in caught.value.errors]


def expect(text: str, head: str = CALL) -> tuple[Expectation, ...]:
    return load(head + "expect:\n" + text).expect


# --- expectations ------------------------------------------------------------------------------


def test_call_expectations() -> None:
    text = (
        "  call:\n"
        "    answered: true\n"
        "    rejected: false\n"
        "    ended_by: bot\n"
        "    final_state: terminated\n"
        "    max_workflows: 4\n"
        "    duration: {min: 500ms, max: 2m}\n"
    )
    assert expect(text) == (
        CallExpect(
            answered=True,
            rejected=False,
            ended_by="bot",
            final_state="terminated",
            max_workflows=4,
            min_duration=0.5,
            max_duration=120.0,
            line=4,
        ),
    )


def test_an_empty_call_expectation_expects_nothing_in_particular() -> None:
    assert expect("  call: {}\n") == (CallExpect(line=4),)


def test_prompt_expectations() -> None:
    text = (
        "  prompts:\n"
        "    items:\n"
        "      - Welcome\n"
        "      - {equals: Main menu.}\n"
        "      - {contains: press 1, matches: '\\d'}\n"
        "      - file: greeting.wav\n"
    )
    assert expect(text) == (
        PromptExpect(
            (
                TextMatch(contains="Welcome"),
                TextMatch(equals="Main menu."),
                TextMatch(contains="press 1", matches="\\d"),
                "greeting.wav",
            ),
            in_order=True,
            line=4,
        ),
    )
    (anywhere,) = expect("  prompts: {in_order: false, items: [a]}\n")
    assert anywhere == PromptExpect((TextMatch(contains="a"),), in_order=False, line=4)


def test_choice_outcome_and_recording_expectations() -> None:
    text = (
        "  choices:\n"
        "    - {names: [sales, support]}\n"
        '    - names: ["yes", "no"]\n'
        "      index: 1\n"
        "  outcomes:\n"
        "    - {type: recognizeOutcome, outcome: success, completion_reason: dtmfOptionMatched,"
        " choice: sales, index: 0}\n"
        "    - {digits: 1234}\n"
        '    - {digits: "0012#"}\n'
        "  recording: {format: wav, length: {min: 2s}}\n"
    )
    assert expect(text) == (
        ChoicesExpect(("sales", "support"), None, line=5),
        ChoicesExpect(("yes", "no"), 1, line=6),
        OutcomeExpect(
            type="recognizeOutcome",
            outcome="success",
            completion_reason="dtmfOptionMatched",
            choice="sales",
            index=0,
            line=9,
        ),
        OutcomeExpect(digits="1234", line=10),
        OutcomeExpect(digits="0012#", line=11),
        RecordingExpect("wav", 2.0, None, line=12),
    )


def test_choice_names_are_text_as_written() -> None:
    # [yes, no] stays text in a list of names: YAML would make them booleans, botemu refuses
    assert errors(CALL + "expect:\n  choices: [{names: [yes]}]\n") == [
        '4:22: expected a string, got a boolean (true); YAML reads yes as true; quote it: "yes"'
    ]


def test_reply_latency_and_findings_expectations() -> None:
    text = (
        "  replies:\n"
        "    - echo\n"
        "    - text: {matches: ^echo}\n"
        "      type: message\n"
        "      attachments: 1\n"
        "      suggested_actions: [Red, Blue]\n"
        "      index: 2\n"
        "  latency: {p95_ms: 250}\n"
        "  findings: [AUTH-NO-HEADER, CALL-TIMEOUT]\n"
    )
    with pytest.raises(ScenarioError):
        expect(text)  # a bare string is not a reply
    text = text.replace("    - echo\n", "    - text: echo\n")
    assert expect(text, CHAT) == (
        ReplyExpect(text=TextMatch(contains="echo"), line=5),
        ReplyExpect(
            text=TextMatch(matches="^echo"),
            type="message",
            attachments=1,
            suggested_actions=("Red", "Blue"),
            index=2,
            line=6,
        ),
        LatencyExpect(250.0, line=11),
        FindingsExpect(none=False, rules=("AUTH-NO-HEADER", "CALL-TIMEOUT"), line=12),
    )


def test_findings_none() -> None:
    assert expect("  findings: none\n") == (FindingsExpect(none=True, line=4),)


def test_expectations_keep_their_order_in_the_file() -> None:
    kinds = [type(e) for e in expect("  findings: none\n  latency: {p95_ms: 1}\n  call: {}\n")]
    assert kinds == [FindingsExpect, LatencyExpect, CallExpect]


BAD_EXPECT = [
    pytest.param(
        "  cal: {}\n",
        "4:3: unknown key 'cal' (did you mean 'call'?)",
        id="unknown-kind",
    ),
    pytest.param(
        "  call: {ended_by: bott}\n",
        "4:20: expected bot, caller or platform, or a list of them, got a string ('bott') "
        "(did you mean 'bot'?)",
        id="ended-by",
    ),
    pytest.param(
        "  call: {final_state: ended}\n",
        "4:23: expected a callState such as terminated, got a string ('ended')",
        id="final-state",
    ),
    pytest.param(
        "  call: {max_workflows: 0}\n",
        "4:25: expected a number of Workflows (1 or more), got a number (0)",
        id="max-workflows",
    ),
    pytest.param(
        "  call: {answered: maybe}\n",
        "4:20: expected true or false, got a string ('maybe')",
        id="answered",
    ),
    pytest.param(
        "  call: {duration: {min: 5s, max: 1s}}\n",
        "4:35: max (1s) is less than min (5s)",
        id="duration-min-over-max",
    ),
    pytest.param(
        "  call: {duration: {}}\n",
        "4:20: expected {min: ..., max: ...} (durations such as 2s), got an empty mapping",
        id="duration-empty",
    ),
    pytest.param(
        "  call: {duration: {max: soon}}\n",
        "4:26: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('soon')",
        id="duration-not-a-duration",
    ),
    pytest.param(
        "  call: {duration: {max: 100000s}}\n",
        "4:26: duration '100000s' is outside 0 to 24h",
        id="duration-too-long",
    ),
    pytest.param(
        "  prompts: [Welcome]\n",
        "4:12: expected {items: [...], in_order: true}, got a list",
        id="prompts-not-a-mapping",
    ),
    pytest.param(
        "  prompts: {in_order: true}\n",
        "4:12: missing required key 'items'",
        id="prompts-without-items",
    ),
    pytest.param(
        "  prompts: {items: []}\n",
        "4:20: expected a list of prompts, got an empty list",
        id="prompts-empty",
    ),
    pytest.param(
        "  prompts: {items: [{fiel: a.wav}]}\n",
        "4:22: unknown key 'fiel' (did you mean 'file'?)",
        id="prompt-item-unknown-key",
    ),
    pytest.param(
        "  prompts: {items: [{file: a.wav, contains: b}]}\n",
        "4:35: unexpected key 'contains' beside 'file': a prompt is matched by its text or its "
        "file, not both",
        id="prompt-file-and-text",
    ),
    pytest.param(
        "  prompts: {items: [{matches: 'a(('}]}\n",
        "4:31: not a valid regular expression: missing ), unterminated subpattern at position 2",
        id="prompt-bad-regex",
    ),
    pytest.param(
        "  prompts: {items: [{}]}\n",
        "4:21: expected a text, or {equals | contains | matches | file: ...}, got an empty mapping",
        id="prompt-item-empty",
    ),
    pytest.param(
        "  choices: [{index: 0}]\n",
        "4:13: missing required key 'names'",
        id="choices-without-names",
    ),
    pytest.param(
        "  choices: [{names: [a], index: -1}]\n",
        "4:33: expected an index: 0 is the first, got a number (-1)",
        id="choices-negative-index",
    ),
    pytest.param(
        "  outcomes: [{type: recognize}]\n",
        "4:21: expected an outcome type such as recognizeOutcome, got a string ('recognize') "
        "(did you mean 'recognizeOutcome'?)",
        id="outcome-type",
    ),
    pytest.param(
        "  outcomes: [{outcome: sucess}]\n",
        "4:24: expected success or failure, got a string ('sucess') (did you mean 'success'?)",
        id="outcome-outcome",
    ),
    pytest.param(
        "  outcomes: [{completion_reason: dtmfMatched}]\n",
        "4:34: expected a completion reason such as dtmfOptionMatched, "
        "got a string ('dtmfMatched') (did you mean 'dtmfOptionMatched'?)",
        id="outcome-completion-reason",
    ),
    pytest.param(
        "  outcomes: [{digits: 0123}]\n",
        '4:23: YAML reads 0123 as the number 83; quote the keys: digits: "0123"',
        id="outcome-digits-read-as-octal",
    ),
    pytest.param(
        "  outcomes: [{choise: sales}]\n",
        "4:15: unknown key 'choise' (did you mean 'choice'?)",
        id="outcome-unknown-key",
    ),
    pytest.param(
        "  recording: {format: ogg}\n",
        "4:23: expected wav, wma or mp3, got a string ('ogg')",
        id="recording-format",
    ),
    pytest.param(
        "  recording: {length: {min: 3s, max: 2s}}\n",
        "4:38: max (2s) is less than min (3s)",
        id="recording-length",
    ),
    pytest.param(
        "  latency: {p95: 100}\n",
        "4:13: unknown key 'p95' (did you mean 'p95_ms'?)",
        id="latency-misspelt",
    ),
    pytest.param(
        "  latency: {p95_ms: 0}\n",
        "4:21: expected a number of milliseconds above 0, got a number (0)",
        id="latency-zero",
    ),
    pytest.param(
        "  findings: nope\n",
        "4:13: expected none, or a list of rule ids such as [WF-ORDER], got a string ('nope') "
        "(did you mean 'none'?)",
        id="findings-not-none",
    ),
    pytest.param(
        "  findings: []\n",
        "4:13: expected none, or a list of rule ids such as [WF-ORDER], got an empty list",
        id="findings-empty",
    ),
    pytest.param(
        "  findings: [wf-order]\n",
        "4:14: expected a rule id such as WF-ORDER, got a string ('wf-order')",
        id="findings-rule-id",
    ),
    pytest.param(
        "  findings: [WF-ORDER, WF-ORDER]\n",
        "4:24: 'WF-ORDER' is listed twice",
        id="findings-twice",
    ),
    pytest.param(
        "  replies: [{text: hi}]\n",
        "4:3: 'replies' is expected of a conversation (messaging:), not a call",
        id="replies-in-a-call",
    ),
    pytest.param(
        "  - call\n",
        "4:3: expected a mapping of expectations: call, prompts, choices, outcomes, recording, "
        "replies, latency, findings, got a list",
        id="expect-not-a-mapping",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_EXPECT)
def test_bad_expectations(text: str, expected: str) -> None:
    assert errors(CALL + "expect:\n" + text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "  prompts: {items: [a]}\n",
            "4:3: 'prompts' is expected of a call (caller:), not a conversation",
            id="prompts",
        ),
        pytest.param(
            "  call: {answered: true}\n",
            "4:3: 'call' is expected of a call (caller:), not a conversation",
            id="call",
        ),
        pytest.param(
            "  replies: [{text: {equal: x}}]\n",
            "4:21: unknown key 'equal' (did you mean 'equals'?)",
            id="reply-text-unknown-key",
        ),
        pytest.param(
            "  replies: [{attachments: -1}]\n",
            "4:27: expected a number of attachments, got a number (-1)",
            id="reply-attachments",
        ),
        pytest.param(
            "  replies: [{type: Message!}]\n",
            "4:20: expected an activity type such as message, got a string ('Message!')",
            id="reply-type",
        ),
    ],
)
def test_bad_conversation_expectations(text: str, expected: str) -> None:
    assert errors(CHAT + "expect:\n" + text) == [expected]


# --- faults ------------------------------------------------------------------------------------


def test_faults() -> None:
    text = CALL + (
        "faults:\n"
        "  fail_callback: 2\n"
        "  duplicate_callback: [3, 5]\n"
        "  drop_callback: [7]\n"
        "  unknown_fields: true\n"
        "  unknown_enums: true\n"
        "  slow_caller: 1.5s\n"
    )
    assert load(text).faults == Faults(
        fail_callbacks=(2,),
        duplicate_callbacks=(3, 5),
        drop_callbacks=(7,),
        unknown_fields=True,
        unknown_enums=True,
        caller_delay=1.5,
    )


def test_no_faults_by_default() -> None:
    assert load(CALL).faults == Faults()
    assert not load(CALL + "faults: {}\n").faults.any


def test_a_conversation_may_have_unknown_fields_and_enums() -> None:
    faults = load(CHAT + "faults: {unknown_fields: true, unknown_enums: true}\n").faults
    assert faults == Faults(unknown_fields=True, unknown_enums=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "  fail_callback: 0\n",
            "4:18: expected a callback number (1 is the first), or a list of them, "
            "got a number (0)",
            id="callback-zero",
        ),
        pytest.param(
            "  fail_callback: []\n",
            "4:18: expected a callback number (1 is the first), or a list of them, "
            "got an empty list",
            id="callbacks-empty",
        ),
        pytest.param(
            "  duplicate_callback: [2, 2]\n",
            "4:27: 2 is listed twice",
            id="callback-twice",
        ),
        pytest.param(
            "  drop_callback: second\n",
            "4:18: expected a callback number (1 is the first), or a list of them, "
            "got a string ('second')",
            id="callback-not-a-number",
        ),
        pytest.param(
            "  unknown_field: true\n",
            "4:3: unknown key 'unknown_field' (did you mean 'unknown_fields'?)",
            id="misspelt-fault",
        ),
        pytest.param(
            "  unknown_enums: 1\n",
            "4:18: expected true or false, got a number (1)",
            id="not-a-boolean",
        ),
        pytest.param(
            "  slow_caller: slowly\n",
            "4:16: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
            "got a string ('slowly')",
            id="slow-caller-not-a-duration",
        ),
        pytest.param(
            "  drop_callback: [2, 3]\n  duplicate_callback: 3\n",
            "4:18: callback 3 is dropped, so it cannot also be in duplicate_callback",
            id="dropped-and-duplicated",
        ),
    ],
)
def test_bad_faults(text: str, expected: str) -> None:
    assert errors(CALL + "faults:\n" + text) == [expected]


def test_callback_faults_are_for_calls() -> None:
    text = CHAT + "faults:\n  fail_callback: 1\n  slow_caller: 1s\n"
    assert errors(text) == [
        "4:3: 'fail_callback' is a fault of a call (caller:), not of a conversation",
        "5:3: 'slow_caller' is a fault of a call (caller:), not of a conversation",
    ]


# --- conversations -----------------------------------------------------------------------------


def test_every_turn_form() -> None:
    text = (
        "name: chat\n"
        "messaging:\n"
        "  - hello\n"
        "  - say: hi there\n"
        "    wait: 2s\n"
        "  - event: {name: setLanguage, value: {lang: fr, rtl: false}}\n"
        "  - invoke: {name: signin/verifyState, value: [1, two]}\n"
        "  - event: {name: ping}\n"
        "  - conversationUpdate: {}\n"
        "  - conversationUpdate:\n"
        "    wait: 500ms\n"
    )
    scenario = load(text)
    assert scenario.kind == "conversation"
    assert scenario.caller is None
    assert scenario.messaging == (
        Turn("message", text="hello", line=3),
        Turn("message", text="hi there", wait=2.0, line=4),
        Turn("event", name="setLanguage", value={"lang": "fr", "rtl": False}, line=6),
        Turn("invoke", name="signin/verifyState", value=[1, "two"], line=7),
        Turn("event", name="ping", line=8),
        Turn("conversationUpdate", line=9),
        Turn("conversationUpdate", wait=0.5, line=10),
    )


def test_an_empty_conversation_is_allowed() -> None:
    assert load("name: x\nmessaging: []\n").messaging == ()


BAD_TURNS = [
    pytest.param(
        '  - "  "\n', "3:5: expected the text of a message, got an empty string", id="blank"
    ),
    pytest.param("  - sya: hi\n", "3:5: unknown turn 'sya' (did you mean 'say'?)", id="misspelt"),
    pytest.param(
        "  - say: hi\n    wiat: 2s\n", "4:5: unknown key 'wiat' (did you mean 'wait'?)", id="wiat"
    ),
    pytest.param(
        "  - say: hi\n    wait: later\n",
        "4:11: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('later')",
        id="bad-wait",
    ),
    pytest.param(
        "  - wait: 2s\n",
        "3:5: expected a turn (say, event, invoke, conversationUpdate, sign_in or include) beside 'wait'",
        id="only-wait",
    ),
    pytest.param(
        "  - event: {value: 1}\n", "3:12: missing required key 'name'", id="event-no-name"
    ),
    pytest.param(
        "  - invoke: signin\n",
        "3:13: expected {name: ..., value: ...}, got a string ('signin')",
        id="invoke-not-a-mapping",
    ),
    pytest.param(
        "  - {say: a, event: {name: b}}\n",
        "3:5: a turn has one key, got say, event: make each its own list item",
        id="two-turns",
    ),
    pytest.param(
        "  - conversationUpdate: {members: 1}\n",
        "3:26: unexpected key 'members': expected nothing or {}",
        id="conversation-update-with-keys",
    ),
    pytest.param(
        "  - 5\n",
        "3:5: expected a turn: a message text, or say, event, invoke, conversationUpdate or sign_in, "
        'got a number (5); quote it: "5"',
        id="number",
    ),
    pytest.param(
        "  - say: yes\n",
        "3:10: expected the text of a message, got a boolean (true); YAML reads yes as true; "
        'quote it: say: "yes"',
        id="yes",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_TURNS)
def test_bad_turns(text: str, expected: str) -> None:
    assert errors("name: x\nmessaging:\n" + text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: x\ncaller: []\nmessaging: []\n",
            "3:1: give either 'caller' or 'messaging', not both",
            id="both",
        ),
        pytest.param(
            "name: x\nmesaging: []\n",
            "2:1: unknown key 'mesaging' (did you mean 'messaging'?)",
            id="misspelt-messaging-stands-for-it",
        ),
        pytest.param(
            "name: x\nmessaging: hello\n",
            "2:12: expected a list of turns, got a string ('hello')",
            id="messaging-not-a-list",
        ),
    ],
)
def test_a_scenario_is_a_call_or_a_conversation(text: str, expected: str) -> None:
    assert errors(text) == [expected]


# --- reactive callers --------------------------------------------------------------------------


def test_a_caller_with_when_rules() -> None:
    text = (
        "name: rules\n"
        "caller:\n"
        "  steps: [listen, {say: sales}]\n"
        "  when:\n"
        "    - prompt: main menu\n"
        '      do: [{press: "1"}]\n'
        "    - prompt: goodbye\n"
        "      do: [hangup]\n"
        "      once: true\n"
    )
    assert load(text).caller == CallerScript(
        (Listen(), Say("sales")),
        (WhenRule("main menu", (Press("1"),)), WhenRule("goodbye", (HangUp(),), once=True)),
    )


def test_a_caller_of_rules_only() -> None:
    text = "name: r\ncaller:\n  when: [{prompt: menu, do: [listen]}]\n"
    assert load(text).caller == CallerScript((), (WhenRule("menu", (Listen(),)),))


BAD_RULES = [
    pytest.param(
        "  when:\n    - prompt: 'main (menu'\n      do: []\n",
        "4:15: not a valid regular expression: missing ), unterminated subpattern at position 5",
        id="bad-regex",
    ),
    pytest.param(
        "  when:\n    - prompt: x\n",
        "4:7: missing required key 'do'",
        id="no-do",
    ),
    pytest.param(
        "  when:\n    - prompt: x\n      do: []\n      onse: true\n",
        "6:7: unknown key 'onse' (did you mean 'once'?)",
        id="misspelt-once",
    ),
    pytest.param(
        "  when:\n    - prompt: ''\n      do: []\n",
        "4:15: expected a regular expression (a non-empty string), got an empty string",
        id="empty-prompt",
    ),
    pytest.param(
        "  when:\n    - prompt: x\n      do: [{prees: '1'}]\n",
        "5:13: unknown step 'prees' (did you mean 'press'?)",
        id="bad-step-in-do",
    ),
    pytest.param(
        "  when:\n    - prompt: x\n      do: [{silence: 100000s}]\n",
        "5:22: duration '100000s' is outside 0 to 24h",
        id="caller-model-error-in-do",
    ),
    pytest.param(
        "  when: {prompt: x, do: []}\n",
        '3:9: expected a list of rules, such as [{prompt: main menu, do: [{press: "1"}]}], '
        "got a mapping",
        id="when-not-a-list",
    ),
    pytest.param(
        "  stepz: []\n",
        "3:3: unknown key 'stepz' (did you mean 'steps'?)",
        id="misspelt-steps",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_RULES)
def test_bad_rules(text: str, expected: str) -> None:
    assert errors("name: x\ncaller:\n" + text) == [expected]


def test_spec_and_line_are_read() -> None:
    scenario = load("# a comment\nname: x\nspec: Workflow validation\ncaller: []\n")
    assert (scenario.spec, scenario.line, scenario.variables, scenario.id) == (
        "Workflow validation",
        2,
        (),
        "x",
    )
    assert errors("name: x\nspec: ''\ncaller: []\n") == [
        "2:7: expected the spec section it tests (a non-empty string), got an empty string"
    ]
