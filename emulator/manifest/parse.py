"""Manifest text to a JSON value and its positions (JSON pointer -> 1-based line, column).

JSON (``parse_json``) is read by ``json.loads`` and its positions by a small scanner (PyYAML
refuses JSON indented with tabs); YAML (``parse_yaml``) by PyYAML's composer, the positions from
the node marks. A member's position is its key; an item's and the root's, the start of the value.
YAML is limited to what JSON can say: no merge keys, no custom tags, no NaN; a date stays text
and a key is the text as written. Aliases may expand to at most ``MAX_VALUES`` values and
``MAX_TEXT`` bytes of text. Both raise ``ManifestError`` for text they cannot read.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

import yaml

from emulator import yamldepth
from emulator.jsonpos import NUMBER_TOO_LONG, is_number_too_long, long_number_at
from emulator.jsonutil import JSON
from emulator.manifest.document import ManifestError, Position, child

MAX_VALUES = 100_000
"""YAML aliases may expand to at most this many values."""
MAX_TEXT = 4 * 1024 * 1024
"""YAML aliases may expand to at most this much text (keys and scalars, in UTF-8 bytes)."""
YAML_DEPTH = yamldepth.COMPOSABLE
"""YAML text nested deeper (brackets and block collections open at once) is refused as it is
scanned, at the bracket that goes too deep: text no composer could build, refused before the
2 to 5 s of CPU the scanner took over a few thousand brackets."""

# --- JSON text -----------------------------------------------------------------------------------


def _no_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str, source: str) -> tuple[JSON, dict[str, Position]]:
    try:
        value = cast(JSON, json.loads(text, parse_constant=_no_constant))
    except json.JSONDecodeError as e:
        line, column, message = e.lineno, e.colno, e.msg
        before = text[: e.pos].rstrip(" \t\n\r")
        if before.endswith(",") and text[e.pos : e.pos + 1] in ("}", "]"):
            comma = len(before) - 1  # JSON has no trailing commas: point at the comma
            line = text.count("\n", 0, comma) + 1
            column = comma - (text.rfind("\n", 0, comma) + 1) + 1
            message = f"a comma before '{text[e.pos]}' (JSON allows no trailing comma)"
        raise ManifestError(
            source, f"not valid JSON: {message}", line=line, column=column
        ) from None
    except ValueError as e:  # NaN, Infinity, an integer too long to read
        if is_number_too_long(e):
            at = long_number_at(text)
            raise ManifestError(
                source, NUMBER_TOO_LONG, line=at and at[0], column=at and at[1]
            ) from None
        raise ManifestError(source, f"not valid JSON: {e}") from None
    except RecursionError:
        raise ManifestError(source, "not readable: nested too deeply") from None
    return value, _JsonPositions(text).scan()


class _JsonPositions:
    """Pointer -> (line, column) for text that ``json.loads`` accepted. Iterative: any depth."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: dict[str, Position] = {}
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._line = 0
        self._stack: list[list[Any]] = []  # [pointer, is an array, next index]

    def scan(self) -> dict[str, Position]:
        text, stack = self.text, self._stack
        pointer, record, i = "", True, self._skip(0)
        while True:
            if record:
                self.out[pointer] = self._at(i)
            c = text[i]
            if c in "{[":
                stack.append([pointer, c == "[", 0])
                i = self._skip(i + 1)
                if text[i] not in "]}":
                    pointer, record, i = self._next(i)
                    continue
                i += 1
                stack.pop()
            elif c == '"':
                i = self._string_end(i)
            else:
                while i < len(text) and text[i] not in ",]} \t\n\r":
                    i += 1
            while True:  # after a value: a comma starts the next one, a bracket ends a container
                i = self._skip(i)
                if not stack:
                    return self.out
                if text[i] == ",":
                    pointer, record, i = self._next(self._skip(i + 1))
                    break
                i += 1
                stack.pop()

    def _next(self, i: int) -> tuple[str, bool, int]:
        """The next item or member of the innermost container: (pointer, record?, index)."""
        top = self._stack[-1]
        if top[1]:
            top[2] += 1
            return child(top[0], top[2] - 1), True, i
        end = self._string_end(i)
        pointer = child(top[0], json.loads(self.text[i:end]))
        self.out[pointer] = self._at(i)
        return pointer, False, self._skip(self._skip(end) + 1)  # past the ':'

    def _at(self, i: int) -> Position:
        starts = self._starts
        while self._line + 1 < len(starts) and starts[self._line + 1] <= i:  # offsets only grow
            self._line += 1
        return self._line + 1, i - starts[self._line] + 1

    def _skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\n\r":
            i += 1
        return i

    def _string_end(self, i: int) -> int:
        """``i`` at an opening quote; the index after the closing one."""
        i += 1
        while self.text[i] != '"':
            i += 2 if self.text[i] == "\\" else 1
        return i + 1


# --- YAML text -----------------------------------------------------------------------------------

_TAG = "tag:yaml.org,2002:"


class _Unreadable(Exception):
    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.position = _mark(node)
        self.message = message


def _mark(node: yaml.Node) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


def parse_yaml(text: str, source: str) -> tuple[JSON, dict[str, Position]]:
    try:
        root = yamldepth.compose(text, YAML_DEPTH, max_values=MAX_VALUES, max_text=MAX_TEXT)
        reader = _YamlReader()
        value = reader.value(root, "", record=True) if root is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = (e.problem or e.context or "syntax error").replace("<stream end>", "the end")
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise ManifestError(
            source, f"not valid YAML: {problem}", line=line, column=column
        ) from None
    except _Unreadable as e:
        line, column = e.position
        raise ManifestError(source, e.message, line=line, column=column) from None
    except yamldepth.TooDeep as e:
        message = "not readable: nested too deeply"
        raise ManifestError(source, message, line=e.line, column=e.column) from None
    except yamldepth.TooLarge as e:  # refused as composed; ``_YamlReader`` counts what it reads
        raise ManifestError(source, e.message, line=e.line, column=e.column) from None
    except (yaml.YAMLError, ValueError, TypeError) as e:
        raise ManifestError(
            source, f"not valid YAML: {str(e).splitlines()[0] if str(e) else e!r}"
        ) from None
    except RecursionError:
        raise ManifestError(source, "not readable: nested too deeply") from None
    return value, reader.positions


class _YamlReader:
    """Nodes to JSON-shaped data and positions. Only what JSON can say: no merge keys, no custom
    tags, no NaN; a date stays text; a key is the text as written."""

    def __init__(self) -> None:
        self.positions: dict[str, Position] = {}
        self._count = 0
        self._text = 0
        self._open: set[int] = set()
        self._constructor = yaml.constructor.SafeConstructor()

    def value(self, node: yaml.Node, pointer: str, *, record: bool) -> JSON:
        self._count += 1
        if self._count > MAX_VALUES:
            raise _Unreadable(node, yamldepth.values_message(MAX_VALUES))
        if record:
            self.positions[pointer] = _mark(node)
        if isinstance(node, yaml.ScalarNode):
            self._add_text(node, str(node.value))
            return self._scalar(node)
        if id(node) in self._open:
            raise _Unreadable(node, "an alias refers to a node that contains it")
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode) and node.tag == _TAG + "seq":
                return [
                    self.value(item, child(pointer, i), record=True)
                    for i, item in enumerate(node.value)
                ]
            if isinstance(node, yaml.MappingNode) and node.tag == _TAG + "map":
                return self._mapping(node, pointer)
            raise _Unreadable(node, f"unsupported YAML tag {node.tag}: JSON has no such value")
        finally:
            self._open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, pointer: str) -> JSON:
        result: dict[str, JSON] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                raise _Unreadable(key_node, "merge keys (<<) are not supported: write the keys out")
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Unreadable(key_node, "a key must be text, not a list or mapping")
            key = str(key_node.value)
            self._add_text(key_node, key)
            sub = child(pointer, key)
            self.positions[sub] = _mark(key_node)
            result[key] = self.value(value_node, sub, record=False)
        return result

    def _add_text(self, node: yaml.Node, text: str) -> None:
        self._text += yamldepth.text_size(text)
        if self._text > MAX_TEXT:
            raise _Unreadable(node, yamldepth.text_message(MAX_TEXT))

    def _scalar(self, node: yaml.ScalarNode) -> JSON:
        tag = node.tag
        if tag in (_TAG + "str", _TAG + "timestamp"):
            return str(node.value)
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return bool(self._constructor.construct_yaml_bool(node))
        if tag == _TAG + "int":
            try:  # more digits than Python converts: 0x... and 1:2:3 are read, but not printable
                whole = int(self._constructor.construct_yaml_int(node))
                str(whole)
            except ValueError as e:
                if is_number_too_long(e):
                    raise _Unreadable(node, NUMBER_TOO_LONG) from None
                raise
            return whole
        if tag == _TAG + "float":
            number = float(self._constructor.construct_yaml_float(node))
            if number != number or number in (float("inf"), float("-inf")):
                raise _Unreadable(node, f"{node.value} is not a JSON number")
            return number
        raise _Unreadable(node, f"unsupported YAML tag {tag}: JSON has no such value")
