"""The checker every Workflow rule reports to: findings with a cap per rule, the rule context,
and the generic checks of names, types, numbers, enums and digits the part checks share.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from emulator.calling import ruleset as R
from emulator.calling.model import DTMF_KEYS, Culture, WireEnum
from emulator.findings import Finding, Rule, Severity
from emulator.jsonutil import JSON, child, is_integer, is_number, kind_of

FINDINGS_PER_RULE = 20
"""Findings of one rule listed for one Workflow; the rest are counted in one summary finding."""
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


class Checker:
    """The findings of one Workflow so far, and the checks every part of it uses."""

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

    def stop_tones(
        self, value: Mapping[str, JSON], keys: dict[str, str], where: str, *, allow_bool: bool
    ) -> list[str] | None:
        """The ``stopTones`` of record or collectDigits: digits, at most ``MAX_STOP_TONES``."""
        at = self.where(where, keys, "stopTones")
        tones = self.digits(self.get(value, keys, "stopTones"), at, allow_bool=allow_bool)
        raw = self.get(value, keys, "stopTones")
        if isinstance(raw, list | str) and len(raw) > MAX_STOP_TONES:
            self.add(R.WF_STOP_TONES_COUNT, at, f"{len(raw)} stop tones; at most {MAX_STOP_TONES}")
        return tones


def absolute_scheme(uri: str) -> str | None:
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
