"""Tests for the Workflow validation rules (emulator/calling/rules/).

Sources: platform-spec.md section C ("Voice calling objects"), "States and transitions" (rules on
workflows) and "Limits"; field-notes.md, "Calling: validation limits the real SDK enforced" and
"Calling: wire format".

Every negative case is a small mutation of one of the valid baselines below, so that a case shows
exactly which rule fires and where. ``RULE_CASES`` names one case per rule id; a meta-test keeps it
in step with ``RULES``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.calling import wire
from emulator.calling.model import DTMF_KEYS
from emulator.calling.rules import RULES, RuleContext, validate_workflow
from emulator.findings import Finding, Severity, has_errors
from emulator.jsonutil import JSON

FIRST = RuleContext(first=True)
LATER = RuleContext()
LATER_HTTP = RuleContext(allow_http=True)
FIRST_HTTP = RuleContext(first=True, allow_http=True)

CALLBACK = "https://bot.example.com/calling/callback"
MEDIA = "https://media.example.com/prompts/goodbye.wav"

# --- Valid baselines -------------------------------------------------------------------------

# The reply to a Conversation: answer, a welcome prompt, then a speech/DTMF menu.
FIRST_MENU: JSON = {
    "actions": [
        {"operationId": "answer-1", "action": "answer", "acceptModalityTypes": ["audio"]},
        {
            "operationId": "welcome-1",
            "action": "playPrompt",
            "prompts": [
                {
                    "value": "Thanks for calling Contoso.",
                    "voice": "female",
                    "culture": "en-US",
                    "emphasize": False,
                    "sayAs": "name",
                },
                {"silenceLengthInMilliseconds": 500},
            ],
        },
        {
            "operationId": "menu-1",
            "action": "recognize",
            "playPrompt": {
                "operationId": "menu-prompt-1",
                "action": "playPrompt",
                "prompts": [{"value": "Say sales or press 1. Say support or press 2."}],
            },
            "bargeInAllowed": True,
            "culture": "en-US",
            "initialSilenceTimeoutInSeconds": 5,
            "interdigitTimeoutInSeconds": 1,
            "choices": [
                {
                    "name": "sales",
                    "speechVariation": ["sales", "buy something"],
                    "dtmfVariation": "1",
                },
                {"name": "support", "speechVariation": ["support", "help"], "dtmfVariation": "2"},
            ],
        },
    ],
    "links": {"callback": CALLBACK},
    "appState": '{"step":"menu","caller":"+14255550100"}',
    "notificationSubscriptions": ["callStateChange"],
}

# A later Workflow: a voicemail recording with every record field.
LATER_RECORD: JSON = {
    "actions": [
        {
            "operationId": "record-1",
            "action": "record",
            "playPrompt": {
                "operationId": "record-prompt-1",
                "action": "playPrompt",
                "prompts": [{"value": "Leave a message after the beep."}],
            },
            "maxDurationInSeconds": 60,
            "initialSilenceTimeoutInSeconds": 5,
            "maxSilenceTimeoutInSeconds": 3,
            "recordingFormat": "wav",
            "playBeep": True,
            "stopTones": ["#", "*"],
        }
    ],
    "links": {"callback": CALLBACK},
    "appState": "voicemail",
}

# A later Workflow: collect a PIN (decimal timeouts are allowed on recognize).
LATER_DIGITS: JSON = {
    "actions": [
        {
            "operationId": "pin-1",
            "action": "recognize",
            "playPrompt": {
                "action": "playPrompt",
                "prompts": [{"value": "Enter your PIN, then press pound."}],
            },
            "bargeInAllowed": False,
            "initialSilenceTimeoutInSeconds": 2.5,
            "interdigitTimeoutInSeconds": 1.5,
            "collectDigits": {"maxNumberOfDtmfs": 4, "stopTones": ["#"]},
        }
    ],
    "links": {"callback": CALLBACK},
}

# A later Workflow that ends the call: no callback needed.
LATER_GOODBYE: JSON = {
    "actions": [
        {"operationId": "bye-1", "action": "playPrompt", "prompts": [{"value": "Goodbye."}]},
        {"operationId": "hangup-1", "action": "hangup"},
    ]
}

# The other valid reply to a Conversation.
FIRST_REJECT: JSON = {"actions": [{"operationId": "reject-1", "action": "reject"}]}

BASELINES = [
    pytest.param(FIRST_MENU, FIRST, id="first-answer-prompt-menu"),
    pytest.param(FIRST_REJECT, FIRST, id="first-reject"),
    pytest.param(LATER_RECORD, LATER, id="later-record-all-fields"),
    pytest.param(LATER_DIGITS, LATER, id="later-recognize-collect-digits"),
    pytest.param(LATER_GOODBYE, LATER, id="later-prompt-hangup-no-callback"),
]

# --- Building mutations ----------------------------------------------------------------------

_DELETE = object()
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    """``$.actions[0].prompts`` -> ["actions", 0, "prompts"] (the same paths findings use)."""
    assert path.startswith("$"), path
    steps: list[str | int] = []
    end = 1
    for match in _STEP.finditer(path, 1):
        assert match.start() == end, f"bad path {path}"
        end = match.end()
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
    assert end == len(path), f"bad path {path}"
    return steps


def _walk(doc: JSON, steps: Sequence[str | int]) -> JSON:
    node = doc
    for step in steps:
        node = node[step]  # type: ignore[index, call-overload]
    return node


def patched(base: JSON, path: str, value: object = _DELETE) -> JSON:
    """A copy of ``base`` with the value at ``path`` replaced (or deleted)."""
    doc = copy.deepcopy(base)
    *parent_steps, last = _steps(path)
    parent = _walk(doc, parent_steps)
    if value is _DELETE:
        del parent[last]  # type: ignore[index, arg-type, union-attr]
    else:
        parent[last] = copy.deepcopy(value)  # type: ignore[index, call-overload]
    return doc


def renamed(base: JSON, path: str, old: str, new: str) -> JSON:
    """A copy of ``base`` with key ``old`` of the object at ``path`` renamed, order kept."""
    doc = copy.deepcopy(base)
    obj = _walk(doc, _steps(path))
    assert isinstance(obj, dict) and old in obj
    items = [(new if k == old else k, v) for k, v in obj.items()]
    obj.clear()
    obj.update(items)
    return doc


def added(base: JSON, path: str, key: str, value: JSON) -> JSON:
    """A copy of ``base`` with ``key`` appended to the object at ``path``."""
    doc = copy.deepcopy(base)
    obj = _walk(doc, _steps(path))
    assert isinstance(obj, dict)
    obj[key] = copy.deepcopy(value)
    return doc


def with_actions(base: JSON, *actions: JSON) -> JSON:
    return patched(base, "$.actions", list(actions))


def rule_ids(findings: Sequence[Finding]) -> list[str]:
    return [f.rule for f in findings]


def at(findings: Sequence[Finding], rule: str) -> list[str]:
    """The ``where`` of every finding of ``rule``."""
    return [f.where for f in findings if f.rule == rule]


ANSWER: JSON = {"operationId": "a", "action": "answer"}
REJECT: JSON = {"operationId": "rj", "action": "reject"}
PLAY: JSON = {"operationId": "p", "action": "playPrompt", "prompts": [{"value": "Hello."}]}
RECORD: JSON = {"operationId": "rec", "action": "record"}
RECOGNIZE: JSON = {
    "operationId": "rcg",
    "action": "recognize",
    "collectDigits": {"maxNumberOfDtmfs": 1},
}
HANGUP: JSON = {"operationId": "h", "action": "hangup"}
BY_NAME: dict[str, JSON] = {
    "answer": ANSWER,
    "reject": REJECT,
    "playPrompt": PLAY,
    "record": RECORD,
    "recognize": RECOGNIZE,
    "hangup": HANGUP,
}


def workflow(*names: str, callback: str | None = CALLBACK) -> JSON:
    """A Workflow of minimal valid actions, named by kind, given unique operationIds."""
    actions = []
    for i, name in enumerate(names):
        action = copy.deepcopy(BY_NAME[name])
        assert isinstance(action, dict)
        action["operationId"] = f"{action['operationId']}-{i}"
        actions.append(action)
    doc: dict[str, JSON] = {"actions": actions}
    if callback is not None:
        doc["links"] = {"callback": callback}
    return doc


# --- Baselines are clean ---------------------------------------------------------------------


@pytest.mark.parametrize(("document", "context"), BASELINES)
def test_valid_baseline_has_no_findings(document: JSON, context: RuleContext) -> None:
    assert validate_workflow(document, context) == []


@pytest.mark.parametrize(("document", "context"), BASELINES)
def test_valid_baseline_reads(document: JSON, context: RuleContext) -> None:
    workflow_value = wire.read_workflow(document)
    assert len(workflow_value.actions) == len(document["actions"])  # type: ignore[index, arg-type]


def test_default_context_is_a_later_workflow_without_http() -> None:
    assert validate_workflow(LATER_RECORD) == []
    assert rule_ids(validate_workflow(FIRST_MENU)) == ["WF-ANSWER-AGAIN"]
    http = patched(LATER_RECORD, "$.links.callback", "http://bot.example.com/cb")
    assert [f.severity for f in validate_workflow(http)] == [Severity.ERROR]


# --- One named case per rule -----------------------------------------------------------------

_LATER_MENU = with_actions(FIRST_MENU, *FIRST_MENU["actions"][1:])  # type: ignore[index]
_MENU = "$.actions[2]"

RULE_CASES = [
    # Structure
    pytest.param(["actions"], LATER, "WF-NOT-OBJECT", "$", id="WF-NOT-OBJECT-array"),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions"),
        LATER,
        "WF-REQUIRED",
        "$.actions",
        id="WF-REQUIRED-no-actions",
    ),
    pytest.param(
        patched(FIRST_MENU, "$.actions[0].operationId", 5),
        FIRST,
        "WF-TYPE",
        "$.actions[0].operationId",
        id="WF-TYPE-numeric-operation-id",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].recordingFormat", "ogg"),
        LATER,
        "WF-ENUM-VALUE",
        "$.actions[0].recordingFormat",
        id="WF-ENUM-VALUE-recording-format-ogg",
    ),
    pytest.param(
        renamed(LATER_RECORD, "$.actions[0]", "operationId", "OperationId"),
        LATER,
        "WF-CASING",
        "$.actions[0].OperationId",
        id="WF-CASING-pascal-case-name",
    ),
    pytest.param(
        added(LATER_DIGITS, "$.actions[0]", "bargeInAlowed", True),
        LATER,
        "WF-UNKNOWN-FIELD",
        "$.actions[0].bargeInAlowed",
        id="WF-UNKNOWN-FIELD-misspelt-barge-in",
    ),
    pytest.param(
        added(LATER_RECORD, "$.actions[0]", "OperationID", "record-2"),
        LATER,
        "WF-DUPLICATE-FIELD",
        "$.actions[0].OperationID",
        id="WF-DUPLICATE-FIELD-operation-id-twice",
    ),
    # Actions and their order
    pytest.param(
        patched(LATER_GOODBYE, "$.actions", []),
        LATER,
        "WF-ACTIONS-EMPTY",
        "$.actions",
        id="WF-ACTIONS-EMPTY-empty-array",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].action", "transfer"),
        LATER,
        "WF-ACTION-UNKNOWN",
        "$.actions[0].action",
        id="WF-ACTION-UNKNOWN-transfer",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[1].operationId", ""),
        LATER,
        "WF-OPERATION-ID",
        "$.actions[1].operationId",
        id="WF-OPERATION-ID-empty",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[1].operationId", "bye-1"),
        LATER,
        "WF-OPERATION-ID-UNIQUE",
        "$.actions[1].operationId",
        id="WF-OPERATION-ID-UNIQUE-reused",
    ),
    pytest.param(
        LATER_GOODBYE, FIRST, "WF-FIRST-ACTION", "$.actions[0]", id="WF-FIRST-ACTION-play-first"
    ),
    pytest.param(
        with_actions(FIRST_REJECT, REJECT, HANGUP),
        FIRST,
        "WF-REJECT-ALONE",
        "$.actions[0]",
        id="WF-REJECT-ALONE-reject-then-hangup",
    ),
    pytest.param(
        FIRST_REJECT,
        LATER,
        "WF-REJECT-PLACEMENT",
        "$.actions[0]",
        id="WF-REJECT-PLACEMENT-on-answered-call",
    ),
    pytest.param(
        FIRST_MENU,
        LATER,
        "WF-ANSWER-AGAIN",
        "$.actions[0]",
        id="WF-ANSWER-AGAIN-on-answered-call",
    ),
    pytest.param(
        with_actions(LATER_GOODBYE, PLAY, HANGUP, {**HANGUP, "operationId": "h2"}),
        LATER,
        "WF-ACTION-REPEATED",
        "$.actions[2]",
        id="WF-ACTION-REPEATED-hangup-twice",
    ),
    pytest.param(
        with_actions(LATER_RECORD, RECORD, ANSWER),
        LATER,
        "WF-ORDER",
        "$.actions[1]",
        id="WF-ORDER-answer-after-record",
    ),
    pytest.param(
        with_actions(LATER_RECORD, HANGUP, RECORD),
        LATER,
        "WF-HANGUP-LAST",
        "$.actions[0]",
        id="WF-HANGUP-LAST-record-after-hangup",
    ),
    # Links, appState, callState, subscriptions
    pytest.param(
        patched(LATER_RECORD, "$.links.callback", "/calling/callback"),
        LATER,
        "WF-CALLBACK-URI",
        "$.links.callback",
        id="WF-CALLBACK-URI-relative",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.links.callback", "http://bot.example.com/calling/callback"),
        LATER,
        "WF-CALLBACK-HTTPS",
        "$.links.callback",
        id="WF-CALLBACK-HTTPS-http",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.links"),
        LATER,
        "WF-NO-CALLBACK",
        "$.links.callback",
        id="WF-NO-CALLBACK-record-without-links",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.appState", "x" * 1025),
        LATER,
        "WF-APPSTATE-LENGTH",
        "$.appState",
        id="WF-APPSTATE-LENGTH-1025",
    ),
    pytest.param(
        added(LATER_RECORD, "$", "callState", "ringing"),
        LATER,
        "WF-CALLSTATE",
        "$.callState",
        id="WF-CALLSTATE-unknown",
    ),
    pytest.param(
        patched(FIRST_MENU, "$.notificationSubscriptions", ["callStateChange", "callRecord"]),
        FIRST,
        "WF-NOTIFICATION",
        "$.notificationSubscriptions[1]",
        id="WF-NOTIFICATION-unknown-subscription",
    ),
    # Prompts
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts", []),
        LATER,
        "WF-PLAYPROMPT-PROMPTS",
        "$.actions[0].prompts",
        id="WF-PLAYPROMPT-PROMPTS-empty",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].playPrompt.action", "recognize"),
        LATER,
        "WF-NESTED-PROMPT",
        "$.actions[0].playPrompt.action",
        id="WF-NESTED-PROMPT-recognize-inside-record",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts[0].value"),
        LATER,
        "WF-PROMPT-CONTENT",
        "$.actions[0].prompts[0]",
        id="WF-PROMPT-CONTENT-empty-prompt",
    ),
    pytest.param(
        added(LATER_GOODBYE, "$.actions[0].prompts[0]", "fileUri", MEDIA),
        LATER,
        "WF-PROMPT-BOTH",
        "$.actions[0].prompts[0]",
        id="WF-PROMPT-BOTH-value-and-file",
    ),
    pytest.param(
        patched(
            LATER_GOODBYE,
            "$.actions[0].prompts[0]",
            {"fileUri": MEDIA, "silenceLengthInMilliseconds": 0},
        ),
        LATER,
        "WF-PROMPT-SILENCE",
        "$.actions[0].prompts[0].silenceLengthInMilliseconds",
        id="WF-PROMPT-SILENCE-zero-without-value",
    ),
    pytest.param(
        added(LATER_GOODBYE, "$.actions[0].prompts[0]", "silenceLengthInMilliseconds", 60001),
        LATER,
        "WF-PROMPT-SILENCE-RANGE",
        "$.actions[0].prompts[0].silenceLengthInMilliseconds",
        id="WF-PROMPT-SILENCE-RANGE-60001",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts[0].value", "a" * 2049),
        LATER,
        "WF-PROMPT-VALUE-LENGTH",
        "$.actions[0].prompts[0].value",
        id="WF-PROMPT-VALUE-LENGTH-2049",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts[0]", {"fileUri": "prompts/goodbye.wav"}),
        LATER,
        "WF-PROMPT-FILE-URI",
        "$.actions[0].prompts[0].fileUri",
        id="WF-PROMPT-FILE-URI-relative",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts[0]", {"fileUri": MEDIA, "voice": "female"}),
        LATER,
        "WF-PROMPT-TEXT-ONLY",
        "$.actions[0].prompts[0].voice",
        id="WF-PROMPT-TEXT-ONLY-voice-on-file",
    ),
    pytest.param(
        patched(FIRST_MENU, "$.actions[1].prompts[0].culture", "fr-FR"),
        FIRST,
        "WF-CULTURE",
        "$.actions[1].prompts[0].culture",
        id="WF-CULTURE-fr-FR",
    ),
    # Record
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].maxDurationInSeconds", 601),
        LATER,
        "WF-RECORD-MAX-DURATION",
        "$.actions[0].maxDurationInSeconds",
        id="WF-RECORD-MAX-DURATION-601",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].initialSilenceTimeoutInSeconds", 0),
        LATER,
        "WF-RECORD-INITIAL-SILENCE",
        "$.actions[0].initialSilenceTimeoutInSeconds",
        id="WF-RECORD-INITIAL-SILENCE-0",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].maxSilenceTimeoutInSeconds", 31),
        LATER,
        "WF-RECORD-MAX-SILENCE",
        "$.actions[0].maxSilenceTimeoutInSeconds",
        id="WF-RECORD-MAX-SILENCE-31",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].stopTones", ["1", "2", "3", "4", "5", "#"]),
        LATER,
        "WF-STOP-TONES-COUNT",
        "$.actions[0].stopTones",
        id="WF-STOP-TONES-COUNT-six-tones",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].stopTones", "#"),
        LATER,
        "WF-STOP-TONES-BARE",
        "$.actions[0].stopTones",
        id="WF-STOP-TONES-BARE-string",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].stopTones", True),
        LATER,
        "WF-STOP-TONES-BOOLEAN",
        "$.actions[0].stopTones",
        id="WF-STOP-TONES-BOOLEAN-true",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[0].dtmfVariation", "a"),
        FIRST,
        "WF-DTMF-DIGIT",
        f"{_MENU}.choices[0].dtmfVariation",
        id="WF-DTMF-DIGIT-lowercase-a",
    ),
    # Recognize
    pytest.param(
        added(LATER_DIGITS, "$.actions[0]", "choices", [{"name": "x", "dtmfVariation": "1"}]),
        LATER,
        "WF-RECOGNIZE-ONE-OF",
        "$.actions[0]",
        id="WF-RECOGNIZE-ONE-OF-both",
    ),
    pytest.param(
        patched(LATER_DIGITS, "$.actions[0].initialSilenceTimeoutInSeconds", 0.5),
        LATER,
        "WF-RECOGNIZE-INITIAL-SILENCE",
        "$.actions[0].initialSilenceTimeoutInSeconds",
        id="WF-RECOGNIZE-INITIAL-SILENCE-0.5",
    ),
    pytest.param(
        patched(LATER_DIGITS, "$.actions[0].interdigitTimeoutInSeconds", 5.5),
        LATER,
        "WF-RECOGNIZE-INTERDIGIT",
        "$.actions[0].interdigitTimeoutInSeconds",
        id="WF-RECOGNIZE-INTERDIGIT-5.5",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices", []),
        FIRST,
        "WF-CHOICES-EMPTY",
        f"{_MENU}.choices",
        id="WF-CHOICES-EMPTY-empty-array",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[0].name", "   "),
        FIRST,
        "WF-CHOICE-NAME",
        f"{_MENU}.choices[0].name",
        id="WF-CHOICE-NAME-blank",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[1].name", "sales"),
        FIRST,
        "WF-CHOICE-NAME-UNIQUE",
        f"{_MENU}.choices[1].name",
        id="WF-CHOICE-NAME-UNIQUE-sales-twice",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[1]", {"name": "support"}),
        FIRST,
        "WF-CHOICE-VARIATION",
        f"{_MENU}.choices[1]",
        id="WF-CHOICE-VARIATION-none",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[0].speechVariation", ["a", "b", "c", "d", "e", "f"]),
        FIRST,
        "WF-CHOICE-SPEECH-COUNT",
        f"{_MENU}.choices[0].speechVariation",
        id="WF-CHOICE-SPEECH-COUNT-six",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[1].dtmfVariation", "1"),
        FIRST,
        "WF-CHOICE-UNIQUE",
        f"{_MENU}.choices[1].dtmfVariation",
        id="WF-CHOICE-UNIQUE-dtmf-1-twice",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[1].dtmfVariation", ["9", "9"]),
        FIRST,
        "WF-DTMF-SEQUENCE",
        f"{_MENU}.choices[1].dtmfVariation",
        id="WF-DTMF-SEQUENCE-two-keys",
    ),
    pytest.param(
        patched(FIRST_MENU, f"{_MENU}.choices[1].dtmfVariation", ["1", "2"]),
        FIRST,
        "WF-DTMF-PREFIX",
        f"{_MENU}.choices[1]",
        id="WF-DTMF-PREFIX-12-after-1",
    ),
    pytest.param(
        patched(LATER_DIGITS, "$.actions[0].collectDigits", {}),
        LATER,
        "WF-DIGITS-LIMIT",
        "$.actions[0].collectDigits",
        id="WF-DIGITS-LIMIT-no-limit",
    ),
    # Answer
    pytest.param(
        patched(FIRST_MENU, "$.actions[0].acceptModalityTypes", ["audio", "audio"]),
        FIRST,
        "WF-ANSWER-MODALITIES",
        "$.actions[0].acceptModalityTypes[1]",
        id="WF-ANSWER-MODALITIES-audio-twice",
    ),
    # Bounds on the work of one Workflow (docs/calling-http.md, "Limits")
    pytest.param(
        workflow(*["playPrompt"] * 51),
        LATER,
        "WF-ACTIONS-LIMIT",
        "$.actions",
        id="WF-ACTIONS-LIMIT-51-prompts",
    ),
    pytest.param(
        patched(LATER_GOODBYE, "$.actions[0].prompts", [{"value": f"p{i}"} for i in range(101)]),
        LATER,
        "WF-PROMPTS-LIMIT",
        "$.actions[0].prompts[100]",
        id="WF-PROMPTS-LIMIT-101-prompts",
    ),
    # Further cases of rules already covered, kept in the table for their bugs.
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].stopTones", "123456"),
        LATER,
        "WF-STOP-TONES-COUNT",
        "$.actions[0].stopTones",
        id="WF-STOP-TONES-COUNT-bare-string-of-six",
    ),
    pytest.param(
        patched(LATER_RECORD, "$.actions[0].playPrompt.action", "PlayPrompt"),
        LATER,
        "WF-CASING",
        "$.actions[0].playPrompt.action",
        id="WF-CASING-nested-play-prompt-action",
    ),
]

# Cases where another rule necessarily fires with the rule under test, by case id.
ALSO_FIRING: dict[str, list[str]] = {
    # A prefix needs a multi-key sequence, which is itself a WF-DTMF-SEQUENCE warning.
    "WF-DTMF-PREFIX-12-after-1": ["WF-DTMF-SEQUENCE", "WF-DTMF-PREFIX"],
    # Only answer and reject rank below playPrompt/record/recognize, and each of them out of
    # place fires its own rule too (test_order_by_rank covers the other combinations).
    "WF-ORDER-answer-after-record": ["WF-ANSWER-AGAIN", "WF-ORDER"],
    # A bare string of tones is both a bare string and, past five, too many.
    "WF-STOP-TONES-COUNT-bare-string-of-six": ["WF-STOP-TONES-BARE", "WF-STOP-TONES-COUNT"],
}


@pytest.mark.parametrize(("document", "context", "rule", "where"), RULE_CASES)
def test_rule_fires(
    document: JSON, context: RuleContext, rule: str, where: str, request: pytest.FixtureRequest
) -> None:
    findings = validate_workflow(document, context)
    expected = ALSO_FIRING.get(request.node.callspec.id, [rule])
    assert rule_ids(findings) == expected, [str(f) for f in findings]
    [finding] = [f for f in findings if f.rule == rule]
    assert finding.where == where
    assert finding.severity is RULES[rule].severity
    assert finding.message


def test_every_rule_has_a_named_case() -> None:
    exercised = {case.values[2] for case in RULE_CASES}
    assert exercised == set(RULES.ids())


def test_rule_case_ids_name_their_rule() -> None:
    for case in RULE_CASES:
        assert case.id is not None and case.id.startswith(f"{case.values[2]}-"), case.id


# --- First action, reject, answer ------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "first_ids", "later_ids"),
    [
        pytest.param(("answer", "hangup"), [], ["WF-ANSWER-AGAIN"], id="answer-hangup"),
        pytest.param(("reject",), [], ["WF-REJECT-PLACEMENT"], id="reject"),
        pytest.param(("playPrompt", "hangup"), ["WF-FIRST-ACTION"], [], id="play-hangup"),
        pytest.param(("hangup",), ["WF-FIRST-ACTION"], [], id="hangup"),
        pytest.param(("record",), ["WF-FIRST-ACTION"], [], id="record"),
        pytest.param(("recognize",), ["WF-FIRST-ACTION"], [], id="recognize"),
        pytest.param(
            ("reject", "hangup"),
            ["WF-REJECT-ALONE"],
            ["WF-REJECT-ALONE", "WF-REJECT-PLACEMENT"],
            id="reject-hangup",
        ),
        pytest.param(
            ("answer", "reject"),
            ["WF-REJECT-ALONE"],
            ["WF-ANSWER-AGAIN", "WF-REJECT-ALONE", "WF-REJECT-PLACEMENT"],
            id="answer-reject",
        ),
    ],
)
def test_first_workflow_rules_depend_on_context(
    names: tuple[str, ...], first_ids: list[str], later_ids: list[str]
) -> None:
    doc = workflow(*names)
    assert rule_ids(validate_workflow(doc, FIRST)) == first_ids
    assert rule_ids(validate_workflow(doc, LATER)) == later_ids


def test_first_action_finding_points_at_the_first_action() -> None:
    findings = validate_workflow(workflow("playPrompt", "answer", "hangup"), FIRST)
    assert at(findings, "WF-FIRST-ACTION") == ["$.actions[0]"]


def test_first_action_of_unknown_kind_is_not_answer() -> None:
    doc = with_actions(LATER_RECORD, {"operationId": "x", "action": "transfer"})
    assert rule_ids(validate_workflow(doc, FIRST)) == ["WF-ACTION-UNKNOWN", "WF-FIRST-ACTION"]


def test_answer_again_is_a_warning_and_the_workflow_still_reads() -> None:
    findings = validate_workflow(FIRST_MENU, LATER)
    assert not has_errors(findings)
    assert [f.severity for f in findings] == [Severity.WARNING]


def test_reject_placement_is_an_error() -> None:
    [finding] = validate_workflow(FIRST_REJECT, LATER)
    assert finding.severity is Severity.ERROR
    assert "hangup" in finding.message


# --- Order and repetition --------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(("answer", "playPrompt", "record", "recognize", "hangup"), id="all-ranks"),
        pytest.param(("answer", "recognize", "record", "playPrompt"), id="rank-2-any-order"),
        pytest.param(("answer", "playPrompt", "playPrompt", "hangup"), id="play-prompt-twice"),
        pytest.param(
            ("answer", "playPrompt", "recognize", "playPrompt", "record", "playPrompt"),
            id="play-prompt-thrice",
        ),
        pytest.param(("answer",), id="answer-alone"),
    ],
)
def test_valid_order(names: tuple[str, ...]) -> None:
    assert validate_workflow(workflow(*names), FIRST) == []


@pytest.mark.parametrize(
    ("names", "expected", "where"),
    [
        pytest.param(
            ("answer", "playPrompt", "answer"),
            ["WF-ACTION-REPEATED", "WF-ORDER"],
            "$.actions[2]",
            id="answer-after-prompt",
        ),
        pytest.param(
            ("answer", "record", "reject"),
            ["WF-REJECT-ALONE", "WF-ORDER"],
            "$.actions[2]",
            id="reject-after-record",
        ),
        pytest.param(
            ("playPrompt", "answer"),
            ["WF-FIRST-ACTION", "WF-ORDER"],
            "$.actions[1]",
            id="answer-after-prompt-first",
        ),
    ],
)
def test_order_by_rank(names: tuple[str, ...], expected: list[str], where: str) -> None:
    findings = validate_workflow(workflow(*names), FIRST)
    assert rule_ids(findings) == expected
    assert at(findings, "WF-ORDER") == [where]


@pytest.mark.parametrize(
    ("names", "hangup_at"),
    [
        pytest.param(("answer", "hangup", "playPrompt"), "$.actions[1]", id="prompt-after"),
        pytest.param(("answer", "hangup", "record"), "$.actions[1]", id="record-after"),
        pytest.param(("answer", "hangup", "recognize"), "$.actions[1]", id="recognize-after"),
    ],
)
def test_hangup_not_last_is_hangup_last_not_order(names: tuple[str, ...], hangup_at: str) -> None:
    findings = validate_workflow(workflow(*names), FIRST)
    assert rule_ids(findings) == ["WF-HANGUP-LAST"]
    assert findings[0].where == hangup_at
    assert findings[0].severity is Severity.ERROR


def test_answer_after_hangup_is_hangup_last_not_order() -> None:
    findings = validate_workflow(workflow("answer", "hangup", "answer"), FIRST)
    assert "WF-ORDER" not in rule_ids(findings)
    assert "WF-HANGUP-LAST" in rule_ids(findings)


@pytest.mark.parametrize(
    ("names", "repeat_at"),
    [
        pytest.param(("answer", "answer"), "$.actions[1]", id="answer"),
        pytest.param(("answer", "record", "record"), "$.actions[2]", id="record"),
        pytest.param(("answer", "recognize", "recognize"), "$.actions[2]", id="recognize"),
        pytest.param(("answer", "hangup", "hangup"), "$.actions[2]", id="hangup"),
        pytest.param(
            ("answer", "record", "playPrompt", "record"), "$.actions[3]", id="record-not-adjacent"
        ),
    ],
)
def test_no_action_twice_except_play_prompt(names: tuple[str, ...], repeat_at: str) -> None:
    findings = validate_workflow(workflow(*names), FIRST)
    assert rule_ids(findings) == ["WF-ACTION-REPEATED"]
    assert findings[0].where == repeat_at
    assert "first at $.actions[" in findings[0].message


# --- appState --------------------------------------------------------------------------------

EMOJI = "\N{TELEPHONE RECEIVER}\N{VARIATION SELECTOR-16}"  # 2 code points, 2 UTF-16 units
PHONE = "\N{MOBILE PHONE}"  # outside the BMP: one code point, 2 UTF-16 units


@pytest.mark.parametrize(
    ("app_state", "ok"),
    [
        pytest.param("", True, id="empty"),
        pytest.param("x" * 1024, True, id="1024-ascii"),
        pytest.param("x" * 1025, False, id="1025-ascii"),
        pytest.param(PHONE * 512, True, id="512-astral-is-1024-units"),
        pytest.param(PHONE * 513, False, id="513-astral-is-1026-units"),
        pytest.param("x" * 1023 + PHONE, False, id="1023-ascii-plus-astral-is-1025-units"),
        pytest.param("x" * 1022 + PHONE, True, id="1022-ascii-plus-astral-is-1024-units"),
        pytest.param("\N{LATIN SMALL LETTER E WITH ACUTE}" * 1024, True, id="1024-bmp-accented"),
    ],
)
def test_app_state_limit_counts_utf16_units(app_state: str, ok: bool) -> None:
    findings = validate_workflow(patched(LATER_RECORD, "$.appState", app_state), LATER)
    assert rule_ids(findings) == ([] if ok else ["WF-APPSTATE-LENGTH"])


def test_app_state_length_message_gives_utf16_length() -> None:
    [finding] = validate_workflow(patched(LATER_RECORD, "$.appState", PHONE * 513), LATER)
    assert "1026" in finding.message and "1024" in finding.message


def test_app_state_json_document_is_fine() -> None:
    doc = patched(LATER_RECORD, "$.appState", '{"a":[1,2,{"b":null}],"emoji":"' + EMOJI + '"}')
    assert validate_workflow(doc, LATER) == []


# --- Prompts ---------------------------------------------------------------------------------

_PROMPT = "$.actions[0].prompts[0]"


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        pytest.param({"value": "Hi."}, [], id="value"),
        pytest.param({"fileUri": MEDIA}, [], id="file"),
        pytest.param({"silenceLengthInMilliseconds": 1}, [], id="silence-1"),
        pytest.param({"value": "Hi.", "silenceLengthInMilliseconds": 0}, [], id="value-silence-0"),
        pytest.param({"value": "Hi.", "silenceLengthInMilliseconds": 60000}, [], id="silence-max"),
        pytest.param({"value": "a" * 2048}, [], id="value-2048"),
        pytest.param({"value": PHONE * 1024}, [], id="value-2048-utf16-units"),
        pytest.param({"fileUri": "HTTP://media.example.com/a.wav"}, [], id="file-http-upper"),
        pytest.param({}, ["WF-PROMPT-CONTENT"], id="empty"),
        pytest.param({"value": ""}, ["WF-PROMPT-CONTENT"], id="value-empty"),
        pytest.param({"value": "   "}, ["WF-PROMPT-CONTENT"], id="value-blank"),
        pytest.param({"value": None}, ["WF-PROMPT-CONTENT"], id="value-null"),
        pytest.param({"silenceLengthInMilliseconds": 0}, ["WF-PROMPT-CONTENT"], id="silence-0"),
        pytest.param(
            {"value": None, "fileUri": MEDIA, "silenceLengthInMilliseconds": 0},
            ["WF-PROMPT-SILENCE"],
            id="null-value-file-silence-0",
        ),
        pytest.param({"value": "Hi.", "fileUri": MEDIA}, ["WF-PROMPT-BOTH"], id="value-and-file"),
        pytest.param({"value": "a" * 2049}, ["WF-PROMPT-VALUE-LENGTH"], id="value-2049"),
        pytest.param(
            {"value": PHONE * 1024 + "a"}, ["WF-PROMPT-VALUE-LENGTH"], id="value-2049-utf16-units"
        ),
        pytest.param(
            {"value": "Hi.", "silenceLengthInMilliseconds": 60001},
            ["WF-PROMPT-SILENCE-RANGE"],
            id="silence-60001",
        ),
        pytest.param(
            {"value": "Hi.", "silenceLengthInMilliseconds": -1},
            ["WF-PROMPT-SILENCE-RANGE"],
            id="silence-negative",
        ),
        pytest.param(
            {"value": "Hi.", "silenceLengthInMilliseconds": 2.5}, ["WF-TYPE"], id="silence-decimal"
        ),
        pytest.param({"fileUri": "goodbye.wav"}, ["WF-PROMPT-FILE-URI"], id="file-relative"),
        pytest.param(
            {"fileUri": "ftp://media.example.com/a.wav"}, ["WF-PROMPT-FILE-URI"], id="file-ftp"
        ),
        pytest.param(
            {"fileUri": MEDIA, "culture": "en-US", "emphasize": True, "sayAs": "letters"},
            ["WF-PROMPT-TEXT-ONLY"] * 3,
            id="file-with-text-options",
        ),
        pytest.param({"value": "Hi.", "voice": "robot"}, ["WF-ENUM-VALUE"], id="voice-unknown"),
        pytest.param({"value": "Hi.", "sayAs": "Telephone"}, ["WF-CASING"], id="say-as-casing"),
        pytest.param({"value": "Hi.", "emphasize": "yes"}, ["WF-TYPE"], id="emphasize-string"),
        pytest.param({"value": 5}, ["WF-TYPE", "WF-PROMPT-CONTENT"], id="value-number"),
    ],
)
def test_prompt(prompt: JSON, expected: list[str]) -> None:
    doc = patched(LATER_GOODBYE, _PROMPT, prompt)
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == expected, [str(f) for f in findings]
    assert all(f.where.startswith(_PROMPT) for f in findings)


def test_prompt_silence_finding_points_at_the_silence() -> None:
    doc = patched(LATER_GOODBYE, _PROMPT, {"fileUri": MEDIA, "silenceLengthInMilliseconds": 0})
    [finding] = validate_workflow(doc, LATER)
    assert finding.where == f"{_PROMPT}.silenceLengthInMilliseconds"
    assert finding.severity is Severity.ERROR


def test_play_prompt_without_prompts_is_an_error() -> None:
    doc = patched(LATER_GOODBYE, "$.actions[0].prompts")
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-PLAYPROMPT-PROMPTS"]
    assert findings[0].where == "$.actions[0].prompts"


def test_prompts_in_the_nested_play_prompt_are_checked() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].playPrompt.prompts[0]", {"value": "a" * 2049})
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-PROMPT-VALUE-LENGTH"]
    assert findings[0].where == "$.actions[0].playPrompt.prompts[0].value"


def test_nested_play_prompt_may_omit_action_and_operation_id() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].playPrompt", {"prompts": [{"value": "Beep."}]})
    assert validate_workflow(doc, LATER) == []


def test_nested_play_prompt_must_be_an_object() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].playPrompt", "Leave a message.")
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-TYPE"]
    assert findings[0].where == "$.actions[0].playPrompt"


# --- Culture ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("$.actions[1].prompts[0].culture", id="prompt"),
        pytest.param("$.actions[2].culture", id="recognize"),
    ],
)
@pytest.mark.parametrize(
    ("culture", "expected", "severity"),
    [
        pytest.param("en-US", [], None, id="en-US"),
        pytest.param("en-us", ["WF-CASING"], Severity.WARNING, id="en-us"),
        pytest.param("EN-US", ["WF-CASING"], Severity.WARNING, id="EN-US"),
        pytest.param("fr-FR", ["WF-CULTURE"], Severity.ERROR, id="fr-FR"),
        pytest.param("en-GB", ["WF-CULTURE"], Severity.ERROR, id="en-GB"),
        pytest.param("", ["WF-CULTURE"], Severity.ERROR, id="empty"),
        pytest.param(1033, ["WF-TYPE"], Severity.ERROR, id="lcid-number"),
    ],
)
def test_culture(path: str, culture: JSON, expected: list[str], severity: Severity | None) -> None:
    findings = validate_workflow(patched(FIRST_MENU, path, culture), FIRST)
    assert rule_ids(findings) == expected
    assert all(f.where == path and f.severity is severity for f in findings)


# --- Links -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("callback", "context", "severity"),
    [
        pytest.param("http://localhost:3978/cb", LATER, Severity.ERROR, id="later-default"),
        pytest.param("http://localhost:3978/cb", FIRST, Severity.ERROR, id="first-default"),
        pytest.param("http://localhost:3978/cb", LATER_HTTP, Severity.WARNING, id="later-allow"),
        pytest.param("http://localhost:3978/cb", FIRST_HTTP, Severity.WARNING, id="first-allow"),
        pytest.param("HTTP://bot.example.com/cb", LATER, Severity.ERROR, id="upper-scheme"),
    ],
)
def test_http_callback(callback: str, context: RuleContext, severity: Severity) -> None:
    findings = validate_workflow(patched(FIRST_MENU, "$.links.callback", callback), context)
    https = [f for f in findings if f.rule == "WF-CALLBACK-HTTPS"]
    assert len(https) == 1
    assert https[0].severity is severity
    assert https[0].where == "$.links.callback"
    assert https[0].evidence == callback
    assert has_errors(findings) is (severity is Severity.ERROR)


def test_http_callback_allowed_is_the_only_finding() -> None:
    doc = patched(LATER_RECORD, "$.links.callback", "http://localhost:3978/cb")
    [finding] = validate_workflow(doc, LATER_HTTP)
    assert (finding.rule, finding.severity) == ("WF-CALLBACK-HTTPS", Severity.WARNING)
    assert "allowed" in finding.message


@pytest.mark.parametrize(
    "callback",
    [
        pytest.param(CALLBACK, id="https"),
        pytest.param("HTTPS://Bot.Example.com/cb", id="upper-case"),
        pytest.param("https://127.0.0.1:8443/cb?x=1#f", id="ip-port-query"),
    ],
)
@pytest.mark.parametrize("context", [FIRST, FIRST_HTTP], ids=["strict", "allow-http"])
def test_https_callback_is_fine(callback: str, context: RuleContext) -> None:
    assert validate_workflow(patched(FIRST_MENU, "$.links.callback", callback), context) == []


@pytest.mark.parametrize(
    "callback",
    [
        pytest.param("/calling/callback", id="relative-path"),
        pytest.param("calling/callback", id="relative"),
        pytest.param("bot.example.com/cb", id="no-scheme"),
        pytest.param("https://", id="no-host"),
        pytest.param("ftp://bot.example.com/cb", id="ftp"),
        pytest.param("https://bot.example.com/a b", id="space"),
        pytest.param("", id="empty"),
    ],
)
@pytest.mark.parametrize("context", [LATER, LATER_HTTP], ids=["strict", "allow-http"])
def test_callback_not_absolute_http(callback: str, context: RuleContext) -> None:
    findings = validate_workflow(patched(LATER_RECORD, "$.links.callback", callback), context)
    assert rule_ids(findings) == ["WF-CALLBACK-URI"]
    assert findings[0].where == "$.links.callback"
    assert findings[0].severity is Severity.ERROR


@pytest.mark.parametrize(
    ("document", "context", "expected"),
    [
        pytest.param(patched(LATER_RECORD, "$.links"), LATER, ["WF-NO-CALLBACK"], id="record"),
        pytest.param(
            patched(LATER_RECORD, "$.links", {}), LATER, ["WF-NO-CALLBACK"], id="empty-links"
        ),
        pytest.param(
            patched(LATER_RECORD, "$.links", {"callback": None}),
            LATER,
            ["WF-NO-CALLBACK"],
            id="null-callback",
        ),
        pytest.param(patched(FIRST_MENU, "$.links"), FIRST, ["WF-NO-CALLBACK"], id="menu"),
        pytest.param(LATER_GOODBYE, LATER, [], id="ends-with-hangup"),
        pytest.param(FIRST_REJECT, FIRST, [], id="ends-with-reject"),
        pytest.param(workflow("answer", callback=None), FIRST, ["WF-NO-CALLBACK"], id="answer"),
        pytest.param(workflow("hangup", callback=None), LATER, [], id="hangup-alone"),
    ],
)
def test_no_callback(document: JSON, context: RuleContext, expected: list[str]) -> None:
    findings = validate_workflow(document, context)
    assert rule_ids(findings) == expected
    assert all(f.severity is Severity.WARNING and f.where == "$.links.callback" for f in findings)


def test_callback_casing_is_a_warning() -> None:
    doc = patched(LATER_RECORD, "$.links", {"Callback": CALLBACK})
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-CASING"]
    assert findings[0].where == "$.links.Callback"


def test_links_may_carry_other_uris() -> None:
    doc = patched(LATER_RECORD, "$.links", {"callback": CALLBACK, "call": "https://x.example/c"})
    assert validate_workflow(doc, LATER) == []


# --- Record ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        pytest.param("maxDurationInSeconds", 2, None, id="max-duration-2"),
        pytest.param("maxDurationInSeconds", 600, None, id="max-duration-600"),
        pytest.param("maxDurationInSeconds", 1, "WF-RECORD-MAX-DURATION", id="max-duration-1"),
        pytest.param("maxDurationInSeconds", 601, "WF-RECORD-MAX-DURATION", id="max-duration-601"),
        pytest.param("maxDurationInSeconds", 60.0, None, id="max-duration-integral-float"),
        pytest.param("maxDurationInSeconds", 5.5, "WF-TYPE", id="max-duration-decimal"),
        pytest.param("maxDurationInSeconds", "60", "WF-TYPE", id="max-duration-string"),
        pytest.param("maxDurationInSeconds", True, "WF-TYPE", id="max-duration-boolean"),
        pytest.param("initialSilenceTimeoutInSeconds", 1, None, id="initial-silence-1"),
        pytest.param("initialSilenceTimeoutInSeconds", 30, None, id="initial-silence-30"),
        pytest.param(
            "initialSilenceTimeoutInSeconds", 0, "WF-RECORD-INITIAL-SILENCE", id="initial-silence-0"
        ),
        pytest.param(
            "initialSilenceTimeoutInSeconds",
            31,
            "WF-RECORD-INITIAL-SILENCE",
            id="initial-silence-31",
        ),
        pytest.param("initialSilenceTimeoutInSeconds", 1.5, "WF-TYPE", id="initial-silence-1.5"),
        pytest.param("maxSilenceTimeoutInSeconds", 0, None, id="max-silence-0"),
        pytest.param("maxSilenceTimeoutInSeconds", 30, None, id="max-silence-30"),
        pytest.param(
            "maxSilenceTimeoutInSeconds", -1, "WF-RECORD-MAX-SILENCE", id="max-silence--1"
        ),
        pytest.param(
            "maxSilenceTimeoutInSeconds", 31, "WF-RECORD-MAX-SILENCE", id="max-silence-31"
        ),
        pytest.param("recordingFormat", "wma", None, id="format-wma"),
        pytest.param("recordingFormat", "mp3", None, id="format-mp3"),
        pytest.param("recordingFormat", "WAV", "WF-CASING", id="format-WAV"),
        pytest.param("recordingFormat", "Mp3", "WF-CASING", id="format-Mp3"),
        pytest.param("recordingFormat", "ogg", "WF-ENUM-VALUE", id="format-ogg"),
        pytest.param("playBeep", "true", "WF-TYPE", id="play-beep-string"),
        pytest.param("stopTones", [], None, id="stop-tones-empty"),
        pytest.param("stopTones", ["1", "2", "3", "4", "5"], None, id="stop-tones-5"),
        pytest.param("stopTones", list("0123456"), "WF-STOP-TONES-COUNT", id="stop-tones-7"),
        pytest.param("stopTones", "#", "WF-STOP-TONES-BARE", id="stop-tones-bare"),
        pytest.param("stopTones", True, "WF-STOP-TONES-BOOLEAN", id="stop-tones-true"),
        pytest.param("stopTones", False, "WF-STOP-TONES-BOOLEAN", id="stop-tones-false"),
        pytest.param("stopTones", ["a"], "WF-DTMF-DIGIT", id="stop-tones-lowercase"),
        pytest.param("stopTones", 5, "WF-TYPE", id="stop-tones-number"),
    ],
)
def test_record_fields(field: str, value: JSON, rule: str | None) -> None:
    findings = validate_workflow(patched(LATER_RECORD, f"$.actions[0].{field}", value), LATER)
    assert rule_ids(findings) == ([] if rule is None else [rule]), [str(f) for f in findings]
    if rule is not None:
        assert findings[0].where.startswith(f"$.actions[0].{field}")
        assert findings[0].severity is RULES[rule].severity


def test_record_with_no_options_is_fine() -> None:
    assert validate_workflow(with_actions(LATER_RECORD, RECORD), LATER) == []


def test_boolean_stop_tones_say_how_they_are_read() -> None:
    [yes] = validate_workflow(patched(LATER_RECORD, "$.actions[0].stopTones", True), LATER)
    [no] = validate_workflow(patched(LATER_RECORD, "$.actions[0].stopTones", False), LATER)
    assert "any key" in yes.message
    assert "no stop tones" in no.message


def test_bare_stop_tones_suggest_the_array() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].stopTones", "#*")
    [finding] = validate_workflow(doc, LATER)
    assert finding.rule == "WF-STOP-TONES-BARE"
    assert '["#", "*"]' in finding.message


# --- DTMF digits -----------------------------------------------------------------------------


@pytest.mark.parametrize("digit", list(DTMF_KEYS))
def test_every_dtmf_key_is_a_digit(digit: str) -> None:
    doc = patched(LATER_DIGITS, "$.actions[0].collectDigits.stopTones", [digit])
    assert validate_workflow(doc, LATER) == []
    menu = patched(FIRST_MENU, f"{_MENU}.choices[0].dtmfVariation", digit)
    menu = patched(menu, f"{_MENU}.choices[1].dtmfVariation", "#" if digit != "#" else "*")
    assert validate_workflow(menu, FIRST) == []


def test_dtmf_keys_are_exactly_the_sixteen() -> None:
    assert sorted(DTMF_KEYS) == sorted("0123456789*#ABCD")


@pytest.mark.parametrize(
    ("digit", "rule"),
    [
        pytest.param("a", "WF-DTMF-DIGIT", id="lowercase-a"),
        pytest.param("d", "WF-DTMF-DIGIT", id="lowercase-d"),
        pytest.param("E", "WF-DTMF-DIGIT", id="E"),
        pytest.param("+", "WF-DTMF-DIGIT", id="plus"),
        pytest.param("", "WF-DTMF-DIGIT", id="empty"),
        pytest.param("10", "WF-DTMF-DIGIT", id="two-characters"),
        pytest.param(" 1", "WF-DTMF-DIGIT", id="padded"),
        pytest.param("\N{FULLWIDTH DIGIT ONE}", "WF-DTMF-DIGIT", id="fullwidth-one"),
        pytest.param(1, "WF-TYPE", id="number"),
        pytest.param(None, "WF-TYPE", id="null"),
    ],
)
def test_invalid_digits(digit: JSON, rule: str) -> None:
    tones = patched(LATER_DIGITS, "$.actions[0].collectDigits.stopTones", ["#", digit])
    findings = validate_workflow(tones, LATER)
    assert rule_ids(findings) == [rule]
    assert findings[0].where == "$.actions[0].collectDigits.stopTones[1]"
    assert findings[0].severity is Severity.ERROR


@pytest.mark.parametrize(
    "digit",
    [pytest.param("a", id="lowercase-a"), pytest.param("10", id="two-characters")],
)
def test_invalid_dtmf_variation(digit: str) -> None:
    doc = patched(FIRST_MENU, f"{_MENU}.choices[1].dtmfVariation", digit)
    findings = validate_workflow(doc, FIRST)
    assert rule_ids(findings) == ["WF-DTMF-DIGIT"]
    assert findings[0].where == f"{_MENU}.choices[1].dtmfVariation"
    assert findings[0].evidence == digit


# --- Recognize -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        pytest.param("initialSilenceTimeoutInSeconds", 1, None, id="initial-silence-1"),
        pytest.param("initialSilenceTimeoutInSeconds", 30, None, id="initial-silence-30"),
        pytest.param("initialSilenceTimeoutInSeconds", 29.9, None, id="initial-silence-29.9"),
        pytest.param(
            "initialSilenceTimeoutInSeconds",
            0.99,
            "WF-RECOGNIZE-INITIAL-SILENCE",
            id="initial-silence-0.99",
        ),
        pytest.param(
            "initialSilenceTimeoutInSeconds",
            30.5,
            "WF-RECOGNIZE-INITIAL-SILENCE",
            id="initial-silence-30.5",
        ),
        pytest.param("initialSilenceTimeoutInSeconds", "5", "WF-TYPE", id="initial-silence-text"),
        pytest.param("interdigitTimeoutInSeconds", 1, None, id="interdigit-1"),
        pytest.param("interdigitTimeoutInSeconds", 5, None, id="interdigit-5"),
        pytest.param("interdigitTimeoutInSeconds", 4.75, None, id="interdigit-4.75"),
        pytest.param("interdigitTimeoutInSeconds", 0, "WF-RECOGNIZE-INTERDIGIT", id="interdigit-0"),
        pytest.param(
            "interdigitTimeoutInSeconds", 5.01, "WF-RECOGNIZE-INTERDIGIT", id="interdigit-5.01"
        ),
        pytest.param("bargeInAllowed", "yes", "WF-TYPE", id="barge-in-string"),
        pytest.param("bargeInAllowed", 1, "WF-TYPE", id="barge-in-number"),
    ],
)
def test_recognize_fields(field: str, value: JSON, rule: str | None) -> None:
    findings = validate_workflow(patched(LATER_DIGITS, f"$.actions[0].{field}", value), LATER)
    assert rule_ids(findings) == ([] if rule is None else [rule])
    if rule is not None:
        assert findings[0].where == f"$.actions[0].{field}"


@pytest.mark.parametrize(
    ("document", "message_part"),
    [
        pytest.param(
            added(LATER_DIGITS, "$.actions[0]", "choices", [{"name": "x", "dtmfVariation": "1"}]),
            "both are",
            id="both",
        ),
        pytest.param(
            patched(LATER_DIGITS, "$.actions[0].collectDigits"), "neither is", id="neither"
        ),
        pytest.param(
            patched(LATER_DIGITS, "$.actions[0].collectDigits", None), "neither is", id="null"
        ),
    ],
)
def test_recognize_one_of(document: JSON, message_part: str) -> None:
    findings = validate_workflow(document, LATER)
    assert rule_ids(findings) == ["WF-RECOGNIZE-ONE-OF"]
    assert findings[0].where == "$.actions[0]"
    assert message_part in findings[0].message


# --- Choices ---------------------------------------------------------------------------------

_CHOICES = f"{_MENU}.choices"


def menu(*choices: JSON) -> JSON:
    return patched(FIRST_MENU, _CHOICES, list(choices))


@pytest.mark.parametrize(
    ("choices", "expected"),
    [
        pytest.param(
            [
                {"name": "yes", "speechVariation": ["yes"]},
                {"name": "no", "speechVariation": ["no"]},
            ],
            [],
            id="speech-only",
        ),
        pytest.param(
            [{"name": "one", "dtmfVariation": "1"}, {"name": "two", "dtmfVariation": ["2"]}],
            [],
            id="dtmf-only-string-and-one-item-array",
        ),
        pytest.param(
            [{"name": "x", "speechVariation": ["a", "b", "c", "d", "e"]}], [], id="five-speech"
        ),
        pytest.param(
            [{"name": "x", "speechVariation": ["yes", "Yes!"]}],
            [],
            id="same-speech-within-one-choice",
        ),
        pytest.param(
            [
                {"name": "a", "dtmfVariation": ["1", "2"]},
                {"name": "b", "dtmfVariation": ["2", "1"]},
            ],
            ["WF-DTMF-SEQUENCE", "WF-DTMF-SEQUENCE"],
            id="sequences-not-prefixes",
        ),
        pytest.param([{"name": "", "dtmfVariation": "1"}], ["WF-CHOICE-NAME"], id="empty-name"),
        pytest.param([{"dtmfVariation": "1"}], ["WF-CHOICE-NAME"], id="missing-name"),
        pytest.param([{"name": "x"}], ["WF-CHOICE-VARIATION"], id="no-variation"),
        pytest.param(
            [{"name": "x", "speechVariation": []}], ["WF-CHOICE-VARIATION"], id="empty-speech"
        ),
        pytest.param(
            [{"name": "x", "speechVariation": list("abcdef")}],
            ["WF-CHOICE-SPEECH-COUNT"],
            id="six-speech",
        ),
        pytest.param(
            [
                {"name": "a", "speechVariation": ["Sales"]},
                {"name": "b", "speechVariation": ["sales!"]},
            ],
            ["WF-CHOICE-UNIQUE"],
            id="speech-duplicate-case-punctuation",
        ),
        pytest.param(
            [
                {"name": "a", "speechVariation": ["customer  service"]},
                {"name": "b", "speechVariation": ["Customer-Service"]},
            ],
            ["WF-CHOICE-UNIQUE"],
            id="speech-duplicate-spacing-hyphen",
        ),
        pytest.param(
            [{"name": "a", "dtmfVariation": "#"}, {"name": "b", "dtmfVariation": ["#"]}],
            ["WF-CHOICE-UNIQUE"],
            id="dtmf-duplicate-string-and-array",
        ),
        pytest.param(
            [{"name": "a", "dtmfVariation": "1"}, {"name": "a", "dtmfVariation": "2"}],
            ["WF-CHOICE-NAME-UNIQUE"],
            id="duplicate-name",
        ),
        pytest.param(
            [{"name": "a", "dtmfVariation": ["1", "2"]}, {"name": "b", "dtmfVariation": "1"}],
            ["WF-DTMF-SEQUENCE", "WF-DTMF-PREFIX"],
            id="prefix-declared-after",
        ),
        pytest.param(
            [{"name": "a", "dtmfVariation": []}], ["WF-DTMF-DIGIT"], id="empty-dtmf-array"
        ),
        pytest.param([{"name": "a", "dtmfVariation": 1}], ["WF-TYPE"], id="dtmf-number"),
        pytest.param(
            [{"name": "a", "speechVariation": "yes"}],
            ["WF-TYPE", "WF-CHOICE-VARIATION"],
            id="speech-bare-string",
        ),
        pytest.param(["yes"], ["WF-TYPE"], id="choice-not-object"),
    ],
)
def test_choices(choices: list[JSON], expected: list[str]) -> None:
    findings = validate_workflow(menu(*choices), FIRST)
    assert rule_ids(findings) == expected, [str(f) for f in findings]
    assert all(f.where.startswith(_CHOICES) for f in findings)


def test_duplicate_choice_name_is_a_warning() -> None:
    doc = menu({"name": "a", "dtmfVariation": "1"}, {"name": "a", "dtmfVariation": "2"})
    [finding] = validate_workflow(doc, FIRST)
    assert finding.severity is Severity.WARNING
    assert finding.where == f"{_CHOICES}[1].name"
    assert f"{_CHOICES}[0]" in finding.message


def test_duplicate_speech_points_at_the_later_phrase() -> None:
    doc = menu(
        {"name": "a", "speechVariation": ["sales", "buy"]},
        {"name": "b", "speechVariation": ["help", "BUY."]},
    )
    [finding] = validate_workflow(doc, FIRST)
    assert finding.where == f"{_CHOICES}[1].speechVariation[1]"
    assert finding.severity is Severity.ERROR
    assert finding.evidence == "BUY."


def test_dtmf_sequence_and_prefix_are_warnings_pointing_at_the_longer_choice() -> None:
    doc = menu({"name": "a", "dtmfVariation": "1"}, {"name": "b", "dtmfVariation": ["1", "2"]})
    findings = validate_workflow(doc, FIRST)
    assert [(f.rule, f.severity, f.where) for f in findings] == [
        ("WF-DTMF-SEQUENCE", Severity.WARNING, f"{_CHOICES}[1].dtmfVariation"),
        ("WF-DTMF-PREFIX", Severity.WARNING, f"{_CHOICES}[1]"),
    ]
    assert "'12'" in findings[1].message and "'1'" in findings[1].message
    assert wire.read_workflow(doc).actions[2].choices[1].dtmf_variation == "12"  # type: ignore[attr-defined]


# --- Collect digits --------------------------------------------------------------------------

_COLLECT = "$.actions[0].collectDigits"


@pytest.mark.parametrize(
    ("collect", "expected", "where"),
    [
        pytest.param({"maxNumberOfDtmfs": 1}, [], None, id="max-1"),
        pytest.param({"maxNumberOfDtmfs": 20}, [], None, id="max-20"),
        pytest.param({"stopTones": ["#"]}, [], None, id="stop-tone-only"),
        pytest.param(
            {"stopTones": "#"}, ["WF-STOP-TONES-BARE"], f"{_COLLECT}.stopTones", id="bare"
        ),
        pytest.param(
            {"maxNumberOfDtmfs": 0}, ["WF-DIGITS-LIMIT"], f"{_COLLECT}.maxNumberOfDtmfs", id="max-0"
        ),
        pytest.param(
            {"maxNumberOfDtmfs": 21},
            ["WF-DIGITS-LIMIT"],
            f"{_COLLECT}.maxNumberOfDtmfs",
            id="max-21",
        ),
        pytest.param({}, ["WF-DIGITS-LIMIT"], _COLLECT, id="neither"),
        pytest.param({"stopTones": []}, ["WF-DIGITS-LIMIT"], _COLLECT, id="empty-stop-tones"),
        pytest.param(
            {"maxNumberOfDtmfs": 4, "stopTones": list("123456")},
            ["WF-STOP-TONES-COUNT"],
            f"{_COLLECT}.stopTones",
            id="six-stop-tones",
        ),
        pytest.param(
            {"maxNumberOfDtmfs": 4, "stopTones": True},
            ["WF-TYPE"],
            f"{_COLLECT}.stopTones",
            id="boolean-stop-tones-not-for-collect",
        ),
        pytest.param(
            {"maxNumberOfDtmfs": 4.5},
            ["WF-TYPE"],
            f"{_COLLECT}.maxNumberOfDtmfs",
            id="max-decimal",
        ),
        pytest.param("4", ["WF-TYPE"], _COLLECT, id="not-object"),
    ],
)
def test_collect_digits(collect: JSON, expected: list[str], where: str | None) -> None:
    findings = validate_workflow(patched(LATER_DIGITS, _COLLECT, collect), LATER)
    assert rule_ids(findings) == expected, [str(f) for f in findings]
    if where is not None:
        assert findings[0].where == where


# --- Answer ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("modalities", "expected", "where"),
    [
        pytest.param(["audio", "video"], [], None, id="audio-video"),
        pytest.param([], [], None, id="empty"),
        pytest.param(["audio", "audio"], ["WF-ANSWER-MODALITIES"], "[1]", id="audio-twice"),
        pytest.param(
            ["Audio", "audio"], ["WF-CASING", "WF-ANSWER-MODALITIES"], "[1]", id="twice-casing"
        ),
        pytest.param(
            ["videoBasedScreenSharing"], ["WF-ANSWER-MODALITIES"], "[0]", id="screen-sharing"
        ),
        pytest.param(
            ["audio", "videoBasedScreenSharing", "videoBasedScreenSharing"],
            ["WF-ANSWER-MODALITIES", "WF-ANSWER-MODALITIES"],
            "[1]",
            id="screen-sharing-twice",
        ),
        pytest.param(["smell"], ["WF-ENUM-VALUE"], "[0]", id="unknown"),
        pytest.param("audio", ["WF-TYPE"], "", id="bare-string"),
    ],
)
def test_accept_modality_types(modalities: JSON, expected: list[str], where: str | None) -> None:
    path = "$.actions[0].acceptModalityTypes"
    findings = validate_workflow(patched(FIRST_MENU, path, modalities), FIRST)
    assert rule_ids(findings) == expected
    if where is not None:
        assert at(findings, expected[-1])[0] == path + where


# --- Casing, unknown and duplicate fields ----------------------------------------------------


@pytest.mark.parametrize(
    ("document", "where"),
    [
        pytest.param(
            renamed(LATER_RECORD, "$.actions[0]", "operationId", "OperationId"),
            "$.actions[0].OperationId",
            id="OperationId",
        ),
        pytest.param(renamed(LATER_RECORD, "$", "actions", "Actions"), "$.Actions", id="Actions"),
        pytest.param(renamed(LATER_RECORD, "$", "links", "Links"), "$.Links", id="Links"),
        pytest.param(
            renamed(LATER_RECORD, "$.actions[0]", "maxDurationInSeconds", "MaxDurationInSeconds"),
            "$.actions[0].MaxDurationInSeconds",
            id="MaxDurationInSeconds",
        ),
        pytest.param(
            renamed(LATER_GOODBYE, "$.actions[0].prompts[0]", "value", "Value"),
            "$.actions[0].prompts[0].Value",
            id="prompt-Value",
        ),
        pytest.param(
            renamed(FIRST_MENU, f"{_CHOICES}[0]", "dtmfVariation", "DtmfVariation"),
            f"{_CHOICES}[0].DtmfVariation",
            id="choice-DtmfVariation",
        ),
        pytest.param(
            renamed(LATER_DIGITS, _COLLECT, "maxNumberOfDtmfs", "MaxNumberOfDtmfs"),
            f"{_COLLECT}.MaxNumberOfDtmfs",
            id="collect-MaxNumberOfDtmfs",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[0].action", "PlayPrompt"),
            "$.actions[0].action",
            id="action-PlayPrompt",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[1].action", "HANGUP"),
            "$.actions[1].action",
            id="action-HANGUP",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.actions[0].recordingFormat", "WAV"),
            "$.actions[0].recordingFormat",
            id="format-WAV",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[0].prompts[0]", {"value": "Hi", "voice": "Female"}),
            "$.actions[0].prompts[0].voice",
            id="voice-Female",
        ),
        pytest.param(
            patched(FIRST_MENU, "$.notificationSubscriptions", ["CallStateChange"]),
            "$.notificationSubscriptions[0]",
            id="subscription-CallStateChange",
        ),
        pytest.param(
            added(LATER_RECORD, "$", "callState", "Established"),
            "$.callState",
            id="callState-Established",
        ),
    ],
)
@pytest.mark.parametrize("context", [FIRST, LATER], ids=["first", "later"])
def test_casing_is_only_a_warning(document: JSON, where: str, context: RuleContext) -> None:
    findings = [
        f
        for f in validate_workflow(document, context)
        if f.rule not in ("WF-FIRST-ACTION", "WF-ANSWER-AGAIN")
    ]
    assert [(f.rule, f.severity, f.where) for f in findings] == [
        ("WF-CASING", Severity.WARNING, where)
    ]
    wire.read_workflow(document)


def test_casing_message_gives_the_canonical_spelling() -> None:
    doc = patched(LATER_GOODBYE, "$.actions[0].action", "PlayPrompt")
    [finding] = validate_workflow(doc, LATER)
    assert "'playPrompt'" in finding.message
    assert finding.evidence == "PlayPrompt"


@pytest.mark.parametrize(
    ("path", "key", "hint"),
    [
        pytest.param("$.actions[0]", "bargeInAlowed", "bargeInAllowed", id="bargeInAlowed"),
        pytest.param(
            "$.actions[0]",
            "intialSilenceTimeoutInSeconds",
            "initialSilenceTimeoutInSeconds",
            id="intialSilence",
        ),
        pytest.param("$", "appstat", "appState", id="appstat"),
        pytest.param(
            "$.actions[0].collectDigits",
            "maxNumberOfDtmf",
            "maxNumberOfDtmfs",
            id="maxNumberOfDtmf",
        ),
        pytest.param("$.actions[0]", "timeout", None, id="far-name-no-hint"),
        pytest.param("$", "x-trace", None, id="not-identifier"),
    ],
)
def test_unknown_field(path: str, key: str, hint: str | None) -> None:
    doc = added(LATER_DIGITS, path, key, 1)
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-UNKNOWN-FIELD"]
    finding = findings[0]
    assert finding.severity is Severity.WARNING
    assert finding.where.startswith(path) and key in finding.where
    if hint is None:
        assert "did you mean" not in finding.message
    else:
        assert f"did you mean '{hint}'" in finding.message
    assert wire.read_workflow(doc) is not None


def test_unknown_field_with_odd_name_is_quoted_in_the_path() -> None:
    [finding] = validate_workflow(added(LATER_DIGITS, "$", "x-trace", 1), LATER)
    assert finding.where == '$["x-trace"]'


@pytest.mark.parametrize(
    ("document", "where", "kept"),
    [
        pytest.param(
            added(LATER_RECORD, "$.actions[0]", "OperationId", "other"),
            "$.actions[0].OperationId",
            "operationId",
            id="exact-first",
        ),
        pytest.param(
            added(
                renamed(LATER_RECORD, "$.actions[0]", "operationId", "OperationId"),
                "$.actions[0]",
                "operationId",
                "other",
            ),
            "$.actions[0].operationId",
            "operationId",
            id="exact-second",
        ),
        pytest.param(
            added(renamed(LATER_RECORD, "$", "appState", "AppState"), "$", "APPSTATE", "other"),
            "$.APPSTATE",
            "AppState",
            id="neither-exact-first-wins",
        ),
    ],
)
def test_duplicate_field(document: JSON, where: str, kept: str) -> None:
    findings = validate_workflow(document, LATER)
    duplicates = [f for f in findings if f.rule == "WF-DUPLICATE-FIELD"]
    assert [(f.where, f.severity) for f in duplicates] == [(where, Severity.WARNING)]
    assert f"'{kept}' is used" in duplicates[0].message
    assert not has_errors(findings)


def test_duplicate_field_the_exact_name_is_validated() -> None:
    doc = added(
        renamed(LATER_RECORD, "$.actions[0]", "maxDurationInSeconds", "MaxDurationInSeconds"),
        "$.actions[0]",
        "maxDurationInSeconds",
        9999,
    )
    findings = validate_workflow(doc, LATER)
    assert at(findings, "WF-RECORD-MAX-DURATION") == ["$.actions[0].maxDurationInSeconds"]


# --- Types -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "context", "where"),
    [
        pytest.param(
            patched(FIRST_MENU, "$.actions[0].operationId", 5),
            FIRST,
            "$.actions[0].operationId",
            id="operationId-number",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[0].prompts", "hi"),
            LATER,
            "$.actions[0].prompts",
            id="prompts-string",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[0].prompts", {"value": "hi"}),
            LATER,
            "$.actions[0].prompts",
            id="prompts-object",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[0].prompts", ["hi"]),
            LATER,
            "$.actions[0].prompts[0]",
            id="prompt-string",
        ),
        pytest.param(
            patched(LATER_DIGITS, "$.actions[0].bargeInAllowed", "yes"),
            LATER,
            "$.actions[0].bargeInAllowed",
            id="bargeInAllowed-string",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.actions[0].maxDurationInSeconds", 5.5),
            LATER,
            "$.actions[0].maxDurationInSeconds",
            id="maxDurationInSeconds-decimal",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.appState", {"step": 1}),
            LATER,
            "$.appState",
            id="appState-object",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.links", CALLBACK), LATER, "$.links", id="links-string"
        ),
        pytest.param(
            patched(LATER_RECORD, "$.links.callback", ["https://a.example/"]),
            LATER,
            "$.links.callback",
            id="callback-array",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.actions", {"0": {"action": "hangup"}}),
            LATER,
            "$.actions",
            id="actions-object",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[1]", "hangup"),
            LATER,
            "$.actions[1]",
            id="action-string",
        ),
        pytest.param(
            patched(LATER_GOODBYE, "$.actions[1].action", 3),
            LATER,
            "$.actions[1].action",
            id="action-number",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.actions[0].playBeep", 1),
            LATER,
            "$.actions[0].playBeep",
            id="playBeep-number",
        ),
        pytest.param(
            added(LATER_RECORD, "$", "callState", 5), LATER, "$.callState", id="callState-number"
        ),
        pytest.param(
            patched(FIRST_MENU, "$.notificationSubscriptions", "callStateChange"),
            FIRST,
            "$.notificationSubscriptions",
            id="subscriptions-string",
        ),
        pytest.param(
            patched(FIRST_MENU, f"{_CHOICES}[0].name", 7),
            FIRST,
            f"{_CHOICES}[0].name",
            id="choice-name-number",
        ),
        pytest.param(
            patched(FIRST_MENU, f"{_CHOICES}[0].speechVariation", ["sales", 7]),
            FIRST,
            f"{_CHOICES}[0].speechVariation[1]",
            id="speech-number",
        ),
        pytest.param(
            patched(LATER_RECORD, "$.actions[0].playPrompt.operationId", 7),
            LATER,
            "$.actions[0].playPrompt.operationId",
            id="nested-operationId-number",
        ),
    ],
)
def test_wrong_json_type(document: JSON, context: RuleContext, where: str) -> None:
    findings = validate_workflow(document, context)
    types = [f for f in findings if f.rule == "WF-TYPE"]
    assert [f.where for f in types] == [where], [str(f) for f in findings]
    assert types[0].severity is Severity.ERROR
    assert types[0].message.startswith("expected ")


# --- Not an object, actions missing or empty -------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(None, id="null"),
        pytest.param([], id="array"),
        pytest.param("workflow", id="string"),
        pytest.param(0, id="number"),
        pytest.param(True, id="boolean"),
        pytest.param([LATER_GOODBYE], id="wrapped-in-array"),
    ],
)
@pytest.mark.parametrize("context", [FIRST, LATER], ids=["first", "later"])
def test_not_an_object(document: JSON, context: RuleContext) -> None:
    findings = validate_workflow(document, context)
    assert [(f.rule, f.severity, f.where) for f in findings] == [
        ("WF-NOT-OBJECT", Severity.ERROR, "$")
    ]


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        pytest.param({}, "WF-REQUIRED", id="empty-object"),
        pytest.param({"links": {"callback": CALLBACK}}, "WF-REQUIRED", id="links-only"),
        pytest.param({"actions": None}, "WF-REQUIRED", id="null-actions"),
        pytest.param({"actions": []}, "WF-ACTIONS-EMPTY", id="empty-actions"),
    ],
)
@pytest.mark.parametrize("context", [FIRST, LATER], ids=["first", "later"])
def test_missing_or_empty_actions(document: JSON, rule: str, context: RuleContext) -> None:
    findings = validate_workflow(document, context)
    assert [(f.rule, f.where) for f in findings] == [(rule, "$.actions")]


def test_action_without_operation_id() -> None:
    doc = patched(LATER_GOODBYE, "$.actions[1].operationId")
    findings = validate_workflow(doc, LATER)
    assert [(f.rule, f.where) for f in findings] == [
        ("WF-OPERATION-ID", "$.actions[1].operationId")
    ]


def test_unknown_action_fields_are_not_judged() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].action", "transfer")
    findings = validate_workflow(doc, LATER)
    assert rule_ids(findings) == ["WF-ACTION-UNKNOWN"]
    assert findings[0].evidence == "transfer"


def test_findings_are_in_document_order() -> None:
    doc = patched(LATER_RECORD, "$.actions[0].maxDurationInSeconds", 1)
    doc = patched(doc, "$.actions[0].maxSilenceTimeoutInSeconds", 99)
    doc = patched(doc, "$.appState", "x" * 2000)
    assert rule_ids(validate_workflow(doc, LATER)) == [
        "WF-RECORD-MAX-DURATION",
        "WF-RECORD-MAX-SILENCE",
        "WF-APPSTATE-LENGTH",
    ]


def test_validation_does_not_modify_the_document() -> None:
    doc = copy.deepcopy(FIRST_MENU)
    validate_workflow(doc, FIRST)
    assert doc == FIRST_MENU


# --- Known bugs ------------------------------------------------------------------------------


def test_duplicate_action_key_is_judged_as_the_reader_reads_it() -> None:
    doc: JSON = {"actions": [{"Action": "hangup", "action": "playPrompt", "operationId": "x"}]}
    findings = validate_workflow(doc, LATER)
    assert has_errors(findings)  # the reader sees a playPrompt without prompts


def test_non_string_link_is_a_type_error() -> None:
    doc = added(LATER_RECORD, "$.links", "call", 5)
    findings = validate_workflow(doc, LATER)
    assert at(findings, "WF-TYPE") == ["$.links.call"]


def test_duplicate_callback_key() -> None:
    doc = patched(
        LATER_RECORD, "$.links", {"Callback": "http://old.example.com/cb", "callback": CALLBACK}
    )
    findings = validate_workflow(doc, LATER)
    assert "WF-DUPLICATE-FIELD" in rule_ids(findings)
    assert not has_errors(findings)  # the exact name, with its https callback, is the one used


@pytest.mark.parametrize(
    ("document", "where"),
    [
        pytest.param(
            patched(FIRST_MENU, "$.notificationSubscriptions", [None]),
            "$.notificationSubscriptions[0]",
            id="notificationSubscriptions",
        ),
        pytest.param(
            patched(FIRST_MENU, "$.actions[0].acceptModalityTypes", ["audio", None]),
            "$.actions[0].acceptModalityTypes[1]",
            id="acceptModalityTypes",
        ),
        pytest.param(
            patched(FIRST_MENU, f"{_CHOICES}[0].speechVariation", ["sales", None]),
            f"{_CHOICES}[0].speechVariation[1]",
            id="speechVariation",
        ),
    ],
)
def test_null_array_item_is_a_type_error(document: JSON, where: str) -> None:
    findings = validate_workflow(document, FIRST)
    assert at(findings, "WF-TYPE") == [where]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("maxDurationInSeconds", 10**400, id="record-huge"),
        pytest.param("maxSilenceTimeoutInSeconds", -(10**400), id="record-huge-negative"),
    ],
)
def test_integer_too_large_for_a_double_is_out_of_range(field: str, value: int) -> None:
    doc = patched(LATER_RECORD, f"$.actions[0].{field}", value)
    findings = validate_workflow(doc, LATER)
    assert [f.where for f in findings] == [f"$.actions[0].{field}"]
    assert has_errors(findings)


def test_lone_surrogate_in_app_state_is_not_a_crash() -> None:
    doc = wire.loads('{"actions":[{"operationId":"h","action":"hangup"}],"appState":"\\ud800"}')
    assert validate_workflow(doc, LATER) == []  # one UTF-16 code unit


def test_lone_surrogate_in_prompt_value_is_not_a_crash() -> None:
    doc = patched(LATER_GOODBYE, "$.actions[0].prompts[0].value", "caf\udce9")
    assert validate_workflow(doc, LATER) == []


# --- Properties ------------------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**400, -(10**400)])
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
json_values: st.SearchStrategy[JSON] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)

CONTEXTS = st.sampled_from([FIRST, LATER, FIRST_HTTP, LATER_HTTP])

_NAMES = [
    "actions", "links", "callback", "callState", "appState", "notificationSubscriptions",
    "operationId", "action", "acceptModalityTypes", "prompts", "playPrompt", "value", "fileUri",
    "voice", "culture", "silenceLengthInMilliseconds", "emphasize", "sayAs",
    "maxDurationInSeconds", "initialSilenceTimeoutInSeconds", "maxSilenceTimeoutInSeconds",
    "recordingFormat", "playBeep", "stopTones", "bargeInAllowed", "interdigitTimeoutInSeconds",
    "choices", "collectDigits", "name", "speechVariation", "dtmfVariation", "maxNumberOfDtmfs",
]  # fmt: skip
_TEXTS = [
    "", " ", "a", "A", "#", "*", "1", "12", "en-US", "en-us", "fr-FR", "audio",
    "videoBasedScreenSharing", "answer", "reject", "playPrompt", "PlayPrompt", "record",
    "recognize", "hangup", "transfer", "wav", "WAV", "male", "letters", "callStateChange",
    CALLBACK, "http://localhost/cb", "/cb", MEDIA, "x" * 1025, "a" * 2049,
]  # fmt: skip
_NUMBERS = [-1, 0, 0.5, 1, 1.5, 2, 5, 5.5, 6, 20, 21, 30, 31, 60, 600, 601, 60000, 60001]

interesting_values: st.SearchStrategy[JSON] = (
    st.sampled_from(_TEXTS)
    | st.sampled_from(_NUMBERS)
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
    | json_values
)


def _recase(name: str, how: int) -> str:
    variants = [name.upper(), name.lower(), name[:1].upper() + name[1:], name.swapcase()]
    return variants[how % len(variants)]


def _places(doc: JSON, steps: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The path of every value inside ``doc``."""
    out: list[tuple[str | int, ...]] = []
    items: list[tuple[str | int, JSON]] = []
    if isinstance(doc, dict):
        items = list(doc.items())
    elif isinstance(doc, list):
        items = list(enumerate(doc))
    for key, value in items:
        out.append((*steps, key))
        out.extend(_places(value, (*steps, key)))
    return out


def _containers(doc: JSON) -> list[tuple[str | int, ...]]:
    return [()] + [p for p in _places(doc) if isinstance(_walk(doc, p), dict | list)]


@st.composite
def near_valid_workflows(draw: st.DrawFn) -> JSON:
    """A valid baseline with one to four random mutations."""
    doc = copy.deepcopy(
        draw(st.sampled_from([FIRST_MENU, FIRST_REJECT, LATER_RECORD, LATER_DIGITS, LATER_GOODBYE]))
    )
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        kind = draw(st.sampled_from(["delete", "recase", "replace", "number", "duplicate", "add"]))
        if kind in ("add", "duplicate"):
            target = _walk(doc, draw(st.sampled_from(_containers(doc))))
            if not isinstance(target, dict):
                continue
            if kind == "add" or not target:
                key = draw(st.sampled_from(_NAMES) | st.text(max_size=8))
            else:
                key = _recase(draw(st.sampled_from(sorted(target))), draw(st.integers(0, 3)))
            value = draw(interesting_values)
            if draw(st.booleans()):  # in front: the new key is then the first of its name
                rest = [(k, v) for k, v in target.items() if k != key]
                target.clear()
                target.update([(key, value), *rest])
            else:
                target[key] = value
            continue
        places = _places(doc)
        if not places:
            continue
        *parent_steps, last = draw(st.sampled_from(places))
        parent = _walk(doc, parent_steps)
        if kind == "delete":
            del parent[last]  # type: ignore[index, arg-type, union-attr]
        elif kind == "recase" and isinstance(parent, dict) and isinstance(last, str):
            new = _recase(last, draw(st.integers(0, 3)))
            items = [(new if k == last else k, v) for k, v in parent.items()]
            parent.clear()
            parent.update(items)
        elif kind == "number":
            parent[last] = draw(st.sampled_from(_NUMBERS) | st.integers(-(10**6), 10**6))  # type: ignore[index, call-overload]
        else:
            parent[last] = draw(interesting_values)  # type: ignore[index, call-overload]
    return doc


@st.composite
def workflow_shaped(draw: st.DrawFn) -> JSON:
    """A Workflow-shaped object whose members have known names and arbitrary values."""
    members = st.dictionaries(st.sampled_from(_NAMES), interesting_values, max_size=5)

    def action(kind: str, extra: dict[str, JSON]) -> JSON:
        return {"operationId": f"op-{kind}", "action": kind, **extra}

    actions = draw(
        st.lists(
            st.builds(action, st.sampled_from([*BY_NAME, "PlayPrompt", "x"]), members),
            max_size=4,
        )
    )
    doc: dict[str, JSON] = {"actions": actions}
    doc.update(draw(st.dictionaries(st.sampled_from(_NAMES[:6]), interesting_values, max_size=3)))
    return doc


_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(document=json_values, context=CONTEXTS)
def test_never_raises_on_arbitrary_json(document: JSON, context: RuleContext) -> None:
    findings = validate_workflow(document, context)
    assert all(isinstance(f, Finding) and f.where.startswith("$") for f in findings)


@_PROPERTY
@given(document=near_valid_workflows() | workflow_shaped(), context=CONTEXTS)
def test_never_raises_on_near_valid_workflows(document: JSON, context: RuleContext) -> None:
    findings = validate_workflow(document, context)
    for finding in findings:
        assert finding.rule in RULES.ids()
        assert finding.where.startswith("$")
        assert finding.message


def _reads_when_no_error(document: JSON, context: RuleContext) -> None:
    findings = validate_workflow(document, context)
    if not has_errors(findings):
        wire.read_workflow(document)


@_PROPERTY
@given(document=near_valid_workflows() | workflow_shaped(), context=CONTEXTS)
def test_no_error_means_the_workflow_reads(document: JSON, context: RuleContext) -> None:
    _reads_when_no_error(document, context)


@settings(max_examples=100, deadline=None)
@given(document=json_values, context=CONTEXTS)
def test_no_error_means_arbitrary_json_reads(document: JSON, context: RuleContext) -> None:
    _reads_when_no_error(document, context)
