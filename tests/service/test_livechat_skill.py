"""The web chat with a skill manifest (emulator/service/livechat_skill.py): the menu of declared
activities with their schemas resolved and a sample, and the bot's answers checked against the
declared resultValue, the activities posted through Direct Line and the answers over the live socket (fixtures of
``test_livechat.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from emulator.service import EMULATOR
from emulator.service.livechat_skill import resolved
from tests.service.test_livechat import CHAT_BOT, Live, live, post, send, start, until

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = (ROOT / "examples" / "skill" / "manifest.json").read_text()
__all__ = ["live"]  # the fixture, imported


def finish_manifest() -> str:
    document = json.loads(EXAMPLE)
    document["activities"]["finish"] = {
        "type": "event", "name": "finish", "value": {"type": "object"},
        "resultValue": {"type": "object", "required": ["got"]},
    }  # fmt: skip
    return json.dumps(document)


async def load(ws: Any, text: str) -> dict[str, Any]:
    await ws.send_json({"op": "manifest", "ref": "m", "text": text, "name": "manifest.json"})
    frame: dict[str, Any] = await until(ws, lambda f: f.get("ref") == "m")
    return frame


async def test_the_menu_lists_the_declared_activities_with_resolved_schemas(live: Live) -> None:
    ws = await live.connect(token=live.token)
    frame = await load(ws, EXAMPLE)
    assert frame["op"] == "manifest", frame
    menu = {a["key"]: a for a in frame["activities"]}
    assert set(menu) == {"bookFlight", "getWeather", "message"}
    weather = menu["getWeather"]
    assert (weather["type"], weather["name"], weather["result"]) == ("invoke", "getWeather", True)
    assert weather["schema"]["properties"]["city"]["type"] == "string"
    booking = menu["bookFlight"]["schema"]
    assert "$ref" not in json.dumps(booking)  # definitions resolved for the form
    assert booking["properties"]["origin"]["pattern"] == "^[A-Z]{3}$"
    assert set(menu["bookFlight"]["sample"]) >= {"origin", "destination", "date"}
    assert [f["rule"] for f in frame["findings"]] == ["MF-ENDPOINT-HTTPS"]  # a warning


async def test_an_invoke_response_is_checked_against_the_result_value(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws, CHAT_BOT)
    await load(ws, EXAMPLE)
    answer = await send(live, ws, {"type": "invoke", "name": "getWeather",
                                   "value": {"city": "Paris"}})  # fmt: skip
    rules = {(f["rule"], f["severity"]) for f in answer["findings"]}
    assert rules == {("SKILL-INVOKE-RESULT", "error")}
    assert any("'city' is a required property" in f["message"] for f in answer["findings"])
    conversation = live.chat.sessions.copy().pop().conversation_id
    assert conversation is not None
    kinds = [e.kind for e in live.app[EMULATOR].store.events(conversation)]
    assert "finding" in kinds  # in the transcript too: the log view shows them


async def test_an_end_of_conversation_is_checked_against_the_result_value(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await start(live, ws, CHAT_BOT)
    await load(ws, finish_manifest())
    await post(live, ws, {"type": "event", "name": "finish", "value": {"n": 1}})
    frame = await until(ws, lambda f: f["op"] == "findings")
    assert [(f["rule"], f["severity"]) for f in frame["findings"]] == [("SKILL-EOC-RESULT", "info")]
    assert frame["activity_id"]


async def test_a_manifest_that_cannot_be_used_is_refused(live: Live) -> None:
    ws = await live.connect(token=live.token)
    for text, error in (("{nope", "manifest.json"), ('{"name": "x"}', "declares no activities"),
                        ("", "the manifest's text"), ("x" * 210_000, "at most")):  # fmt: skip
        frame = await load(ws, text)
        assert frame["op"] == "refused" and error in frame["error"], frame
    await start(live, ws)  # the socket goes on


def test_a_recursive_ref_is_left_to_the_json_editor() -> None:
    definitions: dict[str, Any] = {"node": {"type": "object", "properties": {
        "next": {"$ref": "#/definitions/node"}}}}  # fmt: skip
    out = resolved({"$ref": "#/definitions/node"}, definitions)
    assert out == {"type": "object", "properties": {"next": {"x-recursive": "#/definitions/node"}}}
