"""The rules on a recognize action: its nested prompt and time-outs, and the menu it offers
(``choices``, with their names, speech and DTMF variations) or the digits it collects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from emulator.calling import ruleset as R
from emulator.calling.rules.checker import Checker
from emulator.calling.rules.prompts import check_nested_prompt
from emulator.calling.speech import normalize_speech
from emulator.jsonutil import JSON, child


def check_recognize(
    c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str
) -> None:
    check_nested_prompt(c, value, keys, where)
    c.boolean(c.get(value, keys, "bargeInAllowed"), c.where(where, keys, "bargeInAllowed"))
    c.culture(c.get(value, keys, "culture"), c.where(where, keys, "culture"))
    c.number(
        c.get(value, keys, "initialSilenceTimeoutInSeconds"),
        c.where(where, keys, "initialSilenceTimeoutInSeconds"),
        R.WF_RECOGNIZE_INITIAL_SILENCE,
        1,
        30,
        integer=False,
    )
    c.number(
        c.get(value, keys, "interdigitTimeoutInSeconds"),
        c.where(where, keys, "interdigitTimeoutInSeconds"),
        R.WF_RECOGNIZE_INTERDIGIT,
        1,
        5,
        integer=False,
    )
    choices = c.get(value, keys, "choices")
    collect = c.get(value, keys, "collectDigits")
    if (choices is None) == (collect is None):
        both = "both are" if choices is not None else "neither is"
        c.add(
            R.WF_RECOGNIZE_ONE_OF,
            where,
            f"exactly one of collectDigits and choices is specified; {both}",
        )
    if choices is not None:
        check_choices(c, choices, c.where(where, keys, "choices"))
    if collect is not None:
        check_collect_digits(c, collect, c.where(where, keys, "collectDigits"))


@dataclass(slots=True)
class _Seen:
    """What the choices of one menu used so far, each with the path of the choice that did."""

    names: dict[str, str] = field(default_factory=dict)
    speech: dict[str, str] = field(default_factory=dict)
    """Normalized speech variation -> choice."""
    dtmf: dict[str, str] = field(default_factory=dict)
    """Key sequence -> choice."""


def check_choices(c: Checker, value: JSON, where: str) -> None:
    items = c.array(value, where)
    if items is None:
        return
    if not items:
        c.add(R.WF_CHOICES_EMPTY, where, "choices is empty: a menu has at least one choice")
    seen = _Seen()
    for i, choice in enumerate(items):
        _check_choice(c, choice, child(where, i), seen)
    for sequence, other in _prefix_pairs(list(seen.dtmf)):
        c.add(
            R.WF_DTMF_PREFIX,
            seen.dtmf[other],
            f"'{other}' starts with '{sequence}' ({seen.dtmf[sequence]}), which matches first",
        )


def _check_choice(c: Checker, choice: JSON, at: str, seen: _Seen) -> None:
    if not isinstance(choice, dict):
        c.type_error(at, "a choice object", choice)
        return
    keys = c.fields(choice, at, ("name", "speechVariation", "dtmfVariation"))
    _choice_name(c, choice, keys, at, seen)
    speech = _speech_variations(c, choice, keys, at, seen)
    sequence = dtmf_variation(c, choice, keys, at)
    if sequence:
        if sequence in seen.dtmf:
            c.add(
                R.WF_CHOICE_UNIQUE,
                c.where(at, keys, "dtmfVariation"),
                f"DTMF '{sequence}' is also the variation of {seen.dtmf[sequence]}",
                sequence,
            )
        seen.dtmf.setdefault(sequence, at)
    if not speech and not sequence and c.get(choice, keys, "dtmfVariation") is None:
        c.add(R.WF_CHOICE_VARIATION, at, "a choice needs a speechVariation or a dtmfVariation")


def _choice_name(
    c: Checker, choice: Mapping[str, JSON], keys: dict[str, str], at: str, seen: _Seen
) -> None:
    name = c.string(c.get(choice, keys, "name"), c.where(at, keys, "name"))
    if not name or not name.strip():
        c.add(R.WF_CHOICE_NAME, c.where(at, keys, "name"), "a choice needs a non-blank name")
    elif name in seen.names:
        c.add(
            R.WF_CHOICE_NAME_UNIQUE,
            c.where(at, keys, "name"),
            f"choice name '{name}' is also used at {seen.names[name]}",
        )
    else:
        seen.names[name] = at


def _speech_variations(
    c: Checker, choice: Mapping[str, JSON], keys: dict[str, str], at: str, seen: _Seen
) -> list[JSON]:
    """Check a choice's speech variations (at most 5, none another choice's); the list."""
    speech_at = c.where(at, keys, "speechVariation")
    speech = c.array(c.get(choice, keys, "speechVariation"), speech_at) or []
    if len(speech) > 5:
        c.add(R.WF_CHOICE_SPEECH_COUNT, speech_at, f"{len(speech)} speech variations; at most 5")
    for j, phrase in enumerate(speech):
        if not c.not_null(phrase, child(speech_at, j), "a string"):
            continue
        text = c.string(phrase, child(speech_at, j))
        if text is None:
            continue
        norm = normalize_speech(text)
        if norm in seen.speech and seen.speech[norm] != at:
            c.add(
                R.WF_CHOICE_UNIQUE,
                child(speech_at, j),
                f"speech '{text}' is also a variation of {seen.speech[norm]}",
                text,
            )
        seen.speech.setdefault(norm, at)
    return speech


def dtmf_variation(c: Checker, choice: Mapping[str, JSON], keys: dict[str, str], at: str) -> str:
    """Check a choice's dtmfVariation; its key sequence, or "" when it has none or a bad one."""
    where = c.where(at, keys, "dtmfVariation")
    value = c.get(choice, keys, "dtmfVariation")
    if value is None:
        return ""
    items: list[tuple[JSON, str]]
    if isinstance(value, str):
        items = [(value, where)]
    elif isinstance(value, list):
        items = [(v, child(where, i)) for i, v in enumerate(value)]
    else:
        c.type_error(where, "a digit", value)
        return ""
    if not items:
        c.add(R.WF_DTMF_DIGIT, where, "dtmfVariation is empty")
        return ""
    keys_pressed = [v for v, w in items if c.digit(v, w)]
    sequence = "".join(k for k in keys_pressed if isinstance(k, str))
    if len(items) > 1 and len(keys_pressed) == len(items):
        c.add(
            R.WF_DTMF_SEQUENCE,
            where,
            f"several keys are one key sequence: the caller presses '{sequence}'",
            value,
        )
    return sequence if len(keys_pressed) == len(items) else ""


def check_collect_digits(c: Checker, value: JSON, where: str) -> None:
    if not isinstance(value, dict):
        c.type_error(where, "a collectDigits object", value)
        return
    keys = c.fields(value, where, ("maxNumberOfDtmfs", "stopTones"))
    max_at = c.where(where, keys, "maxNumberOfDtmfs")
    maximum = c.get(value, keys, "maxNumberOfDtmfs")
    c.number(maximum, max_at, R.WF_DIGITS_LIMIT, 1, 20, integer=True)
    tones = c.stop_tones(value, keys, where, allow_bool=False)
    if maximum is None and not tones:
        c.add(R.WF_DIGITS_LIMIT, where, "collectDigits needs maxNumberOfDtmfs or a stop tone")


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
