from __future__ import annotations

from emulator.jsonpos import locate, position_of

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
