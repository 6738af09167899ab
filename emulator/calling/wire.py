"""Reading and writing the calling protocol's JSON (spec section C; field notes, "wire format").

Reading (what a bot sends, or any message in tests): names and enum values are matched
case-insensitively, unknown fields are kept in ``extra``, unknown enum values become
``NOT_UNDERSTOOD``, and a bare-string ``stopTones`` is accepted. Reading raises ``WireError``
(with a JSON path) and nothing else.

Writing (what the platform sends): camelCase names, camelCase enum values (culture "en-US"), nulls
left out, compact UTF-8 bytes (``encode``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from emulator.calling.model import (
    ACTION_CLASSES,
    DTMF_KEYS,
    LEGACY_VALIDATION_OUTCOME,
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
    WireEnum,
    Workflow,
)
from emulator.errors import WireError
from emulator.jsonutil import (
    JSON,
    JSONObject,
    child,
    dumps,
    find_key,
    is_integer,
    is_number,
    kind_of,
    unknown_keys,
)

E = TypeVar("E", bound=WireEnum)
T = TypeVar("T")

ROOT = "$"


@dataclass(frozen=True, slots=True)
class WireOptions:
    """Options for writing platform messages.

    ``legacy_validation_outcome_type`` writes the validation outcome's type as the real SDKs
    spelled it (``worfklowValidationOutcome``; field notes).
    """

    legacy_validation_outcome_type: bool = False


DEFAULT_OPTIONS = WireOptions()

# --- Reading -----------------------------------------------------------------------------------


def loads(data: bytes | str) -> JSON:
    """Parse JSON text, raising WireError (never anything else) when it is not JSON."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value: JSON = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except UnicodeDecodeError as e:
        raise WireError(ROOT, f"body is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise WireError(ROOT, f"not JSON: {e.msg}", line=e.lineno, column=e.colno) from e
    except (ValueError, RecursionError) as e:
        raise WireError(ROOT, f"not JSON: {e}") from e
    return value


def _reject_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


class _Obj:
    """One JSON object being read: case-insensitive member access with paths."""

    __slots__ = ("known", "path", "raw")

    def __init__(self, value: object, path: str, known: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            raise WireError(path, f"expected an object, got {kind_of(value)}")
        self.raw: dict[str, JSON] = value
        self.path = path
        self.known = known

    def get(self, name: str) -> JSON:
        key = find_key(self.raw, name)
        return None if key is None else self.raw[key]

    def at(self, name: str) -> str:
        """The path of a member, spelled as the document spells it (so positions resolve)."""
        return child(self.path, find_key(self.raw, name) or name)

    def require(self, name: str) -> JSON:
        value = self.get(name)
        if value is None:
            raise WireError(self.at(name), "required field is missing")
        return value

    def text(self, name: str, *, required: bool = False) -> str | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise WireError(self.at(name), f"expected a string, got {kind_of(value)}")
        return value

    def req_text(self, name: str) -> str:
        value = self.text(name, required=True)
        assert value is not None
        return value

    def flag(self, name: str, *, required: bool = False) -> bool | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise WireError(self.at(name), f"expected a boolean, got {kind_of(value)}")
        return value

    def integer(self, name: str) -> int | None:
        value = self.get(name)
        if value is None:
            return None
        if not is_integer(value):
            raise WireError(self.at(name), f"expected an integer, got {_show(value)}")
        assert isinstance(value, int | float)
        return int(value)

    def number(self, name: str, *, required: bool = False) -> float | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not is_number(value):
            raise WireError(self.at(name), f"expected a number, got {_show(value)}")
        assert isinstance(value, int | float)
        return float(value)

    def enum(self, cls: type[E], name: str, *, required: bool = False) -> E | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        return read_enum(cls, value, self.at(name))

    def req_enum(self, cls: type[E], name: str) -> E:
        value = self.enum(cls, name, required=True)
        assert value is not None
        return value

    def items(
        self, name: str, item: Callable[[JSON, str], T], *, required: bool = False
    ) -> tuple[T, ...] | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        path = self.at(name)
        if not isinstance(value, list):
            raise WireError(path, f"expected an array, got {kind_of(value)}")
        return tuple(item(v, child(path, i)) for i, v in enumerate(value))

    def links(self, name: str = "links") -> dict[str, str]:
        value = self.get(name)
        if value is None:
            return {}
        path = self.at(name)
        if not isinstance(value, dict):
            raise WireError(path, f"expected an object, got {kind_of(value)}")
        out: dict[str, str] = {}
        for key, uri in value.items():
            if uri is None:
                continue
            if not isinstance(uri, str):
                raise WireError(child(path, key), f"expected a URI string, got {kind_of(uri)}")
            canonical = key.lower() if key.lower() in ("call", "callback") else key
            if canonical not in out or key == canonical:  # the exact name wins, else the first
                out[canonical] = uri
        return out

    def extra(self) -> dict[str, JSON]:
        return {k: self.raw[k] for k in unknown_keys(self.raw, self.known)}


def _show(value: object) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{kind_of(value)} ({json.dumps(value)[:40]})"
    return kind_of(value)


def read_enum(cls: type[E], value: JSON, path: str) -> E:
    if not isinstance(value, str):
        raise WireError(path, f"expected a string, got {kind_of(value)}")
    return cls.read(value)


def _str_item(value: JSON, path: str) -> str:
    if not isinstance(value, str):
        raise WireError(path, f"expected a string, got {kind_of(value)}")
    return value


def _enum_item(cls: type[E]) -> Callable[[JSON, str], E]:
    def item(value: JSON, path: str) -> E:
        return read_enum(cls, value, path)

    return item


def read_digits(value: JSON, path: str, *, allow_bool: bool = False) -> tuple[str, ...]:
    """A list of one-character digit strings; also a bare string (each character a digit) and,
    for record's ``stopTones`` listed as boolean, ``true`` (any key) or ``false`` (none)."""
    if isinstance(value, bool) and allow_bool:
        return tuple(DTMF_KEYS) if value else ()
    if isinstance(value, str):
        return tuple(value)
    if isinstance(value, list):
        return tuple(_str_item(v, child(path, i)) for i, v in enumerate(value))
    raise WireError(path, f"expected an array of digits, got {kind_of(value)}")


_PARTICIPANT = ("identity", "displayName", "languageId", "originator")


def read_participant(value: JSON, path: str) -> Participant:
    o = _Obj(value, path, _PARTICIPANT)
    originator = o.flag("originator", required=True)
    assert originator is not None
    return Participant(
        identity=o.req_text("identity"),
        originator=originator,
        display_name=o.text("displayName"),
        language_id=o.text("languageId"),
        extra=o.extra(),
    )


_CONVERSATION = (
    "id",
    "participants",
    "presentedModalityTypes",
    "isMultiparty",
    "callState",
    "links",
    "subject",
    "threadId",
)


def read_conversation(value: JSON, path: str = ROOT) -> Conversation:
    o = _Obj(value, path, _CONVERSATION)
    participants = o.items("participants", read_participant, required=True)
    modalities = o.items("presentedModalityTypes", _enum_item(ModalityType), required=True)
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


_PROMPT = (
    "value",
    "fileUri",
    "voice",
    "culture",
    "silenceLengthInMilliseconds",
    "emphasize",
    "sayAs",
)


def read_prompt(value: JSON, path: str) -> Prompt:
    o = _Obj(value, path, _PROMPT)
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


_OPTION = ("name", "speechVariation", "dtmfVariation")


def read_option(value: JSON, path: str) -> RecognitionOption:
    o = _Obj(value, path, _OPTION)
    dtmf = o.get("dtmfVariation")
    return RecognitionOption(
        name=o.req_text("name"),
        speech_variation=o.items("speechVariation", _str_item),
        dtmf_variation=None if dtmf is None else "".join(read_digits(dtmf, o.at("dtmfVariation"))),
        extra=o.extra(),
    )


_COLLECT = ("maxNumberOfDtmfs", "stopTones")


def read_collect_digits(value: JSON, path: str) -> CollectDigits:
    o = _Obj(value, path, _COLLECT)
    tones = o.get("stopTones")
    return CollectDigits(
        max_number_of_dtmfs=o.integer("maxNumberOfDtmfs"),
        stop_tones=None if tones is None else read_digits(tones, o.at("stopTones")),
        extra=o.extra(),
    )


_ACTION_FIELDS: dict[ActionType, tuple[str, ...]] = {
    ActionType.ANSWER: ("acceptModalityTypes",),
    ActionType.REJECT: (),
    ActionType.HANGUP: (),
    ActionType.PLAY_PROMPT: ("prompts",),
    ActionType.RECORD: (
        "playPrompt",
        "maxDurationInSeconds",
        "initialSilenceTimeoutInSeconds",
        "maxSilenceTimeoutInSeconds",
        "recordingFormat",
        "playBeep",
        "stopTones",
    ),
    ActionType.RECOGNIZE: (
        "playPrompt",
        "bargeInAllowed",
        "culture",
        "initialSilenceTimeoutInSeconds",
        "interdigitTimeoutInSeconds",
        "choices",
        "collectDigits",
    ),
}


def action_fields(kind: ActionType) -> tuple[str, ...]:
    """Every field name an action of this kind may carry (with operationId and action)."""
    return ("operationId", "action", *_ACTION_FIELDS.get(kind, ()))


def read_action(value: JSON, path: str, *, nested: bool = False) -> Action:
    """One action. ``nested`` reads the ``playPrompt`` member of record or recognize, whose
    ``action`` and ``operationId`` may be absent."""
    head = _Obj(value, path, ())
    if nested:
        raw_kind = head.get("action")
        if raw_kind is not None:
            kind = read_enum(ActionType, raw_kind, head.at("action"))
            if kind is not ActionType.PLAY_PROMPT:
                raise WireError(head.at("action"), "the nested prompt must be a playPrompt")
        kind = ActionType.PLAY_PROMPT
    else:
        kind = head.req_enum(ActionType, "action")
        if kind is ActionType.NOT_UNDERSTOOD:
            raise WireError(head.at("action"), f"unknown action {_show(head.get('action'))}")
    o = _Obj(value, path, action_fields(kind))
    op = o.text("operationId") if nested else o.req_text("operationId")
    common = {"operation_id": op or "", "extra": o.extra()}
    if kind is ActionType.ANSWER:
        return Answer(
            accept_modality_types=o.items("acceptModalityTypes", _enum_item(ModalityType)),
            **common,  # type: ignore[arg-type]
        )
    if kind is ActionType.PLAY_PROMPT:
        prompts = o.items("prompts", read_prompt, required=True)
        assert prompts is not None
        return PlayPrompt(prompts=prompts, **common)  # type: ignore[arg-type]
    if kind is ActionType.RECORD:
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
            **common,  # type: ignore[arg-type]
        )
    if kind is ActionType.RECOGNIZE:
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
            **common,  # type: ignore[arg-type]
        )
    return ACTION_CLASSES[kind](**common)  # type: ignore[arg-type]


def _nested_prompt(o: _Obj) -> PlayPrompt | None:
    value = o.get("playPrompt")
    if value is None:
        return None
    action = read_action(value, o.at("playPrompt"), nested=True)
    assert isinstance(action, PlayPrompt)
    return action


def _top_action(value: JSON, path: str) -> Action:
    return read_action(value, path)


_WORKFLOW = ("actions", "links", "callState", "appState", "notificationSubscriptions")


def read_workflow(value: JSON, path: str = ROOT) -> Workflow:
    o = _Obj(value, path, _WORKFLOW)
    actions = o.items("actions", _top_action, required=True)
    assert actions is not None
    return Workflow(
        actions=actions,
        links=o.links(),
        call_state=o.enum(CallState, "callState"),
        app_state=o.text("appState"),
        notification_subscriptions=o.items(
            "notificationSubscriptions", _enum_item(NotificationType)
        ),
        extra=o.extra(),
    )


_OUTCOME_COMMON = ("type", "id", "outcome", "failureReason")
_OUTCOME_FIELDS: dict[OutcomeType, tuple[str, ...]] = {
    OutcomeType.PLAY_PROMPT: ("completionReason",),
    OutcomeType.RECORD: ("completionReason", "lengthOfRecordingInSecs", "format"),
    OutcomeType.RECOGNIZE: ("choiceOutcome", "collectDigitsOutcome"),
}


def read_outcome(value: JSON, path: str) -> OperationOutcome:
    head = _Obj(value, path, ())
    kind = head.req_enum(OutcomeType, "type")
    if kind is OutcomeType.NOT_UNDERSTOOD:
        raise WireError(head.at("type"), f"unknown outcome type {_show(head.get('type'))}")
    o = _Obj(value, path, _OUTCOME_COMMON + _OUTCOME_FIELDS.get(kind, ()))
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
    o = _Obj(value, path, ("completionReason", "choiceName"))
    return ChoiceOutcome(
        completion_reason=o.req_enum(RecognitionCompletionReason, "completionReason"),
        choice_name=o.text("choiceName"),
        extra=o.extra(),
    )


def _digits(value: JSON, path: str) -> CollectDigitsOutcome:
    o = _Obj(value, path, ("completionReason", "digits"))
    digits = o.get("digits")
    return CollectDigitsOutcome(
        completion_reason=o.req_enum(DigitCollectionCompletionReason, "completionReason"),
        digits=None if digits is None else "".join(read_digits(digits, o.at("digits"))),
        extra=o.extra(),
    )


_RESULT = ("id", "appId", "callState", "operationOutcome", "links", "appState")


def read_conversation_result(value: JSON, path: str = ROOT) -> ConversationResult:
    o = _Obj(value, path, _RESULT)
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


# --- Writing -----------------------------------------------------------------------------------

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
