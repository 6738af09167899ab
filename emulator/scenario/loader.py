"""Scenario files: YAML text to a typed ``Scenario``, with ``file:line:col`` errors.

The format is the JSON Schema in ``schema.json`` (draft-07), shipped in the package so that editors
can autocomplete a file that starts with ``# yaml-language-server: $schema=...``. Reading goes in
stages, each stopping at its errors:

1. bytes to text: UTF-8 (a BOM is allowed), at most ``MAX_BYTES``;
2. text to a node tree with ``yaml.compose``: every node keeps its line and column;
3. node tree to plain JSON-shaped data (``_Reader``), remembering where each key and value is.
   YAML surprises are caught here: duplicate keys, ``press: 0123`` read as the number 83,
   unsupported tags, aliases that expand without end;
4. data against the schema (``_Explainer``): the best error per location, in words a scenario
   author understands, then the ``caller:`` list to steps with ``CallerScript.from_data``.

Errors (under ``emulator.errors.BotemuError``)::

    ScenarioError              a scenario is not valid: file, line, column, message; .errors has all
    └── ScenarioFileError      the file could not be read at all (missing, not UTF-8, too large)
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias, cast

import yaml
from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError, relevance  # type: ignore[import-untyped]

from emulator.calling.caller import CallerScript
from emulator.errors import BotemuError, CallerScriptError
from emulator.jsonutil import JSON

_SCHEMA_RESOURCE = resources.files("emulator.scenario").joinpath("schema.json")
SCHEMA_PATH = Path(str(_SCHEMA_RESOURCE))
"""The scenario JSON Schema inside the installed package."""

MAX_BYTES = 1024 * 1024
MAX_VALUES = 100_000
MAX_DEPTH = 64

Position: TypeAlias = tuple[int, int]
DataPath: TypeAlias = tuple[str | int, ...]
Schema: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario file, read and checked."""

    name: str
    description: str | None
    tags: tuple[str, ...]
    caller: CallerScript
    path: Path | None = None


class ScenarioError(BotemuError):
    """A scenario is not valid. ``str(e)`` is ``file:line:col: message``; ``errors`` lists every
    problem found (this one first), in file order."""

    def __init__(
        self,
        file: str,
        line: int | None,
        column: int | None,
        message: str,
        *,
        more: Sequence[ScenarioError] = (),
    ) -> None:
        at = file if line is None else f"{file}:{line}" + ("" if column is None else f":{column}")
        message = _printable(message)  # one line, whatever the file held
        super().__init__(f"{at}: {message}")
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.more = tuple(more)

    @property
    def errors(self) -> tuple[ScenarioError, ...]:
        return (self, *self.more)


class ScenarioFileError(ScenarioError):
    """The file could not be read at all: missing, a directory, unreadable, not UTF-8, too large."""


def schema() -> dict[str, JSON]:
    """The scenario JSON Schema (a fresh copy)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(_SCHEMA_RESOURCE.read_text(encoding="utf-8")))


@functools.cache
def _validator() -> Any:
    return Draft7Validator(_schema())


def load_scenario(path: Path | str) -> Scenario:
    """Read and check a scenario file; raises ``ScenarioError`` (``ScenarioFileError`` when the
    file cannot be read)."""
    path = Path(path)
    label = str(path)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError as e:
        raise ScenarioFileError(label, None, None, "no such file") from e
    except IsADirectoryError as e:
        raise ScenarioFileError(label, None, None, "is a directory, not a file") from e
    except OSError as e:
        raise ScenarioFileError(label, None, None, f"cannot read: {e.strerror or e}") from e
    if len(data) > MAX_BYTES:
        raise ScenarioFileError(label, None, None, f"larger than {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        column = len(data[start : e.start].decode("utf-8", "replace")) + 1
        line = data.count(b"\n", 0, e.start) + 1
        message = f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise ScenarioFileError(label, line, column, message) from e
    return _load(text, label, path)


def load_scenario_text(text: str, name: str = "<string>") -> Scenario:
    """Read and check scenario text; ``name`` labels the errors."""
    return _load(text, name, None)


def _load(text: str, label: str, path: Path | None) -> Scenario:
    root = _compose(text.removeprefix("\ufeff"), label)
    if root is None:
        message = "empty file: expected a scenario with the keys name and caller"
        raise ScenarioError(label, 1, 1, message)
    reader = _Reader()
    try:
        data = reader.data(root, (), 0)
    except _Fatal as e:
        raise ScenarioError(label, e.position[0], e.position[1], e.message) from None
    problems = list(reader.problems)
    taken = {p.location for p in problems}
    explainer = _Explainer(_validator(), reader)
    problems += [
        p for p in explainer.problems(_validator().iter_errors(data)) if p.location not in taken
    ]
    if problems:
        raise _error(label, problems, reader)
    document = cast(dict[str, Any], data)
    try:
        caller = CallerScript.from_data(document["caller"], "caller")
    except CallerScriptError as e:
        line, column = reader.position(_data_path(e.where), at_key=False)
        raise ScenarioError(label, line, column, e.message) from e
    return Scenario(
        name=document["name"],
        description=document.get("description"),
        tags=tuple(document.get("tags", ())),
        caller=caller,
        path=path,
    )


def _error(label: str, problems: list[_Problem], reader: _Reader) -> ScenarioError:
    seen: dict[tuple[DataPath, bool], tuple[Position, str]] = {}
    for p in problems:
        seen.setdefault(p.location, (p.position or reader.position(p.path, p.at_key), p.message))
    ordered = sorted(seen.values())
    errors = [ScenarioError(label, line, column, message) for (line, column), message in ordered]
    first = errors[0]
    return ScenarioError(label, first.line, first.column, first.message, more=errors[1:])


def _data_path(where: str) -> DataPath:
    """``caller[2].press.gap`` -> ``("caller", 2, "press", "gap")``."""
    return tuple(int(m[1]) if m[1] else m[2] for m in re.finditer(r"\[(\d+)\]|([^.\[\]]+)", where))


# --- YAML text to nodes --------------------------------------------------------------------------


def _compose(text: str, label: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        line, column, message = _syntax_message(e)
        raise ScenarioError(label, line, column, message) from None
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        char = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or " ")
        message = f"character U+{char:04X} is not allowed in YAML"
        raise ScenarioError(label, line, column, message) from None
    except yaml.YAMLError as e:  # no position known
        raise ScenarioError(label, None, None, f"not YAML: {e}") from None
    except ValueError as e:
        raise ScenarioError(label, None, None, f"not valid YAML: {e}") from None
    except RecursionError:
        raise ScenarioError(label, None, None, "nested too deeply") from None


def _syntax_message(e: yaml.MarkedYAMLError) -> tuple[int, int, str]:
    mark, problem, context = e.problem_mark, e.problem or "", e.context or ""
    context_mark = e.context_mark
    if mark is None:
        mark = context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = problem.replace("<stream end>", "the end of the file")
    if "'\\t'" in problem:
        return line, column, "a tab character: indent YAML with spaces, not tabs"
    if context == "while scanning a quoted scalar" and context_mark is not None:
        return context_mark.line + 1, context_mark.column + 1, "this quoted text is never closed"
    if problem.endswith("that cannot start any token"):
        char = problem.removeprefix("found character ").split(" ", 1)[0]
        return line, column, f"{char} cannot start a value in YAML: quote the text"
    if problem == "could not find expected ':'" and context_mark is not None:
        message = "expected 'key: value' (is a ':' missing, or the space after a '-'?)"
        return context_mark.line + 1, context_mark.column + 1, message
    if problem == "mapping values are not allowed here":
        return line, column, "unexpected ':' here: check the indentation, or quote text with ': '"
    if problem.startswith("expected <block end>") and context_mark is not None:
        what = "list" if "collection" in context else "mapping"
        start = f"line {context_mark.line + 1}, column {context_mark.column + 1}"
        message = f"bad indentation: this line does not line up with the {what} at {start}"
        return line, column, message
    if context == "expected a single document in the stream":
        return line, column, "a scenario file holds one YAML document, found a second (---)"
    where = ""
    if context and context_mark is not None and context_mark is not mark:
        where = f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})"
    return line, column, f"not valid YAML: {problem or context}{where}"


# --- Nodes to data -------------------------------------------------------------------------------

_TAG = "tag:yaml.org,2002:"
_KEY_FIELDS = ("press", "digits", "then")
"""Fields that hold keypad keys: a number there that YAML changed loses keys."""


@dataclass(frozen=True, slots=True)
class _Problem:
    path: DataPath
    message: str
    at_key: bool = False
    position: Position | None = None

    @property
    def location(self) -> tuple[DataPath, bool]:
        return self.path, self.at_key


class _Fatal(Exception):
    def __init__(self, position: Position, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


def _at(node: yaml.Node) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Reader:
    """Turns a node tree into JSON-shaped data, remembering where every key and value is."""

    def __init__(self) -> None:
        self.values: dict[DataPath, Position] = {}
        self.keys: dict[DataPath, Position] = {}
        self.plain: dict[DataPath, yaml.ScalarNode] = {}  # unquoted scalars YAML made non-text
        self.problems: list[_Problem] = []
        self._count = 0
        self._open: set[int] = set()
        self._constructor = yaml.constructor.SafeConstructor()

    def position(self, path: DataPath, at_key: bool) -> Position:
        """Where ``path`` is, or its nearest ancestor (a missing key points at its mapping)."""
        if at_key and path in self.keys:
            return self.keys[path]
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, (1, 1))

    def data(self, node: yaml.Node, path: DataPath, depth: int) -> object:
        self._count += 1
        if self._count > MAX_VALUES:
            raise _Fatal(_at(node), f"more than {MAX_VALUES} values (do aliases repeat a list?)")
        if depth > MAX_DEPTH:
            raise _Fatal(_at(node), f"nested more than {MAX_DEPTH} levels deep")
        self.values[path] = _at(node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if id(node) in self._open:
            raise _Fatal(_at(node), "an alias refers to a node that contains it")
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode) and node.tag == _TAG + "seq":
                return [self.data(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode) and node.tag == _TAG + "map":
                return self._mapping(node, path, depth)
            raise _Fatal(_at(node), _unsupported(node.tag))
        finally:
            self._open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: DataPath, depth: int) -> dict[str, object]:
        result: dict[str, object] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                self._problem(
                    key_node, path, "merge keys (<<) are not supported: write the keys out"
                )
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._problem(key_node, path, "a key must be a plain name, not a list or mapping")
                continue
            key = str(key_node.value)  # the text as written: `on:` is the key "on", not true
            sub = (*path, key)
            if key in result:
                first = self.keys[sub][0]
                self._problem(
                    key_node, sub, f"duplicate key '{_name(key)}' (first at line {first})"
                )
                continue
            self.keys[sub] = _at(key_node)
            result[key] = self.data(value_node, sub, depth + 1)
        return result

    def _problem(self, node: yaml.Node, path: DataPath, message: str) -> None:
        self.problems.append(_Problem(path, message, at_key=True, position=_at(node)))

    def _scalar(self, node: yaml.ScalarNode, path: DataPath) -> object:
        tag, text = node.tag, str(node.value)
        if tag in (_TAG + "str", _TAG + "timestamp"):  # a date is text to a scenario
            return text
        if node.style is None:
            self.plain[path] = node
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return self._constructor.construct_yaml_bool(node)
        if tag == _TAG + "float":
            return self._constructor.construct_yaml_float(node)
        if tag != _TAG + "int":
            raise _Fatal(_at(node), _unsupported(tag))
        try:
            value = self._constructor.construct_yaml_int(node)
            decimal = str(value)
        except ValueError:
            self.problems.append(_Problem(path, f"the number {_short(text)} is too long: quote it"))
            return text
        if node.style is None and decimal != text:
            self.problems.append(_Problem(path, _lossy_number(path, text, decimal)))
        return value


def _lossy_number(path: DataPath, text: str, decimal: str) -> str:
    text, decimal = _short(text), _short(decimal)
    key = path[-1] if path and isinstance(path[-1], str) else None
    said = f"YAML reads {text} as the number {decimal}"
    if key in _KEY_FIELDS:
        return f'{said}; quote the keys: {key}: "{text}"'
    if key is None:
        return f'{said}; write {decimal}, or quote it: "{text}"'
    return f'{said}; write {key}: {decimal}, or quote it: {key}: "{text}"'


def _unsupported(tag: str) -> str:
    shown = "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag
    return f"unsupported YAML tag {shown}: a scenario holds text, numbers, lists and mappings"


# --- Schema errors to messages -------------------------------------------------------------------

_LEAF_ORDER = ("type", "additionalProperties", "required", "enum", "uniqueItems")


class _Explainer:
    """Turns jsonschema errors into one clear message per location.

    Messages come from the schema where it gives them (``errorMessage``, the same text an editor
    shows). A ``oneOf`` of tagged alternatives (each a bare name or a one-key mapping, such as a
    step) is explained by the alternative its tag names, so that a misspelt step says
    "unknown step 'prees' (did you mean 'press'?)" rather than why each alternative failed.
    """

    def __init__(self, validator: Any, reader: _Reader) -> None:
        self._validator = validator
        self._reader = reader

    def problems(
        self, errors: Iterable[ValidationError], expected: str | None = None, at: DataPath = ()
    ) -> Iterator[_Problem]:
        groups: dict[DataPath, list[ValidationError]] = {}
        for error in errors:
            groups.setdefault(tuple(error.absolute_path), []).append(error)
        for path, group in groups.items():
            fallback = expected if path == at else None
            leaves = [e for e in group if e.validator not in ("anyOf", "oneOf")]
            if any(e.validator == "type" for e in leaves):
                leaves = [e for e in leaves if e.validator == "type"]
            if not leaves:
                leaves = [max(group, key=relevance)]
            leaves.sort(key=lambda e: _rank(str(e.validator)))
            for error in leaves:
                yield from self._explain(error, fallback)

    def _explain(self, error: ValidationError, expected: str | None) -> Iterator[_Problem]:
        path: DataPath = tuple(error.absolute_path)
        schema: Schema = error.schema if isinstance(error.schema, dict) else {}
        own = schema.get("errorMessage")
        expected = own if isinstance(own, str) else expected
        keyword, instance = str(error.validator), error.instance
        if keyword in ("anyOf", "oneOf"):
            yield from self._union(error, path, expected)
        elif keyword == "additionalProperties":
            allowed = list(schema.get("properties", {}))
            for key in instance:
                if key not in allowed:
                    message = f"unknown key '{_name(key)}'{_hint(key, allowed, listing=True)}"
                    yield _Problem((*path, key), message, at_key=True)
        elif keyword == "required":
            meant = {_closest(str(k), error.validator_value) for k in instance}
            missing = [k for k in error.validator_value if k not in instance and k not in meant]
            if missing:
                names = " and ".join(f"'{k}'" for k in missing)
                yield _Problem(
                    path, f"missing required key{'s' if len(missing) > 1 else ''} {names}"
                )
        elif keyword == "uniqueItems":
            index = next((i for i, item in enumerate(instance) if item in instance[:i]), None)
            if index is not None:
                yield _Problem((*path, index), f"{_show(instance[index])} is listed twice")
        else:
            if expected is None:
                expected = _default_expected(keyword, error.validator_value)
            hint = _hint(instance, error.validator_value) if keyword == "enum" else ""
            yield _Problem(path, self._got(expected, path, instance, schema) + hint)

    def _union(
        self, error: ValidationError, path: DataPath, expected: str | None
    ) -> Iterator[_Problem]:
        alternatives = [self._resolve(a) for a in error.validator_value]
        tagged = _tags(alternatives)
        instance = error.instance
        if tagged is not None:
            yield from self._tagged(error, path, alternatives, tagged, expected)
            return
        matching = [i for i, a in enumerate(alternatives) if self._type_matches(instance, a)]
        if len(matching) == 1:
            branch = [e for e in error.context if e.relative_schema_path[0] == matching[0]]
            yield from self.problems(branch, expected, path)
            return
        message = expected or "not a valid value"
        yield _Problem(path, self._got(message, path, instance, error.schema))

    def _tagged(
        self,
        error: ValidationError,
        path: DataPath,
        alternatives: list[Schema],
        tags: dict[str, int],
        expected: str | None,
    ) -> Iterator[_Problem]:
        instance, noun = error.instance, str(error.schema.get("title", "value"))
        bare = [n for a in alternatives for n in a.get("enum", ())]
        keyed = [n for a in alternatives for n in a.get("required", ())]
        names = [*keyed, *(n for n in bare if n not in keyed)]

        def unknown(name: str) -> str:
            close = _closest(name, names)
            if close:
                return f"unknown {noun} '{_name(name)}' (did you mean '{close}'?)"
            return f"unknown {noun} '{_name(name)}'" + (f"; {expected}" if expected else "")

        if isinstance(instance, str):
            if instance in tags and instance not in bare:
                example = _example(alternatives[tags[instance]])
                yield _Problem(path, f"'{instance}' needs an argument, e.g. {example}")
            else:
                yield _Problem(path, unknown(instance))
        elif isinstance(instance, dict) and instance:
            known = [k for k in instance if k in tags]
            if len(instance) == 1 and known:
                index = tags[known[0]]
                branch = [e for e in error.context if e.relative_schema_path[0] == index]
                yield from self.problems(branch)
            elif not known:
                first = next(iter(instance))
                yield _Problem((*path, first), unknown(str(first)), at_key=True)
            elif len(known) == 1:
                inner = self._inner_keys(alternatives[tags[known[0]]], known[0])
                for key in instance:
                    if key != known[0]:
                        message = f"unexpected key '{_name(key)}' beside '{known[0]}'"
                        message += f": a {noun} has one key"
                        if key in inner:
                            message += f" (write {known[0]}: {{{inner[0]}: ..., {key}: ...}})"
                        yield _Problem((*path, key), message, at_key=True)
            else:
                keys = ", ".join(_name(str(k)) for k in instance)
                yield _Problem(
                    path, f"a {noun} has one key, got {keys}: make each its own list item"
                )
        else:
            message = expected or f"expected a {noun}"
            yield _Problem(path, self._got(message, path, instance, error.schema))

    def _got(self, expected: str, path: DataPath, instance: object, schema: Schema) -> str:
        """``expected ..., got ...``, and how to quote a value YAML read as something else."""
        message = f"{expected}, got {_kind(instance)}"
        node = self._reader.plain.get(path)
        if node is not None and not any(self._validator.descend(node.value, schema)):
            key = path[-1] if path and isinstance(path[-1], str) else None
            text = _short(str(node.value))
            quoted = f'{key}: "{text}"' if key else f'"{text}"'
            read = json.dumps(instance)
            if read != text:
                message += f"; YAML reads {text} as {read}"
            message += f"; quote it: {quoted}"
        return message

    def _resolve(self, schema: Schema) -> Schema:
        while isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
            target: Any = _schema()
            for part in schema["$ref"][2:].split("/"):
                target = target[part]
            schema = target
        return schema

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


def _tags(alternatives: list[Schema]) -> dict[str, int] | None:
    """Tag -> alternative, when every alternative is a set of bare names or a one-key mapping."""
    tags: dict[str, int] = {}
    for index, alternative in enumerate(alternatives):
        if alternative.get("type") == "string" and "enum" in alternative:
            for name in alternative["enum"]:
                tags.setdefault(name, index)
        elif alternative.get("type") == "object" and len(alternative.get("required", ())) == 1:
            tags[alternative["required"][0]] = index
        else:
            return None
    return tags or None


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


def _closest(name: str, options: Iterable[object]) -> str | None:
    choices = [str(o) for o in options]
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def _hint(value: object, options: object, *, listing: bool = False) -> str:
    candidates = list(cast(Iterable[object], options)) if isinstance(options, list) else []
    close = _closest(str(value), candidates) if isinstance(value, str) else None
    if close:
        return f" (did you mean '{close}'?)"
    return f" (expected: {', '.join(str(c) for c in candidates)})" if listing else ""


def _show(value: object) -> str:
    return _short(repr(value) if isinstance(value, str) else json.dumps(value))


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _name(text: str) -> str:
    """A key or name as it can appear in a one-line message."""
    return _short(_printable(text))


def _printable(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (``\\n``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"a number ({_show(value)})"
    if isinstance(value, str):
        return f"a string ({_show(value)})" if value.strip() else "an empty string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
