"""Validation of a Workflow the way the calling platform validates it.

``validate_workflow(document, context)`` takes the Workflow as parsed JSON (not as a typed value:
casing, bare strings and wrong types are themselves findings) and returns every ``Finding``.
Severity ``error`` means the platform answers with the validation outcome and runs nothing;
``warning`` means it runs the Workflow but the bot deviates from the spec or from what real SDKs
send. Every rule is registered in ``RULES`` with its source; ``docs/rules.md`` lists them.

A Workflow with no error-severity finding always reads with ``wire.read_workflow``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from emulator.calling.model import (
    DTMF_KEYS,
    ActionType,
    CallState,
    Culture,
    ModalityType,
    NotificationType,
    RecordingFormat,
    SayAs,
    VoiceGender,
    WireEnum,
)
from emulator.calling.speech import normalize_speech
from emulator.calling.wire import action_fields
from emulator.findings import Finding, Rule, RuleRegistry, Severity
from emulator.jsonutil import JSON, child, is_integer, is_number, kind_of, utf16_length

ERROR, WARNING = Severity.ERROR, Severity.WARNING
SPEC, NOTES = "spec", "field notes"

RULES = RuleRegistry("calling")
_r = RULES.add

# Structure
WF_NOT_OBJECT = _r("WF-NOT-OBJECT", ERROR, f"{SPEC} C, Workflow", "The Workflow is a JSON object.")
WF_REQUIRED = _r("WF-REQUIRED", ERROR, f"{SPEC} C", "A required field is present.")
WF_TYPE = _r("WF-TYPE", ERROR, f"{SPEC} C", "Every field has the JSON type the spec gives it.")
WF_ENUM_VALUE = _r(
    "WF-ENUM-VALUE", ERROR, f"{SPEC} C, Enumerations", "An enumeration value is one the spec lists."
)
WF_CASING = _r(
    "WF-CASING",
    WARNING,
    f"{NOTES}, Calling: wire format",
    "Names and enum values are written in camelCase (read case-insensitively).",
)
WF_UNKNOWN_FIELD = _r(
    "WF-UNKNOWN-FIELD",
    WARNING,
    f"{SPEC} Versioning 4",
    "An unknown field is ignored by the platform.",
)
WF_DUPLICATE_FIELD = _r(
    "WF-DUPLICATE-FIELD",
    WARNING,
    f"{NOTES}, Calling: wire format",
    "A field appears twice in different casing; the exact name wins, else the first.",
)
# Actions and their order
WF_ACTIONS_EMPTY = _r(
    "WF-ACTIONS-EMPTY", ERROR, f"{SPEC} C, Workflow", "actions has at least one action."
)
WF_ACTION_UNKNOWN = _r(
    "WF-ACTION-UNKNOWN", ERROR, f"{SPEC} C, Actions", "The action name is one of the six actions."
)
WF_OPERATION_ID = _r(
    "WF-OPERATION-ID", ERROR, f"{SPEC} C, Actions", "Every action has a non-empty operationId."
)
WF_OPERATION_ID_UNIQUE = _r(
    "WF-OPERATION-ID-UNIQUE",
    WARNING,
    f"{SPEC} C, Actions",
    "operationIds are unique in a Workflow, so that an outcome names one action.",
)
WF_FIRST_ACTION = _r(
    "WF-FIRST-ACTION",
    ERROR,
    f"{SPEC} States and transitions, rule 1",
    "The first action in reply to a Conversation is answer or reject.",
)
WF_REJECT_ALONE = _r(
    "WF-REJECT-ALONE", ERROR, f"{NOTES}, validation limits", "reject is the only action."
)
WF_REJECT_PLACEMENT = _r(
    "WF-REJECT-PLACEMENT",
    ERROR,
    f"{SPEC} C, Actions (reject)",
    "reject only declines a call that has not been answered.",
)
WF_ANSWER_AGAIN = _r(
    "WF-ANSWER-AGAIN",
    WARNING,
    f"{SPEC} C, Actions (answer)",
    "answer belongs to the reply to the Conversation; on an answered call it does nothing.",
)
WF_ACTION_REPEATED = _r(
    "WF-ACTION-REPEATED",
    ERROR,
    f"{NOTES}, validation limits",
    "No action appears twice in a Workflow, except playPrompt.",
)
WF_ORDER = _r(
    "WF-ORDER",
    ERROR,
    f"{NOTES}, validation limits",
    "Actions go by rank: answer < playPrompt/record/recognize < hangup.",
)
WF_HANGUP_LAST = _r(
    "WF-HANGUP-LAST", ERROR, f"{SPEC} States and transitions, rule 3", "hangup is the last action."
)
# Links, appState, callState, subscriptions
WF_CALLBACK_URI = _r(
    "WF-CALLBACK-URI",
    ERROR,
    f"{NOTES}, validation limits",
    "links.callback is an absolute http(s) URI.",
)
WF_CALLBACK_HTTPS = _r(
    "WF-CALLBACK-HTTPS",
    ERROR,
    f"{SPEC} Authentication, Calling platform to bot 1; {NOTES}",
    "links.callback uses https (a warning when http is allowed for local work).",
)
WF_NO_CALLBACK = _r(
    "WF-NO-CALLBACK",
    WARNING,
    f"{NOTES}, how the platform executes a Workflow",
    "Without links.callback the platform runs every action, hangs up and posts nothing.",
)
WF_APPSTATE_LENGTH = _r(
    "WF-APPSTATE-LENGTH", ERROR, f"{SPEC} Limits", "appState is at most 1024 characters."
)
WF_CALLSTATE = _r(
    "WF-CALLSTATE",
    WARNING,
    f"{SPEC} C, Workflow",
    "A Workflow's callState, when sent, is a known CallState (the platform ignores it).",
)
WF_NOTIFICATION = _r(
    "WF-NOTIFICATION",
    WARNING,
    f"{SPEC} Events",
    "notificationSubscriptions holds callStateChange (other values are not shown).",
)
# Prompts
WF_PLAYPROMPT_PROMPTS = _r(
    "WF-PLAYPROMPT-PROMPTS",
    ERROR,
    f"{SPEC} C, Actions (playPrompt)",
    "prompts has at least one prompt.",
)
WF_NESTED_PROMPT = _r(
    "WF-NESTED-PROMPT",
    ERROR,
    f"{SPEC} C, Actions (record, recognize)",
    "The playPrompt member of record or recognize is a playPrompt object.",
)
WF_PROMPT_CONTENT = _r(
    "WF-PROMPT-CONTENT",
    ERROR,
    f"{SPEC} C, Prompt; {NOTES}",
    "A prompt has a value, a fileUri, or silenceLengthInMilliseconds > 0.",
)
WF_PROMPT_BOTH = _r(
    "WF-PROMPT-BOTH",
    ERROR,
    f"{NOTES}, validation limits",
    "A prompt never has both value and fileUri.",
)
WF_PROMPT_SILENCE = _r(
    "WF-PROMPT-SILENCE",
    ERROR,
    f"{SPEC} C, Prompt",
    "silenceLengthInMilliseconds is greater than 0 when value is null.",
)
WF_PROMPT_SILENCE_RANGE = _r(
    "WF-PROMPT-SILENCE-RANGE",
    ERROR,
    f"{NOTES}, validation limits",
    "silenceLengthInMilliseconds is between 0 and 60000.",
)
WF_PROMPT_VALUE_LENGTH = _r(
    "WF-PROMPT-VALUE-LENGTH",
    ERROR,
    f"{NOTES}, validation limits",
    "A prompt's value is at most 2048 characters.",
)
WF_PROMPT_FILE_URI = _r(
    "WF-PROMPT-FILE-URI", ERROR, f"{SPEC} C, Prompt", "fileUri is an absolute http(s) address."
)
WF_PROMPT_TEXT_ONLY = _r(
    "WF-PROMPT-TEXT-ONLY",
    WARNING,
    f"{SPEC} C, Prompt",
    "voice, culture, emphasize and sayAs apply only to text; on a file prompt they are ignored.",
)
WF_CULTURE = _r(
    "WF-CULTURE", ERROR, f"{SPEC} Limits", "culture is en-US, the only supported value."
)
# Record
WF_RECORD_MAX_DURATION = _r(
    "WF-RECORD-MAX-DURATION",
    ERROR,
    f"{NOTES}, validation limits",
    "maxDurationInSeconds is 2 to 600.",
)
WF_RECORD_INITIAL_SILENCE = _r(
    "WF-RECORD-INITIAL-SILENCE",
    ERROR,
    f"{NOTES}, validation limits",
    "record initialSilenceTimeoutInSeconds is 1 to 30.",
)
WF_RECORD_MAX_SILENCE = _r(
    "WF-RECORD-MAX-SILENCE",
    ERROR,
    f"{NOTES}, validation limits",
    "maxSilenceTimeoutInSeconds is 0 to 30.",
)
WF_STOP_TONES_COUNT = _r(
    "WF-STOP-TONES-COUNT", ERROR, f"{NOTES}, validation limits", "At most 5 stop tones."
)
WF_STOP_TONES_BARE = _r(
    "WF-STOP-TONES-BARE",
    WARNING,
    f"{NOTES}, Calling: wire format",
    "stopTones is an array; a bare string is accepted.",
)
WF_STOP_TONES_BOOLEAN = _r(
    "WF-STOP-TONES-BOOLEAN",
    WARNING,
    f"{SPEC} C, Actions (record)",
    "record stopTones is listed as boolean: true is read as 'any key stops', false as none.",
)
WF_DTMF_DIGIT = _r(
    "WF-DTMF-DIGIT",
    ERROR,
    f"{NOTES}, Calling: wire format",
    "A digit is one character of 0-9 * # A B C D.",
)
# Recognize
WF_RECOGNIZE_ONE_OF = _r(
    "WF-RECOGNIZE-ONE-OF",
    ERROR,
    f"{SPEC} C, Actions (recognize)",
    "Exactly one of collectDigits and choices is specified.",
)
WF_RECOGNIZE_INITIAL_SILENCE = _r(
    "WF-RECOGNIZE-INITIAL-SILENCE",
    ERROR,
    f"{NOTES}, validation limits",
    "recognize initialSilenceTimeoutInSeconds is 1 to 30.",
)
WF_RECOGNIZE_INTERDIGIT = _r(
    "WF-RECOGNIZE-INTERDIGIT",
    ERROR,
    f"{NOTES}, validation limits",
    "interdigitTimeoutInSeconds is 1 to 5.",
)
WF_CHOICES_EMPTY = _r(
    "WF-CHOICES-EMPTY", ERROR, f"{SPEC} C, Actions (recognize)", "choices is not empty."
)
WF_CHOICE_NAME = _r(
    "WF-CHOICE-NAME", ERROR, f"{NOTES}, validation limits", "Every choice has a non-blank name."
)
WF_CHOICE_NAME_UNIQUE = _r(
    "WF-CHOICE-NAME-UNIQUE",
    WARNING,
    f"{SPEC} C, RecognitionOption",
    "Choice names are unique, so that the matched name tells the choice.",
)
WF_CHOICE_VARIATION = _r(
    "WF-CHOICE-VARIATION",
    ERROR,
    f"{NOTES}, validation limits",
    "Every choice has at least one speech or DTMF variation.",
)
WF_CHOICE_SPEECH_COUNT = _r(
    "WF-CHOICE-SPEECH-COUNT",
    ERROR,
    f"{NOTES}, validation limits",
    "At most 5 speech variations per choice.",
)
WF_CHOICE_UNIQUE = _r(
    "WF-CHOICE-UNIQUE",
    ERROR,
    f"{NOTES}, validation limits",
    "DTMF and speech variations are unique across choices.",
)
WF_DTMF_SEQUENCE = _r(
    "WF-DTMF-SEQUENCE",
    WARNING,
    f"{NOTES}, Calling: wire format",
    "dtmfVariation is one key; several keys are read as one key sequence.",
)
WF_DTMF_PREFIX = _r(
    "WF-DTMF-PREFIX",
    WARNING,
    "botemu (docs/decisions.md)",
    "No DTMF sequence is a prefix of another's: the shorter one always wins.",
)
WF_DIGITS_LIMIT = _r(
    "WF-DIGITS-LIMIT",
    ERROR,
    f"{NOTES}, validation limits",
    "collectDigits has maxNumberOfDtmfs 1 to 20, or at least one stop tone.",
)
# Answer
WF_ANSWER_MODALITIES = _r(
    "WF-ANSWER-MODALITIES",
    ERROR,
    f"{NOTES}, validation limits",
    "acceptModalityTypes has no repeats and no videoBasedScreenSharing.",
)

WORKFLOW_FIELDS = ("actions", "links", "callState", "appState", "notificationSubscriptions")
PROMPT_FIELDS = (
    "value",
    "fileUri",
    "voice",
    "culture",
    "silenceLengthInMilliseconds",
    "emphasize",
    "sayAs",
)
_RANK = {
    ActionType.ANSWER: 1,
    ActionType.REJECT: 1,
    ActionType.PLAY_PROMPT: 2,
    ActionType.RECORD: 2,
    ActionType.RECOGNIZE: 2,
    ActionType.HANGUP: 3,
}
APPSTATE_MAX = 1024
PROMPT_VALUE_MAX = 2048
MAX_STOP_TONES = 5


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What the rules need to know beyond the Workflow itself.

    ``first``: the call has not been answered yet, so this Workflow is the reply to the
    Conversation (or the retry after a validation outcome sent before answering).
    ``allow_http``: an http callback is accepted with a warning, for local work.
    """

    first: bool = False
    allow_http: bool = False


def validate_workflow(document: JSON, context: RuleContext | None = None) -> list[Finding]:
    """Every finding for a Workflow, in document order."""
    checker = _Checker(context or RuleContext())
    checker.workflow(document)
    return checker.findings


class _Checker:
    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.findings: list[Finding] = []

    def add(
        self,
        rule: Rule,
        where: str,
        message: str,
        evidence: JSON = None,
        severity: Severity | None = None,
    ) -> None:
        shown = None if evidence is None else _evidence(evidence)
        self.findings.append(Finding(rule.id, severity or rule.severity, where, message, shown))

    # --- generic checks ---

    def fields(self, obj: Mapping[str, JSON], path: str, known: tuple[str, ...]) -> dict[str, str]:
        """Check the names of an object; return canonical name -> actual key."""
        found: dict[str, str] = {}
        by_lower = {k.lower(): k for k in known}
        for key in obj:
            canonical = by_lower.get(key.lower())
            if canonical is None:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.add(
                    WF_UNKNOWN_FIELD, child(path, key), f"unknown field '{key}' is ignored{hint}"
                )
                continue
            if canonical in found:
                kept = canonical if canonical in obj else found[canonical]
                self.add(
                    WF_DUPLICATE_FIELD,
                    child(path, key),
                    f"'{key}' and '{found[canonical]}' name the same field; '{kept}' is used",
                )
                if key == canonical:
                    found[canonical] = key
                continue
            if key != canonical:
                self.add(WF_CASING, child(path, key), f"'{key}' is written '{canonical}'")
            found[canonical] = key
        return found

    def get(self, obj: Mapping[str, JSON], keys: dict[str, str], name: str) -> JSON:
        key = keys.get(name)
        return None if key is None else obj[key]

    def where(self, path: str, keys: dict[str, str], name: str) -> str:
        return child(path, keys.get(name, name))

    def type_error(self, where: str, expected: str, value: JSON) -> None:
        self.add(WF_TYPE, where, f"expected {expected}, got {kind_of(value)}", value)

    def string(self, value: JSON, where: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_error(where, "a string", value)
            return None
        return value

    def boolean(self, value: JSON, where: str) -> None:
        if value is not None and not isinstance(value, bool):
            self.type_error(where, "a boolean", value)

    def number(
        self, value: JSON, where: str, rule: Rule, low: float, high: float, *, integer: bool
    ) -> float | None:
        if value is None:
            return None
        if not is_number(value) or (integer and not is_integer(value)):
            self.type_error(where, "an integer" if integer else "a number", value)
            return None
        assert isinstance(value, int | float)
        if not low <= value <= high:
            self.add(rule, where, f"{value} is outside {low:g} to {high:g}", value)
        return float(value)

    def enum(
        self, cls: type[WireEnum], value: JSON, where: str, unknown: Rule = WF_ENUM_VALUE
    ) -> WireEnum | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_error(where, "a string", value)
            return None
        member = cls.read(value)
        if member.name == "NOT_UNDERSTOOD":
            allowed = ", ".join(cls.canonical())
            self.add(unknown, where, f"'{value}' is not one of: {allowed}", value)
            return None
        if not member.is_canonical(value):
            self.add(WF_CASING, where, f"'{value}' is written '{member.value}'", value)
        return member

    def array(self, value: JSON, where: str) -> list[JSON] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.type_error(where, "an array", value)
            return None
        return value

    def digits(self, value: JSON, where: str, *, allow_bool: bool = False) -> list[str] | None:
        """A list of digits; bare strings and (for record) booleans are warned about."""
        if value is None:
            return None
        if isinstance(value, bool) and allow_bool:
            self.add(
                WF_STOP_TONES_BOOLEAN,
                where,
                f"stopTones {str(value).lower()} read as "
                + ("'any key stops the recording'" if value else "'no stop tones'"),
                value,
            )
            return list(DTMF_KEYS) if value else []
        if isinstance(value, str):
            self.add(
                WF_STOP_TONES_BARE, where, f"stopTones is an array: write [{_quoted(value)}]", value
            )
            items: list[JSON] = list(value) if value else [value]
            checked = [(item, where) for item in items]
        elif isinstance(value, list):
            checked = [(item, child(where, i)) for i, item in enumerate(value)]
        else:
            self.type_error(where, "an array of digits", value)
            return None
        out: list[str] = []
        for item, item_where in checked:
            if self.digit(item, item_where):
                assert isinstance(item, str)
                out.append(item)
        return out

    def digit(self, value: JSON, where: str) -> bool:
        if not isinstance(value, str):
            self.type_error(where, "a one-character string", value)
            return False
        if len(value) != 1 or value not in DTMF_KEYS:
            self.add(WF_DTMF_DIGIT, where, f"'{value}' is not a digit (0-9 * # A B C D)", value)
            return False
        return True

    def culture(self, value: JSON, where: str) -> None:
        if value is None:
            return
        self.enum(Culture, value, where, unknown=WF_CULTURE)

    # --- the Workflow ---

    def workflow(self, doc: JSON) -> None:
        if not isinstance(doc, dict):
            self.add(WF_NOT_OBJECT, "$", f"a Workflow is a JSON object, got {kind_of(doc)}")
            return
        keys = self.fields(doc, "$", WORKFLOW_FIELDS)
        kinds = self.actions(doc, keys)
        self.links(doc, keys, kinds)
        app_state = self.string(self.get(doc, keys, "appState"), self.where("$", keys, "appState"))
        if app_state is not None and utf16_length(app_state) > APPSTATE_MAX:
            self.add(
                WF_APPSTATE_LENGTH,
                self.where("$", keys, "appState"),
                f"appState is {utf16_length(app_state)} characters; the limit is {APPSTATE_MAX}",
            )
        self.enum(
            CallState,
            self.get(doc, keys, "callState"),
            self.where("$", keys, "callState"),
            unknown=WF_CALLSTATE,
        )
        subs_where = self.where("$", keys, "notificationSubscriptions")
        subs = self.array(self.get(doc, keys, "notificationSubscriptions"), subs_where)
        for i, sub in enumerate(subs or []):
            self.enum(NotificationType, sub, child(subs_where, i), unknown=WF_NOTIFICATION)

    def actions(self, doc: Mapping[str, JSON], keys: dict[str, str]) -> list[ActionType | None]:
        where = self.where("$", keys, "actions")
        value = self.get(doc, keys, "actions")
        if value is None:
            self.add(WF_REQUIRED, where, "actions is required")
            return []
        actions = self.array(value, where)
        if actions is None:
            return []
        if not actions:
            self.add(
                WF_ACTIONS_EMPTY, where, "actions is empty: a Workflow has at least one action"
            )
            return []
        kinds = [self.action(a, child(where, i)) for i, a in enumerate(actions)]
        self.sequence(kinds, where)
        return kinds

    def action(self, value: JSON, where: str) -> ActionType | None:
        """Check one action; its kind when known."""
        if not isinstance(value, dict):
            self.type_error(where, "an action object", value)
            return None
        kind_key = next((k for k in value if k.lower() == "action"), "action")
        raw_kind = value.get(kind_key)
        kind: ActionType | None = None
        if raw_kind is None:
            self.add(WF_REQUIRED, child(where, "action"), "action is required")
        elif not isinstance(raw_kind, str):
            self.type_error(child(where, kind_key), "a string", raw_kind)
        else:
            kind = ActionType.read(raw_kind)
            if kind is ActionType.NOT_UNDERSTOOD:
                allowed = ", ".join(ActionType.canonical())
                self.add(
                    WF_ACTION_UNKNOWN,
                    child(where, kind_key),
                    f"unknown action '{raw_kind}' (one of: {allowed})",
                    raw_kind,
                )
                kind = None
            elif not kind.is_canonical(raw_kind):
                self.add(
                    WF_CASING,
                    child(where, kind_key),
                    f"'{raw_kind}' is written '{kind.value}'",
                    raw_kind,
                )
        if kind is None:
            # The fields of an action of unknown kind cannot be judged: only find operationId.
            keys = {
                n: k
                for n in ("operationId", "action")
                if (k := next((x for x in value if x.lower() == n.lower()), None))
            }
        else:
            keys = self.fields(value, where, action_fields(kind))
        op_where = self.where(where, keys, "operationId")
        op = self.get(value, keys, "operationId")
        if op is None or op == "":
            self.add(
                WF_OPERATION_ID,
                op_where,
                "operationId is required: it ties the outcome to this action",
            )
        else:
            self.string(op, op_where)
        if kind is ActionType.ANSWER:
            self.answer(value, keys, where)
        elif kind is ActionType.PLAY_PROMPT:
            self.play_prompt_fields(value, keys, where)
        elif kind is ActionType.RECORD:
            self.record(value, keys, where)
        elif kind is ActionType.RECOGNIZE:
            self.recognize(value, keys, where)
        return kind

    def sequence(self, kinds: list[ActionType | None], where: str) -> None:
        known = [(i, k) for i, k in enumerate(kinds) if k is not None]
        if self.context.first and kinds and kinds[0] not in (ActionType.ANSWER, ActionType.REJECT):
            shown = kinds[0].value if kinds[0] else "an invalid action"
            self.add(
                WF_FIRST_ACTION,
                child(where, 0),
                f"the reply to a Conversation starts with answer or reject, not {shown}",
            )
        seen: dict[ActionType, int] = {}
        highest: tuple[int, ActionType] | None = None
        for i, kind in known:
            at = child(where, i)
            if kind is ActionType.REJECT:
                if len(kinds) > 1:
                    self.add(WF_REJECT_ALONE, at, "reject is the only action of its Workflow")
                if not self.context.first:
                    self.add(
                        WF_REJECT_PLACEMENT,
                        at,
                        "reject declines an unanswered call; this call is answered: use hangup",
                    )
            if kind is ActionType.ANSWER and not self.context.first:
                self.add(WF_ANSWER_AGAIN, at, "the call is already answered; answer does nothing")
            if kind in seen and kind is not ActionType.PLAY_PROMPT:
                self.add(
                    WF_ACTION_REPEATED,
                    at,
                    f"{kind.value} appears twice (first at {child(where, seen[kind])})",
                )
            seen.setdefault(kind, i)
            rank = _RANK[kind]
            if highest is not None and rank < _RANK[highest[1]]:
                if highest[1] is ActionType.HANGUP:
                    self.add(
                        WF_HANGUP_LAST,
                        child(where, highest[0]),
                        f"hangup is the last action; {kind.value} follows it",
                    )
                else:
                    self.add(
                        WF_ORDER,
                        at,
                        f"{kind.value} comes after {highest[1].value}: "
                        "the order is answer, then playPrompt/record/recognize, then hangup",
                    )
            if highest is None or rank > _RANK[highest[1]]:
                highest = (i, kind)

    def links(
        self, doc: Mapping[str, JSON], keys: dict[str, str], kinds: list[ActionType | None]
    ) -> None:
        where = self.where("$", keys, "links")
        links = self.get(doc, keys, "links")
        ends_call = bool(kinds) and kinds[-1] in (ActionType.HANGUP, ActionType.REJECT)
        callback: JSON = None
        cb_where = child(where, "callback")
        if links is not None:
            if not isinstance(links, dict):
                self.type_error(where, "an object", links)
                return
            cb_key = next((k for k in links if k.lower() == "callback"), None)
            if cb_key is not None:
                cb_where = child(where, cb_key)
                callback = links[cb_key]
                if cb_key != "callback":
                    self.add(WF_CASING, cb_where, f"'{cb_key}' is written 'callback'")
        if callback is None:
            if kinds and not ends_call:
                self.add(
                    WF_NO_CALLBACK,
                    cb_where,
                    "no callback: the platform runs these actions, then hangs up and posts nothing",
                )
            return
        uri = self.string(callback, cb_where)
        if uri is None:
            return
        scheme = _absolute_scheme(uri)
        if scheme is None:
            self.add(WF_CALLBACK_URI, cb_where, "callback is not an absolute http(s) URI", uri)
        elif scheme == "http":
            severity = WARNING if self.context.allow_http else ERROR
            allowed = " (allowed for local work)" if self.context.allow_http else ""
            self.add(
                WF_CALLBACK_HTTPS,
                cb_where,
                f"callback uses http, not https{allowed}",
                uri,
                severity=severity,
            )

    # --- per action ---

    def answer(self, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
        at = self.where(where, keys, "acceptModalityTypes")
        items = self.array(self.get(value, keys, "acceptModalityTypes"), at)
        seen: set[WireEnum] = set()
        for i, item in enumerate(items or []):
            member = self.enum(ModalityType, item, child(at, i))
            if member is ModalityType.VIDEO_BASED_SCREEN_SHARING:
                self.add(
                    WF_ANSWER_MODALITIES, child(at, i), "videoBasedScreenSharing cannot be accepted"
                )
            elif member is not None and member in seen:
                self.add(WF_ANSWER_MODALITIES, child(at, i), f"{member.value} is listed twice")
            if member is not None:
                seen.add(member)

    def play_prompt_fields(
        self, value: Mapping[str, JSON], keys: dict[str, str], where: str
    ) -> None:
        at = self.where(where, keys, "prompts")
        prompts = self.get(value, keys, "prompts")
        if prompts is None:
            self.add(WF_PLAYPROMPT_PROMPTS, at, "prompts is required")
            return
        items = self.array(prompts, at)
        if items is not None and not items:
            self.add(WF_PLAYPROMPT_PROMPTS, at, "prompts is empty")
        for i, prompt in enumerate(items or []):
            self.prompt(prompt, child(at, i))

    def nested_prompt(self, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
        nested = self.get(value, keys, "playPrompt")
        if nested is None:
            return
        at = self.where(where, keys, "playPrompt")
        if not isinstance(nested, dict):
            self.type_error(at, "a playPrompt object", nested)
            return
        nested_keys = self.fields(nested, at, action_fields(ActionType.PLAY_PROMPT))
        kind = self.get(nested, nested_keys, "action")
        if kind is not None and (
            not isinstance(kind, str) or ActionType.read(kind) is not ActionType.PLAY_PROMPT
        ):
            self.add(
                WF_NESTED_PROMPT,
                self.where(at, nested_keys, "action"),
                "the nested prompt's action is playPrompt",
                kind,
            )
        self.string(
            self.get(nested, nested_keys, "operationId"), self.where(at, nested_keys, "operationId")
        )
        self.play_prompt_fields(nested, nested_keys, at)

    def prompt(self, value: JSON, where: str) -> None:
        if not isinstance(value, dict):
            self.type_error(where, "a prompt object", value)
            return
        keys = self.fields(value, where, PROMPT_FIELDS)
        text = self.string(self.get(value, keys, "value"), self.where(where, keys, "value"))
        uri = self.string(self.get(value, keys, "fileUri"), self.where(where, keys, "fileUri"))
        silence_at = self.where(where, keys, "silenceLengthInMilliseconds")
        silence = self.number(
            self.get(value, keys, "silenceLengthInMilliseconds"),
            silence_at,
            WF_PROMPT_SILENCE_RANGE,
            0,
            60000,
            integer=True,
        )
        self.enum(VoiceGender, self.get(value, keys, "voice"), self.where(where, keys, "voice"))
        self.culture(self.get(value, keys, "culture"), self.where(where, keys, "culture"))
        self.boolean(self.get(value, keys, "emphasize"), self.where(where, keys, "emphasize"))
        self.enum(SayAs, self.get(value, keys, "sayAs"), self.where(where, keys, "sayAs"))
        has_text = bool(text and text.strip())
        if has_text and uri:
            self.add(WF_PROMPT_BOTH, where, "a prompt has value or fileUri, never both")
        if not has_text and not uri and not (silence and silence > 0):
            self.add(
                WF_PROMPT_CONTENT,
                where,
                "a prompt needs a value, a fileUri or silenceLengthInMilliseconds > 0",
            )
        elif self.get(value, keys, "value") is None and silence is not None and silence <= 0:
            self.add(
                WF_PROMPT_SILENCE,
                silence_at,
                "silenceLengthInMilliseconds must be greater than 0 when value is null",
                silence,
            )
        if text is not None and utf16_length(text) > PROMPT_VALUE_MAX:
            self.add(
                WF_PROMPT_VALUE_LENGTH,
                self.where(where, keys, "value"),
                f"value is {utf16_length(text)} characters; the limit is {PROMPT_VALUE_MAX}",
            )
        if uri is not None and _absolute_scheme(uri) is None:
            self.add(
                WF_PROMPT_FILE_URI,
                self.where(where, keys, "fileUri"),
                "fileUri is not an absolute http(s) address",
                uri,
            )
        if uri and not has_text:
            text_only = [n for n in ("voice", "culture", "emphasize", "sayAs") if n in keys]
            for name in text_only:
                self.add(
                    WF_PROMPT_TEXT_ONLY,
                    self.where(where, keys, name),
                    f"{name} applies only to text; it is ignored for a file prompt",
                )

    def stop_tones(
        self, value: Mapping[str, JSON], keys: dict[str, str], where: str, *, allow_bool: bool
    ) -> list[str] | None:
        at = self.where(where, keys, "stopTones")
        tones = self.digits(self.get(value, keys, "stopTones"), at, allow_bool=allow_bool)
        raw = self.get(value, keys, "stopTones")
        if isinstance(raw, list) and len(raw) > MAX_STOP_TONES:
            self.add(WF_STOP_TONES_COUNT, at, f"{len(raw)} stop tones; at most {MAX_STOP_TONES}")
        return tones

    def record(self, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
        self.nested_prompt(value, keys, where)
        for name, rule, low, high in (
            ("maxDurationInSeconds", WF_RECORD_MAX_DURATION, 2, 600),
            ("initialSilenceTimeoutInSeconds", WF_RECORD_INITIAL_SILENCE, 1, 30),
            ("maxSilenceTimeoutInSeconds", WF_RECORD_MAX_SILENCE, 0, 30),
        ):
            self.number(
                self.get(value, keys, name),
                self.where(where, keys, name),
                rule,
                low,
                high,
                integer=True,
            )
        self.enum(
            RecordingFormat,
            self.get(value, keys, "recordingFormat"),
            self.where(where, keys, "recordingFormat"),
        )
        self.boolean(self.get(value, keys, "playBeep"), self.where(where, keys, "playBeep"))
        self.stop_tones(value, keys, where, allow_bool=True)

    def recognize(self, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
        self.nested_prompt(value, keys, where)
        self.boolean(
            self.get(value, keys, "bargeInAllowed"), self.where(where, keys, "bargeInAllowed")
        )
        self.culture(self.get(value, keys, "culture"), self.where(where, keys, "culture"))
        self.number(
            self.get(value, keys, "initialSilenceTimeoutInSeconds"),
            self.where(where, keys, "initialSilenceTimeoutInSeconds"),
            WF_RECOGNIZE_INITIAL_SILENCE,
            1,
            30,
            integer=False,
        )
        self.number(
            self.get(value, keys, "interdigitTimeoutInSeconds"),
            self.where(where, keys, "interdigitTimeoutInSeconds"),
            WF_RECOGNIZE_INTERDIGIT,
            1,
            5,
            integer=False,
        )
        choices = self.get(value, keys, "choices")
        collect = self.get(value, keys, "collectDigits")
        if (choices is None) == (collect is None):
            both = "both are" if choices is not None else "neither is"
            self.add(
                WF_RECOGNIZE_ONE_OF,
                where,
                f"exactly one of collectDigits and choices is specified; {both}",
            )
        if choices is not None:
            self.choices(choices, self.where(where, keys, "choices"))
        if collect is not None:
            self.collect_digits(collect, self.where(where, keys, "collectDigits"))

    def choices(self, value: JSON, where: str) -> None:
        items = self.array(value, where)
        if items is None:
            return
        if not items:
            self.add(WF_CHOICES_EMPTY, where, "choices is empty: a menu has at least one choice")
        names: dict[str, str] = {}
        speech_seen: dict[str, str] = {}
        dtmf_seen: dict[str, str] = {}
        for i, choice in enumerate(items):
            at = child(where, i)
            if not isinstance(choice, dict):
                self.type_error(at, "a choice object", choice)
                continue
            keys = self.fields(choice, at, ("name", "speechVariation", "dtmfVariation"))
            name = self.string(self.get(choice, keys, "name"), self.where(at, keys, "name"))
            if not name or not name.strip():
                self.add(
                    WF_CHOICE_NAME, self.where(at, keys, "name"), "a choice needs a non-blank name"
                )
            elif name in names:
                self.add(
                    WF_CHOICE_NAME_UNIQUE,
                    self.where(at, keys, "name"),
                    f"choice name '{name}' is also used at {names[name]}",
                )
            else:
                names[name] = at
            speech_at = self.where(at, keys, "speechVariation")
            speech = self.array(self.get(choice, keys, "speechVariation"), speech_at) or []
            if len(speech) > 5:
                self.add(
                    WF_CHOICE_SPEECH_COUNT, speech_at, f"{len(speech)} speech variations; at most 5"
                )
            for j, phrase in enumerate(speech):
                text = self.string(phrase, child(speech_at, j))
                if text is None:
                    continue
                norm = normalize_speech(text)
                if norm in speech_seen and speech_seen[norm] != at:
                    self.add(
                        WF_CHOICE_UNIQUE,
                        child(speech_at, j),
                        f"speech '{text}' is also a variation of {speech_seen[norm]}",
                        text,
                    )
                speech_seen.setdefault(norm, at)
            sequence = self.dtmf_variation(choice, keys, at)
            if sequence:
                if sequence in dtmf_seen:
                    self.add(
                        WF_CHOICE_UNIQUE,
                        self.where(at, keys, "dtmfVariation"),
                        f"DTMF '{sequence}' is also the variation of {dtmf_seen[sequence]}",
                        sequence,
                    )
                dtmf_seen.setdefault(sequence, at)
            if not speech and not sequence and self.get(choice, keys, "dtmfVariation") is None:
                self.add(
                    WF_CHOICE_VARIATION, at, "a choice needs a speechVariation or a dtmfVariation"
                )
        for sequence, at in dtmf_seen.items():
            for other, other_at in dtmf_seen.items():
                if other != sequence and other.startswith(sequence):
                    self.add(
                        WF_DTMF_PREFIX,
                        other_at,
                        f"'{other}' starts with '{sequence}' ({at}), which matches first",
                    )

    def dtmf_variation(self, choice: Mapping[str, JSON], keys: dict[str, str], at: str) -> str:
        where = self.where(at, keys, "dtmfVariation")
        value = self.get(choice, keys, "dtmfVariation")
        if value is None:
            return ""
        items: list[tuple[JSON, str]]
        if isinstance(value, str):
            items = [(value, where)]
        elif isinstance(value, list):
            items = [(v, child(where, i)) for i, v in enumerate(value)]
        else:
            self.type_error(where, "a digit", value)
            return ""
        if not items:
            self.add(WF_DTMF_DIGIT, where, "dtmfVariation is empty")
            return ""
        keys_pressed = [v for v, w in items if self.digit(v, w)]
        sequence = "".join(k for k in keys_pressed if isinstance(k, str))
        if len(items) > 1 and len(keys_pressed) == len(items):
            self.add(
                WF_DTMF_SEQUENCE,
                where,
                f"several keys are one key sequence: the caller presses '{sequence}'",
                value,
            )
        return sequence if len(keys_pressed) == len(items) else ""

    def collect_digits(self, value: JSON, where: str) -> None:
        if not isinstance(value, dict):
            self.type_error(where, "a collectDigits object", value)
            return
        keys = self.fields(value, where, ("maxNumberOfDtmfs", "stopTones"))
        max_at = self.where(where, keys, "maxNumberOfDtmfs")
        maximum = self.get(value, keys, "maxNumberOfDtmfs")
        self.number(maximum, max_at, WF_DIGITS_LIMIT, 1, 20, integer=True)
        tones = self.stop_tones(value, keys, where, allow_bool=False)
        if maximum is None and not tones:
            self.add(WF_DIGITS_LIMIT, where, "collectDigits needs maxNumberOfDtmfs or a stop tone")


def _absolute_scheme(uri: str) -> str | None:
    """'http' or 'https' for an absolute http(s) URI with a host, else None."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc or not parts.hostname:
        return None
    if any(c.isspace() for c in uri):
        return None
    return scheme


def _quoted(text: str) -> str:
    return ", ".join(f'"{c}"' for c in text)


def _evidence(value: JSON) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
