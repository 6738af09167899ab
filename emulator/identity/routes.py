"""The identity service over HTTP: token endpoint, OpenID metadata and the key document.

Spec section Endpoints rows 4 to 6, for both authentication profiles (spec section Versioning).
The paths are those of ``ServiceConfig.placeholders(profile)``, so overriding a placeholder moves
its route. Per profile:

======  =======================  ======================================================
POST    ``token_url``            client credentials (form-encoded) → JSON token response
GET     ``openid_metadata_url``  the connector's OpenID metadata (connector → bot path)
GET     ``idp_openid_url``       the identity provider's metadata (emulator → bot path)
GET     ``jwks_uri``             the key document (``Cache-Control: max-age=432000``)
======  =======================  ======================================================

Beside them, ``GET /adfs/.well-known/openid-configuration`` (always at the root of the host)
answers the configured profile's identity provider metadata: what MSAL reads for the authority
``msal_authority(placeholders)`` (an AD FS authority, for which MSAL asks no public instance
discovery; docs/sdk.md).

When two profiles share a path, the configured profile's document is served; a shared token
path serves both, and the ``scope`` picks the profile. ``IdentityService`` holds the rules and
never sees aiohttp; the handlers parse, delegate and serialise. OAuth errors follow RFC 6749
§5.2 and are serialised in one place (``_oauth_response``).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from aiohttp import hdrs, web

from emulator.config import IDENTITY as IDENTITY_PREFIX
from emulator.config import (
    MSAL_AUTHORITY,
    BotRegistration,
    Placeholders,
    Profile,
    ServiceConfig,
)
from emulator.identity.keys import IdentityError, KeyStore
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON

FORM = "application/x-www-form-urlencoded"
CLIENT_CREDENTIALS = "client_credentials"
BODY_LIMIT = 64 * 1024
JWKS_MAX_AGE = 5 * 24 * 3600  # spec, Limits: "5 days cited as a suitable period"
BASIC_CHALLENGE = 'Basic realm="botemu", charset="UTF-8"'
_compact = partial(json.dumps, separators=(",", ":"), ensure_ascii=False)
_NO_STORE = {hdrs.CACHE_CONTROL: "no-store", hdrs.PRAGMA: "no-cache"}  # RFC 6749 §5.1

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class OAuthError(IdentityError):
    """A token request refused as RFC 6749 §5.2 says: ``error`` is the error code,
    ``description`` the ``error_description``, ``status`` 400, 401 (``invalid_client``) or 413."""

    def __init__(self, error: str, description: str, *, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status


def _invalid_client(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, status=401)


@dataclass(frozen=True)
class TokenRequest:
    """The parameters of a token request; None for an absent (or empty) one."""

    grant_type: str | None
    client_id: str | None
    client_secret: str | None
    scope: str | None


@dataclass(frozen=True)
class TokenGrant:
    """A successful token response (spec, Authentication: bot to connector, 2)."""

    access_token: str
    expires_in: int

    def to_json(self) -> dict[str, JSON]:
        return {
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "ext_expires_in": self.expires_in,
            "access_token": self.access_token,
        }


@dataclass
class IdentityService:
    """The identity service of one botemu: registered bots and profiles (``config``), signing
    keys (``keys``) and the time (``clock``)."""

    config: ServiceConfig
    keys: KeyStore
    clock: Callable[[], float] = time.time

    @classmethod
    def from_config(
        cls, config: ServiceConfig, *, clock: Callable[[], float] = time.time
    ) -> IdentityService:
        """Keys under ``config.certs_dir`` with ``config.key_grace_seconds`` of grace, endorsed
        for ``config.endorsements``."""
        keys = KeyStore(config.certs_dir, clock=clock, grace_seconds=config.key_grace_seconds,
                        endorsements=config.endorsements)  # fmt: skip
        return cls(config, keys, clock)

    def profiles(self) -> tuple[Profile, ...]:
        """Both profiles, the configured one first (it wins where two share a path)."""
        return (self.config.profile, *(p for p in Profile if p is not self.config.profile))

    def token_for(self, app_id: str, *, profile: Profile | None = None) -> tuple[str, int]:
        """(access token, expires_in) as the token endpoint issues it to the registered bot
        ``app_id`` for ``profile`` (default: the configured one)."""
        bot = self.config.bot(app_id)
        if bot is None:
            raise IdentityError(f"no bot is registered with app id {app_id!r}")
        grant = self._issue(bot, profile or self.config.profile)
        return grant.access_token, grant.expires_in

    def grant(self, request: TokenRequest, profiles: Sequence[Profile]) -> TokenGrant:
        """Answer a client-credentials request made to the token URL of ``profiles``."""
        if request.grant_type is None:
            raise OAuthError("invalid_request", "grant_type is missing")
        if request.grant_type != CLIENT_CREDENTIALS:
            raise OAuthError(
                "unsupported_grant_type",
                f"grant_type {_short(request.grant_type)} is not supported; use client_credentials",
            )
        bot = self.authenticate(request)
        scopes = {p: self.config.placeholders(p).connector_scope for p in profiles}
        expected = " or ".join(dict.fromkeys(scopes.values()))
        if request.scope is None:
            raise OAuthError("invalid_request", f"scope is missing; expected {expected}")
        chosen = next((p for p, scope in scopes.items() if scope == request.scope), None)
        if chosen is None:
            raise OAuthError("invalid_scope", f"scope {_short(request.scope)} is not {expected}")
        return self._issue(bot, chosen)

    def connector_metadata(self, profile: Profile) -> dict[str, JSON]:
        """The connector's OpenID metadata: the members of spec section Authentication
        (connector to bot, 2), with the spec's (and the real document's) ``RSA256``."""
        p = self.config.placeholders(profile)
        return {
            "issuer": p.connector_issuer,
            "authorization_endpoint": f"{p.base_url}{IDENTITY_PREFIX}/invalid",
            "jwks_uri": p.jwks_uri,
            "id_token_signing_alg_values_supported": ["RSA256"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        }

    def idp_metadata(self, profile: Profile) -> dict[str, JSON]:
        """The identity provider's OpenID Provider Metadata (emulator to bot path)."""
        p = self.config.placeholders(profile)
        return {
            "issuer": p.emulator_issuer,
            "authorization_endpoint": _authorize_url(p),
            "token_endpoint": p.token_url,
            "jwks_uri": p.jwks_uri,
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "grant_types_supported": [CLIENT_CREDENTIALS],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "claims_supported": ["iss", "aud", "iat", "nbf", "exp", "appid", "azp", "ver"],
        }

    def authenticate(self, request: TokenRequest) -> BotRegistration:
        """The registered bot whose client id and secret the request carries."""
        if request.client_id is None:
            raise _invalid_client("no client authentication: send client_id and client_secret")
        if request.client_secret is None:
            raise _invalid_client("client_secret is missing")
        bot = self.config.bot(request.client_id)
        if bot is None:
            raise _invalid_client(
                f"no bot is registered with client_id {_short(request.client_id)}"
            )
        given = request.client_secret.encode("utf-8")
        if not hmac.compare_digest(given, bot.app_password.encode("utf-8")):
            raise _invalid_client(f"client_secret is wrong for client_id {bot.app_id!r}")
        return bot

    def _issue(self, bot: BotRegistration, profile: Profile) -> TokenGrant:
        p = self.config.placeholders(profile)
        lifetime = self.config.token_lifetime_seconds
        claims: dict[str, JSON] = {
            "aud": p.connector_audience,
            "iss": p.emulator_issuer,
            "appid": bot.app_id,
            "appidacr": "1",  # authenticated with a client secret
            "ver": "1.0",
        }
        token = mint(self.keys, claims, now=self.clock(), lifetime=lifetime)
        return TokenGrant(token, lifetime)


IDENTITY: web.AppKey[IdentityService] = web.AppKey("identity", IdentityService)


# --- routes -------------------------------------------------------------------------------------


def identity_routes(service: IdentityService) -> list[web.RouteDef]:
    """Every route of the identity service, for both profiles (see the module docstring)."""
    token_paths: dict[str, list[Profile]] = {}
    documents: dict[str, Handler] = {}
    for profile in service.profiles():
        p = service.config.placeholders(profile)
        token_paths.setdefault(_path(p.token_url), []).append(profile)
        documents.setdefault(
            _path(p.openid_metadata_url), _document(service.connector_metadata, profile)
        )
        documents.setdefault(_path(p.idp_openid_url), _document(service.idp_metadata, profile))
        documents.setdefault(_path(p.jwks_uri), _jwks(service))
    documents.setdefault(f"{MSAL_AUTHORITY}/.well-known/openid-configuration",
                         _document(service.idp_metadata, service.config.profile))  # fmt: skip
    return [
        *(
            web.post(path, _token(service, tuple(profiles)))
            for path, profiles in token_paths.items()
        ),
        *(web.get(path, handler) for path, handler in documents.items()),
    ]


def msal_authority(p: Placeholders) -> str:
    """The authority an MSAL client is given to get tokens from botemu: ``/adfs`` on the host of
    the base URL (MSAL takes an authority for AD FS only when ``adfs`` is its first path segment,
    so a path in ``base_url`` is left out). MSAL reads ``{authority}/.well-known/openid-
    configuration`` and posts to the ``token_endpoint`` it names."""
    parts = urlsplit(p.base_url)
    return f"{parts.scheme}://{parts.netloc}{MSAL_AUTHORITY}"


def make_identity_app(service: IdentityService) -> web.Application:
    """An app serving only the identity routes (for tests); ``app[IDENTITY]`` is ``service``."""
    app = web.Application()
    app[IDENTITY] = service
    app.add_routes(identity_routes(service))
    return app


def _token(service: IdentityService, profiles: tuple[Profile, ...]) -> Handler:
    async def token(request: web.Request) -> web.StreamResponse:
        try:
            form = await _read_form(request)
            grant = service.grant(
                _token_request(form, request.headers.get(hdrs.AUTHORIZATION)), profiles
            )
        except OAuthError as e:
            return _oauth_response(e)
        return web.json_response(grant.to_json(), headers=_NO_STORE, dumps=_compact)

    return token


def _document(make: Callable[[Profile], dict[str, JSON]], profile: Profile) -> Handler:
    async def document(request: web.Request) -> web.StreamResponse:
        return web.json_response(make(profile), dumps=_compact)

    return document


def _jwks(service: IdentityService) -> Handler:
    async def jwks(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            service.keys.jwks(),
            headers={hdrs.CACHE_CONTROL: f"max-age={JWKS_MAX_AGE}"},
            dumps=_compact,
        )

    return jwks


def _oauth_response(error: OAuthError) -> web.Response:
    """The one place an OAuth error becomes a response (RFC 6749 §5.2). Every 401 carries a
    Basic challenge (RFC 7235 §3.1), whichever way the client authenticated."""
    headers = dict(_NO_STORE)
    if error.status == 401:
        headers[hdrs.WWW_AUTHENTICATE] = BASIC_CHALLENGE
    body: dict[str, JSON] = {"error": error.error, "error_description": error.description}
    return web.json_response(body, status=error.status, headers=headers, dumps=_compact)


# --- parsing ------------------------------------------------------------------------------------


async def _read_form(request: web.Request) -> dict[str, str]:
    """The non-empty parameters of a form-encoded body of at most ``BODY_LIMIT`` bytes."""
    if hdrs.CONTENT_TYPE not in request.headers:
        raise OAuthError("invalid_request", f"Content-Type is missing; send {FORM}")
    if request.content_type != FORM:
        raise OAuthError("invalid_request", f"Content-Type is {request.content_type}; send {FORM}")
    if (request.charset or "utf-8").lower() not in ("utf-8", "us-ascii"):
        raise OAuthError("invalid_request", f"charset {_short(request.charset)} is not UTF-8")
    too_large = OAuthError("invalid_request", f"the body is over {BODY_LIMIT} bytes", status=413)
    if request.content_length is not None and request.content_length > BODY_LIMIT:
        raise too_large
    body = bytearray()
    while chunk := await request.content.read(BODY_LIMIT + 1 - len(body)):
        body += chunk
        if len(body) > BODY_LIMIT:
            raise too_large
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "the body is not UTF-8 form encoding") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise OAuthError("invalid_request", f"{_short(name)} is given more than once")
        form[name] = value
    return {name: value for name, value in form.items() if value}  # RFC 6749 §3.1: empty = absent


def _token_request(form: dict[str, str], authorization: str | None) -> TokenRequest:
    """The request's parameters; client credentials from the form or from HTTP Basic
    (RFC 6749 §2.3.1), never both."""
    basic = _basic_credentials(authorization)
    client_id, client_secret = form.get("client_id"), form.get("client_secret")
    if basic is not None:
        if client_secret is not None:
            raise OAuthError(
                "invalid_request",
                "client credentials in both the Authorization header and the form",
            )
        if client_id is not None and client_id != basic[0]:
            raise OAuthError("invalid_request", "client_id differs from the Authorization header's")
        client_id, client_secret = basic
    return TokenRequest(
        grant_type=form.get("grant_type"),
        client_id=client_id,
        client_secret=client_secret,
        scope=form.get("scope"),
    )


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    if authorization is None:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "basic":
        raise _invalid_client(f"client authentication scheme {_short(scheme)} is not supported")
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _invalid_client("the Basic credentials are not base64 of UTF-8") from None
    user, colon, password = decoded.partition(":")
    if not colon or not user or not password:
        raise _invalid_client("the Basic credentials are not client_id:client_secret")
    return unquote_plus(user), unquote_plus(password)


def _short(value: object, limit: int = 60) -> str:
    """A value from the request, quoted, on one line and at most ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


def _authorize_url(p: Placeholders) -> str:
    """Beside the token URL, as at the real identity provider (not served by botemu)."""
    return p.token_url.rsplit("/", 1)[0] + "/authorize"
