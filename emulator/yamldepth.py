"""YAML composed with bounds that hold while the text is scanned: on nesting, and on what aliases
expand to.

PyYAML's scanner reads ahead of its composer while a token may still be a key (a bracket is,
until its line shows otherwise), and checks every token against every bracket still open on its
line: text of 2,000 ``[`` cost 2 to 5 s of CPU before the composer ran out of stack ("nested too
deeply", with no position). ``compose`` refuses a ``[`` or ``{`` with more than ``limit``
collections already open around it as soon as it is scanned, with ``TooDeep`` at the bracket's
own line and column.

The count is of the block collections (mappings and lists laid out by indentation, the root's
included) and brackets open at that point. An indentless list (``- `` at its key's column) has
no indentation level of its own in the scanner, so the count may fall short of the depth, never
go past it: a reader that checks every node's depth as well never sees a document the scanner
wrongly refused.

Aliases: an alias is one node however large the node it names, so a file of 860 KB (one string
of 500 KB, aliased 90,000 times) is 45 GB of text once expanded. A reader that counts what it
expands stops early, but only after PyYAML has composed the whole file: 2 s of CPU for those
90,000 aliases. With ``max_values`` and ``max_text``, ``compose`` counts as it composes, the
composer pulling tokens from the scanner as it goes, and raises ``TooLarge`` at the alias that
goes past either bound (0.4 s for that file, most of it the scanning of the long string):

- values: every node but a mapping's keys (and what a key holds), each alias counting every
  value of the node it names, that node included (a node written in a key counts its own too
  when an alias of it stands as a value);
- text: every scalar's text, keys included, in UTF-8 bytes (``text_size``), each alias counting
  all the text of the node it names.

Its position is the node whose text or values went past the bound: for an alias, the node it
names (where the long value is written). The scenario and manifest readers count what they read
as well, and still check: their counts are never more than these (but for an alias inside the
node it names, which they refuse). They can be less, by a value
a reader skips (that of a duplicate or a merge key), which is counted here: a document whose
skipped values alone go past a bound is refused here, where the reader would have reported the
key; it is in error either way.
"""

from __future__ import annotations

import functools
from typing import Any, cast

import yaml

__all__ = [
    "COMPOSABLE",
    "TooDeep",
    "TooLarge",
    "compose",
    "load",
    "text_message",
    "text_size",
    "values_message",
]

COMPOSABLE = 500
"""Deeper than PyYAML's composer can build a tree in any case (it runs out of stack at about
490 levels): a bound at this depth refuses no text that could be read, only sooner."""


class TooDeep(Exception):
    """A bracket with more than ``limit`` collections open around it, at ``line`` and ``column``
    (1-based)."""

    def __init__(self, limit: int, mark: yaml.Mark) -> None:
        super().__init__(f"nested more than {limit} levels deep")
        self.limit = limit
        self.line = mark.line + 1
        self.column = mark.column + 1


class TooLarge(Exception):
    """Aliases expand the document past ``max_values`` or ``max_text`` (``text_message``,
    ``values_message``), at ``line`` and ``column`` (1-based) of the node that went past it."""

    def __init__(self, message: str, mark: yaml.Mark) -> None:
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1
        self.column = mark.column + 1


def text_message(limit: int) -> str:
    """What a reader says of a document past ``limit`` bytes of text once expanded."""
    return (f"more than {limit // (1024 * 1024)} MiB of text once aliases are expanded "
            "(do aliases repeat a long value?)")  # fmt: skip


def values_message(limit: int) -> str:
    """What a reader says of a document past ``limit`` values once expanded."""
    return f"more than {limit} values (do aliases repeat a list?)"


def text_size(text: str) -> int:
    """The size of ``text`` in UTF-8 bytes (a lone surrogate counts 3)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _Counted(yaml.SafeLoader):
    """The safe loader, counting the values and text of the document as it composes it (see the
    module's docstring); no bound is checked while a bound is None."""

    max_values: int | None = None
    max_text: int | None = None

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._values = 0
        """Values counted against ``max_values``: none in a key."""
        self._nodes = 0
        """Values as ``_values`` counts them, but counted in keys too: an anchored node's size is
        what it holds wherever it was written (an alias of it may stand as a value)."""
        self._text = 0
        self._sizes: dict[int, tuple[int, int]] = {}
        """(values, text) of each anchored node composed so far, by ``id``."""
        self._keys = 0
        """How many mapping keys are being composed around the node at hand."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.max_values is None and self.max_text is None:
            return super().compose_node(parent, index)
        key = index is None and isinstance(parent, yaml.MappingNode)
        counted = not key and self._keys == 0  # a key and what it holds are no values
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)  # an unknown alias raises
            size = self._sizes.get(id(node))  # None: inside the node it names (the reader's)
            if node is not None and size is not None:
                self._count(size[0], size[1], counted, node.start_mark)
            return node
        nodes, text = self._nodes, self._text
        self._count(1, 0, counted, event.start_mark)
        self._keys += key
        try:
            node = super().compose_node(parent, index)
        finally:
            self._keys -= key
        if isinstance(node, yaml.ScalarNode):
            self._count(0, text_size(str(node.value)), counted, node.start_mark)
        if node is not None and event.anchor is not None:
            self._sizes[id(node)] = (self._nodes - nodes, self._text - text)
        return node

    def _count(self, values: int, text: int, counted: bool, mark: Any) -> None:
        """Add ``values`` (to the bound's count only when ``counted``) and ``text``; past a
        bound, ``TooLarge`` at ``mark``."""
        self._nodes += values
        self._text += text
        if counted:
            self._values += values
            if self.max_values is not None and self._values > self.max_values:
                raise TooLarge(values_message(self.max_values), cast(yaml.Mark, mark))
        if self.max_text is not None and self._text > self.max_text:
            raise TooLarge(text_message(self.max_text), cast(yaml.Mark, mark))


@functools.cache
def _loader(limit: int) -> type[_Counted]:
    """The counting safe loader, refusing a bracket with more than ``limit`` collections open
    around it."""

    class Loader(_Counted):
        def fetch_flow_collection_start(self, TokenClass: type[yaml.Token]) -> None:
            if len(self.indents) + self.flow_level > limit:
                raise TooDeep(limit, self.get_mark())
            super().fetch_flow_collection_start(TokenClass)

    return Loader


def compose(text: str, limit: int, *, max_values: int | None = None,
            max_text: int | None = None) -> yaml.Node | None:  # fmt: skip
    """The node tree of one YAML document (None for an empty one), as ``yaml.compose`` with the
    safe loader; raises ``TooDeep`` for a bracket with more than ``limit`` collections open
    around it, ``TooLarge`` past ``max_values`` or ``max_text`` once aliases are expanded, and
    PyYAML's own errors for anything else."""
    loader = _loader(limit)(text)
    loader.max_values = max_values
    loader.max_text = max_text
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def load(text: str, limit: int) -> object:
    """The value of one YAML document, as ``yaml.safe_load``; raises ``TooDeep`` for a bracket
    with more than ``limit`` collections open around it, and PyYAML's own errors for anything
    else."""
    return yaml.load(text, Loader=_loader(limit))  # a SafeLoader: no Python objects
