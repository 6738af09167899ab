"""The tokens of the auth probes: good ones with exactly the claims botemu's connector sends,
and bad ones that each change one thing (``TokenFactory``), built from botemu's own keys.

The messaging probe (``auth``) and the calling probe (``auth_calling``) build every Authorization
header of their cases with a ``TokenFactory``; ``SKEW`` and ``MARGIN`` say how far the lifetime
cases are from the allowed clock skew.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable
from functools import cache, cached_property

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from emulator.config import Placeholders, Profile
from emulator.connector.sender import CHANNEL_ID, BotTokens, TokenKind
from emulator.identity.keys import KeyStore, b64url
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON, JSONObject, dumps

SKEW = 300
"""The clock skew the spec allows on token expiry (Limits: 5 minutes)."""
MARGIN = 60
"""How far beyond (or within) the skew the lifetime cases are."""
FOREIGN_ISSUER = "https://issuer.invalid/botemu-auth-probe/"
OTHER_APP_IDS = ("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff")
PROBE_AUDIENCES = ("api://botemu-auth-probe", "api://botemu-auth-probe-2")
"""Audiences no bot has, for when the connector's audience is the one a token must carry."""
UNENDORSED_CHANNEL = "botemu-unendorsed"
"""The ``channelId`` of the ``endorsement`` case (with a number added when it is endorsed)."""

_CON, _EMU = TokenKind.CONNECTOR, TokenKind.EMULATOR


class TokenFactory:
    """Builds the Authorization tokens of the cases from botemu's keys and placeholders.

    Good tokens carry exactly the claims botemu's connector sends (``BotTokens.claims``) and are
    signed with ``mint``; the bad ones change one thing each. ``clock`` is read per token.
    """

    def __init__(
        self,
        keys: KeyStore,
        placeholders: Placeholders,
        profile: Profile,
        app_id: str,
        *,
        clock: Callable[[], float] = time.time,
        lifetime: int = 3600,
    ) -> None:
        self.keys = keys
        self.placeholders = placeholders
        self.profile = profile
        self.app_id = app_id
        self.clock = clock
        self.lifetime = lifetime
        self._tokens = BotTokens(keys, placeholders, profile, clock, lifetime)

    @property
    def service_url(self) -> str:
        """The ``serviceUrl`` of the activities (and the ``serviceurl`` claim): botemu's."""
        return self.placeholders.base_url

    @property
    def other_app_id(self) -> str:
        return next(a for a in OTHER_APP_IDS if a != self.app_id)

    @property
    def wrong_audience(self) -> str:
        """An ``aud`` that is not the bot's app id: the connector's (a token meant for it)."""
        return self._other_audience(self.app_id)

    @property
    def emulator_wrong_audience(self) -> str:
        """An ``aud`` that is neither the emulator path's (the app id in v3.1, the legacy
        audience in v3.0) nor the app id: the connector's when it differs (in v3.1), else one
        no bot has."""
        return self._other_audience(str(self.claims(_EMU)["aud"]), self.app_id)

    def _other_audience(self, *not_these: str) -> str:
        candidates = (self.placeholders.connector_audience, *PROBE_AUDIENCES)
        return next(a for a in candidates if a not in not_these)

    @property
    def endorsements(self) -> tuple[str, ...]:
        """The channels botemu's current signing key is endorsed for (none: no restriction)."""
        return self.keys.current().endorsements

    @property
    def channel(self) -> str:
        """The ``channelId`` of the activities: botemu's, or the first endorsed channel when
        the keys are endorsed for others only (so that the good tokens stay good)."""
        endorsed = self.endorsements
        return CHANNEL_ID if not endorsed or CHANNEL_ID in endorsed else endorsed[0]

    @property
    def unendorsed_channel(self) -> str:
        """A ``channelId`` the current key is not endorsed for."""
        endorsed = set(self.endorsements)
        names = (f"{UNENDORSED_CHANNEL}{n or ''}" for n in range(len(endorsed) + 1))
        return next(name for name in names if name not in endorsed)

    # --- good tokens, one claim changed ------------------------------------------------------------

    # Every token takes ``version``: the ``ver`` of an emulator-path token ("1.0", the app id in
    # ``appid``; "2.0", in ``azp``). Tokens of the other paths have no version.

    def claims(self, kind: TokenKind, *, version: str = "1.0", **changes: JSON) -> JSONObject:
        """The claims of a good token of ``kind`` (and ``version``) issued now, then ``changes``."""
        now = int(self.clock())
        good = self._tokens.claims(
            self.app_id, service_url=self.service_url, kind=kind, version=version
        )
        return {"iat": now, "nbf": now, "exp": now + self.lifetime, **good, **changes}

    def token(self, kind: TokenKind, *, version: str = "1.0", **changes: JSON) -> str:
        """A token signed with botemu's current key."""
        return mint(self.keys, self.claims(kind, version=version, **changes), now=self.clock())

    def without(self, kind: TokenKind, *names: str, version: str = "1.0") -> str:
        claims = {k: v for k, v in self.claims(kind, version=version).items() if k not in names}
        return mint(self.keys, claims, now=self.clock())

    def expired(self, seconds_ago: int, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        exp = int(self.clock()) - seconds_ago
        start = exp - self.lifetime
        return self.token(kind, version=version, iat=start, nbf=start, exp=exp)

    def not_yet_valid(
        self, seconds_ahead: int, kind: TokenKind = _CON, *, version: str = "1.0"
    ) -> str:
        nbf = int(self.clock()) + seconds_ahead
        return self.token(kind, version=version, nbf=nbf, exp=nbf + self.lifetime)

    # --- bad tokens (each a good token of ``kind``, but for one thing) --------------------------

    def malformed(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """Three base64url parts, the header of which is not JSON."""
        _, payload, signature = self.token(kind, version=version).split(".")
        return f"{b64url(b'not a JSON header')}.{payload}.{signature}"

    def tampered(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """A good token whose ``exp`` was moved a day later after signing."""
        header, payload, signature = self.token(kind, version=version).split(".")
        claims = json.loads(_b64decode(payload))
        claims["exp"] += 86400
        return f"{header}.{b64url(dumps(claims))}.{signature}"

    def unknown_key(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """Signed by the probe's own key (``foreign_key``), whose kid is not published; its
        public JWK rides in the header (a bot that trusts an embedded ``jwk`` accepts it)."""
        kid = self._foreign_kid
        numbers = self._foreign_key.public_key().public_numbers()
        jwk: JSONObject = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                           "n": _b64uint(numbers.n), "e": _b64uint(numbers.e)}  # fmt: skip
        header: JSONObject = {"typ": "JWT", "alg": "RS256", "kid": kid, "x5t": kid, "jwk": jwk}
        return _encode(header, self.claims(kind, version=version), self._rs256(self._foreign_key))

    def unknown_kid(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """Signed by botemu's current key, under a kid that is not published."""
        kid = self.unpublished_kid()
        header: JSONObject = {"typ": "JWT", "alg": "RS256", "kid": kid, "x5t": kid}
        signer = self.keys.current().private_key
        return _encode(header, self.claims(kind, version=version), self._rs256(signer))

    def forged_signature(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """Names botemu's current kid, but is signed by another key."""
        current = self.keys.current()
        header: JSONObject = {"typ": "JWT", "alg": "RS256", "kid": current.kid, "x5t": current.x5t}
        return _encode(header, self.claims(kind, version=version), self._rs256(self._foreign_key))

    def alg_none(
        self, kind: TokenKind = _CON, *, kid: str | None = None, version: str = "1.0"
    ) -> str:
        """Unsigned (``alg: none``, an empty signature), naming ``kid`` (default: botemu's
        current, published kid)."""
        header: JSONObject = {"typ": "JWT", "alg": "none", "kid": kid or self.keys.current().kid}
        return _encode(header, self.claims(kind, version=version), lambda _: b"")

    def hs256_public_key(self, kind: TokenKind = _CON, *, version: str = "1.0") -> str:
        """HS256 with the PEM (SubjectPublicKeyInfo) of the published key as the HMAC secret.

        Built by hand: PyJWT refuses to use a PEM key as an HMAC secret, which is the point."""
        current = self.keys.current()
        secret = current.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        header: JSONObject = {"typ": "JWT", "alg": "HS256", "kid": current.kid}
        return _encode(
            header,
            self.claims(kind, version=version),
            lambda data: hmac.new(secret, data, hashlib.sha256).digest(),
        )

    @staticmethod
    def unpublished_kid() -> str:
        """A fresh kid shaped like an x5t, published nowhere."""
        return b64url(os.urandom(20))

    @cached_property
    def _foreign_key(self) -> rsa.RSAPrivateKey:
        return foreign_key()  # kept, so that this forge's kid and key are one key's

    @cached_property
    def _foreign_kid(self) -> str:
        der = self._foreign_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return b64url(hashlib.sha1(der).digest())

    @staticmethod
    def _rs256(key: rsa.RSAPrivateKey) -> Callable[[bytes], bytes]:
        return lambda data: key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def _encode(header: JSONObject, claims: JSONObject, sign: Callable[[bytes], bytes]) -> str:
    signing_input = f"{b64url(dumps(header))}.{b64url(dumps(claims))}"
    return f"{signing_input}.{b64url(sign(signing_input.encode('ascii')))}"


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _b64uint(value: int) -> str:
    return b64url(value.to_bytes((value.bit_length() + 7) // 8 or 1, "big"))


@cache
def foreign_key() -> rsa.RSAPrivateKey:
    """The key of the tokens signed by a key botemu never published: made once a process (a
    key takes 30 to 300 ms of CPU; each run of the auth probe made one). Made here, never one
    of botemu's: it stays unpublished however botemu's own keys rotate."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)
