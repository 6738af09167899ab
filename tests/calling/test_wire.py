"""Tests of the calling wire format (spec section C; field notes, "Calling: wire format").

Writing is checked byte for byte; reading for case-insensitivity, unknown fields and enum values,
the lenient forms the field notes list, and precise error paths; reading must raise WireError and
nothing else, which property tests check on arbitrary and near-valid documents.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.calling import wire
from emulator.calling.model import (
    DTMF_KEYS,
    Action,
    Answer,
    AnswerOutcome,
    CallState,
    ChoiceOutcome,
    CollectDigits,
    CollectDigitsOutcome,
    Conversation,
    ConversationResult,
    Culture,
    DigitCollectionCompletionReason,
    Hangup,
    HangupOutcome,
    ModalityType,
    NotificationType,
    OperationOutcome,
    Outcome,
    Participant,
    PlayPrompt,
    PlayPromptOutcome,
    Prompt,
    PromptCompletionReason,
    RecognitionCompletionReason,
    RecognitionOption,
    Recognize,
    RecognizeOutcome,
    Record,
    RecordingCompletionReason,
    RecordingFormat,
    RecordOutcome,
    Reject,
    RejectOutcome,
    SayAs,
    VoiceGender,
    Workflow,
    WorkflowValidationOutcome,
)
from emulator.calling.wire import fields
from emulator.errors import WireError
from emulator.jsonutil import JSON, find_key

Reader = Callable[[JSON], object]

ANSWER: dict[str, JSON] = {"operationId": "a1", "action": "answer"}


def _wf(*actions: JSON, **top: JSON) -> dict[str, JSON]:
    return {"actions": list(actions), **top}


def _result(outcome: JSON, **top: JSON) -> dict[str, JSON]:
    return {"id": "c1", "callState": "established", "operationOutcome": outcome, **top}


def _conversation(**changes: JSON) -> dict[str, JSON]:
    doc: dict[str, JSON] = {
        "id": "c1",
        "participants": [
            {"identity": "user:alice", "originator": True},
            {"identity": "bot:emu", "originator": False},
        ],
        "presentedModalityTypes": ["audio"],
        "isMultiparty": False,
        "callState": "incoming",
    }
    for key, value in changes.items():
        if value is _DELETE:
            del doc[key]
        else:
            doc[key] = value
    return doc


_DELETE: Any = object()


def _outcome(kind: str, **fields: JSON) -> dict[str, JSON]:
    return {"type": kind, "id": "op", "outcome": "success", **fields}


def _record(**fields: JSON) -> dict[str, JSON]:
    return {"operationId": "rec", "action": "record", **fields}


def _recognize(**fields: JSON) -> dict[str, JSON]:
    return {"operationId": "rg", "action": "recognize", **fields}


def _play(*prompts: JSON) -> dict[str, JSON]:
    return {"operationId": "p1", "action": "playPrompt", "prompts": list(prompts)}


# =============================================================================================
# 1. Writing, byte for byte
# =============================================================================================


def test_encode_conversation_one_to_one() -> None:
    conversation = Conversation(
        id="c-1",
        participants=(
            Participant(
                identity="user:alice", display_name="Alice", language_id="en-US", originator=True
            ),
            Participant(identity="bot:emu", originator=False),
        ),
        presented_modality_types=(ModalityType.AUDIO, ModalityType.VIDEO_BASED_SCREEN_SHARING),
        call_state=CallState.INCOMING,
    )
    assert wire.encode(conversation) == (
        b'{"id":"c-1","participants":['
        b'{"identity":"user:alice","displayName":"Alice","languageId":"en-US","originator":true},'
        b'{"identity":"bot:emu","originator":false}],'
        b'"presentedModalityTypes":["audio","videoBasedScreenSharing"],'
        b'"isMultiparty":false,"callState":"incoming"}'
    )


def test_encode_conversation_multiparty_with_links_subject_thread() -> None:
    conversation = Conversation(
        id="c-2",
        participants=(Participant(identity="user:bob", originator=True),),
        presented_modality_types=(ModalityType.AUDIO, ModalityType.VIDEO),
        call_state=CallState.INCOMING,
        is_multiparty=True,
        links={"call": "https://platform.test/calls/c-2"},
        subject="Stand-up",
        thread_id="19:thread",
    )
    assert wire.encode(conversation) == (
        b'{"id":"c-2","participants":[{"identity":"user:bob","originator":true}],'
        b'"presentedModalityTypes":["audio","video"],"isMultiparty":true,"callState":"incoming",'
        b'"links":{"call":"https://platform.test/calls/c-2"},'
        b'"subject":"Stand-up","threadId":"19:thread"}'
    )


def test_encode_conversation_result() -> None:
    result = ConversationResult(
        id="c-1",
        app_id="app-1",
        call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="a1", outcome=Outcome.SUCCESS),
        links={"call": "https://platform.test/calls/c-1"},
        app_state='{"step":2}',
    )
    assert wire.encode(result) == (
        b'{"id":"c-1","appId":"app-1","callState":"established",'
        b'"operationOutcome":{"type":"answerOutcome","id":"a1","outcome":"success"},'
        b'"links":{"call":"https://platform.test/calls/c-1"},'
        rb'"appState":"{\"step\":2}"}'
    )


def test_encode_conversation_result_minimal_omits_nulls() -> None:
    result = ConversationResult(
        id="c-1",
        call_state=CallState.TERMINATED,
        operation_outcome=HangupOutcome(id="h", outcome=Outcome.SUCCESS),
    )
    assert wire.encode(result) == (
        b'{"id":"c-1","callState":"terminated",'
        b'"operationOutcome":{"type":"hangupOutcome","id":"h","outcome":"success"}}'
    )


OUTCOME_BYTES = [
    pytest.param(
        AnswerOutcome(id="a1", outcome=Outcome.SUCCESS),
        b'{"type":"answerOutcome","id":"a1","outcome":"success"}',
        id="answerOutcome",
    ),
    pytest.param(
        RejectOutcome(id="r1", outcome=Outcome.SUCCESS),
        b'{"type":"rejectOutcome","id":"r1","outcome":"success"}',
        id="rejectOutcome",
    ),
    pytest.param(
        HangupOutcome(id="h1", outcome=Outcome.FAILURE, failure_reason="call already ended"),
        b'{"type":"hangupOutcome","id":"h1","outcome":"failure",'
        b'"failureReason":"call already ended"}',
        id="hangupOutcome-failure",
    ),
    pytest.param(
        PlayPromptOutcome(
            id="p1",
            outcome=Outcome.SUCCESS,
            completion_reason=PromptCompletionReason.COMPLETED_SUCCESSFULLY,
        ),
        b'{"type":"playPromptOutcome","id":"p1","outcome":"success",'
        b'"completionReason":"completedSuccessfully"}',
        id="playPromptOutcome",
    ),
    pytest.param(
        RecordOutcome(
            id="rec1",
            outcome=Outcome.SUCCESS,
            completion_reason=RecordingCompletionReason.COMPLETED_STOP_TONE_DETECTED,
            length_of_recording_in_secs=4.25,
            format=RecordingFormat.WMA,
        ),
        b'{"type":"recordOutcome","id":"rec1","outcome":"success",'
        b'"completionReason":"completedStopToneDetected","lengthOfRecordingInSecs":4.25,'
        b'"format":"wma"}',
        id="recordOutcome",
    ),
    pytest.param(
        RecordOutcome(
            id="rec1",
            outcome=Outcome.FAILURE,
            completion_reason=RecordingCompletionReason.INITIAL_SILENCE_TIMEOUT,
            length_of_recording_in_secs=0,
        ),
        b'{"type":"recordOutcome","id":"rec1","outcome":"failure",'
        b'"completionReason":"initialSilenceTimeout","lengthOfRecordingInSecs":0}',
        id="recordOutcome-failure-no-format",
    ),
    pytest.param(
        RecognizeOutcome(
            id="rg1",
            outcome=Outcome.SUCCESS,
            choice_outcome=ChoiceOutcome(
                completion_reason=RecognitionCompletionReason.DTMF_OPTION_MATCHED,
                choice_name="sales",
            ),
        ),
        b'{"type":"recognizeOutcome","id":"rg1","outcome":"success",'
        b'"choiceOutcome":{"completionReason":"dtmfOptionMatched","choiceName":"sales"}}',
        id="recognizeOutcome-choice",
    ),
    pytest.param(
        RecognizeOutcome(
            id="rg1",
            outcome=Outcome.FAILURE,
            choice_outcome=ChoiceOutcome(
                completion_reason=RecognitionCompletionReason.INITIAL_SILENCE_TIMEOUT
            ),
        ),
        b'{"type":"recognizeOutcome","id":"rg1","outcome":"failure",'
        b'"choiceOutcome":{"completionReason":"initialSilenceTimeout"}}',
        id="recognizeOutcome-choice-no-name",
    ),
    pytest.param(
        RecognizeOutcome(
            id="rg2",
            outcome=Outcome.SUCCESS,
            collect_digits_outcome=CollectDigitsOutcome(
                completion_reason=DigitCollectionCompletionReason.COMPLETED_STOP_TONE_DETECTED,
                digits="1234",
            ),
        ),
        b'{"type":"recognizeOutcome","id":"rg2","outcome":"success",'
        b'"collectDigitsOutcome":{"completionReason":"completedStopToneDetected","digits":"1234"}}',
        id="recognizeOutcome-collectDigits",
    ),
    pytest.param(
        WorkflowValidationOutcome(
            id="wf", outcome=Outcome.FAILURE, failure_reason="$.actions: required field is missing"
        ),
        b'{"type":"workflowValidationOutcome","id":"wf","outcome":"failure",'
        b'"failureReason":"$.actions: required field is missing"}',
        id="workflowValidationOutcome",
    ),
]


@pytest.mark.parametrize(("outcome", "expected"), OUTCOME_BYTES)
def test_encode_outcome(outcome: OperationOutcome, expected: bytes) -> None:
    assert wire.encode(outcome) == expected


def test_encode_record_outcome_length_is_rounded_to_milliseconds() -> None:
    outcome = RecordOutcome(
        id="r",
        outcome=Outcome.SUCCESS,
        completion_reason=RecordingCompletionReason.COMPLETED_SILENCE_DETECTED,
        length_of_recording_in_secs=1.23456,
    )
    assert b'"lengthOfRecordingInSecs":1.235' in wire.encode(outcome)


_VALIDATION = WorkflowValidationOutcome(id="wf", outcome=Outcome.FAILURE, failure_reason="bad")


def test_encode_validation_outcome_legacy_spelling_is_an_option() -> None:
    legacy = wire.WireOptions(legacy_validation_outcome_type=True)
    assert wire.encode(_VALIDATION, legacy) == (
        b'{"type":"worfklowValidationOutcome","id":"wf","outcome":"failure","failureReason":"bad"}'
    )
    assert wire.encode(_VALIDATION) == (
        b'{"type":"workflowValidationOutcome","id":"wf","outcome":"failure","failureReason":"bad"}'
    )
    assert wire.encode(_VALIDATION, wire.WireOptions()) == wire.encode(_VALIDATION)


def test_encode_validation_outcome_legacy_spelling_inside_conversation_result() -> None:
    result = ConversationResult(
        id="c", call_state=CallState.ESTABLISHED, operation_outcome=_VALIDATION
    )
    legacy = wire.WireOptions(legacy_validation_outcome_type=True)
    assert wire.encode(result, legacy) == (
        b'{"id":"c","callState":"established","operationOutcome":'
        b'{"type":"worfklowValidationOutcome","id":"wf","outcome":"failure","failureReason":"bad"}}'
    )
    assert b'"type":"workflowValidationOutcome"' in wire.encode(result)


@pytest.mark.parametrize(
    "outcome", [pytest.param(p.values[0], id=p.id) for p in OUTCOME_BYTES[:-1]]
)
def test_legacy_option_changes_no_other_outcome(outcome: OperationOutcome) -> None:
    legacy = wire.WireOptions(legacy_validation_outcome_type=True)
    assert wire.encode(outcome, legacy) == wire.encode(outcome)


def test_legacy_spelling_reads_back_as_validation_outcome() -> None:
    legacy = wire.WireOptions(legacy_validation_outcome_type=True)
    doc = wire.loads(wire.encode(_VALIDATION, legacy))
    assert wire.read_outcome(doc, "$") == _VALIDATION


ACTION_BYTES = [
    pytest.param(Answer(operation_id="a1"), b'{"operationId":"a1","action":"answer"}', id="answer"),
    pytest.param(
        Answer(operation_id="a1", accept_modality_types=(ModalityType.AUDIO, ModalityType.VIDEO)),
        b'{"operationId":"a1","action":"answer","acceptModalityTypes":["audio","video"]}',
        id="answer-modalities",
    ),
    pytest.param(Reject(operation_id="rj"), b'{"operationId":"rj","action":"reject"}', id="reject"),
    pytest.param(Hangup(operation_id="h1"), b'{"operationId":"h1","action":"hangup"}', id="hangup"),
    pytest.param(
        PlayPrompt(
            operation_id="p1",
            prompts=(
                Prompt(
                    value="Héllo ☎",
                    voice=VoiceGender.MALE,
                    culture=Culture.EN_US,
                    silence_length_in_milliseconds=500,
                    emphasize=False,
                    say_as=SayAs.PHONETIC_NAME,
                ),
                Prompt(file_uri="https://bot.test/a.wav"),
                Prompt(silence_length_in_milliseconds=250),
            ),
        ),
        '{"operationId":"p1","action":"playPrompt","prompts":['
        '{"value":"Héllo ☎","voice":"male","culture":"en-US","silenceLengthInMilliseconds":500,'
        '"emphasize":false,"sayAs":"phoneticName"},'
        '{"fileUri":"https://bot.test/a.wav"},{"silenceLengthInMilliseconds":250}]}'.encode(),
        id="playPrompt",
    ),
    pytest.param(
        Record(operation_id="rec"), b'{"operationId":"rec","action":"record"}', id="record-minimal"
    ),
    pytest.param(
        Record(
            operation_id="rec",
            play_prompt=PlayPrompt(operation_id="", prompts=(Prompt(value="After the beep"),)),
            max_duration_in_seconds=60,
            initial_silence_timeout_in_seconds=3,
            max_silence_timeout_in_seconds=2,
            recording_format=RecordingFormat.WMA,
            play_beep=True,
            stop_tones=("#", "*"),
        ),
        b'{"operationId":"rec","action":"record",'
        b'"playPrompt":{"action":"playPrompt","prompts":[{"value":"After the beep"}]},'
        b'"maxDurationInSeconds":60,"initialSilenceTimeoutInSeconds":3,'
        b'"maxSilenceTimeoutInSeconds":2,"recordingFormat":"wma","playBeep":true,'
        b'"stopTones":["#","*"]}',
        id="record-full",
    ),
    pytest.param(
        Recognize(
            operation_id="rg",
            play_prompt=PlayPrompt(
                operation_id="pp",
                prompts=(Prompt(value="Say sales or press 1", voice=VoiceGender.FEMALE),),
            ),
            barge_in_allowed=False,
            culture=Culture.EN_US,
            initial_silence_timeout_in_seconds=5,
            interdigit_timeout_in_seconds=1.5,
            choices=(
                RecognitionOption(
                    name="sales", speech_variation=("sales", "buy"), dtmf_variation="1"
                ),
                RecognitionOption(name="operator", speech_variation=("operator",)),
            ),
        ),
        b'{"operationId":"rg","action":"recognize",'
        b'"playPrompt":{"operationId":"pp","action":"playPrompt",'
        b'"prompts":[{"value":"Say sales or press 1","voice":"female"}]},'
        b'"bargeInAllowed":false,"culture":"en-US","initialSilenceTimeoutInSeconds":5,'
        b'"interdigitTimeoutInSeconds":1.5,"choices":['
        b'{"name":"sales","speechVariation":["sales","buy"],"dtmfVariation":"1"},'
        b'{"name":"operator","speechVariation":["operator"]}]}',
        id="recognize-choices",
    ),
    pytest.param(
        Recognize(
            operation_id="cd",
            collect_digits=CollectDigits(max_number_of_dtmfs=4, stop_tones=("#",)),
        ),
        b'{"operationId":"cd","action":"recognize",'
        b'"collectDigits":{"maxNumberOfDtmfs":4,"stopTones":["#"]}}',
        id="recognize-collectDigits",
    ),
]


@pytest.mark.parametrize(("action", "expected"), ACTION_BYTES)
def test_encode_action(action: Action, expected: bytes) -> None:
    assert wire.encode(action) == expected


def test_encode_workflow_with_every_action() -> None:
    workflow = Workflow(
        actions=tuple(p.values[0] for p in ACTION_BYTES),
        links={"callback": "https://bot.test/cb"},
        app_state='{"n":"é"}',
        notification_subscriptions=(NotificationType.CALL_STATE_CHANGE,),
    )
    actions = b",".join(p.values[1] for p in ACTION_BYTES)
    assert wire.encode(workflow) == (
        b'{"actions":['
        + actions
        + b'],"links":{"callback":"https://bot.test/cb"},'
        + '"appState":"{\\"n\\":\\"é\\"}",'.encode()
        + b'"notificationSubscriptions":["callStateChange"]}'
    )
    kinds = {type(a) for a in workflow.actions}
    assert kinds == {Answer, Reject, Record, PlayPrompt, Recognize, Hangup}


def test_encode_workflow_with_call_state() -> None:
    workflow = Workflow(actions=(Hangup(operation_id="h"),), call_state=CallState.ESTABLISHED)
    assert wire.encode(workflow) == (
        b'{"actions":[{"operationId":"h","action":"hangup"}],"callState":"established"}'
    )


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        pytest.param(Prompt(value="Hi"), b'{"value":"Hi"}', id="value-only"),
        pytest.param(Prompt(), b"{}", id="empty"),
        pytest.param(
            Prompt(value="2017-03-04", say_as=SayAs.YEAR_MONTH_DAY, emphasize=True),
            b'{"value":"2017-03-04","emphasize":true,"sayAs":"yearMonthDay"}',
            id="sayAs",
        ),
        pytest.param(
            Prompt(file_uri="https://bot.test/x.wma", voice=VoiceGender.FEMALE),
            b'{"fileUri":"https://bot.test/x.wma","voice":"female"}',
            id="fileUri",
        ),
        pytest.param(
            Prompt(value='naïve 日本 \U0001f600 "q" \\ \n'),
            '{"value":"naïve 日本 \U0001f600 \\"q\\" \\\\ \\n"}'.encode(),
            id="utf8-not-ascii-escaped",
        ),
    ],
)
def test_encode_prompt(prompt: Prompt, expected: bytes) -> None:
    body = wire.encode(PlayPrompt(operation_id="p", prompts=(prompt,)))
    assert body == b'{"operationId":"p","action":"playPrompt","prompts":[' + expected + b"]}"


def test_encode_is_utf8_without_ascii_escapes() -> None:
    body = wire.encode(PlayPrompt(operation_id="p", prompts=(Prompt(value="é☎😀"),)))
    assert b"\\u" not in body
    assert "é☎😀".encode() in body
    body.decode("utf-8")


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        pytest.param(
            RecognitionOption(name="a", dtmf_variation="1"),
            b'{"name":"a","dtmfVariation":"1"}',
            id="one-key",
        ),
        pytest.param(
            RecognitionOption(name="a", dtmf_variation="12"),
            b'{"name":"a","dtmfVariation":["1","2"]}',
            id="key-sequence",
        ),
        pytest.param(
            RecognitionOption(name="a", speech_variation=("yes", "yeah")),
            b'{"name":"a","speechVariation":["yes","yeah"]}',
            id="speech",
        ),
        pytest.param(
            RecognitionOption(name="a", speech_variation=("x",), dtmf_variation="#"),
            b'{"name":"a","speechVariation":["x"],"dtmfVariation":"#"}',
            id="both",
        ),
    ],
)
def test_encode_recognition_option(option: RecognitionOption, expected: bytes) -> None:
    body = wire.encode(Recognize(operation_id="g", choices=(option,)))
    assert body == b'{"operationId":"g","action":"recognize","choices":[' + expected + b"]}"


@pytest.mark.parametrize(
    ("collect", "expected"),
    [
        pytest.param(CollectDigits(), b"{}", id="empty"),
        pytest.param(CollectDigits(max_number_of_dtmfs=10), b'{"maxNumberOfDtmfs":10}', id="max"),
        pytest.param(
            CollectDigits(stop_tones=("#", "*")), b'{"stopTones":["#","*"]}', id="stop-tones"
        ),
        pytest.param(
            CollectDigits(max_number_of_dtmfs=3, stop_tones=(), extra={"future": 1}),
            b'{"maxNumberOfDtmfs":3,"stopTones":[],"future":1}',
            id="empty-tones-and-extra",
        ),
    ],
)
def test_encode_collect_digits(collect: CollectDigits, expected: bytes) -> None:
    body = wire.encode(Recognize(operation_id="g", collect_digits=collect))
    assert body == b'{"operationId":"g","action":"recognize","collectDigits":' + expected + b"}"


def test_encode_writes_extra_after_known_fields() -> None:
    workflow = Workflow(
        actions=(Answer(operation_id="a", extra={"futureFlag": True}),),
        extra={"futureList": [1, "x"]},
    )
    assert wire.encode(workflow) == (
        b'{"actions":[{"operationId":"a","action":"answer","futureFlag":true}],'
        b'"futureList":[1,"x"]}'
    )


def test_to_json_is_what_encode_writes() -> None:
    workflow = Workflow(actions=(Answer(operation_id="a"),), app_state="s")
    assert wire.to_json(workflow) == json.loads(wire.encode(workflow))


def test_encode_never_writes_null_for_absent_fields() -> None:
    messages: list[wire.Message] = [
        Workflow(
            actions=(
                Record(
                    operation_id="r", play_prompt=PlayPrompt(operation_id="", prompts=(Prompt(),))
                ),
                Recognize(
                    operation_id="g",
                    choices=(RecognitionOption(name="n"),),
                    collect_digits=CollectDigits(),
                ),
            )
        ),
        ConversationResult(
            id="c",
            call_state=CallState.ESTABLISHED,
            operation_outcome=RecognizeOutcome(
                id="g",
                outcome=Outcome.FAILURE,
                choice_outcome=ChoiceOutcome(
                    completion_reason=RecognitionCompletionReason.CALL_TERMINATED
                ),
                collect_digits_outcome=CollectDigitsOutcome(
                    completion_reason=DigitCollectionCompletionReason.CALL_TERMINATED
                ),
            ),
        ),
        Conversation(
            id="c",
            participants=(Participant(identity="u:x", originator=True),),
            presented_modality_types=(),
            call_state=CallState.INCOMING,
        ),
    ]
    for message in messages:
        body = wire.encode(message)
        assert b"null" not in body
        assert b", " not in body and b": " not in body


# =============================================================================================
# 2. Reading
# =============================================================================================


def test_read_names_and_enum_values_case_insensitively() -> None:
    doc: JSON = {
        "Actions": [
            {"ACTION": "Answer", "OperationID": "a", "acceptmodalitytypes": ["AUDIO"]},
            {
                "action": "PLAYPROMPT",
                "operationId": "p",
                "PROMPTS": [
                    {"Value": "hi", "VOICE": "Female", "Culture": "EnUs", "SAYAS": "TELEPHONE"}
                ],
            },
            {"Action": "hangup", "operationid": "h"},
        ],
        "LINKS": {"CallBack": "https://bot.test/cb"},
        "AppState": "s",
        "callState": "INCOMING",
        "NotificationSubscriptions": ["CALLSTATECHANGE"],
    }
    assert wire.read_workflow(doc) == Workflow(
        actions=(
            Answer(operation_id="a", accept_modality_types=(ModalityType.AUDIO,)),
            PlayPrompt(
                operation_id="p",
                prompts=(
                    Prompt(
                        value="hi",
                        voice=VoiceGender.FEMALE,
                        culture=Culture.EN_US,
                        say_as=SayAs.TELEPHONE,
                    ),
                ),
            ),
            Hangup(operation_id="h"),
        ),
        links={"callback": "https://bot.test/cb"},
        app_state="s",
        call_state=CallState.INCOMING,
        notification_subscriptions=(NotificationType.CALL_STATE_CHANGE,),
    )


def test_exact_name_wins_over_a_case_folded_one() -> None:
    workflow = wire.read_workflow(_wf(ANSWER, appState="exact", APPSTATE="folded"))
    assert workflow.app_state == "exact"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("en-US", id="en-US"),
        pytest.param("en-us", id="en-us"),
        pytest.param("EN-US", id="EN-US"),
        pytest.param("EnUs", id="EnUs"),
        pytest.param("enus", id="enus"),
    ],
)
def test_read_culture_spellings(raw: str) -> None:
    workflow = wire.read_workflow(
        _wf(
            ANSWER,
            _recognize(
                culture=raw,
                playPrompt={"prompts": [{"value": "x", "culture": raw}]},
                choices=[{"name": "a", "dtmfVariation": "1"}],
            ),
        )
    )
    recognize = workflow.actions[1]
    assert isinstance(recognize, Recognize)
    assert recognize.culture is Culture.EN_US
    assert recognize.play_prompt is not None
    assert recognize.play_prompt.prompts[0].culture is Culture.EN_US


def test_read_conversation_case_insensitive() -> None:
    doc: JSON = {
        "ID": "c1",
        "Participants": [{"Identity": "user:a", "ORIGINATOR": True, "DisplayName": "A"}],
        "PresentedModalityTypes": ["Audio", "VideoBasedScreenSharing"],
        "ISMULTIPARTY": True,
        "CallState": "INCOMING",
        "Links": {"CALL": "https://p.test/c1"},
        "Subject": "s",
        "ThreadId": "t",
    }
    assert wire.read_conversation(doc) == Conversation(
        id="c1",
        participants=(Participant(identity="user:a", originator=True, display_name="A"),),
        presented_modality_types=(ModalityType.AUDIO, ModalityType.VIDEO_BASED_SCREEN_SHARING),
        is_multiparty=True,
        call_state=CallState.INCOMING,
        links={"call": "https://p.test/c1"},
        subject="s",
        thread_id="t",
    )


def test_read_conversation_is_multiparty_defaults_false() -> None:
    assert wire.read_conversation(_conversation(isMultiparty=_DELETE)).is_multiparty is False


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        pytest.param(
            {
                "Type": "RecognizeOutcome",
                "ID": "g",
                "Outcome": "Success",
                "ChoiceOutcome": {"CompletionReason": "DtmfOptionMatched", "ChoiceName": "sales"},
            },
            RecognizeOutcome(
                id="g",
                outcome=Outcome.SUCCESS,
                choice_outcome=ChoiceOutcome(
                    completion_reason=RecognitionCompletionReason.DTMF_OPTION_MATCHED,
                    choice_name="sales",
                ),
            ),
            id="recognize-pascal",
        ),
        pytest.param(
            {
                "TYPE": "RECORDOUTCOME",
                "id": "r",
                "outcome": "FAILURE",
                "completionReason": "INITIALSILENCETIMEOUT",
                "lengthOfRecordingInSecs": 0,
                "FORMAT": "WMA",
            },
            RecordOutcome(
                id="r",
                outcome=Outcome.FAILURE,
                completion_reason=RecordingCompletionReason.INITIAL_SILENCE_TIMEOUT,
                length_of_recording_in_secs=0.0,
                format=RecordingFormat.WMA,
            ),
            id="record-upper",
        ),
        pytest.param(
            {"type": "WorkflowValidationOutcome", "id": "w", "outcome": "failure"},
            WorkflowValidationOutcome(id="w", outcome=Outcome.FAILURE),
            id="validation-pascal",
        ),
        pytest.param(
            {
                "type": "worfklowValidationOutcome",
                "id": "w",
                "outcome": "failure",
                "failureReason": "bad",
            },
            WorkflowValidationOutcome(id="w", outcome=Outcome.FAILURE, failure_reason="bad"),
            id="validation-legacy-spelling",
        ),
        pytest.param(
            {
                "type": "recognizeOutcome",
                "id": "g",
                "outcome": "success",
                "collectDigitsOutcome": {
                    "completionReason": "completedStopToneDetected",
                    "digits": "1234",
                },
            },
            RecognizeOutcome(
                id="g",
                outcome=Outcome.SUCCESS,
                collect_digits_outcome=CollectDigitsOutcome(
                    completion_reason=DigitCollectionCompletionReason.COMPLETED_STOP_TONE_DETECTED,
                    digits="1234",
                ),
            ),
            id="digits-string",
        ),
        pytest.param(
            {
                "type": "recognizeOutcome",
                "id": "g",
                "outcome": "success",
                "collectDigitsOutcome": {
                    "completionReason": "interdigitTimeout",
                    "digits": ["1", "2"],
                },
            },
            RecognizeOutcome(
                id="g",
                outcome=Outcome.SUCCESS,
                collect_digits_outcome=CollectDigitsOutcome(
                    completion_reason=DigitCollectionCompletionReason.INTERDIGIT_TIMEOUT,
                    digits="12",
                ),
            ),
            id="digits-array",
        ),
    ],
)
def test_read_outcome(outcome: JSON, expected: OperationOutcome) -> None:
    result = wire.read_conversation_result(_result(outcome))
    assert result.operation_outcome == expected


def test_read_conversation_result_fields() -> None:
    doc = _result(
        _outcome("answerOutcome"),
        appId="app",
        links={"call": "https://p.test/c1", "callback": None},
        appState="st",
    )
    assert wire.read_conversation_result(doc) == ConversationResult(
        id="c1",
        app_id="app",
        call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="op", outcome=Outcome.SUCCESS),
        links={"call": "https://p.test/c1"},
        app_state="st",
    )


NOT_UNDERSTOOD_CASES = [
    pytest.param(
        wire.read_conversation,
        _conversation(callState="onHoldForever"),
        lambda c: c.call_state,
        CallState.NOT_UNDERSTOOD,
        id="conversation-callState",
    ),
    pytest.param(
        wire.read_conversation,
        _conversation(presentedModalityTypes=["audio", "hologram"]),
        lambda c: c.presented_modality_types,
        (ModalityType.AUDIO, ModalityType.NOT_UNDERSTOOD),
        id="conversation-modality",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(_outcome("answerOutcome"), callState="onHoldForever"),
        lambda r: r.call_state,
        CallState.NOT_UNDERSTOOD,
        id="result-callState",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(ANSWER, callState="onHoldForever"),
        lambda w: w.call_state,
        CallState.NOT_UNDERSTOOD,
        id="workflow-callState",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(ANSWER, notificationSubscriptions=["callStateChange", "callEnded"]),
        lambda w: w.notification_subscriptions,
        (NotificationType.CALL_STATE_CHANGE, NotificationType.NOT_UNDERSTOOD),
        id="workflow-notificationSubscriptions",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(_record(recordingFormat="ogg")),
        lambda w: w.actions[0].recording_format,
        RecordingFormat.NOT_UNDERSTOOD,
        id="record-recordingFormat",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(_play({"value": "x", "voice": "robot"})),
        lambda w: w.actions[0].prompts[0].voice,
        VoiceGender.NOT_UNDERSTOOD,
        id="prompt-voice",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(_play({"value": "x", "culture": "fr-FR"})),
        lambda w: w.actions[0].prompts[0].culture,
        Culture.NOT_UNDERSTOOD,
        id="prompt-culture",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(_play({"value": "x", "sayAs": "emoji"})),
        lambda w: w.actions[0].prompts[0].say_as,
        SayAs.NOT_UNDERSTOOD,
        id="prompt-sayAs",
    ),
    pytest.param(
        wire.read_workflow,
        _wf({"operationId": "a", "action": "answer", "acceptModalityTypes": ["smell"]}),
        lambda w: w.actions[0].accept_modality_types,
        (ModalityType.NOT_UNDERSTOOD,),
        id="answer-acceptModalityTypes",
    ),
    pytest.param(
        wire.read_workflow,
        _wf(_recognize(culture="de-DE", choices=[])),
        lambda w: w.actions[0].culture,
        Culture.NOT_UNDERSTOOD,
        id="recognize-culture",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(_outcome("answerOutcome", outcome="maybe")),
        lambda r: r.operation_outcome.outcome,
        Outcome.NOT_UNDERSTOOD,
        id="outcome-outcome",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(_outcome("playPromptOutcome", completionReason="alienAbduction")),
        lambda r: r.operation_outcome.completion_reason,
        PromptCompletionReason.NOT_UNDERSTOOD,
        id="playPromptOutcome-completionReason",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(
            _outcome(
                "recordOutcome",
                completionReason="alienAbduction",
                lengthOfRecordingInSecs=1,
                format="flac",
            )
        ),
        lambda r: (r.operation_outcome.completion_reason, r.operation_outcome.format),
        (RecordingCompletionReason.NOT_UNDERSTOOD, RecordingFormat.NOT_UNDERSTOOD),
        id="recordOutcome-completionReason-format",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(_outcome("recognizeOutcome", choiceOutcome={"completionReason": "telepathy"})),
        lambda r: r.operation_outcome.choice_outcome.completion_reason,
        RecognitionCompletionReason.NOT_UNDERSTOOD,
        id="choiceOutcome-completionReason",
    ),
    pytest.param(
        wire.read_conversation_result,
        _result(
            _outcome("recognizeOutcome", collectDigitsOutcome={"completionReason": "telepathy"})
        ),
        lambda r: r.operation_outcome.collect_digits_outcome.completion_reason,
        DigitCollectionCompletionReason.NOT_UNDERSTOOD,
        id="collectDigitsOutcome-completionReason",
    ),
]


@pytest.mark.parametrize(("reader", "doc", "get", "expected"), NOT_UNDERSTOOD_CASES)
def test_unknown_enum_values_read_as_not_understood(
    reader: Reader, doc: JSON, get: Callable[[Any], object], expected: object
) -> None:
    assert get(reader(doc)) == expected


def test_unknown_fields_are_kept_in_extra_at_every_level() -> None:
    doc: JSON = {
        "actions": [
            {"operationId": "a", "action": "answer", "xAnswer": 1, "prompts": "not answer's"},
            {
                "operationId": "p",
                "action": "playPrompt",
                "xPlay": [1, 2],
                "prompts": [{"value": "hi", "xPrompt": {"deep": None}}],
            },
            {
                "operationId": "r",
                "action": "record",
                "xRecord": "r",
                "playPrompt": {"prompts": [{"value": "beep", "xNestedPrompt": 2}], "xNested": 3},
            },
            {
                "operationId": "g",
                "action": "recognize",
                "stopTones": ["#"],
                "choices": [{"name": "c", "dtmfVariation": "1", "xChoice": True}],
                "collectDigits": {"maxNumberOfDtmfs": 2, "xCollect": "c"},
            },
            {"operationId": "h", "action": "hangup", "xHangup": None},
        ],
        "xWorkflow": {"any": ["thing"]},
    }
    workflow = wire.read_workflow(doc)
    answer, play, record, recognize, hangup = workflow.actions
    assert isinstance(play, PlayPrompt)
    assert isinstance(record, Record) and record.play_prompt is not None
    assert isinstance(recognize, Recognize) and recognize.choices is not None
    assert recognize.collect_digits is not None
    assert workflow.extra == {"xWorkflow": {"any": ["thing"]}}
    assert answer.extra == {"xAnswer": 1, "prompts": "not answer's"}
    assert play.extra == {"xPlay": [1, 2]}
    assert play.prompts[0].extra == {"xPrompt": {"deep": None}}
    assert record.extra == {"xRecord": "r"}
    assert record.play_prompt.extra == {"xNested": 3}
    assert record.play_prompt.prompts[0].extra == {"xNestedPrompt": 2}
    assert recognize.extra == {"stopTones": ["#"]}
    assert recognize.choices[0].extra == {"xChoice": True}
    assert recognize.collect_digits.extra == {"xCollect": "c"}
    assert hangup.extra == {"xHangup": None}


def test_unknown_fields_in_conversation_and_result_are_kept_in_extra() -> None:
    conversation = wire.read_conversation(
        _conversation(
            xTop=1,
            participants=[{"identity": "u:a", "originator": True, "xParticipant": "p"}],
        )
    )
    assert conversation.extra == {"xTop": 1}
    assert conversation.participants[0].extra == {"xParticipant": "p"}

    result = wire.read_conversation_result(
        _result(
            _outcome(
                "recognizeOutcome",
                xOutcome=[True],
                choiceOutcome={"completionReason": "speechOptionMatched", "xChoice": 1},
                collectDigitsOutcome={"completionReason": "interdigitTimeout", "xDigits": 2},
            ),
            xResult="r",
        )
    )
    outcome = result.operation_outcome
    assert isinstance(outcome, RecognizeOutcome)
    assert outcome.choice_outcome is not None and outcome.collect_digits_outcome is not None
    assert result.extra == {"xResult": "r"}
    assert outcome.extra == {"xOutcome": [True]}
    assert outcome.choice_outcome.extra == {"xChoice": 1}
    assert outcome.collect_digits_outcome.extra == {"xDigits": 2}


def test_known_fields_are_not_in_extra_whatever_their_case() -> None:
    workflow = wire.read_workflow({"ACTIONS": [{"ACTION": "answer", "OPERATIONID": "a"}]})
    assert workflow.extra == {}
    assert workflow.actions[0].extra == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("#", ("#",), id="bare-string"),
        pytest.param("#*", ("#", "*"), id="bare-string-two"),
        pytest.param(["#"], ("#",), id="array"),
        pytest.param([], (), id="empty-array"),
        pytest.param(True, tuple(DTMF_KEYS), id="true-all-keys"),
        pytest.param(False, (), id="false-none"),
        pytest.param(None, None, id="null-absent"),
    ],
)
def test_read_record_stop_tones(raw: JSON, expected: tuple[str, ...] | None) -> None:
    record = wire.read_workflow(_wf(_record(stopTones=raw))).actions[0]
    assert isinstance(record, Record)
    assert record.stop_tones == expected


def test_record_stop_tones_true_is_all_sixteen_keys() -> None:
    record = wire.read_workflow(_wf(_record(stopTones=True))).actions[0]
    assert isinstance(record, Record)
    assert record.stop_tones is not None
    assert sorted(record.stop_tones) == sorted("0123456789*#ABCD")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("#", ("#",), id="bare-string"),
        pytest.param(["#", "*"], ("#", "*"), id="array"),
    ],
)
def test_read_collect_digits_stop_tones(raw: JSON, expected: tuple[str, ...]) -> None:
    recognize = wire.read_workflow(
        _wf(_recognize(collectDigits={"maxNumberOfDtmfs": 4, "stopTones": raw}))
    ).actions[0]
    assert isinstance(recognize, Recognize)
    assert recognize.collect_digits == CollectDigits(max_number_of_dtmfs=4, stop_tones=expected)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("1", "1", id="string"),
        pytest.param(["1"], "1", id="array-one"),
        pytest.param(["1", "2"], "12", id="array-sequence"),
        pytest.param("12", "12", id="string-sequence"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_read_dtmf_variation(raw: JSON, expected: str | None) -> None:
    recognize = wire.read_workflow(
        _wf(_recognize(choices=[{"name": "c", "dtmfVariation": raw}]))
    ).actions[0]
    assert isinstance(recognize, Recognize) and recognize.choices is not None
    assert recognize.choices[0].dtmf_variation == expected


@pytest.mark.parametrize(
    "nested",
    [
        pytest.param({"prompts": [{"value": "x"}]}, id="no-operationId-no-action"),
        pytest.param({"action": "playPrompt", "prompts": [{"value": "x"}]}, id="no-operationId"),
        pytest.param({"action": "PLAYPROMPT", "prompts": [{"value": "x"}]}, id="action-upper"),
        pytest.param({"action": None, "prompts": [{"value": "x"}]}, id="action-null"),
    ],
)
@pytest.mark.parametrize(
    "outer", [pytest.param(_record, id="record"), pytest.param(_recognize, id="recognize")]
)
def test_nested_play_prompt_without_operation_id(
    nested: dict[str, JSON], outer: Callable[..., dict[str, JSON]]
) -> None:
    action = wire.read_workflow(_wf(outer(playPrompt=nested))).actions[0]
    assert isinstance(action, Record | Recognize)
    assert action.play_prompt == PlayPrompt(operation_id="", prompts=(Prompt(value="x"),))


def test_nested_play_prompt_keeps_its_operation_id() -> None:
    action = wire.read_workflow(
        _wf(_record(playPrompt={"operationId": "np", "prompts": [{"value": "x"}]}))
    ).actions[0]
    assert isinstance(action, Record) and action.play_prompt is not None
    assert action.play_prompt.operation_id == "np"


def test_integral_floats_read_as_integers() -> None:
    record = wire.read_workflow(_wf(_record(maxDurationInSeconds=60.0))).actions[0]
    assert isinstance(record, Record)
    assert record.max_duration_in_seconds == 60
    assert isinstance(record.max_duration_in_seconds, int)


def test_recognize_timeouts_are_decimals() -> None:
    recognize = wire.read_workflow(
        _wf(
            _recognize(initialSilenceTimeoutInSeconds=2.5, interdigitTimeoutInSeconds=1, choices=[])
        )
    ).actions[0]
    assert isinstance(recognize, Recognize)
    assert recognize.initial_silence_timeout_in_seconds == 2.5
    assert recognize.interdigit_timeout_in_seconds == 1.0


def test_explicit_nulls_read_as_absent() -> None:
    workflow = wire.read_workflow(
        _wf(
            {
                "operationId": "p",
                "action": "playPrompt",
                "prompts": [{"value": "x", "voice": None, "fileUri": None}],
            },
            links=None,
            appState=None,
            callState=None,
            notificationSubscriptions=None,
        )
    )
    assert workflow == Workflow(
        actions=(PlayPrompt(operation_id="p", prompts=(Prompt(value="x"),)),)
    )


def test_links_are_canonicalised_and_other_keys_kept() -> None:
    workflow = wire.read_workflow(
        _wf(ANSWER, links={"CALLBACK": "https://bot.test/cb", "Other": "https://o.test", "x": None})
    )
    assert workflow.links == {"callback": "https://bot.test/cb", "Other": "https://o.test"}
    assert workflow.callback == "https://bot.test/cb"


def test_parse_workflow_accepts_bytes_and_text() -> None:
    text = '{"actions":[{"operationId":"a","action":"answer"}],"appState":"é"}'
    expected = Workflow(actions=(Answer(operation_id="a"),), app_state="é")
    assert wire.parse_workflow(text) == expected
    assert wire.parse_workflow(text.encode()) == expected


APP_STATE_DOC = {
    "cart": ["café", "☎", "日本語", "\U0001f600"],
    "quote": 'a "quoted" \\ back\\slash / slash',
    "controls": "\t\n\r\b\f\u0001\u001f",
    "nested": {"n": 1.5, "list": [None, True, False]},
    "escaped": "\u00e9\u2028\u2029",
}


@pytest.mark.parametrize(
    "ensure_ascii",
    [pytest.param(True, id="bot-escapes-non-ascii"), pytest.param(False, id="bot-sends-utf8")],
)
def test_app_state_is_echoed_unchanged(ensure_ascii: bool) -> None:
    app_state = json.dumps(APP_STATE_DOC, ensure_ascii=ensure_ascii)
    body = json.dumps(
        {"actions": [ANSWER], "appState": app_state}, ensure_ascii=ensure_ascii
    ).encode()
    workflow = wire.parse_workflow(body)
    assert workflow.app_state == app_state

    result = ConversationResult(
        id="c1",
        call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="a1", outcome=Outcome.SUCCESS),
        app_state=workflow.app_state,
    )
    sent = wire.encode(result)
    echoed = wire.read_conversation_result(wire.loads(sent)).app_state
    assert echoed == app_state
    assert echoed is not None and json.loads(echoed) == APP_STATE_DOC
    # The string value is written with JSON string escaping only: the bot's bytes of the value,
    # decoded, are exactly the bytes of the value botemu sends, decoded.
    sent_value = json.loads(sent)["appState"]
    assert sent_value.encode("utf-8") == app_state.encode("utf-8")


# =============================================================================================
# 3. Errors
# =============================================================================================

RW = wire.read_workflow
RC = wire.read_conversation
RR = wire.read_conversation_result

ERROR_CASES = [
    # --- Workflow: top level
    pytest.param(RW, [], "$", id="wf-root-array"),
    pytest.param(RW, "x", "$", id="wf-root-string"),
    pytest.param(RW, None, "$", id="wf-root-null"),
    pytest.param(RW, 3, "$", id="wf-root-number"),
    pytest.param(RW, {}, "$.actions", id="wf-actions-missing"),
    pytest.param(RW, {"actions": None}, "$.actions", id="wf-actions-null"),
    pytest.param(RW, {"actions": {}}, "$.actions", id="wf-actions-object"),
    pytest.param(RW, {"actions": "answer"}, "$.actions", id="wf-actions-string"),
    pytest.param(RW, _wf(ANSWER, 3), "$.actions[1]", id="wf-action-not-object"),
    pytest.param(RW, _wf(ANSWER, links=[]), "$.links", id="wf-links-array"),
    pytest.param(RW, _wf(ANSWER, links={"callback": 1}), "$.links.callback", id="wf-links-callback-number"),
    pytest.param(RW, _wf(ANSWER, links={"my link": True}), '$.links["my link"]', id="wf-links-odd-key"),
    pytest.param(RW, _wf(ANSWER, appState={}), "$.appState", id="wf-appState-object"),
    pytest.param(RW, _wf(ANSWER, callState=1), "$.callState", id="wf-callState-number"),
    pytest.param(RW, _wf(ANSWER, notificationSubscriptions="callStateChange"), "$.notificationSubscriptions", id="wf-subscriptions-string"),
    pytest.param(RW, _wf(ANSWER, notificationSubscriptions=["callStateChange", None]), "$.notificationSubscriptions[1]", id="wf-subscriptions-null-item"),
    # --- Actions: common
    pytest.param(RW, _wf({"action": "answer"}), "$.actions[0].operationId", id="action-operationId-missing"),
    pytest.param(RW, _wf({"action": "answer", "operationId": None}), "$.actions[0].operationId", id="action-operationId-null"),
    pytest.param(RW, _wf(ANSWER, {"action": "hangup", "operationId": 7}), "$.actions[1].operationId", id="action-operationId-number"),
    pytest.param(RW, _wf({"operationId": "x"}), "$.actions[0].action", id="action-missing"),
    pytest.param(RW, _wf({"operationId": "x", "action": "transfer"}), "$.actions[0].action", id="action-unknown"),
    pytest.param(RW, _wf(ANSWER, {"operationId": "x", "action": "notUnderstood"}), "$.actions[1].action", id="action-notUnderstood"),
    pytest.param(RW, _wf({"operationId": "x", "action": 5}), "$.actions[0].action", id="action-number"),
    pytest.param(RW, _wf({"operationId": "x", "action": ["answer"]}), "$.actions[0].action", id="action-array"),
    # --- answer
    pytest.param(RW, _wf({"operationId": "a", "action": "answer", "acceptModalityTypes": "audio"}), "$.actions[0].acceptModalityTypes", id="answer-modalities-string"),
    pytest.param(RW, _wf({"operationId": "a", "action": "answer", "acceptModalityTypes": [1]}), "$.actions[0].acceptModalityTypes[0]", id="answer-modality-number"),
    # --- playPrompt and prompts
    pytest.param(RW, _wf(ANSWER, _play({"value": 42})), "$.actions[1].prompts[0].value", id="prompt-value-number"),
    pytest.param(RW, _wf({"operationId": "p", "action": "playPrompt"}), "$.actions[0].prompts", id="playPrompt-prompts-missing"),
    pytest.param(RW, _wf({"operationId": "p", "action": "playPrompt", "prompts": {}}), "$.actions[0].prompts", id="playPrompt-prompts-object"),
    pytest.param(RW, _wf(_play({"value": "a"}, "b")), "$.actions[0].prompts[1]", id="prompt-not-object"),
    pytest.param(RW, _wf(_play({"fileUri": True})), "$.actions[0].prompts[0].fileUri", id="prompt-fileUri-bool"),
    pytest.param(RW, _wf(_play({"value": "a", "voice": 1})), "$.actions[0].prompts[0].voice", id="prompt-voice-number"),
    pytest.param(RW, _wf(_play({"value": "a", "culture": ["en-US"]})), "$.actions[0].prompts[0].culture", id="prompt-culture-array"),
    pytest.param(RW, _wf(_play({"value": "a", "silenceLengthInMilliseconds": 1.5})), "$.actions[0].prompts[0].silenceLengthInMilliseconds", id="prompt-silence-fraction"),
    pytest.param(RW, _wf(_play({"value": "a", "silenceLengthInMilliseconds": "500"})), "$.actions[0].prompts[0].silenceLengthInMilliseconds", id="prompt-silence-string"),
    pytest.param(RW, _wf(_play({"value": "a", "silenceLengthInMilliseconds": True})), "$.actions[0].prompts[0].silenceLengthInMilliseconds", id="prompt-silence-bool"),
    pytest.param(RW, _wf(_play({"value": "a", "emphasize": "yes"})), "$.actions[0].prompts[0].emphasize", id="prompt-emphasize-string"),
    pytest.param(RW, _wf(_play({"value": "a", "sayAs": []})), "$.actions[0].prompts[0].sayAs", id="prompt-sayAs-array"),
    # --- record
    pytest.param(RW, _wf(_record(playPrompt="hello")), "$.actions[0].playPrompt", id="record-playPrompt-string"),
    pytest.param(RW, _wf(_record(playPrompt={"action": "answer", "prompts": []})), "$.actions[0].playPrompt.action", id="record-playPrompt-wrong-action"),
    pytest.param(RW, _wf(_record(playPrompt={"action": "teleport", "prompts": []})), "$.actions[0].playPrompt.action", id="record-playPrompt-unknown-action"),
    pytest.param(RW, _wf(_record(playPrompt={"action": 1, "prompts": []})), "$.actions[0].playPrompt.action", id="record-playPrompt-action-number"),
    pytest.param(RW, _wf(_record(playPrompt={"operationId": 1, "prompts": []})), "$.actions[0].playPrompt.operationId", id="record-playPrompt-operationId-number"),
    pytest.param(RW, _wf(_record(playPrompt={})), "$.actions[0].playPrompt.prompts", id="record-playPrompt-prompts-missing"),
    pytest.param(RW, _wf(_record(playPrompt={"prompts": [{"value": "a", "culture": 1}]})), "$.actions[0].playPrompt.prompts[0].culture", id="record-nested-prompt-culture"),
    pytest.param(RW, _wf(_record(maxDurationInSeconds=1.5)), "$.actions[0].maxDurationInSeconds", id="record-maxDuration-fraction"),
    pytest.param(RW, _wf(_record(maxDurationInSeconds="60")), "$.actions[0].maxDurationInSeconds", id="record-maxDuration-string"),
    pytest.param(RW, _wf(_record(initialSilenceTimeoutInSeconds=False)), "$.actions[0].initialSilenceTimeoutInSeconds", id="record-initialSilence-bool"),
    pytest.param(RW, _wf(_record(maxSilenceTimeoutInSeconds=[])), "$.actions[0].maxSilenceTimeoutInSeconds", id="record-maxSilence-array"),
    pytest.param(RW, _wf(_record(recordingFormat=3)), "$.actions[0].recordingFormat", id="record-format-number"),
    pytest.param(RW, _wf(_record(playBeep="true")), "$.actions[0].playBeep", id="record-playBeep-string"),
    pytest.param(RW, _wf(_record(stopTones=5)), "$.actions[0].stopTones", id="record-stopTones-number"),
    pytest.param(RW, _wf(_record(stopTones={"#": True})), "$.actions[0].stopTones", id="record-stopTones-object"),
    pytest.param(RW, _wf(_record(stopTones=["#", 1])), "$.actions[0].stopTones[1]", id="record-stopTones-item-number"),
    # --- recognize
    pytest.param(RW, _wf(_recognize(bargeInAllowed="false")), "$.actions[0].bargeInAllowed", id="recognize-bargeIn-string"),
    pytest.param(RW, _wf(_recognize(culture=1)), "$.actions[0].culture", id="recognize-culture-number"),
    pytest.param(RW, _wf(_recognize(initialSilenceTimeoutInSeconds=True)), "$.actions[0].initialSilenceTimeoutInSeconds", id="recognize-initialSilence-bool"),
    pytest.param(RW, _wf(_recognize(initialSilenceTimeoutInSeconds="5")), "$.actions[0].initialSilenceTimeoutInSeconds", id="recognize-initialSilence-string"),
    pytest.param(RW, _wf(_recognize(interdigitTimeoutInSeconds={})), "$.actions[0].interdigitTimeoutInSeconds", id="recognize-interdigit-object"),
    pytest.param(RW, _wf(_recognize(playPrompt={"prompts": [1]})), "$.actions[0].playPrompt.prompts[0]", id="recognize-nested-prompt-number"),
    pytest.param(RW, _wf(_recognize(choices={})), "$.actions[0].choices", id="recognize-choices-object"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a"}, {"dtmfVariation": "1"}])), "$.actions[0].choices[1].name", id="choice-name-missing"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": 1}])), "$.actions[0].choices[0].name", id="choice-name-number"),
    pytest.param(RW, _wf(_recognize(choices=["a"])), "$.actions[0].choices[0]", id="choice-not-object"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a", "speechVariation": ["x", 2]}])), "$.actions[0].choices[0].speechVariation[1]", id="choice-speech-item-number"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a", "speechVariation": "x"}])), "$.actions[0].choices[0].speechVariation", id="choice-speech-string"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a", "dtmfVariation": [1]}])), "$.actions[0].choices[0].dtmfVariation[0]", id="choice-dtmf-item-number"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a", "dtmfVariation": 1}])), "$.actions[0].choices[0].dtmfVariation", id="choice-dtmf-number"),
    pytest.param(RW, _wf(_recognize(choices=[{"name": "a", "dtmfVariation": True}])), "$.actions[0].choices[0].dtmfVariation", id="choice-dtmf-bool"),
    pytest.param(RW, _wf(_recognize(collectDigits=[])), "$.actions[0].collectDigits", id="collect-array"),
    pytest.param(RW, _wf(_recognize(collectDigits={"maxNumberOfDtmfs": "4"})), "$.actions[0].collectDigits.maxNumberOfDtmfs", id="collect-max-string"),
    pytest.param(RW, _wf(_recognize(collectDigits={"stopTones": True})), "$.actions[0].collectDigits.stopTones", id="collect-stopTones-bool"),
    pytest.param(RW, _wf(_recognize(collectDigits={"stopTones": [None]})), "$.actions[0].collectDigits.stopTones[0]", id="collect-stopTones-null-item"),
    # --- Conversation
    pytest.param(RC, [], "$", id="conv-root-array"),
    pytest.param(RC, _conversation(id=_DELETE), "$.id", id="conv-id-missing"),
    pytest.param(RC, _conversation(id=1), "$.id", id="conv-id-number"),
    pytest.param(RC, _conversation(participants=_DELETE), "$.participants", id="conv-participants-missing"),
    pytest.param(RC, _conversation(participants={}), "$.participants", id="conv-participants-object"),
    pytest.param(RC, _conversation(participants=[{"identity": "u", "originator": True}, "bob"]), "$.participants[1]", id="conv-participant-string"),
    pytest.param(RC, _conversation(participants=[{"originator": True}]), "$.participants[0].identity", id="conv-participant-identity-missing"),
    pytest.param(RC, _conversation(participants=[{"identity": "u"}]), "$.participants[0].originator", id="conv-participant-originator-missing"),
    pytest.param(RC, _conversation(participants=[{"identity": "u", "originator": "true"}]), "$.participants[0].originator", id="conv-participant-originator-string"),
    pytest.param(RC, _conversation(participants=[{"identity": "u", "originator": True, "displayName": 1}]), "$.participants[0].displayName", id="conv-participant-displayName"),
    pytest.param(RC, _conversation(participants=[{"identity": "u", "originator": True, "languageId": []}]), "$.participants[0].languageId", id="conv-participant-languageId"),
    pytest.param(RC, _conversation(presentedModalityTypes=_DELETE), "$.presentedModalityTypes", id="conv-modalities-missing"),
    pytest.param(RC, _conversation(presentedModalityTypes=["audio", 7]), "$.presentedModalityTypes[1]", id="conv-modality-number"),
    pytest.param(RC, _conversation(isMultiparty="no"), "$.isMultiparty", id="conv-isMultiparty-string"),
    pytest.param(RC, _conversation(callState=_DELETE), "$.callState", id="conv-callState-missing"),
    pytest.param(RC, _conversation(callState=True), "$.callState", id="conv-callState-bool"),
    pytest.param(RC, _conversation(links={"call": 1}), "$.links.call", id="conv-links-call-number"),
    pytest.param(RC, _conversation(subject=1), "$.subject", id="conv-subject-number"),
    pytest.param(RC, _conversation(threadId=[]), "$.threadId", id="conv-threadId-array"),
    # --- ConversationResult
    pytest.param(RR, "result", "$", id="result-root-string"),
    pytest.param(RR, {"callState": "established", "operationOutcome": _outcome("answerOutcome")}, "$.id", id="result-id-missing"),
    pytest.param(RR, {"id": "c", "operationOutcome": _outcome("answerOutcome")}, "$.callState", id="result-callState-missing"),
    pytest.param(RR, {"id": "c", "callState": "established"}, "$.operationOutcome", id="result-outcome-missing"),
    pytest.param(RR, _result("answerOutcome"), "$.operationOutcome", id="result-outcome-string"),
    pytest.param(RR, _result(_outcome("answerOutcome"), appId=1), "$.appId", id="result-appId-number"),
    pytest.param(RR, _result(_outcome("answerOutcome"), appState=["s"]), "$.appState", id="result-appState-array"),
    pytest.param(RR, _result(_outcome("answerOutcome"), links={"call": False}), "$.links.call", id="result-links-call-bool"),
    pytest.param(RR, _result({"id": "o", "outcome": "success"}), "$.operationOutcome.type", id="outcome-type-missing"),
    pytest.param(RR, _result(_outcome("transferOutcome")), "$.operationOutcome.type", id="outcome-type-unknown"),
    pytest.param(RR, _result(_outcome(1)), "$.operationOutcome.type", id="outcome-type-number"),
    pytest.param(RR, _result({"type": "answerOutcome", "outcome": "success"}), "$.operationOutcome.id", id="outcome-id-missing"),
    pytest.param(RR, _result({"type": "answerOutcome", "id": "o"}), "$.operationOutcome.outcome", id="outcome-outcome-missing"),
    pytest.param(RR, _result(_outcome("answerOutcome", outcome=True)), "$.operationOutcome.outcome", id="outcome-outcome-bool"),
    pytest.param(RR, _result(_outcome("hangupOutcome", failureReason=1)), "$.operationOutcome.failureReason", id="outcome-failureReason-number"),
    pytest.param(RR, _result(_outcome("playPromptOutcome")), "$.operationOutcome.completionReason", id="playPromptOutcome-reason-missing"),
    pytest.param(RR, _result(_outcome("recordOutcome", lengthOfRecordingInSecs=1)), "$.operationOutcome.completionReason", id="recordOutcome-reason-missing"),
    pytest.param(RR, _result(_outcome("recordOutcome", completionReason="callTerminated")), "$.operationOutcome.lengthOfRecordingInSecs", id="recordOutcome-length-missing"),
    pytest.param(RR, _result(_outcome("recordOutcome", completionReason="callTerminated", lengthOfRecordingInSecs="4")), "$.operationOutcome.lengthOfRecordingInSecs", id="recordOutcome-length-string"),
    pytest.param(RR, _result(_outcome("recordOutcome", completionReason="callTerminated", lengthOfRecordingInSecs=True)), "$.operationOutcome.lengthOfRecordingInSecs", id="recordOutcome-length-bool"),
    pytest.param(RR, _result(_outcome("recordOutcome", completionReason="callTerminated", lengthOfRecordingInSecs=1, format=1)), "$.operationOutcome.format", id="recordOutcome-format-number"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", choiceOutcome=[])), "$.operationOutcome.choiceOutcome", id="choiceOutcome-array"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", choiceOutcome={"choiceName": "a"})), "$.operationOutcome.choiceOutcome.completionReason", id="choiceOutcome-reason-missing"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", choiceOutcome={"completionReason": "speechOptionMatched", "choiceName": 1})), "$.operationOutcome.choiceOutcome.choiceName", id="choiceOutcome-name-number"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", collectDigitsOutcome="1234")), "$.operationOutcome.collectDigitsOutcome", id="digitsOutcome-string"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", collectDigitsOutcome={"digits": "1"})), "$.operationOutcome.collectDigitsOutcome.completionReason", id="digitsOutcome-reason-missing"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", collectDigitsOutcome={"completionReason": "interdigitTimeout", "digits": 1234})), "$.operationOutcome.collectDigitsOutcome.digits", id="digitsOutcome-digits-number"),
    pytest.param(RR, _result(_outcome("recognizeOutcome", collectDigitsOutcome={"completionReason": "interdigitTimeout", "digits": ["1", 2]})), "$.operationOutcome.collectDigitsOutcome.digits[1]", id="digitsOutcome-digits-item-number"),
]  # fmt: skip


@pytest.mark.parametrize(("reader", "doc", "path"), ERROR_CASES)
def test_read_error_path(reader: Reader, doc: JSON, path: str) -> None:
    with pytest.raises(WireError) as info:
        reader(doc)
    assert info.value.path == path
    assert info.value.message
    assert str(info.value).startswith(path + ": ")


def test_missing_field_message_says_required() -> None:
    with pytest.raises(WireError) as info:
        wire.read_workflow(_wf({"action": "answer"}))
    assert "required" in info.value.message


def test_wrong_kind_message_names_the_kinds() -> None:
    with pytest.raises(WireError) as info:
        wire.read_workflow(_wf(_play({"value": 42})))
    assert "string" in info.value.message and "number" in info.value.message


def test_infinite_number_is_a_wire_error() -> None:
    body = b'{"actions":[{"operationId":"g","action":"recognize","initialSilenceTimeoutInSeconds":1e999}]}'
    with pytest.raises(WireError) as info:
        wire.parse_workflow(body)
    assert info.value.path in ("$", "$.actions[0].initialSilenceTimeoutInSeconds")


LOADS_ERRORS = [
    pytest.param(b"\xff\xfe{}", id="invalid-utf8-start"),
    pytest.param(b'{"a":"\xc3"}', id="invalid-utf8-truncated"),
    pytest.param(b'{"a":"\xed\xa0\x80"}', id="utf8-encoded-surrogate"),
    pytest.param(b"", id="empty-bytes"),
    pytest.param("", id="empty-text"),
    pytest.param("not json", id="words"),
    pytest.param("{", id="unclosed-object"),
    pytest.param('{"a":1,}', id="trailing-comma"),
    pytest.param("{'a':1}", id="single-quotes"),
    pytest.param('{"a":1} x', id="trailing-garbage"),
    pytest.param("NaN", id="NaN"),
    pytest.param("[NaN]", id="NaN-in-array"),
    pytest.param('{"a":Infinity}', id="Infinity"),
    pytest.param("-Infinity", id="minus-Infinity"),
    pytest.param("1" * 5000, id="integer-too-long"),
    pytest.param("[" * 100_000, id="deep-open-arrays"),
    pytest.param("[" * 100_000 + "]" * 100_000, id="deep-arrays"),
    pytest.param('{"a":' * 100_000 + "1" + "}" * 100_000, id="deep-objects"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deep-arrays-bytes"),
]


@pytest.mark.parametrize("data", LOADS_ERRORS)
def test_loads_raises_wire_error_at_root(data: bytes | str) -> None:
    with pytest.raises(WireError) as info:
        wire.loads(data)
    assert info.value.path == "$"


@pytest.mark.parametrize("data", LOADS_ERRORS)
def test_parse_workflow_raises_wire_error_at_root(data: bytes | str) -> None:
    with pytest.raises(WireError) as info:
        wire.parse_workflow(data)
    assert info.value.path == "$"


def test_loads_reads_json() -> None:
    assert wire.loads(b'{"a":[1,2.5,"\\u00e9",true,null]}') == {"a": [1, 2.5, "é", True, None]}
    assert wire.loads(" [] ") == []


# --- Regressions: bugs found while writing this suite ----------------------------------------

_HUGE = int("1" + "0" * 400)  # a JSON integer Python reads exactly but cannot turn into a float


@pytest.mark.parametrize(
    ("reader", "doc", "path"),
    [
        pytest.param(RW, _wf(_record(maxDurationInSeconds=_HUGE)), "$.actions[0].maxDurationInSeconds", id="record-maxDuration"),
        pytest.param(RW, _wf(_play({"silenceLengthInMilliseconds": _HUGE})), "$.actions[0].prompts[0].silenceLengthInMilliseconds", id="prompt-silence"),
        pytest.param(RW, _wf(_recognize(collectDigits={"maxNumberOfDtmfs": _HUGE})), "$.actions[0].collectDigits.maxNumberOfDtmfs", id="collect-max"),
        pytest.param(RW, _wf(_recognize(interdigitTimeoutInSeconds=-_HUGE)), "$.actions[0].interdigitTimeoutInSeconds", id="recognize-interdigit"),
        pytest.param(RR, _result(_outcome("recordOutcome", completionReason="callTerminated", lengthOfRecordingInSecs=_HUGE)), "$.operationOutcome.lengthOfRecordingInSecs", id="recordOutcome-length"),
    ],
)  # fmt: skip
def test_huge_integer_raises_only_wire_error(reader: Reader, doc: JSON, path: str) -> None:
    """Was: OverflowError from float() in jsonutil.is_number. Accepting the value (a Python int
    is exact) would also do; any exception but WireError is the bug."""
    try:
        reader(doc)
    except WireError as e:
        assert e.path == path


def test_huge_integer_from_bytes_reaches_the_reader() -> None:
    """Such an integer is reachable from an HTTP body: loads keeps it exact."""
    body = (
        '{"actions":[{"operationId":"r","action":"record","maxDurationInSeconds":1'
        + "0" * 400
        + "}]}"
    )
    assert wire.loads(body) == _wf(_record(operationId="r", maxDurationInSeconds=_HUGE))


def test_lone_surrogate_app_state_is_rejected_or_echoed() -> None:
    """Was: the body read, then encode() of the echoing result raised UnicodeEncodeError."""
    body = rb'{"actions":[{"operationId":"a1","action":"answer"}],"appState":"{\"k\":\"\ud83d\"}"}'
    try:
        workflow = wire.parse_workflow(body)
    except WireError:
        return  # rejecting the body is a fix too
    result = ConversationResult(
        id="c1",
        call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="a1", outcome=Outcome.SUCCESS),
        app_state=workflow.app_state,
    )
    echoed = wire.read_conversation_result(wire.loads(wire.encode(result)))
    assert echoed.app_state == workflow.app_state


def test_overflowing_number_in_unknown_field_is_rejected_or_rewritten_as_json() -> None:
    """Was: loads read 1e999 as inf, kept in extra; encode() wrote the non-JSON token Infinity."""
    body = b'{"actions":[{"operationId":"a","action":"answer"}],"future":1e999}'
    try:
        workflow = wire.parse_workflow(body)
    except WireError:
        return  # rejecting the body is a fix too
    written = wire.encode(workflow)
    wire.loads(written)  # must be JSON


# =============================================================================================
# 4. Round trip of hand-built values
# =============================================================================================

FULL_WORKFLOW = Workflow(
    actions=(
        Answer(operation_id="1", accept_modality_types=(ModalityType.AUDIO,), extra={"xA": 1}),
        PlayPrompt(
            operation_id="2",
            prompts=(
                Prompt(
                    value="Welcome — café ☎",
                    voice=VoiceGender.FEMALE,
                    culture=Culture.EN_US,
                    silence_length_in_milliseconds=200,
                    emphasize=True,
                    say_as=SayAs.CARDINAL,
                    extra={"xP": [None, {"k": "v"}]},
                ),
                Prompt(file_uri="https://bot.test/a.wav"),
            ),
        ),
        Record(
            operation_id="3",
            play_prompt=PlayPrompt(operation_id="", prompts=(Prompt(value="beep"),)),
            max_duration_in_seconds=10,
            initial_silence_timeout_in_seconds=2,
            max_silence_timeout_in_seconds=1,
            recording_format=RecordingFormat.MP3,
            play_beep=False,
            stop_tones=("#", "*"),
        ),
        Recognize(
            operation_id="4",
            play_prompt=PlayPrompt(operation_id="4p", prompts=(Prompt(value="choose"),)),
            barge_in_allowed=True,
            culture=Culture.EN_US,
            initial_silence_timeout_in_seconds=2.5,
            interdigit_timeout_in_seconds=1.0,
            choices=(
                RecognitionOption(name="one", speech_variation=("one", "1"), dtmf_variation="1"),
                RecognitionOption(name="ext", dtmf_variation="12", extra={"xC": True}),
            ),
        ),
        Recognize(
            operation_id="5",
            collect_digits=CollectDigits(max_number_of_dtmfs=4, stop_tones=("#",), extra={"x": 0}),
        ),
        Reject(operation_id="6"),
        Hangup(operation_id="7"),
    ),
    links={"callback": "https://bot.test/cb"},
    call_state=CallState.ESTABLISHED,
    app_state='{"step":"é"}',
    notification_subscriptions=(NotificationType.CALL_STATE_CHANGE,),
    extra={"xWorkflow": {"nested": [1, 2.5, "s"]}},
)

FULL_CONVERSATION = Conversation(
    id="c-1",
    participants=(
        Participant(
            identity="user:alice",
            originator=True,
            display_name="Alice Ünal",
            language_id="en-US",
            extra={"xP": 1},
        ),
        Participant(identity="bot:emu", originator=False),
    ),
    presented_modality_types=(ModalityType.AUDIO, ModalityType.VIDEO),
    call_state=CallState.INCOMING,
    is_multiparty=True,
    links={"call": "https://p.test/c-1"},
    subject="s",
    thread_id="t",
    extra={"xC": [True]},
)

ROUND_TRIP_OUTCOMES = [pytest.param(p.values[0], id=p.id) for p in OUTCOME_BYTES] + [
    pytest.param(
        RecognizeOutcome(
            id="g",
            outcome=Outcome.SUCCESS,
            choice_outcome=ChoiceOutcome(
                completion_reason=RecognitionCompletionReason.SPEECH_OPTION_MATCHED,
                choice_name="x",
                extra={"xCO": 1},
            ),
            collect_digits_outcome=CollectDigitsOutcome(
                completion_reason=DigitCollectionCompletionReason.INTERDIGIT_TIMEOUT,
                digits="*#0",
                extra={"xDO": 2},
            ),
            extra={"xO": "o"},
        ),
        id="recognizeOutcome-both-with-extra",
    ),
]


def test_round_trip_workflow() -> None:
    assert wire.read_workflow(wire.to_json(FULL_WORKFLOW)) == FULL_WORKFLOW
    assert wire.parse_workflow(wire.encode(FULL_WORKFLOW)) == FULL_WORKFLOW


def test_round_trip_conversation() -> None:
    assert wire.read_conversation(wire.to_json(FULL_CONVERSATION)) == FULL_CONVERSATION
    assert wire.read_conversation(wire.loads(wire.encode(FULL_CONVERSATION))) == FULL_CONVERSATION


@pytest.mark.parametrize("outcome", ROUND_TRIP_OUTCOMES)
def test_round_trip_outcome(outcome: OperationOutcome) -> None:
    assert wire.read_outcome(wire.to_json(outcome), "$") == outcome


@pytest.mark.parametrize("outcome", ROUND_TRIP_OUTCOMES)
@pytest.mark.parametrize(
    "legacy", [pytest.param(False, id="default"), pytest.param(True, id="legacy")]
)
def test_round_trip_conversation_result(outcome: OperationOutcome, legacy: bool) -> None:
    result = ConversationResult(
        id="c-1",
        app_id="app",
        call_state=CallState.ESTABLISHED,
        operation_outcome=outcome,
        links={"call": "https://p.test/c-1"},
        app_state=json.dumps(APP_STATE_DOC),
        extra={"xR": None},
    )
    options = wire.WireOptions(legacy_validation_outcome_type=legacy)
    assert wire.read_conversation_result(wire.to_json(result, options)) == result
    assert wire.read_conversation_result(wire.loads(wire.encode(result, options))) == result


# =============================================================================================
# 5. Property tests
# =============================================================================================

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Integers include some beyond the range of a double (10**400 once raised OverflowError).
_ints = st.integers(min_value=-(2**63), max_value=2**63) | st.sampled_from([10**400, -(10**400)])
_text = st.text(st.characters(codec="utf-8"), max_size=8)

KNOWN_NAMES = sorted(
    {
        *fields.WORKFLOW_FIELDS,
        *fields.CONVERSATION_FIELDS,
        *fields.PARTICIPANT_FIELDS,
        *fields.PROMPT_FIELDS,
        *fields.OPTION_FIELDS,
        *fields.COLLECT_FIELDS,
        *fields.RESULT_FIELDS,
        *fields.OUTCOME_COMMON_FIELDS,
        "operationId",
        "action",
        "acceptModalityTypes",
        "completionReason",
        "lengthOfRecordingInSecs",
        "format",
        "choiceOutcome",
        "collectDigitsOutcome",
        "choiceName",
        "digits",
        "playPrompt",
        "maxDurationInSeconds",
        "initialSilenceTimeoutInSeconds",
        "maxSilenceTimeoutInSeconds",
        "recordingFormat",
        "playBeep",
        "stopTones",
        "bargeInAllowed",
        "interdigitTimeoutInSeconds",
        "choices",
        "collectDigits",
    }
)
KNOWN_VALUES = [
    "answer", "reject", "record", "playPrompt", "recognize", "hangup",
    "answerOutcome", "rejectOutcome", "hangupOutcome", "playPromptOutcome", "recordOutcome",
    "recognizeOutcome", "workflowValidationOutcome", "worfklowValidationOutcome",
    "success", "failure", "incoming", "established", "en-US", "wma", "male", "#", "1",
]  # fmt: skip

_keys = st.sampled_from(KNOWN_NAMES) | st.sampled_from(KNOWN_NAMES).map(str.upper) | _text
_scalars = (
    st.none()
    | st.booleans()
    | _ints
    | st.floats(allow_nan=False)
    | _text
    | st.sampled_from(KNOWN_VALUES)
)
json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=6),
    max_leaves=24,
)
_plain_json = st.recursive(
    st.none() | st.booleans() | _ints | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_text, children, max_size=3),
    max_leaves=8,
)


# --- Strategies of valid model values


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


def _enum(cls: type[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(cls))


def _extras(enabled: bool) -> st.SearchStrategy[dict[str, JSON]]:
    if not enabled:
        return st.just({})
    # "x" + letters never equals a protocol name, in any case.
    return st.dictionaries(
        st.text("abcXYZ_", max_size=4).map(lambda s: "x" + s), _plain_json, max_size=2
    )


_ids = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
_digit_seq = st.text(DTMF_KEYS, max_size=4)
_tones = st.lists(st.sampled_from(DTMF_KEYS), max_size=5).map(tuple)
_urls = st.sampled_from(["https://bot.test/cb", "https://p.test/calls/1", "http://localhost:1/x"])
_links = st.dictionaries(st.sampled_from(["call", "callback"]), _urls, max_size=2)
_seconds = st.integers(0, 600) | st.floats(0, 60, allow_nan=False)


def prompts(extra: bool = True) -> st.SearchStrategy[Prompt]:
    return st.builds(
        Prompt,
        value=_opt(_text),
        file_uri=_opt(_urls),
        voice=_opt(_enum(VoiceGender)),
        culture=_opt(_enum(Culture)),
        silence_length_in_milliseconds=_opt(st.integers(0, 60_000)),
        emphasize=_opt(st.booleans()),
        say_as=_opt(_enum(SayAs)),
        extra=_extras(extra),
    )


def play_prompts(extra: bool = True, nested: bool = False) -> st.SearchStrategy[PlayPrompt]:
    return st.builds(
        PlayPrompt,
        operation_id=(st.just("") | _ids) if nested else _ids,
        prompts=st.lists(prompts(extra), max_size=3).map(tuple),
        extra=_extras(extra),
    )


def actions(extra: bool = True) -> st.SearchStrategy[Action]:
    return st.one_of(
        st.builds(
            Answer,
            operation_id=_ids,
            accept_modality_types=_opt(st.lists(_enum(ModalityType), max_size=3).map(tuple)),
            extra=_extras(extra),
        ),
        st.builds(Reject, operation_id=_ids, extra=_extras(extra)),
        st.builds(Hangup, operation_id=_ids, extra=_extras(extra)),
        play_prompts(extra),
        st.builds(
            Record,
            operation_id=_ids,
            play_prompt=_opt(play_prompts(extra, nested=True)),
            max_duration_in_seconds=_opt(st.integers(-10, 1000)),
            initial_silence_timeout_in_seconds=_opt(st.integers(0, 60)),
            max_silence_timeout_in_seconds=_opt(st.integers(0, 60)),
            recording_format=_opt(_enum(RecordingFormat)),
            play_beep=_opt(st.booleans()),
            stop_tones=_opt(_tones),
            extra=_extras(extra),
        ),
        st.builds(
            Recognize,
            operation_id=_ids,
            play_prompt=_opt(play_prompts(extra, nested=True)),
            barge_in_allowed=_opt(st.booleans()),
            culture=_opt(_enum(Culture)),
            initial_silence_timeout_in_seconds=_opt(_seconds),
            interdigit_timeout_in_seconds=_opt(_seconds),
            choices=_opt(
                st.lists(
                    st.builds(
                        RecognitionOption,
                        name=_text,
                        speech_variation=_opt(st.lists(_text, max_size=3).map(tuple)),
                        dtmf_variation=_opt(_digit_seq),
                        extra=_extras(extra),
                    ),
                    max_size=3,
                ).map(tuple)
            ),
            collect_digits=_opt(
                st.builds(
                    CollectDigits,
                    max_number_of_dtmfs=_opt(st.integers(0, 30)),
                    stop_tones=_opt(_tones),
                    extra=_extras(extra),
                )
            ),
            extra=_extras(extra),
        ),
    )


def workflows(extra: bool = True) -> st.SearchStrategy[Workflow]:
    return st.builds(
        Workflow,
        actions=st.lists(actions(extra), min_size=1, max_size=4).map(tuple),
        links=_links,
        call_state=_opt(_enum(CallState)),
        app_state=_opt(_text),
        notification_subscriptions=_opt(st.lists(_enum(NotificationType), max_size=2).map(tuple)),
        extra=_extras(extra),
    )


def _common(cls: type[OperationOutcome], **more: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        cls,
        id=_text,
        outcome=_enum(Outcome),
        failure_reason=_opt(_text),
        extra=_extras(True),
        **more,
    )


outcomes: st.SearchStrategy[OperationOutcome] = st.one_of(
    _common(AnswerOutcome),
    _common(RejectOutcome),
    _common(HangupOutcome),
    _common(WorkflowValidationOutcome),
    _common(PlayPromptOutcome, completion_reason=_enum(PromptCompletionReason)),
    _common(
        RecordOutcome,
        completion_reason=_enum(RecordingCompletionReason),
        # Written rounded to milliseconds: generate millisecond values.
        length_of_recording_in_secs=st.integers(0, 10**7).map(lambda n: n / 1000),
        format=_opt(_enum(RecordingFormat)),
    ),
    _common(
        RecognizeOutcome,
        choice_outcome=_opt(
            st.builds(
                ChoiceOutcome,
                completion_reason=_enum(RecognitionCompletionReason),
                choice_name=_opt(_text),
                extra=_extras(True),
            )
        ),
        collect_digits_outcome=_opt(
            st.builds(
                CollectDigitsOutcome,
                completion_reason=_enum(DigitCollectionCompletionReason),
                digits=_opt(_digit_seq),
                extra=_extras(True),
            )
        ),
    ),
)

results = st.builds(
    ConversationResult,
    id=_text,
    call_state=_enum(CallState),
    operation_outcome=outcomes,
    app_id=_opt(_text),
    links=_links,
    app_state=_opt(_text),
    extra=_extras(True),
)

conversations = st.builds(
    Conversation,
    id=_text,
    participants=st.lists(
        st.builds(
            Participant,
            identity=_text,
            originator=st.booleans(),
            display_name=_opt(_text),
            language_id=_opt(_text),
            extra=_extras(True),
        ),
        max_size=3,
    ).map(tuple),
    presented_modality_types=st.lists(_enum(ModalityType), max_size=3).map(tuple),
    call_state=_enum(CallState),
    is_multiparty=st.booleans(),
    links=_links,
    subject=_opt(_text),
    thread_id=_opt(_text),
    extra=_extras(True),
)


# --- Near-valid documents: a valid one with a few random mutations


def _slots(node: JSON) -> list[tuple[Any, Any, int]]:
    """Every (container, key-or-index, depth) in a document."""
    found: list[tuple[Any, Any, int]] = []
    stack: list[tuple[JSON, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                found.append((current, key, depth))
                stack.append((value, depth + 1))
        elif isinstance(current, list):
            for index, value in enumerate(current):
                found.append((current, index, depth))
                stack.append((value, depth + 1))
    return found


def _recase(s: str) -> st.SearchStrategy[str]:
    return st.sampled_from([s.upper(), s.lower(), s.swapcase(), s[:1].upper() + s[1:]])


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> JSON:
    doc: JSON = copy.deepcopy(wire.to_json(draw(valid)))
    for _ in range(draw(st.integers(1, 4))):
        slots = _slots(doc)
        # Mostly mutate below the top level, so that deep paths get exercised.
        # Hypothesis leans towards the first choices: put the deepest slots first.
        deep = sorted((slot for slot in slots if slot[2] >= 3), key=lambda slot: -slot[2])
        pool = deep if deep and draw(st.integers(0, 3)) != 3 else slots
        if not pool:
            break
        container, key, _ = draw(st.sampled_from(pool))
        how = draw(
            st.sampled_from(["replace", "recase-key", "recase-value", "add", "null", "delete"])
        )
        if how == "delete":
            del container[key]
        elif how == "recase-key" and isinstance(key, str):
            container[draw(_recase(key))] = container.pop(key)
        elif how == "replace":
            container[key] = draw(json_values)
        elif how == "recase-value" and isinstance(container[key], str):
            container[key] = draw(_recase(container[key]))
        elif how == "null":
            container[key] = None
        elif how == "add" and isinstance(container[key], dict):
            container[key][draw(_keys)] = draw(json_values)
    return doc


_PATH_STEP = re.compile(r'\.([^.\[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _resolves(doc: JSON, path: str) -> bool:
    """Whether every step of ``path`` but the last exists in ``doc`` (names ignoring case)."""
    assert path.startswith("$"), path
    steps: list[str | int] = []
    rest = path[1:]
    while rest:
        match = _PATH_STEP.match(rest)
        assert match is not None, f"unparseable path {path!r}"
        name, index, quoted = match.groups()
        steps.append(int(index) if index is not None else json.loads(quoted) if quoted else name)
        rest = rest[match.end() :]
    node = doc
    for step in steps[:-1]:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return False
            node = node[step]
        else:
            if not isinstance(node, dict):
                return False
            key = find_key(node, step)
            if key is None:
                return False
            node = node[key]
    return True


def _read_only_wire_error(reader: Reader, doc: JSON) -> None:
    try:
        reader(doc)
    except WireError as e:
        assert _resolves(doc, e.path), f"{e.path} does not point into the document"


READERS = [
    pytest.param(wire.read_workflow, id="workflow"),
    pytest.param(wire.read_conversation, id="conversation"),
    pytest.param(wire.read_conversation_result, id="conversation_result"),
]


@pytest.mark.parametrize("reader", READERS)
@settings(PROPERTY, max_examples=100)
@given(doc=json_values)
def test_reading_arbitrary_json_raises_only_wire_error(reader: Reader, doc: JSON) -> None:
    _read_only_wire_error(reader, doc)


@settings(PROPERTY, max_examples=150)
@given(doc=mutated(workflows()))
def test_reading_near_valid_workflows_raises_only_wire_error(doc: JSON) -> None:
    _read_only_wire_error(wire.read_workflow, doc)


@PROPERTY
@given(doc=mutated(conversations))
def test_reading_near_valid_conversations_raises_only_wire_error(doc: JSON) -> None:
    _read_only_wire_error(wire.read_conversation, doc)


@PROPERTY
@given(doc=mutated(results))
def test_reading_near_valid_results_raises_only_wire_error(doc: JSON) -> None:
    _read_only_wire_error(wire.read_conversation_result, doc)


@PROPERTY
@given(data=st.binary(max_size=200))
def test_loads_arbitrary_bytes_raises_only_wire_error(data: bytes) -> None:
    try:
        wire.loads(data)
    except WireError as e:
        assert e.path == "$"


@PROPERTY
@given(text=st.text(alphabet='{}[]",:0123456789.eE+-truefalsnNIiy\\u \n', max_size=60))
def test_loads_json_like_text_raises_only_wire_error(text: str) -> None:
    try:
        wire.loads(text.encode())
    except WireError as e:
        assert e.path == "$"


@PROPERTY
@given(workflow=workflows())
def test_workflow_round_trip(workflow: Workflow) -> None:
    assert wire.read_workflow(wire.to_json(workflow)) == workflow
    body = wire.encode(workflow)
    assert wire.parse_workflow(body) == workflow
    # After one read (which turns integral decimals into floats), writing is a fixed point.
    normalised = wire.encode(wire.parse_workflow(body))
    assert wire.encode(wire.parse_workflow(normalised)) == normalised


@settings(max_examples=100, deadline=None)
@given(workflow=workflows(extra=False))
def test_workflow_reads_the_same_with_upper_case_names(workflow: Workflow) -> None:
    def upper_keys(node: JSON) -> JSON:
        if isinstance(node, dict):
            return {k.upper(): upper_keys(v) for k, v in node.items()}
        if isinstance(node, list):
            return [upper_keys(v) for v in node]
        return node

    assert wire.read_workflow(upper_keys(wire.to_json(workflow))) == workflow


@PROPERTY
@given(result=results, legacy=st.booleans())
def test_conversation_result_round_trip(result: ConversationResult, legacy: bool) -> None:
    options = wire.WireOptions(legacy_validation_outcome_type=legacy)
    assert wire.read_conversation_result(wire.loads(wire.encode(result, options))) == result


@PROPERTY
@given(conversation=conversations)
def test_conversation_round_trip(conversation: Conversation) -> None:
    assert wire.read_conversation(wire.loads(wire.encode(conversation))) == conversation


@PROPERTY
@given(
    app_state=st.text(st.characters(codec=None) | st.characters(categories=["Cs"]), max_size=12)
    # Only strings a JSON reader can produce: an escaped surrogate pair reads as one character.
    .map(lambda s: json.loads(json.dumps(s)))
)
def test_any_app_state_string_is_echoed(app_state: str) -> None:
    """Even lone surrogates (a bot may send "\\ud800") come back as the same string value."""
    result = ConversationResult(
        id="c",
        call_state=CallState.ESTABLISHED,
        operation_outcome=AnswerOutcome(id="a", outcome=Outcome.SUCCESS),
        app_state=app_state,
    )
    assert wire.read_conversation_result(wire.loads(wire.encode(result))).app_state == app_state


def test_error_path_spells_names_as_the_document_does() -> None:
    """Regression: the path named the camelCase field, so a position lookup missed the key."""
    with pytest.raises(WireError) as info:
        wire.read_workflow({"ACTIONS": [{"Action": "answer", "OPERATIONID": 5}]})
    assert info.value.path == "$.ACTIONS[0].OPERATIONID"
