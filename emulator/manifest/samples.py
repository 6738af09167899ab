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

The parts: ``sample_walk`` (walking the schema), ``sample_build`` (the values of each type) and
``sample_text`` (formats and regular expressions); every name this module had is importable from
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError, best_match  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from emulator.errors import BotemuError
from emulator.jsonutil import JSON, JSONObject, child
from emulator.manifest.sample_build import SPAN, ValueBuilder
from emulator.manifest.sample_text import FORMATS, regex_sample
from emulator.manifest.sample_walk import ATTEMPTS, MAX_DEPTH, Schema, Unsatisfiable, merge
from emulator.patterns import quiet_patterns

if TYPE_CHECKING:
    from faker import Faker

__all__ = [
    "ATTEMPTS",
    "FORMATS",
    "MAX_DEPTH",
    "SPAN",
    "SampleError",
    "Schema",
    "bind",
    "merge",
    "regex_sample",
    "sample",
    "validator_for",
]


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
    from faker import Faker  # imported when first used: 100 ms a process that never does

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
        builder = ValueBuilder(validator, fake, minimal=attempt >= ATTEMPTS // 2)
        try:
            value = builder.value(validator.schema, "#", 0)
        except Unsatisfiable as e:
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
