"""Where a JSON path points in a source text: line and column, for precise messages.

JSON text is composed with PyYAML (JSON is, in practice, YAML) to get each node's position. The
result maps the paths ``jsonutil.child`` builds (``$.actions[0].prompts[1]``) to 1-based
(line, column). Text PyYAML cannot compose gives an empty map: messages then go without a line.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterable

import yaml

from emulator import yamldepth
from emulator.jsonutil import child

Position = tuple[int, int]


def locate(text: str) -> dict[str, Position]:
    """Path -> (line, column) of every value in ``text``."""
    try:
        root = yamldepth.compose(text, yamldepth.COMPOSABLE)
    except (yaml.YAMLError, ValueError, RecursionError, yamldepth.TooDeep):
        return {}
    positions: dict[str, Position] = {}
    if root is not None:
        _walk(root, "$", positions)
    return positions


def _walk(node: yaml.Node, path: str, out: dict[str, Position]) -> None:
    out[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = str(key.value)
            sub = child(path, name)
            if isinstance(value, yaml.MappingNode | yaml.SequenceNode):
                _walk(value, sub, out)
            out[sub] = (key.start_mark.line + 1, key.start_mark.column + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, child(path, index), out)


def position_of(path: str, positions: dict[str, Position]) -> Position | None:
    """The position of ``path``, or of its nearest ancestor that has one (a missing field
    points at the object that lacks it)."""
    while path:
        if path in positions:
            return positions[path]
        cut = max(path.rfind("."), path.rfind("["))
        if cut <= 0:
            break
        path = path[:cut]
    return positions.get("$")


NUMBER_TOO_LONG = "number too long"
"""What botemu says of an integer with more digits than Python converts (4300 by default)."""


def is_number_too_long(error: BaseException) -> bool:
    """Whether ``error`` (or its cause) is Python refusing an integer of too many digits, whose
    message would advise ``sys.set_int_max_str_digits()``."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, ValueError) and "int_max_str_digits" in str(current):
            return True
        current = current.__cause__
    return False


def long_number_at(text: str) -> Position | None:
    """The (line, column) of the first run of more digits than Python converts to an integer
    (the number ``is_number_too_long`` refers to), or None."""
    limit = sys.get_int_max_str_digits()
    match = re.search(rf"\d{{{limit + 1}}}", text) if limit > 0 else None
    if match is None:
        return None
    start = match.start()
    while start > 0 and text[start - 1] in "-+":
        start -= 1
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


def locate_paths(text: str, paths: Iterable[str]) -> dict[str, Position]:
    """Path -> (line, column) of ``paths`` and their ancestors only, as ``locate`` gives them,
    for a JSON text (what ``botemu lint`` reads).

    Only the values on the way to a wanted path are walked, and a container only until its last
    wanted child; every other value is skipped whole by the C JSON decoder. So a 16 MiB Workflow
    of half a million values costs a pass at C speed plus the positions of the findings printed,
    not a PyYAML node per value. Text that is not JSON gives what was found before the fault."""
    wanted: set[str] = set()
    for path in paths:
        while path and path not in wanted:
            wanted.add(path)
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
    wanted.add("$")
    scan = _Scan(text, wanted)
    try:
        scan.value(_skip_space(text, 0), "$", 0)
    except (ValueError, IndexError, RecursionError):
        pass
    newlines = [m.start() for m in re.finditer("\n", text)] if scan.found else []
    return {path: _line_column(newlines, index) for path, index in scan.found.items()}


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\r\n]*")
MAX_DEPTH = 500


def _skip_space(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return match.end() if match else index


class _Scan:
    """One walk of ``locate_paths``: the text, the wanted paths, how many direct children of
    each are wanted (``$.actions[*]`` names no one child), and where each wanted one starts."""

    def __init__(self, text: str, wanted: set[str]) -> None:
        self.text = text
        self.wanted = wanted
        self.inside: dict[str, int] = {}
        for path in wanted:
            cut = max(path.rfind("."), path.rfind("["))
            if cut > 0 and "*" not in path[cut:]:
                self.inside[path[:cut]] = self.inside.get(path[:cut], 0) + 1
        self.found: dict[str, int] = {}

    def skip(self, index: int) -> int:
        return _DECODER.raw_decode(self.text, index)[1]

    def value(self, index: int, path: str, depth: int) -> int:
        """Record where the wanted value at ``index`` starts; walk into it while wanted children
        remain in it, and skip the rest of it whole; the index after it."""
        text = self.text
        self.found[path] = index
        opening, start = text[index], index
        left = self.inside.get(path, 0)
        if not left or opening not in "{[" or depth > MAX_DEPTH:
            return self.skip(index)
        closing = "}" if opening == "{" else "]"
        index = _skip_space(text, index + 1)
        number = 0
        while text[index] != closing:
            if not left:  # nothing more is wanted in here: skip the rest at C speed
                return self.skip(start)
            if opening == "{":
                key_at = index
                key, index = _DECODER.raw_decode(text, index)
                index = _skip_space(text, index)
                if text[index] != ":":
                    raise ValueError("expected ':'")
                sub = child(path, str(key))
                index = _skip_space(text, index + 1)
            else:
                key_at, sub = -1, child(path, number)
                number += 1
            if sub in self.wanted and sub not in self.found:
                index = self.value(index, sub, depth + 1)
                if key_at >= 0:
                    self.found[sub] = key_at  # a member is placed at its key, as ``locate`` does
                left -= 1
            else:
                index = self.skip(index)
            index = _skip_space(text, index)
            if text[index] == ",":
                index = _skip_space(text, index + 1)
            elif text[index] != closing:
                raise ValueError(f"expected ',' or {closing!r}")
        return index + 1


def _line_column(newlines: list[int], index: int) -> Position:
    line = bisect.bisect_left(newlines, index)
    start = newlines[line - 1] + 1 if line else 0
    return line + 1, index - start + 1
