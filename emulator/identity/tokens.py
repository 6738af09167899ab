"""Minting and validating the RS256 JWTs of spec section Authentication.

``mint`` signs claims with a key of a ``KeyStore``; ``validate`` checks a token the way the spec
requires a bot (or the connector) to check one, against an ``Expectation`` and an injected time;
``bearer_token`` takes the token out of an ``Authorization`` header. Every failure is a
``TokenError`` whose ``reason`` says which check failed:

==================  ==========================================================================
``missing``         no Authorization header
``scheme``          a scheme other than Bearer
``malformed``       not three base64url parts, or a header or payload that is not a JSON object
``algorithm``       ``alg`` is not RS256 (``none``, HS256 even when keyed with the public key, ...)
``unknown-kid``     no ``kid``, or one that is not published in the key document
``signature``       the RS256 signature does not verify with the key of that ``kid``
``issuer``          ``iss`` is not one of the expected issuers
``audience``        ``aud`` (a string, or a list of them) names none of the expected audiences
``expired``         ``exp`` is at or before now minus the allowed skew
``not-yet-valid``   ``nbf`` is after now plus the allowed skew
``appid``           ``appid`` (``ver`` 1.0 or absent) or ``azp`` (``ver`` 2.0) is not the app id
``claims``          a claim of the wrong type, a missing ``exp``, an unknown ``ver``
==================  ==========================================================================

The checks run in that order (``claims`` at the step of the claim concerned), so a token with
several faults reports the first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import jwt

from emulator.errors import BotemuError
from emulator.identity.keys import KeyStore, SigningKey
from emulator.jsonutil import JSON

ALGORITHM: Final = "RS256"
REASONS: Final = (
    "missing",
    "scheme",
    "malformed",
    "algorithm",
    "unknown-kid",
    "signature",
    "issuer",
    "audience",
    "expired",
    "not-yet-valid",
    "appid",
    "claims",
)
_SIGNATURE_ONLY: Final[jwt.types.Options] = {
    "verify_signature": True,
    "verify_exp": False,
    "verify_nbf": False,
    "verify_iat": False,
    "verify_aud": False,
    "verify_iss": False,
    "verify_sub": False,
    "verify_jti": False,
}


class TokenError(BotemuError):
    """A token was refused. ``reason`` is one of ``REASONS`` (see the module docstring);
    ``message`` says why, in one line."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Expectation:
    """What a valid token must carry.

    ``iss`` must be one of ``issuers`` and ``aud`` one of ``audiences``. When ``appid`` is set,
    the ``appid`` claim (``ver`` 1.0 or absent) or the ``azp`` claim (``ver`` 2.0) must equal it
    (field notes). ``skew_seconds`` is the clock skew allowed on ``exp`` and ``nbf`` (spec: 5 min).
    """

    issuers: tuple[str, ...]
    audiences: tuple[str, ...]
    appid: str | None = None
    skew_seconds: float = 300.0


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme in any case)."""
    if authorization is None or not authorization.strip():
        raise TokenError("missing", "no Authorization header")
    scheme, _, rest = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise TokenError("scheme", f"Authorization scheme is {_show(scheme)}, expected Bearer")
    token = rest.strip()
    if not token:
        raise TokenError("malformed", "Authorization header has no token after Bearer")
    if len(token.split(maxsplit=1)) > 1:  # str.split breaks where str.isspace is true
        raise TokenError("malformed", "Authorization header has more than one word after Bearer")
    return token


def mint(
    keys: KeyStore,
    claims: Mapping[str, JSON],
    *,
    now: float,
    lifetime: int = 3600,
    key: SigningKey | None = None,
) -> str:
    """An RS256 JWT of ``claims``, signed with ``key`` (default: the current key of ``keys``).

    The header is ``typ`` JWT, ``alg`` RS256, ``kid`` and ``x5t``. ``iat`` and ``nbf`` (whole
    seconds, ``now`` rounded down) and ``exp`` (``nbf + lifetime``) are added unless ``claims``
    gives them.
    """
    signer = key if key is not None else keys.current()
    issued = int(now)
    payload: dict[str, JSON] = {"iat": issued, "nbf": issued, "exp": issued + lifetime}
    payload.update(claims)
    headers = {"typ": "JWT", "alg": ALGORITHM, "kid": signer.kid, "x5t": signer.x5t}
    return jwt.encode(payload, signer.private_key, algorithm=ALGORITHM, headers=headers)


class VerifiedTokens:
    """Tokens whose RS256 signature has verified, with their key id and claims (bounded, least
    recently used first out). Checking a signature is the costly part of validation and a bot
    reuses one token for many requests; a remembered token is still checked against the key
    document (its key must still be published) and all its claims against the clock, every time."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._tokens: OrderedDict[str, tuple[str, dict[str, JSON]]] = OrderedDict()

    def get(self, token: str) -> tuple[str, dict[str, JSON]] | None:
        hit = self._tokens.get(token)
        if hit is not None:
            self._tokens.move_to_end(token)
        return hit

    def put(self, token: str, kid: str, claims: dict[str, JSON]) -> None:
        self._tokens[token] = (kid, claims)
        if len(self._tokens) > self.size:
            self._tokens.popitem(last=False)


def validate(
    token: str,
    keys: KeyStore,
    expect: Expectation,
    *,
    now: float,
    verified: VerifiedTokens | None = None,
) -> dict[str, JSON]:
    """The claims of ``token`` if it passes every check at time ``now``, else ``TokenError``.
    With ``verified``, a token whose signature verified before is not verified again."""
    if verified is not None:
        hit = verified.get(token)
        if hit is not None and keys.find(hit[0]) is not None:
            _check_claims(hit[1], expect, now)
            return dict(hit[1])
    if token.count(".") != 2:
        raise TokenError("malformed", "a JWT has three parts separated by dots")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError as e:
        raise TokenError("malformed", f"unreadable header ({e})") from e
    alg = header.get("alg")
    if alg != ALGORITHM:
        raise TokenError("algorithm", f"alg is {_show(alg)}; only RS256 is accepted")
    kid = header.get("kid")
    if not isinstance(kid, str):
        raise TokenError("unknown-kid", "the header has no kid")
    key = keys.find(kid)
    if key is None:
        raise TokenError("unknown-kid", f"kid {_show(kid)} is not in the key document")
    try:
        claims: dict[str, JSON] = jwt.decode(
            token, key.public_key, algorithms=[ALGORITHM], options=_SIGNATURE_ONLY
        )
    except jwt.InvalidSignatureError as e:
        raise TokenError("signature", f"the signature does not verify with key {kid}") from e
    except jwt.InvalidTokenError as e:  # claim checks are off: only a bad payload or header
        raise TokenError("malformed", f"unreadable token ({e})") from e
    if verified is not None:
        verified.put(token, kid, dict(claims))
    _check_claims(claims, expect, now)
    return claims


def _check_claims(claims: Mapping[str, JSON], expect: Expectation, now: float) -> None:
    iss = claims.get("iss")
    if not isinstance(iss, str) or iss not in expect.issuers:
        raise TokenError("issuer", f"iss is {_show(iss)}, expected {_one_of(expect.issuers)}")
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if not any(isinstance(a, str) and a in expect.audiences for a in audiences):
        raise TokenError("audience", f"aud is {_show(aud)}, expected {_one_of(expect.audiences)}")
    ver = claims.get("ver")
    if ver is not None and ver not in _VERSIONS:
        # ``ver`` is the token format (1.0: appid, 2.0: azp), not the auth profile (v3.0/v3.1,
        # spec Versioning): no profile issues another value, so both refuse it
        raise TokenError("claims", f"ver is {_show(ver)}, expected 1.0 or 2.0")
    exp = _time(claims, "exp")
    if exp is None:
        raise TokenError("claims", "exp is missing")
    if exp <= now - expect.skew_seconds:
        raise TokenError(
            "expired", f"expired {now - exp:.0f} s ago (skew {expect.skew_seconds:g} s)"
        )
    nbf = _time(claims, "nbf")
    if nbf is not None and nbf > now + expect.skew_seconds:
        raise TokenError(
            "not-yet-valid", f"valid only in {nbf - now:.0f} s (skew {expect.skew_seconds:g} s)"
        )
    if expect.appid is not None:
        name = "azp" if ver == "2.0" else "appid"
        value = claims.get(name)
        if value != expect.appid:
            raise TokenError("appid", f"{name} is {_show(value)}, expected {expect.appid!r}")


_VERSIONS = ("1.0", "2.0")
"""The ``ver`` claims a token may carry (field notes, Messaging and identity); absent is 1.0."""


def _time(claims: Mapping[str, JSON], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenError("claims", f"{name} is {_show(value)}, expected a number of seconds")
    return float(value)


def _one_of(values: tuple[str, ...]) -> str:
    if not values:
        return "none (nothing is expected)"
    return " or ".join(repr(v) for v in values)


def _show(value: object, limit: int = 60) -> str:
    """A short, one-line rendering of a value taken from a token."""
    text = "absent" if value is None else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
