"""Tests of examples/echo_bot.py, the reference messaging bot.

The bot is standalone (it does not import ``emulator``), so it is imported by path. These tests do
not use botemu's identity or connector either: ``FakePlatform`` is a tiny aiohttp app that plays
both. It serves the two OpenID metadata documents and their key sets, a token endpoint, and a
connector that records every activity posted to it. Tokens are minted here with PyJWT and RSA keys
made with ``cryptography``. The bot's clock is injected, so expiry and cache ages take no time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support import load_module

ROOT = Path(__file__).resolve().parents[2]
JsonObject = dict[str, Any]


def _load_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "echo_bot.py", "echo_bot")


echo = _load_bot()

APP_ID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
PASSWORD = "pa55-w0rd-never-logged"
CONNECTOR_ISSUER = "https://connector.example/issuer"
EMULATOR_ISSUER = "https://idp.example/connector-tenant/"
LEGACY_AUDIENCE = "api://graph.example"
SCOPE = "api://connector.example/.default"
NOW = 1_700_000_000.0
SKEW = 300

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
ClientFactory = Callable[[web.Application], Awaitable[TestClient[web.Request, web.Application]]]


def _rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


CONNECTOR_KEY = _rsa_key()  # kid "k1", in the connector's key set
ROTATED_KEY = _rsa_key()  # kid "k2", published only when a test rotates keys
EMULATOR_KEY = _rsa_key()  # kid "e1", in the identity provider's (emulator path) key set
ROGUE_KEY = _rsa_key()  # never published


def jwk(key: rsa.RSAPrivateKey, kid: str, **extra: Any) -> JsonObject:
    """The public JWK of ``key``, shaped like the platform's: kty, use, kid, x5t, n, e."""
    doc: JsonObject = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # x5t is the SHA-1 thumbprint of the key's certificate; there is none here, and the bot does
    # not use x5t, so a thumbprint of the key stands in for it.
    x5t = _b64(hashlib.sha1(der).digest())
    return {**doc, "use": "sig", "kid": kid, "x5t": x5t, **extra}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- The fake identity service and connector ------------------------------------------------------


@dataclass
class Posted:
    path: str
    conversation: str
    reply_to: str | None
    authorization: str | None
    body: JsonObject


@dataclass
class FakePlatform:
    """Identity service and connector in one app. Everything the bot asks of it is recorded."""

    connector_keys: list[JsonObject] = field(default_factory=lambda: [jwk(CONNECTOR_KEY, "k1")])
    emulator_keys: list[JsonObject] = field(default_factory=lambda: [jwk(EMULATOR_KEY, "e1")])
    token_lifetime: int = 3600
    connector_status: int = 200
    keys_status: int = 200
    base_url: str = ""
    gets: list[str] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    token_content_types: list[str] = field(default_factory=list)
    posted: list[Posted] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_routes(
            [
                web.get("/connector/.well-known/openidconfiguration", self.connector_metadata),
                web.get("/connector/keys", self.keys),
                web.get("/idp/v2.0/.well-known/openid-configuration", self.idp_metadata),
                web.get("/idp/keys", self.keys),
                web.post("/idp/oauth2/v2.0/token", self.token),
                web.post("/v3/conversations/{conversation}/activities", self.activity),
                web.post("/v3/conversations/{conversation}/activities/{reply_to}", self.activity),
            ]
        )
        return app

    def gets_of(self, path: str) -> int:
        return self.gets.count(path)

    @staticmethod
    def _metadata(issuer: str, jwks_uri: str) -> JsonObject:
        return {
            "issuer": issuer,
            "authorization_endpoint": "https://idp.example/authorize",
            "jwks_uri": jwks_uri,
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        }

    async def connector_metadata(self, request: web.Request) -> web.Response:
        self.gets.append(request.path)
        return web.json_response(
            self._metadata(CONNECTOR_ISSUER, f"{self.base_url}/connector/keys")
        )

    async def idp_metadata(self, request: web.Request) -> web.Response:
        self.gets.append(request.path)
        return web.json_response(self._metadata(EMULATOR_ISSUER, f"{self.base_url}/idp/keys"))

    async def keys(self, request: web.Request) -> web.Response:
        self.gets.append(request.path)
        if self.keys_status != 200:
            return web.json_response({"error": "unavailable"}, status=self.keys_status)
        keys = self.connector_keys if request.path.startswith("/connector") else self.emulator_keys
        return web.json_response({"keys": keys})

    async def token(self, request: web.Request) -> web.Response:
        form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        self.token_requests.append(form)
        self.token_content_types.append(request.content_type)
        if form.get("client_id") != APP_ID or form.get("client_secret") != PASSWORD:
            return web.json_response({"error": "invalid_client"}, status=401)
        return web.json_response(
            {
                "token_type": "Bearer",
                "expires_in": self.token_lifetime,
                "ext_expires_in": self.token_lifetime,
                "access_token": f"access-{len(self.token_requests)}",
            }
        )

    async def activity(self, request: web.Request) -> web.Response:
        self.posted.append(
            Posted(
                path=request.raw_path,
                conversation=request.match_info["conversation"],
                reply_to=request.match_info.get("reply_to"),
                authorization=request.headers.get("Authorization"),
                body=await request.json(),
            )
        )
        if self.connector_status != 200:
            return web.json_response(
                {"error": {"code": "ServiceError"}}, status=self.connector_status
            )
        return web.json_response({"id": f"reply-{len(self.posted)}"})


class FakeClock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Env:
    """One fake platform, one bot under test, and helpers to talk to it."""

    platform: FakePlatform
    clock: FakeClock
    bot: TestClient[web.Request, web.Application]
    make_bot: Callable[..., Awaitable[TestClient[web.Request, web.Application]]]

    @property
    def service_url(self) -> str:
        return self.platform.base_url

    def activity(self, **changes: Any) -> JsonObject:
        doc: JsonObject = {
            "type": "message",
            "id": "act-1",
            "channelId": "webchat",
            "serviceUrl": self.service_url,
            "from": {"id": "user-1", "name": "Ada"},
            "recipient": {"id": f"28:{APP_ID}", "name": "echo"},
            "conversation": {"id": "conv-1"},
            "text": "hello",
        }
        doc.update(changes)
        return doc

    def connector_claims(self, **changes: Any) -> JsonObject:
        claims: JsonObject = {
            "iss": CONNECTOR_ISSUER,
            "aud": APP_ID,
            "nbf": int(self.clock.now) - 10,
            "exp": int(self.clock.now) + 3600,
            "serviceurl": self.service_url,
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def emulator_claims(self, **changes: Any) -> JsonObject:
        claims: JsonObject = {
            "iss": EMULATOR_ISSUER,
            "aud": APP_ID,
            "nbf": int(self.clock.now) - 10,
            "exp": int(self.clock.now) + 3600,
            "ver": "1.0",
            "appid": APP_ID,
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def connector_token(
        self, *, key: rsa.RSAPrivateKey = CONNECTOR_KEY, kid: str = "k1", **changes: Any
    ) -> str:
        return sign(self.connector_claims(**changes), key, kid)

    def emulator_token(
        self, *, key: rsa.RSAPrivateKey = EMULATOR_KEY, kid: str = "e1", **changes: Any
    ) -> str:
        return sign(self.emulator_claims(**changes), key, kid)

    async def post(
        self,
        authorization: str | None,
        activity: JsonObject | None = None,
        *,
        bot: TestClient[web.Request, web.Application] | None = None,
    ) -> tuple[int, JsonObject | None]:
        headers = {} if authorization is None else {"Authorization": authorization}
        client = bot or self.bot
        response = await client.post(
            "/api/messages", json=activity or self.activity(), headers=headers
        )
        body = await response.read()
        return response.status, (json.loads(body) if body else None)


def sign(claims: JsonObject, key: rsa.RSAPrivateKey, kid: str, **headers: Any) -> str:
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid, **headers})


def bearer(token: str) -> str:
    return f"Bearer {token}"


def settings_for(platform: FakePlatform, **changes: Any) -> Any:
    values: JsonObject = {
        "app_id": APP_ID,
        "app_password": PASSWORD,
        "token_url": f"{platform.base_url}/idp/oauth2/v2.0/token",
        "connector_scope": SCOPE,
        "openid_metadata_url": f"{platform.base_url}/connector/.well-known/openidconfiguration",
        "connector_issuer": CONNECTOR_ISSUER,
        "idp_openid_url": f"{platform.base_url}/idp/v2.0/.well-known/openid-configuration",
        "emulator_issuer": EMULATOR_ISSUER,
    }
    values.update(changes)
    return echo.Settings(**values)


@pytest.fixture
async def env(aiohttp_server: ServerFactory, aiohttp_client: ClientFactory) -> Env:
    platform = FakePlatform()
    server = await aiohttp_server(platform.app())
    platform.base_url = str(server.make_url("")).rstrip("/")
    clock = FakeClock()

    async def make_bot(**changes: Any) -> TestClient[web.Request, web.Application]:
        return await aiohttp_client(echo.make_app(settings_for(platform, **changes), clock=clock))

    return Env(platform, clock, await make_bot(), make_bot)


def assert_nothing_sent(env: Env) -> None:
    assert env.platform.posted == []
    assert env.platform.token_requests == []


# --- The happy path ------------------------------------------------------------------------------


async def test_a_valid_connector_token_gets_an_echo_through_the_connector(env: Env) -> None:
    status, body = await env.post(bearer(env.connector_token()))

    assert (status, body) == (200, None)
    assert env.platform.token_requests == [
        {
            "grant_type": "client_credentials",
            "client_id": APP_ID,
            "client_secret": PASSWORD,
            "scope": SCOPE,
        }
    ]
    assert env.platform.token_content_types == ["application/x-www-form-urlencoded"]
    [posted] = env.platform.posted
    assert posted.path == "/v3/conversations/conv-1/activities/act-1"
    assert posted.authorization == "Bearer access-1"
    assert posted.body == {
        "type": "message",
        "text": "echo: hello",
        "from": {"id": f"28:{APP_ID}", "name": "echo"},
        "recipient": {"id": "user-1", "name": "Ada"},
        "conversation": {"id": "conv-1"},
        "replyToId": "act-1",
    }


async def test_ids_are_escaped_in_the_reply_path(env: Env) -> None:
    activity = env.activity(id="act|1", conversation={"id": "a:conv/1;messageid=2"})

    status, _ = await env.post(bearer(env.connector_token()), activity)

    assert status == 200
    [posted] = env.platform.posted
    assert (posted.conversation, posted.reply_to) == ("a:conv/1;messageid=2", "act|1")


async def test_secrets_never_reach_the_log(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token = env.connector_token()

    await env.post(bearer(token))
    await env.post(bearer("x" + token))  # rejected: its reason is logged

    assert env.platform.posted
    for secret in (PASSWORD, token, "access-1"):
        assert secret not in caplog.text


# --- Each rule broken on its own -----------------------------------------------------------------

Case = Callable[[Env], tuple[str | None, JsonObject]]


def _tampered(env: Env) -> str:
    header, _, signature = env.connector_token().split(".")
    payload = _b64(json.dumps(env.connector_claims(exp=int(env.clock.now) + 99_999)).encode())
    return f"{header}.{payload}.{signature}"


def _alg_none(env: Env) -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "k1"}).encode())
    return f"{header}.{_b64(json.dumps(env.connector_claims()).encode())}."


def _hs256_with_public_key(env: Env) -> str:
    # The classic key-confusion attack: an HMAC keyed with the published RSA public key (PEM).
    secret = CONNECTOR_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    payload = _b64(json.dumps(env.connector_claims()).encode())
    signature = _b64(hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


def _endorsed_for_teams_only(env: Env) -> tuple[str | None, JsonObject]:
    env.platform.connector_keys = [jwk(CONNECTOR_KEY, "k1", endorsements=["msteams"])]
    return bearer(env.connector_token()), env.activity(channelId="webchat")


REJECTED: list[Any] = [
    pytest.param(lambda e: (None, e.activity()), "no Bearer token", id="missing-header"),
    pytest.param(
        lambda e: (f"Basic {base64.b64encode(b'a:b').decode()}", e.activity()),
        "no Bearer token",
        id="basic-scheme",
    ),
    pytest.param(lambda e: ("Bearer", e.activity()), "no Bearer token", id="bearer-without-token"),
    pytest.param(lambda e: ("Bearer not-a-jwt", e.activity()), "not a JWT", id="malformed"),
    pytest.param(
        lambda e: ("Bearer e30.e30.e30.e30", e.activity()), "not a JWT", id="four-segments"
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(iss="https://evil.example/")), e.activity()),
        "issuer",
        id="wrong-iss",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(iss=None)), e.activity()), "issuer", id="no-iss"
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(aud="someone-else")), e.activity()),
        "audience",
        id="wrong-aud",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(aud=[APP_ID, "someone-else"])), e.activity()),
        "audience",
        id="aud-list",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(aud=LEGACY_AUDIENCE)), e.activity()),
        "audience",
        id="legacy-aud-on-connector-path",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(exp=int(e.clock.now) - SKEW - 1)), e.activity()),
        "expired",
        id="expired-beyond-skew",
    ),
    pytest.param(lambda e: (bearer(e.connector_token(exp=None)), e.activity()), "exp", id="no-exp"),
    pytest.param(
        lambda e: (bearer(e.connector_token(exp="tomorrow")), e.activity()),
        "exp",
        id="exp-not-a-number",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(nbf=int(e.clock.now) + SKEW + 1)), e.activity()),
        "not valid yet",
        id="nbf-future",
    ),
    pytest.param(
        lambda e: (bearer(_tampered(e)), e.activity()), "signature", id="tampered-payload"
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(kid="k9")), e.activity()),
        "not in the connector key set",
        id="unknown-kid",
    ),
    pytest.param(
        lambda e: (
            bearer(jwt.encode(e.connector_claims(), CONNECTOR_KEY, algorithm="RS256")),
            e.activity(),
        ),
        "no kid",
        id="no-kid",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(key=ROGUE_KEY)), e.activity()),
        "signature",
        id="signed-by-a-key-not-in-the-jwks",
    ),
    pytest.param(
        lambda e: (bearer(e.connector_token(key=EMULATOR_KEY, kid="e1")), e.activity()),
        "not in the connector key set",
        id="signed-by-the-other-paths-key",
    ),
    pytest.param(lambda e: (bearer(_alg_none(e)), e.activity()), "alg", id="alg-none"),
    pytest.param(
        lambda e: (bearer(_hs256_with_public_key(e)), e.activity()),
        "alg",
        id="hs256-with-the-public-key",
    ),
    pytest.param(_endorsed_for_teams_only, "not endorsed", id="endorsement-mismatch"),
    pytest.param(
        lambda e: (bearer(e.connector_token(serviceurl=e.service_url + "/")), e.activity()),
        "serviceurl",
        id="serviceurl-claim-trailing-slash",
    ),
    pytest.param(
        lambda e: (
            bearer(e.connector_token()),
            e.activity(serviceUrl="https://connector.example/"),
        ),
        "serviceurl",
        id="serviceurl-claim-mismatch",
    ),
    # The emulator path (spec, Local test emulator to bot).
    pytest.param(
        lambda e: (bearer(e.emulator_token(appid="someone-else")), e.activity()),
        "appid",
        id="emulator-wrong-appid",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(appid=None)), e.activity()),
        "appid",
        id="emulator-missing-appid",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(ver="2.0")), e.activity()),
        "azp",
        id="emulator-ver-2-with-appid-not-azp",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(ver="1.0", appid=None, azp=APP_ID)), e.activity()),
        "appid",
        id="emulator-ver-1-with-azp-not-appid",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(ver="3.0")), e.activity()),
        "version",
        id="emulator-unknown-ver",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(aud=LEGACY_AUDIENCE)), e.activity()),
        "audience",
        id="emulator-v31-with-legacy-aud",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(key=CONNECTOR_KEY, kid="k1")), e.activity()),
        "not in the emulator key set",
        id="emulator-signed-by-a-connector-key",
    ),
    pytest.param(
        lambda e: (bearer(e.emulator_token(exp=int(e.clock.now) - SKEW - 1)), e.activity()),
        "expired",
        id="emulator-expired",
    ),
]


@pytest.mark.parametrize(("case", "reason"), REJECTED)
async def test_a_broken_rule_gets_403_and_nothing_else(env: Env, case: Case, reason: str) -> None:
    authorization, activity = case(env)

    status, body = await env.post(authorization, activity)

    assert status == 403
    assert body is not None and reason.lower() in body["error"].lower()
    assert_nothing_sent(env)


ACCEPTED: list[Any] = [
    pytest.param(
        lambda e: e.connector_token(exp=int(e.clock.now) - SKEW + 1), id="expired-within-skew"
    ),
    pytest.param(
        lambda e: e.connector_token(nbf=int(e.clock.now) + SKEW - 1), id="nbf-within-skew"
    ),
    pytest.param(lambda e: e.connector_token(nbf=None), id="no-nbf"),
    pytest.param(lambda e: e.connector_token(serviceurl=None), id="no-serviceurl-claim"),
    pytest.param(lambda e: e.emulator_token(), id="emulator-v31-ver-1-appid"),
    pytest.param(
        lambda e: e.emulator_token(ver="2.0", appid=None, azp=APP_ID), id="emulator-ver-2-azp"
    ),
    pytest.param(lambda e: e.emulator_token(ver=None), id="emulator-no-ver-reads-appid"),
]


@pytest.mark.parametrize("mint", ACCEPTED)
async def test_accepted_tokens(env: Env, mint: Callable[[Env], str]) -> None:
    status, _ = await env.post(bearer(mint(env)))

    assert status == 200
    [posted] = env.platform.posted
    assert posted.body["text"] == "echo: hello"


async def test_a_key_endorsed_for_the_channel_is_accepted(env: Env) -> None:
    env.platform.connector_keys = [jwk(CONNECTOR_KEY, "k1", endorsements=["msteams", "webchat"])]

    assert (await env.post(bearer(env.connector_token())))[0] == 200
    status, _ = await env.post(bearer(env.connector_token()), env.activity(channelId="msteams"))
    assert status == 200
    status, _ = await env.post(bearer(env.connector_token()), env.activity(channelId=None))
    assert status == 403


async def test_a_key_with_unreadable_endorsements_is_not_used(env: Env) -> None:
    env.platform.connector_keys = [jwk(CONNECTOR_KEY, "k1", endorsements="webchat")]

    status, body = await env.post(bearer(env.connector_token()))

    assert status == 403 and body is not None and "not in the connector key set" in body["error"]


async def test_profile_v30_expects_the_legacy_audience_on_the_emulator_path(env: Env) -> None:
    bot = await env.make_bot(profile="v3.0", legacy_audience=LEGACY_AUDIENCE)

    legacy = await env.post(bearer(env.emulator_token(aud=LEGACY_AUDIENCE)), bot=bot)
    app_id = await env.post(bearer(env.emulator_token(aud=APP_ID)), bot=bot)
    connector = await env.post(bearer(env.connector_token()), bot=bot)  # unchanged in v3.0

    assert [legacy[0], app_id[0], connector[0]] == [200, 403, 200]
    assert app_id[1] is not None and "InvalidAudienceError" in app_id[1]["error"]


# --- Key and metadata caches ---------------------------------------------------------------------


async def test_keys_are_cached_for_five_days(env: Env) -> None:
    for _ in range(3):
        assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert env.platform.gets == ["/connector/.well-known/openidconfiguration", "/connector/keys"]

    env.clock.advance(5 * 24 * 3600 - 1)
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 1

    env.clock.advance(1)
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 2
    # The metadata is older than a day by now, so it is read again too.
    assert env.platform.gets_of("/connector/.well-known/openidconfiguration") == 2


async def test_an_unknown_kid_refetches_the_keys_at_most_once_an_hour(env: Env) -> None:
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 1

    # An unknown kid: one refetch (metadata and keys). Still unknown: 403.
    assert (await env.post(bearer(env.connector_token(key=ROTATED_KEY, kid="k2"))))[0] == 403
    assert env.platform.gets_of("/connector/keys") == 2
    assert env.platform.gets_of("/connector/.well-known/openidconfiguration") == 2

    # The key is published now, but the bot refetched less than an hour ago: no refetch, 403.
    env.platform.connector_keys.append(jwk(ROTATED_KEY, "k2"))
    env.clock.advance(3599)
    assert (await env.post(bearer(env.connector_token(key=ROTATED_KEY, kid="k2"))))[0] == 403
    assert env.platform.gets_of("/connector/keys") == 2

    # An hour after the last refetch, the next unknown kid triggers one, and the new key works.
    env.clock.advance(1)
    assert (await env.post(bearer(env.connector_token(key=ROTATED_KEY, kid="k2"))))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 3
    assert (await env.post(bearer(env.connector_token(key=ROTATED_KEY, kid="k2"))))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 3


async def test_a_rotated_key_is_picked_up_on_its_first_use(env: Env) -> None:
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    env.platform.connector_keys = [jwk(ROTATED_KEY, "k2")]

    assert (await env.post(bearer(env.connector_token(key=ROTATED_KEY, kid="k2"))))[0] == 200
    assert env.platform.gets_of("/connector/keys") == 2


async def test_the_two_paths_have_their_own_key_caches(env: Env) -> None:
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert (await env.post(bearer(env.emulator_token())))[0] == 200
    assert (await env.post(bearer(env.emulator_token())))[0] == 200

    assert env.platform.gets == [
        "/connector/.well-known/openidconfiguration",
        "/connector/keys",
        "/idp/v2.0/.well-known/openid-configuration",
        "/idp/keys",
    ]


async def test_unavailable_keys_mean_403_not_a_crash(env: Env) -> None:
    env.platform.keys_status = 503

    status, body = await env.post(bearer(env.connector_token()))

    assert status == 403 and body is not None and "unavailable" in body["error"]
    assert_nothing_sent(env)
    # The next request tries again, and succeeds once the keys are back.
    env.platform.keys_status = 200
    assert (await env.post(bearer(env.connector_token())))[0] == 200


# --- The bot's own token -------------------------------------------------------------------------


async def test_one_access_token_serves_many_replies_until_near_expiry(env: Env) -> None:
    for _ in range(3):
        assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert len(env.platform.token_requests) == 1

    env.clock.advance(3600 - 300 - 1)  # just before "5 minutes before expiry"
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert len(env.platform.token_requests) == 1

    env.clock.advance(1)
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert len(env.platform.token_requests) == 2
    assert [p.authorization for p in env.platform.posted] == ["Bearer access-1"] * 4 + [
        "Bearer access-2"
    ]


async def test_a_401_from_the_connector_drops_the_cached_token(env: Env) -> None:
    env.platform.connector_status = 401
    status, body = await env.post(bearer(env.connector_token()))
    assert status == 502 and body is not None and "401" in body["error"]

    env.platform.connector_status = 200
    assert (await env.post(bearer(env.connector_token())))[0] == 200
    assert [p.authorization for p in env.platform.posted] == ["Bearer access-1", "Bearer access-2"]


async def test_a_refused_token_request_means_no_reply(env: Env) -> None:
    bot = await env.make_bot(app_password="wrong")

    status, body = await env.post(bearer(env.connector_token()), bot=bot)

    assert status == 502 and body is not None and "invalid_client" in body["error"]
    assert env.platform.posted == []


# --- Where the token may go ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "service_url",
    [
        pytest.param("https://evil.example", id="another-host"),
        pytest.param("http://127.0.0.1:1", id="another-port"),
        pytest.param("{base}@evil.example", id="userinfo-trick"),
        pytest.param("ftp://127.0.0.1", id="not-http"),
    ],
)
async def test_an_untrusted_service_url_gets_no_token(
    env: Env, caplog: pytest.LogCaptureFixture, service_url: Any
) -> None:
    if isinstance(service_url, str):
        service_url = service_url.format(base=env.service_url)
    # An emulator-path token carries no serviceurl claim, so only the allow-list protects it.
    status, _ = await env.post(bearer(env.emulator_token()), env.activity(serviceUrl=service_url))

    assert status == 200
    assert_nothing_sent(env)
    assert "not trusted" in caplog.text


async def test_trusted_service_urls_replace_the_default(env: Env) -> None:
    elsewhere = await env.make_bot(trusted_service_urls=("https://connector.example",))
    both = await env.make_bot(trusted_service_urls=("https://connector.example", env.service_url))

    assert (await env.post(bearer(env.connector_token()), bot=elsewhere))[0] == 200
    assert_nothing_sent(env)
    assert (await env.post(bearer(env.connector_token()), bot=both))[0] == 200
    assert len(env.platform.posted) == 1


# --- Activities ----------------------------------------------------------------------------------


async def test_members_added_get_a_welcome_but_the_bot_does_not(env: Env) -> None:
    bot_account = {"id": f"28:{APP_ID}", "name": "echo"}
    activity = env.activity(
        type="conversationUpdate",
        text=None,
        membersAdded=[bot_account, {"id": "user-2", "name": "Grace"}],
    )

    status, _ = await env.post(bearer(env.connector_token()), activity)

    assert status == 200
    [posted] = env.platform.posted
    assert posted.path == "/v3/conversations/conv-1/activities"
    assert posted.body == {
        "type": "message",
        "text": "Welcome, Grace! Say something and I will echo it.",
        "from": bot_account,
        "recipient": {"id": "user-2", "name": "Grace"},
        "conversation": {"id": "conv-1"},
    }


@pytest.mark.parametrize(
    "activity",
    [
        pytest.param({"type": "typing"}, id="typing"),
        pytest.param({"type": "event", "name": "x"}, id="event"),
        pytest.param(
            {"type": "message", "text": None, "attachments": []}, id="message-without-text"
        ),
        pytest.param({"type": "conversationUpdate", "membersAdded": "nobody"}, id="bad-members"),
        pytest.param({"type": None}, id="no-type"),
    ],
)
async def test_other_activities_are_acknowledged_and_ignored(
    env: Env, activity: JsonObject
) -> None:
    status, _ = await env.post(bearer(env.connector_token()), env.activity(**activity))

    assert status == 200
    assert_nothing_sent(env)


async def test_activity_types_are_read_case_insensitively(env: Env) -> None:
    status, _ = await env.post(bearer(env.connector_token()), env.activity(type="Message"))

    assert status == 200 and len(env.platform.posted) == 1


# --- Bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status"),
    [
        pytest.param(b"not json", 400, id="not-json"),
        pytest.param(b"\xff\xfe", 400, id="not-utf8"),
        pytest.param(b"[1, 2]", 400, id="json-array"),
        pytest.param(b"[" * 100_000, 400, id="nested-too-deep"),
        pytest.param(b'{"pad": "' + b"x" * (1024 * 1024) + b'"}', 413, id="oversized"),
    ],
)
async def test_bad_bodies_get_4xx(env: Env, body: bytes, status: int) -> None:
    headers = {"Authorization": bearer(env.connector_token()), "Content-Type": "application/json"}

    response = await env.bot.post("/api/messages", data=io.BytesIO(body), headers=headers)

    assert response.status == status
    assert "error" in json.loads(await response.read())
    assert_nothing_sent(env)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"conversation": None}, id="no-conversation"),
        pytest.param({"conversation": {"id": 7}}, id="conversation-id-not-a-string"),
        pytest.param({"serviceUrl": 42}, id="service-url-not-a-string"),
    ],
)
async def test_a_message_that_cannot_be_answered_gets_400(env: Env, changes: JsonObject) -> None:
    token = env.emulator_token()  # no serviceurl claim to compare the serviceUrl with
    status, body = await env.post(bearer(token), env.activity(**changes))

    assert status == 400 and body is not None and "conversation.id" in body["error"]
    assert_nothing_sent(env)


# --- Settings ------------------------------------------------------------------------------------

ENVIRONMENT = {
    "BOT_APP_ID": APP_ID,
    "BOT_APP_PASSWORD": PASSWORD,
    "BOTEMU_TOKEN_URL": "http://127.0.0.1:9070/_identity/connector/oauth2/v2.0/token",
    "BOTEMU_CONNECTOR_SCOPE": SCOPE,
    "BOTEMU_OPENID_METADATA_URL": "http://127.0.0.1:9070/_identity/v3.1/.well-known/openidconfiguration",
    "BOTEMU_CONNECTOR_ISSUER": CONNECTOR_ISSUER,
    "BOTEMU_IDP_OPENID_URL": "http://127.0.0.1:9070/_identity/connector/v2.0/.well-known/openid-configuration",
    "BOTEMU_EMULATOR_ISSUER": EMULATOR_ISSUER,
}


def test_the_environment_variable_names() -> None:
    assert [env for _, env, _, _ in echo.OPTIONS] == [
        "BOT_APP_ID",
        "BOT_APP_PASSWORD",
        "BOTEMU_TOKEN_URL",
        "BOTEMU_CONNECTOR_SCOPE",
        "BOTEMU_OPENID_METADATA_URL",
        "BOTEMU_CONNECTOR_ISSUER",
        "BOTEMU_IDP_OPENID_URL",
        "BOTEMU_EMULATOR_ISSUER",
        "BOTEMU_PROFILE",
        "BOTEMU_LEGACY_AUDIENCE",
    ]


def test_settings_come_from_the_environment_and_flags_override_them() -> None:
    settings, host, port = echo.parse_command_line(["--port", "4000"], ENVIRONMENT)
    assert (host, port, settings.app_id, settings.profile) == ("127.0.0.1", 4000, APP_ID, "v3.1")
    assert settings.trusted_origins == {("http", "127.0.0.1", 9070)}
    assert settings.emulator_audience == APP_ID

    environ = {**ENVIRONMENT, "BOTEMU_PROFILE": "v3.0", "BOTEMU_LEGACY_AUDIENCE": LEGACY_AUDIENCE}
    argv = ["--app-id", "other", "--trusted-service-url", "https://connector.example/x/"]
    settings, _, _ = echo.parse_command_line(argv, environ)
    assert (settings.app_id, settings.profile, settings.emulator_audience) == (
        "other",
        "v3.0",
        LEGACY_AUDIENCE,
    )
    assert settings.trusted_origins == {("https", "connector.example", 443)}


@pytest.mark.parametrize(
    ("argv", "environ", "message"),
    [
        pytest.param([], {}, "$BOT_APP_ID", id="nothing-set"),
        pytest.param([], {**ENVIRONMENT, "BOT_APP_PASSWORD": ""}, "$BOT_APP_PASSWORD", id="empty"),
        pytest.param(
            ["--profile", "v3.0"], ENVIRONMENT, "BOTEMU_LEGACY_AUDIENCE", id="v30-no-legacy"
        ),
        pytest.param(["--profile", "v4"], ENVIRONMENT, "profile must be", id="unknown-profile"),
        pytest.param(
            ["--token-url", "http://identity.example/token"],
            ENVIRONMENT,
            "not https",
            id="plain-http",
        ),
        pytest.param(
            ["--trusted-service-url", "http://connector.example"],
            ENVIRONMENT,
            "not https",
            id="plain-http-service-url",
        ),
        pytest.param(
            ["--emulator-issuer", CONNECTOR_ISSUER], ENVIRONMENT, "must differ", id="same-issuers"
        ),
    ],
)
def test_bad_settings_exit_with_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        echo.parse_command_line(argv, environ)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("url", "secure"),
    [
        ("https://connector.example/", True),
        ("http://127.0.0.1:9070/x", True),
        ("http://127.8.9.10/", True),
        ("http://localhost:3978", True),
        ("http://[::1]:80/", True),
        ("http://connector.example/", False),
        ("http://127.0.0.1.evil.example/", False),
        ("ftp://127.0.0.1/", False),
        ("https:///nohost", False),
    ],
)
def test_is_secure_url(url: str, secure: bool) -> None:
    assert echo.is_secure_url(url) is secure
