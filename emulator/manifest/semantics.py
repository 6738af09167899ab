"""What the manifest schema cannot say (pass 3 of ``validate_manifest``), and the local
``$ref``s of its payload schemas (pass 2).

``refs``: MF-REF-UNRESOLVED for every ``#...`` ``$ref`` that does not lead to a schema.
``semantics``: the rules of ``RULES`` (unique endpoint names, https endpoints, a known
``$schema``, no name both received and sent) and the spec's culture names (MF-CULTURE-NAME, with
the severity ``strict`` asks for).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from emulator.findings import Finding, Rule, Severity
from emulator.jsonutil import JSON, kind_of
from emulator.manifest import words
from emulator.manifest.document import child, printable
from emulator.manifest.formats import is_uri
from emulator.manifest.rules import (
    MF_ACTIVITY_NAME_COLLISION,
    MF_CULTURE_NAME,
    MF_ENDPOINT_HTTPS,
    MF_ENDPOINT_NAME_UNIQUE,
    MF_REF_UNRESOLVED,
    MF_SCHEMA_VERSION,
    PUBLISHED_PATH,
    SCHEMA_FILE,
    SCHEMA_ID,
    SCHEMA_VERSION,
)

# --- $ref ------------------------------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_ONE = ("additionalItems", "items", "additionalProperties", "contains", "propertyNames",
               "if", "then", "else", "not")  # fmt: skip
_SCHEMA_LISTS = ("items", "allOf", "anyOf", "oneOf")


def refs(document: JSON, schema: JSON, where: str, base: JSON) -> list[Finding]:
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
                found += refs(document, sub, child(at, name), base)
        if keyword in _SCHEMA_ONE and isinstance(value, dict):
            found += refs(document, value, at, base)
        if keyword in _SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                found += refs(document, sub, child(at, index), base)
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
            close = words.closest(token, node) if isinstance(node, dict) else None
            hint = f" (did you mean '{words.name(close)}'?)" if close else ""
            return (
                f"'{words.name(ref)}' does not resolve: {where} has no '{words.name(token)}'{hint}"
            )
        walked = f"{walked}/{token}" if walked else token
    if not isinstance(node, dict | bool):
        return f"'{words.name(ref)}' leads to {kind_of(node)}, not to a schema"
    return None


# --- what the schema cannot say ------------------------------------------------------------------


def semantics(document: JSON, strict_severity: Severity) -> list[Finding]:
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
            message = f"the endpoint name '{words.name(name)}' is already used by /endpoints/{names[name]}: endpoint names are unique"
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
                message = f"'{words.name(name)}' also names an activity the skill receives ({child('/activities', name)}): give them distinct names"
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
            message = f"the culture name '{words.name(key)}' is not in the spec's form {_CULTURE_FORM}{hint}"
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
                f"got '{words.name(name)}'{hint}"
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
