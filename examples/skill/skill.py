#!/usr/bin/env python3
"""An example skill: a bot that other bots (skill consumers) call, described by manifest.json.

Run it with the settings ``botemu serve`` (or ``botemu config``) prints in the environment::

    python examples/skill/skill.py --port 3980        # http://127.0.0.1:3980/api/messages

What it does, as its manifest declares (``activities`` and ``activitiesSent``):

- event ``bookFlight`` (value ``{origin, destination, date, passengers?}``): books the flight and
  ends the conversation with an ``endOfConversation`` whose ``value`` is the booking
  (``{bookingReference, price: {amount, currency}, flight}``);
- invoke ``getWeather`` (value ``{city}``): answers at once, in the HTTP response: status 200 and
  the body ``{city, temperature, unit, conditions}`` (an invoke's result is the response body);
- message: replies with a message.

It sends nothing else, so it sends only what ``activitiesSent`` declares. Replies go through the
connector at the activity's ``serviceUrl`` with the skill's own client-credentials token.

Who may call it (spec, Authentication): every request carries ``Authorization: Bearer <JWT>``,
RS256, signed by a key of the issuer's key document (found through its OpenID metadata), unexpired
(5 minutes of skew), ``aud`` this skill's app id, and ``iss`` one of:

- the connector issuer (a channel talking to the skill directly, ``botemu chat``); a ``serviceurl``
  claim must equal the activity's ``serviceUrl``;
- the emulator (identity provider) issuer: a skill consumer. Its ``appid`` (``ver`` 1.0) or
  ``azp`` (``ver`` 2.0) names the calling bot, which must be on the allow-list
  (``--allowed-caller``, ``BOT_ALLOWED_CALLERS``; ``*`` allows any bot) or the skill itself.

Anything else gets 403, and nothing else happens. It imports only the standard library, aiohttp
and PyJWT (which uses ``cryptography`` for RS256). To change what it does, subclass ``Skill``:
tests/bots/broken_skill.py does, to break one promise of the manifest.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard
from urllib.parse import quote, urlsplit

import aiohttp
import jwt
from aiohttp import web

log = logging.getLogger("skill")

JsonObject = dict[str, Any]
Clock = Callable[[], float]

MESSAGES_PATH = "/api/messages"
DEFAULT_PORT = 3980  # manifest.json's endpointUrl: change both together
ALGORITHM = "RS256"
CLOCK_SKEW = 300  # spec, Limits: 5 minutes
KEY_CACHE_SECONDS = 24 * 3600
UNKNOWN_KID_REFETCH_SECONDS = 60
TOKEN_REFRESH_MARGIN = 300
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=10)
MAX_BODY_BYTES = 1024 * 1024


class SkillError(Exception):
    """The root of this skill's errors: AuthError (403), BadRequest (400), ReplyError (502)."""


class AuthError(SkillError):
    pass


class BadRequest(SkillError):
    pass


class ReplyError(SkillError):
    pass


# --- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The skill's credentials and the platform's constants (from botemu: ``botemu config``)."""

    app_id: str
    app_password: str
    token_url: str
    connector_scope: str
    openid_metadata_url: str
    connector_issuer: str
    idp_openid_url: str
    emulator_issuer: str
    allowed_callers: tuple[str, ...] = ("*",)
    """App ids of the bots that may call the skill; ``*`` is any bot."""

    def caller_allowed(self, app_id: object) -> bool:
        return (
            app_id == self.app_id or "*" in self.allowed_callers or app_id in self.allowed_callers
        )

    def may_receive_token(self, service_url: str) -> bool:
        """The access token goes only to the connector next to the token endpoint."""
        ours, theirs = urlsplit(self.token_url), urlsplit(service_url)
        return (ours.scheme, ours.netloc) == (theirs.scheme, theirs.netloc)


OPTIONS = (  # flag, environment variable, Settings field
    ("--app-id", "BOT_APP_ID", "app_id"),
    ("--app-password", "BOT_APP_PASSWORD", "app_password"),
    ("--token-url", "BOTEMU_TOKEN_URL", "token_url"),
    ("--connector-scope", "BOTEMU_CONNECTOR_SCOPE", "connector_scope"),
    ("--openid-metadata-url", "BOTEMU_OPENID_METADATA_URL", "openid_metadata_url"),
    ("--connector-issuer", "BOTEMU_CONNECTOR_ISSUER", "connector_issuer"),
    ("--idp-openid-url", "BOTEMU_IDP_OPENID_URL", "idp_openid_url"),
    ("--emulator-issuer", "BOTEMU_EMULATOR_ISSUER", "emulator_issuer"),
)


def parse_command_line(
    argv: Sequence[str] | None, environ: Mapping[str, str]
) -> tuple[Settings, str, int]:
    parser = argparse.ArgumentParser(description="An example skill (botemu example).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    for flag, env, dest in OPTIONS:
        parser.add_argument(flag, dest=dest, default=environ.get(env), help=f"(${env})")
    parser.add_argument(
        "--allowed-caller",
        dest="allowed_callers",
        action="append",
        metavar="APP_ID",
        help="a bot that may call the skill; repeatable; * for any ($BOT_ALLOWED_CALLERS, "
        "comma-separated; default *)",
    )
    args = parser.parse_args(argv)
    values = {dest: getattr(args, dest) for _, _, dest in OPTIONS}
    missing = [f"{flag} (${env})" for flag, env, dest in OPTIONS if not values[dest]]
    if missing:
        parser.error(f"missing settings: {', '.join(missing)}")
    callers = args.allowed_callers or environ.get("BOT_ALLOWED_CALLERS", "*").split(",")
    allowed = tuple(c.strip() for c in callers if c.strip())
    return Settings(**values, allowed_callers=allowed), args.host, args.port


# --- validating incoming tokens ------------------------------------------------------------------


FetchJson = Callable[[str], Any]
"""An async function: GET a URL, return its JSON body (raises on failure)."""


@dataclass
class KeySource:
    """The RS256 keys of one issuer, through its OpenID metadata; refetched on an unknown kid
    (at most once a minute) and after a day."""

    metadata_url: str
    fetch_json: FetchJson
    clock: Clock
    _keys: dict[str, Any] = field(default_factory=dict)
    _loaded_at: float | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def get(self, kid: str) -> Any:
        async with self._lock:
            now = self.clock()
            stale = self._loaded_at is None or now - self._loaded_at >= KEY_CACHE_SECONDS
            unknown = kid not in self._keys and (
                self._loaded_at is None or now - self._loaded_at >= UNKNOWN_KID_REFETCH_SECONDS
            )
            if stale or unknown:
                await self._load(now)
            return self._keys.get(kid)

    async def _load(self, now: float) -> None:
        try:
            metadata = await self.fetch_json(self.metadata_url)
            document = await self.fetch_json(str(metadata["jwks_uri"]))
            entries = document["keys"]
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            raise AuthError(f"cannot fetch the signing keys of {self.metadata_url}: {exc}") from exc
        keys: dict[str, Any] = {}
        for jwk in entries if isinstance(entries, list) else []:
            if (
                isinstance(jwk, dict)
                and jwk.get("kty") == "RSA"
                and isinstance(jwk.get("kid"), str)
            ):
                try:
                    keys[jwk["kid"]] = jwt.PyJWK(jwk, algorithm=ALGORITHM).key
                except jwt.PyJWTError:
                    continue
        self._keys, self._loaded_at = keys, now


class TokenValidator:
    """Accepts a request only with a token of one of the two paths (module docstring)."""

    def __init__(self, settings: Settings, fetch_json: FetchJson, clock: Clock = time.time) -> None:
        self.settings = settings
        self.clock = clock
        self.keys = {
            settings.connector_issuer: KeySource(settings.openid_metadata_url, fetch_json, clock),
            settings.emulator_issuer: KeySource(settings.idp_openid_url, fetch_json, clock),
        }

    async def authenticate(self, authorization: str | None, activity: Mapping[str, Any]) -> str:
        """The caller's app id (the skill's own for the connector path); AuthError otherwise."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError("no Bearer token")
        token = token.strip()
        try:
            header = jwt.get_unverified_header(token)
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError as exc:
            raise AuthError(f"not a JWT: {exc}") from exc
        if header.get("alg") != ALGORITHM:
            raise AuthError(f"alg {header.get('alg')!r} is not accepted")
        source = self.keys.get(issuer) if isinstance(issuer, str) else None
        if source is None:
            raise AuthError(f"issuer {issuer!r} is not accepted")
        kid = header.get("kid")
        key = await source.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise AuthError(f"kid {kid!r} is not in the key document of {issuer}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token, key, algorithms=[ALGORITHM], issuer=issuer, audience=self.settings.app_id,
                options={"require": ["iss", "aud", "exp"], "strict_aud": True,
                                            "verify_exp": False, "verify_nbf": False,
                                            "verify_iat": False},
            )  # fmt: skip
        except jwt.PyJWTError as exc:
            raise AuthError(f"{type(exc).__name__}: {exc}") from exc
        self._check_lifetime(claims)
        if issuer == self.settings.connector_issuer:
            url = claims.get("serviceurl")
            if url is not None and url != activity.get("serviceUrl"):
                raise AuthError("the serviceurl claim is not the activity's serviceUrl")
            return self.settings.app_id
        version = claims.get("ver", "1.0")
        if version not in ("1.0", "2.0"):
            raise AuthError(f"unknown token version {version!r}")
        caller = claims.get("appid" if version == "1.0" else "azp")
        if not isinstance(caller, str) or not self.settings.caller_allowed(caller):
            raise AuthError(f"caller {caller!r} is not allowed to call this skill")
        return caller

    def _check_lifetime(self, claims: Mapping[str, Any]) -> None:
        now, exp, nbf = self.clock(), claims.get("exp"), claims.get("nbf")
        if not isinstance(exp, int | float) or exp + CLOCK_SKEW <= now:
            raise AuthError("the token has expired (or has no exp)")
        if isinstance(nbf, int | float) and nbf - CLOCK_SKEW > now:
            raise AuthError("the token is not valid yet")


# --- replying through the connector ---------------------------------------------------------------


class ConnectorClient:
    """Posts activities to the connector with the skill's client-credentials token (cached)."""

    def __init__(self, settings: Settings, http: aiohttp.ClientSession, clock: Clock) -> None:
        self.settings = settings
        self.http = http
        self.clock = clock
        self._token: tuple[str, float] | None = None
        self._lock = asyncio.Lock()

    async def send(self, service_url: str, conversation_id: str, activity: JsonObject) -> None:
        if not self.settings.may_receive_token(service_url):
            raise ReplyError(f"serviceUrl {service_url!r} is not the trusted connector")
        url = f"{service_url.rstrip('/')}/v3/conversations/{quote(conversation_id, safe='')}/activities"
        headers = {"Authorization": f"Bearer {await self.access_token()}"}
        try:
            async with self.http.post(
                url, json=activity, headers=headers, allow_redirects=False
            ) as r:
                if r.status >= 300:
                    raise ReplyError(f"the connector answered {r.status} to POST {url}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ReplyError(f"POST {url} failed: {exc}") from exc

    async def access_token(self) -> str:
        async with self._lock:
            if self._token is None or self.clock() >= self._token[1]:
                self._token = await self._request_token()
            return self._token[0]

    async def _request_token(self) -> tuple[str, float]:
        form = {
            "grant_type": "client_credentials",
            "client_id": self.settings.app_id,
            "client_secret": self.settings.app_password,
            "scope": self.settings.connector_scope,
        }
        try:
            async with self.http.post(self.settings.token_url, data=form) as response:
                document = await response.json(content_type=None)
                status = response.status
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise ReplyError(f"the token request failed: {exc}") from exc
        token = document.get("access_token") if isinstance(document, dict) else None
        lifetime = document.get("expires_in") if isinstance(document, dict) else None
        if status != 200 or not isinstance(token, str) or not isinstance(lifetime, int | float):
            raise ReplyError(f"the token endpoint answered {status}")
        return token, self.clock() + float(lifetime) - TOKEN_REFRESH_MARGIN


# --- the skill ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What the skill does with one activity: the HTTP answer, and the activities it sends."""

    status: int = 200
    body: JsonObject | None = None
    sends: tuple[JsonObject, ...] = ()


CONDITIONS = ("sunny", "cloudy", "rain", "snow", "windy")


class Skill:
    """The skill itself: pure functions from an activity to an Answer. No I/O."""

    def handle(self, activity: Mapping[str, Any]) -> Answer:
        kind, name = activity.get("type"), activity.get("name")
        value = activity.get("value")
        if kind == "event" and name == "bookFlight":
            if not _strings(value, "origin", "destination", "date"):
                return Answer(sends=(end(activity, code="skillError"),))
            return Answer(sends=(end(activity, value=self.book_flight(value)),))
        if kind == "invoke":
            if name != "getWeather":
                return Answer(501, {"error": f"no invoke named {name!r}"})
            if not _strings(value, "city"):
                return Answer(400, {"error": "value.city is required"})
            return Answer(200, self.weather(value["city"]))
        if kind == "message":
            text = activity.get("text")
            return Answer(sends=(reply(activity, self.reply_text(str(text or ""))),))
        return Answer()  # other events, typing, conversationUpdate, ...: nothing to do

    def book_flight(self, request: Mapping[str, Any]) -> JsonObject:
        flight = {k: request[k] for k in ("origin", "destination", "date")}
        digest = _digest(json.dumps(flight, sort_keys=True))
        passengers = request.get("passengers", 1)
        seats = passengers if isinstance(passengers, int) and passengers > 0 else 1
        return {
            "bookingReference": f"BK-{digest[:6].upper()}",
            "price": {"amount": round(seats * (49 + int(digest[6:10], 16) % 450 + 0.99), 2),
                      "currency": "EUR"},
            "flight": flight,
        }  # fmt: skip

    def weather(self, city: str) -> JsonObject:
        digest = int(_digest(city.lower())[:8], 16)
        return {
            "city": city,
            "temperature": round(-10 + (digest % 450) / 10, 1),
            "unit": "celsius",
            "conditions": CONDITIONS[digest % len(CONDITIONS)],
        }

    def reply_text(self, text: str) -> str:
        return f"You said: {text}. Ask me to book a flight, or for the weather."


def _strings(value: object, *names: str) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and all(isinstance(value.get(n), str) for n in names)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def reply(incoming: Mapping[str, Any], text: str) -> JsonObject:
    return {**_envelope(incoming), "type": "message", "text": text}


def end(
    incoming: Mapping[str, Any], *, value: Any = None, code: str = "completedSuccessfully"
) -> JsonObject:
    activity = {**_envelope(incoming), "type": "endOfConversation", "code": code}
    if value is not None:
        activity["value"] = value
    return activity


def _envelope(incoming: Mapping[str, Any]) -> JsonObject:
    out: JsonObject = {
        "from": incoming.get("recipient"),
        "recipient": incoming.get("from"),
        "conversation": incoming.get("conversation"),
    }
    if isinstance(incoming.get("id"), str):
        out["replyToId"] = incoming["id"]
    return out


# --- HTTP -----------------------------------------------------------------------------------------


@dataclass
class Handler:
    validator: TokenValidator
    connector: ConnectorClient
    skill: Skill

    async def handle(self, request: web.Request) -> web.Response:
        try:
            activity = json.loads(await request.read())
            if not isinstance(activity, dict):
                raise BadRequest("the body is not a JSON object")
        except (ValueError, BadRequest) as exc:
            return _error(400, f"bad request: {exc}")
        try:
            caller = await self.validator.authenticate(
                request.headers.get("Authorization"), activity
            )
        except AuthError as exc:
            log.warning("refused (403): %s", exc)
            return _error(403, str(exc))
        log.info("%s %r from %s", activity.get("type"), activity.get("name"), caller)
        answer = self.skill.handle(activity)
        service_url = activity.get("serviceUrl")
        conversation = activity.get("conversation")
        conversation_id = conversation.get("id") if isinstance(conversation, dict) else None
        if answer.sends and not (isinstance(service_url, str) and isinstance(conversation_id, str)):
            return _error(400, "the activity needs serviceUrl and conversation.id to be answered")
        try:  # sent before answering: a 2xx means the replies went out
            for outgoing in answer.sends:
                await self.connector.send(str(service_url), str(conversation_id), outgoing)
        except ReplyError as exc:
            log.error("reply not sent: %s", exc)
            return _error(502, f"reply not sent: {exc}")
        if answer.body is None:
            return web.Response(status=answer.status)
        return web.json_response(answer.body, status=answer.status)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


HANDLER = web.AppKey("handler", Handler)


def make_app(
    settings: Settings, skill: Skill | None = None, *, clock: Clock = time.time
) -> web.Application:
    """The skill as an aiohttp application (``skill``: the behaviour, default ``Skill()``)."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)

    async def client_session(app: web.Application) -> AsyncIterator[None]:
        async with aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as http:

            async def fetch_json(url: str) -> Any:
                async with http.get(url, allow_redirects=False) as response:
                    response.raise_for_status()
                    return await response.json(content_type=None)

            app[HANDLER] = Handler(TokenValidator(settings, fetch_json, clock),
                                   ConnectorClient(settings, http, clock), skill or Skill())  # fmt: skip
            yield

    async def messages(request: web.Request) -> web.Response:
        return await request.app[HANDLER].handle(request)

    app.cleanup_ctx.append(client_session)
    app.router.add_post(MESSAGES_PATH, messages)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    settings, host, port = parse_command_line(argv, os.environ)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")
    log.info("skill %s on http://%s:%d%s; callers allowed: %s", settings.app_id, host, port,
             MESSAGES_PATH, ", ".join(settings.allowed_callers))  # fmt: skip
    web.run_app(make_app(settings), host=host, port=port, print=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
