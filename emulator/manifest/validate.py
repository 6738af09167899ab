"""Skill manifests (spec A): validate one against the 2.1.preview-1 schema and the spec.

Validation reports every violation, each a ``Finding`` whose ``where`` is a JSON pointer
(``/endpoints/0/platformAppId``; ``""`` is the whole manifest), in document order. Three passes:

1. the document against the schema (``skill-manifest-2.1.preview-1.json``, written from the spec's
   tables and shipped in the package). The finding's rule is the schema keyword that failed
   (``required``, ``additionalProperties``, ``pattern``, ``format``, ``oneOf``, ...);
2. ``value``, ``resultValue`` and every entry of ``definitions`` against the draft-07 metaschema,
   pointing inside them (``/activities/bookFlight/value/properties/date/type``), and their local
   ``$ref``s against the manifest;
3. what the schema cannot say, as the rules of ``RULES`` (``MF-ENDPOINT-HTTPS``, ...), and the
   spec's culture names (``MF-CULTURE-NAME``): the published schema does not constrain them, so
   neither does the shipped one; botemu warns, or with ``strict=True`` reports an error.

The shipped schema says pass 2 too (``payloadSchema`` refers to the metaschema), so any draft-07
validator gives the same verdict on it; botemu runs it apart only to point at the exact member.
Formats are enforced, not just declared: ``uri`` by ``is_uri`` (rfc3987 is not installed) and
``regex`` by Python's ``re``.

Reading lives in ``source.py`` (``load_manifest``), messages in ``explain.py``; the rules and the
schema's version in ``rules.py``, the formats in ``formats.py``, passes 2 (``$ref``) and 3 in
``semantics.py``. Every name this module had is still importable from it.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from typing import Any, cast

from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.findings import Finding
from emulator.jsonutil import JSON
from emulator.manifest import explain
from emulator.manifest.formats import FORMATS, is_uri
from emulator.manifest.rules import (
    ERROR,
    MAX_DEPTH,
    MF_DEPTH,
    MF_PAYLOAD_SCHEMA,
    PUBLISHED_PATH,
    RULES,
    SCHEMA_ID,
    SCHEMA_PATH,
    SCHEMA_VERSION,
    STRICT_RULES,
    WARNING,
)
from emulator.manifest.semantics import refs, semantics
from emulator.manifest.source import (
    MAX_BYTES,
    TIMEOUT,
    Manifest,
    ManifestError,
    NotAnObjectError,
    Position,
    child,
    load_manifest,
    load_manifest_bytes,
    load_manifest_text,
    position_of,
)

__all__ = [
    "FORMATS",
    "MAX_BYTES",
    "MAX_DEPTH",
    "PUBLISHED_PATH",
    "RULES",
    "SCHEMA_ID",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "STRICT_RULES",
    "TIMEOUT",
    "Manifest",
    "ManifestError",
    "NotAnObjectError",
    "Position",
    "is_uri",
    "load_manifest",
    "load_manifest_bytes",
    "load_manifest_text",
    "position_of",
    "schema",
    "validate_manifest",
]


# --- the schema ------------------------------------------------------------------------------


def schema() -> dict[str, JSON]:
    """The skill manifest JSON Schema, 2.1.preview-1 (a fresh copy)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


@functools.cache
def _validator() -> Any:
    """The manifest schema without its metaschema references (pass 2 checks those)."""
    checked = copy.deepcopy(_schema())
    definitions = cast(dict[str, dict[str, JSON]], checked["definitions"])
    del definitions["payloadSchema"]["allOf"]
    return Draft7Validator(checked, format_checker=FORMATS)


@functools.cache
def _meta_validator() -> Any:
    return Draft7Validator(Draft7Validator.META_SCHEMA, format_checker=FORMATS)


# --- validation ----------------------------------------------------------------------------------


def validate_manifest(manifest: Manifest | JSON, *, strict: bool = False) -> list[Finding]:
    """Every violation in the manifest, in document order. Never raises for a JSON value.

    ``strict``: the rules of ``STRICT_RULES`` (the spec's culture names) are errors, not warnings.
    """
    document = manifest.document if isinstance(manifest, Manifest) else manifest
    deep = _too_deep(document)
    if deep is not None:
        message = f"nested more than {MAX_DEPTH} levels deep: botemu does not validate it"
        return [Finding(MF_DEPTH.id, MF_DEPTH.severity, deep, message)]
    root = _validator().schema
    findings: list[Finding] = []
    for error in _validator().iter_errors(document):
        findings += explain.schema_error(error, root)
    for at, payload in _payloads(document):
        for error in _meta_validator().iter_errors(payload):
            findings += explain.metaschema_error(error, at, MF_PAYLOAD_SCHEMA)
        findings += refs(document, payload, at, document)
    findings += semantics(document, ERROR if strict else WARNING)
    return _ordered(document, findings)


def _too_deep(document: JSON) -> str | None:
    """The pointer of a value nested deeper than MAX_DEPTH, or None."""
    stack: list[tuple[JSON, str, int]] = [(document, "", 0)]
    while stack:
        value, pointer, depth = stack.pop()
        if depth > MAX_DEPTH:
            return pointer
        if isinstance(value, dict):
            stack += [(v, child(pointer, k), depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, child(pointer, i), depth + 1) for i, v in enumerate(value)]
    return None


def _payloads(document: JSON) -> Iterator[tuple[str, dict[str, JSON]]]:
    """(pointer, schema) of every value and resultValue of an event, invoke or message activity,
    and of every entry of definitions: the places that hold a draft-07 schema."""
    if not isinstance(document, dict):
        return
    for section in ("activities", "activitiesSent"):
        activities = document.get(section)
        if not isinstance(activities, dict):
            continue
        for name, activity in activities.items():
            if isinstance(activity, dict) and activity.get("type") in (
                "event",
                "invoke",
                "message",
            ):
                for field in ("value", "resultValue"):
                    payload = activity.get(field)
                    if isinstance(payload, dict):
                        yield child(child(child("", section), name), field), payload
    definitions = document.get("definitions")
    if isinstance(definitions, dict):
        for name, payload in definitions.items():
            if isinstance(payload, dict):
                yield child("/definitions", name), payload


def _ordered(document: JSON, findings: list[Finding]) -> list[Finding]:
    """Findings without repeats, in document order (a missing member sorts with its object)."""
    order: dict[str, int] = {}
    stack: list[tuple[str, JSON]] = [("", document)]
    while stack:
        pointer, value = stack.pop()
        order[pointer] = len(order)
        if isinstance(value, dict):
            stack += [(child(pointer, k), v) for k, v in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(child(pointer, i), v) for i, v in reversed(list(enumerate(value)))]

    def rank(finding: Finding) -> int:
        pointer = finding.where
        while pointer not in order and pointer:
            pointer = pointer[: pointer.rfind("/")]
        return order.get(pointer, 0)

    unique: dict[tuple[str, str], Finding] = {}  # one message per place, whichever rule says it
    for finding in findings:
        unique.setdefault((finding.where, finding.message), finding)
    return sorted(unique.values(), key=rank)
