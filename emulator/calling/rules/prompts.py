"""The rules on prompts: a playPrompt's prompt list, the nested ``playPrompt`` of record and
recognize, and each prompt's value, file and settings.
"""

from __future__ import annotations

from collections.abc import Mapping

from emulator.calling import ruleset as R
from emulator.calling.model import ActionType, SayAs, VoiceGender
from emulator.calling.rules.checker import Checker, absolute_scheme
from emulator.calling.wire.fields import PROMPT_FIELDS, action_fields
from emulator.jsonutil import JSON, child, utf16_length

PROMPT_VALUE_MAX = 2048
MAX_PROMPTS = 100
"""Prompts checked in one Workflow, nested ones included (``WF-PROMPTS-LIMIT``)."""


def check_play_prompt(
    c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str
) -> None:
    """The ``prompts`` of a playPrompt (an action, or nested in record or recognize)."""
    at = c.where(where, keys, "prompts")
    prompts = c.get(value, keys, "prompts")
    if prompts is None:
        c.add(R.WF_PLAYPROMPT_PROMPTS, at, "prompts is required")
        return
    items = c.array(prompts, at)
    if items is not None and not items:
        c.add(R.WF_PLAYPROMPT_PROMPTS, at, "prompts is empty")
    for i, prompt in enumerate(items or []):
        if c.prompts >= MAX_PROMPTS:
            if c.prompts == MAX_PROMPTS:  # said once, at the first prompt past the limit
                c.add(
                    R.WF_PROMPTS_LIMIT,
                    child(at, i),
                    f"a Workflow has at most {MAX_PROMPTS} prompts in all, nested ones "
                    "included (real Workflows have a handful): this one and the rest are not "
                    "checked",
                )
                c.prompts += 1
            return
        c.prompts += 1
        check_prompt(c, prompt, child(at, i))


def check_nested_prompt(
    c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str
) -> None:
    """The ``playPrompt`` member of record or recognize, if it has one."""
    nested = c.get(value, keys, "playPrompt")
    if nested is None:
        return
    at = c.where(where, keys, "playPrompt")
    if not isinstance(nested, dict):
        c.type_error(at, "a playPrompt object", nested)
        return
    nested_keys = c.fields(nested, at, action_fields(ActionType.PLAY_PROMPT))
    kind = c.get(nested, nested_keys, "action")
    if kind is not None and (
        not isinstance(kind, str) or ActionType.read(kind) is not ActionType.PLAY_PROMPT
    ):
        c.add(
            R.WF_NESTED_PROMPT,
            c.where(at, nested_keys, "action"),
            "the nested prompt's action is playPrompt",
            kind,
        )
    elif isinstance(kind, str) and not ActionType.PLAY_PROMPT.is_canonical(kind):
        c.add(
            R.WF_CASING,
            c.where(at, nested_keys, "action"),
            f"'{kind}' is written 'playPrompt'",
            kind,
        )
    c.string(c.get(nested, nested_keys, "operationId"), c.where(at, nested_keys, "operationId"))
    check_play_prompt(c, nested, nested_keys, at)


def check_prompt(c: Checker, value: JSON, where: str) -> None:
    if not isinstance(value, dict):
        c.type_error(where, "a prompt object", value)
        return
    keys = c.fields(value, where, PROMPT_FIELDS)
    text = c.string(c.get(value, keys, "value"), c.where(where, keys, "value"))
    uri = c.string(c.get(value, keys, "fileUri"), c.where(where, keys, "fileUri"))
    silence = _settings(c, value, keys, where)
    has_text = bool(text and text.strip())
    _content(c, value, keys, where, has_text=has_text, uri=uri, silence=silence)
    if text is not None and utf16_length(text) > PROMPT_VALUE_MAX:
        c.add(
            R.WF_PROMPT_VALUE_LENGTH,
            c.where(where, keys, "value"),
            f"value is {utf16_length(text)} characters; the limit is {PROMPT_VALUE_MAX}",
        )
    if uri is not None:
        _file(c, keys, where, uri, has_text=has_text)


def _settings(
    c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str
) -> float | None:
    """Check a prompt's leading silence, voice, culture, emphasis and sayAs; the silence."""
    silence = c.number(
        c.get(value, keys, "silenceLengthInMilliseconds"),
        c.where(where, keys, "silenceLengthInMilliseconds"),
        R.WF_PROMPT_SILENCE_RANGE,
        0,
        60000,
        integer=True,
    )
    c.enum(VoiceGender, c.get(value, keys, "voice"), c.where(where, keys, "voice"))
    c.culture(c.get(value, keys, "culture"), c.where(where, keys, "culture"))
    c.boolean(c.get(value, keys, "emphasize"), c.where(where, keys, "emphasize"))
    c.enum(SayAs, c.get(value, keys, "sayAs"), c.where(where, keys, "sayAs"))
    return silence


def _content(
    c: Checker,
    value: Mapping[str, JSON],
    keys: dict[str, str],
    where: str,
    *,
    has_text: bool,
    uri: str | None,
    silence: float | None,
) -> None:
    """A prompt has a value, a fileUri or some silence, and never both a value and a file."""
    if has_text and uri:
        c.add(R.WF_PROMPT_BOTH, where, "a prompt has value or fileUri, never both")
    if not has_text and not uri and not (silence and silence > 0):
        c.add(
            R.WF_PROMPT_CONTENT,
            where,
            "a prompt needs a value, a fileUri or silenceLengthInMilliseconds > 0",
        )
    elif c.get(value, keys, "value") is None and silence is not None and silence <= 0:
        c.add(
            R.WF_PROMPT_SILENCE,
            c.where(where, keys, "silenceLengthInMilliseconds"),
            "silenceLengthInMilliseconds must be greater than 0 when value is null",
            silence,
        )


def _file(c: Checker, keys: dict[str, str], where: str, uri: str, *, has_text: bool) -> None:
    """A prompt's fileUri is an http(s) address; the text settings do nothing to a file."""
    if absolute_scheme(uri) is None:
        c.add(
            R.WF_PROMPT_FILE_URI,
            c.where(where, keys, "fileUri"),
            "fileUri is not an absolute http(s) address",
            uri,
        )
    if uri and not has_text:
        text_only = [n for n in ("voice", "culture", "emphasize", "sayAs") if n in keys]
        for name in text_only:
            c.add(
                R.WF_PROMPT_TEXT_ONLY,
                c.where(where, keys, name),
                f"{name} applies only to text; it is ignored for a file prompt",
            )
