"""emulator/guard.py: a web page in the developer's browser cannot drive botemu, nor read it.

Each test is named after the attack it stops. The attacker's requests are made here the way a
browser would send them: with the page's ``Origin`` (``http://evil.example``), as ``text/plain``
(a "simple" request that needs no CORS preflight), or, after DNS rebinding, with the attacker's
own name in ``Host``. tests/logview/test_browser_guard.py does the same from a real browser.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from emulator.calling.caller import CallerScript
from emulator.calling.session import CallSettings, place_call
from emulator.config import BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.guard import (
    SECRET_FILE,
    SECRET_HEADER,
    Guard,
    control_headers,
    protect,
    read_secret,
    split_host,
)
from emulator.logview import standalone_app
from emulator.service import EMULATOR, USER, make_app
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.support import LoopbackServers, free_port

APP_ID = "11111111-2222-3333-4444-555555555555"
EVIL = "http://evil.example"


@dataclass
class Botemu:
    config: ServiceConfig
    app: web.Application
    store: TranscriptStore

    @property
    def url(self) -> str:
        return self.config.base_url

    @property
    def secret(self) -> str:
        return read_secret(self.config.certs_dir)

    def conversation(self) -> str:
        """A conversation, as a chat would leave one: what a reset would forget."""
        return self.app[EMULATOR].connector.open_conversation(APP_ID, dict(USER)).id

    def knows(self, conversation_id: str) -> bool:
        try:
            self.app[EMULATOR].connector.conversation(conversation_id)
        except Exception:
            return False
        return True


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[LoopbackServers]:
    s = LoopbackServers(tmp_path)
    try:
        yield s
    finally:
        await s.close()


async def start(servers: LoopbackServers, **options: Any) -> Botemu:
    config = ServiceConfig(port=free_port(), certs_dir=servers.tmp_path / "certs",
                           bots=(BotRegistration(APP_ID, "pw", None),), **options)  # fmt: skip
    store = TranscriptStore(servers.tmp_path / f"t-{config.port}.db")
    app = make_app(config, store)
    await servers.serve(app, config.port)
    servers._stores.append(store)
    return Botemu(config, app, store)


@pytest.fixture
async def botemu(servers: LoopbackServers) -> Botemu:
    return await start(servers)


async def send(method: str, url: str, **kwargs: Any) -> tuple[int, str, dict[str, str]]:
    async with aiohttp.ClientSession() as http, http.request(method, url, **kwargs) as response:
        return response.status, await response.text(), dict(response.headers)


# --- a page on another origin --------------------------------------------------------------------


async def test_a_page_on_another_origin_cannot_reset(botemu: Botemu) -> None:
    kept = botemu.conversation()
    # fetch(url, {method: "POST", mode: "no-cors", body: "{}"}): text/plain, the page's Origin
    status, text, _ = await send("POST", f"{botemu.url}/_botemu/reset", data="{}",
                                 headers={"Origin": EVIL, "Content-Type": "text/plain"})  # fmt: skip
    assert status == 403 and "Origin 'http://evil.example' is not allowed" in text
    # a form post (application/x-www-form-urlencoded), and JSON, as if a preflight had passed
    for content_type in ("application/x-www-form-urlencoded", "application/json"):
        status, _, _ = await send("POST", f"{botemu.url}/_botemu/reset", data="{}",
                                  headers={"Origin": EVIL, "Content-Type": content_type})  # fmt: skip
        assert status == 403
    # without the secret, even with no Origin at all (a request not made by a browser)
    status, text, _ = await send("POST", f"{botemu.url}/_botemu/reset", json={})
    assert status == 403 and SECRET_HEADER in text
    assert botemu.knows(kept)


async def test_a_page_on_another_origin_cannot_rotate_keys(botemu: Botemu) -> None:
    keys = botemu.app[EMULATOR].identity.keys
    before = [k.kid for k in keys.published()]
    for headers in ({"Origin": EVIL, "Content-Type": "text/plain"},
                    {"Origin": EVIL, "Content-Type": "application/json", SECRET_HEADER: "guess"},
                    {"Content-Type": "application/json"}):  # fmt: skip
        status, _, _ = await send("POST", f"{botemu.url}/_botemu/keys/rotate", data="{}",
                                  headers=headers)  # fmt: skip
        assert status == 403, headers
    assert [k.kid for k in keys.published()] == before


async def test_a_page_on_another_origin_cannot_mint_a_token(botemu: Botemu) -> None:
    body = f'{{"app_id": "{APP_ID}"}}'
    for path in ("/_botemu/token", "/_botemu/calling/token", "/_botemu/chat", "/_botemu/bots",
                 "/_botemu/probe/auth", "/_botemu/manifest/check"):  # fmt: skip
        status, text, _ = await send("POST", botemu.url + path, data=body,
                                     headers={"Origin": EVIL, "Content-Type": "text/plain"})  # fmt: skip
        assert status == 403, path
        assert "token" not in text.lower(), path
        status, text, _ = await send("POST", botemu.url + path, data=body,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        assert status == 403 and "access_token" not in text, path


async def test_botemus_own_origin_and_its_clients_may(botemu: Botemu) -> None:
    headers = control_headers(botemu.config.certs_dir)
    for origin in (None, botemu.url, f"http://localhost:{botemu.config.port}"):
        extra = {"Origin": origin} if origin else {}
        status, text, _ = await send("POST", f"{botemu.url}/_botemu/token",
                                     json={"app_id": APP_ID}, headers={**headers, **extra})  # fmt: skip
        assert status == 200 and "access_token" in text, origin
    # another port of the same host is another origin
    status, _, _ = await send("POST", f"{botemu.url}/_botemu/token", json={"app_id": APP_ID},
                              headers={**headers, "Origin": "http://127.0.0.1:1"})  # fmt: skip
    assert status == 403


async def test_text_plain_post_is_refused(botemu: Botemu) -> None:
    kept = botemu.conversation()
    status, text, _ = await send("POST", f"{botemu.url}/_botemu/reset", data="{}",
                                 headers={SECRET_HEADER: botemu.secret,
                                          "Content-Type": "text/plain"})  # fmt: skip
    assert status == 415 and "application/json" in text
    assert botemu.knows(kept)
    status, _, _ = await send("POST", f"{botemu.url}/_botemu/reset", json={},
                              headers={SECRET_HEADER: botemu.secret})  # fmt: skip
    assert status == 200 and not botemu.knows(kept)


async def test_a_preflight_is_never_granted(botemu: Botemu) -> None:
    for path in ("/_botemu/reset", "/_botemu/token", "/_logview/api/calls", "/v3/conversations"):
        status, _, headers = await send("OPTIONS", botemu.url + path, headers={
            "Origin": EVIL, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-botemu-secret",
        })  # fmt: skip
        assert status >= 400, path
        assert not [h for h in headers if h.lower().startswith("access-control-")], path
    _, _, headers = await send("GET", f"{botemu.url}/_logview/api/calls",
                               headers={"Origin": EVIL})  # fmt: skip
    assert "Access-Control-Allow-Origin" not in headers


# --- DNS rebinding -------------------------------------------------------------------------------


async def test_dns_rebinding_host_is_refused(botemu: Botemu) -> None:
    """evil.example resolved to 127.0.0.1: the page's requests are same-origin to the browser,
    but they carry its own name."""
    rebound = f"evil.example:{botemu.config.port}"
    for method, path in (("GET", "/"), ("GET", "/_logview/api/calls"), ("GET", "/_botemu/config"),
                         ("GET", "/_identity/keys"), ("POST", "/_botemu/token")):  # fmt: skip
        headers = {"Host": rebound, SECRET_HEADER: botemu.secret}  # even with the secret
        status, text, _ = await send(method, botemu.url + path, json={"app_id": APP_ID},
                                     headers=headers)  # fmt: skip
        assert status == 403, path
        assert text.startswith(f"Host {rebound!r} is not allowed: botemu answers only to "
                               "127.0.0.1, localhost, [::1]")  # fmt: skip
        assert text.rstrip().endswith(f"add --allow-host {rebound}")
    # a loopback name on another port is not this botemu either
    status, _, _ = await send(
        "GET", f"{botemu.url}/_botemu/config", headers={"Host": "localhost:1"}
    )
    assert status == 403
    for host in (f"localhost:{botemu.config.port}", f"[::1]:{botemu.config.port}"):
        status, _, _ = await send("GET", f"{botemu.url}/_botemu/config", headers={"Host": host})
        assert status == 200, host


async def test_allow_host_lets_a_compose_service_name_in(servers: LoopbackServers) -> None:
    botemu = await start(servers, allow_hosts=("botemu", "other.local:8000"))
    for host, expected in (("botemu", 200), ("botemu:9070", 200), ("BOTEMU:1", 200),
                           ("other.local:8000", 200), ("other.local:8001", 403),
                           ("botemu2:9070", 403)):  # fmt: skip
        status, _, _ = await send("GET", f"{botemu.url}/_botemu/config", headers={"Host": host})
        assert status == expected, host
    # the Origin of an allowed name is botemu's own
    status, _, _ = await send("POST", f"{botemu.url}/_botemu/token", json={"app_id": APP_ID},
                              headers={**control_headers(botemu.config.certs_dir),
                                       "Host": "botemu:9070", "Origin": "http://botemu:9070"})  # fmt: skip
    assert status == 200


async def test_the_platform_api_still_works_for_bots_under_an_allowed_name(
    servers: LoopbackServers,
) -> None:
    """A bot in compose reaches botemu as botemu:9070: token endpoint, metadata, keys, connector
    and the CRL, with no secret and no JSON rule, exactly as before."""
    botemu = await start(servers, allow_hosts=("botemu",))
    host = {"Host": f"botemu:{botemu.config.port}"}
    p = botemu.config.placeholders()
    status, _, _ = await send("GET", p.openid_metadata_url, headers=host)
    assert status == 200
    status, _, _ = await send("GET", p.jwks_uri, headers=host)
    assert status == 200
    form = {"grant_type": "client_credentials", "client_id": APP_ID, "client_secret": "pw",
            "scope": p.connector_scope}  # fmt: skip
    async with aiohttp.ClientSession() as http:
        async with http.post(p.token_url, data=form, headers=host) as response:
            assert response.status == 200
            token = (await response.json())["access_token"]
        conversation = botemu.conversation()
        async with http.post(f"{botemu.url}/v3/conversations/{conversation}/activities",
                             json={"type": "message", "text": "hi"},
                             headers={**host, "Authorization": f"Bearer {token}"}) as response:  # fmt: skip
            assert response.status in (200, 201), await response.text()
    status, _, _ = await send("GET", f"{botemu.url}/_botemu/pki/crl", headers=host)
    assert status in (200, 404)  # 404: no CA in this directory; never the guard's 403
    status, _, _ = await send("POST", f"{botemu.url}/_botemu/pki/ocsp", data=b"x",
                              headers={**host, "Content-Type": "application/ocsp-request"})  # fmt: skip
    assert status != 403 and status != 415


# --- the calling platform cannot be turned on botemu itself -----------------------------------------


async def test_a_callback_to_botemus_own_reset_does_nothing(
    botemu: Botemu, servers: LoopbackServers
) -> None:
    """A bot answers with a Workflow whose callback is botemu's /_botemu/reset: the platform
    posts the result there (JSON, no Origin: the secret alone stops it)."""
    kept = botemu.conversation()
    reset = f"{botemu.url}/_botemu/reset"

    async def calls(request: web.Request) -> web.Response:
        return web.json_response({
            "actions": [
                {"operationId": "answer-1", "action": "answer"},
                {"operationId": "menu-1", "action": "recognize",
                 "playPrompt": {"prompts": [{"value": "Press 1"}]},
                 "choices": [{"name": "one", "dtmfVariation": "1"}]},
            ],
            "links": {"callback": reset},
        })  # fmt: skip

    bot = web.Application()
    bot.router.add_post("/api/calls", calls)
    bot_url = await servers.serve(bot, free_port()) + "/api/calls"
    settings = CallSettings(bot_url=bot_url, caller=CallerScript.from_inline("press 1"),
                            allow_http=True)  # fmt: skip
    report = await place_call(settings, botemu.store)
    responses = [e.payload for e in botemu.store.events(report.call_id)
                 if e.kind == EventKind.HTTP_RESPONSE]  # fmt: skip
    assert 403 in [r.get("status") for r in responses]
    assert botemu.knows(kept)


# --- the secret ----------------------------------------------------------------------------------


async def test_the_secret_file_is_written_0600_per_run(botemu: Botemu) -> None:
    path = botemu.config.certs_dir / SECRET_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(botemu.secret) >= 43
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(f".{SECRET_FILE}")] == []


async def test_two_botemus_sharing_a_directory_both_answer_its_clients(
    servers: LoopbackServers,
) -> None:
    first, second = await start(servers), await start(servers)
    for botemu in (first, second):  # the file holds the second's secret now
        status, _, _ = await send("POST", f"{botemu.url}/_botemu/token", json={"app_id": APP_ID},
                                  headers=control_headers(botemu.config.certs_dir))  # fmt: skip
        assert status == 200


def test_a_missing_secret_is_one_line_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(BotemuError) as caught:
        control_headers(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / SECRET_FILE) in message


async def test_the_log_view_alone_answers_to_its_own_names_only(
    servers: LoopbackServers,
) -> None:
    port = free_port()
    store = TranscriptStore(servers.tmp_path / "lv.db")
    servers._stores.append(store)
    app = standalone_app(store)
    protect(app, port=port, bind_host="127.0.0.1", allow_hosts=("viewer",))
    url = await servers.serve(app, port)
    assert (await send("GET", f"{url}/_logview/api/calls"))[0] == 200
    assert (await send("GET", f"{url}/_logview/api/calls", headers={"Host": "viewer"}))[0] == 200
    status, text, _ = await send("GET", f"{url}/_logview/api/calls",
                                 headers={"Host": f"evil.example:{port}"})  # fmt: skip
    assert status == 403 and "--allow-host" in text
    assert not (servers.tmp_path / SECRET_FILE).exists()


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1:9070", ("127.0.0.1", 9070)),
        ("LocalHost", ("localhost", None)),
        ("[::1]:9070", ("::1", 9070)),
        ("[::1]", ("::1", None)),
        ("::1", None),
        ("host:0", None),
        ("host:99999", None),
        ("host:x", None),
        ("[::1]x", None),
        ("", None),
    ],
)
def test_split_host(value: str, parsed: tuple[str, int | None] | None) -> None:
    assert split_host(value) == parsed


def test_an_unspecified_bind_address_adds_no_name() -> None:
    guard = Guard(port=9070, bind_host="0.0.0.0", secret="s")
    assert guard.host_allowed("127.0.0.1:9070", None, "http")
    assert not guard.host_allowed("0.0.0.0:9070", None, "http")
    assert guard.host_allowed("172.18.0.3:9070", ("172.18.0.3", 9070), "http")  # its own address
    assert Guard(port=80).host_allowed("localhost", None, "http")
    assert not Guard(port=9070).host_allowed("localhost", None, "http")


def test_a_guard_parses_its_own_settings_once_and_answers_as_before() -> None:
    guard = Guard(port=9070, bind_host="[::FFFF:10.0.0.7]", allow_hosts=("viewer", "x:81", "[bad"))
    for _ in range(2):  # the second time from what the first parsed
        assert guard.host_allowed("viewer:1234", None, "http")
        assert guard.host_allowed("X:81", None, "http")
        assert not guard.host_allowed("x:82", None, "http")
        assert not guard.host_allowed("[bad", None, "http")
        assert guard.host_allowed("[::ffff:10.0.0.7]:9070", None, "http")
        assert not guard.host_allowed("[::ffff:10.0.0.7]:9071", None, "http")
        assert guard.host_allowed("10.1.1.1:9071", ("10.1.1.1", 9071), "http")
    assert guard == Guard(port=9070, bind_host="[::FFFF:10.0.0.7]",
                          allow_hosts=("viewer", "x:81", "[bad"))  # fmt: skip
