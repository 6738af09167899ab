"""The identity service over HTTP: token endpoint (RFC 6749), OpenID metadata, key document."""

from __future__ import annotations

import base64
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.config import BotRegistration, Profile, ServiceConfig
from emulator.identity.keys import IdentityError, KeyStore
from emulator.identity.routes import (
    IDENTITY,
    IdentityService,
    identity_routes,
    make_identity_app,
)
from emulator.identity.tokens import Expectation, validate

NOW = 1_750_000_000.0
APP = "0b3b4bd5-6f2a-4c1e-9d8e-1a2b3c4d5e6f"
SECRET = "s3cr€t+pass/word"
OTHER_APP = "9f8e7d6c-5b4a-4321-8765-0fedcba98765"
FORM = "application/x-www-form-urlencoded"

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[[web.Application], Awaitable[Client]]


class FakeClock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_config(tmp_path: Path, **changes: Any) -> ServiceConfig:
    bots = (BotRegistration(APP, SECRET), BotRegistration(OTHER_APP, "other-secret"))
    return ServiceConfig(bots=bots, certs_dir=tmp_path / "certs", **changes)


def make_service(config: ServiceConfig, clock: FakeClock) -> IdentityService:
    return IdentityService.from_config(config, clock=clock)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(tmp_path: Path, clock: FakeClock) -> IdentityService:
    return make_service(make_config(tmp_path), clock)


@pytest.fixture
async def client(aiohttp_client: ClientFactory, service: IdentityService) -> Client:
    return await aiohttp_client(make_identity_app(service))


def path(url: str) -> str:
    return urlsplit(url).path


def form(profile: Profile, service: IdentityService, **changes: str | None) -> dict[str, str]:
    fields: dict[str, str | None] = {
        "grant_type": "client_credentials",
        "client_id": APP,
        "client_secret": SECRET,
        "scope": service.config.placeholders(profile).connector_scope,
    }
    fields.update(changes)
    return {k: v for k, v in fields.items() if v is not None}


async def post_token(
    client: Client,
    service: IdentityService,
    profile: Profile = Profile.V31,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    **changes: str | None,
) -> tuple[int, dict[str, Any], Mapping[str, str]]:
    data = body if body is not None else urlencode(form(profile, service, **changes)).encode()
    sent = {"Content-Type": FORM} | dict(headers or {})
    url = path(service.config.placeholders(profile).token_url)
    async with client.post(url, data=data, headers=sent) as response:
        return response.status, await response.json(), response.headers


async def get_json(client: Client, url: str) -> tuple[dict[str, Any], Mapping[str, str]]:
    async with client.get(path(url)) as response:
        assert response.status == 200
        assert response.content_type == "application/json"
        return await response.json(), response.headers


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# --- token endpoint: success --------------------------------------------------------------------


@pytest.mark.parametrize("profile", [pytest.param(p, id=p.value) for p in Profile])
async def test_token_endpoint_issues_a_token_each_profile(
    client: Client, service: IdentityService, profile: Profile
) -> None:
    status, body, headers = await post_token(client, service, profile)
    p = service.config.placeholders(profile)

    assert status == 200
    assert list(body) == ["token_type", "expires_in", "ext_expires_in", "access_token"]
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == body["ext_expires_in"] == 3600
    assert headers["Cache-Control"] == "no-store"
    assert headers["Pragma"] == "no-cache"

    jwks, _ = await get_json(client, p.jwks_uri)
    token = body["access_token"]
    header = jwt.get_unverified_header(token)
    key = jwt.PyJWKSet.from_dict(jwks)[header["kid"]]
    claims = jwt.decode(
        token,
        key,
        algorithms=["RS256"],
        audience=p.connector_audience,
        issuer=p.emulator_issuer,
        options={"verify_exp": False},  # minted at the fake NOW
    )
    assert header == {"alg": "RS256", "kid": key.key_id, "typ": "JWT", "x5t": key.key_id}
    assert claims["appid"] == APP
    assert claims["ver"] == "1.0"
    assert (claims["nbf"], claims["exp"]) == (int(NOW), int(NOW) + 3600)


async def test_the_v30_and_v31_tokens_differ_in_issuer_and_audience(
    client: Client, service: IdentityService
) -> None:
    tokens = {p: (await post_token(client, service, p))[1]["access_token"] for p in Profile}
    claims = {p: jwt.decode(t, options={"verify_signature": False}) for p, t in tokens.items()}

    assert claims[Profile.V30]["iss"].endswith("/_identity/common/")
    assert claims[Profile.V31]["iss"].endswith("/_identity/connector/")
    assert claims[Profile.V30]["aud"] == "api://botemu-graph"
    assert claims[Profile.V31]["aud"] == "api://botemu-connector"


async def test_an_issued_token_validates_as_the_connector_would(
    client: Client, service: IdentityService
) -> None:
    _, body, _ = await post_token(client, service)
    p = service.config.placeholders(Profile.V31)
    expect = Expectation(issuers=(p.emulator_issuer,), audiences=(p.connector_audience,), appid=APP)

    assert validate(body["access_token"], service.keys, expect, now=NOW)["appid"] == APP


async def test_token_lifetime_comes_from_the_config(
    aiohttp_client: ClientFactory, tmp_path: Path, clock: FakeClock
) -> None:
    service = make_service(make_config(tmp_path, token_lifetime_seconds=120), clock)
    client = await aiohttp_client(make_identity_app(service))

    _, body, _ = await post_token(client, service)

    assert body["expires_in"] == body["ext_expires_in"] == 120
    assert jwt.decode(body["access_token"], options={"verify_signature": False})["exp"] == NOW + 120


async def test_client_credentials_by_http_basic(client: Client, service: IdentityService) -> None:
    # RFC 6749 §2.3.1: id and secret are form-encoded, then joined by ':' and base64-encoded
    credentials = basic(APP, "s3cr%E2%82%ACt%2Bpass%2Fword")

    status, body, _ = await post_token(
        client,
        service,
        headers={"Authorization": credentials},
        client_id=None,
        client_secret=None,
    )

    assert status == 200, body
    assert jwt.decode(body["access_token"], options={"verify_signature": False})["appid"] == APP


async def test_token_for_is_what_the_endpoint_issues(service: IdentityService) -> None:
    token, expires_in = service.token_for(APP, profile=Profile.V30)
    claims = jwt.decode(token, options={"verify_signature": False})

    assert expires_in == 3600
    assert claims["iss"] == service.config.placeholders(Profile.V30).emulator_issuer
    assert claims["aud"] == service.config.placeholders(Profile.V30).connector_audience
    assert claims["appid"] == APP


def test_token_for_the_configured_profile_by_default(service: IdentityService) -> None:
    token, _ = service.token_for(OTHER_APP)

    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == service.config.placeholders(Profile.V31).emulator_issuer
    assert claims["appid"] == OTHER_APP


def test_token_for_an_unregistered_bot_is_an_error(service: IdentityService) -> None:
    with pytest.raises(IdentityError, match="no bot is registered"):
        service.token_for("nobody")


# --- token endpoint: RFC 6749 §5.2 errors -------------------------------------------------------

WRONG_SCOPE = "api://botemu-graph/.default"  # the v3.0 scope, sent to the v3.1 token URL


def refused(
    name: str,
    status: int,
    error: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    **changes: str | None,
) -> Any:
    """A token request built from the valid form with ``changes``, and the error it gets."""
    return pytest.param(changes, headers or {}, body, status, error, id=name)


BASIC_OK = {"Authorization": basic(APP, SECRET)}
NO_COLON = {"Authorization": "Basic " + base64.b64encode(b"no-colon").decode()}
BASIC_WRONG = {"Authorization": basic(APP, "wrong")}
NOT_BASE64 = {"Authorization": "Basic ***"}
OTHER_ID: dict[str, Any] = {"client_id": OTHER_APP, "client_secret": None}
LATIN_1 = {"Content-Type": f"{FORM}; charset=latin-1"}
REPEATED = b"grant_type=client_credentials&grant_type=client_credentials"
NOT_UTF_8 = b"grant_type=client_credentials&scope=%FF"

ERRORS = [
    refused("no-grant-type", 400, "invalid_request", grant_type=None),
    refused("grant-password", 400, "unsupported_grant_type", grant_type="password"),
    refused("grant-code", 400, "unsupported_grant_type", grant_type="authorization_code"),
    refused("no-client-id", 401, "invalid_client", client_id=None),
    refused("unknown-client", 401, "invalid_client", client_id="nobody"),
    refused("no-secret", 401, "invalid_client", client_secret=None),
    refused("empty-secret", 401, "invalid_client", client_secret=""),
    refused("wrong-secret", 401, "invalid_client", client_secret="wrong"),
    refused("secret-prefix", 401, "invalid_client", client_secret=SECRET[:-1]),
    refused("another-bots-secret", 401, "invalid_client", client_secret="other-secret"),
    refused("no-scope", 400, "invalid_request", scope=None),
    refused("wrong-scope", 400, "invalid_scope", scope="openid"),
    refused("other-profiles-scope", 400, "invalid_scope", scope=WRONG_SCOPE),
    refused("json", 400, "invalid_request", headers={"Content-Type": "application/json"}),
    refused("text", 400, "invalid_request", headers={"Content-Type": "text/plain"}),
    refused("latin-1", 400, "invalid_request", headers=LATIN_1),
    refused("repeated-parameter", 400, "invalid_request", body=REPEATED),
    refused("repeated-name-with-newline", 400, "invalid_request", body=b"x%0Ay=1&x%0Ay=2"),
    refused("not-utf-8", 400, "invalid_request", body=NOT_UTF_8),
    refused("basic-and-form-secret", 400, "invalid_request", headers=BASIC_OK),
    refused("basic-and-other-id", 400, "invalid_request", headers=BASIC_OK, **OTHER_ID),
    refused("basic-wrong-secret", 401, "invalid_client", headers=BASIC_WRONG, client_secret=None),
    refused("basic-not-base64", 401, "invalid_client", headers=NOT_BASE64, client_secret=None),
    refused("basic-no-colon", 401, "invalid_client", headers=NO_COLON, client_secret=None),
    refused("bearer-client-auth", 401, "invalid_client", headers={"Authorization": "Bearer abc"}),
]


@pytest.mark.parametrize(("changes", "headers", "body", "status", "error"), ERRORS)
async def test_token_errors(
    client: Client,
    service: IdentityService,
    changes: dict[str, Any],
    headers: dict[str, str],
    body: bytes | None,
    status: int,
    error: str,
) -> None:
    got, payload, response_headers = await post_token(
        client, service, body=body, headers=headers, **changes
    )

    assert (got, payload["error"]) == (status, error), payload
    assert list(payload) == ["error", "error_description"]
    assert payload["error_description"] and "\n" not in payload["error_description"]
    assert response_headers["Cache-Control"] == "no-store"
    if status == 401:
        assert response_headers["WWW-Authenticate"].startswith("Basic ")
    else:
        assert "WWW-Authenticate" not in response_headers


async def test_no_content_type_is_invalid_request(client: Client, service: IdentityService) -> None:
    url = path(service.config.placeholders().token_url)
    async with client.post(url, data=b"", skip_auto_headers=["Content-Type"]) as response:
        assert response.status == 400
        assert (await response.json())["error"] == "invalid_request"


async def test_a_body_over_64_kib_is_413(client: Client, service: IdentityService) -> None:
    body = urlencode(form(Profile.V31, service, pad="x" * 65536)).encode()

    status, payload, _ = await post_token(client, service, body=body)

    assert (status, payload["error"]) == (413, "invalid_request")


async def test_a_chunked_body_over_64_kib_is_413(client: Client, service: IdentityService) -> None:
    async def chunks() -> Any:
        yield urlencode(form(Profile.V31, service)).encode()
        for _ in range(70):
            yield b"&pad=" + b"x" * 1024

    url = path(service.config.placeholders().token_url)
    async with client.post(url, data=chunks(), headers={"Content-Type": FORM}) as response:
        assert response.status == 413


async def test_a_body_of_exactly_64_kib_is_read(client: Client, service: IdentityService) -> None:
    head = urlencode(form(Profile.V31, service)).encode() + b"&pad="
    body = head + b"x" * (65536 - len(head))

    status, payload, _ = await post_token(client, service, body=body)

    assert len(body) == 65536
    assert status == 200, payload


async def test_the_secret_is_compared_in_constant_time(
    client: Client, service: IdentityService, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[object, object]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)

    wrong, _, _ = await post_token(client, service, client_secret="wrong")
    right, _, _ = await post_token(client, service)

    assert (wrong, right) == (401, 200)
    assert compared == [(b"wrong", SECRET.encode()), (SECRET.encode(), SECRET.encode())]


async def test_get_on_the_token_url_is_405(client: Client, service: IdentityService) -> None:
    async with client.get(path(service.config.placeholders().token_url)) as response:
        assert response.status == 405


# --- metadata documents -------------------------------------------------------------------------

CONNECTOR_MEMBERS = [
    "issuer",
    "authorization_endpoint",
    "jwks_uri",
    "id_token_signing_alg_values_supported",
    "token_endpoint_auth_methods_supported",
]


@pytest.mark.parametrize("profile", [pytest.param(p, id=p.value) for p in Profile])
async def test_connector_openid_metadata(
    client: Client, service: IdentityService, profile: Profile
) -> None:
    p = service.config.placeholders(profile)

    doc, _ = await get_json(client, p.openid_metadata_url)

    assert list(doc) == CONNECTOR_MEMBERS
    assert doc["issuer"] == p.connector_issuer
    assert doc["jwks_uri"] == p.jwks_uri
    assert doc["id_token_signing_alg_values_supported"] == ["RSA256"]  # sic: spec and real document
    assert doc["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
    assert doc["authorization_endpoint"].startswith("http://")


@pytest.mark.parametrize("profile", [pytest.param(p, id=p.value) for p in Profile])
async def test_identity_provider_openid_metadata(
    client: Client, service: IdentityService, profile: Profile
) -> None:
    p = service.config.placeholders(profile)

    doc, _ = await get_json(client, p.idp_openid_url)

    assert doc["issuer"] == p.emulator_issuer
    assert doc["token_endpoint"] == p.token_url
    assert doc["jwks_uri"] == p.jwks_uri
    assert doc["id_token_signing_alg_values_supported"] == ["RS256"]
    for member in ("authorization_endpoint", "response_types_supported", "subject_types_supported"):
        assert doc[member], member  # required by OpenID Connect Discovery 1.0 §3
    assert "client_secret_post" in doc["token_endpoint_auth_methods_supported"]


async def test_the_two_profiles_publish_different_emulator_issuers(
    client: Client, service: IdentityService
) -> None:
    docs = [
        (await get_json(client, service.config.placeholders(p).idp_openid_url))[0] for p in Profile
    ]

    assert docs[0]["issuer"] != docs[1]["issuer"]


# --- key document -------------------------------------------------------------------------------


async def test_jwks(client: Client, service: IdentityService) -> None:
    jwks, headers = await get_json(client, service.config.placeholders().jwks_uri)

    assert headers["Cache-Control"] == "max-age=432000"
    assert jwks == {"keys": [service.keys.current().jwk()]}


async def test_jwks_carries_the_configured_endorsements_on_every_key(
    aiohttp_client: ClientFactory, tmp_path: Path, clock: FakeClock
) -> None:
    """ServiceConfig.endorsements (botemu serve --endorse) reach every published key, the
    retired one too (field notes: SDKs then require the activity's channelId to be listed)."""
    service = make_service(make_config(tmp_path, endorsements=("botemu", "msteams")), clock)
    client = await aiohttp_client(make_identity_app(service))
    service.keys.current()
    clock.now += 60
    service.keys.rotate()
    jwks, _ = await get_json(client, service.config.placeholders().jwks_uri)

    assert [k["endorsements"] for k in jwks["keys"]] == [["botemu", "msteams"]] * 2


async def test_jwks_follows_rotation_and_grace(
    client: Client, service: IdentityService, clock: FakeClock
) -> None:
    jwks_url = service.config.placeholders().jwks_uri
    old = service.keys.current()
    _, before, _ = await post_token(client, service)

    clock.now += 60
    new = client.app[IDENTITY].keys.rotate()
    jwks, _ = await get_json(client, jwks_url)
    _, after, _ = await post_token(client, service)

    assert [k["kid"] for k in jwks["keys"]] == [new.kid, old.kid]
    assert jwt.get_unverified_header(before["access_token"])["kid"] == old.kid
    assert jwt.get_unverified_header(after["access_token"])["kid"] == new.kid

    clock.now += service.config.key_grace_seconds
    jwks, _ = await get_json(client, jwks_url)
    assert [k["kid"] for k in jwks["keys"]] == [new.kid]


# --- routes -------------------------------------------------------------------------------------


def test_routes_are_data(service: IdentityService) -> None:
    routes = identity_routes(service)

    assert sorted((r.method, r.path) for r in routes if isinstance(r, web.RouteDef)) == sorted(
        [
            ("POST", "/_identity/common/oauth2/v2.0/token"),
            ("POST", "/_identity/connector/oauth2/v2.0/token"),
            ("GET", "/_identity/v3.0/.well-known/openidconfiguration"),
            ("GET", "/_identity/v3.1/.well-known/openidconfiguration"),
            ("GET", "/_identity/common/v2.0/.well-known/openid-configuration"),
            ("GET", "/_identity/connector/v2.0/.well-known/openid-configuration"),
            ("GET", "/_identity/keys"),
            ("GET", "/adfs/.well-known/openid-configuration"),
        ]
    )


def test_make_identity_app_holds_the_service(service: IdentityService) -> None:
    assert make_identity_app(service)[IDENTITY] is service


async def test_overridden_base_url_moves_every_route(
    aiohttp_client: ClientFactory, tmp_path: Path, clock: FakeClock
) -> None:
    config = make_config(tmp_path, overrides={"base_url": "https://emu.example:8443/root"})
    service = make_service(config, clock)
    client = await aiohttp_client(make_identity_app(service))

    status, _, _ = await post_token(client, service)
    doc, _ = await get_json(client, service.config.placeholders(Profile.V30).openid_metadata_url)

    assert path(service.config.placeholders().token_url).startswith("/root/_identity/")
    assert status == 200
    assert doc["jwks_uri"] == "https://emu.example:8443/root/_identity/keys"
    assert doc["authorization_endpoint"].startswith("https://emu.example:8443/root/_identity/")


async def test_a_token_url_shared_by_both_profiles_picks_the_profile_by_scope(
    aiohttp_client: ClientFactory, tmp_path: Path, clock: FakeClock
) -> None:
    shared = "http://127.0.0.1:9070/_identity/shared/token"
    service = make_service(make_config(tmp_path, overrides={"token_url": shared}), clock)
    client = await aiohttp_client(make_identity_app(service))

    issuers = {}
    for profile in Profile:
        status, body, _ = await post_token(client, service, profile)
        assert status == 200, body
        issuers[profile] = jwt.decode(body["access_token"], options={"verify_signature": False})[
            "iss"
        ]

    assert issuers == {p: service.config.placeholders(p).emulator_issuer for p in Profile}
    assert [r.method for r in identity_routes(service) if isinstance(r, web.RouteDef)].count(
        "POST"
    ) == 1


async def test_one_profile_overrides_its_own_metadata_url(
    aiohttp_client: ClientFactory, tmp_path: Path, clock: FakeClock
) -> None:
    custom = "http://127.0.0.1:9070/custom/openid.json"
    config = make_config(tmp_path, overrides={"v3.0.openid_metadata_url": custom})
    service = make_service(config, clock)
    client = await aiohttp_client(make_identity_app(service))

    doc, _ = await get_json(client, custom)

    assert doc["issuer"] == service.config.placeholders(Profile.V30).connector_issuer


async def test_the_wire_bytes_of_a_token_response(client: Client, service: IdentityService) -> None:
    url = path(service.config.placeholders().token_url)
    body = urlencode(form(Profile.V31, service)).encode()
    async with client.post(url, data=body, headers={"Content-Type": FORM}) as response:
        raw = await response.read()
        content_type = response.headers["Content-Type"]
    token = json.loads(raw)["access_token"]

    assert content_type == "application/json; charset=utf-8"
    assert raw == (
        b'{"token_type":"Bearer","expires_in":3600,"ext_expires_in":3600,"access_token":"'
        + token.encode()
        + b'"}'
    )


async def test_the_wire_bytes_of_an_oauth_error(client: Client, service: IdentityService) -> None:
    url = path(service.config.placeholders().token_url)
    body = b"grant_type=password"
    async with client.post(url, data=body, headers={"Content-Type": FORM}) as response:
        raw = await response.read()

    assert raw == (
        b'{"error":"unsupported_grant_type","error_description":'
        b"\"grant_type 'password' is not supported; use client_credentials\"}"
    )


def test_a_keystore_is_made_under_the_certs_dir(service: IdentityService, tmp_path: Path) -> None:
    assert isinstance(service.keys, KeyStore)
    assert service.keys.directory == tmp_path / "certs" / "signing-keys"
    assert service.keys.grace_seconds == service.config.key_grace_seconds
