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
from emulator.yamldepth import text_size

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
        seen: dict[str, int] = {}  # token -> how many times it appeared (linear, not quadratic)
        for match in _REFERENCE.finditer(data):
            if match[1] is not None:
                token = match[0]
                nth = seen.get(token, 0)
                seen[token] = nth + 1
                yield Reference(path, token, match[1], nth)
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


class TooLarge(Exception):
    """Substitution would make more than a ``Budget`` allows; the message says what."""


class Budget:
    """What substitution may still make, across one scenario file (every matrix entry, every
    include): ``values`` copied and ``text`` (UTF-8 bytes) of the strings a reference changed.
    Values and strings that aliases repeat are repeated here, so without it a short file
    (``${big}`` a thousand times, a matrix of a thousand entries) could expand without end."""

    def __init__(self, values: int, text: int) -> None:
        self.values = values
        self.text = text
        self._max = (values, text)

    def spend(self, values: int, text: int = 0) -> None:
        self.values -= values
        self.text -= text
        if self.values < 0:
            raise TooLarge(f"more than {self._max[0]:,} values once variables are substituted")
        if self.text < 0:
            mib = self._max[1] // (1024 * 1024)
            raise TooLarge(f"more than {mib} MiB of text once variables are substituted")


def _length(text: str, values: Mapping[str, str]) -> int:
    """The length of ``expand(text, values)``, in characters, without making it."""
    length = len(text)
    for match in _REFERENCE.finditer(text):
        replacement = "${" if match[1] is None else values.get(match[1], match[0])
        length += len(replacement) - len(match[0])
    return length


def substitute(
    data: object,
    values: Mapping[str, str],
    skip: Collection[DataPath] = (),
    path: DataPath = (),
    budget: Budget | None = None,
) -> object:
    """A copy of ``data`` with every string expanded (subtrees at ``skip`` kept as they are);
    raises ``TooLarge`` when the copy would exceed ``budget``."""
    if path in skip:
        return data
    if budget is not None:
        budget.spend(1)
    if isinstance(data, str):
        if budget is None or "${" not in data:
            return expand(data, values)
        budget.spend(0, _length(data, values))  # before the text is made: it may be huge
        text = expand(data, values)
        budget.spend(0, text_size(text) - len(text))  # the rest, in UTF-8 bytes
        return text
    if isinstance(data, list):
        return [substitute(item, values, skip, (*path, i), budget) for i, item in enumerate(data)]
    if isinstance(data, dict):
        return {k: substitute(v, values, skip, (*path, k), budget) for k, v in data.items()}
    return data
