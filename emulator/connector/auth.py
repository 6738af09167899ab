"""Who is calling the connector: the Bearer token of a request, checked, gives the caller's app id.

Spec, Authentication, "Bot to connector" 3: the connector accepts a request when the token is
well formed, unexpired, issued by the identity provider and belongs to the calling bot. botemu
checks the signature against a key of its own JWKS, the issuer (botemu's emulator issuer), the
audience (the connector audience), ``exp`` with 5 minutes of skew, and that the app id is a
registered bot. Any token problem is 401 (Unauthorized, with ``WWW-Authenticate: Bearer``); a good
token of an app id that is not registered is 403. Whether the bot is a party to the conversation
is the state's business (``models.ConnectorState.conversation(..., bot=)``).

A ``Verifier`` is any callable from the Authorization header value to the app id, so tests can
pass a fake one; ``identity_verifier`` builds the real one over ``emulator.identity.tokens``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from emulator.config import Placeholders
from emulator.connector.errors import forbidden, unauthorized
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import (
    Expectation,
    TokenError,
    VerifiedTokens,
    bearer_token,
    validate,
)


class Verifier(Protocol):
    def __call__(self, authorization: str | None) -> str:
        """The caller's app id; raises ConnectorError (Unauthorized 401, Forbidden 403)."""
        ...


Claims = Mapping[str, object]


def app_id_of(claims: Claims) -> str | None:
    """The app id a token speaks for: ``appid`` for ``ver`` 1.0, ``azp`` for 2.0 (field notes,
    Messaging and identity); without ``ver``, whichever of the two is present; None for any
    other ``ver`` (such as "3.0": the auth profile is not a token version)."""
    version = claims.get("ver")
    if version is None:
        names: tuple[str, ...] = ("appid", "azp")
    elif version == "1.0":
        names = ("appid",)
    elif version == "2.0":
        names = ("azp",)
    else:
        return None
    for name in names:
        value = claims.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def claims_verifier(
    check: Callable[[str | None], Claims],
    *,
    token_errors: tuple[type[Exception], ...],
    registered: Callable[[str], bool],
) -> Verifier:
    """A Verifier from ``check``, which validates an Authorization header into claims.

    ``token_errors`` are the exceptions that mean "bad token" (401); they may carry
    ``.reason`` and ``.message``. Anything else raised by ``check`` propagates (a 500)."""

    def verify(authorization: str | None) -> str:
        return _verified(check, authorization, token_errors, registered)[1]

    return verify


def _verified(
    check: Callable[[str | None], Claims],
    authorization: str | None,
    token_errors: tuple[type[Exception], ...],
    registered: Callable[[str], bool],
) -> tuple[Claims, str]:
    """The claims and the app id of ``authorization``, or the 401 or 403 of ``claims_verifier``."""
    if not authorization:
        raise unauthorized("the Authorization header is missing", reason="missing")
    try:
        claims = check(authorization)
    except token_errors as e:
        message = getattr(e, "message", None) or str(e) or type(e).__name__
        reason = getattr(e, "reason", None)
        raise unauthorized(
            f"the token was refused: {message}",
            reason=None if reason is None else str(reason),
        ) from e
    app_id = app_id_of(claims)
    if app_id is None:
        raise unauthorized(
            "the token has no appid (ver 1.0) or azp (ver 2.0) claim", reason="no-appid"
        )
    if not registered(app_id):
        raise forbidden(f"app id {app_id!r} is not a bot registered with botemu")
    return claims, app_id


@dataclass(frozen=True, slots=True)
class Accepted:
    """What an accepted Authorization header leaves: the key that signed its token, the token's
    ``exp`` and ``nbf``, and the app id it speaks for."""

    kid: str
    exp: float
    nbf: float | None
    app_id: str


class AcceptedHeaders:
    """Authorization headers that passed every check of ``identity_verifier``, each with what
    a later request must still check (bounded, least recently used first out). Only an accepted
    header is ever put here; a refused one never is, and one that fails a later check is
    forgotten, so it is checked in full (and refused with the same message) from then on."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._headers: OrderedDict[str, Accepted] = OrderedDict()

    def get(self, authorization: str) -> Accepted | None:
        hit = self._headers.get(authorization)
        if hit is not None:
            self._headers.move_to_end(authorization)
        return hit

    def put(self, authorization: str, accepted: Accepted) -> None:
        self._headers[authorization] = accepted
        if len(self._headers) > self.size:
            self._headers.popitem(last=False)

    def forget(self, authorization: str) -> None:
        self._headers.pop(authorization, None)


def identity_verifier(
    keys: KeyStore,
    placeholders: Placeholders | Sequence[Placeholders],
    *,
    registered: Callable[[str], bool],
    clock: Callable[[], float],
    audiences: Sequence[str] = (),
) -> Verifier:
    """The real Verifier: ``emulator.identity.tokens`` checks each token against ``keys``,
    botemu's emulator issuer and the connector audience (or one of ``audiences``; with 5
    minutes of skew) at ``clock()``.
    A ``TokenError`` is a 401 whose ``reason`` is the token check that failed.

    A header accepted before (``AcceptedHeaders``) is not parsed and checked again: what can
    have changed since is checked every time (``exp`` and ``nbf`` against ``clock()``, that its
    key is still published, that its app id is still a registered bot); when any of that fails,
    the header is checked in full, as the first time, and refused with the same answer."""
    profiles = [placeholders] if isinstance(placeholders, Placeholders) else list(placeholders)
    expectation = Expectation(
        issuers=tuple(dict.fromkeys(p.emulator_issuer for p in profiles)),
        audiences=tuple(dict.fromkeys([*(p.connector_audience for p in profiles), *audiences])),
    )
    skew = expectation.skew_seconds
    verified = VerifiedTokens()
    accepted = AcceptedHeaders()

    def check(authorization: str | None) -> Claims:
        token = bearer_token(authorization)
        return validate(token, keys, expectation, now=clock(), verified=verified)

    def verify(authorization: str | None) -> str:
        if authorization:
            hit = accepted.get(authorization)
            if hit is not None:
                now = clock()
                if (hit.exp > now - skew and (hit.nbf is None or hit.nbf <= now + skew)
                        and keys.find(hit.kid) is not None and registered(hit.app_id)):  # fmt: skip
                    return hit.app_id
                accepted.forget(authorization)  # checked in full, from now on
        claims, app_id = _verified(check, authorization, (TokenError,), registered)
        remember(str(authorization), claims, app_id)
        return app_id

    def remember(authorization: str, claims: Claims, app_id: str) -> None:
        signed = verified.get(bearer_token(authorization))  # the key its signature verified with
        exp, nbf = claims.get("exp"), claims.get("nbf")  # numbers: validate checked them
        if signed is not None and isinstance(exp, int | float) and isinstance(nbf, int | float | None):  # fmt: skip
            accepted.put(authorization, Accepted(
                signed[0], float(exp), None if nbf is None else float(nbf), app_id))  # fmt: skip

    return verify
