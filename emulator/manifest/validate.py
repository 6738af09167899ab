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

Reading lives in ``source.py`` (``load_manifest``), messages in ``explain.py``.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from jsonschema import Draft7Validator, FormatChecker  # type: ignore[import-untyped]

from emulator.findings import Finding, Rule, RuleRegistry, Severity
from emulator.jsonutil import JSON, kind_of
from emulator.manifest import explain
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
    printable,
)
from emulator.patterns import compile_pattern

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

SCHEMA_VERSION = "2.1.preview-1"
SCHEMA_FILE = f"skill-manifest-{SCHEMA_VERSION}.json"
SCHEMA_ID = f"https://schemas.platform.example/schemas/skills/{SCHEMA_FILE}"
"""The ``$id`` of the shipped schema. A manifest's ``$schema`` is known when it is this URI, any
URI whose last path segment is ``SCHEMA_FILE`` (the platform's own copy, whatever its host), or an
https URL whose path ends with ``PUBLISHED_PATH`` (the published location, whatever its host)."""
PUBLISHED_PATH = f"/v{SCHEMA_VERSION}/skill-manifest.json"
"""How the path of the schema's published location ends: ``.../v2.1.preview-1/skill-manifest.json``."""
SCHEMA_PATH = Path(str(resources.files("emulator.manifest").joinpath(SCHEMA_FILE)))
MAX_DEPTH = 64
"""Deeper documents are not validated (MF-DEPTH): the checks recurse."""

ERROR, WARNING = Severity.ERROR, Severity.WARNING
RULES = RuleRegistry(f"Skill manifest ({SCHEMA_VERSION})")
_r = RULES.add
# fmt: off
MF_PAYLOAD_SCHEMA = _r("MF-PAYLOAD-SCHEMA", ERROR,
    "spec A, Activity definitions (value, resultValue), top level (definitions); field notes",
    "value, resultValue and every entry of definitions are valid draft-07 JSON Schemas.")
MF_REF_UNRESOLVED = _r("MF-REF-UNRESOLVED", ERROR, "spec A, top level (definitions)",
    "A $ref into the manifest (#/definitions/...) resolves to a schema.")
MF_ENDPOINT_NAME_UNIQUE = _r("MF-ENDPOINT-NAME-UNIQUE", WARNING, "spec A, endpoint (name)",
    "Endpoint names are unique.")
MF_ENDPOINT_HTTPS = _r("MF-ENDPOINT-HTTPS", WARNING,
    "spec A, endpoint (endpointUrl); spec Authentication, Transport",
    "endpointUrl is an https URL: all connections use HTTPS.")
MF_CULTURE_NAME = _r("MF-CULTURE-NAME", WARNING,
    "spec A, dispatchModels (languages), languageModel (name); field notes (Skill manifest)",
    "The keys of dispatchModels.languages and each languageModel's name are culture names: "
    "lowercase ISO 639 language, hyphen, uppercase ISO 3166 region (en-US). The published schema "
    "does not say so: a warning, an error with --strict.")
MF_SCHEMA_VERSION = _r("MF-SCHEMA-VERSION", WARNING, "spec A, top level ($schema); Versioning 1",
    f"$schema names the {SCHEMA_VERSION} schema, the version botemu knows.")
MF_ACTIVITY_NAME_COLLISION = _r("MF-ACTIVITY-NAME-COLLISION", WARNING,
    "spec A, top level (activities, activitiesSent)",
    "No name is used both in activities and in activitiesSent.")
MF_DEPTH = _r("MF-DEPTH", ERROR, "botemu limit (docs/manifests.md)",
    f"A manifest is nested at most {MAX_DEPTH} levels deep (deeper ones are not validated).")
# fmt: on
STRICT_RULES = frozenset({MF_CULTURE_NAME.id})
"""Rules that are warnings by default and errors with ``strict=True`` (``--strict``): the letter
of the spec where the published schema and real manifests are looser (field notes)."""


# --- the schema and formats ----------------------------------------------------------------------


def schema() -> dict[str, JSON]:
    """The skill manifest JSON Schema, 2.1.preview-1 (a fresh copy)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def is_uri(value: object) -> bool:
    """Format ``uri``: an absolute URI (RFC 3986 4.3, a fragment allowed).

    A scheme and something after it; only characters RFC 3986 allows (no spaces; non-ASCII must
    be percent-encoded); well-formed ``%XX``; brackets only around an IPv6 host; a numeric port;
    http and https need a host. Anything but a string passes (formats only constrain strings).
    """
    if not isinstance(value, str):
        return True
    scheme, colon, rest = value.partition(":")
    if not colon or not rest or not _SCHEME.fullmatch(scheme):
        return False
    if not _URI_CHARS.fullmatch(value) or _BAD_PERCENT.search(value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError when the port is not a number
    except ValueError:
        return False
    if any(c in parts.path + parts.query + parts.fragment for c in "[]#"):
        return False
    return scheme.lower() not in ("http", "https") or bool(parts.hostname)


def _is_regex(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        compile_pattern(value)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False
    return True


FORMATS = FormatChecker(formats=())
"""The formats botemu enforces: ``uri`` (``is_uri``) and ``regex``."""
FORMATS.checks("uri")(is_uri)
FORMATS.checks("regex")(_is_regex)


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
        findings += _refs(document, payload, at, document)
    findings += _semantics(document, ERROR if strict else WARNING)
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


# --- $ref ------------------------------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_ONE = ("additionalItems", "items", "additionalProperties", "contains", "propertyNames",
               "if", "then", "else", "not")  # fmt: skip
_SCHEMA_LISTS = ("items", "allOf", "anyOf", "oneOf")


def _refs(document: JSON, schema: JSON, where: str, base: JSON) -> list[Finding]:
    """MF-REF-UNRESOLVED for every ``#...`` JSON-pointer ``$ref`` in ``schema`` that does not lead
    to a schema. ``#`` is the manifest, or the nearest enclosing schema with its own ``$id``."""
    if not isinstance(schema, dict):
        return []
    found: list[Finding] = []
    own_id = schema.get("$id")
    if isinstance(own_id, str) and not own_id.startswith("#"):
        base = schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        problem = _unresolved(base, ref, base is document)
        if problem:
            rule = MF_REF_UNRESOLVED
            found.append(Finding(rule.id, rule.severity, child(where, "$ref"), problem, ref))
    for keyword, value in schema.items():
        at = child(where, keyword)
        if keyword in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += _refs(document, sub, child(at, name), base)
        if keyword in _SCHEMA_ONE and isinstance(value, dict):
            found += _refs(document, value, at, base)
        if keyword in _SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                found += _refs(document, sub, child(at, index), base)
    return found


def _unresolved(base: JSON, ref: str, in_manifest: bool) -> str | None:
    """Why ``ref`` does not lead to a schema in ``base``, or None when it does."""
    node, walked = base, ""
    for raw in unquote(ref[1:]).split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        where = f"'{walked}'" if walked else ("the manifest" if in_manifest else "the schema")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif (
            isinstance(node, list)
            and re.fullmatch(r"0|[1-9][0-9]*", token)
            and int(token) < len(node)
        ):
            node = node[int(token)]
        else:
            close = explain.closest(token, node) if isinstance(node, dict) else None
            hint = f" (did you mean '{explain.name(close)}'?)" if close else ""
            return f"'{explain.name(ref)}' does not resolve: {where} has no '{explain.name(token)}'{hint}"
        walked = f"{walked}/{token}" if walked else token
    if not isinstance(node, dict | bool):
        return f"'{explain.name(ref)}' leads to {kind_of(node)}, not to a schema"
    return None


# --- what the schema cannot say ------------------------------------------------------------------


def _semantics(document: JSON, strict_severity: Severity) -> list[Finding]:
    """The rules of RULES; those of STRICT_RULES with ``strict_severity``."""
    if not isinstance(document, dict):
        return []
    found: list[Finding] = []
    declared = document.get("$schema")
    if isinstance(declared, str) and is_uri(declared) and not _known_schema(declared):
        message = (
            f"$schema '{printable(declared)}' is not a schema version botemu knows: "
            f"botemu validates against {SCHEMA_VERSION} ({SCHEMA_ID})"
        )
        found.append(_warn(MF_SCHEMA_VERSION, "/$schema", message, declared))
    endpoints = document.get("endpoints")
    names: dict[str, int] = {}
    for index, endpoint in enumerate(endpoints if isinstance(endpoints, list) else []):
        if not isinstance(endpoint, dict):
            continue
        at = child("/endpoints", index)
        name = endpoint.get("name")
        if isinstance(name, str) and name in names:
            message = f"the endpoint name '{explain.name(name)}' is already used by /endpoints/{names[name]}: endpoint names are unique"
            found.append(_warn(MF_ENDPOINT_NAME_UNIQUE, child(at, "name"), message, name))
        elif isinstance(name, str):
            names[name] = index
        url = endpoint.get("endpointUrl")
        if isinstance(url, str) and is_uri(url) and urlsplit(url).scheme.lower() != "https":
            scheme = urlsplit(url).scheme.lower()
            message = f"endpointUrl is {scheme}, not https: all connections to a skill use HTTPS"
            found.append(_warn(MF_ENDPOINT_HTTPS, child(at, "endpointUrl"), message, url))
    received, sent = document.get("activities"), document.get("activitiesSent")
    if isinstance(received, dict) and isinstance(sent, dict):
        for name in sent:
            if name in received:
                message = f"'{explain.name(name)}' also names an activity the skill receives ({child('/activities', name)}): give them distinct names"
                found.append(
                    _warn(MF_ACTIVITY_NAME_COLLISION, child("/activitiesSent", name), message, None)
                )
    return found + _cultures(document, strict_severity)


_CULTURE = re.compile(r"[a-z]{2}-[A-Z]{2}")
_CULTURE_LIKE = re.compile(r"([A-Za-z]{2})[-_]([A-Za-z]{2})")
_CULTURE_FORM = "xx-XX (lowercase ISO 639 language, uppercase ISO 3166 region, such as en-US)"


def _cultures(document: dict[str, JSON], severity: Severity) -> list[Finding]:
    """MF-CULTURE-NAME: the keys of dispatchModels.languages and each languageModel's name are
    culture names in the spec's form. The published schema constrains neither, and real manifests
    write ``en-us``, ``en`` and display names (field notes), so this is a warning by default."""
    dispatch = document.get("dispatchModels")
    languages = dispatch.get("languages") if isinstance(dispatch, dict) else None
    if not isinstance(languages, dict):
        return []
    rule = MF_CULTURE_NAME
    found: list[Finding] = []
    for key, models in languages.items():
        at = child("/dispatchModels/languages", key)
        culture = _culture_of(key)
        if key != culture:
            hint = f"; did you mean '{culture}'?" if culture else ""
            if not culture and re.fullmatch(r"[A-Za-z]{2}", key):
                hint = f"; '{key}' has no region"
            message = (
                f"the culture name '{explain.name(key)}' is not in the spec's form "
                f"{_CULTURE_FORM}{hint}"
            )
            found.append(Finding(rule.id, severity, at, message, key))
        for index, model in enumerate(models if isinstance(models, list) else []):
            name = model.get("name") if isinstance(model, dict) else None
            if not isinstance(name, str) or _CULTURE.fullmatch(name):
                continue
            if _culture_of(name):
                hint = f"; did you mean '{_culture_of(name)}'?"
            else:
                hint = f"; the culture of its key is '{culture}'" if culture else ""
            message = (
                f"a language model's name is a culture name in the spec's form {_CULTURE_FORM}, "
                f"got '{explain.name(name)}'{hint}"
            )
            where = child(child(at, index), "name")
            found.append(Finding(rule.id, severity, where, message, name))
    return found


def _culture_of(text: str) -> str | None:
    """``text`` in the spec's form when it is a culture name written otherwise (``en-us``,
    ``EN_us``), else None."""
    like = _CULTURE_LIKE.fullmatch(text)
    return f"{like[1].lower()}-{like[2].upper()}" if like else None


def _known_schema(uri: str) -> bool:
    """botemu's ``$id``; any URI whose last path segment is ``SCHEMA_FILE``; or an https URL whose
    path ends with ``PUBLISHED_PATH`` (the published location: ``.../v2.1.preview-1/skill-manifest.json``)."""
    base = uri.split("#", 1)[0]
    parts = urlsplit(base)
    if parts.scheme.lower() == "https" and parts.path.endswith(PUBLISHED_PATH):
        return True
    return base == SCHEMA_ID or parts.path.rsplit("/", 1)[-1] == SCHEMA_FILE


def _warn(rule: Rule, where: str, message: str, evidence: str | None) -> Finding:
    return Finding(rule.id, rule.severity, where, message, evidence)


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
