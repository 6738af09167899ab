from __future__ import annotations

import pytest

from emulator.jsonpos import locate, locate_paths, position_of

TEXT = """{
  "actions": [
    {"operationId": "1", "action": "answer"},
    {"operationId": "2", "action": "playPrompt", "prompts": [{"value": "hi"}]}
  ],
  "links": {"callback": "https://x"}
}"""


def test_locate_members_and_items() -> None:
    positions = locate(TEXT)
    assert positions["$"] == (1, 1)
    assert positions["$.actions"] == (2, 3)
    assert positions["$.actions[1]"] == (4, 5)
    assert positions["$.actions[1].prompts[0].value"] == (4, 63)
    assert positions["$.links.callback"] == (6, 13)


def test_missing_path_falls_back_to_nearest_ancestor() -> None:
    positions = locate(TEXT)
    assert position_of("$.actions[0].operationIdX", positions) == (3, 5)
    assert position_of("$.nothing[3].deeper", positions) == (1, 1)


def test_text_yaml_cannot_compose_gives_no_positions() -> None:
    assert locate('{"a": "\t\x00"}') == {}
    assert position_of("$.a", {}) is None


def test_keys_with_odd_characters() -> None:
    positions = locate('{"odd key": {"x.y": 1}}')
    assert positions['$["odd key"]["x.y"]'] == (1, 14)


@pytest.mark.parametrize(
    "text",
    [
        '{"actions": [{"action": "answer"}, {"prompts": [{"value": "x"}, {"fileUri": 1}]}]}',
        '{\n  "a": {\n    "b": [1, [2, 3]]\n  },\n  "c": "d"\n}',
        '[1, [2, 3], {"a": {"b": [4]}}]',
        "{}",
        "not json {",
    ],
)
def test_locate_paths_gives_what_locate_gives_for_the_paths_asked(text: str) -> None:
    """``botemu lint`` looks up only the positions of the findings it prints (the attack: a
    16 MiB Workflow of half a million values built a PyYAML node for each)."""
    full = locate(text)
    assert locate_paths(text, list(full)) == full
    for path in full:
        found = locate_paths(text, [path])
        assert found[path] == full[path]
        assert set(found) <= set(full)


def _same_nodes(a: object, b: object, seen: set[int]) -> None:
    """The two node trees have the same nodes, tags, values and marks (line, column, index)."""
    import yaml

    assert isinstance(a, yaml.Node) and type(a) is type(b)
    assert isinstance(b, yaml.Node)
    if id(a) in seen:
        return
    seen.add(id(a))
    assert a.tag == b.tag
    for mark in ("start_mark", "end_mark"):
        x, y = getattr(a, mark), getattr(b, mark)
        assert (x.line, x.column, x.index) == (y.line, y.column, y.index), (a, mark)
    if isinstance(a, yaml.ScalarNode):
        assert a.value == b.value and (a.style or None) == (b.style or None)
    elif isinstance(a, yaml.SequenceNode):
        assert len(a.value) == len(b.value)
        for x, y in zip(a.value, b.value, strict=True):
            _same_nodes(x, y, seen)
    else:
        assert len(a.value) == len(b.value)
        for (k1, v1), (k2, v2) in zip(a.value, b.value, strict=True):
            _same_nodes(k1, k2, seen)
            _same_nodes(v1, v2, seen)


@pytest.mark.parametrize(
    "text",
    [
        "a: é\nb: [1, 2, ünï]\nc: 'x'\nd: \"y\"\n",
        "emoji: 😀😀 x\nz: 😀\n",
        "a: 1\r\nb: |\r\n  line one\r\n  line two\r\n",
        "- &a {x: 1, y: [2, 3]}\n- *a\n- ? complex\n  : value\n",
        'key: >\n  folded\n  text\n\nother: "d\\u00e9j\\u00e0"\n',
        "a: x\x85b: 1\nc: x\u2028d: 1\u2029e: 2\n",
        "%YAML 1.1\n---\na: !!str 1\nb: !custom x\n",
        "\ufeffname: bom\nx: [1, {y: 2}]\n",
        "x: ${name}\nsteps:\n  - press: '1'\n  - silence: 3s\n",
    ],
)
def test_compose_yaml_gives_pyyamls_nodes_and_marks(text: str) -> None:
    """libyaml composes (where PyYAML has it), and what it gives is what PyYAML's own composer
    gives: nodes, tags, values and every mark (a text with a byte-order mark goes to PyYAML)."""
    import yaml

    from emulator.jsonpos import compose_yaml

    _same_nodes(compose_yaml(text), yaml.compose(text, Loader=yaml.SafeLoader), set())


def test_compose_yaml_takes_libyaml_where_pyyaml_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from emulator.jsonpos import compose_yaml

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML was built without libyaml here")
    used: list[str] = []
    compose = yaml.compose

    def spy(text: str, Loader: type) -> object:
        used.append(Loader.__name__)
        return compose(text, Loader=Loader)

    monkeypatch.setattr(yaml, "compose", spy)
    compose_yaml("a: [1, 2]\n")
    compose_yaml("\ufeffa: 1\n")
    assert used == ["CSafeLoader", "SafeLoader"]


@pytest.mark.parametrize("text", ["a: b: c\n", "[1, 2", "a: 'open\n", "a: \x07\n", "a:\n\t- x\n"])
def test_compose_yaml_raises_pyyamls_own_errors(text: str) -> None:
    import yaml

    from emulator.jsonpos import compose_yaml

    with pytest.raises(yaml.YAMLError) as ours:
        compose_yaml(text)
    with pytest.raises(yaml.YAMLError) as theirs:
        yaml.compose(text, Loader=yaml.SafeLoader)
    assert str(ours.value) == str(theirs.value)


def test_text_nested_deeper_than_libyamls_bound_goes_to_pyyaml() -> None:
    """libyaml's composer recurses in C with no check: 100,000 brackets deep crashed the
    interpreter (an xdist worker died). Past ``LIBYAML_DEPTH`` the text goes to PyYAML's
    composer, which raises ``RecursionError`` as it always did; up to it, libyaml's."""
    import yaml

    from emulator.jsonpos import LIBYAML_DEPTH, compose_yaml

    with pytest.raises(RecursionError):
        compose_yaml("[" * 100_000 + "]" * 100_000)
    text = "[" * LIBYAML_DEPTH + "]" * LIBYAML_DEPTH
    _same_nodes(compose_yaml(text), yaml.compose(text, Loader=yaml.SafeLoader), set())
