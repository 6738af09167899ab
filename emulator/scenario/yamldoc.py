"""YAML text to JSON-shaped data that remembers where every key and value is.

``compose`` turns text into a node tree (every node keeps its line and column) and reports YAML
syntax errors in words a scenario author understands. ``Reader`` turns the node tree into plain
data, catching YAML surprises on the way: duplicate keys, ``press: 0123`` read as the number 83,
unsupported tags, aliases that expand without end. Nothing here knows the scenario format.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import yaml

from emulator import yamldepth
from emulator.inputs import InputError, read_bytes
from emulator.yamldepth import text_size

MAX_BYTES = 1024 * 1024
MAX_VALUES = 100_000
MAX_TEXT = 4 * 1024 * 1024
"""The text (keys and scalars, in UTF-8 bytes) a file may hold once aliases are expanded: a
1 MiB file whose aliases repeat a long string must not become gigabytes."""
MAX_DEPTH = 64

Position: TypeAlias = tuple[int, int]
DataPath: TypeAlias = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"
_KEY_FIELDS = ("press", "digits", "then")
"""Fields that hold keypad keys: a number there that YAML changed loses keys."""


class YamlError(Exception):
    """The text cannot be read at all: ``line`` and ``column`` (1-based, or None) and a message.
    ``unreadable``: the bytes are not a text file (not UTF-8, too large, missing)."""

    def __init__(
        self, line: int | None, column: int | None, message: str, *, unreadable: bool = False
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message
        self.unreadable = unreadable


@dataclass(frozen=True, slots=True)
class Problem:
    """A problem at ``path`` (at the key itself when ``at_key``), or at an exact ``position``."""

    path: DataPath
    message: str
    at_key: bool = False
    position: Position | None = None

    @property
    def location(self) -> tuple[DataPath, bool]:
        return self.path, self.at_key


def read_file(path: Path) -> str:
    """The text of a regular file: UTF-8 (a BOM is allowed), at most ``MAX_BYTES``."""
    try:
        data = read_bytes(path, MAX_BYTES)  # a regular file only: a FIFO would hang
    except InputError as e:
        raise YamlError(None, None, e.message, unreadable=True) from None
    if len(data) > MAX_BYTES:
        raise YamlError(None, None, f"larger than {MAX_BYTES // 1024} KiB", unreadable=True)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        column = len(data[start : e.start].decode("utf-8", "replace")) + 1
        line = data.count(b"\n", 0, e.start) + 1
        message = f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise YamlError(line, column, message, unreadable=True) from e


def compose(text: str) -> yaml.Node | None:
    """The node tree of one YAML document (None for an empty one); raises ``YamlError``."""
    try:
        return yamldepth.compose(text, MAX_DEPTH, max_values=MAX_VALUES, max_text=MAX_TEXT)
    except yamldepth.TooDeep as e:  # refused as scanned; ``Reader.data`` checks every node too
        raise YamlError(e.line, e.column, str(e)) from None
    except yamldepth.TooLarge as e:  # refused as composed; ``Reader.data`` counts what it reads
        raise YamlError(e.line, e.column, e.message) from None
    except yaml.MarkedYAMLError as e:
        line, column, message = _syntax_message(e)
        mark = e.problem_mark
        if mark is not None and mark.index > 0 and text[mark.index - 1 : mark.index + 1] == "${":
            line, column = mark.line + 1, mark.column  # at the $
            message = "a ${...} inside [...] or {...} must be quoted: write '...${name}...'"
        raise YamlError(line, column, message) from None
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        char = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or " ")
        raise YamlError(line, column, f"character U+{char:04X} is not allowed in YAML") from None
    except yaml.YAMLError as e:  # no position known
        raise YamlError(None, None, f"not YAML: {e}") from None
    except ValueError as e:
        raise YamlError(None, None, f"not valid YAML: {e}") from None
    except RecursionError:
        raise YamlError(None, None, "nested too deeply") from None


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


def _at(node: yaml.Node) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


class Reader:
    """Turns a node tree into JSON-shaped data, remembering where every key and value is."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.values: dict[DataPath, Position] = {}
        self.keys: dict[DataPath, Position] = {}
        self.spans: dict[DataPath, tuple[int, int]] = {}
        """Where each scalar is in ``text``: start and end offsets."""
        self.plain: dict[DataPath, yaml.ScalarNode] = {}  # unquoted scalars YAML made non-text
        self.problems: list[Problem] = []
        self._count = 0
        self._text = 0
        self._found: dict[tuple[tuple[int, int], str], list[int]] = {}
        self._lines: list[int] = []  # the offset where each line starts, once needed
        self._open: set[int] = set()
        self._constructor = yaml.constructor.SafeConstructor()

    def position(self, path: DataPath, at_key: bool) -> Position:
        """Where ``path`` is, or its nearest ancestor (a missing key points at its mapping)."""
        if at_key and path in self.keys:
            return self.keys[path]
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, (1, 1))

    def find(self, path: DataPath, literal: str, nth: int) -> Position:
        """Where the ``nth`` (0-based) ``literal`` is inside the scalar at ``path``, as written;
        the scalar's own position when it cannot be found (an escape sequence, say)."""
        span = self.spans.get(path)
        if span is not None:
            offsets = self._found.get((span, literal))
            if offsets is None:  # each occurrence once: a string may hold 100,000 of them
                offsets = []
                at = self.text.find(literal, span[0], span[1])
                while at >= 0:
                    offsets.append(at)
                    at = self.text.find(literal, at + 1, span[1])
                self._found[(span, literal)] = offsets
            if nth < len(offsets):
                return self._position_of(offsets[nth])
        return self.position(path, at_key=False)

    def _position_of(self, offset: int) -> Position:
        """The (line, column) of an offset in ``text``."""
        if not self._lines:
            self._lines = [0, *(m.end() for m in re.finditer("\n", self.text))]
        line = bisect.bisect_right(self._lines, offset)
        return line, offset - self._lines[line - 1] + 1

    def data(self, node: yaml.Node, path: DataPath = (), depth: int = 0) -> object:
        """The data of ``node``; raises ``YamlError`` when it cannot be read at all."""
        self._count += 1
        if self._count > MAX_VALUES:
            raise YamlError(*_at(node), yamldepth.values_message(MAX_VALUES))
        if depth > MAX_DEPTH:
            raise YamlError(*_at(node), f"nested more than {MAX_DEPTH} levels deep")
        self.values[path] = _at(node)
        if isinstance(node, yaml.ScalarNode):
            self._add_text(node, str(node.value))
            self.spans[path] = (node.start_mark.index, node.end_mark.index)
            return self._scalar(node, path)
        if id(node) in self._open:
            raise YamlError(*_at(node), "an alias refers to a node that contains it")
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode) and node.tag == _TAG + "seq":
                return [self.data(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode) and node.tag == _TAG + "map":
                return self._mapping(node, path, depth)
            raise YamlError(*_at(node), _unsupported(node.tag))
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
            self._add_text(key_node, key)
            sub = (*path, key)
            if key in result:
                first = self.keys[sub][0]
                self._problem(
                    key_node,
                    sub,
                    f"duplicate key '{short(printable(key))}' (first at line {first})",
                )
                continue
            self.keys[sub] = _at(key_node)
            result[key] = self.data(value_node, sub, depth + 1)
        return result

    def _add_text(self, node: yaml.Node, text: str) -> None:
        self._text += text_size(text)
        if self._text > MAX_TEXT:
            raise YamlError(*_at(node), yamldepth.text_message(MAX_TEXT))

    def _problem(self, node: yaml.Node, path: DataPath, message: str) -> None:
        self.problems.append(Problem(path, message, at_key=True, position=_at(node)))

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
            raise YamlError(*_at(node), _unsupported(tag))
        try:
            value = self._constructor.construct_yaml_int(node)
            decimal = str(value)
        except ValueError:
            self.problems.append(Problem(path, f"the number {short(text)} is too long: quote it"))
            return text
        if node.style is None and decimal != text:
            self.problems.append(Problem(path, _lossy_number(path, text, decimal)))
        return value


def _lossy_number(path: DataPath, text: str, decimal: str) -> str:
    text, decimal = short(text), short(decimal)
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


def short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def printable(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (``\\n``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
