"""Sample values for draft-07 JSON Schemas: what ``botemu manifest check`` sends a skill.

``sample(schema, seed=N, definitions=...)`` builds a value that validates against ``schema``, or
raises ``SampleError``; it never returns an invalid value. ``$ref``s resolve against a root made of
the schema plus ``definitions`` (a skill manifest's ``definitions``: its ``value`` schemas say
``{"$ref": "#/definitions/booking"}``). Strings come from a Faker seeded with ``seed``, so one seed
gives one value, run after run.

What is understood: ``type`` (one or a list), ``const``, ``enum``; strings with ``format`` (email,
uri, date, date-time, time, uuid, hostname, ipv4, ipv6, ...), ``minLength``/``maxLength`` and
simple ``pattern``s; numbers with ``minimum``/``maximum`` (exclusive too) and ``multipleOf``;
arrays with ``items`` (one schema or a tuple), ``additionalItems``, ``contains``,
``minItems``/``maxItems``, ``uniqueItems``; objects with ``properties``, ``required`` (every
required property and some optional ones), ``patternProperties``, ``additionalProperties``,
``minProperties``/``maxProperties``, ``dependencies``; ``$ref`` to ``#/...`` pointers; ``allOf``
(merged), ``anyOf``/``oneOf`` (the first option that works), ``if``/``then``/``else``. The rest
(``not``, ``propertyNames``, ...) is left to the final check: each candidate is validated with
``Draft7Validator`` and its format checker, and a few candidates are tried before giving up.
"""

from __future__ import annotations

import copy
import importlib
import json
import math
import re
import string
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC
from decimal import Decimal
from typing import Any, Final
from urllib.parse import unquote

from faker import Faker
from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError, best_match  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from emulator.errors import BotemuError
from emulator.jsonutil import JSON, JSONObject, child
from emulator.patterns import compile_pattern, quiet_patterns

ATTEMPTS: Final = 12
"""Candidates tried before ``SampleError``; the later half leave out optional properties."""
MAX_DEPTH: Final = 24
"""Nesting (and ``$ref`` hops) beyond which a schema is taken to recurse without end."""
SPAN: Final = 1000
"""How far from one bound a number is picked when the schema gives no other bound."""
_TYPES: Final = ("object", "array", "string", "integer", "number", "boolean", "null")


class SampleError(BotemuError):
    """No valid value could be made. ``where`` is a pointer into the schema (``#/properties/a``)
    or a path in the last candidate (``$.a``); ``message`` says why."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


def bind(schema: JSON, definitions: Mapping[str, JSON] | None = None) -> JSON:
    """``schema`` as a root document that also holds ``definitions`` (its own win), so that
    ``#/definitions/...`` resolves as it does inside the manifest."""
    if not definitions or not isinstance(schema, dict):
        return schema
    own = schema.get("definitions")
    merged: JSONObject = dict(definitions)
    if isinstance(own, dict):
        merged.update(own)
    return {**schema, "definitions": merged}


def validator_for(schema: JSON, definitions: Mapping[str, JSON] | None = None) -> Draft7Validator:
    """A draft-07 validator (formats checked) of ``schema`` bound to ``definitions``;
    ``SchemaError`` when it is not a draft-07 schema."""
    root = bind(schema, definitions)
    with quiet_patterns():
        Draft7Validator.check_schema(root)
    return Draft7Validator(root, format_checker=Draft7Validator.FORMAT_CHECKER)


def sample(schema: JSON, *, seed: int, definitions: Mapping[str, JSON] | None = None) -> JSON:
    """A value valid against ``schema`` (draft-07), the same for the same ``seed``."""
    try:
        validator = validator_for(schema, definitions)
    except SchemaError as e:
        where = "#" + "".join(f"/{p}" for p in e.absolute_path)
        raise SampleError(where, f"not a draft-07 schema: {e.message}") from None
    fake = Faker()
    fake.seed_instance(seed)
    try:
        with quiet_patterns():  # the user's patterns are parsed to build strings
            return _attempts(validator, fake)
    except Unresolvable as e:
        raise SampleError("#", f"a $ref does not resolve: {e}") from None


def _attempts(validator: Any, fake: Faker) -> JSON:
    problem = SampleError("#", "no candidate was made")
    for attempt in range(ATTEMPTS):
        builder = _Builder(validator, fake, minimal=attempt >= ATTEMPTS // 2)
        try:
            value = builder.value(validator.schema, "#", 0)
        except _Unsatisfiable as e:
            problem = SampleError(e.where, e.message)
            continue
        with quiet_patterns():
            error = best_match(validator.iter_errors(value))
        if error is None:
            return value
        path = "$"
        for key in error.absolute_path:
            path = child(path, key)
        problem = SampleError(
            path, f"no valid value made; the last candidate failed: {error.message}"
        )
    raise problem


class _Unsatisfiable(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


Schema = Mapping[str, Any]


class _Builder:
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
            raise _Unsatisfiable(where, f"nested more than {MAX_DEPTH} deep (a $ref cycle?)")
        if schema is True:
            return self.fake.word()
        if schema is False:
            raise _Unsatisfiable(where, "the schema is false: no value is valid")
        if not isinstance(schema, dict):
            raise _Unsatisfiable(where, "a schema is an object or a boolean")
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
        errors: list[_Unsatisfiable] = []
        for kind in self.types(schema, where):
            try:
                candidate = self.typed(kind, schema, where, depth)
            except _Unsatisfiable as e:
                errors.append(e)
                continue
            if self.valid(candidate, schema):
                return candidate
            errors.append(_Unsatisfiable(where, f"no valid {kind} made"))
        raise errors[0] if errors else _Unsatisfiable(where, "no type can be made")

    # --- references and combinators ---------------------------------------------------------

    def resolve(self, ref: object, where: str) -> tuple[JSON, str]:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise _Unsatisfiable(where, f"only local $refs (#/...) are followed, not {ref!r}")
        node: JSON = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise _Unsatisfiable(where, f"$ref {ref!r} points at nothing")
        return node, ref

    def flat(self, schema: JSON, where: str) -> JSON:
        """``schema`` with a top-level ``$ref`` chain followed."""
        for _ in range(MAX_DEPTH):
            if not (isinstance(schema, dict) and "$ref" in schema):
                return schema
            schema, where = self.resolve(schema["$ref"], where)
        raise _Unsatisfiable(where, "a $ref cycle")

    def combined(self, schema: Schema, key: str, where: str, depth: int) -> JSON:
        rest = {k: v for k, v in schema.items() if k != key}
        parts = [self.flat(s, f"{where}/{key}/{i}") for i, s in enumerate(schema[key])]
        if key == "allOf":
            merged: JSON = rest
            for part in parts:
                merged = merge(merged, part)
            return self.value(merged, f"{where}/allOf", depth + 1)
        failures: list[_Unsatisfiable] = []
        for i, option in enumerate(parts):
            try:
                candidate = self.value(merge(rest, option), f"{where}/{key}/{i}", depth + 1)
            except _Unsatisfiable as e:
                failures.append(e)
                continue
            if self.valid(candidate, schema):
                return candidate
        if failures:
            raise failures[0]
        raise _Unsatisfiable(where, f"no option of {key} gives a valid value")

    def conditional(self, schema: Schema, where: str, depth: int) -> JSON:
        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        branches = [merge(merge(rest, self.flat(schema["if"], where)),
                          self.flat(schema.get("then", True), where)),
                    merge(rest, self.flat(schema.get("else", True), where))]  # fmt: skip
        for branch in branches:
            try:
                candidate = self.value(branch, f"{where}/if", depth + 1)
            except _Unsatisfiable:
                continue
            if self.valid(candidate, schema):
                return candidate
        raise _Unsatisfiable(where, "neither branch of if/then/else gives a valid value")

    def choose(self, options: object, schema: Schema, where: str) -> JSON:
        if not isinstance(options, list) or not options:
            raise _Unsatisfiable(f"{where}/enum", "enum lists no value")
        rest = {k: v for k, v in schema.items() if k != "enum"}
        shuffled = list(options)
        self.random.shuffle(shuffled)
        for option in shuffled:
            if self.valid(option, rest):
                return copy.deepcopy(option)  # type: ignore[no-any-return]
        raise _Unsatisfiable(f"{where}/enum", "no value of enum is valid against the schema")

    # --- types -----------------------------------------------------------------------------------

    def types(self, schema: Schema, where: str) -> list[str]:
        given = schema.get("type")
        if isinstance(given, str):
            kinds = [given]
        elif isinstance(given, list):
            kinds = [k for k in given if isinstance(k, str)]
            kinds.sort(key=lambda k: k == "null")  # null only when nothing else will do
        else:
            kinds = [_infer(schema)]
        unknown = [k for k in kinds if k not in _TYPES]
        if unknown:
            raise _Unsatisfiable(f"{where}/type", f"unknown type {unknown[0]!r}")
        return kinds

    def typed(self, kind: str, schema: Schema, where: str, depth: int) -> JSON:
        if kind == "object":
            return self.object(schema, where, depth)
        if kind == "array":
            return self.array(schema, where, depth)
        if kind == "string":
            return self.string(schema, where)
        if kind in ("integer", "number"):
            return self.number(schema, where, integer=kind == "integer")
        if kind == "boolean":
            return bool(self.random.random() < 0.5)
        return None

    def string(self, schema: Schema, where: str) -> str:
        low = _count(schema.get("minLength")) or 0
        high = _count(schema.get("maxLength"))
        for text in self.strings(schema, low, high):
            if self.valid(text, schema):
                return text
        raise _Unsatisfiable(where, "no string meets its format, pattern and length")

    def strings(self, schema: Schema, low: int, high: int | None) -> Iterator[str]:
        pattern, fmt = schema.get("pattern"), schema.get("format")
        if isinstance(pattern, str):
            for _ in range(ATTEMPTS):
                text = regex_sample(pattern, self.random)
                if text is None:
                    break
                yield text
        if isinstance(fmt, str) and fmt in FORMATS:
            yield FORMATS[fmt](self.fake)
        words = self.fake.word()
        while len(words) < low:
            words += " " + self.fake.word()
        yield _fit(words, low, high)
        yield _fit("sample", low, high)
        yield _fit("", low, high, pad="0")

    def number(self, schema: Schema, where: str, *, integer: bool) -> int | float:
        low, high = _bounds(schema)
        step = schema.get("multipleOf")
        if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
            candidates = self.multiples(Decimal(str(step)), low, high)
        else:
            candidates = self.within(low, high, integer=integer)
        for value in candidates:
            if (not integer or float(value).is_integer()) and self.valid(value, schema):
                return int(value) if integer else value
        raise _Unsatisfiable(where, "no number meets its bounds and multipleOf")

    def within(self, low: float | None, high: float | None, *, integer: bool) -> list[int | float]:
        lo = low if low is not None else (high - SPAN if high is not None else 0)
        hi = high if high is not None else lo + SPAN
        if lo > hi:
            return []
        out: list[int | float] = []
        ilo, ihi = math.ceil(lo), math.floor(hi)
        if ilo <= ihi:
            out.append(self.random.randint(ilo, ihi))
        if not integer:
            out.insert(0, round(self.random.uniform(lo, hi), 2))
            out += [lo + (hi - lo) / 2, lo, hi]
        out += [ilo, ihi]
        return out

    def multiples(self, step: Decimal, low: float | None, high: float | None) -> list[int | float]:
        lo = math.ceil(Decimal(str(low)) / step) if low is not None else None
        hi = math.floor(Decimal(str(high)) / step) if high is not None else None
        if lo is None:
            lo = hi - 20 if hi is not None else 0
        if hi is None:
            hi = lo + 20
        if lo > hi:
            return []
        picks = [self.random.randint(lo, hi), lo, hi, *range(lo, min(hi, lo + 20) + 1)]
        out: list[int | float] = []
        for k in picks:
            exact = step * k
            out.append(int(exact) if exact == exact.to_integral_value() else float(exact))
        return out

    def array(self, schema: Schema, where: str, depth: int) -> list[JSON]:
        low = _count(schema.get("minItems")) or 0
        high = _count(schema.get("maxItems"))
        items = schema.get("items", True)
        extra = schema.get("additionalItems", True)
        if isinstance(items, list) and extra is False:
            high = len(items) if high is None else min(high, len(items))

        def item_schemas(i: int) -> JSON:
            if isinstance(items, list):
                return items[i] if i < len(items) else extra  # type: ignore[no-any-return]
            return items  # type: ignore[no-any-return]

        top = low + 2 if high is None else min(high, low + 2)
        if low > top:
            raise _Unsatisfiable(where, "minItems is above maxItems")
        count = low if self.minimal else self.random.randint(min(max(low, 1), top), top)
        out: list[JSON] = []
        seen: set[str] = set()
        unique = schema.get("uniqueItems") is True
        for i in range(count):
            at = f"{where}/items"
            for _ in range(ATTEMPTS if unique else 1):
                item = self.value(item_schemas(i), at, depth + 1)
                key = json.dumps(item, sort_keys=True)
                if not unique or key not in seen:
                    break
            else:
                if i < low:
                    raise _Unsatisfiable(at, f"cannot make {low} unique items")
                break
            seen.add(key)
            out.append(item)
        contains = schema.get("contains")
        if contains is not None and not any(self.valid(x, contains) for x in out):
            wanted = merge(self.flat(item_schemas(len(out)), where), self.flat(contains, where))
            item = self.value(wanted, f"{where}/contains", depth + 1)
            if out and high is not None and len(out) >= high:
                out[-1] = item
            else:
                out.append(item)
        return out

    def object(self, schema: Schema, where: str, depth: int) -> JSONObject:
        properties = schema.get("properties") or {}
        patterns = schema.get("patternProperties") or {}
        extra = schema.get("additionalProperties", True)
        dependencies = schema.get("dependencies") or {}
        required = [n for n in schema.get("required") or [] if isinstance(n, str)]
        most = _count(schema.get("maxProperties"))
        names = list(dict.fromkeys(required))
        for name in properties:
            if name not in names and not self.minimal and self.random.random() < 0.5:
                names.append(name)
        for name in list(names):  # a property that is there brings the ones it depends on
            wanted = dependencies.get(name)
            if isinstance(wanted, list):
                names += [n for n in wanted if isinstance(n, str) and n not in names]
        optional = [n for n in names if n not in required]
        while most is not None and len(names) > most and optional:
            names.remove(optional.pop())
        out: JSONObject = {}
        for name in names:
            out[name] = self.value(self.member(name, properties, patterns, extra, where),
                                   f"{where}/properties/{name}", depth + 1)  # fmt: skip
        least = _count(schema.get("minProperties")) or 0
        for _ in range(ATTEMPTS):
            if len(out) >= least:
                break
            name, sub = self.extra_member(properties, patterns, extra, out, where)
            out[name] = self.value(sub, f"{where}/additionalProperties", depth + 1)
        return out

    def member(
        self, name: str, properties: Schema, patterns: Schema, extra: JSON, where: str
    ) -> JSON:
        matching = [s for p, s in patterns.items() if _search(p, name)]
        if name in properties:
            matching.insert(0, properties[name])
        if not matching:
            if extra is False:
                raise _Unsatisfiable(where, f"{name!r} is required but no property allows it")
            return extra
        merged: JSON = True
        for sub in matching:
            merged = merge(merged, self.flat(sub, where))
        return merged

    def extra_member(
        self, properties: Schema, patterns: Schema, extra: JSON, out: JSONObject, where: str
    ) -> tuple[str, JSON]:
        for name in properties:
            if name not in out:
                return name, self.member(name, properties, patterns, extra, where)
        for pattern in patterns:
            made = regex_sample(pattern, self.random)
            if made is not None and made not in out:
                return made, self.member(made, properties, patterns, extra, where)
        if extra is not False:
            for _ in range(ATTEMPTS):
                name = self.fake.word()
                if name not in out and not any(_search(p, name) for p in patterns):
                    return name, extra
        raise _Unsatisfiable(where, "minProperties needs more properties than are allowed")


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


def _infer(schema: Schema) -> str:
    keys = set(schema)
    if keys & {"properties", "required", "additionalProperties", "patternProperties",
               "minProperties", "maxProperties", "dependencies", "propertyNames"}:  # fmt: skip
        return "object"
    if keys & {"items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}:
        return "array"
    if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
        return "number"
    return "string"


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bounds(schema: Schema) -> tuple[float | None, float | None]:
    """The inclusive-ish bounds: exclusive ones are nudged inside (validation has the last word)."""
    low, high = _number(schema.get("minimum")), _number(schema.get("maximum"))
    xlow, xhigh = _number(schema.get("exclusiveMinimum")), _number(schema.get("exclusiveMaximum"))
    if xlow is not None:
        nudged = math.floor(xlow) + 1 if xlow.is_integer() else xlow + 0.01
        low = nudged if low is None else max(low, nudged)
    if xhigh is not None:
        nudged = math.ceil(xhigh) - 1 if xhigh.is_integer() else xhigh - 0.01
        high = nudged if high is None else min(high, nudged)
    return low, high


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _fit(text: str, low: int, high: int | None, pad: str = "x") -> str:
    if high is not None:
        text = text[:high]
    return text + pad * (low - len(text))


def _search(pattern: str, text: str) -> bool:
    try:
        return compile_pattern(pattern).search(text) is not None
    except (re.error, RecursionError, OverflowError):
        return False


# --- formats -------------------------------------------------------------------------------------

FORMATS: Final[dict[str, Callable[[Faker], str]]] = {
    "email": lambda f: str(f.email()),
    "idn-email": lambda f: str(f.email()),
    "uri": lambda f: str(f.url()),
    "iri": lambda f: str(f.url()),
    "uri-reference": lambda f: str(f.uri_path()),
    "iri-reference": lambda f: str(f.uri_path()),
    "uri-template": lambda f: str(f.url()) + "{id}",
    "date": lambda f: str(f.date()),
    "date-time": lambda f: f.date_time(tzinfo=UTC).replace(microsecond=0).isoformat(),
    "time": lambda f: f"{f.time()}Z",
    "uuid": lambda f: str(f.uuid4()),
    "hostname": lambda f: str(f.domain_name()),
    "idn-hostname": lambda f: str(f.domain_name()),
    "ipv4": lambda f: str(f.ipv4()),
    "ipv6": lambda f: str(f.ipv6()),
    "regex": lambda f: "^[a-z]+$",
    "json-pointer": lambda f: f"/{f.word()}/0",
    "relative-json-pointer": lambda f: "0/" + str(f.word()),
}


# --- regular expressions ------------------------------------------------------------------------

_ANCHORS = ("AT_BEGINNING", "AT_END", "AT_BEGINNING_STRING", "AT_END_STRING")
_WORD = string.ascii_letters + string.digits + "_"
_PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "
_CATEGORIES: Final[dict[str, str]] = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters + "_- ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": _WORD,
    "CATEGORY_WORD": _WORD,
    "CATEGORY_NOT_WORD": " -.,",
}


def regex_sample(pattern: str, rng: Any, repeat: int = 3) -> str | None:
    """A string that the regular expression ``pattern`` matches in full, for simple patterns
    (literals, classes, groups, alternation, repetition, anchors); None when it uses anything
    else (lookaround, backreferences) or is not a Python regular expression. Built on the
    standard library's regular expression parser."""
    try:
        parser = importlib.import_module("re._parser")
        parsed = parser.parse(pattern)
        return _emit(parsed, rng, repeat, {})
    except Exception:  # an unreadable pattern, or a construct not generated: not sampled
        return None


def _emit(items: Any, rng: Any, repeat: int, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([c for c in _PRINTABLE if c != chr(arg)]))
        elif name == "ANY":
            out.append(rng.choice(string.ascii_letters))
        elif name == "IN":
            out.append(_in_class(arg, rng))
        elif name == "BRANCH":
            out.append(_emit(rng.choice(arg[1]), rng, repeat, groups))
        elif name == "SUBPATTERN":
            text = _emit(arg[-1], rng, repeat, groups)
            if arg[0]:
                groups[arg[0]] = text
            out.append(text)
        elif name == "ATOMIC_GROUP":
            out.append(_emit(arg, rng, repeat, groups))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            count = rng.randint(low, max(low, min(high, low + repeat)))
            out.extend(_emit(sub, rng, repeat, groups) for _ in range(count))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name == "AT" and getattr(arg, "name", "") in _ANCHORS:
            continue
        else:
            raise ValueError(f"not generated: {name}")
    return "".join(out)


def _in_class(items: Any, rng: Any) -> str:
    negate = bool(items) and getattr(items[0][0], "name", "") == "NEGATE"
    if negate:
        pool = [c for c in _PRINTABLE if not _member(c, items[1:])]
        if not pool:
            raise ValueError("an empty negated class")
        return str(rng.choice(pool))
    op, arg = rng.choice(list(items))
    name = getattr(op, "name", str(op))
    if name == "LITERAL":
        return chr(arg)
    if name == "RANGE":
        return chr(rng.randint(arg[0], arg[1]))
    if name == "CATEGORY":
        return str(rng.choice(_CATEGORIES[getattr(arg, "name", "")]))
    raise ValueError(f"not generated in a class: {name}")


def _member(char: str, items: Any) -> bool:
    for op, arg in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL" and char == chr(arg):
            return True
        if name == "RANGE" and arg[0] <= ord(char) <= arg[1]:
            return True
        if name == "CATEGORY":
            kind = getattr(arg, "name", "")
            matches = {
                "CATEGORY_DIGIT": char.isdigit(),
                "CATEGORY_NOT_DIGIT": not char.isdigit(),
                "CATEGORY_SPACE": char.isspace(),
                "CATEGORY_NOT_SPACE": not char.isspace(),
                "CATEGORY_WORD": char.isalnum() or char == "_",
                "CATEGORY_NOT_WORD": not (char.isalnum() or char == "_"),
            }
            if matches.get(kind, True):
                return True
    return False
