"""Where a JSON path points in a source text: line and column, for precise messages.

JSON text is composed with PyYAML (JSON is, in practice, YAML) to get each node's position. The
result maps the paths ``jsonutil.child`` builds (``$.actions[0].prompts[1]``) to 1-based
(line, column). Text PyYAML cannot compose gives an empty map: messages then go without a line.
"""

from __future__ import annotations

import yaml

from emulator.jsonutil import child

Position = tuple[int, int]


def locate(text: str) -> dict[str, Position]:
    """Path -> (line, column) of every value in ``text``."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, ValueError, RecursionError):
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
