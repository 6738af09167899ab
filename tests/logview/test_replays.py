"""The log view's "Save as scenario" route in process (``emulator/logview/replays.py``): real calls
to the reference IVR bot, made scenarios through ``GET /_logview/api/calls/{id}/scenario``, as
YAML, as a download and as JSON; its errors; and its security: the Host check, the headers, no
cross-origin read. The page that uses it is driven in ``test_browser_replay.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.guard import protect
from emulator.logview import standalone_app
from emulator.logview.routes import CSP
from emulator.replay import convert
from emulator.runner.runner import Runner, Target
from emulator.scenario.loader import load_scenarios_text
from emulator.scenario.model import Scenario
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.bots.replay_bots import make_app
from tests.bots.xss_bot import PROMPT
from tests.bots.xss_bot import make_bot as make_xss_bot
from tests.support import free_port

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
API = "/_logview/api/calls"
MENU = "For sales, press 1 or say sales."


class Viewer:
    """The log view alone, behind botemu's guard, on a loopback port; a client session."""

    def __init__(self, url: str, http: ClientSession, port: int) -> None:
        self.url, self.http, self.port = url, http, port

    async def get(self, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
        async with self.http.get(self.url + path, headers=headers) as response:
            return response.status, dict(response.headers), await response.read()


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


@pytest.fixture
async def viewer(store: TranscriptStore) -> AsyncIterator[Viewer]:
    port = free_port()
    app = standalone_app(store, interval=0.02)
    protect(app, port=port, bind_host="127.0.0.1")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with ClientSession() as http:
            yield Viewer(f"http://127.0.0.1:{port}", http, port)
    finally:
        await runner.cleanup()
        store.close()


async def place(url: str, store: TranscriptStore, script: str) -> str:
    scenario = Scenario(name="call", caller=CallerScript.from_inline(script),
                        path=Path("call.yaml"), line=1)  # fmt: skip
    async with Runner(Target(bot_url=url), store, seed=5) as runner:
        result = await runner.run(scenario)
    return result.transcript_ids[0]


async def ivr_call(aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path) -> str:
    server = await aiohttp_server(make_app("reference", tmp_path / "voicemail"))
    return await place(str(server.make_url("/api/calls")), store, "press 1; press 1234#")


async def test_a_call_as_yaml_is_the_librarys_scenario_with_the_packages_schema(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path
) -> None:
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    status, headers, body = await viewer.get(f"{API}/{call_id[:8]}/scenario")
    assert status == 200, body
    assert headers["Content-Type"] == "text/yaml; charset=utf-8"
    text = body.decode("utf-8")
    assert text == convert.scenario_of(store, call_id)
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={convert.SCHEMA}"
    assert Path(convert.SCHEMA).is_absolute() and Path(convert.SCHEMA).is_file()
    assert headers["X-Botemu-Verified"] == "true" and headers["X-Botemu-Notes"] == "0"
    assert "Content-Disposition" not in headers
    assert headers["Content-Security-Policy"] == CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store"
    (scenario,) = load_scenarios_text(text, name="replay.yaml")  # a valid scenario
    assert scenario.caller is not None and scenario.caller.steps  # with the caller's steps


async def test_download_is_an_attachment_named_after_the_call(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path
) -> None:
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    status, headers, body = await viewer.get(f"{API}/{call_id}/scenario?strict=1&download=1")
    assert status == 200
    assert headers["Content-Disposition"] == f'attachment; filename="replay-{call_id[:12]}.yaml"'
    assert body.decode() == convert.scenario_of(store, call_id, strict=True)


async def test_json_gives_the_text_its_notes_and_whether_it_was_verified_strict_or_loose(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path
) -> None:
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    documents = {}
    for strict in ("0", "1"):
        async with viewer.http.get(f"{viewer.url}{API}/{call_id}/scenario?format=json&strict={strict}") as r:  # fmt: skip
            assert r.status == 200 and r.content_type == "application/json"
            documents[strict] = await r.json()
    loose, strict_ = documents["0"], documents["1"]
    assert set(loose) == {"id", "short_id", "kind", "strict", "filename", "text", "notes",
                          "verified"}  # fmt: skip
    assert loose["id"] == call_id and loose["short_id"] == call_id[:12]
    assert loose["kind"] == "call" and loose["filename"] == f"replay-{call_id[:12]}.yaml"
    assert loose["verified"] is True and loose["notes"] == []
    assert loose["strict"] is False and strict_["strict"] is True
    assert loose["text"] == convert.scenario_of(store, call_id)
    assert strict_["text"] == convert.scenario_of(store, call_id, strict=True)
    assert '{matches: "^For sales, press \\\\+?' in loose["text"]
    assert f'{{equals: "{MENU}' in strict_["text"] and MENU not in loose["text"]


async def test_a_conversation_is_made_a_messaging_scenario(
    store: TranscriptStore, viewer: Viewer
) -> None:
    cid = store.start(bot="http://127.0.0.1:1/api/messages", kind="conversation")
    store.append(cid, EventKind.HTTP_REQUEST, {"summary": "activity"}, vtime=None)
    store.finish(cid, reason="scenario finished")
    async with viewer.http.get(f"{viewer.url}{API}/{cid}/scenario?format=json") as r:
        document = await r.json()
    assert r.status == 200, document
    assert document["kind"] == "conversation" and document["verified"] is True
    assert "messaging:" in document["text"]


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("strict=maybe", 400, "strict is 1 or 0"),
        ("format=xml", 400, "format is yaml or json"),
        ("format=json&download=1", 400, "download=1 gives the YAML file"),
    ],
)
async def test_bad_parameters_are_400(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path,
    query: str, status: int, words: str,
) -> None:  # fmt: skip
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    async with viewer.http.get(f"{viewer.url}{API}/{call_id}/scenario?{query}") as r:
        assert r.status == status and r.content_type == "application/json"
        assert words in (await r.json())["error"]


async def test_unknown_ambiguous_running_interrupted_and_too_large_are_json_errors(
    store: TranscriptStore, viewer: Viewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = store.start(bot="http://127.0.0.1:1/api/calls", call_id="abc1-running")
    store.append(running, EventKind.CALL_START, {"summary": "call"}, vtime=0.0)
    cut = store.start(bot="http://127.0.0.1:1/api/calls", call_id="abc2-interrupted")
    store.finish(cut, reason="interrupted")
    big = store.start(bot="http://127.0.0.1:1/api/calls", call_id="big")
    for n in range(3):
        store.append(big, EventKind.NOTE, {"summary": f"note {n}"}, vtime=float(n))
    store.finish(big, reason="caller hung up")
    monkeypatch.setattr(convert, "MAX_EVENTS", 2)
    cases = [
        ("nothing-like-it", 404, "no call with id 'nothing-like-it'"),
        ("abc", 400, "ambiguous"),
        (running, 409, "is still running"),
        (cut, 422, "was interrupted"),
        (big, 422, "at most 2 can be replayed"),
    ]
    for wanted, status, words in cases:
        for query in ("", "?format=json", "?download=1"):
            async with viewer.http.get(f"{viewer.url}{API}/{wanted}/scenario{query}") as r:
                assert r.status == status, (wanted, query)
                assert r.content_type == "application/json"
                assert words in (await r.json())["error"], wanted
                assert "Content-Disposition" not in r.headers


async def test_it_only_reads_and_answers_only_a_get(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path
) -> None:
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    before = (store.count(), len(store.events(call_id)))
    async with viewer.http.post(f"{viewer.url}{API}/{call_id}/scenario", data=b"") as r:
        assert r.status == 405
    for _ in range(2):
        assert (await viewer.get(f"{API}/{call_id}/scenario"))[0] == 200
    assert (store.count(), len(store.events(call_id))) == before


async def test_another_origin_or_a_rebound_name_gets_no_yaml(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer, tmp_path: Path
) -> None:
    call_id = await ivr_call(aiohttp_server, store, tmp_path)
    path = f"{API}/{call_id}/scenario"
    # A rebound name (DNS rebinding: the browser thinks it is same-origin): refused outright.
    status, _, body = await viewer.get(path, Host=f"evil.example:{viewer.port}")
    assert status == 403 and b"caller" not in body and b"yaml-language-server" not in body
    # A page on another origin: the answer grants it nothing to read (no CORS, ever).
    for extra in ({"Origin": "http://evil.example"}, {"Origin": "null"}):
        status, headers, _ = await viewer.get(path, **extra)
        assert not [h for h in headers if h.lower().startswith("access-control-")], headers
    async with viewer.http.options(viewer.url + path, headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "GET",
    }) as preflight:  # fmt: skip
        assert "Access-Control-Allow-Origin" not in preflight.headers


async def test_bot_markup_is_in_the_yaml_as_quoted_text_served_as_yaml_not_html(
    aiohttp_server: ServerFactory, store: TranscriptStore, viewer: Viewer
) -> None:
    server = await aiohttp_server(make_xss_bot())
    call_id = await place(str(server.make_url("/api/calls")), store, "press 1")
    status, headers, body = await viewer.get(f"{API}/{call_id}/scenario?strict=1&download=1")
    assert status == 200
    assert headers["Content-Type"].startswith("text/yaml")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert f'"{PROMPT}"' in body.decode()  # quoted in the YAML, as the bot said it
