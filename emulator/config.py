"""Settings shared across botemu's services: addresses, the auth profile, registered bots.

botemu listens on 127.0.0.1 unless told otherwise; any other address is an explicit flag.

Every placeholder of the spec maps to a value botemu serves itself, for both authentication
configurations of spec section Versioning (``v3.0`` and ``v3.1``). By default they are all URLs
under botemu's own base address, so a bot configured with them talks to nothing but botemu. Each
value can be overridden (``ServiceConfig.overrides``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9070
DEFAULT_EMULATOR = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
"""Where a command looks for a running botemu unless told otherwise (``--emulator``)."""
ENV_NAMES = {
    "base_url": "BOTEMU_BASE_URL",
    "token_url": "BOTEMU_TOKEN_URL",
    "connector_scope": "BOTEMU_CONNECTOR_SCOPE",
    "openid_metadata_url": "BOTEMU_OPENID_METADATA_URL",
    "jwks_uri": "BOTEMU_JWKS_URI",
    "connector_issuer": "BOTEMU_CONNECTOR_ISSUER",
    "emulator_issuer": "BOTEMU_EMULATOR_ISSUER",
    "idp_openid_url": "BOTEMU_IDP_OPENID_URL",
    "legacy_audience": "BOTEMU_LEGACY_AUDIENCE",
}
"""The environment variable that carries each placeholder to a bot (``botemu serve`` prints them)."""
"""The documented default port of a running botemu (``botemu serve``)."""


def platform_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    """The base URL of botemu's calling platform API (``links.call`` points under it)."""
    return f"http://{host}:{port}/_botemu"


class Profile(enum.StrEnum):
    """The two authentication configurations of spec section Versioning."""

    V30 = "v3.0"
    V31 = "v3.1"


PLATFORM_OFF = -1
"""``ServiceConfig.platform_port`` for no listener of the platform's hosts."""
IDENTITY = "/_identity"
"""Where the identity service lives under the base URL."""
CONNECTOR_RESOURCE = "api://botemu-connector"
GRAPH_RESOURCE = "api://botemu-graph"
MSAL_AUTHORITY = "/adfs"
"""The authority path the platform SDKs' MSAL clients are given: an AD FS authority, for which
MSAL (Python) asks no public instance discovery and reads ``/adfs/.well-known/openid-configuration``
(docs/sdk.md)."""
REAL_ISSUERS = {
    "connector_issuer": "https://api.botframework.com",
    "emulator_issuer": "https://sts.windows.net/d6d49420-f39b-4df7-a1dc-d59a935871db/",
}
"""The real platform's public issuer strings (the SDKs' ``ToBotFromChannelTokenIssuer`` and their
first hard-coded emulator issuer, "Auth v3.1, 1.0 token"): identifiers inside tokens, never
addresses botemu contacts."""


@dataclass(frozen=True, slots=True)
class Placeholders:
    """The value of every placeholder of the spec, for one profile.

    ``to_json`` has exactly the placeholder names (without braces) as keys.
    """

    base_url: str
    token_url: str
    connector_scope: str
    openid_metadata_url: str
    jwks_uri: str
    connector_issuer: str
    emulator_issuer: str
    idp_openid_url: str
    legacy_audience: str

    @property
    def connector_audience(self) -> str:
        """The ``aud`` of tokens the bot presents to the connector: the scope's resource."""
        return self.connector_scope.removesuffix("/.default")

    def to_json(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


PLACEHOLDER_NAMES = tuple(f.name for f in fields(Placeholders))


def default_placeholders(base_url: str, profile: Profile) -> Placeholders:
    """botemu's own value for every placeholder (spec, Versioning 3).

    The connector issuer and the key document are the same in both profiles; the token URL, the
    scope, the metadata addresses and the emulator issuer differ, as in the spec's table.
    """
    base = base_url.rstrip("/")
    identity = f"{base}{IDENTITY}"
    tenant = "connector" if profile is Profile.V31 else "common"
    return Placeholders(
        base_url=base,
        token_url=f"{identity}/{tenant}/oauth2/v2.0/token",
        connector_scope=f"{CONNECTOR_RESOURCE if profile is Profile.V31 else GRAPH_RESOURCE}/.default",
        openid_metadata_url=f"{identity}/{profile.value}/.well-known/openidconfiguration",
        jwks_uri=f"{identity}/keys",
        connector_issuer=f"{identity}/connector-issuer",
        emulator_issuer=f"{identity}/{tenant}/",
        idp_openid_url=f"{identity}/{tenant}/v2.0/.well-known/openid-configuration",
        legacy_audience=GRAPH_RESOURCE,
    )


ANONYMOUS_APP_ID = "anonymous-bot"
"""The id botemu gives the first bot registered without an app id (the next: ``-2``, ``-3``)."""


def anonymous_app_id(number: int) -> str:
    """The id of the ``number``-th anonymous bot (from 1)."""
    return ANONYMOUS_APP_ID if number == 1 else f"{ANONYMOUS_APP_ID}-{number}"


@dataclass(frozen=True, slots=True)
class BotRegistration:
    """A bot registered with botemu: its app id and password, and where botemu reaches it."""

    app_id: str
    app_password: str
    endpoint: str | None = None
    """Messaging endpoint: where the connector posts activities."""
    calling_endpoint: str | None = None
    name: str | None = None
    anonymous: bool = False
    """Registered without an app id, as an SDK template starts: botemu sends it activities with no
    Authorization header, and the connector takes unauthenticated requests on its conversations
    (and on no others). ``app_id`` is then a name botemu gives it (``ANONYMOUS_APP_ID``)."""


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """An OAuth connection of the user token service, as configured (docs/oauth.md): its name,
    scopes, token lifetime (seconds) and test users (id, display name; none: the default ones)."""

    name: str
    scopes: tuple[str, ...] = ("User.Read",)
    lifetime: int = 3600
    users: tuple[tuple[str, str], ...] = ()
    sso: bool = True
    """Whether the connection has a token exchange URL (single sign-on); without, an exchange
    is refused and a bot falls back to its card."""


MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """What a running botemu keeps in memory at most, whatever bots and pages push
    (docs/security.md, "Memory"): ``botemu serve --max-attachments-mib`` and the others, the
    configuration file's ``limits``."""

    attachment_bytes: int = 256 * MiB
    """Bytes of stored attachments and uploads, every bot together; past it, 413."""
    attachment_bytes_per_bot: int = 64 * MiB
    """Bytes of stored attachments and uploads of one bot's conversations; past it, 413."""
    activities_kept: int = 100
    """Activities of one conversation kept in memory (the last ones); every one stays in the
    transcript store."""
    outbox_bytes: int = 8 * MiB
    """Bytes waiting to be written to one live socket of the log view; past it, the socket is
    closed (1008), as its page reads too slowly."""
    conversations_per_bot: int = 1000
    """Conversations one bot creates (``POST /v3/conversations``) kept in memory; past it, 429
    until a reset."""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """How one running botemu is set up (``botemu serve``).

    ``overrides`` replaces placeholder values, keyed ``name`` (both profiles) or
    ``profile.name`` (``"v3.0.token_url"``).
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    profile: Profile = Profile.V31
    bots: tuple[BotRegistration, ...] = ()
    certs_dir: Path = Path("certs")
    key_grace_seconds: float = 24 * 3600.0
    token_lifetime_seconds: int = 3600
    overrides: Mapping[str, str] = field(default_factory=dict)
    endorsements: tuple[str, ...] = ()
    """Channel ids every published signing key is endorsed for (the JWKS ``endorsements``; field
    notes: SDKs then require an activity's ``channelId`` to be listed). Empty: none published."""
    tls: bool = False
    """Serve over HTTPS with the server certificate in ``certs_dir`` (``botemu serve --tls``)."""
    real_issuers: bool = False
    """Tokens and metadata carry the real platform's issuer strings (``REAL_ISSUERS``), signed
    with botemu's keys (``botemu serve --real-issuers``); overrides still win."""
    oauth_connections: tuple[OAuthSettings, ...] = ()
    """The user token service's OAuth connections (``--oauth-connection``, the file's
    ``oauth_connections``); a name not listed is made on first use with the default users."""
    platform_port: int | None = None
    """The port of the listener that answers for the platform's well-known hosts
    (``emulator/identity/platform.py``): None, the port after ``port`` (any free one when that
    is taken); 0, any free port; ``PLATFORM_OFF``, no listener."""
    allow_hosts: tuple[str, ...] = ()
    """Host names botemu answers to besides loopback and its own address (``--allow-host``,
    ``NAME`` or ``NAME:PORT``; emulator/guard.py)."""
    limits: MemoryLimits = MemoryLimits()
    """What it keeps in memory at most (``MemoryLimits``)."""

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def placeholders(self, profile: Profile | None = None) -> Placeholders:
        chosen = profile or self.profile
        values = default_placeholders(self.overrides.get("base_url", self.base_url), chosen)
        if self.real_issuers:
            values = replace(values, **REAL_ISSUERS)
        changed = {
            name: self.overrides[key]
            for name in PLACEHOLDER_NAMES
            for key in (name, f"{chosen.value}.{name}")
            if key in self.overrides
        }
        return Placeholders(**(values.to_json() | changed))

    def bot(self, app_id: str) -> BotRegistration | None:
        return next((b for b in self.bots if b.app_id == app_id), None)

    def anonymous(self, app_id: str) -> bool:
        """Whether ``app_id`` names a bot registered without credentials."""
        bot = self.bot(app_id)
        return bot is not None and bot.anonymous

    def only_anonymous(self) -> str | None:
        """The id of the one anonymous bot, when exactly one is registered."""
        found = [b.app_id for b in self.bots if b.anonymous]
        return found[0] if len(found) == 1 else None
