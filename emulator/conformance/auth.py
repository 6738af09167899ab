"""The auth probe: does a messaging bot refuse every token the platform would never send?

Spec (Authentication, Connector to bot 4-6, and Local test emulator to bot 1-7): the bot accepts
a call only with a Bearer JWT from the right issuer, for its app id, unexpired (5 minutes of skew)
and signed by a published key, and on the emulator path with its app id in ``appid``; on any
failure it answers 403, and no switch turns this off. The probe posts one ``message`` activity per
case, each with one Authorization header built by a ``TokenFactory`` from botemu's own keys:

========================  ===================================================================
``valid``                 a good connector token: the positive control, must be accepted
``no-header``             no Authorization header
``scheme``                the good token under ``Basic`` instead of ``Bearer``
``malformed``             three dot-separated parts whose header is not JSON
``issuer``                ``iss`` a foreign issuer
``audience``              ``aud`` the connector's audience instead of the bot's app id
``expired``               expired 6 minutes ago, beyond the 5-minute skew
``expired-within-skew``   expired 4 minutes ago, within the skew: must be accepted
``not-yet-valid``         ``nbf`` 6 minutes ahead
``tampered``              ``exp`` changed after signing, the old signature kept
``unknown-key``           signed by a key that is not published (its JWK embedded in the header)
``unknown-kid``           signed by the published key under a ``kid`` that is not published
``forged-signature``      the published ``kid``, signed by another key
``alg-none``              ``alg: none`` and no signature
``hs256-public-key``      HS256 keyed with the published public key (PEM)
``endorsement``           a good token on an activity from a channel its key is not endorsed
                          for (skipped, as an info finding, when botemu publishes no
                          endorsements)
``emulator-valid``        a good emulator-path token (``ver`` 1.0, ``appid``): the positive
                          control of that path
``emulator-no-appid``     an emulator-path token without ``appid``
``emulator-wrong-appid``  an emulator-path token whose ``appid`` is another app's
``emulator-<case>``       the cases ``issuer`` to ``hs256-public-key`` above, on ``ver`` 1.0
                          emulator-path tokens
``emulator-v2-valid``     a good ``ver`` 2.0 emulator-path token (``azp``): its own control
``emulator-v2-wrong-azp`` a ``ver`` 2.0 token whose ``azp`` is another app's
``emulator-v2-<case>``    the same cases on ``ver`` 2.0 tokens
========================  ===================================================================

Verdicts (``Finding.where`` is the case name): a bad token answered 403 passes (info); 2xx is an
error (a security hole), 5xx an error (a crash on bad input), any other status a warning (the spec
says 403; real SDKs answer 401 or 500, field notes), and no answer a warning. A token that must be
accepted passes with 2xx and is an error otherwise. When a path's positive control is not
accepted, the refusals on that path prove nothing and are warnings; each token version of the
emulator path has its own control. A bad URL, or a bot that cannot be reached for the first case,
raises ``ProbeError``.

The bot answers an accepted ``message`` by replying through the connector, so the probe runs
inside a running botemu (``POST /_botemu/probe/auth``), which puts each activity in a
conversation (``stage``) before it is sent.

The calling probe (``auth_calling``) shares the machinery: ``TokenFactory`` (each bad token is
built for a token path, ``TokenKind``), ``Case``, ``send``, ``run_cases`` and the verdicts
(``judge_control``, ``judge``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from ssl import SSLContext

import aiohttp
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from yarl import URL

from emulator.calling.delivery import read_limited
from emulator.config import Placeholders, Profile
from emulator.conformance.tls import ProbeError
from emulator.connector.sender import CHANNEL_ID, BotTokens, TokenKind
from emulator.findings import Finding, RuleRegistry, Severity
from emulator.identity.keys import KeyStore, b64url
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON, JSONObject, dumps

RULES = RuleRegistry("Auth probe (connector and emulator to bot)")
_C = "spec Authentication, Connector to bot"
_E = "spec Authentication, Local test emulator to bot"
_r = RULES.add
_r("AUTH-VALID-ACCEPTED", Severity.ERROR, f"{_C} 4",
   "The bot accepts a valid connector token (the positive control: when it is refused, the "
   "other connector cases prove nothing).")  # fmt: skip
_r("AUTH-NO-HEADER", Severity.ERROR, f"{_C} 4.1, 5",
   "The bot refuses a call without an Authorization header with 403.")  # fmt: skip
_r("AUTH-SCHEME", Severity.ERROR, f"{_C} 4.1, 5",
   "The bot refuses a token sent with a scheme other than Bearer with 403.")  # fmt: skip
_r("AUTH-MALFORMED", Severity.ERROR, f"{_C} 4.2, 5",
   "The bot refuses a token that is not a JWT with 403 (and does not crash).")  # fmt: skip
_r("AUTH-ISSUER", Severity.ERROR, f"{_C} 4.3, 5",
   "The bot refuses a token whose iss is not the connector issuer with 403.")  # fmt: skip
_r("AUTH-AUDIENCE", Severity.ERROR, f"{_C} 4.4, 5",
   "The bot refuses a token whose aud is not its app id with 403.")  # fmt: skip
_r("AUTH-EXPIRED", Severity.ERROR, f"{_C} 4.5, 5",
   "The bot refuses a token expired longer ago than the 5-minute clock skew with 403.")  # fmt: skip
_r("AUTH-EXPIRED-WITHIN-SKEW", Severity.ERROR, f"{_C} 4.5; Limits (clock skew)",
   "The bot accepts a token that expired less than 5 minutes ago (the allowed clock skew).")  # fmt: skip
_r("AUTH-NOT-YET-VALID", Severity.ERROR, f"{_C} 4.2, 4.5, 5 (RFC 7519 nbf)",
   "The bot refuses a token whose nbf is further ahead than the clock skew with 403.")  # fmt: skip
_r("AUTH-TAMPERED", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token whose payload was changed after it was signed with 403.")  # fmt: skip
_r("AUTH-UNKNOWN-KEY", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token signed by a key that is not in the key document (even when the "
   "token carries the key itself) with 403.")  # fmt: skip
_r("AUTH-UNKNOWN-KID", Severity.ERROR, f"{_C} 4.6, 5; field notes (a kid not in the key set fails)",
   "The bot refuses a token whose kid is not in the key document with 403, without trying the "
   "other keys.")  # fmt: skip
_r("AUTH-FORGED-SIGNATURE", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token that names a published kid but is signed by another key with "
   "403.")  # fmt: skip
_r("AUTH-ALG-NONE", Severity.ERROR, f"{_C} 4.6, 5; field notes (RS256 only)",
   "The bot refuses an unsigned token (alg none) with 403.")  # fmt: skip
_r("AUTH-HS256-PUBLIC-KEY", Severity.ERROR, f"{_C} 4.6, 5; field notes (RS256 only)",
   "The bot refuses an HS256 token keyed with the published RSA public key with 403.")  # fmt: skip
_r("AUTH-ENDORSEMENT", Severity.ERROR,
   f"{_C} 4.6, 5; field notes (a key's endorsements must list the activity's channelId)",
   "When the published keys carry endorsements, the bot refuses a valid token on an activity "
   "whose channelId its signing key is not endorsed for with 403 (skipped when botemu publishes "
   "no endorsements).")  # fmt: skip


def _emulator_rules(version: str) -> None:
    """The rules of the emulator path's cases for tokens of ``version``, in case order."""
    rule = "AUTH-EMULATOR" if version == "1.0" else "AUTH-EMULATOR-V2"
    claim = "appid" if version == "1.0" else "azp"
    notes = "" if version == "1.0" else "; field notes (ver 2.0: the app id is in azp)"
    token = f"an emulator-path token (ver {version})"
    _r(f"{rule}-VALID", Severity.ERROR, f"{_E} 1-7{notes}",
       f"The bot accepts a valid emulator-path token of ver {version}, its app id in {claim} (the "
       "positive control of that path and version).")  # fmt: skip
    if version == "1.0":
        _r(f"{rule}-NO-APPID", Severity.ERROR, f"{_E} 5",
           f"The bot refuses {token} without an appid claim with 403.")  # fmt: skip
        _r(f"{rule}-WRONG-APPID", Severity.ERROR, f"{_E} 5",
           f"The bot refuses {token} whose appid is not its app id with 403.")  # fmt: skip
    else:
        _r(f"{rule}-WRONG-AZP", Severity.ERROR, f"{_E} 5{notes}",
           f"The bot refuses {token} whose azp is not its app id with 403.")  # fmt: skip
    _r(f"{rule}-ISSUER", Severity.ERROR, f"{_E} 3{notes}",
       f"The bot refuses {token} whose iss is not the emulator issuer with 403.")  # fmt: skip
    _r(f"{rule}-AUDIENCE", Severity.ERROR, f"{_E} 4; Versioning{notes}",
       f"The bot refuses {token} whose aud is not the profile's emulator audience (its app id "
       "in v3.1) with 403.")  # fmt: skip
    _r(f"{rule}-EXPIRED", Severity.ERROR, f"{_E} 6{notes}",
       f"The bot refuses {token} expired longer ago than the 5-minute clock skew with "
       "403.")  # fmt: skip
    _r(f"{rule}-EXPIRED-WITHIN-SKEW", Severity.ERROR, f"{_E} 6; Limits (clock skew){notes}",
       f"The bot accepts {token} that expired less than 5 minutes ago.")  # fmt: skip
    _r(f"{rule}-NOT-YET-VALID", Severity.ERROR, f"{_E} 2, 6 (RFC 7519 nbf){notes}",
       f"The bot refuses {token} whose nbf is further ahead than the clock skew with "
       "403.")  # fmt: skip
    _r(f"{rule}-TAMPERED", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} whose payload was changed after it was signed with "
       "403.")  # fmt: skip
    _r(f"{rule}-UNKNOWN-KEY", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} signed by a key that is not in the key document (even when "
       "the token carries the key itself) with 403.")  # fmt: skip
    _r(f"{rule}-UNKNOWN-KID", Severity.ERROR,
       f"{_E} 7; field notes (a kid not in the key set fails){notes}",
       f"The bot refuses {token} whose kid is not in the key document with 403, without "
       "trying the other keys.")  # fmt: skip
    _r(f"{rule}-FORGED-SIGNATURE", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} that names a published kid but is signed by another key "
       "with 403.")  # fmt: skip
    _r(f"{rule}-ALG-NONE", Severity.ERROR, f"{_E} 7; field notes (RS256 only){notes}",
       f"The bot refuses {token} that is unsigned (alg none) with 403.")  # fmt: skip
    _r(f"{rule}-HS256-PUBLIC-KEY", Severity.ERROR, f"{_E} 7; field notes (RS256 only){notes}",
       f"The bot refuses {token} signed HS256 with the published RSA public key as the "
       "secret with 403.")  # fmt: skip


VERSIONS = ("1.0", "2.0")
"""The emulator-path token versions (field notes: ``ver`` 1.0 puts the app id in ``appid``,
2.0 in ``azp``); the probe runs the emulator path's cases for each."""
for _version in VERSIONS:
    _emulator_rules(_version)

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
PROBE_USER: JSONObject = {"id": "botemu-auth-probe", "name": "botemu auth probe", "role": "user"}

_CON, _EMU = TokenKind.CONNECTOR, TokenKind.EMULATOR

Stage = Callable[[JSONObject], JSONObject]
"""Takes an activity about to be sent and returns it as it goes out (botemu stores it in a
conversation and gives it its id, so that the bot's reply to it is accepted)."""


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
        """Signed by a fresh key whose kid is not published; its public JWK rides in the header
        (a bot that trusts an embedded ``jwk`` accepts it)."""
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
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

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


# --- the cases ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """One request: a name (the findings' ``where``), its rule, the token path, what it presents
    (for messages), how its Authorization header is built (None: no header), and whether the bot
    must accept it. ``control`` marks the positive control of its path (and ``version``: each
    token version of the emulator path has its own). ``refusal`` is the severity of refusing a
    token that must be accepted, and ``no_answer`` that of getting no answer at all (a broken
    connection or a time-out). For messages: ``channel`` gives the activity's ``channelId``
    (None: ``TokenFactory.channel``), and ``skip`` says why the case cannot be run against this
    botemu (None: it can)."""

    name: str
    rule: str
    path: TokenKind
    presents: str
    build: Callable[[TokenFactory], str | None]
    expect_accept: bool = False
    control: bool = False
    refusal: Severity = Severity.ERROR
    no_answer: Severity = Severity.WARNING
    version: str | None = None
    channel: Callable[[TokenFactory], str] | None = None
    skip: Callable[[TokenFactory], str | None] | None = None

    @property
    def lane(self) -> str:
        """The path (and token version) the case is judged on: ``emulator-path (ver 2.0)``."""
        return f"{self.path.value}-path" + (f" (ver {self.version})" if self.version else "")


SKIPPED = "skipped: "
"""How the message of the finding of a case that was not run begins (an info finding)."""


def skipped(finding: Finding) -> bool:
    """Whether ``finding`` reports a case that was not run (it neither passed nor failed)."""
    return finding.severity is Severity.INFO and finding.message.startswith(SKIPPED)


def bearer(token: str) -> str:
    return f"Bearer {token}"


_BEYOND, _WITHIN = SKEW + MARGIN, SKEW - MARGIN
NO_ENDORSEMENTS = (
    "botemu publishes no endorsements on its signing keys, so there is no channel a bot must "
    "refuse (botemu serve --endorse CHANNEL publishes some)"
)
CASES: tuple[Case, ...] = (
    Case("valid", "AUTH-VALID-ACCEPTED", _CON, "a valid connector token",
         lambda f: bearer(f.token(_CON)), expect_accept=True, control=True),
    Case("no-header", "AUTH-NO-HEADER", _CON, "a call without an Authorization header",
         lambda f: None),
    Case("scheme", "AUTH-SCHEME", _CON, "a valid token under the Basic scheme",
         lambda f: f"Basic {f.token(_CON)}"),
    Case("malformed", "AUTH-MALFORMED", _CON, "a token whose header is not JSON",
         lambda f: bearer(f.malformed())),
    Case("issuer", "AUTH-ISSUER", _CON, f"a token from the foreign issuer {FOREIGN_ISSUER}",
         lambda f: bearer(f.token(_CON, iss=FOREIGN_ISSUER))),
    Case("audience", "AUTH-AUDIENCE", _CON, "a token for the connector's audience instead of the bot's app id",
         lambda f: bearer(f.token(_CON, aud=f.wrong_audience))),
    Case("expired", "AUTH-EXPIRED", _CON,
         f"a token expired {_BEYOND // 60} minutes ago (beyond the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(_BEYOND))),
    Case("expired-within-skew", "AUTH-EXPIRED-WITHIN-SKEW", _CON,
         f"a token expired {_WITHIN // 60} minutes ago (within the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(_WITHIN)), expect_accept=True),
    Case("not-yet-valid", "AUTH-NOT-YET-VALID", _CON,
         f"a token valid only {_BEYOND // 60} minutes from now (nbf)",
         lambda f: bearer(f.not_yet_valid(_BEYOND))),
    Case("tampered", "AUTH-TAMPERED", _CON, "a token whose exp was changed after signing",
         lambda f: bearer(f.tampered())),
    Case("unknown-key", "AUTH-UNKNOWN-KEY", _CON,
         "a token signed by an unpublished key (its JWK in the header)",
         lambda f: bearer(f.unknown_key())),
    Case("unknown-kid", "AUTH-UNKNOWN-KID", _CON,
         "a token with an unpublished kid (signed by the published key)",
         lambda f: bearer(f.unknown_kid())),
    Case("forged-signature", "AUTH-FORGED-SIGNATURE", _CON,
         "a token naming the published kid but signed by another key",
         lambda f: bearer(f.forged_signature())),
    Case("alg-none", "AUTH-ALG-NONE", _CON, "an unsigned token (alg none)",
         lambda f: bearer(f.alg_none())),
    Case("hs256-public-key", "AUTH-HS256-PUBLIC-KEY", _CON,
         "an HS256 token keyed with the published public key",
         lambda f: bearer(f.hs256_public_key())),
    Case("endorsement", "AUTH-ENDORSEMENT", _CON,
         "a valid token on an activity whose channelId its signing key is not endorsed for",
         lambda f: bearer(f.token(_CON)), channel=lambda f: f.unendorsed_channel,
         skip=lambda f: None if f.endorsements else NO_ENDORSEMENTS),
)  # fmt: skip


def _emulator_cases(version: str) -> tuple[Case, ...]:
    """The emulator path's cases for tokens of ``version`` (field notes: ``ver`` 1.0 carries the
    app id in ``appid``, 2.0 in ``azp``): the positive control, the app id cases, then the issuer,
    audience, lifetime and signature cases of the connector path."""
    v = version
    name = "emulator" if v == "1.0" else "emulator-v2"
    rule = f"AUTH-{name.upper()}"
    token = f"an emulator-path token (ver {v})"

    def case(
        suffix: str,
        presents: str,
        build: Callable[[TokenFactory], str | None],
        *,
        expect_accept: bool = False,
        control: bool = False,
    ) -> Case:
        return Case(f"{name}-{suffix}", f"{rule}-{suffix.upper()}", _EMU, presents, build,
                    expect_accept, control, version=v)  # fmt: skip

    app_id_cases: tuple[Case, ...]
    if v == "1.0":
        app_id_cases = (
            case("no-appid", f"{token} without appid",
                 lambda f: bearer(f.without(_EMU, "appid", version=v))),
            case("wrong-appid", f"{token} with another app's appid",
                 lambda f: bearer(f.token(_EMU, version=v, appid=f.other_app_id))),
        )  # fmt: skip
    else:
        app_id_cases = (
            case("wrong-azp", f"{token} with another app's azp",
                 lambda f: bearer(f.token(_EMU, version=v, azp=f.other_app_id))),
        )  # fmt: skip
    return (
        case("valid", f"a valid {token.removeprefix('an ')}",
             lambda f: bearer(f.token(_EMU, version=v)), expect_accept=True, control=True),
        *app_id_cases,
        case("issuer", f"{token} from the foreign issuer {FOREIGN_ISSUER}",
             lambda f: bearer(f.token(_EMU, version=v, iss=FOREIGN_ISSUER))),
        case("audience", f"{token} for an audience that is not the bot's",
             lambda f: bearer(f.token(_EMU, version=v, aud=f.emulator_wrong_audience))),
        case("expired",
             f"{token} expired {_BEYOND // 60} minutes ago (beyond the {SKEW // 60}-minute skew)",
             lambda f: bearer(f.expired(_BEYOND, _EMU, version=v))),
        case("expired-within-skew",
             f"{token} expired {_WITHIN // 60} minutes ago (within the {SKEW // 60}-minute skew)",
             lambda f: bearer(f.expired(_WITHIN, _EMU, version=v)), expect_accept=True),
        case("not-yet-valid", f"{token} valid only {_BEYOND // 60} minutes from now (nbf)",
             lambda f: bearer(f.not_yet_valid(_BEYOND, _EMU, version=v))),
        case("tampered", f"{token} whose exp was changed after signing",
             lambda f: bearer(f.tampered(_EMU, version=v))),
        case("unknown-key", f"{token} signed by an unpublished key (its JWK in the header)",
             lambda f: bearer(f.unknown_key(_EMU, version=v))),
        case("unknown-kid", f"{token} with an unpublished kid (signed by the published key)",
             lambda f: bearer(f.unknown_kid(_EMU, version=v))),
        case("forged-signature", f"{token} naming the published kid but signed by another key",
             lambda f: bearer(f.forged_signature(_EMU, version=v))),
        case("alg-none", f"{token} that is unsigned (alg none)",
             lambda f: bearer(f.alg_none(_EMU, version=v))),
        case("hs256-public-key", f"{token} signed HS256 with the published public key",
             lambda f: bearer(f.hs256_public_key(_EMU, version=v))),
    )  # fmt: skip


CASES += tuple(c for v in VERSIONS for c in _emulator_cases(v))


# --- running --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one request got: the HTTP status (None without an answer), the evidence, and the
    body of the answer (at most ``MAX_ANSWER`` bytes)."""

    status: int | None
    detail: str
    unreachable: bool = False
    body: bytes = b""

    @property
    def accepted(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


MAX_ANSWER = 1024 * 1024
"""Bytes of a bot's answer the probes read (the calling platform's own limit)."""

Attempter = Callable[[Case], Awaitable[Attempt]]
"""Sends one case to the bot and says what it got."""
Judge = Callable[[Case, Attempt], Finding]
"""Judges the answer to a path's positive control."""
After = Callable[[Case, Attempt], Awaitable[Finding | None]]
"""Runs after each case; a finding it returns is reported and ends the probe."""


def check_url(bot_url: str, what: str = "messaging endpoint") -> URL:
    """The bot's ``what`` as a URL; ``ProbeError`` unless it is http(s) with a host."""
    try:
        url = URL(bot_url)
    except ValueError as e:
        raise ProbeError(bot_url, f"not a URL ({e})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ProbeError(bot_url, f"the bot's {what} must be an http(s) URL with a host")
    return url


async def probe_auth(
    bot_url: str,
    factory: TokenFactory,
    *,
    http: aiohttp.ClientSession,
    timeout: float = 10.0,
    on_finding: Callable[[Finding], None] | None = None,
    stage: Stage | None = None,
) -> list[Finding]:
    """Run every case against ``bot_url`` and return one finding per case, in order.

    The bot's app id and the ``serviceUrl`` come from ``factory``; ``timeout`` bounds each case;
    ``on_finding`` sees each finding as soon as it is judged; ``stage`` sees each activity before
    it is sent. Raises ``ProbeError`` for a bad URL or a bot that cannot be reached at all.
    """
    check_url(bot_url)
    conversation = f"botemu-auth-probe-{uuid.uuid4().hex[:12]}"

    async def attempt(case: Case) -> Attempt:
        activity = _activity(case, factory, conversation)
        if stage is not None:
            activity = stage(activity)
        activity["channelId"] = (case.channel or _channel)(factory)  # staging sets botemu's
        headers = {"Content-Type": "application/json"}
        return await send(http, bot_url, dumps(activity), headers, case.build(factory), timeout)

    def control(case: Case, attempt: Attempt) -> Finding:
        if attempt.status is not None and attempt.status >= 500:
            hint = "did its reply through botemu's connector fail?"
        elif case.version == "2.0":
            hint = ("does it take ver 2.0 tokens, whose app id is in azp (field notes)? Is it "
                    "configured with this botemu's settings (botemu config)?")  # fmt: skip
        else:
            hint = "is it configured with this botemu's settings (botemu config)?"
        return judge_control(case, attempt, hint)

    def skip(case: Case) -> str | None:
        return None if case.skip is None else case.skip(factory)

    return await run_cases(bot_url, CASES, attempt, control, on_finding=on_finding, skip=skip)


def _channel(factory: TokenFactory) -> str:
    return factory.channel


async def run_cases(
    bot_url: str,
    cases: Sequence[Case],
    attempt: Attempter,
    control: Judge,
    *,
    on_finding: Callable[[Finding], None] | None = None,
    after: After | None = None,
    skip: Callable[[Case], str | None] | None = None,
) -> list[Finding]:
    """Send each case with ``attempt`` and judge it: the positive control of each path (and token
    version) with ``control``, the others with ``judge`` against their path's control. ``after``
    runs after each case and may end the probe with a finding. A case for which ``skip`` gives a
    reason is not sent: its finding is an info that says it was skipped, and why. Raises
    ``ProbeError`` when the first case cannot reach the bot at all."""
    findings: list[Finding] = []

    def report(finding: Finding) -> None:
        findings.append(finding)
        if on_finding is not None:
            on_finding(finding)

    controls: dict[tuple[TokenKind, str | None], Attempt] = {}
    for case in cases:
        reason = None if skip is None else skip(case)
        if reason is not None:
            report(Finding(case.rule, Severity.INFO, case.name, f"{SKIPPED}{reason}"))
            continue
        got = await attempt(case)
        if not findings and got.unreachable:
            raise ProbeError(bot_url, f"cannot connect: {got.detail}")
        if case.control:
            controls[case.path, case.version] = got
            report(control(case, got))
        else:
            report(judge(case, got, controls.get((case.path, case.version))))
        stop = None if after is None else await after(case, got)
        if stop is not None:
            report(stop)
            break
    return findings


def _activity(case: Case, factory: TokenFactory, conversation: str) -> JSONObject:
    return {
        "type": "message",
        "id": f"probe-{uuid.uuid4().hex}",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(factory.clock())),
        "channelId": factory.channel,
        "serviceUrl": factory.service_url,
        "from": dict(PROBE_USER),
        "recipient": {"id": factory.app_id, "role": "bot"},
        "conversation": {"id": conversation},
        "text": f"botemu auth probe: {case.name}",
    }


async def send(
    http: aiohttp.ClientSession,
    bot_url: str,
    body: bytes,
    headers: Mapping[str, str],
    authorization: str | None,
    timeout: float,
    *,
    ssl: SSLContext | None = None,
) -> Attempt:
    """POST ``body`` with ``headers`` and the ``authorization`` header (None: none) and say what
    came back. A TCP connection not made within half the time counts as unreachable."""
    sent = dict(headers)
    if authorization is not None:
        sent["Authorization"] = authorization
    limits = aiohttp.ClientTimeout(total=timeout, sock_connect=timeout / 2)
    try:
        async with http.post(
            bot_url,
            data=body,
            headers=sent,
            timeout=limits,
            allow_redirects=False,
            ssl=ssl if ssl is not None else True,
        ) as response:
            answer, _ = await read_limited(response, MAX_ANSWER)
            return Attempt(response.status, f"HTTP {response.status}", body=answer)
    except aiohttp.ConnectionTimeoutError:
        return Attempt(None, f"no connection within {timeout / 2:g} s", unreachable=True)
    except TimeoutError:
        return Attempt(None, f"no answer within {timeout:g} s")
    except aiohttp.ClientConnectorError as e:
        return Attempt(None, e.os_error.strerror or str(e.os_error), unreachable=True)
    except (aiohttp.ClientError, OSError) as e:
        return Attempt(None, f"connection failed: {str(e) or type(e).__name__}")


# --- verdicts -----------------------------------------------------------------------------------


def judge_control(case: Case, attempt: Attempt, hint: str) -> Finding:
    """The positive control of ``case.path``: accepted, or an error ending with ``hint``."""
    if attempt.accepted:
        return Finding(case.rule, Severity.INFO, case.name,
                       f"accepted {case.presents} ({attempt.detail})")  # fmt: skip
    return Finding(
        case.rule,
        Severity.ERROR,
        case.name,
        f"positive control refused: the bot did not accept {case.presents} ({attempt.detail}), "
        f"so the probe cannot judge the other {case.lane} cases; {hint}",
        attempt.detail,
    )


def judge(case: Case, attempt: Attempt, control: Attempt | None) -> Finding:
    """A case that is not a positive control, given its path's control (None: not sent)."""
    rule, where, detail, status = case.rule, case.name, attempt.detail, attempt.status
    judged = control is None or control.accepted

    def finding(severity: Severity, message: str) -> Finding:
        return Finding(
            rule, severity, where, message, None if severity is Severity.INFO else detail
        )

    if case.expect_accept:
        if attempt.accepted:
            return finding(Severity.INFO, f"accepted {case.presents} ({detail})")
        if status is None:
            return finding(Severity.WARNING, f"no answer to {case.presents}: {detail}")
        if not judged:
            return finding(Severity.WARNING, f"refused {case.presents} ({detail}), but the valid "
                           f"{case.lane} token was refused too: inconclusive")  # fmt: skip
        if status >= 500:
            return finding(Severity.ERROR, f"crashed on {case.presents} ({detail})")
        return finding(case.refusal, f"refused {case.presents} ({detail}); the spec allows "
                       f"{SKEW // 60} minutes of clock skew, so it must be accepted")  # fmt: skip
    if attempt.accepted:
        return finding(Severity.ERROR,
                       f"accepted a bad token (security hole): {case.presents} ({detail})")  # fmt: skip
    if status is None:
        return finding(case.no_answer, f"no answer to {case.presents}: {detail}")
    if not judged:
        return finding(Severity.WARNING, f"refused {case.presents} ({detail}), but the valid "
                       f"{case.lane} token was refused too: inconclusive")  # fmt: skip
    if status == 403:
        return finding(Severity.INFO, f"refused {case.presents} ({detail})")
    if status >= 500:
        return finding(Severity.ERROR, f"crashed on {case.presents} ({detail}); a bad token "
                       "must be refused with 403")  # fmt: skip
    if 400 <= status < 500:
        return finding(Severity.WARNING,
                       f"refused {case.presents} with HTTP {status}; the spec says 403")  # fmt: skip
    return finding(Severity.WARNING,
                   f"answered {case.presents} with HTTP {status}; the spec says 403")  # fmt: skip
