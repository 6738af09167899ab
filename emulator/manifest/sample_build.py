"""The values of each JSON type for ``samples``: strings (formats, patterns, lengths), numbers
(bounds, ``multipleOf``), arrays (``items``, ``contains``, ``uniqueItems``) and objects (required
and some optional properties, ``patternProperties``, ``dependencies``), on ``SchemaWalker``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Final

from emulator.jsonutil import JSON, JSONObject
from emulator.manifest.sample_text import FORMATS, regex_sample
from emulator.manifest.sample_walk import (
    ATTEMPTS,
    Schema,
    SchemaWalker,
    Unsatisfiable,
    merge,
)
from emulator.patterns import compile_pattern

SPAN: Final = 1000
"""How far from one bound a number is picked when the schema gives no other bound."""


class ValueBuilder(SchemaWalker):
    """A ``SchemaWalker`` that makes the value of each type."""

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
        raise Unsatisfiable(where, "no string meets its format, pattern and length")

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
        raise Unsatisfiable(where, "no number meets its bounds and multipleOf")

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
            raise Unsatisfiable(where, "minItems is above maxItems")
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
                    raise Unsatisfiable(at, f"cannot make {low} unique items")
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
                raise Unsatisfiable(where, f"{name!r} is required but no property allows it")
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
        raise Unsatisfiable(where, "minProperties needs more properties than are allowed")


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
