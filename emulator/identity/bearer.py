"""The Bearer tokens botemu presents to bots: on activities (the connector) and on calls.

Spec, Authentication, "Connector to bot": the connector sends ``Authorization: Bearer <JWT>`` on
each call to the bot. By default that is a connector-path token: ``iss`` the connector issuer,
``aud`` the bot's app id, and a ``serviceurl`` claim equal to the activity's ``serviceUrl``
exactly (field notes). On request it is an emulator-path token ("Local test emulator to bot"):
``iss`` the emulator issuer, ``aud`` the app id (v3.1) or the legacy audience (v3.0), and ``ver``
1.0 with ``appid`` or 2.0 with ``azp``.

The calling platform sends the same connector-path token on every calling request (the
Conversation, each result, each retry), without ``serviceurl``: a call has no serviceUrl (field
notes, Calling: HTTP, last point: the SDKs require a Bearer JWT with the same issuer, audience
and skew rules as messaging).

Tokens are cached and reused until five minutes before they expire, not signed per request.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.config import Placeholders, Profile
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import mint
from emulator.jsonutil import JSONObject

REFRESH_BEFORE = 300.0
"""Seconds before expiry when a cached token is replaced."""


class TokenKind(enum.StrEnum):
    CONNECTOR = "connector"
    EMULATOR = "emulator"
    CALLING = "calling"


@dataclass
class BotTokens:
    """The tokens botemu presents to bots, cached per bot, path and serviceUrl."""

    keys: KeyStore
    placeholders: Placeholders
    profile: Profile = Profile.V31
    clock: Callable[[], float] = time.time
    lifetime: int = 3600
    _cache: dict[tuple[str, str, str, str, str], tuple[str, float]] = field(default_factory=dict)

    def token(
        self,
        app_id: str,
        *,
        service_url: str = "",
        kind: TokenKind = TokenKind.CONNECTOR,
        version: str = "1.0",
    ) -> str:
        """A token for ``app_id``: from the cache while it has more than ``REFRESH_BEFORE``
        seconds left and its key still signs, else newly minted."""
        return self.issue(app_id, service_url=service_url, kind=kind, version=version)[0]

    def issue(
        self,
        app_id: str,
        *,
        service_url: str = "",
        kind: TokenKind = TokenKind.CONNECTOR,
        version: str = "1.0",
    ) -> tuple[str, float]:
        """(token, its expiry in seconds since the epoch); see ``token``."""
        now = self.clock()
        kid = self.keys.current().kid
        key = (app_id, service_url, kind.value, version, kid)
        cached = self._cache.get(key)
        if cached is not None and cached[1] - REFRESH_BEFORE > now:
            return cached
        claims = self.claims(app_id, service_url=service_url, kind=kind, version=version)
        issued = mint(self.keys, claims, now=now, lifetime=self.lifetime), now + self.lifetime
        self._cache[key] = issued
        return issued

    def calling(self, app_id: str) -> tuple[str, float]:
        """(token, expiry) for the calling platform's requests to the bot ``app_id``."""
        return self.issue(app_id, kind=TokenKind.CALLING)

    def claims(
        self, app_id: str, *, service_url: str = "", kind: TokenKind, version: str = "1.0"
    ) -> JSONObject:
        p = self.placeholders
        if kind is TokenKind.CALLING:
            return {"iss": p.connector_issuer, "aud": app_id}
        if kind is TokenKind.CONNECTOR:
            return {"iss": p.connector_issuer, "aud": app_id, "serviceurl": service_url}
        audience = app_id if self.profile is Profile.V31 else p.legacy_audience
        claims: JSONObject = {"iss": p.emulator_issuer, "aud": audience, "ver": version}
        claims["azp" if version == "2.0" else "appid"] = app_id
        return claims
