"""A skill manifest given on the command line (``botemu serve --manifest FILE``): every web chat
page starts with it as if it had picked it (the ``manifest`` frame right after ``ready``), and
its answers are checked against it; a page may still pick another or forget it, for itself
only. Over the live socket (fixtures of ``test_livechat.py``)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from emulator.manifest.source import load_manifest_text
from emulator.manifest.validate import validate_manifest
from emulator.service.livechat_skill import Given, given
from tests.service.test_livechat import CHAT_BOT, Live, live, post, send, start, until
from tests.service.test_livechat_skill import EXAMPLE, finish_manifest, load

__all__ = ["live"]  # the fixture, imported


def example(label: str = "skills/travel.json") -> Given:
    """The example manifest, read and validated as ``botemu serve --manifest`` reads it."""
    manifest = load_manifest_text(EXAMPLE, label)
    return given(manifest.document, label, validate_manifest(manifest))


async def first_frames(live: Live) -> tuple[aiohttp.ClientWebSocketResponse, dict[str, Any]]:
    """A new page, and the frame that follows its ``ready``."""
    ws = await live.connect(token=live.token)
    frame: dict[str, Any] = json.loads((await ws.receive(timeout=10)).data)
    return ws, frame


async def invoke_weather(live: Live, ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    return await send(live, ws, {"type": "invoke", "name": "getWeather",
                                 "value": {"city": "Paris"}})  # fmt: skip


async def test_every_page_gets_the_given_manifest_right_after_ready(live: Live) -> None:
    live.chat.given = example()
    pages = [await first_frames(live) for _ in range(2)]
    for _, frame in pages:
        assert frame["op"] == "manifest" and frame["ref"] is None, frame
        assert frame["name"] == "skills/travel.json"
        assert {a["key"] for a in frame["activities"]} == {"bookFlight", "getWeather", "message"}
        assert set(frame["activities"][0]) >= {"key", "type", "name", "description", "result"}
        assert [f["rule"] for f in frame["findings"]] == ["MF-ENDPOINT-HTTPS"]  # its warning
    picked = await load(pages[0][0], EXAMPLE)  # the same manifest picked in a page: the same menu
    assert picked["activities"] == pages[0][1]["activities"]


async def test_without_a_given_manifest_nothing_follows_ready(live: Live) -> None:
    ws = await live.connect(token=live.token)
    await ws.send_json({"op": "bots", "ref": "b"})
    assert (await until(ws, lambda f: True))["op"] == "bots"


async def test_the_given_manifest_checks_answers_as_if_picked(live: Live) -> None:
    live.chat.given = example()
    ws, _ = await first_frames(live)
    await start(live, ws, CHAT_BOT)
    answer = await invoke_weather(live, ws)
    rules = {(f["rule"], f["severity"]) for f in answer.get("findings", [])}
    assert rules == {("SKILL-INVOKE-RESULT", "error")}, answer


async def test_a_page_picks_another_or_forgets_it_for_itself_only(live: Live) -> None:
    live.chat.given = example()
    first, _ = await first_frames(live)
    second, _ = await first_frames(live)
    for ws in (first, second):
        await start(live, ws, CHAT_BOT)
    other = await load(first, finish_manifest())  # another manifest, for the first page
    assert "finish" in {a["key"] for a in other["activities"]}
    await post(live, first, {"type": "event", "name": "finish", "value": {"n": 1}})
    checked = await until(first, lambda f: f["op"] == "findings")
    assert [f["rule"] for f in checked["findings"]] == ["SKILL-EOC-RESULT"]
    await first.send_json({"op": "manifest", "ref": "x", "text": None})
    forgotten = await until(first, lambda f: f.get("ref") == "x")
    assert (forgotten["op"], forgotten["activities"]) == ("manifest", None)
    assert "findings" not in await invoke_weather(live, first)  # nothing to check against
    assert "findings" in await invoke_weather(live, second)  # the other page keeps the given one
    _, frame = await first_frames(live)  # and a new page starts with it
    assert frame["op"] == "manifest" and frame["name"] == "skills/travel.json"
