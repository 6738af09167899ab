"""The log view's exploration routes in process (``emulator/logview/explorations.py``): the list
and one exploration over a real crawl of the reference IVR bot, ids and prefixes, bad parameters,
the vendored layout library (served, licensed, shipped, and free of eval), and the security
headers and Host check every answer of the log view has.

The call-flow page itself is driven in Chromium by ``test_browser_flow.py``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.guard import protect
from emulator.logview import standalone_app
from emulator.logview.explorations import VENDOR, VENDORED
from emulator.logview.routes import CSP, STATIC
from emulator.transcripts.store import TranscriptStore
from tests.logview.conftest import load_example
from tests.logview.explored import MARKUP, explore, hostile

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[[web.Application], Awaitable[Client]]
ROOT = Path(__file__).resolve().parents[2]
API = "/_logview/api"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    with TranscriptStore(tmp_path / "t.db") as s:
        yield s


@pytest.fixture
async def client(aiohttp_client: ClientFactory, store: TranscriptStore) -> Client:
    return await aiohttp_client(standalone_app(store, interval=0.02))


async def crawl_ivr(store: TranscriptStore, max_choices: int = 5) -> dict[str, Any]:
    """The reference IVR bot, served in this process, explored into ``store``."""
    server = TestServer(load_example("ivr_bot").make_app())
    await server.start_server()
    try:
        return await explore(store, str(server.make_url("/api/calls")), max_choices=max_choices)
    finally:
        await server.close()


async def test_the_list_and_one_exploration_of_a_real_crawl(
    client: Client, store: TranscriptStore
) -> None:
    empty = await (await client.get(f"{API}/explorations")).json()
    assert empty == {"total": 0, "limit": 50, "offset": 0, "explorations": []}
    document = await crawl_ivr(store, max_choices=2)
    saved = store.save_exploration(document, started=1234.5)
    listing = await client.get(f"{API}/explorations")
    assert listing.status == 200 and listing.headers["Content-Security-Policy"] == CSP
    page = await listing.json()
    assert page["total"] == 1
    (row,) = page["explorations"]
    assert row["id"] == saved and row["short_id"] == saved[:12] and row["started"] == 1234.5
    counts = (len(document["states"]), len(document["edges"]), document["calls"])
    assert (row["states"], row["edges"], row["calls"]) == counts
    assert row["warnings"] == 2 and row["errors"] == 0  # the two menus: long above 2 choices
    assert row["bot"] == document["bot"]

    one = await client.get(f"{API}/explorations/{saved[:10]}")  # a unique prefix
    assert one.status == 200
    body = await one.json()
    assert body["exploration"] == row
    assert body["document"] == document
    assert body["rules"]["EXPLORE-LONG-MENU"]["severity"] == "warning"
    assert "explore" in body["rules"]["EXPLORE-LONG-MENU"]["source"]
    calls = {c.id for c in store.calls(limit=500)}
    assert {e["call_id"] for e in document["edges"]} <= calls  # every move's call is there


async def test_a_page_of_explorations_newest_first(client: Client, store: TranscriptStore) -> None:
    ids = [store.save_exploration({"bot": f"b{i}"}, started=float(i)) for i in range(5)]
    page = await (await client.get(f"{API}/explorations?limit=2&offset=1")).json()
    assert page["total"] == 5 and (page["limit"], page["offset"]) == (2, 1)
    assert [e["id"] for e in page["explorations"]] == [ids[3], ids[2]]


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=501", "limit=x", "offset=-1", "offset=1.5", "limit=" + "9" * 300]
)
async def test_bad_parameters_are_400_with_a_short_message(client: Client, query: str) -> None:
    response = await client.get(f"{API}/explorations?{query}")
    assert response.status == 400
    message = (await response.json())["error"]
    assert "whole number" in message and len(message) < 200


async def test_unknown_and_ambiguous_ids(client: Client, store: TranscriptStore) -> None:
    ids = [store.save_exploration({"bot": "b"}) for _ in range(40)]
    missing = await client.get(f"{API}/explorations/{'z' * 400}")
    assert missing.status == 404
    assert "no exploration" in (await missing.json())["error"]
    assert len(await missing.text()) < 300  # the id is not echoed whole
    firsts = [i[0] for i in ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    ambiguous = await client.get(f"{API}/explorations/{shared}")
    assert ambiguous.status == 400 and "ambiguous" in (await ambiguous.json())["error"]
    assert (await client.get(f"{API}/explorations/{ids[0]}/nothing")).status == 404
    refused = await client.post(f"{API}/explorations", data=b"{}")
    assert refused.status == 405  # the log view only reads


async def test_markup_in_a_document_comes_back_as_json_data(
    client: Client, store: TranscriptStore
) -> None:
    document = hostile(await crawl_ivr(store))
    saved = store.save_exploration(document)
    response = await client.get(f"{API}/explorations/{saved}")
    assert response.content_type == "application/json"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert (await response.json())["document"] == document
    assert MARKUP in (await response.json())["document"]["states"][0]["prompts"]


# --- the vendored layout library -----------------------------------------------------------------


async def test_the_vendored_library_is_served_with_its_type_and_the_page_headers(
    client: Client,
) -> None:
    script = await client.get("/_logview/static/vendor/dagre.min.js")
    assert script.status == 200 and script.content_type == "text/javascript"
    assert script.headers["Content-Security-Policy"] == CSP
    assert await script.read() == (VENDOR / "dagre.min.js").read_bytes()
    license_text = await (await client.get("/_logview/static/vendor/LICENSE")).text()
    assert "Permission is hereby granted" in license_text and "Chris Pettitt" in license_text
    for bad in ("README.md", "..%2Froutes.py", "dagre.js", "x" * 5000, "%2E%2E"):
        assert (await client.get(f"/_logview/static/vendor/{bad}")).status == 404
    assert (await client.get("/_logview/static/vendor%2Fdagre.min.js")).status == 404


def test_the_vendored_library_needs_no_eval_and_is_the_published_file() -> None:
    """The page's policy allows no eval: the library must not need it. It is @dagrejs/dagre's
    dist/dagre.min.js, unchanged, with graphlib bundled and its license beside it."""
    code = (VENDOR / "dagre.min.js").read_text(encoding="utf-8")
    for sink in ("eval(", "new Function", "Function(", "innerHTML", "document.write", "import("):
        assert sink not in code, sink
    assert code.startswith('"use strict";var dagre=(()=>')  # a classic script: the global dagre
    assert "graphlib" in code
    assert set(VENDORED) <= {p.name for p in VENDOR.iterdir()}
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    import hashlib

    assert hashlib.sha256(code.encode("utf-8")).hexdigest() in readme


def test_the_vendored_files_are_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["emulator"]
    for name in VENDORED:
        path = (VENDOR / name).relative_to(ROOT / "emulator").as_posix()
        assert any(Path(path).match(p) and "**" not in p for p in patterns), (path, patterns)


def test_the_page_loads_the_library_only_from_its_own_address() -> None:
    code = (STATIC / "flowsvg.js").read_text(encoding="utf-8")
    assert re.search(r"script\.src = `\$\{BASE\}/static/vendor/dagre\.min\.js`", code)
    elsewhere = code.replace("'http://www.w3.org/2000/svg'", "")  # a namespace, not an address
    assert "http://" not in elsewhere and "https://" not in elsewhere


# --- the guard ---------------------------------------------------------------------------------


async def test_another_host_reads_no_exploration(store: TranscriptStore) -> None:
    saved = store.save_exploration({"bot": "b"})
    app = standalone_app(store)
    protect(app, port=9071, bind_host="127.0.0.1")
    client: Client = TestClient(TestServer(app))
    await client.start_server()
    try:
        for path in (f"{API}/explorations", f"{API}/explorations/{saved}",
                     "/_logview/static/vendor/dagre.min.js"):  # fmt: skip
            evil = await client.get(path, headers={"Host": "evil.example"})
            assert evil.status in (400, 403, 421), (path, evil.status)
            assert "Access-Control-Allow-Origin" not in evil.headers
            assert saved not in await evil.text()
            good = await client.get(path, headers={"Host": "127.0.0.1:9071"})
            assert good.status == 200, path
            assert "Access-Control-Allow-Origin" not in good.headers
    finally:
        await client.close()
