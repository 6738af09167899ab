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


# --- what aliases expand to ---------------------------------------------------------------------


def test_an_alias_bomb_is_refused_at_the_alias_past_the_bound_before_the_rest_is_read() -> None:
    # 90,000 aliases of a 500 KB string, then a syntax error: the bound is passed at the ninth
    # alias, so the composer never reaches the error (it read the aliases as it composed them).
    text = f'big: &b "{"x" * 500_000}"\nall: [{", ".join(["*b"] * 90_000)}]\n"unclosed: [\n'
    with pytest.raises(yamldepth.TooLarge) as refused:
        yamldepth.compose(text, 64, max_text=4 * 1024 * 1024)
    assert (refused.value.line, refused.value.column) == (1, 6)  # where the string is written
    assert refused.value.message == yamldepth.text_message(4 * 1024 * 1024)
    with pytest.raises(yaml.YAMLError):  # without the bound, the whole text is read
        yamldepth.compose(text, 64)


def test_text_counts_every_key_and_scalar_as_expanded_and_the_bound_is_inclusive() -> None:
    text = "k: &a [abc, dé]\nm: {*a : x}\nn: [*a, *a]\n"
    # k m n x (4) + "abc" "dé" written (6), then as the key's alias (6) and twice more (12)
    assert yamldepth.compose(text, 64, max_text=28) is not None
    with pytest.raises(yamldepth.TooLarge) as refused:
        yamldepth.compose(text, 64, max_text=27)
    assert (refused.value.line, refused.value.column) == (1, 4)  # the list the alias names


def test_values_count_every_node_but_keys_and_an_alias_counts_the_node_it_names() -> None:
    # the root, the mapping of k, its list and 3 items (6); y's value (1); the list of n, and
    # twice the 4 nodes of the list aliased (9). The alias used as a key counts no value.
    text = "k: &a [1, 2, 3]\n? *a\n: y\nn: [*a, *a]\n"
    assert yamldepth.compose(text, 64, max_values=15) is not None
    with pytest.raises(yamldepth.TooLarge) as refused:
        yamldepth.compose(text, 64, max_values=14)
    assert refused.value.message == yamldepth.values_message(14)
    with pytest.raises(yamldepth.TooLarge):
        yamldepth.compose("a: &a [x, x]\nb: [" + ", ".join(["*a"] * 10) + "]\n", 64, max_values=30)


def test_nothing_a_key_holds_counts_as_a_value_but_an_alias_of_it_as_a_value_counts_all() -> None:
    text = "? &k [p, q]\n: 1\n"  # the root and 1
    assert yamldepth.compose(text, 64, max_values=2) is not None
    with pytest.raises(yamldepth.TooLarge):
        yamldepth.compose(text, 64, max_values=1)
    # each alias of the key's list, as a value, counts the list and its 50 items, as a reader
    # that expands it does: 2 + the list of v (1) + 100 * 51
    aliased = f"? &k [{', '.join(['x'] * 50)}]\n: 1\nv: [{', '.join(['*k'] * 100)}]\n"
    assert yamldepth.compose(aliased, 64, max_values=5103) is not None
    with pytest.raises(yamldepth.TooLarge):
        yamldepth.compose(aliased, 64, max_values=5102)


def test_counting_changes_nothing_composed_and_an_alias_inside_its_own_node_is_left_to_readers(
) -> None:  # fmt: skip
    text = "a: &x [1, {b: *x}]\nc: &s text\nd: [*s, *x]\n"
    node = yamldepth.compose(text, 64, max_values=100, max_text=100)
    plain = yaml.compose(text, Loader=yaml.SafeLoader)
    assert node is not None and plain is not None
    assert yaml.serialize(node) == yaml.serialize(plain)
    with pytest.raises(yaml.composer.ComposerError, match="undefined alias"):
        yamldepth.compose("a: *nowhere\n", 64, max_text=100)
