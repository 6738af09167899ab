"""emulator/identity/bearer.py: the tokens botemu presents to bots, and the token version that
``POST /_botemu/chat`` sends on the emulator path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web

from emulator.config import BotRegistration, Profile, ServiceConfig
from emulator.guard import control_headers
from emulator.identity.bearer import BotTokens, TokenKind
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import Expectation, validate
from tests.support import LoopbackServers, free_port

NOW = 1_750_000_000.0
APP = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def tokens(tmp_path: Path) -> BotTokens:
    config = ServiceConfig(certs_dir=tmp_path)
    return BotTokens(
        KeyStore(tmp_path, clock=lambda: NOW), config.placeholders(), clock=lambda: NOW
    )


def test_emulator_tokens_carry_the_app_id_where_their_version_says(tokens: BotTokens) -> None:
    p = tokens.placeholders
    v1 = tokens.claims(APP, kind=TokenKind.EMULATOR)
    v2 = tokens.claims(APP, kind=TokenKind.EMULATOR, version="2.0")
    assert v1 == {"iss": p.emulator_issuer, "aud": APP, "ver": "1.0", "appid": APP}
    assert v2 == {"iss": p.emulator_issuer, "aud": APP, "ver": "2.0", "azp": APP}
    connector = tokens.claims(APP, service_url=p.base_url, kind=TokenKind.CONNECTOR, version="2.0")
    assert connector == {"iss": p.connector_issuer, "aud": APP, "serviceurl": p.base_url}


def test_each_version_is_cached_apart(tokens: BotTokens) -> None:
    v1 = tokens.token(APP, kind=TokenKind.EMULATOR)
    v2 = tokens.token(APP, kind=TokenKind.EMULATOR, version="2.0")
    assert v1 != v2
    assert tokens.token(APP, kind=TokenKind.EMULATOR, version="2.0") == v2
    expect = Expectation((tokens.placeholders.emulator_issuer,), (APP,), appid=APP)
    assert validate(v2, tokens.keys, expect, now=NOW)["azp"] == APP


def test_v30_emulator_tokens_of_both_versions_carry_the_legacy_audience(tmp_path: Path) -> None:
    p = ServiceConfig(certs_dir=tmp_path, profile=Profile.V30).placeholders()
    tokens = BotTokens(KeyStore(tmp_path), p, Profile.V30)
    for version in ("1.0", "2.0"):
        claims = tokens.claims(APP, kind=TokenKind.EMULATOR, version=version)
        assert claims["aud"] == p.legacy_audience


# --- POST /_botemu/chat {"token": "emulator", "version"} -----------------------------------------


class Bot:
    """A bot that answers 200 and keeps the claims of every token it was sent."""

    def __init__(self) -> None:
        self.claims: list[dict[str, Any]] = []

    def app(self) -> web.Application:
        async def messages(request: web.Request) -> web.Response:
            token = request.headers["Authorization"].removeprefix("Bearer ")
            self.claims.append(jwt.decode(token, options={"verify_signature": False}))
            return web.Response(status=200)

        app = web.Application()
        app.router.add_post("/api/messages", messages)
        return app


@pytest.fixture
async def chat(tmp_path: Path) -> AsyncIterator[tuple[ServiceConfig, Bot]]:
    servers = LoopbackServers(tmp_path)
    bot, bot_port = Bot(), free_port()
    config = ServiceConfig(
        port=free_port(),
        certs_dir=tmp_path / "certs",
        bots=(BotRegistration(APP, "pw", f"http://127.0.0.1:{bot_port}/api/messages"),),
    )
    try:
        await servers.serve(bot.app(), bot_port)
        await servers.serve_emulator(config)
        yield config, bot
    finally:
        await servers.close()


async def post_chat(config: ServiceConfig, body: dict[str, Any]) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{config.base_url}/_botemu/chat",
            json={"app_id": APP, **body},
            headers=control_headers(config.certs_dir),
        ) as response,
    ):
        return response.status, await response.text()


@pytest.mark.parametrize(
    ("body", "ver", "claim"),
    [
        pytest.param({"token": "emulator"}, "1.0", "appid", id="default"),
        pytest.param({"token": "emulator", "version": "1.0"}, "1.0", "appid", id="1.0"),
        pytest.param({"token": "emulator", "version": "2.0"}, "2.0", "azp", id="2.0"),
    ],
)
async def test_chat_sends_emulator_tokens_of_the_version_asked(
    chat: tuple[ServiceConfig, Bot], body: dict[str, Any], ver: str, claim: str
) -> None:
    config, bot = chat
    status, text = await post_chat(config, {"text": "hi", **body})
    assert status == 200, text
    # The conversationUpdate that opens the conversation, then the message: the same token.
    assert len(bot.claims) == 2
    for claims in bot.claims:
        assert (claims["ver"], claims[claim], claims["iss"]) == (
            ver,
            APP,
            config.placeholders().emulator_issuer,
        )
        assert ({"appid", "azp"} - {claim}).isdisjoint(claims)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param({"token": "emulator", "version": "3.0"}, '"1.0" (appid) or "2.0"', id="3.0"),
        pytest.param({"token": "emulator", "version": 2}, '"1.0" (appid) or "2.0"', id="number"),
        pytest.param({"version": "2.0"}, "version is for emulator-path tokens", id="connector"),
    ],
)
async def test_chat_refuses_a_version_it_cannot_send(
    chat: tuple[ServiceConfig, Bot], body: dict[str, Any], message: str
) -> None:
    config, bot = chat
    status, text = await post_chat(config, {"text": "hi", **body})
    assert (status, message in text) == (400, True), text
    assert bot.claims == []
