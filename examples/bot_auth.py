"""Token validation for the reference bots: the way we would tell a bot developer to check the
Bearer token on every request the platform sends.

Both reference bots use it: the echo bot (``echo_bot.py``) on every activity, the IVR bot
(``ivr_bot.py``) on every calling request (the Conversation and each result), because real calling
SDKs check the same token on calls (field notes, Calling: HTTP).

- ``KeySource``: one issuer's OpenID metadata and signing keys, cached.
- ``TokenValidator``: decides whether a request is authenticated, on one or more ``TokenPath``
  (the connector path; the emulator path for messaging). It takes a fetch function and a clock, so
  it is tested without a network and without waiting.

It imports only the standard library, aiohttp and PyJWT (which uses ``cryptography`` for RS256).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard
from urllib.parse import urlsplit

import aiohttp
import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

log = logging.getLogger("bot_auth")

JsonObject = dict[str, Any]
Clock = Callable[[], float]
"""Seconds since the epoch. JWT times (``exp``, ``nbf``) are epoch seconds, so this is wall time."""
FetchJson = Callable[[str], Awaitable[object]]
"""GET a URL and return its JSON body; raises on any failure."""

ALGORITHM = "RS256"  # the only signature algorithm accepted (spec; field notes)
CLOCK_SKEW = 5 * 60  # spec, Limits: 5 minutes either side of exp and nbf
KEY_CACHE_SECONDS = 5 * 24 * 3600  # spec, Limits: signing keys may be cached for 5 days
METADATA_CACHE_SECONDS = 24 * 3600  # field notes: the SDK caches OpenID metadata for a day
UNKNOWN_KID_REFETCH_SECONDS = 3600  # field notes: refetch on an unknown kid at most once an hour

CONNECTOR_PATH = "connector"
EMULATOR_PATH = "emulator"


class BotAuthError(Exception):
    """The root of this module's errors."""


class AuthError(BotAuthError):
    """The request is not authenticated: the bot answers 403, and nothing else is done."""


class KeyFetchError(BotAuthError):
    """The OpenID metadata or the keys could not be fetched: the token cannot be accepted."""


def is_secure_url(url: str) -> bool:
    """https, or plain http to this machine (a local emulator).

    The spec (Transport) wants TLS everywhere. The client secret, the access token and the signing
    keys all travel over these URLs, so the bot refuses plain http to any other host.
    """
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


# --- Signing keys --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SigningKey:
    kid: str
    public_key: RSAPublicKey
    endorsements: frozenset[str] | None
    """Channel ids this key may sign for (field notes); None when the key carries no list."""


def signing_key(jwk: object) -> SigningKey | None:
    """One usable RS256 public key of a JWK document (RFC 7517), or None to skip it."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
        return None
    if jwk.get("use", "sig") != "sig" or jwk.get("alg", ALGORITHM) != ALGORITHM:
        return None
    kid = jwk.get("kid")
    endorsements = jwk.get("endorsements")
    if not isinstance(kid, str):
        return None
    if endorsements is not None and not (
        isinstance(endorsements, list) and all(isinstance(e, str) for e in endorsements)
    ):
        return None  # an unreadable restriction must not become "no restriction"
    try:
        key = jwt.PyJWK(jwk, algorithm=ALGORITHM).key
    except jwt.PyJWTError:
        return None
    if not isinstance(key, RSAPublicKey):  # a JWK with private parts has no place here
        return None
    return SigningKey(kid, key, None if endorsements is None else frozenset(endorsements))


class KeySource:
    """The signing keys of one issuer, found through its OpenID metadata (spec, Connector to bot 2-3).

    Keys are kept for 5 days and the metadata for a day. A ``kid`` that is not in the set makes
    the bot fetch both again, at most once an hour, so a key rotation is picked up quickly and a
    stream of forged ``kid`` values cannot make the bot hammer the identity service.
    """

    def __init__(self, metadata_url: str, fetch_json: FetchJson, clock: Clock) -> None:
        self.metadata_url = metadata_url
        self._fetch = fetch_json
        self._clock = clock
        self._lock = asyncio.Lock()  # concurrent requests share one fetch
        self._jwks_uri: str | None = None
        self._metadata_at = 0.0
        self._keys: dict[str, SigningKey] = {}
        self._keys_at: float | None = None
        self._unknown_kid_refetch_at: float | None = None

    async def get(self, kid: str) -> SigningKey | None:
        async with self._lock:
            now = self._clock()
            if self._keys_at is None or now - self._keys_at >= KEY_CACHE_SECONDS:
                await self._load(now, refresh_metadata=False)
            elif kid not in self._keys and (
                self._unknown_kid_refetch_at is None
                or now - self._unknown_kid_refetch_at >= UNKNOWN_KID_REFETCH_SECONDS
            ):
                log.info("kid %r is unknown: fetching the keys of %s again", kid, self.metadata_url)
                self._unknown_kid_refetch_at = now
                await self._load(now, refresh_metadata=True)
            return self._keys.get(kid)

    async def _load(self, now: float, *, refresh_metadata: bool) -> None:
        if (
            refresh_metadata
            or self._jwks_uri is None
            or now - self._metadata_at >= METADATA_CACHE_SECONDS
        ):
            metadata = await self._get_json(self.metadata_url)
            jwks_uri = metadata.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not is_secure_url(jwks_uri):
                raise KeyFetchError(f"{self.metadata_url}: no usable jwks_uri ({jwks_uri!r})")
            self._jwks_uri, self._metadata_at = jwks_uri, now
        document = await self._get_json(self._jwks_uri)
        entries = document.get("keys")
        if not isinstance(entries, list):
            raise KeyFetchError(f"{self._jwks_uri}: no 'keys' list")
        keys = [k for k in map(signing_key, entries) if k is not None]
        self._keys, self._keys_at = {k.kid: k for k in keys}, now
        log.info("loaded %d signing keys from %s", len(keys), self._jwks_uri)

    async def _get_json(self, url: str) -> JsonObject:
        try:
            document = await self._fetch(url)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise KeyFetchError(f"GET {url} failed: {describe(exc)}") from exc
        if not isinstance(document, dict):
            raise KeyFetchError(f"GET {url}: not a JSON object")
        return document


# --- Validating incoming tokens ------------------------------------------------------------------


@dataclass(frozen=True)
class TokenPath:
    """One way a token may reach the bot: who issues it, for whom, where its keys are."""

    name: str
    issuer: str
    audience: str
    keys: KeySource
    app_id_claim: bool = False
    """The emulator path: the bot's app id must be in ``appid`` (``ver`` 1.0) or ``azp`` (2.0)."""


@dataclass(frozen=True)
class Caller:
    """Who sent a request that passed validation."""

    path: str  # CONNECTOR_PATH or EMULATOR_PATH
    claims: Mapping[str, object]


class TokenValidator:
    """Decides whether a request to the bot is authenticated. Every failure raises ``AuthError``.

    There is deliberately no option to turn any of it off (spec, Connector to bot 6).
    """

    def __init__(self, app_id: str, paths: Sequence[TokenPath], clock: Clock = time.time) -> None:
        self.app_id = app_id
        self._clock = clock
        self._paths = {path.issuer: path for path in paths}

    async def authenticate(
        self, authorization: str | None, activity: Mapping[str, object] | None = None
    ) -> Caller:
        """Check the Authorization header of a request that carries ``activity`` (None for a
        calling request, which carries no activity: then endorsements and ``serviceurl``, which
        are about activities, are not checked).

        Connector path (spec rules 1-6): Bearer scheme; a JWT; ``iss`` is the connector issuer;
        ``aud`` is the bot's app id; not expired (5 minutes' skew); RS256 signature by a key in
        the connector's key document.
        Emulator path (rules 1-7): the same with the emulator issuer and its own keys, the
        profile's audience, and the bot's app id in ``appid`` (``ver`` 1.0) or ``azp`` (2.0).
        Both paths (field notes): a key with ``endorsements`` must list the activity's
        ``channelId``, and a ``serviceurl`` claim must equal the activity's ``serviceUrl``.
        """
        token = bearer_token(authorization)  # rule 1
        try:
            header = jwt.get_unverified_header(token)  # rule 2: three base64url JSON parts
            # Only to choose which issuer's keys to check against: every claim is verified below.
            unverified_issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError as exc:
            raise AuthError(f"not a JWT: {exc}") from exc
        # RS256 only. PyJWT refuses any other alg too, because it is given algorithms=[RS256] and
        # an RSA public key object: "none", and HS256 signed with the public key, both fail.
        if header.get("alg") != ALGORITHM:
            raise AuthError(f"alg {header.get('alg')!r} is not accepted, only {ALGORITHM}")
        kid = header.get("kid")
        if not isinstance(kid, str):
            raise AuthError("the token header has no kid")
        path = self._paths.get(unverified_issuer) if isinstance(unverified_issuer, str) else None
        if path is None:  # rule 3
            raise AuthError(f"issuer {unverified_issuer!r} is not accepted")
        try:
            key = await path.keys.get(kid)
        except KeyFetchError as exc:  # cannot check the signature, so cannot accept the token
            log.error("cannot fetch the %s signing keys: %s", path.name, exc)
            raise AuthError(f"the {path.name} signing keys are unavailable") from exc
        if key is None:  # rule 6: the key must be in the key document
            raise AuthError(f"kid {kid!r} is not in the {path.name} key set")
        try:
            claims = jwt.decode(
                token,
                key.public_key,
                algorithms=[ALGORITHM],
                issuer=path.issuer,  # rule 3
                audience=path.audience,  # rule 4
                options={
                    "require": ["iss", "aud", "exp"],
                    "strict_aud": True,  # aud must *equal* the audience, not be a list holding it
                    "enforce_minimum_key_length": True,
                    # exp and nbf are checked below, against the injected clock (PyJWT reads
                    # the system clock). iat is not a rule of the spec.
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            # For example "InvalidAudienceError: Audience doesn't match (strict)".
            raise AuthError(f"{type(exc).__name__}: {exc}") from exc
        self._check_lifetime(claims)  # rule 5
        if path.app_id_claim:
            self._check_emulator_app_id(claims)  # emulator rule 5
        if activity is None:
            return Caller(path.name, claims)
        check_endorsements(key, activity.get("channelId"))
        service_url = claims.get("serviceurl")
        if service_url is not None and service_url != activity.get("serviceUrl"):
            # Exactly equal, as the SDK does: a trailing slash is a mismatch (field notes).
            raise AuthError(
                f"serviceurl claim {service_url!r} is not the activity's serviceUrl "
                f"{activity.get('serviceUrl')!r}"
            )
        return Caller(path.name, claims)

    def _check_lifetime(self, claims: Mapping[str, object]) -> None:
        now = self._clock()
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if not is_number(exp):
            raise AuthError("exp is not a number")
        if exp + CLOCK_SKEW <= now:
            raise AuthError("the token has expired")
        if nbf is not None:
            if not is_number(nbf):
                raise AuthError("nbf is not a number")
            if nbf - CLOCK_SKEW > now:
                raise AuthError("the token is not valid yet (nbf)")

    def _check_emulator_app_id(self, claims: Mapping[str, object]) -> None:
        # ver "1.0" puts the app id in appid, "2.0" in azp (field notes). A token without ver is
        # read as 1.0: the spec's rule 5 names appid.
        version = claims.get("ver", "1.0")
        if version == "1.0":
            claim = "appid"
        elif version == "2.0":
            claim = "azp"
        else:
            raise AuthError(f"unknown emulator token version {version!r}")
        if claims.get(claim) != self.app_id:
            raise AuthError(f"the {claim} claim is not this bot's app id")


def bearer_token(authorization: str | None) -> str:
    """The token of ``Authorization: Bearer <token>`` (the scheme name is case-insensitive)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("no Bearer token in the Authorization header")
    return token.strip()


def check_endorsements(key: SigningKey, channel_id: object) -> None:
    if key.endorsements is not None and channel_id not in key.endorsements:
        raise AuthError(f"key {key.kid!r} is not endorsed for channel {channel_id!r}")


def describe(exc: BaseException) -> str:
    """A one-line description of a network error (a bare TimeoutError has no message)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def connector_validator(
    app_id: str,
    openid_metadata_url: str,
    connector_issuer: str,
    fetch_json: FetchJson,
    clock: Clock = time.time,
) -> TokenValidator:
    """A validator of connector-path tokens only (spec, Connector to bot 4): what a calling bot
    needs, since the platform sends it the connector's token."""
    keys = KeySource(openid_metadata_url, fetch_json, clock)
    path = TokenPath(CONNECTOR_PATH, connector_issuer, app_id, keys)
    return TokenValidator(app_id, [path], clock)
