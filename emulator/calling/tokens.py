"""The Bearer token on every calling request: where it comes from, and how a client finds it.

The calling platform sends ``Authorization: Bearer <JWT>`` on every request to a bot (the
Conversation, each result, each retry): a connector-path token signed by botemu's identity
service (``emulator.identity.bearer``), ``iss`` the connector issuer, ``aud`` the bot's app id. A
bot checks it against botemu's OpenID metadata, as it checks a messaging token.

A ``TokenSource`` gives the token of one app id:

- ``LocalTokens`` signs it here, with a key store and the placeholders of the botemu that
  publishes those keys (an in-process botemu, or the state directory ``botemu serve`` uses);
- ``RemoteTokens`` asks a running botemu (``POST /_botemu/calling/token``), so the token is
  signed by exactly the keys that botemu publishes.

Both cache the token and renew it five minutes before it expires. ``resolve`` picks one the way
the command line does (``docs/calling-http.md``, "The Bearer token").
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp

from emulator.client import control_ssl
from emulator.config import DEFAULT_EMULATOR, ServiceConfig
from emulator.errors import BotemuError
from emulator.guard import control_headers
from emulator.identity.bearer import REFRESH_BEFORE, BotTokens

CONTROL_TIMEOUT = 5.0
MAX_APP_ID = 256


class TokenUnavailable(BotemuError):
    """No token could be had (the botemu that signs them stopped answering, say)."""


class TokenSource(Protocol):
    """Where the Bearer token of a call's requests comes from."""

    @property
    def app_id(self) -> str: ...

    @property
    def origin(self) -> str:
        """Who signs the tokens, for the transcript: ``botemu at http://...``."""
        ...

    async def token(self, http: aiohttp.ClientSession) -> str:
        """The token to send now; raises ``TokenUnavailable``."""
        ...


@dataclass
class LocalTokens:
    """Tokens signed here, with the keys and issuer of ``tokens``."""

    tokens: BotTokens
    app_id: str

    @property
    def origin(self) -> str:
        return f"the keys in {self.tokens.keys.directory}, issuer {self.tokens.placeholders.connector_issuer}"

    async def token(self, http: aiohttp.ClientSession) -> str:
        return self.tokens.calling(self.app_id)[0]


class RemoteTokens:
    """Tokens from the running botemu at ``emulator`` (its control API), cached until five
    minutes before they expire. ``certs``: that botemu's certificates directory, which holds
    its control secret (default ``certs/``)."""

    def __init__(
        self,
        emulator: str,
        app_id: str,
        *,
        clock: Callable[[], float] = time.time,
        certs: Path | None = None,
    ) -> None:
        self.emulator = emulator.rstrip("/")
        self.app_id = app_id
        self.clock = clock
        self.certs = certs
        self._cached: tuple[str, float] | None = None
        self._lock = asyncio.Lock()

    @property
    def origin(self) -> str:
        return f"botemu at {self.emulator}"

    async def token(self, http: aiohttp.ClientSession) -> str:
        cached = self._cached
        if cached is not None and cached[1] - REFRESH_BEFORE > self.clock():
            return cached[0]
        async with self._lock:
            cached = self._cached
            if cached is None or cached[1] - REFRESH_BEFORE <= self.clock():
                cached = self._cached = await self._fetch(http)
            return cached[0]

    async def _fetch(self, http: aiohttp.ClientSession) -> tuple[str, float]:
        url = f"{self.emulator}/_botemu/calling/token"
        try:
            answer = await _post_json(http, url, {"app_id": self.app_id},
                                      headers=control_headers(self.certs))  # fmt: skip
        except BotemuError as e:
            raise TokenUnavailable(f"no calling token from {self.emulator}: {e}") from None
        token, expires_in = answer.get("token"), answer.get("expires_in")
        if not isinstance(token, str) or not isinstance(expires_in, int | float):
            raise TokenUnavailable(f"{url}: the answer has no token and expires_in")
        return token, self.clock() + float(expires_in)


@dataclass(frozen=True)
class Resolved:
    """What ``resolve`` found: the token source (None: no Authorization header), the app id,
    and one line saying where both came from."""

    tokens: TokenSource | None
    app_id: str | None
    note: str


async def resolve(
    *,
    bot_url: str,
    app_id: str | None = None,
    emulator: str | None = None,
    certs: Path | None = None,
    no_token: bool = False,
    control_certs: Path | None = None,
) -> Resolved:
    """The token source of a client command (``call``, ``test``), with no flags in the common
    case:

    - ``no_token``: none;
    - a botemu answering at ``emulator`` (default http://127.0.0.1:9070): its tokens; without
      ``app_id``, that of the bot registered there with ``bot_url`` as its calling endpoint, or of
      its only registered bot;
    - an ``emulator`` given explicitly that does not answer: an error;
    - else: tokens signed with the keys in ``certs`` (default ``certs/``, the state directory of
      ``botemu serve``) for a botemu on the default address, which publishes them once it runs.

    A running botemu's control secret is read from ``control_certs``, else ``certs``, else
    ``certs/`` (emulator/guard.py).

    Without an app id there is no token: its audience would be nobody's."""
    if no_token:
        return Resolved(None, app_id, "no Authorization header (--no-token)")
    url = (emulator or DEFAULT_EMULATOR).rstrip("/")
    async with aiohttp.ClientSession() as http:
        config = await _config_of(http, url)
    if config is None and emulator is not None:
        raise BotemuError(f"no botemu answers at {url} (start one with botemu serve)")
    if config is not None:
        app_id = app_id or _registered_app_id(config, bot_url)
        if app_id is None:
            return Resolved(None, None, _NO_APP_ID)
        _check_app_id(app_id)
        return Resolved(RemoteTokens(url, app_id, certs=control_certs or certs), app_id,
                        f"Bearer tokens from botemu at {url}")  # fmt: skip
    if app_id is None:
        return Resolved(None, None, _NO_APP_ID)
    _check_app_id(app_id)
    service = ServiceConfig(certs_dir=certs or Path("certs"))
    tokens = local_tokens(service, app_id)
    return Resolved(tokens, app_id, f"Bearer tokens signed with {tokens.origin} (no botemu "
                    f"answers at {url}: start botemu serve there so the bot can fetch the keys)")  # fmt: skip


_NO_APP_ID = (
    "no Authorization header: no app id is known for this bot (give --app-id, or register the "
    "bot with botemu serve with its calling_endpoint)"
)


def local_tokens(config: ServiceConfig, app_id: str) -> LocalTokens:
    """Tokens signed with the keys of ``config`` (its certs directory) under its issuer."""
    from emulator.identity.keys import KeyStore

    keys = KeyStore(config.certs_dir, grace_seconds=config.key_grace_seconds)
    bot_tokens = BotTokens(keys, config.placeholders(), config.profile,
                           lifetime=config.token_lifetime_seconds)  # fmt: skip
    return LocalTokens(bot_tokens, app_id)


def _check_app_id(app_id: str) -> None:
    if not app_id.strip() or len(app_id) > MAX_APP_ID:
        raise BotemuError(f"app id {app_id[:40]!r} must be 1 to {MAX_APP_ID} characters")


def _registered_app_id(config: dict[str, Any], bot_url: str) -> str | None:
    bots = [b for b in config.get("bots") or [] if isinstance(b, dict)]
    wanted = _normal(bot_url)
    for bot in bots:
        endpoint = bot.get("calling_endpoint")
        if isinstance(endpoint, str) and _normal(endpoint) == wanted:
            return str(bot.get("app_id"))
    if len(bots) == 1 and isinstance(bots[0].get("app_id"), str):
        return str(bots[0]["app_id"])
    return None


def _normal(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}{parts.path.rstrip('/')}"


async def _config_of(http: aiohttp.ClientSession, emulator: str) -> dict[str, Any] | None:
    """The configuration document of the botemu at ``emulator``; None when none answers."""
    try:
        async with http.get(
            f"{emulator}/_botemu/config",
            timeout=aiohttp.ClientTimeout(total=CONTROL_TIMEOUT),
            ssl=control_ssl(emulator),
        ) as response:
            if response.status != 200:
                return None
            document = await response.json()
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return None
    return document if isinstance(document, dict) else None


async def _post_json(
    http: aiohttp.ClientSession,
    url: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    try:
        async with http.post(
            url,
            json=body,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=CONTROL_TIMEOUT),
            ssl=control_ssl(url),
        ) as response:
            text = await response.text()
            status = response.status
    except (aiohttp.ClientError, OSError, TimeoutError) as e:
        raise BotemuError(f"POST {url} failed: {str(e) or type(e).__name__}") from None
    if status != 200:
        raise BotemuError(f"POST {url}: HTTP {status}: {' '.join(text.split())[:200]}")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise BotemuError(f"POST {url}: the answer is not a JSON object")
    return document
