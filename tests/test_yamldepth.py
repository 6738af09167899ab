"""``emulator.yamldepth``: a bracket past the bound is refused where it is scanned; text within
it composes and loads as PyYAML's safe loader does."""

from __future__ import annotations

import pytest
import yaml

from emulator import yamldepth


@pytest.mark.parametrize("limit", [1, 64, yamldepth.COMPOSABLE])
def test_the_first_bracket_past_the_limit_is_refused_at_its_place(limit: int) -> None:
    # A bracket is refused when more than ``limit`` collections are open around it: the root
    # mapping and the brackets before it.
    text = "a: " + "[" * 300_000
    with pytest.raises(yamldepth.TooDeep) as refused:
        yamldepth.compose(text, limit)
    assert (refused.value.line, refused.value.column) == (1, 4 + limit)
    assert str(refused.value) == f"nested more than {limit} levels deep"


def test_text_within_the_limit_composes_and_loads_as_the_safe_loader_does() -> None:
    # Around the innermost bracket: the root mapping, b's mapping and 61 brackets.
    text = "a:\n  b: " + "[" * 62 + "1" + "]" * 62 + "\n  c: [x, {d: 2}]\n"
    assert yamldepth.load(text, 63) == yaml.safe_load(text)
    node, plain = yamldepth.compose(text, 63), yaml.compose(text, Loader=yaml.SafeLoader)
    assert node is not None and plain is not None
    assert yaml.serialize(node) == yaml.serialize(plain)
    with pytest.raises(yamldepth.TooDeep):
        yamldepth.compose(text, 62)


def test_block_collections_count_and_an_indentless_list_counts_short() -> None:
    nested = "a:\n  b:\n    c: [[1]]\n"  # around the inner bracket: the root, a:, b: and one
    assert yamldepth.load(nested, 4) == {"a": {"b": {"c": [[1]]}}}
    with pytest.raises(yamldepth.TooDeep):
        yamldepth.load(nested, 3)
    with pytest.raises(yamldepth.TooDeep):
        yamldepth.load("a:\n  - [[1]]\n", 2)  # the root, the list and a bracket
    # The same list without its indentation has no indentation level in the scanner: counted
    # short, it passes; a reader checking each node's depth still sees it whole.
    assert yamldepth.load("a:\n- [[1]]\n", 2) == {"a": [[[1]]]}


def test_the_safe_loader_is_kept() -> None:
    with pytest.raises(yaml.constructor.ConstructorError):
        yamldepth.load("!!python/object/apply:os.system ['true']", 10)


def test_composable_is_past_what_the_composer_can_build() -> None:
    """The bound refuses no text that could be read: PyYAML's composer runs out of stack first."""
    deepest = yamldepth.COMPOSABLE - 1
    with pytest.raises(RecursionError):
        yaml.compose("[" * deepest + "]" * deepest, Loader=yaml.SafeLoader)
