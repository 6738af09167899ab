"""Writing the calling protocol's JSON: what the platform sends.

camelCase names, camelCase enum values (culture "en-US"), nulls left out, compact UTF-8 bytes
(``encode``).
"""

from __future__ import annotations

from dataclasses import dataclass

from emulator.calling.model import (
    LEGACY_VALIDATION_OUTCOME,
    Action,
    Answer,
    Conversation,
    ConversationResult,
    OperationOutcome,
    OutcomeType,
    Participant,
    PlayPrompt,
    PlayPromptOutcome,
    Prompt,
    RecognitionOption,
    Recognize,
    RecognizeOutcome,
    Record,
    RecordOutcome,
    WireEnum,
    Workflow,
)
from emulator.jsonutil import JSON, JSONObject, dumps


@dataclass(frozen=True, slots=True)
class WireOptions:
    """Options for writing platform messages.

    ``legacy_validation_outcome_type`` writes the validation outcome's type as the real SDKs
    spelled it (``worfklowValidationOutcome``; field notes).
    """

    legacy_validation_outcome_type: bool = False


DEFAULT_OPTIONS = WireOptions()

Message = Conversation | ConversationResult | Workflow | OperationOutcome | Action


def _put(out: JSONObject, name: str, value: JSON | WireEnum) -> None:
    if value is None:
        return
    out[name] = value.value if isinstance(value, WireEnum) else value


def _enums(values: tuple[WireEnum, ...] | None) -> JSON:
    return None if values is None else [v.value for v in values]


def _finish(out: JSONObject, extra: dict[str, JSON]) -> JSONObject:
    for key, value in extra.items():
        out.setdefault(key, value)
    return out


def participant_to_json(p: Participant) -> JSONObject:
    out: JSONObject = {"identity": p.identity}
    _put(out, "displayName", p.display_name)
    _put(out, "languageId", p.language_id)
    out["originator"] = p.originator
    return _finish(out, p.extra)


def conversation_to_json(c: Conversation) -> JSONObject:
    out: JSONObject = {
        "id": c.id,
        "participants": [participant_to_json(p) for p in c.participants],
        "presentedModalityTypes": _enums(c.presented_modality_types),
        "isMultiparty": c.is_multiparty,
        "callState": c.call_state.value,
    }
    if c.links:
        out["links"] = dict(c.links)
    _put(out, "subject", c.subject)
    _put(out, "threadId", c.thread_id)
    return _finish(out, c.extra)


def prompt_to_json(p: Prompt) -> JSONObject:
    out: JSONObject = {}
    _put(out, "value", p.value)
    _put(out, "fileUri", p.file_uri)
    _put(out, "voice", p.voice)
    _put(out, "culture", p.culture)
    _put(out, "silenceLengthInMilliseconds", p.silence_length_in_milliseconds)
    _put(out, "emphasize", p.emphasize)
    _put(out, "sayAs", p.say_as)
    return _finish(out, p.extra)


def _digit_list(digits: tuple[str, ...] | None) -> JSON:
    return None if digits is None else list(digits)


def action_to_json(a: Action) -> JSONObject:
    out: JSONObject = {}
    if a.operation_id:
        out["operationId"] = a.operation_id
    out["action"] = a.kind.value
    if isinstance(a, Answer):
        _put(out, "acceptModalityTypes", _enums(a.accept_modality_types))
    elif isinstance(a, PlayPrompt):
        out["prompts"] = [prompt_to_json(p) for p in a.prompts]
    elif isinstance(a, Record):
        _put(out, "playPrompt", None if a.play_prompt is None else action_to_json(a.play_prompt))
        _put(out, "maxDurationInSeconds", a.max_duration_in_seconds)
        _put(out, "initialSilenceTimeoutInSeconds", a.initial_silence_timeout_in_seconds)
        _put(out, "maxSilenceTimeoutInSeconds", a.max_silence_timeout_in_seconds)
        _put(out, "recordingFormat", a.recording_format)
        _put(out, "playBeep", a.play_beep)
        _put(out, "stopTones", _digit_list(a.stop_tones))
    elif isinstance(a, Recognize):
        _put(out, "playPrompt", None if a.play_prompt is None else action_to_json(a.play_prompt))
        _put(out, "bargeInAllowed", a.barge_in_allowed)
        _put(out, "culture", a.culture)
        _put(out, "initialSilenceTimeoutInSeconds", a.initial_silence_timeout_in_seconds)
        _put(out, "interdigitTimeoutInSeconds", a.interdigit_timeout_in_seconds)
        if a.choices is not None:
            out["choices"] = [_option_to_json(c) for c in a.choices]
        if a.collect_digits is not None:
            cd = a.collect_digits
            collect: JSONObject = {}
            _put(collect, "maxNumberOfDtmfs", cd.max_number_of_dtmfs)
            _put(collect, "stopTones", _digit_list(cd.stop_tones))
            out["collectDigits"] = _finish(collect, cd.extra)
    return _finish(out, a.extra)


def _option_to_json(c: RecognitionOption) -> JSONObject:
    out: JSONObject = {"name": c.name}
    _put(out, "speechVariation", None if c.speech_variation is None else list(c.speech_variation))
    if c.dtmf_variation is not None:
        # One key is written as the SDK writes it (a one-character string); a sequence as an array.
        dtmf = c.dtmf_variation
        out["dtmfVariation"] = dtmf if len(dtmf) == 1 else list(dtmf)
    return _finish(out, c.extra)


def workflow_to_json(w: Workflow) -> JSONObject:
    out: JSONObject = {"actions": [action_to_json(a) for a in w.actions]}
    if w.links:
        out["links"] = dict(w.links)
    _put(out, "callState", w.call_state)
    _put(out, "appState", w.app_state)
    _put(out, "notificationSubscriptions", _enums(w.notification_subscriptions))
    return _finish(out, w.extra)


def outcome_to_json(o: OperationOutcome, options: WireOptions = DEFAULT_OPTIONS) -> JSONObject:
    kind = o.type.value
    if o.type is OutcomeType.WORKFLOW_VALIDATION and options.legacy_validation_outcome_type:
        kind = LEGACY_VALIDATION_OUTCOME
    out: JSONObject = {"type": kind, "id": o.id, "outcome": o.outcome.value}
    _put(out, "failureReason", o.failure_reason)
    if isinstance(o, PlayPromptOutcome):
        out["completionReason"] = o.completion_reason.value
    elif isinstance(o, RecordOutcome):
        out["completionReason"] = o.completion_reason.value
        out["lengthOfRecordingInSecs"] = round(o.length_of_recording_in_secs, 3)
        _put(out, "format", o.format)
    elif isinstance(o, RecognizeOutcome):
        if o.choice_outcome is not None:
            choice: JSONObject = {"completionReason": o.choice_outcome.completion_reason.value}
            _put(choice, "choiceName", o.choice_outcome.choice_name)
            out["choiceOutcome"] = _finish(choice, o.choice_outcome.extra)
        if o.collect_digits_outcome is not None:
            cdo = o.collect_digits_outcome
            digits: JSONObject = {"completionReason": cdo.completion_reason.value}
            _put(digits, "digits", cdo.digits)
            out["collectDigitsOutcome"] = _finish(digits, cdo.extra)
    return _finish(out, o.extra)


def conversation_result_to_json(
    r: ConversationResult, options: WireOptions = DEFAULT_OPTIONS
) -> JSONObject:
    out: JSONObject = {"id": r.id}
    _put(out, "appId", r.app_id)
    out["callState"] = r.call_state.value
    out["operationOutcome"] = outcome_to_json(r.operation_outcome, options)
    if r.links:
        out["links"] = dict(r.links)
    _put(out, "appState", r.app_state)
    return _finish(out, r.extra)


def to_json(message: Message, options: WireOptions = DEFAULT_OPTIONS) -> JSONObject:
    """The JSON object of any protocol message, as botemu writes it."""
    if isinstance(message, Conversation):
        return conversation_to_json(message)
    if isinstance(message, ConversationResult):
        return conversation_result_to_json(message, options)
    if isinstance(message, Workflow):
        return workflow_to_json(message)
    if isinstance(message, OperationOutcome):
        return outcome_to_json(message, options)
    return action_to_json(message)


def encode(message: Message, options: WireOptions = DEFAULT_OPTIONS) -> bytes:
    """The exact bytes botemu puts on the wire for a message."""
    return dumps(to_json(message, options))
