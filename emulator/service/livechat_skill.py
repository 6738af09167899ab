"""The web chat with a skill manifest (docs/interactive.md): the activities the manifest declares,
each with its value schema (``definitions`` resolved, for the page's form) and a sample value,
and the check of what the bot answers against the declared ``resultValue``: an invoke's response
body, and the value of the ``endOfConversation`` that answers any other declared activity.

The manifest comes from the page (a file picked there, sent as text in the ``manifest`` frame:
``picked``), or from the command line (``botemu serve --manifest FILE``, read at start: ``given``),
which every page starts with as if it had picked it; it is read and validated by
``emulator.manifest`` as ``botemu manifest validate`` reads it. The findings use the rules of
``botemu manifest check`` (SKILL-INVOKE-RESULT, SKILL-EOC-RESULT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject, child
from emulator.manifest.samples import SampleError, sample, validator_for
from emulator.manifest.source import load_manifest_text
from emulator.manifest.validate import validate_manifest
from emulator.patterns import quiet_patterns

MAX_MANIFEST = 200 * 1024
"""Characters of a manifest the page may send."""
MAX_RESOLVED = 20_000
"""Schema nodes made while resolving ``$ref``s for the form (a manifest's refs may fan out)."""
MAX_DEPTH = 64
"""Levels of a schema the form gets; deeper parts are edited as JSON."""
MAX_FINDINGS = 20
MAX_MENU = 100
"""Declared activities the menu lists (each gets a sample value, made here)."""
RECURSIVE = "recursive"
"""What a ``$ref`` back into itself becomes in the form's schema: ``{"x-recursive": "<ref>"}``
(the form edits that part as JSON)."""


@dataclass(frozen=True)
class Declared:
    """One activity the manifest declares."""

    key: str
    type: str
    name: str | None
    definition: JSONObject


class SkillManifest:
    """A manifest the page loaded: its declared activities and definitions."""

    def __init__(self, document: JSONObject, label: str) -> None:
        self.label = label
        definitions = document.get("definitions")
        self.definitions: JSONObject = definitions if isinstance(definitions, dict) else {}
        activities = document.get("activities")
        self.declared = [
            Declared(key, str(entry.get("type") or "message"), _name(entry), entry)
            for key, entry in (activities.items() if isinstance(activities, dict) else ())
            if isinstance(entry, dict)
        ]

    def menu(self) -> list[JSON]:
        """What the page's menu lists: each activity with its form's schema and a sample."""
        out: list[JSON] = []
        for number, item in enumerate(self.declared[:MAX_MENU]):
            entry: JSONObject = {"key": item.key, "type": item.type, "name": item.name,
                                 "description": str(item.definition.get("description") or ""),
                                 "result": "resultValue" in item.definition}  # fmt: skip
            schema = item.definition.get("value")
            if schema is not None:
                entry["schema"] = resolved(schema, self.definitions)
                try:
                    entry["sample"] = sample(schema, seed=number, definitions=self.definitions)
                except SampleError:
                    pass  # the form starts empty
            out.append(entry)
        return out

    def expecting(self, activity: Mapping[str, JSON]) -> Declared | None:
        """The declared activity ``activity`` is, when it declares a ``resultValue``."""
        kind, name = str(activity.get("type", "")).lower(), activity.get("name")
        for item in self.declared:
            if (
                item.type.lower() == kind
                and (item.name is None or item.name == name)
                and "resultValue" in item.definition
            ):
                return item
        return None

    def check(self, item: Declared, rule: str, value: JSON, what: str) -> list[Finding]:
        """``value`` against the ``resultValue`` of ``item``: one finding per mismatch, or one
        info finding when it is valid."""
        where = f"activities/{item.key}/resultValue"
        try:
            validator = validator_for(item.definition["resultValue"], self.definitions)
            with quiet_patterns():
                errors = list(validator.iter_errors(value))
        except (SchemaError, Unresolvable) as e:
            return [Finding(rule, Severity.WARNING, where, f"not checked: {e}")]
        out = []
        for error in errors[:MAX_FINDINGS]:
            path = "$"
            for key in error.absolute_path:
                path = child(path, key)
            out.append(Finding(rule, Severity.ERROR, f"{where}: {path}",
                               f"{what} does not match: {error.message}"))  # fmt: skip
        return out or [Finding(rule, Severity.INFO, where, f"{what} is valid against it")]


def load(text: JSON, label: JSON) -> tuple[SkillManifest, list[Finding]]:
    """The manifest in ``text`` and its validation findings; ValueError says why it cannot be used."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("manifest is the manifest's text (JSON or YAML)")
    if len(text) > MAX_MANIFEST:
        raise ValueError(f"the manifest is {len(text):,} characters: at most {MAX_MANIFEST:,}")
    name = label[:100] if isinstance(label, str) and label else "manifest"
    try:
        manifest = load_manifest_text(text, name)
    except Exception as e:  # ManifestError, and whatever a hostile text makes the reader raise
        raise ValueError(f"{name}: {e}") from None
    findings = [f for f in validate_manifest(manifest) if f.severity is not Severity.INFO]
    return skill_of(manifest.document, name), findings[:MAX_FINDINGS]


def skill_of(document: JSONObject, name: str) -> SkillManifest:
    """The manifest ``document`` for the web chat; ValueError when it declares no activities."""
    skill = SkillManifest(document, name)
    if not skill.declared:
        raise ValueError(f"{name}: declares no activities: the web chat has none to offer")
    return skill


def manifest_frame(ref: JSON, skill: SkillManifest, findings: Sequence[Finding]) -> JSONObject:
    """The ``manifest`` frame that gives a page ``skill``: its menu and its findings."""
    return {"op": "manifest", "ref": ref, "name": skill.label, "activities": skill.menu(),
            "findings": [dict(f.to_json()) for f in findings[:MAX_FINDINGS]]}  # fmt: skip


def picked(text: JSON, label: JSON, ref: JSON) -> tuple[SkillManifest | None, JSONObject]:
    """What a page's ``manifest`` frame makes: the skill (None: a null ``text`` forgets it),
    and the frame that answers; ValueError says why the manifest cannot be used."""
    if text is None:
        return None, {"op": "manifest", "ref": ref, "activities": None}
    skill, findings = load(text, label)
    return skill, manifest_frame(ref, skill, findings)


@dataclass(frozen=True)
class Given:
    """The manifest every page starts with, as if it had picked it (``botemu serve
    --manifest``): the skill, the ``manifest`` frame each page gets after ``ready`` (made once),
    and how many warnings its validation has."""

    skill: SkillManifest
    frame: JSONObject
    warnings: int


def given(document: JSONObject, label: str, findings: Sequence[Finding]) -> Given:
    """The manifest ``document`` (read at start, validated: ``findings``) for every page;
    ValueError when it declares no activities."""
    skill = skill_of(document, label)
    shown = [f for f in findings if f.severity is not Severity.INFO]
    warnings = sum(f.severity is Severity.WARNING for f in shown)
    return Given(skill, manifest_frame(None, skill, shown), warnings)


def resolved(schema: JSON, definitions: Mapping[str, JSON]) -> JSON:
    """``schema`` with every ``#/definitions/...`` ``$ref`` replaced by what it names (a ref
    inside itself becomes ``{"x-recursive": ref}``), at most MAX_RESOLVED nodes."""
    made = [0]

    def walk(node: JSON, seen: tuple[str, ...], depth: int = 0) -> JSON:
        made[0] += 1
        if made[0] > MAX_RESOLVED or depth > MAX_DEPTH:
            return {"x-" + RECURSIVE: "too large"}
        if isinstance(node, list):
            return [walk(item, seen, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            target = definitions.get(ref.removeprefix("#/definitions/"))
            if ref in seen or target is None:
                return {"x-" + RECURSIVE: ref}
            rest = {k: v for k, v in node.items() if k != "$ref"}
            inner = walk(target, (*seen, ref), depth + 1)
            return {**inner, **rest} if isinstance(inner, dict) else inner
        return {k: walk(v, seen, depth + 1) if k not in ("enum", "const", "default") else v
                for k, v in node.items()}  # fmt: skip

    return walk(schema, ())


def _name(entry: Mapping[str, JSON]) -> str | None:
    name = entry.get("name")
    return name if isinstance(name, str) else None
