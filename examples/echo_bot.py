#!/usr/bin/env python3
"""A reference echo bot for the messaging connector: the way we would tell a bot developer to
write one.

Run it (``botemu serve`` prints the environment variables to set)::

    python examples/echo_bot.py --port 3978           # http://127.0.0.1:3978/api/messages

The connector POSTs each activity to ``/api/messages`` with ``Authorization: Bearer <JWT>``. The
bot accepts the request only when the token passes every rule of the spec (section Authentication)
and the SDK checks of the field notes. On a ``message`` it replies ``echo: <text>`` through the
connector, with its own client-credentials token. When a member joins it sends a welcome.

How it is built, so each part can be read (and tested) on its own:

- ``Settings``: the platform's constants, from the command line and the environment.
- ``KeySource`` and ``TokenValidator`` (in ``bot_auth.py``, shared with the IVR bot): one
  issuer's OpenID metadata and signing keys, cached; and whether an incoming request is
  authenticated (``token_validator`` sets up both paths). The validator takes a fetch
  function and a clock, so it is tested without a network and without waiting.
- ``ConnectorClient``: gets the bot's access token, caches it, and posts replies to the connector.
  It sends the token to no one else.
- ``replies_for``: the bot itself. A pure function from an activity to the replies.
- ``MessageHandler`` and ``make_app``: HTTP.

It imports only the standard library, aiohttp and PyJWT (which uses ``cryptography`` for RS256).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from aiohttp import web

if str(Path(__file__).resolve().parent) not in sys.path:  # bot_auth.py lives beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bot_auth import (
    EMULATOR_PATH,
    AuthError,
    Clock,
    FetchJson,
    KeySource,
    TokenPath,
    TokenValidator,
    describe,
    is_number,
    is_secure_url,
)

log = logging.getLogger("echo_bot")

JsonObject = dict[str, Any]

MESSAGES_PATH = "/api/messages"
DEFAULT_PORT = 3978  # the port bot samples traditionally use
MAX_BODY_BYTES = 1024 * 1024  # an activity is a few kB; 1 MiB is generous

TOKEN_REFRESH_MARGIN = 5 * 60  # get a new access token 5 minutes before the old one expires
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=10)

PROFILES = ("v3.0", "v3.1")  # spec, Versioning: only the constants differ


# --- Errors ------------------------------------------------------------------------------------
#
# EchoBotError
# ├── ConfigError          bad settings: the bot does not start (exit code 2)
# ├── BadRequest           the body cannot be read: 400, or 413 when too large
# ├── UntrustedServiceUrl  the activity's serviceUrl is not on the allow-list: no reply is sent
# └── ConnectorError       the reply could not be sent (token endpoint or connector): 502
#
# bot_auth.AuthError       the request is not authenticated: 403, nothing else is done (a key
#                          document that cannot be fetched is one too: the token cannot be checked)


class EchoBotError(Exception):
    """The root of this bot's errors."""


class ConfigError(EchoBotError):
    pass


class BadRequest(EchoBotError):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class UntrustedServiceUrl(EchoBotError):
    def __init__(self, service_url: object) -> None:
        super().__init__(f"serviceUrl {service_url!r} is not trusted")
        self.service_url = service_url


class ConnectorError(EchoBotError):
    pass


# --- Settings ------------------------------------------------------------------------------------


def origin(url: object) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, or None. ``urlsplit`` lowercases both names."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # "http://host:99999"
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


@dataclass(frozen=True)
class Settings:
    """The bot's credentials and the platform's constants (spec, Authentication and Versioning)."""

    app_id: str
    app_password: str
    token_url: str
    connector_scope: str
    openid_metadata_url: str
    """Connector to bot: where the connector's OpenID metadata is."""
    connector_issuer: str
    idp_openid_url: str
    """Emulator to bot: the identity provider's OpenID metadata."""
    emulator_issuer: str
    profile: str = "v3.1"
    legacy_audience: str | None = None
    """The audience of emulator tokens in profile v3.0."""
    trusted_service_urls: tuple[str, ...] = ()
    """Where the bot may send its token. Empty: the origin of ``token_url`` only."""

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}, not {self.profile!r}")
        if self.profile == "v3.0" and not self.legacy_audience:
            raise ConfigError("profile v3.0 needs the legacy audience (BOTEMU_LEGACY_AUDIENCE)")
        if self.connector_issuer == self.emulator_issuer:
            raise ConfigError("the connector issuer and the emulator issuer must differ")
        urls = [self.token_url, self.openid_metadata_url, self.idp_openid_url]
        for url in [*urls, *self.trusted_service_urls]:
            if not is_secure_url(url):
                raise ConfigError(f"{url!r} is not https (plain http is allowed to localhost only)")

    @property
    def emulator_audience(self) -> str:
        """spec, Versioning: the bot's app id in v3.1, the legacy (graph) audience in v3.0."""
        if self.profile == "v3.0" and self.legacy_audience:
            return self.legacy_audience
        return self.app_id

    @property
    def trusted_origins(self) -> frozenset[tuple[str, str, int]]:
        urls = self.trusted_service_urls or (self.token_url,)
        return frozenset(o for o in map(origin, urls) if o is not None)


# flag, environment variable, Settings field, help. A flag overrides its environment variable.
OPTIONS = (
    ("--app-id", "BOT_APP_ID", "app_id", "the bot's application id"),
    ("--app-password", "BOT_APP_PASSWORD", "app_password", "its password (prefer the environment)"),
    ("--token-url", "BOTEMU_TOKEN_URL", "token_url", "where the bot gets its access token"),
    ("--connector-scope", "BOTEMU_CONNECTOR_SCOPE", "connector_scope", "scope of that token"),
    (
        "--openid-metadata-url",
        "BOTEMU_OPENID_METADATA_URL",
        "openid_metadata_url",
        "OpenID metadata for tokens from the connector",
    ),
    ("--connector-issuer", "BOTEMU_CONNECTOR_ISSUER", "connector_issuer", "iss of those tokens"),
    (
        "--idp-openid-url",
        "BOTEMU_IDP_OPENID_URL",
        "idp_openid_url",
        "OpenID metadata for tokens from the emulator",
    ),
    ("--emulator-issuer", "BOTEMU_EMULATOR_ISSUER", "emulator_issuer", "iss of those tokens"),
    ("--profile", "BOTEMU_PROFILE", "profile", "v3.0 or v3.1 (default v3.1)"),
    (
        "--legacy-audience",
        "BOTEMU_LEGACY_AUDIENCE",
        "legacy_audience",
        "aud of emulator tokens in profile v3.0",
    ),
)
OPTIONAL_FIELDS = frozenset({"profile", "legacy_audience"})


def parse_command_line(
    argv: Sequence[str] | None, environ: Mapping[str, str]
) -> tuple[Settings, str, int]:
    """Settings, host and port; exits with status 2 on a usage or configuration error."""
    parser = argparse.ArgumentParser(description="A reference echo bot (botemu example).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    for flag, env, dest, text in OPTIONS:
        parser.add_argument(flag, dest=dest, default=environ.get(env), help=f"{text} (${env})")
    parser.add_argument(
        "--trusted-service-url",
        dest="trusted_service_urls",
        action="append",
        default=[],
        metavar="URL",
        help="a connector the bot may send its token to; repeatable "
        "(default: the origin of the token URL)",
    )
    args = parser.parse_args(argv)
    values = {dest: getattr(args, dest) for _, _, dest, _ in OPTIONS}
    missing = [
        f"{flag} (${env})"
        for flag, env, dest, _ in OPTIONS
        if not values[dest] and dest not in OPTIONAL_FIELDS
    ]
    if missing:
        parser.error(f"missing settings: {', '.join(missing)}")
    values["profile"] = values["profile"] or "v3.1"
    try:
        settings = Settings(**values, trusted_service_urls=tuple(args.trusted_service_urls))
    except ConfigError as exc:
        parser.error(str(exc))
    return settings, args.host, args.port


# --- Validating incoming tokens (bot_auth.py) ----------------------------------------------------


def token_validator(
    settings: Settings, fetch_json: FetchJson, clock: Clock = time.time
) -> TokenValidator:
    """The bot accepts tokens on both paths (spec, Authentication): the connector's, checked
    against the connector's OpenID metadata, and the local test emulator's, checked against the
    identity provider's, with the profile's audience and the app id in ``appid``/``azp``.
    There is deliberately no option to turn any of it off (spec, Connector to bot 6)."""
    return TokenValidator(
        settings.app_id,
        [
            TokenPath("connector", settings.connector_issuer, settings.app_id,
                      KeySource(settings.openid_metadata_url, fetch_json, clock)),
            TokenPath(EMULATOR_PATH, settings.emulator_issuer, settings.emulator_audience,
                      KeySource(settings.idp_openid_url, fetch_json, clock), app_id_claim=True),
        ],
        clock,
    )  # fmt: skip


# --- Replying through the connector --------------------------------------------------------------


@dataclass
class AccessToken:
    value: str
    refresh_at: float


class ConnectorClient:
    """Sends activities to the connector with the bot's client-credentials token.

    The token is cached until 5 minutes before it expires (spec, Bot to connector 2). It goes
    only to a connector on the allow-list (spec, Bot to connector 4): the ``serviceUrl`` comes
    with the activity, and a bot that posted its token to any ``serviceUrl`` would hand it to
    whoever can get an activity to it.
    """

    def __init__(
        self, settings: Settings, http: aiohttp.ClientSession, clock: Clock = time.time
    ) -> None:
        self.settings = settings
        self.trusted = settings.trusted_origins
        self._http = http
        self._clock = clock
        self._lock = asyncio.Lock()  # concurrent replies wait for one token request
        self._token: AccessToken | None = None

    async def send(
        self,
        service_url: str,
        conversation_id: str,
        activity: JsonObject,
        reply_to_id: str | None = None,
    ) -> None:
        """POST {serviceUrl}/v3/conversations/{id}/activities[/{replyToId}]."""
        if origin(service_url) not in self.trusted:
            raise UntrustedServiceUrl(service_url)  # checked before a token even exists
        url = f"{service_url.rstrip('/')}/v3/conversations/{quote(conversation_id, safe='')}/activities"
        if reply_to_id is not None:
            url += f"/{quote(reply_to_id, safe='')}"
        token = await self.access_token()
        try:
            # No redirects: a redirect could carry the Authorization header somewhere else.
            async with self._http.post(
                url,
                json=activity,
                headers={"Authorization": f"Bearer {token}"},
                allow_redirects=False,
            ) as response:
                if response.status == 401:
                    self._token = None  # revoked or rejected: the next reply gets a new one
                if response.status >= 300:
                    raise ConnectorError(f"the connector answered {response.status} to POST {url}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ConnectorError(f"POST {url} failed: {describe(exc)}") from exc

    async def access_token(self) -> str:
        async with self._lock:
            now = self._clock()
            if self._token is None or now >= self._token.refresh_at:
                self._token = await self._request_token(now)
            return self._token.value

    async def _request_token(self, now: float) -> AccessToken:
        form = {
            "grant_type": "client_credentials",
            "client_id": self.settings.app_id,
            "client_secret": self.settings.app_password,
            "scope": self.settings.connector_scope,
        }
        url = self.settings.token_url
        try:
            async with self._http.post(url, data=form, allow_redirects=False) as response:
                body = await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ConnectorError(f"POST {url} failed: {describe(exc)}") from exc
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if status != 200 or not isinstance(doc, dict):
            # RFC 6749 5.2: {"error": "invalid_client", ...}. Never log the form: it has the secret.
            reason = doc.get("error") if isinstance(doc, dict) else None
            raise ConnectorError(
                f"the token endpoint answered {status} ({reason or 'no error code'})"
            )
        value, lifetime = doc.get("access_token"), doc.get("expires_in")
        if isinstance(lifetime, str) and lifetime.isdigit():  # some identity providers send "3599"
            lifetime = int(lifetime)
        if not isinstance(value, str) or not value or not is_number(lifetime):
            raise ConnectorError("the token response has no access_token or expires_in")
        if str(doc.get("token_type", "")).lower() != "bearer":
            raise ConnectorError(f"token_type is {doc.get('token_type')!r}, not Bearer")
        log.info("got an access token for %s, valid %s s", self.settings.connector_scope, lifetime)
        return AccessToken(value, now + float(lifetime) - TOKEN_REFRESH_MARGIN)


# --- The bot --------------------------------------------------------------------------------------

WELCOME = "Welcome, {name}! Say something and I will echo it."


@dataclass(frozen=True)
class Outgoing:
    activity: JsonObject
    reply_to_id: str | None = None
    """Reply to this activity (POST .../activities/{id}); None: send to the conversation."""


def replies_for(activity: Mapping[str, Any]) -> list[Outgoing]:
    """What the bot answers to one activity. No I/O. Activity types are read case-insensitively."""
    kind = str(activity.get("type", "")).lower()
    if kind == "message":
        text, activity_id = activity.get("text"), activity.get("id")
        if not isinstance(text, str):
            return []  # an attachment without text, for example: nothing to echo
        reply_to = activity_id if isinstance(activity_id, str) else None
        reply = message(activity, f"echo: {text}", to=activity.get("from"))
        if reply_to is not None:
            reply["replyToId"] = reply_to
        return [Outgoing(reply, reply_to)]
    if kind == "conversationupdate":
        members, bot = activity.get("membersAdded"), activity.get("recipient")
        bot_id = bot.get("id") if isinstance(bot, dict) else None
        return [
            Outgoing(
                message(activity, WELCOME.format(name=member.get("name") or "there"), to=member)
            )
            for member in (members if isinstance(members, list) else [])
            if isinstance(member, dict) and member.get("id") != bot_id  # not the bot itself
        ]
    return []  # typing, event, invoke, ...: acknowledged and ignored


def message(incoming: Mapping[str, Any], text: str, *, to: object) -> JsonObject:
    return {
        "type": "message",
        "text": text,
        "from": incoming.get("recipient"),  # the bot: what the activity was addressed to
        "recipient": to,
        "conversation": incoming.get("conversation"),
    }


# --- HTTP -----------------------------------------------------------------------------------------


async def read_activity(request: web.Request) -> JsonObject:
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise BadRequest(f"body of {request.content_length} bytes is too large", 413)
    try:
        raw = await request.read()  # bounded by the app's client_max_size
    except web.HTTPRequestEntityTooLarge as exc:
        raise BadRequest(f"body larger than {MAX_BODY_BYTES} bytes", 413) from exc
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[...]]]]" nested too deep
        raise BadRequest(f"body is not JSON: {' '.join(str(exc).split())[:200]}") from exc
    if not isinstance(doc, dict):
        raise BadRequest(f"body is a JSON {type(doc).__name__}, not an object")
    return doc


def reply_target(activity: Mapping[str, Any]) -> tuple[str, str]:
    service_url, conversation = activity.get("serviceUrl"), activity.get("conversation")
    conversation_id = conversation.get("id") if isinstance(conversation, dict) else None
    if not isinstance(service_url, str) or not isinstance(conversation_id, str):
        raise BadRequest("the activity needs serviceUrl and conversation.id to be answered")
    return service_url, conversation_id


def error_response(status: int, message: str) -> web.Response:
    body = json.dumps({"error": " ".join(message.split())}, separators=(",", ":"))
    return web.Response(status=status, text=body, content_type="application/json")


@dataclass
class MessageHandler:
    """``POST /api/messages``."""

    validator: TokenValidator
    connector: ConnectorClient

    async def handle(self, request: web.Request) -> web.Response:
        # The body is read first because two checks need the activity (channelId, serviceUrl).
        try:
            activity = await read_activity(request)
        except BadRequest as exc:
            log.warning("bad request: %s", exc)
            return error_response(exc.status, str(exc))
        try:
            caller = await self.validator.authenticate(
                request.headers.get("Authorization"), activity
            )
        except AuthError as exc:
            log.warning("rejected (403): %s", exc)
            return error_response(403, str(exc))  # and nothing else happens
        outgoing = replies_for(activity)
        log.info("%s activity from the %s", activity.get("type"), caller.path)
        if not outgoing:
            return web.Response(status=200)
        try:
            service_url, conversation_id = reply_target(activity)
        except BadRequest as exc:
            log.warning("bad request: %s", exc)
            return error_response(exc.status, str(exc))
        # The replies are sent before the bot answers: a 200 means they went out, and a 502
        # tells the sender they did not. A bot whose replies take long would answer 202 at once
        # and send them from a queue.
        try:
            for out in outgoing:
                await self.connector.send(
                    service_url, conversation_id, out.activity, out.reply_to_id
                )
        except UntrustedServiceUrl as exc:
            log.warning("not replying: %s (allow it with --trusted-service-url)", exc)
        except ConnectorError as exc:
            log.error("reply not sent: %s", exc)
            return error_response(502, f"reply not sent: {exc}")
        return web.Response(status=200)


HANDLER = web.AppKey("handler", MessageHandler)


def make_app(
    settings: Settings,
    *,
    clock: Clock = time.time,
    http: aiohttp.ClientSession | None = None,
) -> web.Application:
    """The bot as an aiohttp application. Without ``http`` it opens (and closes) its own session."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)

    async def client_session(app: web.Application) -> AsyncIterator[None]:
        session = http or aiohttp.ClientSession(timeout=HTTP_TIMEOUT)

        async def fetch_json(url: str) -> object:
            async with session.get(url, allow_redirects=False) as response:
                response.raise_for_status()
                return await response.json(content_type=None)  # any Content-Type

        app[HANDLER] = MessageHandler(
            token_validator(settings, fetch_json, clock), ConnectorClient(settings, session, clock)
        )
        yield
        if http is None:
            await session.close()

    async def handle(request: web.Request) -> web.Response:
        return await request.app[HANDLER].handle(request)

    app.cleanup_ctx.append(client_session)
    app.router.add_post(MESSAGES_PATH, handle)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    settings, host, port = parse_command_line(argv, os.environ)
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    log.info(
        "app id %s, profile %s; replies go only to %s",
        settings.app_id,
        settings.profile,
        ", ".join(sorted(f"{s}://{h}:{p}" for s, h, p in settings.trusted_origins)),
    )
    log.info("listening on http://%s:%d%s", host, port, MESSAGES_PATH)
    web.run_app(make_app(settings), host=host, port=port, print=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
