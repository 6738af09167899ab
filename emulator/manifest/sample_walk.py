"""Walking a draft-07 schema for ``samples``: ``$ref``, ``const``, ``enum``, ``allOf`` (merged,
``merge``), ``anyOf``/``oneOf`` (the first option that works), ``if``/``then``/``else`` and
``type``. ``SchemaWalker`` decides which schema a value must meet; the value of each type comes
from ``typed``, which ``sample_build.ValueBuilder`` gives.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote

from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.jsonutil import JSON, JSONObject
from emulator.patterns import quiet_patterns

if TYPE_CHECKING:
    from faker import Faker

ATTEMPTS: Final = 12
"""Candidates tried before ``SampleError``; the later half leave out optional properties."""
MAX_DEPTH: Final = 24
"""Nesting (and ``$ref`` hops) beyond which a schema is taken to recurse without end."""
_TYPES: Final = ("object", "array", "string", "integer", "number", "boolean", "null")


class Unsatisfiable(Exception):
    """No value of this (part of the) schema could be made: ``where`` a pointer into the schema."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


Schema = Mapping[str, Any]


class SchemaWalker:
    """One attempt at a value: walks the schema, picking with the seeded Faker's random."""

    def __init__(self, validator: Draft7Validator, fake: Faker, *, minimal: bool) -> None:
        self.root: JSON = validator.schema
        self.validator = validator
        self.fake = fake
        self.random = fake.random
        self.minimal = minimal

    def valid(self, value: JSON, schema: object) -> bool:
        with quiet_patterns():
            return bool(self.validator.evolve(schema=schema).is_valid(value))

    def value(self, schema: JSON, where: str, depth: int) -> JSON:
        if depth > MAX_DEPTH:
            raise Unsatisfiable(where, f"nested more than {MAX_DEPTH} deep (a $ref cycle?)")
        if schema is True:
            return self.fake.word()
        if schema is False:
            raise Unsatisfiable(where, "the schema is false: no value is valid")
        if not isinstance(schema, dict):
            raise Unsatisfiable(where, "a schema is an object or a boolean")
        if "$ref" in schema:  # draft-07: the keywords beside $ref are ignored
            target, at = self.resolve(schema["$ref"], where)
            return self.value(target, at, depth + 1)
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        if "enum" in schema:
            return self.choose(schema["enum"], schema, where)
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                return self.combined(schema, key, where, depth)
        if "if" in schema:
            return self.conditional(schema, where, depth)
        errors: list[Unsatisfiable] = []
        for kind in self.types(schema, where):
            try:
                candidate = self.typed(kind, schema, where, depth)
            except Unsatisfiable as e:
                errors.append(e)
                continue
            if self.valid(candidate, schema):
                return candidate
            errors.append(Unsatisfiable(where, f"no valid {kind} made"))
        raise errors[0] if errors else Unsatisfiable(where, "no type can be made")

    # --- references and combinators ---------------------------------------------------------

    def resolve(self, ref: object, where: str) -> tuple[JSON, str]:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unsatisfiable(where, f"only local $refs (#/...) are followed, not {ref!r}")
        node: JSON = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise Unsatisfiable(where, f"$ref {ref!r} points at nothing")
        return node, ref

    def flat(self, schema: JSON, where: str) -> JSON:
        """``schema`` with a top-level ``$ref`` chain followed."""
        for _ in range(MAX_DEPTH):
            if not (isinstance(schema, dict) and "$ref" in schema):
                return schema
            schema, where = self.resolve(schema["$ref"], where)
        raise Unsatisfiable(where, "a $ref cycle")

    def combined(self, schema: Schema, key: str, where: str, depth: int) -> JSON:
        rest = {k: v for k, v in schema.items() if k != key}
        parts = [self.flat(s, f"{where}/{key}/{i}") for i, s in enumerate(schema[key])]
        if key == "allOf":
            merged: JSON = rest
            for part in parts:
                merged = merge(merged, part)
            return self.value(merged, f"{where}/allOf", depth + 1)
        failures: list[Unsatisfiable] = []
        for i, option in enumerate(parts):
            try:
                candidate = self.value(merge(rest, option), f"{where}/{key}/{i}", depth + 1)
            except Unsatisfiable as e:
                failures.append(e)
                continue
            if self.valid(candidate, schema):
                return candidate
        if failures:
            raise failures[0]
        raise Unsatisfiable(where, f"no option of {key} gives a valid value")

    def conditional(self, schema: Schema, where: str, depth: int) -> JSON:
        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        branches = [merge(merge(rest, self.flat(schema["if"], where)),
                          self.flat(schema.get("then", True), where)),
                    merge(rest, self.flat(schema.get("else", True), where))]  # fmt: skip
        for branch in branches:
            try:
                candidate = self.value(branch, f"{where}/if", depth + 1)
            except Unsatisfiable:
                continue
            if self.valid(candidate, schema):
                return candidate
        raise Unsatisfiable(where, "neither branch of if/then/else gives a valid value")

    def choose(self, options: object, schema: Schema, where: str) -> JSON:
        if not isinstance(options, list) or not options:
            raise Unsatisfiable(f"{where}/enum", "enum lists no value")
        rest = {k: v for k, v in schema.items() if k != "enum"}
        shuffled = list(options)
        self.random.shuffle(shuffled)
        for option in shuffled:
            if self.valid(option, rest):
                return copy.deepcopy(option)  # type: ignore[no-any-return]
        raise Unsatisfiable(f"{where}/enum", "no value of enum is valid against the schema")

    # --- types -----------------------------------------------------------------------------------

    def types(self, schema: Schema, where: str) -> list[str]:
        given = schema.get("type")
        if isinstance(given, str):
            kinds = [given]
        elif isinstance(given, list):
            kinds = [k for k in given if isinstance(k, str)]
            kinds.sort(key=lambda k: k == "null")  # null only when nothing else will do
        else:
            kinds = [infer(schema)]
        unknown = [k for k in kinds if k not in _TYPES]
        if unknown:
            raise Unsatisfiable(f"{where}/type", f"unknown type {unknown[0]!r}")
        return kinds

    def typed(self, kind: str, schema: Schema, where: str, depth: int) -> JSON:
        """A value of the JSON type ``kind`` for ``schema`` (``sample_build.ValueBuilder``)."""
        raise NotImplementedError


# --- merging (allOf) ------------------------------------------------------------------------------

_AT_LEAST = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_AT_MOST = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


def merge(a: JSON, b: JSON) -> JSON:
    """One schema for "``a`` and ``b``" (best effort: a candidate is validated anyway)."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False or not isinstance(a, dict) or not isinstance(b, dict):
        return False
    if "$ref" in a or "$ref" in b:  # not resolved here: keep both, as allOf
        return {"allOf": [a, b]}
    out: JSONObject = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
            continue
        mine = out[key]
        if key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
            both = dict(mine)
            for name, sub in value.items():
                both[name] = merge(both[name], sub) if name in both else sub
            out[key] = both
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key == "type":
            out[key] = _common_types(mine, value)
        elif key in _AT_LEAST and _numbers(mine, value):
            out[key] = max(mine, value)  # type: ignore[type-var]
        elif key in _AT_MOST and _numbers(mine, value):
            out[key] = min(mine, value)  # type: ignore[type-var]
        elif key == "enum" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [v for v in mine if v in value]
        elif key in ("items", "additionalProperties", "additionalItems", "contains"):
            out[key] = merge(mine, value)
        elif key == "allOf" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [*mine, *value]
        elif key in ("anyOf", "oneOf"):
            both_of: list[JSON] = [{key: mine}, {key: value}]
            earlier = out.get("allOf")
            out["allOf"] = [*(earlier if isinstance(earlier, list) else []), *both_of]
            del out[key]
        else:
            out[key] = value
    return out


def _common_types(a: JSON, b: JSON) -> JSON:
    left = [a] if isinstance(a, str) else a if isinstance(a, list) else []
    right = [b] if isinstance(b, str) else b if isinstance(b, list) else []
    common: list[JSON] = [t for t in left if t in right]
    if "integer" in left and "number" in right and "integer" not in common:
        common.append("integer")
    if "number" in left and "integer" in right and "integer" not in common:
        common.append("integer")
    return common


def _numbers(*values: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def infer(schema: Schema) -> str:
    keys = set(schema)
    if keys & {"properties", "required", "additionalProperties", "patternProperties",
               "minProperties", "maxProperties", "dependencies", "propertyNames"}:  # fmt: skip
        return "object"
    if keys & {"items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}:
        return "array"
    if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
        return "number"
    return "string"
