"""Tests of the calling model: WireEnum reading and the spec defaults exposed as properties."""

from __future__ import annotations

import dataclasses

import pytest

from emulator.calling import model as m

ALL_ENUMS: list[type[m.WireEnum]] = [
    m.CallState,
    m.ModalityType,
    m.Outcome,
    m.VoiceGender,
    m.Culture,
    m.RecordingFormat,
    m.SayAs,
    m.NotificationType,
    m.ActionType,
    m.OutcomeType,
    m.PromptCompletionReason,
    m.RecordingCompletionReason,
    m.RecognitionCompletionReason,
    m.DigitCollectionCompletionReason,
]

# The spec's "Enumerations" table (section C), values exactly as the spec names them.
SPEC_ENUMS: list[tuple[type[m.WireEnum], list[str]]] = [
    (
        m.OutcomeType,
        [
            "AnswerOutcome",
            "HangupOutcome",
            "RejectOutcome",
            "PlayPromptOutcome",
            "RecordOutcome",
            "RecognizeOutcome",
            "WorkflowValidationOutcome",
        ],
    ),
    (
        m.CallState,
        [
            "Idle",
            "Incoming",
            "Establishing",
            "Established",
            "Hold",
            "Unhold",
            "Transferring",
            "Redirecting",
            "Terminating",
            "Terminated",
        ],
    ),
    (m.ModalityType, ["Audio", "Video", "VideoBasedScreenSharing"]),
    (m.Outcome, ["Success", "Failure"]),
    (m.VoiceGender, ["Male", "Female"]),
    (m.Culture, ["EnUs"]),
    (m.RecordingFormat, ["Wma", "Wav", "Mp3"]),
    (
        m.RecordingCompletionReason,
        [
            "InitialSilenceTimeout",
            "MaxRecordingTimeout",
            "CompletedSilenceDetected",
            "CompletedStopToneDetected",
            "CallTerminated",
            "TemporarySystemFailure",
        ],
    ),
    (
        m.RecognitionCompletionReason,
        [
            "InitialSilenceTimeout",
            "IncorrectDtmf",
            "InterdigitTimeout",
            "SpeechOptionMatched",
            "DtmfOptionMatched",
            "CallTerminated",
            "TemporarySystemFailure",
        ],
    ),
    (
        m.DigitCollectionCompletionReason,
        [
            "InitialSilenceTimeout",
            "InterdigitTimeout",
            "CompletedStopToneDetected",
            "CallTerminated",
            "TemporarySystemFailure",
        ],
    ),
    (
        m.SayAs,
        [
            "YearMonthDay",
            "MonthDayYear",
            "DayMonthYear",
            "YearMonth",
            "MonthYear",
            "MonthDay",
            "DayMonth",
            "Day",
            "Month",
            "Year",
            "Cardinal",
            "Ordinal",
            "Letters",
            "Time12",
            "Time24",
            "Telephone",
            "Name",
            "PhoneticName",
        ],
    ),
    (m.ActionType, ["answer", "reject", "record", "playPrompt", "recognize", "hangup"]),
]


# --- WireEnum.read -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "spec_names"), [pytest.param(c, n, id=c.__name__) for c, n in SPEC_ENUMS]
)
def test_spec_enumeration_matches_members(cls: type[m.WireEnum], spec_names: list[str]) -> None:
    """Every value the spec lists reads as a distinct member, and no member is missing."""
    read = [cls.read(name) for name in spec_names]
    assert all(member.name != "NOT_UNDERSTOOD" for member in read)
    assert len(set(read)) == len(spec_names)
    assert sorted(str(v.value) for v in read) == sorted(cls.canonical())


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__) for c in ALL_ENUMS])
def test_every_value_reads_back_in_any_case(cls: type[m.WireEnum]) -> None:
    for member in cls:
        value = str(member.value)
        assert cls.read(value) is member
        assert cls.read(value.upper()) is member
        assert cls.read(value.lower()) is member
        assert cls.read(value.swapcase()) is member


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__) for c in ALL_ENUMS])
def test_unknown_values_read_as_not_understood(cls: type[m.WireEnum]) -> None:
    not_understood = cls["NOT_UNDERSTOOD"]
    for raw in ("", "definitelyNotAValue", " incoming", "success ", "NOT_UNDERSTOOD", "42"):
        assert cls.read(raw) is not_understood


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__) for c in ALL_ENUMS])
def test_canonical_values_are_camel_case_and_exclude_not_understood(
    cls: type[m.WireEnum],
) -> None:
    canonical = cls.canonical()
    assert "notUnderstood" not in canonical
    assert len(canonical) == len(cls) - 1
    for value in canonical:
        if cls is m.Culture:
            assert value == "en-US"
        else:
            assert value[0].islower(), value
            assert "_" not in value and "-" not in value and " " not in value


@pytest.mark.parametrize(
    ("cls", "raw", "expected"),
    [
        pytest.param(m.CallState, "INCOMING", m.CallState.INCOMING, id="callstate-upper"),
        pytest.param(
            m.CallState, "onHoldForever", m.CallState.NOT_UNDERSTOOD, id="callstate-unknown"
        ),
        pytest.param(m.Culture, "en-US", m.Culture.EN_US, id="culture-en-US"),
        pytest.param(m.Culture, "en-us", m.Culture.EN_US, id="culture-en-us"),
        pytest.param(m.Culture, "EnUs", m.Culture.EN_US, id="culture-EnUs"),
        pytest.param(m.Culture, "fr-FR", m.Culture.NOT_UNDERSTOOD, id="culture-fr-FR"),
        pytest.param(m.RecordingFormat, "ogg", m.RecordingFormat.NOT_UNDERSTOOD, id="format-ogg"),
        pytest.param(m.VoiceGender, "robot", m.VoiceGender.NOT_UNDERSTOOD, id="voice-robot"),
        pytest.param(m.ActionType, "PlayPrompt", m.ActionType.PLAY_PROMPT, id="action-PlayPrompt"),
        pytest.param(
            m.OutcomeType,
            "worfklowValidationOutcome",
            m.OutcomeType.WORKFLOW_VALIDATION,
            id="outcome-legacy-spelling",
        ),
        pytest.param(
            m.OutcomeType,
            "WORFKLOWVALIDATIONOUTCOME",
            m.OutcomeType.WORKFLOW_VALIDATION,
            id="outcome-legacy-spelling-upper",
        ),
        pytest.param(
            m.RecognitionCompletionReason,
            "DtmfOptionMatched",
            m.RecognitionCompletionReason.DTMF_OPTION_MATCHED,
            id="recognition-pascal",
        ),
        pytest.param(
            m.ModalityType,
            "videobasedscreensharing",
            m.ModalityType.VIDEO_BASED_SCREEN_SHARING,
            id="modality-lower",
        ),
    ],
)
def test_read_examples(cls: type[m.WireEnum], raw: str, expected: m.WireEnum) -> None:
    assert cls.read(raw) is expected


def test_is_canonical_only_for_the_exact_spelling() -> None:
    assert m.CallState.INCOMING.is_canonical("incoming")
    assert not m.CallState.INCOMING.is_canonical("Incoming")
    assert m.Culture.EN_US.is_canonical("en-US")
    assert not m.Culture.EN_US.is_canonical("en-us")
    assert not m.OutcomeType.WORKFLOW_VALIDATION.is_canonical(m.LEGACY_VALIDATION_OUTCOME)


def test_legacy_spelling_constant() -> None:
    assert m.LEGACY_VALIDATION_OUTCOME == "worfklowValidationOutcome"


def test_dtmf_keys() -> None:
    assert m.DTMF_KEYS == "0123456789*#ABCD"
    assert len(set(m.DTMF_KEYS)) == 16


# --- Class tables ------------------------------------------------------------------------------


def test_action_classes_cover_every_action_type() -> None:
    known = [t for t in m.ActionType if t is not m.ActionType.NOT_UNDERSTOOD]
    assert set(m.ACTION_CLASSES) == set(known)
    for kind, cls in m.ACTION_CLASSES.items():
        assert cls.kind is kind


def test_outcome_classes_cover_every_outcome_type() -> None:
    known = [t for t in m.OutcomeType if t is not m.OutcomeType.NOT_UNDERSTOOD]
    assert set(m.OUTCOME_CLASSES) == set(known)
    for kind, cls in m.OUTCOME_CLASSES.items():
        assert cls.type is kind


# --- Defaults ----------------------------------------------------------------------------------


def test_record_defaults_when_absent() -> None:
    record = m.Record(operation_id="r")
    assert record.max_duration_in_seconds is None
    assert record.max_duration == 180
    assert record.initial_silence_timeout == 5
    assert record.max_silence_timeout == 5
    assert record.format is m.RecordingFormat.WMA
    assert record.stop_tones is None
    assert record.play_beep is None


def test_record_explicit_values_win_including_zero() -> None:
    record = m.Record(
        operation_id="r",
        max_duration_in_seconds=30,
        initial_silence_timeout_in_seconds=2,
        max_silence_timeout_in_seconds=0,
        recording_format=m.RecordingFormat.MP3,
    )
    assert record.max_duration == 30
    assert record.initial_silence_timeout == 2
    assert record.max_silence_timeout == 0
    assert record.format is m.RecordingFormat.MP3


def test_recognize_defaults_when_absent() -> None:
    recognize = m.Recognize(operation_id="g")
    assert recognize.barge_in is True
    assert recognize.initial_silence_timeout == 5
    assert recognize.interdigit_timeout == 1
    assert recognize.culture is None


def test_recognize_explicit_values_win() -> None:
    recognize = m.Recognize(
        operation_id="g",
        barge_in_allowed=False,
        initial_silence_timeout_in_seconds=2.5,
        interdigit_timeout_in_seconds=0.0,
    )
    assert recognize.barge_in is False
    assert recognize.initial_silence_timeout == 2.5
    assert recognize.interdigit_timeout == 0.0


@pytest.mark.parametrize(
    ("ms", "seconds"),
    [
        pytest.param(None, 0.0, id="absent"),
        pytest.param(0, 0.0, id="zero"),
        pytest.param(1500, 1.5, id="1500ms"),
    ],
)
def test_prompt_silence(ms: int | None, seconds: float) -> None:
    assert m.Prompt(value="x", silence_length_in_milliseconds=ms).silence == seconds


def test_workflow_callback() -> None:
    assert m.Workflow(actions=()).callback is None
    workflow = m.Workflow(actions=(), links={"callback": "https://bot.test/cb"})
    assert workflow.callback == "https://bot.test/cb"


@pytest.mark.parametrize(
    ("outcome", "succeeded"),
    [
        pytest.param(m.Outcome.SUCCESS, True, id="success"),
        pytest.param(m.Outcome.FAILURE, False, id="failure"),
        pytest.param(m.Outcome.NOT_UNDERSTOOD, False, id="not-understood"),
    ],
)
def test_outcome_succeeded(outcome: m.Outcome, succeeded: bool) -> None:
    assert m.AnswerOutcome(id="a", outcome=outcome).succeeded is succeeded


def test_conversation_defaults() -> None:
    conversation = m.Conversation(
        id="c", participants=(), presented_modality_types=(), call_state=m.CallState.INCOMING
    )
    assert conversation.is_multiparty is False
    assert conversation.links == {}
    assert conversation.extra == {}


def test_values_are_frozen() -> None:
    answer = m.Answer(operation_id="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.operation_id = "b"  # type: ignore[misc]


def test_extra_is_not_shared_between_instances() -> None:
    first = m.Prompt(value="a")
    second = m.Prompt(value="b")
    assert first.extra is not second.extra


def test_equality_tells_action_kinds_apart() -> None:
    assert m.Answer(operation_id="x") != m.Hangup(operation_id="x")
    assert m.Reject(operation_id="x") == m.Reject(operation_id="x")
    assert m.Reject(operation_id="x") != m.Reject(operation_id="x", extra={"a": 1})
