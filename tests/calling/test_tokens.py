"""The Bearer token on every calling request (field notes, Calling: HTTP, last point): where it
comes from (``emulator.calling.tokens``), and that each request of a call carries a valid one."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.session import CallSettings, place_call
from emulator.calling.tokens import (
    LocalTokens,
    RemoteTokens,
    TokenUnavailable,
    local_tokens,
    resolve,
)
from emulator.config import BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.guard import SECRET_HEADER, control_headers, write_secret
from emulator.httpio import SIGNATURE_REMOVED, redact_authorization
from emulator.identity.bearer import REFRESH_BEFORE, BotTokens
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import Expectation, validate
from emulator.service import make_app
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.bots.calling_bots import STATE, make_bot

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
APP_ID = "0c2f9b1e-5d4a-4b7e-9a3c-7e1f2d3c4b5a"
FAST = RetryPolicy(attempts=3, backoff=0.01, timeout=5.0)


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def expectation(config: ServiceConfig, app_id: str = APP_ID) -> Expectation:
    """What a bot requires of a calling token: the connector issuer, its own app id."""
    return Expectation(issuers=(config.placeholders().connector_issuer,), audiences=(app_id,))


def claims_of(token: str) -> dict[str, object]:
    return jwt.decode(token, options={"verify_signature": False})


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


# --- where the token comes from -----------------------------------------------------------------


def test_a_calling_token_is_the_connector_token_without_serviceurl(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path)
    clock = Clock()
    keys = KeyStore(tmp_path, clock=clock)
    tokens = BotTokens(keys, config.placeholders(), clock=clock)
    token, expires = tokens.calling(APP_ID)
    claims = validate(token, keys, expectation(config), now=clock.now)
    assert claims["iss"] == config.placeholders().connector_issuer
    assert claims["aud"] == APP_ID
    assert "serviceurl" not in claims
    assert expires == clock.now + tokens.lifetime
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256" and header["kid"] == keys.current().kid


def test_a_calling_token_is_cached_and_renewed_before_it_expires(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path)
    clock = Clock()
    tokens = BotTokens(KeyStore(tmp_path, clock=clock), config.placeholders(), clock=clock)
    first, expires = tokens.calling(APP_ID)
    clock.now = expires - REFRESH_BEFORE - 1
    assert tokens.calling(APP_ID)[0] == first
    clock.now = expires - REFRESH_BEFORE + 1
    renewed, later = tokens.calling(APP_ID)
    assert renewed != first and later > expires


async def test_local_tokens_sign_with_the_keys_of_the_state_directory(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path)
    source = local_tokens(config, APP_ID)
    async with aiohttp.ClientSession() as http:
        token = await source.token(http)
    validate(token, KeyStore(tmp_path), expectation(config), now=claims_of(token)["nbf"])  # type: ignore[arg-type]
    assert str(tmp_path) in source.origin


async def test_remote_tokens_come_from_the_running_botemu_and_are_cached(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    config = ServiceConfig(port=0, certs_dir=tmp_path / "certs")
    served = await aiohttp_server(make_app(config, TranscriptStore(tmp_path / "s.db")))
    asked: list[str] = []

    @web.middleware
    async def count(
        request: web.Request, handler: Callable[..., Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        asked.append(request.path)
        return await handler(request)

    proxy = web.Application(middlewares=[count])  # counts what reaches botemu

    async def forward(request: web.Request) -> web.Response:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                served.make_url(request.path),
                data=await request.read(),
                headers={
                    "Content-Type": "application/json",
                    SECRET_HEADER: request.headers.get(SECRET_HEADER, ""),
                },
            ) as answer,
        ):
            return web.Response(status=answer.status, body=await answer.read(),
                                content_type="application/json")  # fmt: skip

    proxy.router.add_post("/_botemu/calling/token", forward)
    front = await aiohttp_server(proxy)
    clock = Clock(time.time())
    source = RemoteTokens(str(front.make_url("")), APP_ID, clock=clock, certs=tmp_path / "certs")
    async with aiohttp.ClientSession() as http:
        token = await source.token(http)
        assert await source.token(http) == token
        assert asked == ["/_botemu/calling/token"]
        clock.now += 3600  # past the renewal time: asked again
        await source.token(http)
    assert len(asked) == 2
    validate(token, KeyStore(tmp_path / "certs"), expectation(config), now=clock.now - 3600)


async def test_remote_tokens_from_a_botemu_that_stopped_answering(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    down = await aiohttp_server(web.Application())  # answers 404 to the control route
    write_secret(tmp_path, "its-secret")
    source = RemoteTokens(str(down.make_url("")), APP_ID, certs=tmp_path)
    async with aiohttp.ClientSession() as http:
        with pytest.raises(TokenUnavailable, match="HTTP 404"):
            await source.token(http)


async def test_the_control_route_refuses_a_missing_or_oversized_app_id(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    config = ServiceConfig(port=0, certs_dir=tmp_path)
    served = await aiohttp_server(make_app(config, TranscriptStore(tmp_path / "s.db")))
    async with aiohttp.ClientSession() as http:
        for body in ({}, {"app_id": ""}, {"app_id": 7}, {"app_id": "x" * 257}):
            async with http.post(served.make_url("/_botemu/calling/token"), json=body,
                                 headers=control_headers(tmp_path)) as r:  # fmt: skip
                assert r.status == 400, body


# --- resolve: what the command line picks, with no flags in the common case ----------------------


async def test_resolve_with_no_token() -> None:
    found = await resolve(bot_url="http://127.0.0.1:1/api/calls", app_id=APP_ID, no_token=True)
    assert found.tokens is None and "--no-token" in found.note


async def test_resolve_takes_the_registered_bots_app_id_from_a_running_botemu(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    bot_url = "http://127.0.0.1:8080/api/calls"
    config = ServiceConfig(port=0, certs_dir=tmp_path, bots=(
        BotRegistration("other", "pw", "http://127.0.0.1:3978/api/messages"),
        BotRegistration(APP_ID, "pw", calling_endpoint=bot_url + "/"),
    ))  # fmt: skip
    served = await aiohttp_server(make_app(config, TranscriptStore(tmp_path / "s.db")))
    found = await resolve(bot_url=bot_url, emulator=str(served.make_url("")))
    assert isinstance(found.tokens, RemoteTokens)
    assert found.app_id == APP_ID and found.tokens.app_id == APP_ID
    unknown = await resolve(bot_url="http://127.0.0.1:9/x", emulator=str(served.make_url("")))
    assert unknown.tokens is None and "no app id" in unknown.note  # two bots, none at that URL


async def test_resolve_refuses_an_emulator_given_that_does_not_answer() -> None:
    with pytest.raises(BotemuError, match=r"no botemu answers at http://127\.0\.0\.1:1 "):
        await resolve(bot_url="http://127.0.0.1:2/x", app_id=APP_ID, emulator="http://127.0.0.1:1")


async def test_resolve_without_a_botemu_signs_with_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("emulator.calling.tokens.DEFAULT_EMULATOR", "http://127.0.0.1:1")
    found = await resolve(bot_url="http://127.0.0.1:2/x", app_id=APP_ID, certs=tmp_path)
    assert isinstance(found.tokens, LocalTokens)
    assert "start botemu serve" in found.note
    nothing = await resolve(bot_url="http://127.0.0.1:2/x", certs=tmp_path)
    assert nothing.tokens is None and "--app-id" in nothing.note


def test_the_transcript_keeps_a_token_without_its_signature() -> None:
    token = "aGVhZA.Y2xhaW1z.c2lnbmF0dXJl"
    assert redact_authorization(f"Bearer {token}") == f"Bearer aGVhZA.Y2xhaW1z.{SIGNATURE_REMOVED}"
    assert redact_authorization("Bearer short") == "Bearer short"
    assert redact_authorization("Basic " + "x" * 40).endswith("…")


# --- every request of a call carries it -------------------------------------------------------------


async def test_every_request_of_a_call_carries_a_valid_token_retries_included(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    config = ServiceConfig(certs_dir=tmp_path)
    app = make_bot("flaky")  # answers each message's first attempt with 500
    server = await aiohttp_server(app)
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), retry=FAST, seed=3,
                            caller=CallerScript.from_inline("press 1; hangup"), app_id=APP_ID,
                            tokens=local_tokens(config, APP_ID))  # fmt: skip
    report = await place_call(settings, store)
    received = app[STATE].received
    ids = [r.headers["X-Platform-Message-ID"] for r in received]
    assert len(ids) > len(set(ids)) >= 2  # retries happened
    keys = KeyStore(tmp_path)
    for request in received:
        scheme, _, token = request.headers["Authorization"].partition(" ")
        assert scheme == "Bearer"
        validate(token, keys, expectation(config), now=claims_of(token)["nbf"])  # type: ignore[arg-type]
    results = [json.loads(r.body) for r in received if "participants" not in json.loads(r.body)]
    assert results and all(r["appId"] == APP_ID for r in results)
    events = store.events(report.call_id)
    notes = [e.payload["summary"] for e in events if e.kind == EventKind.NOTE]
    assert any(f"Bearer token for app id {APP_ID}" in str(n) for n in notes)
    for event in events:
        if event.kind in ("http.request", "http.response"):
            text = json.dumps(event.payload)
            assert token.split(".")[2] not in text  # the signature is never stored
            if event.kind == "http.request":
                assert event.payload["headers"]["Authorization"].endswith(SIGNATURE_REMOVED)  # type: ignore[index]


async def test_no_tokens_sends_no_authorization_header(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    server = await aiohttp_server(app)
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), retry=FAST,
                            caller=CallerScript.from_inline("hangup"))  # fmt: skip
    await place_call(settings, store)
    assert app[STATE].received
    assert all("Authorization" not in r.headers for r in app[STATE].received)


@pytest.mark.parametrize(
    ("tokens", "app_id", "hint"),
    [
        (True, APP_ID, f"a Bearer token for app id {APP_ID}"),
        (False, None, "no Authorization header was sent: give the bot's app id with --app-id"),
        (False, APP_ID, "no Authorization header was sent: --no-token"),
    ],
)
async def test_a_refusal_says_what_token_was_sent(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    tmp_path: Path,
    tokens: bool,
    app_id: str | None,
    hint: str,
) -> None:
    server = await aiohttp_server(make_bot("refuse"))  # 403 to everything
    source = local_tokens(ServiceConfig(certs_dir=tmp_path), APP_ID) if tokens else None
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")), retry=FAST, tokens=source, app_id=app_id
    )
    report = await place_call(settings, store)
    assert report.end_reason is EndReason.BOT_REFUSED
    message = next(f.message for f in report.findings if f.rule == "CALL-HTTP-STATUS")
    assert hint in message


async def test_a_token_that_cannot_be_had_is_a_note_and_the_call_goes_on(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    down = await aiohttp_server(web.Application())
    app = make_bot("ok")
    server = await aiohttp_server(app)
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), retry=FAST,
                            caller=CallerScript.from_inline("hangup"),
                            tokens=RemoteTokens(str(down.make_url("")), APP_ID))  # fmt: skip
    report = await place_call(settings, store)
    notes = [
        str(e.payload["summary"]) for e in store.events(report.call_id) if e.kind == EventKind.NOTE
    ]
    assert any(n.startswith("sent without a token: no calling token from") for n in notes)
    assert all("Authorization" not in r.headers for r in app[STATE].received)
