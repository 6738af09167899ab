"""jsonschema errors to findings: one plain-English line per violation, at an exact JSON pointer.

A schema error becomes a finding whose rule is the keyword that failed. Where a keyword speaks of
several members at once, each gets its own finding: every missing ``required`` property, every
extra property (at its key), every repeated item of a ``uniqueItems`` array (at the repeat), every
key that fails ``propertyNames``. Messages come from the schema where it gives them
(``errorMessage``, the text an editor shows too), else from the keyword and the schema's ``title``.

An activity definition is a ``oneOf`` of four kinds. Its ``type`` picks the kind, and the reasons
that kind fails are reported; a type that picks none is a ``oneOf`` finding at ``.../type``, for
example an invoke activity in ``activitiesSent``.

Errors from the draft-07 metaschema (``value``, ``resultValue``, ``definitions``) become findings of
one rule (MF-PAYLOAD-SCHEMA) at the pointer inside the manifest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, TypeAlias

from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from emulator.findings import Finding, Rule, Severity
from emulator.manifest.document import child
from emulator.manifest.words import (
    TYPE_WORDS,
    a,
    as_list,
    closest,
    evidence,
    kind,
    name,
    one_line,
    pointer,
    repeats,
    same,
    short,
    show,
    types,
)

__all__ = [
    "a",
    "closest",
    "kind",
    "metaschema_error",
    "name",
    "one_line",
    "pointer",
    "same",
    "schema_error",
    "short",
    "show",
    "types",
]

Schema: TypeAlias = dict[str, Any]

_SIMPLE_TYPES = sorted(TYPE_WORDS)

_HINTS = {
    ("message activity", "name"): "a message activity has no name: "
    "the utterance travels in the text property of the message",
}
_META_ID = "http://json-schema.org/draft-07/schema#"


# --- the manifest schema -------------------------------------------------------------------------


def schema_error(error: ValidationError, root: Schema) -> list[Finding]:
    """The findings one error of the manifest schema stands for (``root`` resolves its $refs)."""
    return list(_schema(error, root))


def _schema(error: ValidationError, root: Schema) -> Iterator[Finding]:
    keyword, instance = str(error.validator), error.instance
    where = pointer(error.absolute_path)
    schema: Schema = error.schema if isinstance(error.schema, dict) else {}
    title = schema.get("title")
    custom = schema.get("errorMessage")
    if _via_property_names(error):
        expected = custom or "not an allowed name"
        yield _error(
            "propertyNames", child(where, instance), f"{expected}, got {kind(instance)}", instance
        )
    elif keyword == "oneOf":
        yield from _union(error, root)
    elif keyword == "required" and isinstance(instance, dict):
        owner = a(title) if title else "this object"
        for missing in error.validator_value:
            if missing not in instance:
                yield _error("required", where, f"{owner} needs '{missing}'", None)
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        for key in instance:
            if key not in allowed and not any(re.search(p, key) for p in patterns):
                yield _error(keyword, child(where, key), _not_allowed(key, allowed, title), None)
    elif keyword == "uniqueItems" and isinstance(instance, list):
        repeated = list(repeats(instance))
        for later, first in repeated:
            noun = title or "items"
            message = f"repeats {child(where, first)}: {noun} must be unique"
            yield _error(keyword, child(where, later), message, instance[later])
        if not repeated:
            yield _error(keyword, where, "items must be unique", None)
    else:
        expected = _expected(keyword, error.validator_value, instance, schema)
        yield _error(keyword, where, expected or one_line(error.message), instance)


def _expected(keyword: str, value: Any, instance: Any, schema: Schema) -> str | None:
    custom, title = schema.get("errorMessage"), schema.get("title")
    if isinstance(custom, str):
        return f"{custom}, got {kind(instance)}"
    if keyword == "type":
        words = types(value)
        if title and value == "array":
            words = f"an array of {title}"
        elif title:
            words = f"{a(title)} ({words})"
        return f"expected {words}, got {kind(instance)}"
    if keyword == "format" and value == "uri":
        return (
            f"expected an absolute URI (a scheme such as https:, no spaces), got {kind(instance)}"
        )
    if keyword == "pattern":
        return f"expected text that matches {value}, got {kind(instance)}"
    if keyword == "enum":
        close = closest(instance, value) if isinstance(instance, str) else None
        hint = f" (did you mean '{close}'?)" if close else ""
        return f"expected one of {', '.join(map(str, value))}, got {kind(instance)}{hint}"
    if keyword == "const":
        return f"expected {show(value)}, got {kind(instance)}"
    if keyword in ("minItems", "minProperties", "maxLength", "minLength"):
        noun = {"minItems": "item", "minProperties": "member"}.get(keyword, "character")
        bound = "at least" if keyword.startswith("min") else "at most"
        return f"expected {bound} {value} {noun}{'' if value == 1 else 's'}, got {kind(instance)}"
    return None


def _union(error: ValidationError, root: Schema) -> Iterator[Finding]:
    """A ``oneOf`` of activity kinds, told by the kind its ``type`` picks."""
    where, instance = pointer(error.absolute_path), error.instance
    title = str(error.schema.get("title", "value"))
    branches = [_resolve(b, root) for b in error.validator_value]
    if not isinstance(instance, dict):
        yield _error(
            "type", where, f"expected {a(title)} (an object), got {kind(instance)}", instance
        )
        return
    if "type" not in instance:
        yield _error("required", where, f"{a(title)} needs 'type'", None)
        return
    if not isinstance(instance["type"], str):
        message = f"expected the activity type (a string), got {kind(instance['type'])}"
        yield _error("type", child(where, "type"), message, instance["type"])
        return
    chosen = _branch_for(branches, instance["type"], root)
    if chosen is not None:
        found = [e for e in error.context if e.relative_schema_path[0] == chosen]
        for sub in found:
            yield from _schema(sub, root)
        if found:
            return
    yield _error(
        "oneOf",
        child(where, "type"),
        _unknown_type(instance["type"], branches, root, where),
        instance["type"],
    )


def _unknown_type(value: str, branches: list[Schema], root: Schema, where: str) -> str:
    fixed: list[str] = []
    other: list[str] = []
    named: list[str] = []
    for branch in branches:
        prop = _resolve(branch.get("properties", {}).get("type", {}), root)
        if "const" in prop:
            fixed.append(str(prop["const"]))
        for option in map(str, prop.get("enum", ())):
            named.append(option)
            if option not in fixed and re.search(prop.get("pattern", ""), option):
                other.append(option)
    if value in named:
        section = where.split("/")[1] if where.count("/") > 1 else "this map"
        return f"{a(value)} activity cannot be declared in {section}: it takes {', '.join(fixed)} and the other activity types"
    close = closest(value, [*fixed, *other])
    if close:
        return f"unknown activity type '{name(value)}' (did you mean '{close}'?)"
    return f"unknown activity type '{name(value)}': expected {', '.join(fixed)} or another activity type ({', '.join(other)})"


def _branch_for(branches: list[Schema], value: Any, root: Schema) -> int | None:
    """The alternative whose ``type`` property admits ``value`` (const, or enum and pattern)."""
    if not isinstance(value, str):
        return None
    for index, branch in enumerate(branches):
        prop = _resolve(branch.get("properties", {}).get("type", {}), root)
        if prop.get("const") == value:
            return index
        if value in prop.get("enum", ()) and "const" not in prop:
            if re.search(prop.get("pattern", ""), value):
                return index
    return None


def _resolve(schema: Any, root: Schema) -> Schema:
    while isinstance(schema, dict) and str(schema.get("$ref", "")).startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target[part]
        schema = target
    return schema if isinstance(schema, dict) else {}


def _not_allowed(key: str, allowed: list[str], title: str | None) -> str:
    hint = _HINTS.get((title or "", key))
    if hint:
        return hint
    close = closest(key, allowed)
    where = f"in {a(title)}" if title else "here"
    if close:
        return f"'{name(key)}' is not allowed {where} (did you mean '{close}'?)"
    listing = f" (allowed: {', '.join(allowed)})" if len(allowed) <= 6 else ""
    return f"'{name(key)}' is not allowed {where}{listing}"


def _via_property_names(error: ValidationError) -> bool:
    path = list(error.absolute_schema_path)
    return any(
        p == "propertyNames" and (i == 0 or path[i - 1] != "properties") for i, p in enumerate(path)
    )


# --- the draft-07 metaschema ---------------------------------------------------------------------


def metaschema_error(error: ValidationError, base: str, rule: Rule) -> list[Finding]:
    """The findings of one metaschema error in the schema at ``base`` (a pointer)."""
    return [
        Finding(rule.id, rule.severity, at, message, evidence(value))
        for at, message, value in _meta(error, base)
    ]


def _meta(error: ValidationError, base: str) -> Iterator[tuple[str, str, Any]]:
    path = list(error.absolute_path)
    where, instance = base + pointer(path), error.instance
    keyword = str(error.validator)
    last = path[-1] if path else None
    if _via_property_names(error):
        message = f"'{name(instance)}' is not a valid regular expression"
        yield child(where, instance), message, instance
    elif keyword == "anyOf" and last == "type":
        yield from _type_keyword(instance, where)
    elif keyword == "type":
        yield _meta_type(error, where, path)
    elif keyword == "anyOf" and error.context and all(e.validator == "type" for e in error.context):
        words = [w for e in error.context for w in as_list(e.validator_value)]
        yield (
            where,
            f"'{name(str(last))}' takes {types(list(dict.fromkeys(words)))}, got {kind(instance)}",
            instance,
        )
    else:
        yield from _meta_value(error, where, last)


def _meta_type(error: ValidationError, where: str, path: list[Any]) -> tuple[str, str, Any]:
    """A ``type`` error: a schema that is not one, or a keyword's value of the wrong type."""
    instance, value = error.instance, error.validator_value
    last = path[-1] if path else None
    schema: Schema = error.schema if isinstance(error.schema, dict) else {}
    if schema.get("$id") == _META_ID:
        hint = (
            f' (write {{"type": "{instance}"}})'
            if isinstance(instance, str) and instance in TYPE_WORDS
            else ""
        )
        return (
            where,
            f"expected a schema (an object, or true or false), got {kind(instance)}{hint}",
            instance,
        )
    if isinstance(last, int) and len(path) > 1:
        return (
            where,
            f"each item of '{name(str(path[-2]))}' is {types(value)}, got {kind(instance)}",
            instance,
        )
    return where, f"'{name(str(last))}' takes {types(value)}, got {kind(instance)}", instance


def _meta_value(error: ValidationError, where: str, last: Any) -> Iterator[tuple[str, str, Any]]:
    """An error in a keyword's value (a repeat, a bound, a format), else the validator's words."""
    keyword, value, instance = str(error.validator), error.validator_value, error.instance
    if keyword == "uniqueItems" and isinstance(instance, list):
        for later, _ in repeats(instance):
            yield (
                child(where, later),
                f"'{name(str(last))}' lists {show(instance[later])} twice",
                instance[later],
            )
    elif keyword == "minimum":
        yield where, f"'{name(str(last))}' is at least {value}, got {show(instance)}", instance
    elif keyword == "minItems":
        yield (
            where,
            f"'{name(str(last))}' needs at least {value} item{'' if value == 1 else 's'}",
            None,
        )
    elif keyword == "format" and value == "regex":
        yield where, f"{show(instance)} is not a valid regular expression", instance
    elif keyword == "format" and value == "uri":
        yield (
            where,
            f"expected an absolute URI (a scheme such as https:, no spaces), got {kind(instance)}",
            instance,
        )
    else:
        yield where, f"not a valid draft-07 schema: {one_line(error.message)}", instance


def _type_keyword(value: Any, where: str) -> Iterator[tuple[str, str, Any]]:
    def unknown(text: str) -> str:
        close = closest(text, _SIMPLE_TYPES)
        hint = f"did you mean '{close}'?" if close else f"one of {', '.join(_SIMPLE_TYPES)}"
        return f"'{name(text)}' is not a JSON Schema type ({hint})"

    if isinstance(value, str):
        yield where, unknown(value), value
    elif isinstance(value, list):
        if not value:
            yield where, "'type' lists no type", None
        seen: list[Any] = []
        for index, item in enumerate(value):
            at = child(where, index)
            if not isinstance(item, str):
                yield at, f"each item of 'type' is a type name, got {kind(item)}", item
            elif item not in TYPE_WORDS:
                yield at, unknown(item), item
            elif item in seen:
                yield at, f"'type' lists '{item}' twice", item
            seen.append(item)
    else:
        yield where, f"'type' takes a type name or an array of them, got {kind(value)}", value


def _error(rule: str, where: str, message: str, value: Any) -> Finding:
    return Finding(rule, Severity.ERROR, where, message, evidence(value))
