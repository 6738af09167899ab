"""Messaging bots that validate tokens like examples/echo_bot.py, each with one flaw switched on.

``make_weak_bot(settings, flaw)`` builds an aiohttp app serving ``POST /api/messages``. It checks
the Authorization header the way the spec asks (Authentication, Connector to bot 4; Local test
emulator to bot 1-7) with PyJWT and the keys of the issuer's OpenID metadata, and the signing
key's ``endorsements`` against the activity's ``channelId`` (field notes), except for the one
thing its flaw gets wrong. On the emulator path, ``ver`` 1.0 tokens carry the app id in
``appid`` and 2.0 tokens in ``azp``. A request that passes is answered 200 (the auth probe judges only the
HTTP answer); one that fails is answered 403. ``flaw=None`` is a correct bot. Given its password
and the token endpoint (``WeakSettings.app_password``, ``token_url``, ``connector_scope``), a bot
also replies ``echo: <text>`` to an accepted message through the connector, with a token of its
own, as the echo bot does (so the conformance suite's reply scenario passes and only the auth
probe fails); without them it sends no reply.

Flaws (``FLAWS``): what each gets wrong -> the probe cases it must fail.

- ``optional-auth``: a call without Authorization is let through -> ``no-header``
- ``any-scheme``: the last word of the header is the token, whatever the scheme -> ``scheme``
The flaws of token checks are the same on every path, so each fails its case on the connector
path and on the emulator path for both token versions (``issuer`` means ``issuer``,
``emulator-issuer`` and ``emulator-v2-issuer``):

- ``skip-issuer``: an unknown iss is read as the connector's -> ``issuer``
- ``skip-audience``: aud is not checked -> ``audience``
- ``skip-expiry``: exp is not checked -> ``expired``
- ``no-skew``: exp and nbf are checked with no clock skew -> ``expired-within-skew``
- ``skip-nbf``: nbf is not checked -> ``not-yet-valid``
- ``any-signature``: the signature is not verified -> ``tampered``, ``forged-signature``
- ``trust-embedded-jwk``: a ``jwk`` in the token header is trusted -> ``unknown-key``
- ``unknown-kid-ok``: an unknown kid falls back to every published key -> ``unknown-kid``
- ``accept-none``: alg none is accepted unsigned -> ``alg-none``
- ``hs256-public-key``: HS256 is verified with the public key's PEM -> ``hs256-public-key``
- ``ignore-appid``: the emulator path's app id is not checked -> ``emulator-no-appid``,
  ``emulator-wrong-appid``, ``emulator-v2-wrong-azp``
- ``ignore-azp``: the app id of ver 2.0 tokens (``azp``) is not checked ->
  ``emulator-v2-wrong-azp``
- ``ignore-endorsements``: a key's endorsements are not checked -> ``endorsement`` (when botemu
  publishes endorsements; without them the probe skips that case and the bot passes)
- ``answers-401``: refuses with 401 instead of 403 -> none (warnings only)
- ``crashes``: raises on a bad token (HTTP 500) -> every bad token

Runnable for manual work: ``python tests/bots/weak_bots.py FLAW --port N`` with the settings of
``botemu serve`` in the environment (``BOT_APP_ID``, ``BOTEMU_OPENID_METADATA_URL``, ...).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from emulator.conformance.auth import CASES

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
    "hs256-public-key",
    "ignore-appid",
    "ignore-azp",
    "ignore-endorsements",
    "answers-401",
    "crashes",
)
PROBE_ERRORS: dict[str | None, set[str]] = {
    None: set(),
    "optional-auth": {"AUTH-NO-HEADER"},
    "any-scheme": {"AUTH-SCHEME"},
    **{
        flaw: {f"AUTH{path}-{case}" for path in ("", "-EMULATOR", "-EMULATOR-V2") for case in cases}
        for flaw, cases in {
            "skip-issuer": ["ISSUER"],
            "skip-audience": ["AUDIENCE"],
            "skip-expiry": ["EXPIRED"],
            "no-skew": ["EXPIRED-WITHIN-SKEW"],
            "skip-nbf": ["NOT-YET-VALID"],
            "any-signature": ["TAMPERED", "FORGED-SIGNATURE"],
            "trust-embedded-jwk": ["UNKNOWN-KEY"],
            "unknown-kid-ok": ["UNKNOWN-KID"],
            "accept-none": ["ALG-NONE"],
            "hs256-public-key": ["HS256-PUBLIC-KEY"],
        }.items()
    },
    "ignore-appid": {
        "AUTH-EMULATOR-NO-APPID", "AUTH-EMULATOR-WRONG-APPID", "AUTH-EMULATOR-V2-WRONG-AZP"
    },
    "ignore-azp": {"AUTH-EMULATOR-V2-WRONG-AZP"},
    "ignore-endorsements": set(),  # no endorsements published: that case is skipped
    "answers-401": set(),  # 401 instead of 403: warnings only
    "crashes": {c.rule for c in CASES if not c.expect_accept and c.skip is None},
}  # fmt: skip
"""Weak messaging bot flaw -> the probe's error rules, listed in the auth probe's failure."""
"""Weak bot flaw -> the error rules the auth probe finds in it (botemu publishing no
endorsements, as by default): tests/conformance/test_auth.py and the conformance suite's test
both hold each weak bot to exactly these."""

SKEW = 300
_NO_CHECKS: dict[str, bool] = {
    "verify_exp": False,
    "verify_nbf": False,
    "verify_iat": False,
    "verify_aud": False,
    "verify_iss": False,
}


@dataclass(frozen=True)
class WeakSettings:
    """What a bot needs to check tokens on both paths (spec, Authentication and Versioning)."""

    app_id: str
    openid_metadata_url: str
    connector_issuer: str
    idp_openid_url: str
    emulator_issuer: str
    emulator_audience: str | None = None
    """aud of emulator-path tokens: the legacy audience in profile v3.0; None: the app id."""
    app_password: str | None = None
    token_url: str | None = None
    connector_scope: str | None = None
    """To reply through the connector (client credentials); None: the bot never replies."""


class Refused(Exception):
    """The token is not accepted (403)."""


@dataclass(frozen=True)
class _Path:
    name: str
    issuer: str
    audience: str
    metadata_url: str


class Validator:
    """Checks an Authorization header; every check but the one ``flaw`` names."""

    def __init__(
        self,
        settings: WeakSettings,
        flaw: str | None,
        fetch: Callable[[str], Any],
        clock: Callable[[], float] = time.time,
    ) -> None:
        if flaw is not None and flaw not in FLAWS:
            raise ValueError(f"unknown flaw {flaw!r}; one of {', '.join(FLAWS)}")
        self.settings = settings
        self.flaw = flaw
        self._fetch = fetch
        self._clock = clock
        self._endorsements: dict[str, list[str]] = {}
        """kid -> the channels the key is endorsed for (keys that carry endorsements only)."""
        emulator_aud = settings.emulator_audience or settings.app_id
        self._paths = {
            settings.connector_issuer: _Path(
                "connector",
                settings.connector_issuer,
                settings.app_id,
                settings.openid_metadata_url,
            ),
            settings.emulator_issuer: _Path(
                "emulator", settings.emulator_issuer, emulator_aud, settings.idp_openid_url
            ),
        }

    async def keys(self, path: _Path) -> dict[str, RSAPublicKey]:
        metadata = await self._fetch(path.metadata_url)
        document = await self._fetch(metadata["jwks_uri"])
        keys: dict[str, RSAPublicKey] = {}
        for jwk in document.get("keys", []):
            key = jwt.PyJWK(jwk, algorithm="RS256").key
            if isinstance(key, RSAPublicKey):
                keys[jwk["kid"]] = key
                if isinstance(jwk.get("endorsements"), list):
                    self._endorsements[jwk["kid"]] = jwk["endorsements"]
        return keys

    async def check(
        self, authorization: str | None, activity: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The claims of an acceptable token on a request carrying ``activity``; ``Refused``."""
        flaw = self.flaw
        if not authorization:
            if flaw == "optional-auth":
                return {}
            raise Refused("no Authorization header")
        scheme, _, token = authorization.strip().partition(" ")
        if flaw == "any-scheme":
            token = authorization.split()[-1]
        elif scheme.lower() != "bearer" or not token.strip():
            raise Refused("not a Bearer token")
        token = token.strip()
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as e:
            raise Refused(f"not a JWT: {e}") from e
        path = self._paths.get(unverified.get("iss"))
        if path is None:
            if flaw != "skip-issuer":
                raise Refused(f"issuer {unverified.get('iss')!r}")
            path = self._paths[self.settings.connector_issuer]
        claims = await self._verified(token, header, unverified, path)
        if flaw != "skip-issuer" and claims.get("iss") != path.issuer:
            raise Refused("issuer")
        if flaw != "skip-audience" and claims.get("aud") != path.audience:
            raise Refused("audience")
        self._check_times(claims)
        if path.name == "emulator" and flaw != "ignore-appid":
            name = "azp" if claims.get("ver") == "2.0" else "appid"
            if claims.get(name) != self.settings.app_id and not (
                name == "azp" and flaw == "ignore-azp"
            ):
                raise Refused(f"{name} is not this bot's app id")
        endorsed = self._endorsements.get(str(header.get("kid")))
        channel = (activity or {}).get("channelId")
        if endorsed is not None and channel not in endorsed and flaw != "ignore-endorsements":
            raise Refused(f"the key is not endorsed for channel {channel!r}")
        return claims

    async def _verified(
        self, token: str, header: dict[str, Any], unverified: dict[str, Any], path: _Path
    ) -> dict[str, Any]:
        flaw, alg, kid = self.flaw, header.get("alg"), header.get("kid")
        if alg == "none" and flaw == "accept-none":
            return unverified
        if alg == "HS256" and flaw == "hs256-public-key":
            key = (await self.keys(path)).get(str(kid))
            if key is None:
                raise Refused("unknown kid")
            pem = key.public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            signing_input, _, signature = token.rpartition(".")
            expected = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(jwt.utils.base64url_encode(expected).decode(), signature):
                raise Refused("HS256 signature")
            return unverified
        if alg != "RS256":
            raise Refused(f"alg {alg!r}")
        embedded = header.get("jwk")
        if flaw == "trust-embedded-jwk" and isinstance(embedded, dict):
            candidates = [jwt.PyJWK(embedded, algorithm="RS256").key]
        else:
            keys = await self.keys(path)
            if str(kid) in keys:
                candidates = [keys[str(kid)]]
            elif flaw == "unknown-kid-ok":
                candidates = list(keys.values())
            else:
                raise Refused(f"kid {kid!r} is not in the key set")
        for key in candidates:
            try:
                return jwt.decode(
                    token,
                    key,
                    algorithms=["RS256"],
                    options={"verify_signature": flaw != "any-signature", **_NO_CHECKS},
                )
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as e:
                raise Refused(str(e)) from e
        raise Refused("signature")

    def _check_times(self, claims: dict[str, Any]) -> None:
        now, skew = self._clock(), 0 if self.flaw == "no-skew" else SKEW
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if not isinstance(exp, int | float):
            raise Refused("no exp")
        if self.flaw != "skip-expiry" and exp + skew <= now:
            raise Refused("expired")
        if self.flaw != "skip-nbf" and isinstance(nbf, int | float) and nbf - skew > now:
            raise Refused("not valid yet")


VALIDATOR: web.AppKey[Validator] = web.AppKey("validator", Validator)


class Replier:
    """Replies ``echo: <text>`` to a message through the connector, with a client-credentials
    token (fetched once); does nothing without a password and a token endpoint. A reply that
    fails is dropped: the bot still answers 200."""

    def __init__(self, settings: WeakSettings, http: aiohttp.ClientSession) -> None:
        self.settings = settings
        self.http = http
        self.token: str | None = None

    async def reply(self, body: bytes) -> None:
        s = self.settings
        if s.app_password is None or s.token_url is None:
            return
        try:
            activity = json.loads(body)
        except ValueError:
            return
        if not isinstance(activity, dict) or activity.get("type") != "message":
            return
        service_url, conversation = activity.get("serviceUrl"), activity.get("conversation")
        if not isinstance(service_url, str) or not isinstance(conversation, dict):
            return
        url = f"{service_url.rstrip('/')}/v3/conversations/{conversation.get('id')}/activities"
        reply = {
            "type": "message",
            "text": f"echo: {activity.get('text')}",
            "from": activity.get("recipient"),
            "recipient": activity.get("from"),
            "conversation": conversation,
            "replyToId": activity.get("id"),
        }
        try:
            if self.token is None:
                form = {"grant_type": "client_credentials", "client_id": s.app_id,
                        "client_secret": s.app_password, "scope": s.connector_scope or ""}  # fmt: skip
                async with self.http.post(s.token_url, data=form) as response:
                    response.raise_for_status()
                    self.token = str((await response.json(content_type=None))["access_token"])
            headers = {"Authorization": f"Bearer {self.token}"}
            async with self.http.post(f"{url}/{activity.get('id')}", json=reply,
                                      headers=headers) as response:  # fmt: skip
                await response.read()
        except (aiohttp.ClientError, TimeoutError, KeyError, ValueError):
            return


REPLIER: web.AppKey[Replier] = web.AppKey("replier", Replier)


def make_weak_bot(settings: WeakSettings, flaw: str | None) -> web.Application:
    """The bot as an aiohttp application (``POST /api/messages``)."""
    app = web.Application()

    async def session(app: web.Application) -> AsyncIterator[None]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:

            async def fetch(url: str) -> Any:
                async with http.get(url) as response:
                    response.raise_for_status()
                    return await response.json(content_type=None)

            app[VALIDATOR] = Validator(settings, flaw, fetch)
            app[REPLIER] = Replier(settings, http)
            yield

    async def messages(request: web.Request) -> web.Response:
        body = await request.read()
        validator = request.app[VALIDATOR]
        try:
            activity = json.loads(body)
        except ValueError:
            activity = None
        try:
            await validator.check(
                request.headers.get("Authorization"),
                activity if isinstance(activity, dict) else None,
            )
        except Refused as e:
            if validator.flaw == "crashes":
                raise RuntimeError(f"unhandled: {e}") from e
            status = 401 if validator.flaw == "answers-401" else 403
            return web.json_response({"error": str(e)}, status=status)
        await request.app[REPLIER].reply(body)
        return web.Response(status=200)

    app.cleanup_ctx.append(session)
    app.router.add_post("/api/messages", messages)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description="A messaging bot with one auth flaw.")
    parser.add_argument("flaw", choices=[*FLAWS, "none"])
    parser.add_argument("--port", type=int, default=3978)
    args = parser.parse_args()
    env = os.environ
    settings = WeakSettings(
        app_id=env["BOT_APP_ID"],
        openid_metadata_url=env["BOTEMU_OPENID_METADATA_URL"],
        connector_issuer=env["BOTEMU_CONNECTOR_ISSUER"],
        idp_openid_url=env["BOTEMU_IDP_OPENID_URL"],
        emulator_issuer=env["BOTEMU_EMULATOR_ISSUER"],
        emulator_audience=env.get("BOTEMU_LEGACY_AUDIENCE")
        if env.get("BOTEMU_PROFILE") == "v3.0"
        else None,
    )
    flaw = None if args.flaw == "none" else args.flaw
    web.run_app(make_weak_bot(settings, flaw), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
