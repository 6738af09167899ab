"""The platform's well-known identity hosts, answered by botemu with its own keys.

Some SDKs leave no setting for where they fetch signing keys or ask for tokens: the Agents SDK
for Python fetches keys from ``https://login.botframework.com/v1/.well-known/keys`` or
``https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys`` (by the token's issuer), its
MSAL clients ask ``https://login.microsoftonline.com/{tenant}`` for tokens, and MSAL for node
asks the public cloud's instance discovery about any authority it does not know. botemu answers
those documents itself (docs/decisions.md, "The platform's hosts"), on a listener of its own that
bots reach through a proxy variable or a node preload (``emulator.identity.platform``):

=====  ==========================================================  ===============================
GET    login.botframework.com ``/v1/.well-known/openidconfiguration``  the connector's metadata
GET    login.botframework.com ``/v1/.well-known/keys``                   botemu's key document
GET    login.microsoftonline.com ``/{tenant}/v2.0/.well-known/openid-configuration`` (and v1)
GET    login.microsoftonline.com ``/{tenant}/discovery/v2.0/keys`` (and ``/discovery/keys``)
GET    login.microsoftonline.com ``/common/discovery/instance``       instance discovery
POST   login.microsoftonline.com ``/{tenant}/oauth2/v2.0/token``        client credentials
=====  ==========================================================  ===============================

Only these hosts, only these paths: anything else is 404 (another host, 421). The user token service's public
host, ``api.botframework.com``, is answered by botemu's own token service (``/api/...`` only). A token from the
token route is botemu's (``IdentityService.authenticate``), for the scope the SDKs ask for,
``https://api.botframework.com/.default`` (or botemu's own connector scope): its audience is
``PLATFORM_AUDIENCE``, which botemu's connector accepts beside its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from functools import partial

from aiohttp import hdrs, web

from emulator.identity.routes import (
    _NO_STORE,
    IdentityService,
    OAuthError,
    TokenGrant,
    TokenRequest,
    _oauth_response,
    _read_form,
    _token_request,
)
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON

BOTFRAMEWORK_HOST = "login.botframework.com"
ENTRA_HOST = "login.microsoftonline.com"
TOKEN_SERVICE_HOST = "api.botframework.com"
"""The user token service's public address (``/api/usertoken``, ``/api/botsignin``)."""
PLATFORM_HOSTS = (BOTFRAMEWORK_HOST, ENTRA_HOST, "login.windows.net", "sts.windows.net",
                  TOKEN_SERVICE_HOST)  # fmt: skip
"""The hosts botemu answers for, and nothing else."""
PLATFORM_AUDIENCE = "https://api.botframework.com"
"""The audience of a token for ``PLATFORM_SCOPE``: the real connector's resource."""
PLATFORM_SCOPE = f"{PLATFORM_AUDIENCE}/.default"
DEFAULT_TENANT = "botframework.com"
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-]{0,99}$")
_compact = partial(json.dumps, separators=(",", ":"), ensure_ascii=False)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Recorder = Callable[[web.Request, int, JSON], None]
"""(request, status, what was answered): the exchange, for the transcript."""
Forward = Callable[[web.Request], Awaitable[web.StreamResponse]]
"""Answers a request to the token service's public host with botemu's own token service."""


def platform_host(request: web.Request) -> str | None:
    """The platform host a request was made to (its Host without the port), or None."""
    host = (request.host or "").lower()
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name if name in PLATFORM_HOSTS else None


class WellKnown:
    """The documents and the token route of the platform's hosts, over an ``IdentityService``."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def connector_metadata(self) -> dict[str, JSON]:
        """``login.botframework.com/v1/.well-known/openidconfiguration``: botemu's connector
        metadata, with its keys at the platform's key address."""
        document = self.service.connector_metadata(self.service.config.profile)
        document["jwks_uri"] = f"https://{BOTFRAMEWORK_HOST}/v1/.well-known/keys"
        return document

    def tenant_metadata(self, host: str, tenant: str, version: str) -> dict[str, JSON]:
        """The OpenID metadata of ``https://{host}/{tenant}`` (``version`` "v2.0" or "v1")."""
        base = f"https://{host}/{tenant}"
        v2 = version == "v2.0"
        return {
            "issuer": f"{base}/v2.0" if v2 else f"https://sts.windows.net/{tenant}/",
            "authorization_endpoint": f"{base}/oauth2{'/v2.0' if v2 else ''}/authorize",
            "token_endpoint": f"{base}/oauth2{'/v2.0' if v2 else ''}/token",
            "jwks_uri": f"{base}/discovery{'/v2.0' if v2 else ''}/keys",
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "grant_types_supported": ["client_credentials"],
            "tenant_region_scope": "WW",
            "cloud_instance_name": "microsoftonline.com",
        }

    def instance_discovery(self, authorization_endpoint: str | None) -> dict[str, JSON]:
        """The answer of ``/common/discovery/instance``: MSAL trusts the authority it asked about
        (a host it does not know is then taken as a custom domain)."""
        authority = (authorization_endpoint or "").split("/oauth2/", 1)[0].rstrip("/")
        if not authority.startswith("https://"):
            authority = f"https://{ENTRA_HOST}/common"
        return {
            "tenant_discovery_endpoint": f"{authority}/v2.0/.well-known/openid-configuration",
            "api-version": "1.1",
            "metadata": [{
                "preferred_network": ENTRA_HOST,
                "preferred_cache": "login.windows.net",
                "aliases": [ENTRA_HOST, "login.windows.net", "login.microsoft.com",
                            "sts.windows.net"],
            }],
        }  # fmt: skip

    def grant(self, request: TokenRequest) -> TokenGrant:
        """Client credentials at the platform's token route: botemu's bot, for the platform's
        scope (a token botemu's connector accepts) or botemu's own connector scope."""
        if request.grant_type is None:
            raise OAuthError("invalid_request", "grant_type is missing")
        if request.grant_type != "client_credentials":
            raise OAuthError("unsupported_grant_type",
                             "only client_credentials is answered here")  # fmt: skip
        bot = self.service.authenticate(request)
        config = self.service.config
        own = config.placeholders().connector_scope
        if request.scope not in (PLATFORM_SCOPE, own):
            raise OAuthError("invalid_scope", f"scope is {request.scope!r}; botemu answers "
                             f"{PLATFORM_SCOPE} and {own} here")  # fmt: skip
        p = config.placeholders()
        audience = PLATFORM_AUDIENCE if request.scope == PLATFORM_SCOPE else p.connector_audience
        claims: dict[str, JSON] = {"aud": audience, "iss": p.emulator_issuer,
                                   "appid": bot.app_id, "appidacr": "1", "ver": "1.0"}  # fmt: skip
        lifetime = config.token_lifetime_seconds
        token = mint(self.service.keys, claims, now=self.service.clock(), lifetime=lifetime)
        return TokenGrant(token, lifetime)


def wellknown_app(
    service: IdentityService, record: Recorder | None = None, forward: Forward | None = None
) -> web.Application:
    """An app answering the platform's hosts (see the module docstring); the token service's
    host (``/api/...`` on ``api.botframework.com``) is ``forward``'s."""
    known = WellKnown(service)
    app = web.Application(client_max_size=64 * 1024)

    def answer(request: web.Request, body: JSON, status: int = 200,
               headers: dict[str, str] | None = None) -> web.Response:  # fmt: skip
        if record is not None:
            record(request, status, body)
        return web.json_response(body, status=status, headers=headers, dumps=_compact)

    def jwks(request: web.Request) -> web.Response:
        return answer(request, service.keys.jwks(), headers={hdrs.CACHE_CONTROL: "max-age=86400"})

    async def dispatch(request: web.Request) -> web.StreamResponse:
        host = platform_host(request)
        if host is None:
            return answer(request, {"error": "misdirected", "error_description":
                                    f"botemu answers only {', '.join(PLATFORM_HOSTS)}"}, 421)  # fmt: skip
        parts = [p for p in request.path.split("/") if p]
        if host == TOKEN_SERVICE_HOST:
            if forward is None or parts[:1] != ["api"]:
                return _not_found(request, answer)
            return await forward(request)
        if request.method == hdrs.METH_POST:
            return await _token(request, parts, known, record)
        if request.method != hdrs.METH_GET:
            return answer(request, {"error": "method_not_allowed"}, 405)
        if host == BOTFRAMEWORK_HOST:
            if parts == ["v1", ".well-known", "openidconfiguration"]:
                return answer(request, known.connector_metadata())
            if parts == ["v1", ".well-known", "keys"]:
                return jwks(request)
            return _not_found(request, answer)
        if parts[:3] == ["common", "discovery", "instance"]:
            endpoint = request.query.get("authorization_endpoint")
            return answer(request, known.instance_discovery(endpoint))
        if not parts or not _TENANT.match(parts[0]):
            return _not_found(request, answer)
        tenant, rest = parts[0], parts[1:]
        if rest in (["v2.0", ".well-known", "openid-configuration"],
                    [".well-known", "openid-configuration"]):  # fmt: skip
            version = "v2.0" if rest[0] == "v2.0" else "v1"
            return answer(request, known.tenant_metadata(host, tenant, version))
        if rest in (["discovery", "v2.0", "keys"], ["discovery", "keys"]):
            return jwks(request)
        return _not_found(request, answer)

    app.router.add_route("*", "/{tail:.*}", dispatch)
    return app


def _not_found(
    request: web.Request, answer: Callable[[web.Request, JSON, int], web.Response]
) -> web.Response:
    return answer(request, {"error": "not_found", "error_description":
                            f"botemu does not answer {request.path[:200]} on this host"}, 404)  # fmt: skip


async def _token(
    request: web.Request, parts: list[str], known: WellKnown, record: Recorder | None
) -> web.StreamResponse:
    """``POST /{tenant}/oauth2/v2.0/token`` (or ``/oauth2/token``) on the Entra host."""
    if platform_host(request) == BOTFRAMEWORK_HOST or len(parts) < 3 or parts[1] != "oauth2" \
            or parts[2:] not in (["v2.0", "token"], ["token"]):  # fmt: skip
        response = web.json_response({"error": "not_found"}, status=404)
        if record is not None:
            record(request, 404, {"error": "not_found"})
        return response
    try:
        form = await _read_form(request)
        grant = known.grant(_token_request(form, request.headers.get(hdrs.AUTHORIZATION)))
    except OAuthError as e:
        if record is not None:
            record(request, e.status, {"error": e.error, "error_description": e.description})
        return _oauth_response(e)
    body = grant.to_json()
    if record is not None:
        record(request, 200, {**body, "access_token": "(a token, redacted)"})
    return web.json_response(body, headers=_NO_STORE, dumps=_compact)
