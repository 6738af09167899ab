"""The log view's HTTP surface in process: the JSON API, the exports, the event stream, the
security headers, the static files, the query plans of a 10,000-call list, and ``botemu logview``.

The browser tests (``test_browser.py``) drive the page; these drive what it stands on.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import socket
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from emulator.calling.events import EndReason
from emulator.cli.logview import open_store, register, serve
from emulator.config import ServiceConfig
from emulator.demo import Endpoints, introduction
from emulator.jsonutil import JSON
from emulator.logview import LOGVIEW, standalone_app
from emulator.logview import feed as feed_module
from emulator.logview.feed import Poller
from emulator.logview.routes import CSP, STATIC
from emulator.service import make_app
from emulator.transcripts.store import EventKind, TranscriptStore

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[[web.Application], Awaitable[Client]]

BOT = "https://bot.example/api/calls"
APP_ID = "11111111-2222-3333-4444-555555555555"
API = "/_logview/api"
WAIT = 5.0
"""Seconds any wait on the server may take before the test fails (never a timing assertion)."""


class Clock:
    """Wall clock for tests: 1000.0, 1001.0, ... one step per reading, so order is certain."""

    def __init__(self) -> None:
        self.now = 999.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    with TranscriptStore(tmp_path / "t.db", clock=Clock()) as s:
        yield s


@pytest.fixture
async def client(aiohttp_client: ClientFactory, store: TranscriptStore) -> Client:
    return await aiohttp_client(standalone_app(store, interval=0.02))


def place(
    store: TranscriptStore,
    *,
    bot: str = BOT,
    reason: str | None = "caller hung up",
    findings: tuple[str, ...] = (),
    kind: str = "call",
    call_id: str | None = None,
    scenario: str | None = None,
    passed: bool | None = None,
) -> str:
    """A call with a start, one exchange, the given findings (severities) and an end."""
    cid = store.start(bot=bot, caller="8:alice", chain_id="chain-1", scenario=scenario,
                      kind=kind, call_id=call_id)  # fmt: skip
    store.append(cid, EventKind.CALL_START, {"summary": "call", "bot": bot}, vtime=0.0)
    store.append(cid, EventKind.HTTP_REQUEST, {
        "summary": "→ Conversation", "method": "POST", "url": bot, "body": '{"id":"x"}',
        "headers": {"X-Platform-Message-ID": "m1", "X-Platform-Chain-ID": "chain-1"},
        "message_id": "m1", "attempt": 1, "label": "Conversation",
    }, vtime=0.0)  # fmt: skip
    for severity in findings:
        store.append(cid, EventKind.FINDING, {
            "summary": "finding", "rule": "WF-CALLBACK-HTTPS", "severity": severity,
            "where": "$.links.callback", "message": "callback uses http",
        }, vtime=0.1)  # fmt: skip
    if reason is not None:
        store.append(cid, EventKind.CALL_END, {"summary": "ended", "reason": reason}, vtime=3.2)
        store.finish(cid, reason=reason, passed=passed)
    return cid


async def get_json(client: Client, path: str, status: int = 200) -> Any:
    response = await client.get(path)
    assert response.status == status, await response.text()
    assert response.content_type == "application/json"
    return await response.json()


# --- the list ----------------------------------------------------------------------------------


async def test_an_empty_database_lists_nothing(client: Client) -> None:
    assert await get_json(client, f"{API}/calls") == {
        "total": 0, "limit": 50, "offset": 0, "calls": [],
    }  # fmt: skip


async def test_calls_come_newest_first_one_page_at_a_time(
    client: Client, store: TranscriptStore
) -> None:
    ids = [place(store) for _ in range(7)]
    newest = ids[::-1]
    page = await get_json(client, f"{API}/calls?limit=3")
    assert page["total"] == 7
    assert [c["id"] for c in page["calls"]] == newest[:3]
    page = await get_json(client, f"{API}/calls?limit=3&offset=6")
    assert [c["id"] for c in page["calls"]] == newest[6:]
    assert (await get_json(client, f"{API}/calls?offset=50"))["calls"] == []
    summary = (await get_json(client, f"{API}/calls?limit=1"))["calls"][0]
    assert summary == store.calls(limit=1)[0].to_json() | {"short_id": newest[0][:12]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("text=SALES", {"sales"}, id="text"),
        pytest.param("reason=bot+hung+up", {"bot-hangs-up"}, id="reason"),
        pytest.param("has_findings=1", {"warned", "failed"}, id="findings"),
        pytest.param("has_findings=0", {"sales", "bot-hangs-up", "running", "chat"}, id="none"),
        pytest.param("kind=conversation", {"chat"}, id="kind"),
        pytest.param(
            "kind=call&has_findings=1&reason=caller+hung+up", {"warned", "failed"}, id="together"
        ),
        pytest.param(
            "text=&reason=&has_findings=&kind=",
            {"sales", "bot-hangs-up", "warned", "failed", "running", "chat"},
            id="empty-values",
        ),
    ],
)
async def test_filters(
    client: Client, store: TranscriptStore, query: str, expected: set[str]
) -> None:
    place(store, call_id="sales", scenario="Sales menu")
    place(store, call_id="bot-hangs-up", reason="bot hung up")
    place(store, call_id="warned", findings=("warning",))
    place(store, call_id="failed", findings=("error", "info"))
    place(store, call_id="running", reason=None)
    place(store, call_id="chat", kind="conversation", reason="scenario finished")
    page = await get_json(client, f"{API}/calls?{query}")
    assert {c["id"] for c in page["calls"]} == expected
    assert page["total"] == len(expected)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(f"{API}/calls?limit=0", id="limit-0"),
        pytest.param(f"{API}/calls?limit=501", id="limit-501"),
        pytest.param(f"{API}/calls?limit=ten", id="limit-text"),
        pytest.param(f"{API}/calls?offset=-1", id="offset-negative"),
        pytest.param(f"{API}/calls?has_findings=maybe", id="has-findings"),
        pytest.param(f"{API}/calls?kind=phone", id="kind"),
        pytest.param(f"{API}/calls/known?after=-2", id="after"),
        pytest.param(f"{API}/calls/known/events/first/blob", id="seq"),
        pytest.param(f"{API}/calls/known/export?format=xml", id="format"),
        pytest.param(f"{API}/calls/known/export?format=transcript", id="transcript-of-a-call"),
        pytest.param(f"{API}/calls/ab", id="ambiguous-prefix"),
    ],
)
async def test_bad_parameters_are_400_with_a_json_error(
    client: Client, store: TranscriptStore, path: str
) -> None:
    place(store, call_id="known")
    place(store, call_id="abc1")
    place(store, call_id="abd2")
    body = await get_json(client, path, status=400)
    assert set(body) == {"error"} and body["error"]


# --- one call ----------------------------------------------------------------------------------


async def test_a_call_with_its_events_and_the_rules_of_its_findings(
    client: Client, store: TranscriptStore
) -> None:
    cid = place(store, findings=("warning",), scenario="menu", passed=True)
    detail = await get_json(client, f"{API}/calls/{cid}")
    assert detail["call"]["id"] == cid and detail["call"]["passed"] is True
    assert detail["call"]["short_id"] == cid[:12]
    assert detail["events"] == [e.to_json() for e in store.events(cid)]
    rule = detail["rules"]["WF-CALLBACK-HTTPS"]
    assert rule["source"] and rule["summary"] and rule["severity"] == "error"
    assert "activities" not in detail
    later = await get_json(client, f"{API}/calls/{cid}?after=2")
    assert [e["seq"] for e in later["events"]] == [3, 4]
    assert (await get_json(client, f"{API}/calls/{cid[:8]}"))["call"]["id"] == cid


async def test_a_running_call_has_no_end_yet(client: Client, store: TranscriptStore) -> None:
    cid = place(store, reason=None)
    call = (await get_json(client, f"{API}/calls/{cid}"))["call"]
    assert call["ended"] is None and call["end_reason"] is None


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(f"{API}/calls/nope", id="call"),
        pytest.param(f"{API}/calls/nope/events/1/blob", id="blob"),
        pytest.param(f"{API}/calls/nope/export?format=json", id="export"),
        pytest.param(f"{API}/calls/nope/export?format=transcript", id="transcript"),
        pytest.param(f"{API}/nothing/here", id="route"),
    ],
)
async def test_unknown_ids_are_404_with_a_json_error(
    client: Client, store: TranscriptStore, path: str
) -> None:
    body = await get_json(client, path, status=404)
    assert set(body) == {"error"} and body["error"]
    place(store)  # and the same with calls in the database
    assert (await get_json(client, path, status=404))["error"]


async def test_the_api_only_reads(client: Client, store: TranscriptStore) -> None:
    cid = place(store)
    for path in (f"{API}/calls", f"{API}/calls/{cid}", f"{API}/anything"):
        response = await client.post(path, json={})
        assert response.status == 405
        assert "only reads" in (await response.json())["error"]
    assert store.count() == 1


# --- blobs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "served"),
    [
        pytest.param("audio/wav", "audio/wav", id="wav"),
        pytest.param("audio/x-ms-wma", "audio/x-ms-wma", id="wma"),
        pytest.param("audio/mpeg", "audio/mpeg", id="mp3"),
        pytest.param(None, "application/octet-stream", id="none"),
        pytest.param("text/html", "application/octet-stream", id="never-html"),
    ],
)
async def test_a_blob_is_served_with_its_content_type(
    client: Client, store: TranscriptStore, given: str | None, served: str
) -> None:
    cid = place(store)
    payload: dict[str, JSON] = {"summary": "recording", "recording": True}
    if given is not None:
        payload["content_type"] = given
    seq = store.append(cid, EventKind.PLATFORM, payload, blob=b"RIFF....WAVE" * 10)
    response = await client.get(f"{API}/calls/{cid}/events/{seq}/blob")
    assert response.status == 200
    assert response.headers["Content-Type"] == served
    assert await response.read() == b"RIFF....WAVE" * 10
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("inline" if served.startswith("audio/") else "attachment")


async def test_a_blob_is_served_in_ranges_for_the_audio_element(
    client: Client, store: TranscriptStore
) -> None:
    cid = place(store)
    seq = store.append(
        cid, EventKind.PLATFORM, {"content_type": "audio/wav"}, blob=bytes(range(100))
    )
    url = f"{API}/calls/{cid}/events/{seq}/blob"
    response = await client.get(url, headers={"Range": "bytes=10-19"})
    assert response.status == 206
    assert response.headers["Content-Range"] == "bytes 10-19/100"
    assert await response.read() == bytes(range(10, 20))
    assert await (await client.get(url, headers={"Range": "bytes=-5"})).read() == bytes(
        range(95, 100)
    )
    beyond = await client.get(url, headers={"Range": "bytes=200-"})
    assert beyond.status == 416 and beyond.headers["Content-Range"] == "bytes */100"


async def test_an_event_without_a_blob_is_404(client: Client, store: TranscriptStore) -> None:
    cid = place(store)
    for seq in (1, 99, 0):
        body = await get_json(client, f"{API}/calls/{cid}/events/{seq}/blob", status=404)
        assert "no blob" in body["error"]


# --- exports -----------------------------------------------------------------------------------


async def test_a_call_exports_as_the_stores_json(client: Client, store: TranscriptStore) -> None:
    cid = place(store)
    store.append(cid, EventKind.PLATFORM, {"content_type": "audio/wav"}, blob=b"\x00\x01")
    response = await client.get(f"{API}/calls/{cid}/export?format=json")
    assert response.status == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{cid}.json"'
    assert json.loads(await response.read()) == store.export(cid)
    default = await client.get(f"{API}/calls/{cid}/export")
    assert json.loads(await default.read()) == store.export(cid)


def conversation(store: TranscriptStore) -> str:
    """A conversation as the emulator records one: its posts to the bot (with the bot's answer
    last) and the bot's requests to the connector (each answered by the next event)."""
    cid = store.start(kind="conversation", bot=APP_ID, call_id="conv-1", caller="user-1")
    store.append(cid, EventKind.NOTE, {"summary": "conversation conv-1"})

    def to_bot(activity: dict[str, JSON], status: int = 200) -> None:
        store.append(cid, EventKind.HTTP_REQUEST, {
            "summary": "→ bot", "method": "POST", "url": "http://bot/api/messages",
            "headers": {"Authorization": "Bearer eyJ…"}, "body": activity, "token": "connector",
        })  # fmt: skip
        bot_answers.append(status)

    def from_bot(method: str, path: str, body: JSON, status: int, answer: str) -> None:
        store.append(cid, EventKind.HTTP_REQUEST, {
            "summary": "← bot", "method": method, "path": path, "app_id": APP_ID,
            "headers": {"Host": "127.0.0.1:9070"}, "body": json.dumps(body),
        })  # fmt: skip
        store.append(
            cid, EventKind.HTTP_RESPONSE, {"status": status, "headers": {}, "body": answer}
        )

    def bot_answer() -> None:
        store.append(cid, EventKind.HTTP_RESPONSE,
                     {"status": bot_answers.pop(0), "body": "", "latency_ms": 3.0})  # fmt: skip

    bot_answers: list[int] = []
    base = "/v3/conversations/conv-1/activities"
    to_bot({"type": "conversationUpdate", "id": "u1", "from": {"id": "user-1", "role": "user"}})
    from_bot("POST", base, {"type": "message", "text": "Welcome"}, 200, '{"id":"w1"}')
    bot_answer()
    to_bot({"type": "message", "id": "u2", "text": "hello", "from": {"id": "user-1"}})
    from_bot("POST", f"{base}/u2", {"type": "message", "text": "<b>no</b>"}, 403, "{}")
    from_bot("PUT", f"{base}/w1", {"type": "message", "text": "edited"}, 200, '{"id":"w1"}')
    from_bot("POST", f"{base}/history", {"activities": [{"type": "message"}]}, 200, "{}")
    from_bot("GET", "/v3/conversations/conv-1/members", None, 200, "[]")
    from_bot("POST", f"{base}/u2", {"type": "message", "text": "echo: hello", "id": "mine",
                                    "replyToId": "u2"}, 200, '{"id":"r1"}')  # fmt: skip
    bot_answer()
    to_bot({"type": "message", "id": "u3", "text": "refused"}, status=401)
    bot_answer()
    store.finish(cid, reason="scenario finished", passed=True)
    return cid


async def test_a_conversation_exports_as_a_transcript_of_its_activities(
    client: Client, store: TranscriptStore
) -> None:
    cid = conversation(store)
    response = await client.get(f"{API}/calls/{cid}/export?format=transcript")
    assert response.status == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{cid}.transcript"'
    activities = json.loads(await response.read())
    assert [(a["type"], a.get("text")) for a in activities] == [
        ("conversationUpdate", None),
        ("message", "Welcome"),
        ("message", "hello"),
        ("message", "echo: hello"),
    ]
    welcome, reply = activities[1], activities[3]
    assert welcome["id"] == "w1"  # the id the connector gave
    assert welcome["from"] == {"id": APP_ID, "role": "bot"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", welcome["timestamp"])
    assert reply["id"] == "mine" and reply["replyToId"] == "u2"  # the bot's own id is kept
    assert activities[0] == {"type": "conversationUpdate", "id": "u1",
                             "from": {"id": "user-1", "role": "user"}}  # fmt: skip


async def test_a_conversation_shows_every_activity_both_ways(
    client: Client, store: TranscriptStore
) -> None:
    cid = conversation(store)
    detail = await get_json(client, f"{API}/calls/{cid}")
    shown = [(a["direction"], a["activity"].get("text"), a["status"]) for a in detail["activities"]]
    assert shown == [
        ("user", None, 200),
        ("bot", "Welcome", 200),
        ("user", "hello", 200),
        ("bot", "<b>no</b>", 403),  # refused by the connector: shown, not in the .transcript
        ("bot", "echo: hello", 200),
        ("user", "refused", 401),
    ]


# --- the event stream --------------------------------------------------------------------------


async def next_event(response: ClientResponse, name: str) -> Any:
    """The data of the next server-sent event called ``name`` (bounded)."""

    async def read() -> Any:
        event = None
        while True:
            line = (await response.content.readline()).decode()
            assert line, "the stream ended"
            line = line.rstrip("\n")
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == name:
                return json.loads(line.removeprefix("data: "))

    return await asyncio.wait_for(read(), WAIT)


async def until(condition: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), WAIT)


async def test_the_stream_tells_of_calls_another_process_writes(
    client: Client, store: TranscriptStore, tmp_path: Path
) -> None:
    feed = client.app[LOGVIEW].feed
    response = await client.get(f"{API}/stream")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert await next_event(response, "hello") == {"live": True}
    with TranscriptStore(tmp_path / "t.db") as other:  # another connection: botemu call elsewhere
        cid = other.start(bot=BOT)
        assert await next_event(response, "calls") == {"id": cid, "seq": 0}
        other.append(cid, EventKind.CALL_START, {"summary": "call"})
        other.append(cid, EventKind.NOTE, {"summary": "Workflow"})
        change = await next_event(response, "calls")
        assert change["id"] == cid and change["seq"] in (1, 2)
        if change["seq"] == 1:
            assert await next_event(response, "calls") == {"id": cid, "seq": 2}
        other.finish(cid, reason="caller hung up")
        assert await next_event(response, "calls") == {"id": cid, "seq": 2}
        other.finish(cid, reason="caller hung up", passed=False)  # the verdict comes later
        assert await next_event(response, "calls") == {"id": cid, "seq": 2}
    store.append(cid, EventKind.NOTE, {"summary": "and the emulator's own store"})
    assert await next_event(response, "calls") == {"id": cid, "seq": 3}
    assert feed.listeners == 1 and feed.polling
    response.close()
    await until(lambda: feed.listeners == 0)
    assert not feed.polling


async def test_the_stream_starts_from_now(client: Client, store: TranscriptStore) -> None:
    place(store)
    response = await client.get(f"{API}/stream")
    await next_event(response, "hello")
    cid = place(store)
    assert (await next_event(response, "calls"))["id"] == cid  # not the call made before


async def test_the_stream_ends_when_the_server_shuts_down(store: TranscriptStore) -> None:
    app = standalone_app(store, interval=0.02)
    server = TestServer(app)
    client: Client = TestClient(server)
    await client.start_server()
    try:
        response = await client.get(f"{API}/stream")
        await next_event(response, "hello")
        await asyncio.wait_for(server.close(), WAIT)
        assert (await asyncio.wait_for(response.content.read(), WAIT)).strip() == b""  # ended
        assert app[LOGVIEW].feed.listeners == 0 and not app[LOGVIEW].feed.polling
    finally:
        await client.close()


async def test_a_store_in_memory_is_not_live(aiohttp_client: ClientFactory) -> None:
    with TranscriptStore(":memory:") as memory:
        client = await aiohttp_client(standalone_app(memory))
        place(memory)
        assert len((await get_json(client, f"{API}/calls"))["calls"]) == 1
        response = await client.get(f"{API}/stream")
        assert await next_event(response, "hello") == {"live": False}
        response.close()


def test_the_feed_watches_running_calls_and_forgets_ended_ones(tmp_path: Path) -> None:
    clock = Clock()
    with TranscriptStore(tmp_path / "t.db") as store:
        old = store.start(bot=BOT)  # running before the feed starts: watched from the start
        poller = Poller(tmp_path / "t.db", clock=clock)
        try:
            assert poller.poll() == {}
            store.count_workflow(old)  # no event, but the row changed
            assert poller.poll() == {old: 0}
            store.finish(old, reason="caller hung up")
            assert poller.poll() == {old: 0}
            clock.now += feed_module.GRACE
            store.start(bot=BOT)
            poller.poll()
            store.finish(old, reason="caller hung up", passed=True)  # after the grace period
            assert poller.poll() == {}
        finally:
            poller.close()


# --- headers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/_logview/static/app.js",
        "/_logview/static/style.css",
        "/_logview/static/nope.js",
        "/_logview/docs/rules.md",
        f"{API}/calls",
        f"{API}/calls?limit=0",
        f"{API}/calls/CID",
        f"{API}/calls/nope",
        f"{API}/calls/CID/events/3/blob",
        f"{API}/calls/CID/events/1/blob",
        f"{API}/calls/CID/export?format=json",
        f"{API}/calls/CID/export?format=xml",
        f"{API}/stream",
        f"{API}/no/such/route",
        "/_logview/nothing",
    ],
)
async def test_every_response_of_the_log_view_forbids_inline_script_and_sniffing(
    client: Client, store: TranscriptStore, path: str
) -> None:
    cid = place(store)
    store.append(cid, EventKind.PLATFORM, {"content_type": "audio/wav"}, blob=b"RIFF")
    response = await client.get(path.replace("CID", cid))
    assert response.headers["Content-Security-Policy"] == CSP
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
    response.close()


# --- the static files --------------------------------------------------------------------------


async def test_the_page_and_its_files_are_served_with_their_types(client: Client) -> None:
    index = await client.get("/")
    assert index.status == 200 and index.content_type == "text/html"
    html = await index.text()
    assert html == (STATIC / "index.html").read_text(encoding="utf-8")
    referenced = re.findall(r'(?:src|href)="/_logview/static/([^"]+)"', html)
    modules = [p.name for p in STATIC.glob("*.js")]
    for name in [*referenced, *modules]:
        response = await client.get(f"/_logview/static/{name}")
        assert response.status == 200, name
        assert response.content_type == {
            ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
        }[Path(name).suffix]  # fmt: skip
    for bad in ("..%2Froutes.py", "routes.py", "missing.js", ".hidden.js"):
        assert (await client.get(f"/_logview/static/{bad}")).status == 404
    home = await client.get("/_logview/", allow_redirects=False)
    assert home.status == 302 and home.headers["Location"] == "/"


def test_the_page_has_no_inline_script_or_style() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    tags = re.findall(r"<script\b[^>]*>", html, flags=re.IGNORECASE)
    assert tags, "the page loads its module"
    for tag in tags:
        assert re.search(r'\bsrc="/_logview/static/[a-z]+\.js"', tag), tag
        assert 'type="module"' in tag, tag
    bodies = re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.IGNORECASE | re.DOTALL)
    assert len(bodies) == len(tags) and not "".join(bodies).strip()  # no inline code
    assert not re.search(r"\son[a-z]+\s*=", html, flags=re.IGNORECASE)  # no handler attributes
    assert not re.search(r"\sstyle\s*=|<style", html, flags=re.IGNORECASE)
    assert "http://" not in html and "https://" not in html  # nothing from a CDN


@pytest.mark.parametrize("name", sorted(p.name for p in STATIC.glob("*.js")))
def test_the_scripts_never_parse_markup(name: str) -> None:
    """Everything from the bot becomes text: no script builds HTML from a string."""
    code = (STATIC / name).read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "srcdoc", "createContextualFragment"):  # fmt: skip
        assert sink not in code, f"{name} uses {sink}"
    for module in re.findall(r"from '\./([a-z]+\.js)'", code):
        assert (STATIC / module).is_file(), f"{name} imports a missing {module}"


def test_the_outcome_menu_offers_every_end_reason() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    values = set(re.findall(r'<option value="([^"]*)"', html))
    assert {r.value for r in EndReason} <= values


async def test_the_rules_page_is_served_as_text(client: Client) -> None:
    response = await client.get("/_logview/docs/rules.md")
    assert response.status == 200 and response.content_type == "text/plain"
    text = await response.text()
    assert text.startswith("# Rules") and "`WF-CALLBACK-HTTPS`" in text


# --- 10,000 calls ------------------------------------------------------------------------------


async def test_a_page_of_ten_thousand_calls_is_read_through_indexes(
    client: Client, store: TranscriptStore, tmp_path: Path
) -> None:
    """Every statement the list's handler runs, for each filter the page offers but the text,
    reads calls through an index and events only by primary key; and so does the live feed.
    (Query plans, not times.)"""
    with TranscriptStore(tmp_path / "t.db", write_behind=True) as writer:
        for i in range(10_000):
            cid = writer.start(bot=f"bot{i % 7}", kind="conversation" if i % 5 == 0 else "call")
            if i % 3:
                writer.finish(cid, reason="bot hung up" if i % 2 else "caller hung up")
            if i % 11 == 0:
                writer.append(cid, EventKind.FINDING, {"severity": "warning", "rule": "X"})
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)  # what the handler runs, values inlined
    try:
        for query in ("", "reason=bot+hung+up", "has_findings=1", "kind=call", "kind=conversation"):
            page = await get_json(client, f"{API}/calls?offset=800&{query}")
            assert len(page["calls"]) == 50
        assert (await get_json(client, f"{API}/calls"))["total"] == 10_000
    finally:
        store._conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 12  # a count and a page each
    feed = [feed_module.EVENTS_AFTER, feed_module.CALLS_AFTER, feed_module.RUNNING,
            feed_module.STATE_OF.format(marks="?"), feed_module.LAST_ROWIDS]  # fmt: skip
    conn = sqlite3.connect(tmp_path / "t.db")
    try:
        for sql in [*selects, *feed]:
            params = [1] * sql.count("?")
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            for step in plan:
                if re.match(r"SCAN (calls|events|e)\b", step):
                    assert " USING " in step, (sql, plan)  # never a scan of the table itself
    finally:
        conn.close()


# --- mounted on the emulator -------------------------------------------------------------------


async def test_the_emulator_serves_the_log_view_and_nothing_else_changes(
    aiohttp_client: ClientFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    client = await aiohttp_client(make_app(ServiceConfig(certs_dir=tmp_path), store))
    place(store)
    page = await client.get("/")
    assert page.status == 200 and page.headers["Content-Security-Policy"] == CSP
    assert (await get_json(client, f"{API}/calls"))["total"] == 1
    health = await client.get("/_botemu/health")
    assert health.status == 200 and "Content-Security-Policy" not in health.headers


def test_the_demo_prints_where_the_log_view_is(tmp_path: Path) -> None:
    endpoints = Endpoints("http://127.0.0.1:9070", "https://127.0.0.1:1/api/calls",
                          "http://127.0.0.1:2/api/messages", APP_ID, "pw", tmp_path,
                          tmp_path / "bots.log")  # fmt: skip
    assert "log view   http://127.0.0.1:9070/" in introduction(endpoints, [])


# --- botemu logview ----------------------------------------------------------------------------


def run_cli(argv: list[str], out: io.StringIO) -> int:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    code: int = args.handler(args, out)
    return code


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "no such file", id="missing"),
        pytest.param(b"", "an empty file", id="empty"),
        pytest.param(b"not sqlite at all, just text" * 10, "not SQLite", id="not-sqlite"),
    ],
)
def test_logview_refuses_a_database_it_cannot_read_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    path = tmp_path / "t.db"
    if content is not None:
        path.write_bytes(content)
    assert run_cli(["logview", "--db", str(path)], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err and len(err.strip().splitlines()) == 1
    assert content is not None or not path.exists()  # never creates one


def test_logview_says_when_the_port_is_taken(
    store: TranscriptStore, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = run_cli(["logview", "--db", str(store.path), "--port", str(port)], io.StringIO())
    assert code == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and len(err.strip().splitlines()) == 1


@pytest.fixture
async def served(store: TranscriptStore) -> AsyncIterator[tuple[str, asyncio.Event]]:
    out, stop = io.StringIO(), asyncio.Event()
    task = asyncio.create_task(serve(open_store(store.path), "127.0.0.1", 0, out, stop))
    await until(lambda: "Ctrl-C stops." in out.getvalue() or task.done())
    match = re.search(r"at (http://127\.0\.0\.1:\d+/)\n", out.getvalue())
    assert match, out.getvalue()
    yield match.group(1), stop
    stop.set()
    assert await asyncio.wait_for(task, WAIT) == 0
    assert out.getvalue().endswith("botemu logview: stopping\n")


async def test_logview_serves_an_existing_database(
    served: tuple[str, asyncio.Event], store: TranscriptStore
) -> None:
    url, _ = served
    cid = place(store)
    import aiohttp

    async with aiohttp.ClientSession() as http:
        async with http.get(url) as page:
            assert page.status == 200 and page.headers["Content-Security-Policy"] == CSP
        async with http.get(f"{url}_logview/api/calls") as listing:
            assert [c["id"] for c in (await listing.json())["calls"]] == [cid]


# --- a call whose writer is gone ----------------------------------------------------------------


async def test_an_interrupted_call_shows_as_interrupted(
    aiohttp_client: ClientFactory, tmp_path: Path
) -> None:
    """A call left running by a writer that is gone is ``interrupted`` when the log view opens
    the file: in the list and in the call's page (the API), and the page renders that state
    apart from a running call (list.js and callpage.js give it its own class)."""
    from emulator.transcripts.store import writer_identity

    path = tmp_path / "t.db"
    with TranscriptStore(path) as writer:
        cid = writer.start(bot=BOT)
        writer.append(cid, EventKind.NOTE, {"summary": "then the writer was killed"}, vtime=1.5)
    dead = await asyncio.create_subprocess_exec("true")
    await dead.wait()
    conn = sqlite3.connect(path)
    with conn:
        _, start = writer_identity()
        gone = f"host/{socket.gethostname()}/run" if not start.startswith("linux/") else start
        conn.execute("UPDATE calls SET writer_pid = ?, writer_start = ? WHERE id = ?",
                     (dead.pid, gone, cid))  # fmt: skip
    conn.close()
    with open_store(path) as store:
        client = await aiohttp_client(standalone_app(store, interval=0.02))
        page = await get_json(client, f"{API}/calls")
        assert [(c["id"], c["end_reason"]) for c in page["calls"]] == [(cid, "interrupted")]
        detail = await get_json(client, f"{API}/calls/{cid}")
        assert detail["call"]["end_reason"] == "interrupted"
        assert detail["events"][-1]["kind"] == "call.end"
    for module in ("list.js", "callpage.js"):
        code = (STATIC / module).read_text(encoding="utf-8")
        assert "'interrupted'" in code, module
    css = (STATIC / "style.css").read_text(encoding="utf-8")
    assert "tr.interrupted" in css and "dd.interrupted" in css
