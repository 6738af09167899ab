"""Reading the calling protocol's JSON: what a bot sends, or any message in tests.

Names and enum values are matched case-insensitively, unknown fields are kept in ``extra``,
unknown enum values become ``NOT_UNDERSTOOD``, and a bare-string ``stopTones`` is accepted.
Reading raises ``WireError`` (with a JSON path) and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.calling.model import (
    ACTION_CLASSES,
    OUTCOME_CLASSES,
    Action,
    ActionType,
    Answer,
    CallState,
    ChoiceOutcome,
    CollectDigits,
    CollectDigitsOutcome,
    Conversation,
    ConversationResult,
    Culture,
    DigitCollectionCompletionReason,
    ModalityType,
    NotificationType,
    OperationOutcome,
    Outcome,
    OutcomeType,
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
    SayAs,
    VoiceGender,
    Workflow,
)
from emulator.calling.wire.fields import (
    CHOICE_OUTCOME_FIELDS,
    COLLECT_FIELDS,
    CONVERSATION_FIELDS,
    DIGITS_OUTCOME_FIELDS,
    OPTION_FIELDS,
    OUTCOME_COMMON_FIELDS,
    OUTCOME_FIELDS,
    PARTICIPANT_FIELDS,
    PROMPT_FIELDS,
    RESULT_FIELDS,
    WORKFLOW_FIELDS,
    action_fields,
)
from emulator.calling.wire.objects import (
    ROOT,
    Obj,
    enum_item,
    loads,
    read_digits,
    read_enum,
    show,
    str_item,
)
from emulator.errors import WireError
from emulator.jsonutil import JSON


def read_participant(value: JSON, path: str) -> Participant:
    o = Obj(value, path, PARTICIPANT_FIELDS)
    originator = o.flag("originator", required=True)
    assert originator is not None
    return Participant(
        identity=o.req_text("identity"),
        originator=originator,
        display_name=o.text("displayName"),
        language_id=o.text("languageId"),
        extra=o.extra(),
    )


def read_conversation(value: JSON, path: str = ROOT) -> Conversation:
    o = Obj(value, path, CONVERSATION_FIELDS)
    participants = o.items("participants", read_participant, required=True)
    modalities = o.items("presentedModalityTypes", enum_item(ModalityType), required=True)
    assert participants is not None and modalities is not None
    return Conversation(
        id=o.req_text("id"),
        participants=participants,
        presented_modality_types=modalities,
        is_multiparty=bool(o.flag("isMultiparty")),
        call_state=o.req_enum(CallState, "callState"),
        links=o.links(),
        subject=o.text("subject"),
        thread_id=o.text("threadId"),
        extra=o.extra(),
    )


def read_prompt(value: JSON, path: str) -> Prompt:
    o = Obj(value, path, PROMPT_FIELDS)
    return Prompt(
        value=o.text("value"),
        file_uri=o.text("fileUri"),
        voice=o.enum(VoiceGender, "voice"),
        culture=o.enum(Culture, "culture"),
        silence_length_in_milliseconds=o.integer("silenceLengthInMilliseconds"),
        emphasize=o.flag("emphasize"),
        say_as=o.enum(SayAs, "sayAs"),
        extra=o.extra(),
    )


def read_option(value: JSON, path: str) -> RecognitionOption:
    o = Obj(value, path, OPTION_FIELDS)
    dtmf = o.get("dtmfVariation")
    return RecognitionOption(
        name=o.req_text("name"),
        speech_variation=o.items("speechVariation", str_item),
        dtmf_variation=None if dtmf is None else "".join(read_digits(dtmf, o.at("dtmfVariation"))),
        extra=o.extra(),
    )


def read_collect_digits(value: JSON, path: str) -> CollectDigits:
    o = Obj(value, path, COLLECT_FIELDS)
    tones = o.get("stopTones")
    return CollectDigits(
        max_number_of_dtmfs=o.integer("maxNumberOfDtmfs"),
        stop_tones=None if tones is None else read_digits(tones, o.at("stopTones")),
        extra=o.extra(),
    )


def read_action(value: JSON, path: str, *, nested: bool = False) -> Action:
    """One action. ``nested`` reads the ``playPrompt`` member of record or recognize, whose
    ``action`` and ``operationId`` may be absent."""
    kind = _action_kind(Obj(value, path, ()), nested=nested)
    o = Obj(value, path, action_fields(kind))
    op = (o.text("operationId") if nested else o.req_text("operationId")) or ""
    extra = o.extra()
    reader = _ACTION_READERS.get(kind)
    if reader is not None:
        return reader(o, op, extra)
    return ACTION_CLASSES[kind](operation_id=op, extra=extra)


def _action_kind(head: Obj, *, nested: bool) -> ActionType:
    """The kind of an action: a nested prompt is a playPrompt whether it says so or not."""
    if nested:
        raw_kind = head.get("action")
        if raw_kind is not None:
            kind = read_enum(ActionType, raw_kind, head.at("action"))
            if kind is not ActionType.PLAY_PROMPT:
                raise WireError(head.at("action"), "the nested prompt must be a playPrompt")
        return ActionType.PLAY_PROMPT
    kind = head.req_enum(ActionType, "action")
    if kind is ActionType.NOT_UNDERSTOOD:
        raise WireError(head.at("action"), f"unknown action {show(head.get('action'))}")
    return kind


def _answer(o: Obj, op: str, extra: dict[str, JSON]) -> Action:
    return Answer(
        accept_modality_types=o.items("acceptModalityTypes", enum_item(ModalityType)),
        operation_id=op,
        extra=extra,
    )


def _play_prompt(o: Obj, op: str, extra: dict[str, JSON]) -> Action:
    prompts = o.items("prompts", read_prompt, required=True)
    assert prompts is not None
    return PlayPrompt(prompts=prompts, operation_id=op, extra=extra)


def _record(o: Obj, op: str, extra: dict[str, JSON]) -> Action:
    tones = o.get("stopTones")
    return Record(
        play_prompt=_nested_prompt(o),
        max_duration_in_seconds=o.integer("maxDurationInSeconds"),
        initial_silence_timeout_in_seconds=o.integer("initialSilenceTimeoutInSeconds"),
        max_silence_timeout_in_seconds=o.integer("maxSilenceTimeoutInSeconds"),
        recording_format=o.enum(RecordingFormat, "recordingFormat"),
        play_beep=o.flag("playBeep"),
        stop_tones=None
        if tones is None
        else read_digits(tones, o.at("stopTones"), allow_bool=True),
        operation_id=op,
        extra=extra,
    )


def _recognize(o: Obj, op: str, extra: dict[str, JSON]) -> Action:
    collect = o.get("collectDigits")
    return Recognize(
        play_prompt=_nested_prompt(o),
        barge_in_allowed=o.flag("bargeInAllowed"),
        culture=o.enum(Culture, "culture"),
        initial_silence_timeout_in_seconds=o.number("initialSilenceTimeoutInSeconds"),
        interdigit_timeout_in_seconds=o.number("interdigitTimeoutInSeconds"),
        choices=o.items("choices", read_option),
        collect_digits=None
        if collect is None
        else read_collect_digits(collect, o.at("collectDigits")),
        operation_id=op,
        extra=extra,
    )


_ACTION_READERS: dict[ActionType, Callable[[Obj, str, dict[str, JSON]], Action]] = {
    ActionType.ANSWER: _answer,
    ActionType.PLAY_PROMPT: _play_prompt,
    ActionType.RECORD: _record,
    ActionType.RECOGNIZE: _recognize,
}
"""The readers of the actions that have fields of their own (reject and hangup have none)."""


def _nested_prompt(o: Obj) -> PlayPrompt | None:
    value = o.get("playPrompt")
    if value is None:
        return None
    action = read_action(value, o.at("playPrompt"), nested=True)
    assert isinstance(action, PlayPrompt)
    return action


def _top_action(value: JSON, path: str) -> Action:
    return read_action(value, path)


def read_workflow(value: JSON, path: str = ROOT) -> Workflow:
    o = Obj(value, path, WORKFLOW_FIELDS)
    actions = o.items("actions", _top_action, required=True)
    assert actions is not None
    return Workflow(
        actions=actions,
        links=o.links(),
        call_state=o.enum(CallState, "callState"),
        app_state=o.text("appState"),
        notification_subscriptions=o.items(
            "notificationSubscriptions", enum_item(NotificationType)
        ),
        extra=o.extra(),
    )


def read_outcome(value: JSON, path: str) -> OperationOutcome:
    head = Obj(value, path, ())
    kind = head.req_enum(OutcomeType, "type")
    if kind is OutcomeType.NOT_UNDERSTOOD:
        raise WireError(head.at("type"), f"unknown outcome type {show(head.get('type'))}")
    o = Obj(value, path, OUTCOME_COMMON_FIELDS + OUTCOME_FIELDS.get(kind, ()))
    common = {
        "id": o.req_text("id"),
        "outcome": o.req_enum(Outcome, "outcome"),
        "failure_reason": o.text("failureReason"),
        "extra": o.extra(),
    }
    if kind is OutcomeType.PLAY_PROMPT:
        reason = o.req_enum(PromptCompletionReason, "completionReason")
        return PlayPromptOutcome(completion_reason=reason, **common)  # type: ignore[arg-type]
    if kind is OutcomeType.RECORD:
        length = o.number("lengthOfRecordingInSecs", required=True)
        assert length is not None
        return RecordOutcome(
            completion_reason=o.req_enum(RecordingCompletionReason, "completionReason"),
            length_of_recording_in_secs=length,
            format=o.enum(RecordingFormat, "format"),
            **common,  # type: ignore[arg-type]
        )
    if kind is OutcomeType.RECOGNIZE:
        choice = o.get("choiceOutcome")
        digits = o.get("collectDigitsOutcome")
        return RecognizeOutcome(
            choice_outcome=None if choice is None else _choice(choice, o.at("choiceOutcome")),
            collect_digits_outcome=None
            if digits is None
            else _digits(digits, o.at("collectDigitsOutcome")),
            **common,  # type: ignore[arg-type]
        )
    return OUTCOME_CLASSES[kind](**common)  # type: ignore[arg-type]


def _choice(value: JSON, path: str) -> ChoiceOutcome:
    o = Obj(value, path, CHOICE_OUTCOME_FIELDS)
    return ChoiceOutcome(
        completion_reason=o.req_enum(RecognitionCompletionReason, "completionReason"),
        choice_name=o.text("choiceName"),
        extra=o.extra(),
    )


def _digits(value: JSON, path: str) -> CollectDigitsOutcome:
    o = Obj(value, path, DIGITS_OUTCOME_FIELDS)
    digits = o.get("digits")
    return CollectDigitsOutcome(
        completion_reason=o.req_enum(DigitCollectionCompletionReason, "completionReason"),
        digits=None if digits is None else "".join(read_digits(digits, o.at("digits"))),
        extra=o.extra(),
    )


def read_conversation_result(value: JSON, path: str = ROOT) -> ConversationResult:
    o = Obj(value, path, RESULT_FIELDS)
    return ConversationResult(
        id=o.req_text("id"),
        app_id=o.text("appId"),
        call_state=o.req_enum(CallState, "callState"),
        operation_outcome=read_outcome(o.require("operationOutcome"), o.at("operationOutcome")),
        links=o.links(),
        app_state=o.text("appState"),
        extra=o.extra(),
    )


def parse_workflow(data: bytes | str) -> Workflow:
    """A Workflow from the bytes of an HTTP body."""
    return read_workflow(loads(data))
