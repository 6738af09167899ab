"""``${name}`` in the strings of a scenario: finding references and substituting values.

A reference is ``${`` + a name (letters, digits and ``_``, not starting with a digit) + ``}``.
``$${`` stands for a literal ``${``. Substitution is one pass: a value that itself holds ``${...}``
is inserted as written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from emulator.scenario.yamldoc import DataPath

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_REFERENCE = re.compile(r"\$\$\{|\$\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``${name}`` in the string at ``path``: ``token`` as written, and ``nth``, how many
    times that token appears earlier in the same string (to find it in the file)."""

    path: DataPath
    token: str
    name: str
    nth: int

    @property
    def valid(self) -> bool:
        return NAME.match(self.name) is not None


def references(
    data: object, skip: Collection[DataPath] = (), path: DataPath = ()
) -> Iterator[Reference]:
    """Every reference in the strings of ``data``, in order; subtrees at ``skip`` are left out."""
    if path in skip:
        return
    if isinstance(data, str):
        for match in _REFERENCE.finditer(data):
            if match[1] is not None:
                token = match[0]
                yield Reference(path, token, match[1], data.count(token, 0, match.start()))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from references(item, skip, (*path, index))
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from references(value, skip, (*path, key))


def expand(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each known reference replaced by its value, and ``$${`` by ``${``."""

    def one(match: re.Match[str]) -> str:
        if match[1] is None:
            return "${"
        return values.get(match[1], match[0])

    return _REFERENCE.sub(one, text) if "${" in text else text


def substitute(
    data: object, values: Mapping[str, str], skip: Collection[DataPath] = (), path: DataPath = ()
) -> object:
    """A copy of ``data`` with every string expanded (subtrees at ``skip`` kept as they are)."""
    if path in skip:
        return data
    if isinstance(data, str):
        return expand(data, values)
    if isinstance(data, list):
        return [substitute(item, values, skip, (*path, i)) for i, item in enumerate(data)]
    if isinstance(data, dict):
        return {k: substitute(v, values, skip, (*path, k)) for k, v in data.items()}
    return data
