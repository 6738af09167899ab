"""Minting RS256 tokens and validating them as the spec requires (Authentication)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from emulator.identity.keys import KeyStore
from emulator.identity.tokens import REASONS, Expectation, TokenError, bearer_token, mint, validate
from emulator.jsonutil import JSON

NOW = 1_750_000_000.0
ISS = "http://127.0.0.1:9070/_identity/connector/"
AUD = "api://botemu-connector"
APP = "0b3b4bd5-6f2a-4c1e-9d8e-1a2b3c4d5e6f"
EXPECT = Expectation(issuers=(ISS,), audiences=(AUD,), appid=APP)
CLAIMS: dict[str, JSON] = {"iss": ISS, "aud": AUD, "appid": APP, "ver": "1.0"}


class FakeClock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Stores:
    ours: KeyStore
    stranger: KeyStore  # a key set the validator does not know


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    clock = FakeClock()
    return Stores(
        KeyStore(tmp_path_factory.mktemp("ours"), clock=clock),
        KeyStore(tmp_path_factory.mktemp("stranger"), clock=clock),
    )


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: object) -> str:
    return b64url(json.dumps(value).encode())


def parts(token: str) -> list[str]:
    return token.split(".")


def decoded_part(token: str, n: int) -> dict[str, JSON]:
    text = parts(token)[n]
    value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    assert isinstance(value, dict)
    return value


# --- how each case builds its Authorization header ----------------------------------------------

Build = Callable[[Stores], str | None]


def bearer(claims: dict[str, JSON] | None = None, **extra: JSON) -> Build:
    """A token minted by our current key, with ``CLAIMS`` updated by ``claims`` and ``extra``."""
    merged = CLAIMS | (claims or {}) | extra
    return lambda s: f"Bearer {mint(s.ours, merged, now=NOW)}"


def without(*names: str) -> Build:
    claims = {k: v for k, v in CLAIMS.items() if k not in names}
    return lambda s: f"Bearer {mint(s.ours, claims, now=NOW)}"


def unsigned(s: Stores) -> str:
    header = {"typ": "JWT", "alg": "none", "kid": s.ours.current().kid}
    payload = CLAIMS | {"nbf": int(NOW), "exp": int(NOW) + 3600}
    return f"Bearer {b64url_json(header)}.{b64url_json(payload)}."


def hs256_with_public_key(s: Stores) -> str:
    """The key-confusion attack: HMAC keyed with the published public key in PEM."""
    public_pem = s.ours.current().public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"typ": "JWT", "alg": "HS256", "kid": s.ours.current().kid}
    payload = CLAIMS | {"nbf": int(NOW), "exp": int(NOW) + 3600}
    signing_input = f"{b64url_json(header)}.{b64url_json(payload)}"
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return f"Bearer {signing_input}.{b64url(mac)}"


def other_rsa_alg(s: Stores) -> str:
    key = s.ours.current()
    payload = CLAIMS | {"nbf": int(NOW), "exp": int(NOW) + 3600}
    token = jwt.encode(payload, key.private_key, algorithm="RS512", headers={"kid": key.kid})
    return f"Bearer {token}"


def no_kid(s: Stores) -> str:
    payload = CLAIMS | {"nbf": int(NOW), "exp": int(NOW) + 3600}
    return f"Bearer {jwt.encode(payload, s.ours.current().private_key, algorithm='RS256')}"


def stranger_key(s: Stores) -> str:
    """Signed by a key set of its own: its kid is unknown."""
    return f"Bearer {mint(s.stranger, CLAIMS, now=NOW)}"


def stranger_key_with_our_kid(s: Stores) -> str:
    """Signed by a key not in the store, claiming the kid of ours."""
    impostor = replace(s.stranger.current(), kid=s.ours.current().kid)
    return f"Bearer {mint(s.ours, CLAIMS, now=NOW, key=impostor)}"


def tampered(s: Stores) -> str:
    token = mint(s.ours, CLAIMS | {"appid": "someone-else"}, now=NOW)
    header, _, signature = parts(token)
    claims = decoded_part(token, 1) | {"appid": APP}
    return f"Bearer {header}.{b64url_json(claims)}.{signature}"


def payload_not_an_object(s: Stores) -> str:
    key = s.ours.current()
    token = jwt.api_jws.PyJWS().encode(b"[1, 2]", key.private_key, "RS256", {"kid": key.kid})
    return f"Bearer {token}"


def lower_case_scheme(s: Stores) -> str:
    return f"bearer  {mint(s.ours, CLAIMS, now=NOW)}"


HEADER_ARRAY = b64url(b"[1]")


def fixed(value: str | None) -> Build:
    return lambda s: value


# --- the table ----------------------------------------------------------------------------------

NO_APPID = Expectation(issuers=(ISS,), audiences=(AUD,))

CASES = [
    pytest.param(bearer(), EXPECT, None, id="valid"),
    pytest.param(lower_case_scheme, EXPECT, None, id="valid-scheme-any-case"),
    pytest.param(bearer(aud=["api://other", AUD]), EXPECT, None, id="valid-aud-list"),
    pytest.param(without("appid", "ver"), NO_APPID, None, id="valid-without-appid-expectation"),
    pytest.param(bearer(ver="2.0", azp=APP, appid=None), EXPECT, None, id="valid-ver-2.0-azp"),
    pytest.param(without("ver"), EXPECT, None, id="valid-no-ver-means-1.0"),
    pytest.param(fixed(None), EXPECT, "missing", id="missing-header"),
    pytest.param(fixed(""), EXPECT, "missing", id="empty-header"),
    pytest.param(fixed("Basic xyz"), EXPECT, "scheme", id="basic-scheme"),
    pytest.param(fixed("Bearer"), EXPECT, "malformed", id="bearer-without-token"),
    pytest.param(fixed("Bearer a b"), EXPECT, "malformed", id="bearer-two-words"),
    pytest.param(fixed("Bearer not-a-jwt"), EXPECT, "malformed", id="not-three-parts"),
    pytest.param(fixed("Bearer !!!.e30.sig"), EXPECT, "malformed", id="header-not-base64"),
    pytest.param(
        fixed(f"Bearer {HEADER_ARRAY}.e30.sig"), EXPECT, "malformed", id="header-not-object"
    ),
    pytest.param(payload_not_an_object, EXPECT, "malformed", id="payload-not-object"),
    pytest.param(unsigned, EXPECT, "algorithm", id="alg-none"),
    pytest.param(hs256_with_public_key, EXPECT, "algorithm", id="hs256-keyed-with-public-key"),
    pytest.param(other_rsa_alg, EXPECT, "algorithm", id="rs512"),
    pytest.param(no_kid, EXPECT, "unknown-kid", id="no-kid"),
    pytest.param(stranger_key, EXPECT, "unknown-kid", id="unknown-kid"),
    pytest.param(stranger_key_with_our_kid, EXPECT, "signature", id="key-not-in-store"),
    pytest.param(tampered, EXPECT, "signature", id="tampered-payload"),
    pytest.param(bearer(iss="http://evil/"), EXPECT, "issuer", id="wrong-iss"),
    pytest.param(without("iss"), EXPECT, "issuer", id="no-iss"),
    pytest.param(bearer(aud="api://other"), EXPECT, "audience", id="wrong-aud"),
    pytest.param(bearer(aud=["api://a", "api://b"]), EXPECT, "audience", id="wrong-aud-list"),
    pytest.param(bearer(exp=int(NOW) - 301), EXPECT, "expired", id="expired-beyond-skew"),
    pytest.param(bearer(exp=int(NOW) - 300), EXPECT, "expired", id="expired-at-skew"),
    pytest.param(bearer(exp=int(NOW) - 299), EXPECT, None, id="expired-within-skew"),
    pytest.param(bearer(nbf=int(NOW) + 301), EXPECT, "not-yet-valid", id="nbf-beyond-skew"),
    pytest.param(bearer(nbf=int(NOW) + 300), EXPECT, None, id="nbf-within-skew"),
    pytest.param(bearer(appid="someone-else"), EXPECT, "appid", id="appid-mismatch"),
    pytest.param(without("appid"), EXPECT, "appid", id="appid-missing"),
    pytest.param(bearer(ver="2.0", azp="someone-else"), EXPECT, "appid", id="ver-2.0-azp-mismatch"),
    pytest.param(bearer(ver="1.0", azp=APP, appid=None), EXPECT, "appid", id="ver-1.0-azp-only"),
    pytest.param(bearer(ver="3.0"), EXPECT, "claims", id="unknown-ver"),
    pytest.param(bearer(exp="tomorrow"), EXPECT, "claims", id="exp-not-a-number"),
    pytest.param(bearer(exp=True), EXPECT, "claims", id="exp-boolean"),
    pytest.param(bearer(exp=None), EXPECT, "claims", id="exp-missing"),
]


@pytest.mark.parametrize(("build", "expect", "reason"), CASES)
def test_validate(stores: Stores, build: Build, expect: Expectation, reason: str | None) -> None:
    header = build(stores)

    if reason is None:
        claims = validate(bearer_token(header), stores.ours, expect, now=NOW)
        assert claims["iss"] == ISS
        return
    with pytest.raises(TokenError) as caught:
        validate(bearer_token(header), stores.ours, expect, now=NOW)
    assert caught.value.reason == reason
    assert reason in REASONS
    assert "\n" not in caught.value.message and caught.value.message


def test_validate_returns_the_claims(stores: Stores) -> None:
    token = mint(stores.ours, CLAIMS | {"serviceurl": "http://x/"}, now=NOW)

    assert validate(token, stores.ours, EXPECT, now=NOW) == CLAIMS | {
        "iat": int(NOW),
        "nbf": int(NOW),
        "exp": int(NOW) + 3600,
        "serviceurl": "http://x/",
    }


def test_skew_is_configurable(stores: Stores) -> None:
    token = mint(stores.ours, CLAIMS, now=NOW, lifetime=60)
    strict = replace(EXPECT, skew_seconds=0)

    assert validate(token, stores.ours, strict, now=NOW + 59)
    with pytest.raises(TokenError, match="expired"):
        validate(token, stores.ours, strict, now=NOW + 60)


def test_any_of_several_issuers_and_audiences(stores: Stores) -> None:
    token = mint(stores.ours, CLAIMS | {"iss": "i2", "aud": "a2"}, now=NOW)
    expect = Expectation(issuers=(ISS, "i2"), audiences=(AUD, "a2"), appid=APP)

    assert validate(token, stores.ours, expect, now=NOW)["iss"] == "i2"


# --- mint -----------------------------------------------------------------------------------------


def test_mint_header(stores: Stores) -> None:
    key = stores.ours.current()
    header = decoded_part(mint(stores.ours, CLAIMS, now=NOW), 0)

    assert header == {"typ": "JWT", "alg": "RS256", "kid": key.kid, "x5t": key.x5t}


def test_mint_adds_times_in_whole_seconds(stores: Stores) -> None:
    payload = decoded_part(mint(stores.ours, CLAIMS, now=NOW + 0.75, lifetime=600), 1)

    assert (payload["iat"], payload["nbf"], payload["exp"]) == (int(NOW), int(NOW), int(NOW) + 600)


def test_mint_keeps_times_given_in_the_claims(stores: Stores) -> None:
    payload = decoded_part(mint(stores.ours, CLAIMS | {"exp": 5, "nbf": 4}, now=NOW), 1)

    assert (payload["iat"], payload["nbf"], payload["exp"]) == (int(NOW), 4, 5)


def test_mint_verifies_with_pyjwt_and_the_jwks(stores: Stores) -> None:
    token = mint(stores.ours, CLAIMS, now=NOW)
    key = jwt.PyJWKSet.from_dict(stores.ours.jwks())[stores.ours.current().kid]

    claims = jwt.decode(
        token, key, algorithms=["RS256"], audience=AUD, issuer=ISS, options={"verify_exp": False}
    )
    assert claims["appid"] == APP


# --- keys over time -----------------------------------------------------------------------------


def test_a_token_of_a_retired_key_validates_until_the_key_leaves(tmp_path: Path) -> None:
    clock = FakeClock()
    store = KeyStore(tmp_path, clock=clock, grace_seconds=600)
    old_token = mint(store, CLAIMS, now=NOW, lifetime=3600)
    store.rotate()

    clock.now = NOW + 599
    assert validate(old_token, store, EXPECT, now=clock.now)
    clock.now = NOW + 600
    with pytest.raises(TokenError) as caught:
        validate(old_token, store, EXPECT, now=clock.now)
    assert caught.value.reason == "unknown-kid"
    assert validate(mint(store, CLAIMS, now=clock.now), store, EXPECT, now=clock.now)


# --- bearer_token -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "token"),
    [
        pytest.param("Bearer abc", "abc", id="plain"),
        pytest.param("BEARER abc", "abc", id="upper-case-scheme"),
        pytest.param("  Bearer   abc  ", "abc", id="extra-spaces"),
    ],
)
def test_bearer_token(header: str, token: str) -> None:
    assert bearer_token(header) == token


def test_token_error_fields() -> None:
    with pytest.raises(TokenError) as caught:
        bearer_token("Digest " + "x" * 500)

    assert caught.value.reason == "scheme"
    assert str(caught.value) == f"scheme: {caught.value.message}"
    assert len(caught.value.message) < 120


def test_a_remembered_token_is_still_checked_against_the_clock_and_the_key_document(
    tmp_path: Path,
) -> None:
    from emulator.identity.tokens import VerifiedTokens

    clock = [1_000_000.0]
    store = KeyStore(tmp_path / "keys", clock=lambda: clock[0], grace_seconds=60)
    token = mint(store, {"iss": "i", "aud": "a"}, now=clock[0], lifetime=100)
    expect = Expectation(issuers=("i",), audiences=("a",))
    verified = VerifiedTokens(size=2)
    assert validate(token, store, expect, now=clock[0], verified=verified)["iss"] == "i"
    assert verified.get(token) is not None
    with pytest.raises(TokenError) as expired:
        validate(token, store, expect, now=clock[0] + 100 + 301, verified=verified)
    assert expired.value.reason == "expired"
    with pytest.raises(TokenError) as audience:
        validate(token, store, Expectation(issuers=("i",), audiences=("b",)), now=clock[0],
                 verified=verified)  # fmt: skip
    assert audience.value.reason == "audience"
    store.rotate()
    clock[0] += 61  # the signing key leaves the key document after the grace period
    with pytest.raises(TokenError) as gone:
        validate(token, store, expect, now=clock[0], verified=verified)
    assert gone.value.reason == "unknown-kid"


# --- ver "3.0": the auth profile is not a token version (spec, Versioning) ---------------------


@pytest.mark.parametrize("profile", ["v3.0", "v3.1"])
@pytest.mark.parametrize("ver", ["3.0", "3.1", 1.0])
def test_a_ver_3_0_token_is_refused_in_either_profile(
    stores: Stores, profile: str, ver: JSON
) -> None:
    """``ver`` names the token format (1.0 or 2.0), never the profile: a token of either
    profile that says ``ver: "3.0"`` (or any other value) is refused, by ``validate`` with or
    without an expected app id, and by the connector's verifier (401, reason ``claims``)."""
    from emulator.config import Profile, default_placeholders
    from emulator.connector.auth import app_id_of, identity_verifier
    from emulator.connector.errors import ConnectorError

    p = default_placeholders("http://127.0.0.1:9070", Profile(profile))
    claims: dict[str, JSON] = {"iss": p.emulator_issuer, "aud": p.connector_audience,
                               "appid": APP, "azp": APP, "ver": ver}  # fmt: skip
    token = mint(stores.ours, claims, now=NOW)
    for appid in (APP, None):
        expect = Expectation((p.emulator_issuer,), (p.connector_audience,), appid=appid)
        with pytest.raises(TokenError) as caught:
            validate(token, stores.ours, expect, now=NOW)
        assert caught.value.reason == "claims"
        assert "expected 1.0 or 2.0" in caught.value.message
    assert app_id_of(claims) is None
    verify = identity_verifier(stores.ours, p, registered=lambda _: True, clock=lambda: NOW)
    with pytest.raises(ConnectorError) as refused:
        verify(f"Bearer {token}")
    assert refused.value.status == 401 and getattr(refused.value, "reason", None) == "claims"
    for good in ("1.0", "2.0"):  # the same token with a real version passes in this profile
        ok = mint(stores.ours, claims | {"ver": good}, now=NOW)
        assert verify(f"Bearer {ok}") == APP
