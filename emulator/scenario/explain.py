"""JSON Schema errors to one clear message per location.

Messages come from the schema where it gives them (``errorMessage``, the same text an editor
shows). A ``oneOf`` of tagged alternatives (each a bare name or a one-key mapping, such as a step
or a turn) is explained by the alternative its tag names, so that a misspelt step says
"unknown step 'prees' (did you mean 'press'?)" rather than why each alternative failed. A
``oneOf`` of alternatives that each only require a key (``caller`` or ``messaging``) is explained
as keys of which exactly one must be given.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeAlias, cast

import yaml
from jsonschema.exceptions import ValidationError, relevance  # type: ignore[import-untyped]

from emulator.scenario.yamldoc import DataPath, Problem, Reader, printable, short

Schema: TypeAlias = dict[str, Any]

_LEAF_ORDER = ("type", "additionalProperties", "required", "enum", "uniqueItems")


class Explainer:
    """Explains the errors of ``validator`` on data read by ``reader``; ``resolve`` follows a
    ``$ref`` of the schema."""

    def __init__(self, validator: Any, reader: Reader, resolve: Callable[[Schema], Schema]) -> None:
        self._validator = validator
        self._reader = reader
        self._resolve = resolve

    def problems(
        self, errors: Iterable[ValidationError], expected: str | None = None, at: DataPath = ()
    ) -> Iterator[Problem]:
        groups: dict[DataPath, list[ValidationError]] = {}
        for error in errors:
            groups.setdefault(tuple(error.absolute_path), []).append(error)
        for path, group in groups.items():
            fallback = expected if path == at else None
            either = [e for e in group if e.validator == "oneOf" and _exclusive(e.validator_value)]
            if either:
                required = _required_of(group)
                group = [e for e in group if e not in either and e.validator != "required"]
                yield from self._missing(path, either[0].instance, required, either)
                if not group:
                    continue
            leaves = [e for e in group if e.validator not in ("anyOf", "oneOf")]
            if any(e.validator == "type" for e in leaves):
                leaves = [e for e in leaves if e.validator == "type"]
            if not leaves:
                leaves = [max(group, key=relevance)]
            leaves.sort(key=lambda e: _rank(str(e.validator)))
            for error in leaves:
                yield from self._explain(error, fallback)

    def _missing(
        self,
        path: DataPath,
        instance: object,
        required: Sequence[str],
        either: Sequence[ValidationError],
    ) -> Iterator[Problem]:
        """Required keys, and keys of which exactly one must be given, as one message."""
        if not isinstance(instance, dict):
            return
        groups = [[str(a["required"][0]) for a in e.validator_value] for e in either]
        every = [*required, *(k for g in groups for k in g)]
        meant = {closest(str(k), every) for k in instance}
        missing = [f"'{k}'" for k in required if k not in instance and k not in meant]
        for keys in groups:
            present = [k for k in keys if k in instance]
            if not present and not meant.intersection(keys):
                others = " or ".join(f"'{k}'" for k in keys[1:])
                missing.append(f"'{keys[0]}' (or {others})")
            for key in present[1:]:
                message = f"give either '{present[0]}' or '{key}', not both"
                yield Problem((*path, key), message, at_key=True)
        if missing:
            plural = "s" if len(missing) > 1 else ""
            yield Problem(path, f"missing required key{plural} {' and '.join(missing)}")

    def _explain(self, error: ValidationError, expected: str | None) -> Iterator[Problem]:
        path: DataPath = tuple(error.absolute_path)
        schema: Schema = error.schema if isinstance(error.schema, dict) else {}
        own = schema.get("errorMessage")
        expected = own if isinstance(own, str) else expected
        keyword, instance = str(error.validator), error.instance
        if len(error.schema_path) >= 2 and error.schema_path[-2] == "propertyNames":
            message = f"{expected or 'not a valid name'}, got '{name(str(instance))}'"
            yield Problem((*path, str(instance)), message, at_key=True)
        elif keyword in ("anyOf", "oneOf"):
            yield from self._union(error, path, expected)
        elif keyword == "additionalProperties":
            if "propertyNames" in schema:  # the name's own error explains it
                return
            allowed = list(schema.get("properties", {}))
            for key in instance:
                if key not in allowed:
                    if allowed:
                        message = f"unknown key '{name(key)}'{_hint(key, allowed, listing=True)}"
                    else:
                        message = f"unexpected key '{name(key)}': {expected or 'expected no keys'}"
                    yield Problem((*path, key), message, at_key=True)
        elif keyword == "required":
            yield from self._missing(path, instance, error.validator_value, ())
        elif keyword == "uniqueItems":
            index = first_repeat(instance)
            if index is not None:
                yield Problem((*path, index), f"{_show(instance[index])} is listed twice")
        else:
            if expected is None:
                expected = _default_expected(keyword, error.validator_value)
            hint = _hint(instance, error.validator_value) if keyword == "enum" else ""
            yield Problem(path, self._got(expected, path, instance, schema) + hint)

    def _union(
        self, error: ValidationError, path: DataPath, expected: str | None
    ) -> Iterator[Problem]:
        alternatives = [self._resolve(a) for a in error.validator_value]
        tagged = _tags(alternatives)
        instance = error.instance
        if tagged is not None:
            yield from self._tagged(error, path, alternatives, tagged, expected)
            return
        matching = [i for i, a in enumerate(alternatives) if self._type_matches(instance, a)]
        if len(matching) == 1:
            yield from self._branch(error, matching[0], expected, path)
            return
        message = expected or "not a valid value"
        yield Problem(path, self._got(message, path, instance, error.schema))

    def _branch(
        self, error: ValidationError, index: int, expected: str | None = None, at: DataPath = ()
    ) -> Iterator[Problem]:
        branch = [e for e in error.context if e.relative_schema_path[0] == index]
        yield from self.problems(branch, expected, at)

    def _tagged(
        self,
        error: ValidationError,
        path: DataPath,
        alternatives: list[Schema],
        tags: dict[str, int],
        expected: str | None,
    ) -> Iterator[Problem]:
        instance = error.instance
        union = _Tagged(alternatives, tags, str(error.schema.get("title", "value")), expected)
        text = _free_text(alternatives)
        if isinstance(instance, str) and text is not None:
            yield from self._branch(error, text, expected, path)
        elif isinstance(instance, str):
            if instance in tags and instance not in union.bare:
                example = _example(alternatives[tags[instance]])
                yield Problem(path, f"'{instance}' needs an argument, e.g. {example}")
            else:
                yield Problem(path, union.unknown(instance))
        elif isinstance(instance, dict) and instance:
            yield from self._tagged_mapping(error, path, instance, union)
        else:
            message = expected or f"expected a {union.noun}"
            yield Problem(path, self._got(message, path, instance, error.schema))

    def _tagged_mapping(
        self, error: ValidationError, path: DataPath, instance: dict[Any, Any], union: _Tagged
    ) -> Iterator[Problem]:
        """A mapping that should be one tagged alternative: its tag and modifiers only."""
        noun, tags = union.noun, union.tags
        main = [k for k in instance if k not in union.modifiers]
        known = [k for k in main if k in tags]
        if not main:
            beside = short(", ".join(f"'{name(str(k))}'" for k in list(instance)[:5]))
            listed = ", ".join(union.keyed[:-1]) + f" or {union.keyed[-1]}"
            yield Problem(path, f"expected a {noun} ({listed}) beside {beside}")
        elif len(main) == 1 and known:
            yield from self._branch(error, tags[known[0]])
        elif not known:
            first = main[0]
            yield Problem((*path, first), union.unknown(str(first)), at_key=True)
        elif len(known) == 1:
            inner = self._inner_keys(union.alternatives[tags[known[0]]], known[0])
            for key in main:
                if key != known[0]:
                    message = union.beside(str(key), known[0], inner)
                    yield Problem((*path, key), message, at_key=True)
        else:
            keys = short(", ".join(name(str(k)) for k in main[:5]))
            yield Problem(path, f"a {noun} has one key, got {keys}: make each its own list item")

    def _got(self, expected: str, path: DataPath, instance: object, schema: Schema) -> str:
        """``expected ..., got ...``, and how to quote a value YAML read as something else."""
        message = f"{expected}, got {kind(instance)}"
        node = self._reader.plain.get(path)
        if node is not None and not any(self._validator.descend(node.value, schema)):
            key = path[-1] if path and isinstance(path[-1], str) else None
            text = short(str(node.value))
            quoted = f'{key}: "{text}"' if key else f'"{text}"'
            read = short(json.dumps(instance))
            if read != text:
                message += f"; YAML reads {text} as {read}"
            message += f"; quote it: {quoted}"
        return message

    def _type_matches(self, instance: object, schema: Schema) -> bool:
        schema = self._resolve(schema)
        kinds = schema.get("type")
        if kinds is not None:
            kinds = [kinds] if isinstance(kinds, str) else kinds
            return any(self._validator.is_type(instance, k) for k in kinds)
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                return any(self._type_matches(instance, a) for a in schema[keyword])
        return True

    def _inner_keys(self, alternative: Schema, tag: str) -> list[str]:
        """The keys of the mapping form of a tagged alternative's argument (press: digits, gap)."""
        argument = self._resolve(alternative.get("properties", {}).get(tag, {}))
        for form in map(self._resolve, argument.get("anyOf", [argument])):
            if form.get("type") == "object":
                return [*form.get("required", ()), *form.get("properties", {})]
        return []


class _Tagged:
    """A ``oneOf`` of tagged alternatives: their tags (``tags``: tag -> alternative), the bare
    names and the keys that name one, the modifiers allowed beside a tag, and what one is
    called (``noun``: the schema's title)."""

    def __init__(
        self, alternatives: list[Schema], tags: dict[str, int], noun: str, expected: str | None
    ) -> None:
        self.alternatives = alternatives
        self.tags = tags
        self.noun = noun
        self.expected = expected
        self.bare = [n for a in alternatives for n in a.get("enum", ())]
        self.keyed = [n for a in alternatives for n in a.get("required", ())]
        self.names = [*self.keyed, *(n for n in self.bare if n not in self.keyed)]
        self.modifiers = _modifiers(alternatives)

    def unknown(self, key: str) -> str:
        """``key`` names no alternative: the one it is most like, or what is expected."""
        close = closest(key, self.names)
        if close:
            return f"unknown {self.noun} '{name(key)}' (did you mean '{close}'?)"
        return f"unknown {self.noun} '{name(key)}'" + (
            f"; {self.expected}" if self.expected else ""
        )

    def beside(self, key: str, tag: str, inner: list[str]) -> str:
        """Why ``key`` cannot stand beside the tag ``tag`` (whose argument has ``inner`` keys)."""
        close = closest(key, self.modifiers)
        if close:
            message = f"unknown key '{name(key)}' (did you mean '{close}'?)"
        else:
            message = f"unexpected key '{name(key)}' beside '{tag}'"
            message += f": a {self.noun} has one key"
        if key in inner:
            message += f" (write {tag}: {{{inner[0]}: ..., {key}: ...}})"
        return message


def first_repeat(items: Sequence[object]) -> int | None:
    """The index of the first item equal (as JSON Schema compares) to an earlier one; linear,
    where comparing each item with the ones before it would take a hostile list hours."""
    seen: set[object] = set()
    for index, item in enumerate(items):
        key = _unique_key(item)
        if key in seen:
            return index
        seen.add(key)
    return None


def unique_items(
    validator: Any, unique: object, instance: object, schema: Schema
) -> Iterator[ValidationError]:
    """``uniqueItems`` in linear time, with a message that does not print the list."""
    if unique and isinstance(instance, list) and first_repeat(instance) is not None:
        yield ValidationError("has repeated items")


def _unique_key(value: object) -> object:
    """A hashable value equal for values JSON Schema calls equal (1 and 1.0, not 1 and true)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, list):
        return ("list", tuple(_unique_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((k, _unique_key(v)) for k, v in value.items()))
    return ("other", value)


def _exclusive(alternatives: object) -> bool:
    """A ``oneOf`` whose alternatives each only require one key: exactly one must be given."""
    return isinstance(alternatives, list) and all(
        isinstance(a, dict) and set(a) == {"required"} and len(a["required"]) == 1
        for a in alternatives
    )


def _required_of(errors: Iterable[ValidationError]) -> list[str]:
    return [str(k) for e in errors if e.validator == "required" for k in e.validator_value]


def _tags(alternatives: list[Schema]) -> dict[str, int] | None:
    """Tag -> alternative, when every alternative is a set of bare names or a one-key mapping
    (beside one free-text alternative at most)."""
    tags: dict[str, int] = {}
    for index, alternative in enumerate(alternatives):
        if alternative.get("type") == "string" and "enum" in alternative:
            for tag in alternative["enum"]:
                tags.setdefault(tag, index)
        elif alternative.get("type") == "object" and len(alternative.get("required", ())) == 1:
            tags[alternative["required"][0]] = index
        elif alternative.get("type") != "string" or index != _free_text(alternatives):
            return None
    return tags or None


def _free_text(alternatives: list[Schema]) -> int | None:
    """The one alternative that is any text (a message turn), if there is one."""
    free = [i for i, a in enumerate(alternatives) if a.get("type") == "string" and "enum" not in a]
    return free[0] if len(free) == 1 else None


def _modifiers(alternatives: list[Schema]) -> set[str]:
    """Keys that may stand beside the tag of a one-key alternative (``wait`` beside ``say``)."""
    return {
        key
        for a in alternatives
        if a.get("type") == "object"
        for key in a.get("properties", {})
        if key not in a.get("required", ())
    }


def _example(alternative: Schema) -> str:
    examples = alternative.get("examples") or [""]
    example = examples[0]
    if isinstance(example, dict):
        return ", ".join(f"{k}: {_inline(v)}" for k, v in example.items())
    return _inline(example)


def _inline(value: object) -> str:
    """A value as written in YAML flow style: ``"2"`` (quoted: it would read as a number), ``6s``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return value if yaml.safe_load(value) == value else json.dumps(value)
    return json.dumps(value)


def _rank(keyword: str) -> int:
    return _LEAF_ORDER.index(keyword) if keyword in _LEAF_ORDER else len(_LEAF_ORDER)


def _default_expected(keyword: str, value: object) -> str:
    if keyword == "type":
        kinds = [value] if isinstance(value, str) else list(cast(Iterable[str], value))
        return "expected " + " or ".join(_TYPE_WORDS.get(k, k) for k in kinds)
    if keyword == "enum":
        return "expected one of " + ", ".join(str(v) for v in cast(Iterable[object], value))
    if keyword == "minimum":
        return f"expected at least {value}"
    if keyword == "maximum":
        return f"expected at most {value}"
    if keyword == "exclusiveMinimum":
        return f"expected more than {value}"
    if keyword in ("minItems", "minProperties"):
        return f"expected at least {value} item{'s' if value != 1 else ''}"
    return f"expected a value that satisfies {keyword}: {value}"


_TYPE_WORDS = {
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "true or false",
    "null": "nothing",
}


def closest(word: str, options: Iterable[object]) -> str | None:
    """The option most like ``word``, if one is close enough to be a likely typo."""
    choices = [str(o) for o in options]
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def _hint(value: object, options: object, *, listing: bool = False) -> str:
    candidates = list(cast(Iterable[object], options)) if isinstance(options, list) else []
    close = closest(str(value), candidates) if isinstance(value, str) else None
    if close:
        return f" (did you mean '{close}'?)"
    return f" (expected: {', '.join(str(c) for c in candidates)})" if listing else ""


def _show(value: object) -> str:
    return short(repr(value) if isinstance(value, str) else json.dumps(value))


def name(text: str) -> str:
    """A key or name as it can appear in a one-line message."""
    return short(printable(text))


def kind(value: object) -> str:
    """What a value is, in words: ``a string ('6x')``, ``a number (5)``, ``an empty list``."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"a number ({_show(value)})"
    if isinstance(value, str):
        return f"a string ({_show(value)})" if value.strip() else "an empty string"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    return type(value).__name__
