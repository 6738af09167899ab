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


def test_text_nested_deeper_than_yaml_can_compose_has_no_positions() -> None:
    """Refused at the 501st bracket as it is scanned (``yamldepth.COMPOSABLE``), not scanned
    whole first (seconds of CPU for a few thousand brackets), and no RecursionError."""
    assert locate('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}") == {}
    assert locate('{"a": ' + "[" * 497 + "]" * 497 + "}") == {}  # the composer's own limit
    assert locate('{"a": ' + "[" * 200 + "]" * 200 + "}")["$.a" + "[0]" * 199] == (1, 206)
