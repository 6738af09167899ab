"""YAML composed with a bound on nesting that holds while the text is scanned.

PyYAML scans a whole document before its composer builds a single node, and its scanner checks
every token against every bracket still open on its line: text of 2,000 ``[`` cost 2 to 5 s of
CPU before the composer ran out of stack ("nested too deeply", with no position). ``compose``
refuses a ``[`` or ``{`` with more than ``limit`` collections already open around it as soon as
it is scanned, with ``TooDeep`` at the bracket's own line and column.

The count is of the block collections (mappings and lists laid out by indentation, the root's
included) and brackets open at that point. An indentless list (``- `` at its key's column) has
no indentation level of its own in the scanner, so the count may fall short of the depth, never
go past it: a reader that checks every node's depth as well never sees a document the scanner
wrongly refused.
"""

from __future__ import annotations

import functools

import yaml

__all__ = ["COMPOSABLE", "TooDeep", "compose", "load"]

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


@functools.cache
def _loader(limit: int) -> type[yaml.SafeLoader]:
    """PyYAML's safe loader, refusing a bracket with more than ``limit`` collections open
    around it."""

    class Loader(yaml.SafeLoader):
        def fetch_flow_collection_start(self, TokenClass: type[yaml.Token]) -> None:
            if len(self.indents) + self.flow_level > limit:
                raise TooDeep(limit, self.get_mark())
            super().fetch_flow_collection_start(TokenClass)

    return Loader


def compose(text: str, limit: int) -> yaml.Node | None:
    """The node tree of one YAML document (None for an empty one), as ``yaml.compose`` with the
    safe loader; raises ``TooDeep`` for a bracket with more than ``limit`` collections open
    around it, and PyYAML's own errors for anything else."""
    return yaml.compose(text, Loader=_loader(limit))


def load(text: str, limit: int) -> object:
    """The value of one YAML document, as ``yaml.safe_load``; raises ``TooDeep`` for a bracket
    with more than ``limit`` collections open around it, and PyYAML's own errors for anything
    else."""
    return yaml.load(text, Loader=_loader(limit))  # a SafeLoader: no Python objects
