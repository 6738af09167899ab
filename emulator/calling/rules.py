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
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from emulator.calling import ruleset as R
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
from emulator.calling.ruleset import ERROR, WARNING
from emulator.calling.ruleset import RULES as RULES
from emulator.calling.speech import normalize_speech
from emulator.calling.wire import action_fields
from emulator.findings import Finding, Rule, Severity
from emulator.jsonutil import JSON, child, find_key, is_integer, is_number, kind_of, utf16_length

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
MAX_ACTIONS = 50
"""Actions checked in one Workflow (``WF-ACTIONS-LIMIT``): real Workflows have a handful."""
MAX_PROMPTS = 100
"""Prompts checked in one Workflow, nested ones included (``WF-PROMPTS-LIMIT``)."""
FINDINGS_PER_RULE = 20
"""Findings of one rule listed for one Workflow; the rest are counted in one summary finding."""


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
    """Every finding for a Workflow, in document order. The work is bounded whatever the
    document's size: at most ``MAX_ACTIONS`` actions and ``MAX_PROMPTS`` prompts are checked, and
    at most ``FINDINGS_PER_RULE`` findings of one rule are listed, then one summary finding of that
    rule counts the rest ("and 480 more WF-TYPE at $.actions[*]")."""
    checker = _Checker(context or RuleContext())
    checker.workflow(document)
    return checker.findings + checker.summaries()


class _Checker:
    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.findings: list[Finding] = []
        self.operation_ids: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        """Findings of each rule so far, listed or not."""
        self.overflow: dict[str, tuple[Severity, str]] = {}
        """Rule id -> (severity, where) of the findings past the cap: where is their common
        pattern, indexes as ``[*]`` (``$.actions[*]``), or ``$`` when they differ."""
        self.prompts = 0
        """Prompts checked so far (``MAX_PROMPTS``)."""

    def add(
        self,
        rule: Rule,
        where: str,
        message: str,
        evidence: JSON = None,
        severity: Severity | None = None,
    ) -> None:
        count = self.counts.get(rule.id, 0) + 1
        self.counts[rule.id] = count
        if count > FINDINGS_PER_RULE:  # counted only: no Finding is built past the cap
            seen = self.overflow.get(rule.id)
            if seen is None:
                self.overflow[rule.id] = (severity or rule.severity, where)
            elif seen[1] != where:
                self.overflow[rule.id] = (seen[0], _common_pattern(seen[1], where))
            return
        shown = None if evidence is None else _evidence(evidence)
        self.findings.append(Finding(rule.id, severity or rule.severity, where, message, shown))

    def full(self, rule: Rule) -> bool:
        """True once ``rule`` has its listed findings: a loop may stop judging for it."""
        return self.counts.get(rule.id, 0) >= FINDINGS_PER_RULE

    def summaries(self) -> list[Finding]:
        """One finding per rule past the cap, counting the findings not listed."""
        out = []
        for rule_id, (severity, where) in self.overflow.items():
            more = self.counts[rule_id] - FINDINGS_PER_RULE
            out.append(Finding(rule_id, severity, where,
                               f"and {more:,} more {rule_id} at {where} (only the first "
                               f"{FINDINGS_PER_RULE} findings of a rule are listed)"))  # fmt: skip
        return out

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
                    R.WF_UNKNOWN_FIELD, child(path, key), f"unknown field '{key}' is ignored{hint}"
                )
                continue
            if canonical in found:
                kept = canonical if canonical in obj else found[canonical]
                self.add(
                    R.WF_DUPLICATE_FIELD,
                    child(path, key),
                    f"'{key}' and '{found[canonical]}' name the same field; '{kept}' is used",
                )
                if key == canonical:
                    found[canonical] = key
                continue
            if key != canonical:
                self.add(R.WF_CASING, child(path, key), f"'{key}' is written '{canonical}'")
            found[canonical] = key
        return found

    def get(self, obj: Mapping[str, JSON], keys: dict[str, str], name: str) -> JSON:
        key = keys.get(name)
        return None if key is None else obj[key]

    def where(self, path: str, keys: dict[str, str], name: str) -> str:
        return child(path, keys.get(name, name))

    def type_error(self, where: str, expected: str, value: JSON) -> None:
        self.add(R.WF_TYPE, where, f"expected {expected}, got {kind_of(value)}", value)

    def string(self, value: JSON, where: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_error(where, "a string", value)
            return None
        return value

    def not_null(self, value: JSON, where: str, expected: str) -> bool:
        """An array item is never null: the platform cannot read one."""
        if value is None:
            self.type_error(where, expected, value)
            return False
        return True

    def boolean(self, value: JSON, where: str) -> None:
        if value is not None and not isinstance(value, bool):
            self.type_error(where, "a boolean", value)

    def number(
        self, value: JSON, where: str, rule: Rule, low: float, high: float, *, integer: bool
    ) -> float | None:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and not is_number(value):
            self.add(
                rule, where, f"a {len(str(abs(value)))}-digit number is outside {low:g} to {high:g}"
            )
            return None
        if not is_number(value) or (integer and not is_integer(value)):
            self.type_error(where, "an integer" if integer else "a number", value)
            return None
        assert isinstance(value, int | float)
        if not low <= value <= high:
            self.add(rule, where, f"{value:g} is outside {low:g} to {high:g}", value)
        return float(value)

    def enum(
        self, cls: type[WireEnum], value: JSON, where: str, unknown: Rule = R.WF_ENUM_VALUE
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
            self.add(R.WF_CASING, where, f"'{value}' is written '{member.value}'", value)
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
                R.WF_STOP_TONES_BOOLEAN,
                where,
                f"stopTones {str(value).lower()} read as "
                + ("'any key stops the recording'" if value else "'no stop tones'"),
                value,
            )
            return list(DTMF_KEYS) if value else []
        if isinstance(value, str):
            self.add(
                R.WF_STOP_TONES_BARE,
                where,
                f"stopTones is an array: write [{_quoted(value)}]",
                value,
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
            self.add(R.WF_DTMF_DIGIT, where, f"'{value}' is not a digit (0-9 * # A B C D)", value)
            return False
        return True

    def culture(self, value: JSON, where: str) -> None:
        if value is None:
            return
        self.enum(Culture, value, where, unknown=R.WF_CULTURE)

    # --- the Workflow ---

    def workflow(self, doc: JSON) -> None:
        if not isinstance(doc, dict):
            self.add(R.WF_NOT_OBJECT, "$", f"a Workflow is a JSON object, got {kind_of(doc)}")
            return
        keys = self.fields(doc, "$", WORKFLOW_FIELDS)
        kinds = self.actions(doc, keys)
        self.links(doc, keys, kinds)
        app_state = self.string(self.get(doc, keys, "appState"), self.where("$", keys, "appState"))
        if app_state is not None and utf16_length(app_state) > APPSTATE_MAX:
            self.add(
                R.WF_APPSTATE_LENGTH,
                self.where("$", keys, "appState"),
                f"appState is {utf16_length(app_state)} characters; the limit is {APPSTATE_MAX}",
            )
        self.enum(
            CallState,
            self.get(doc, keys, "callState"),
            self.where("$", keys, "callState"),
            unknown=R.WF_CALLSTATE,
        )
        subs_where = self.where("$", keys, "notificationSubscriptions")
        subs = self.array(self.get(doc, keys, "notificationSubscriptions"), subs_where)
        for i, sub in enumerate(subs or []):
            if self.not_null(sub, child(subs_where, i), "a string"):
                self.enum(NotificationType, sub, child(subs_where, i), unknown=R.WF_NOTIFICATION)

    def actions(self, doc: Mapping[str, JSON], keys: dict[str, str]) -> list[ActionType | None]:
        where = self.where("$", keys, "actions")
        value = self.get(doc, keys, "actions")
        if value is None:
            self.add(R.WF_REQUIRED, where, "actions is required")
            return []
        actions = self.array(value, where)
        if actions is None:
            return []
        if not actions:
            self.add(
                R.WF_ACTIONS_EMPTY, where, "actions is empty: a Workflow has at least one action"
            )
            return []
        if len(actions) > MAX_ACTIONS:
            self.add(
                R.WF_ACTIONS_LIMIT,
                where,
                f"{len(actions):,} actions; a Workflow has at most {MAX_ACTIONS} (real Workflows "
                f"have a handful): only the first {MAX_ACTIONS} are checked",
            )
            actions = actions[:MAX_ACTIONS]
        kinds = [self.action(a, child(where, i)) for i, a in enumerate(actions)]
        self.sequence(kinds, where)
        return kinds

    def action(self, value: JSON, where: str) -> ActionType | None:
        """Check one action; its kind when known."""
        if not isinstance(value, dict):
            self.type_error(where, "an action object", value)
            return None
        kind_key = find_key(value, "action") or "action"
        raw_kind = value.get(kind_key)
        kind: ActionType | None = None
        if raw_kind is None:
            self.add(R.WF_REQUIRED, child(where, "action"), "action is required")
        elif not isinstance(raw_kind, str):
            self.type_error(child(where, kind_key), "a string", raw_kind)
        else:
            kind = ActionType.read(raw_kind)
            if kind is ActionType.NOT_UNDERSTOOD:
                allowed = ", ".join(ActionType.canonical())
                self.add(
                    R.WF_ACTION_UNKNOWN,
                    child(where, kind_key),
                    f"unknown action '{raw_kind}' (one of: {allowed})",
                    raw_kind,
                )
                kind = None
            elif not kind.is_canonical(raw_kind):
                self.add(
                    R.WF_CASING,
                    child(where, kind_key),
                    f"'{raw_kind}' is written '{kind.value}'",
                    raw_kind,
                )
        if kind is None:
            # The fields of an action of unknown kind cannot be judged: only find operationId.
            keys = {n: k for n in ("operationId", "action") if (k := find_key(value, n))}
        else:
            keys = self.fields(value, where, action_fields(kind))
        op_where = self.where(where, keys, "operationId")
        op = self.get(value, keys, "operationId")
        if op is None or op == "":
            self.add(
                R.WF_OPERATION_ID,
                op_where,
                "operationId is required: it ties the outcome to this action",
            )
        elif self.string(op, op_where) is not None:
            assert isinstance(op, str)
            if op in self.operation_ids:
                self.add(
                    R.WF_OPERATION_ID_UNIQUE,
                    op_where,
                    f"operationId '{op}' is also used at {self.operation_ids[op]}",
                    op,
                )
            self.operation_ids.setdefault(op, where)
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
                R.WF_FIRST_ACTION,
                child(where, 0),
                f"the reply to a Conversation starts with answer or reject, not {shown}",
            )
        seen: dict[ActionType, int] = {}
        highest: tuple[int, ActionType] | None = None
        for i, kind in known:
            at = child(where, i)
            if kind is ActionType.REJECT:
                if len(kinds) > 1:
                    self.add(R.WF_REJECT_ALONE, at, "reject is the only action of its Workflow")
                if not self.context.first:
                    self.add(
                        R.WF_REJECT_PLACEMENT,
                        at,
                        "reject declines an unanswered call; this call is answered: use hangup",
                    )
            if kind is ActionType.ANSWER and not self.context.first:
                self.add(R.WF_ANSWER_AGAIN, at, "the call is already answered; answer does nothing")
            if kind in seen and kind is not ActionType.PLAY_PROMPT:
                self.add(
                    R.WF_ACTION_REPEATED,
                    at,
                    f"{kind.value} appears twice (first at {child(where, seen[kind])})",
                )
            seen.setdefault(kind, i)
            rank = _RANK[kind]
            if highest is not None and rank < _RANK[highest[1]]:
                if highest[1] is ActionType.HANGUP:
                    self.add(
                        R.WF_HANGUP_LAST,
                        child(where, highest[0]),
                        f"hangup is the last action; {kind.value} follows it",
                    )
                else:
                    self.add(
                        R.WF_ORDER,
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
            spellings = [k for k in links if k.lower() == "callback"]
            cb_key = find_key(links, "callback")
            for key, uri in links.items():  # the callback itself is checked below
                if key != cb_key and uri is not None and not isinstance(uri, str):
                    self.type_error(child(where, key), "a URI string", uri)
            for other in spellings:
                if other != cb_key:
                    self.add(
                        R.WF_DUPLICATE_FIELD,
                        child(where, other),
                        f"'{other}' and '{cb_key}' name the same link; '{cb_key}' is used",
                    )
            if cb_key is not None:
                cb_where = child(where, cb_key)
                callback = links[cb_key]
                if cb_key != "callback":
                    self.add(R.WF_CASING, cb_where, f"'{cb_key}' is written 'callback'")
        if callback is None:
            if kinds and not ends_call:
                self.add(
                    R.WF_NO_CALLBACK,
                    cb_where,
                    "no callback: the platform runs these actions, then hangs up and posts nothing",
                )
            return
        uri = self.string(callback, cb_where)
        if uri is None:
            return
        scheme = _absolute_scheme(uri)
        if scheme is None:
            self.add(R.WF_CALLBACK_URI, cb_where, "callback is not an absolute http(s) URI", uri)
        elif scheme == "http":
            severity = WARNING if self.context.allow_http else ERROR
            allowed = " (allowed for local work)" if self.context.allow_http else ""
            self.add(
                R.WF_CALLBACK_HTTPS,
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
            if not self.not_null(item, child(at, i), "a modality"):
                continue
            member = self.enum(ModalityType, item, child(at, i))
            if member is ModalityType.VIDEO_BASED_SCREEN_SHARING:
                self.add(
                    R.WF_ANSWER_MODALITIES,
                    child(at, i),
                    "videoBasedScreenSharing cannot be accepted",
                )
            elif member is not None and member in seen:
                self.add(R.WF_ANSWER_MODALITIES, child(at, i), f"{member.value} is listed twice")
            if member is not None:
                seen.add(member)

    def play_prompt_fields(
        self, value: Mapping[str, JSON], keys: dict[str, str], where: str
    ) -> None:
        at = self.where(where, keys, "prompts")
        prompts = self.get(value, keys, "prompts")
        if prompts is None:
            self.add(R.WF_PLAYPROMPT_PROMPTS, at, "prompts is required")
            return
        items = self.array(prompts, at)
        if items is not None and not items:
            self.add(R.WF_PLAYPROMPT_PROMPTS, at, "prompts is empty")
        for i, prompt in enumerate(items or []):
            if self.prompts >= MAX_PROMPTS:
                if self.prompts == MAX_PROMPTS:  # said once, at the first prompt past the limit
                    self.add(
                        R.WF_PROMPTS_LIMIT,
                        child(at, i),
                        f"a Workflow has at most {MAX_PROMPTS} prompts in all, nested ones "
                        "included (real Workflows have a handful): this one and the rest are not "
                        "checked",
                    )
                    self.prompts += 1
                return
            self.prompts += 1
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
                R.WF_NESTED_PROMPT,
                self.where(at, nested_keys, "action"),
                "the nested prompt's action is playPrompt",
                kind,
            )
        elif isinstance(kind, str) and not ActionType.PLAY_PROMPT.is_canonical(kind):
            self.add(
                R.WF_CASING,
                self.where(at, nested_keys, "action"),
                f"'{kind}' is written 'playPrompt'",
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
            R.WF_PROMPT_SILENCE_RANGE,
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
            self.add(R.WF_PROMPT_BOTH, where, "a prompt has value or fileUri, never both")
        if not has_text and not uri and not (silence and silence > 0):
            self.add(
                R.WF_PROMPT_CONTENT,
                where,
                "a prompt needs a value, a fileUri or silenceLengthInMilliseconds > 0",
            )
        elif self.get(value, keys, "value") is None and silence is not None and silence <= 0:
            self.add(
                R.WF_PROMPT_SILENCE,
                silence_at,
                "silenceLengthInMilliseconds must be greater than 0 when value is null",
                silence,
            )
        if text is not None and utf16_length(text) > PROMPT_VALUE_MAX:
            self.add(
                R.WF_PROMPT_VALUE_LENGTH,
                self.where(where, keys, "value"),
                f"value is {utf16_length(text)} characters; the limit is {PROMPT_VALUE_MAX}",
            )
        if uri is not None and _absolute_scheme(uri) is None:
            self.add(
                R.WF_PROMPT_FILE_URI,
                self.where(where, keys, "fileUri"),
                "fileUri is not an absolute http(s) address",
                uri,
            )
        if uri and not has_text:
            text_only = [n for n in ("voice", "culture", "emphasize", "sayAs") if n in keys]
            for name in text_only:
                self.add(
                    R.WF_PROMPT_TEXT_ONLY,
                    self.where(where, keys, name),
                    f"{name} applies only to text; it is ignored for a file prompt",
                )

    def stop_tones(
        self, value: Mapping[str, JSON], keys: dict[str, str], where: str, *, allow_bool: bool
    ) -> list[str] | None:
        at = self.where(where, keys, "stopTones")
        tones = self.digits(self.get(value, keys, "stopTones"), at, allow_bool=allow_bool)
        raw = self.get(value, keys, "stopTones")
        if isinstance(raw, list | str) and len(raw) > MAX_STOP_TONES:
            self.add(R.WF_STOP_TONES_COUNT, at, f"{len(raw)} stop tones; at most {MAX_STOP_TONES}")
        return tones

    def record(self, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
        self.nested_prompt(value, keys, where)
        for name, rule, low, high in (
            ("maxDurationInSeconds", R.WF_RECORD_MAX_DURATION, 2, 600),
            ("initialSilenceTimeoutInSeconds", R.WF_RECORD_INITIAL_SILENCE, 1, 30),
            ("maxSilenceTimeoutInSeconds", R.WF_RECORD_MAX_SILENCE, 0, 30),
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
            R.WF_RECOGNIZE_INITIAL_SILENCE,
            1,
            30,
            integer=False,
        )
        self.number(
            self.get(value, keys, "interdigitTimeoutInSeconds"),
            self.where(where, keys, "interdigitTimeoutInSeconds"),
            R.WF_RECOGNIZE_INTERDIGIT,
            1,
            5,
            integer=False,
        )
        choices = self.get(value, keys, "choices")
        collect = self.get(value, keys, "collectDigits")
        if (choices is None) == (collect is None):
            both = "both are" if choices is not None else "neither is"
            self.add(
                R.WF_RECOGNIZE_ONE_OF,
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
            self.add(R.WF_CHOICES_EMPTY, where, "choices is empty: a menu has at least one choice")
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
                    R.WF_CHOICE_NAME,
                    self.where(at, keys, "name"),
                    "a choice needs a non-blank name",
                )
            elif name in names:
                self.add(
                    R.WF_CHOICE_NAME_UNIQUE,
                    self.where(at, keys, "name"),
                    f"choice name '{name}' is also used at {names[name]}",
                )
            else:
                names[name] = at
            speech_at = self.where(at, keys, "speechVariation")
            speech = self.array(self.get(choice, keys, "speechVariation"), speech_at) or []
            if len(speech) > 5:
                self.add(
                    R.WF_CHOICE_SPEECH_COUNT,
                    speech_at,
                    f"{len(speech)} speech variations; at most 5",
                )
            for j, phrase in enumerate(speech):
                if not self.not_null(phrase, child(speech_at, j), "a string"):
                    continue
                text = self.string(phrase, child(speech_at, j))
                if text is None:
                    continue
                norm = normalize_speech(text)
                if norm in speech_seen and speech_seen[norm] != at:
                    self.add(
                        R.WF_CHOICE_UNIQUE,
                        child(speech_at, j),
                        f"speech '{text}' is also a variation of {speech_seen[norm]}",
                        text,
                    )
                speech_seen.setdefault(norm, at)
            sequence = self.dtmf_variation(choice, keys, at)
            if sequence:
                if sequence in dtmf_seen:
                    self.add(
                        R.WF_CHOICE_UNIQUE,
                        self.where(at, keys, "dtmfVariation"),
                        f"DTMF '{sequence}' is also the variation of {dtmf_seen[sequence]}",
                        sequence,
                    )
                dtmf_seen.setdefault(sequence, at)
            if not speech and not sequence and self.get(choice, keys, "dtmfVariation") is None:
                self.add(
                    R.WF_CHOICE_VARIATION, at, "a choice needs a speechVariation or a dtmfVariation"
                )
        for sequence, other in _prefix_pairs(list(dtmf_seen)):
            self.add(
                R.WF_DTMF_PREFIX,
                dtmf_seen[other],
                f"'{other}' starts with '{sequence}' ({dtmf_seen[sequence]}), which matches first",
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
            self.add(R.WF_DTMF_DIGIT, where, "dtmfVariation is empty")
            return ""
        keys_pressed = [v for v, w in items if self.digit(v, w)]
        sequence = "".join(k for k in keys_pressed if isinstance(k, str))
        if len(items) > 1 and len(keys_pressed) == len(items):
            self.add(
                R.WF_DTMF_SEQUENCE,
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
        self.number(maximum, max_at, R.WF_DIGITS_LIMIT, 1, 20, integer=True)
        tones = self.stop_tones(value, keys, where, allow_bool=False)
        if maximum is None and not tones:
            self.add(
                R.WF_DIGITS_LIMIT, where, "collectDigits needs maxNumberOfDtmfs or a stop tone"
            )


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


def _prefix_pairs(sequences: list[str]) -> list[tuple[str, str]]:
    """(shorter, longer) for every sequence that is a proper prefix of another, in the order of
    ``sequences`` (shorter first, then longer), in O(n log n + pairs) rather than O(n²): in sorted
    order, the strings that start with one follow it directly."""
    order = {s: i for i, s in enumerate(sequences)}
    ranked = sorted(sequences)
    pairs = []
    for i, shorter in enumerate(ranked):
        for longer in ranked[i + 1 :]:
            if not longer.startswith(shorter):
                break
            pairs.append((shorter, longer))
    pairs.sort(key=lambda p: (order[p[0]], order[p[1]]))
    return pairs


_INDEX = re.compile(r"\[(?:\d+|\*)\]")


def _common_pattern(pattern: str, where: str) -> str:
    """The path pattern both match: indexes that differ become ``[*]``
    (``$.actions[3]``, ``$.actions[4]`` -> ``$.actions[*]``); ``$`` when the names differ."""
    if _INDEX.split(pattern) != _INDEX.split(where):
        return "$"
    parts = _INDEX.split(pattern)
    indexes = [a if a == b else "[*]" for a, b in
               zip(_INDEX.findall(pattern), _INDEX.findall(where), strict=True)]  # fmt: skip
    return "".join(p + i for p, i in zip(parts, [*indexes, ""], strict=True))


def _quoted(text: str) -> str:
    return ", ".join(f'"{c}"' for c in text)


def _evidence(value: JSON) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


VALIDATION_OUTCOME_ID = "workflow"
"""The validation outcome's id when the Workflow has no usable first operationId."""


def first_operation_id(document: JSON) -> str:
    """The id a validation outcome carries: the first action's operationId, if it has one."""
    if isinstance(document, dict):
        actions = document.get(find_key(document, "actions") or "actions")
        if isinstance(actions, list) and actions and isinstance(actions[0], dict):
            first = actions[0]
            op = first.get(find_key(first, "operationId") or "operationId")
            if isinstance(op, str) and op:
                return op
    return VALIDATION_OUTCOME_ID
