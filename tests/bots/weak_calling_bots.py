"""Calling bots that check the Bearer token of every calling request, each with one flaw switched on.

``make_weak_calling_bot(settings, flaw)`` builds an aiohttp app serving ``POST /api/calls``. It
checks the Authorization header the way the calling SDKs do (field notes, Calling: HTTP: the
issuer from the OpenID metadata document, the audience from the app id, the keys from the
document's ``jwks_uri``, RS256 only, a ``kid`` in the key set, 5 minutes of skew), with PyJWT,
except for the one thing its flaw gets wrong. A Conversation that passes is answered 200 with a
small Workflow (answer, a prompt, hangup); any other request that passes (a result) with an empty
200. A refusal is 403. ``flaw=None`` is a correct bot.

Flaws (``FLAWS``): what each gets wrong -> the calling probe cases it must fail.

- ``optional-auth``: a request without Authorization is let through -> ``no-header``
- ``any-scheme``: the last word of the header is the token, whatever the scheme -> ``scheme``
- ``skip-issuer``: iss is not checked -> ``issuer``
- ``skip-audience``: aud is not checked -> ``audience``
- ``skip-expiry``: exp is not checked -> ``expired``
- ``no-skew``: exp and nbf are checked with no clock skew -> ``expired-within-skew`` (a warning)
- ``skip-nbf``: nbf is not checked -> ``not-yet-valid``
- ``any-signature``: the signature is not verified -> ``tampered``
- ``trust-embedded-jwk``: a ``jwk`` in the token header is trusted -> ``unknown-key``
- ``unknown-kid-ok``: an unknown kid falls back to every published key -> ``unknown-kid``
- ``accept-none``: alg none is accepted unsigned -> ``alg-none``, ``alg-none-unknown-kid``
- ``none-without-key``: the key is looked up by kid, and with no key (an unknown kid) an unsigned
  token passes: what botbuilder-calling 3.0.1 accepted -> ``alg-none-unknown-kid``
- ``hs256-public-key``: HS256 is verified with the public key's PEM -> ``hs256-public-key``
- ``crashes-on-malformed``: raises on a token whose header is not JSON (HTTP 500) -> ``malformed``
- ``crashes-on-garbage``: a token that is not three dot-separated parts kills the bot: the
  connection drops, and so does every later one, as when 3.0.1's process died -> ``garbage``
  (and ``AUTH-CALL-ALIVE``)
- ``sdk-3.0.1``: the three flaws of botbuilder-calling 3.0.1 at once: ``none-without-key``,
  ``no-skew``, ``crashes-on-garbage``
- ``answers-401``: refuses with 401 instead of 403 -> none (warnings only)
- ``crashes``: raises on a bad token (HTTP 500) -> every bad token

Runnable for manual work: ``python tests/bots/weak_calling_bots.py FLAW --port N`` with
``BOT_APP_ID`` and ``BOTEMU_OPENID_METADATA_URL`` (from ``botemu config``) in the environment.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

FLAWS = (
    "optional-auth",
    "any-scheme",
    "skip-issuer",
    "skip-audience",
    "skip-expiry",
    "no-skew",
    "skip-nbf",
    "any-signature",
    "trust-embedded-jwk",
    "unknown-kid-ok",
    "accept-none",
    "none-without-key",
    "hs256-public-key",
    "crashes-on-malformed",
    "crashes-on-garbage",
    "sdk-3.0.1",
    "answers-401",
    "crashes",
)
SDK_301 = frozenset({"none-without-key", "no-skew", "crashes-on-garbage"})
SKEW = 300
WORKFLOW: dict[str, Any] = {
    "actions": [
        {"action": "answer", "operationId": "answer-1"},
        {"action": "playPrompt", "operationId": "prompt-1",
         "prompts": [{"value": "Your token was accepted. Goodbye."}]},
        {"action": "hangup", "operationId": "hangup-1"},
    ],
    "notificationSubscriptions": ["callStateChange"],
}  # fmt: skip


@dataclass(frozen=True)
class CallingSettings:
    """What a calling bot needs to check tokens: its app id and the OpenID metadata it trusts."""

    app_id: str
    openid_metadata_url: str


class Refused(Exception):
    """The token is not accepted (403)."""


class Crash(Exception):
    """The bot dies: the connection drops, and so does every later one."""


class CallingValidator:
    """Checks an Authorization header as the calling SDKs do; every check but ``flaw``'s."""

    def __init__(
        self,
        settings: CallingSettings,
        flaw: str | None,
        fetch: Callable[[str], Awaitable[Any]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        if flaw is not None and flaw not in FLAWS:
            raise ValueError(f"unknown flaw {flaw!r}; one of {', '.join(FLAWS)}")
        self.settings = settings
        self.flaws = SDK_301 if flaw == "sdk-3.0.1" else frozenset({flaw} - {None})
        self._fetch = fetch
        self._clock = clock

    def has(self, flaw: str) -> bool:
        return flaw in self.flaws

    async def check(self, authorization: str | None) -> dict[str, Any]:
        if not authorization:
            if self.has("optional-auth"):
                return {}
            raise Refused("no Authorization header")
        scheme, _, token = authorization.strip().partition(" ")
        if self.has("any-scheme"):
            token = authorization.split()[-1]
        elif scheme.lower() != "bearer" or not token.strip():
            raise Refused("not a Bearer token")
        token = token.strip()
        if self.has("crashes-on-garbage") and token.count(".") != 2:
            raise Crash(f"cannot split {token!r} into a JWT's three parts")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as e:
            if self.has("crashes-on-malformed") and token.count(".") == 2:
                raise RuntimeError(f"unhandled: {e}") from e
            raise Refused(f"not a JWT: {e}") from e
        metadata = await self._fetch(self.settings.openid_metadata_url)
        keys = await self._keys(metadata["jwks_uri"])
        key, verify = self._key(token, header, keys)
        options = {
            "verify_signature": verify and not self.has("any-signature"),
            "verify_exp": not self.has("skip-expiry"),
            "verify_nbf": not self.has("skip-nbf"),
            "verify_iat": True,
            "verify_aud": not self.has("skip-audience"),
            "verify_iss": not self.has("skip-issuer"),
            "require": ["exp"],
        }
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[str(header.get("alg"))] if not verify else ["RS256"],
                options=options,
                audience=self.settings.app_id,
                issuer=metadata["issuer"],
                leeway=0 if self.has("no-skew") else SKEW,
            )
        except jwt.PyJWTError as e:
            raise Refused(str(e)) from e
        return claims

    async def _keys(self, jwks_uri: str) -> dict[str, RSAPublicKey]:
        document = await self._fetch(jwks_uri)
        keys: dict[str, RSAPublicKey] = {}
        for jwk in document.get("keys", []):
            key = jwt.PyJWK(jwk, algorithm="RS256").key
            if isinstance(key, RSAPublicKey):
                keys[jwk["kid"]] = key
        return keys

    def _key(
        self, token: str, header: dict[str, Any], keys: dict[str, RSAPublicKey]
    ) -> tuple[Any, bool]:
        """The key that verifies ``token``, and whether PyJWT is to verify the signature (False:
        a flaw let the token through already)."""
        alg, kid = header.get("alg"), str(header.get("kid"))
        if alg == "none":
            if self.has("accept-none") or (self.has("none-without-key") and kid not in keys):
                return None, False
            raise Refused("alg none")
        if alg == "HS256" and self.has("hs256-public-key") and kid in keys:
            pem = keys[kid].public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            signing_input, _, signature = token.rpartition(".")
            expected = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(jwt.utils.base64url_encode(expected).decode(), signature):
                raise Refused("HS256 signature")
            return None, False
        if alg != "RS256":
            raise Refused(f"alg {alg!r}")
        embedded = header.get("jwk")
        if self.has("trust-embedded-jwk") and isinstance(embedded, dict):
            return jwt.PyJWK(embedded, algorithm="RS256").key, True
        if kid in keys:
            return keys[kid], True
        if self.has("unknown-kid-ok"):
            for key in keys.values():
                try:
                    jwt.decode(token, key, algorithms=["RS256"],
                               options={"verify_signature": True, "verify_exp": False,
                                        "verify_nbf": False, "verify_aud": False,
                                        "verify_iss": False, "verify_iat": False})  # fmt: skip
                except jwt.InvalidSignatureError:
                    continue
                except jwt.PyJWTError as e:
                    raise Refused(str(e)) from e
                return key, True
        raise Refused(f"kid {kid!r} is not in the key set")


@dataclass
class BotState:
    validator: CallingValidator
    dead: bool = False
    """Crashed: every connection drops."""
    accepted: int = 0


STATE: web.AppKey[BotState] = web.AppKey("state", BotState)


def make_weak_calling_bot(settings: CallingSettings, flaw: str | None) -> web.Application:
    """The bot as an aiohttp application (``POST /api/calls``)."""
    app = web.Application()

    async def session(app: web.Application) -> AsyncIterator[None]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:

            async def fetch(url: str) -> Any:
                async with http.get(url) as response:
                    response.raise_for_status()
                    return await response.json(content_type=None)

            app[STATE] = BotState(CallingValidator(settings, flaw, fetch))
            yield

    async def calls(request: web.Request) -> web.StreamResponse:
        state = request.app[STATE]
        body = await request.read()
        try:
            if state.dead:
                raise Crash("dead")
            await state.validator.check(request.headers.get("Authorization"))
        except Crash:
            state.dead = True
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=200)
        except Refused as e:
            if state.validator.has("crashes"):
                raise RuntimeError(f"unhandled: {e}") from e
            status = 401 if state.validator.has("answers-401") else 403
            return web.json_response({"error": str(e)}, status=status)
        state.accepted += 1
        document = json.loads(body) if body else {}
        if isinstance(document, dict) and "participants" in document:
            return web.json_response(WORKFLOW)
        return web.Response(status=200)

    app.cleanup_ctx.append(session)
    app.router.add_post("/api/calls", calls)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description="A calling bot with one auth flaw.")
    parser.add_argument("flaw", choices=[*FLAWS, "none"])
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    settings = CallingSettings(os.environ["BOT_APP_ID"], os.environ["BOTEMU_OPENID_METADATA_URL"])
    flaw = None if args.flaw == "none" else args.flaw
    web.run_app(make_weak_calling_bot(settings, flaw), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
