"""The identity service: signing keys, tokens, and the token, metadata and key endpoints.

``keys.py`` keeps the RSA signing keys (persisted, rotated, published as a JWKS); ``tokens.py``
mints and validates RS256 JWTs; ``routes.py`` serves the token endpoint, the OpenID metadata
documents and the key document for both authentication profiles. See ``docs/identity.md``.

Errors: ``IdentityError`` (a ``BotemuError``; ``OAuthError`` is one) for keys, files and
registrations; ``TokenError`` (a ``BotemuError``, with ``.reason``) for a refused token.
"""

from emulator.identity.keys import IdentityError, KeyStore, SigningKey
from emulator.identity.routes import (
    IDENTITY,
    IdentityService,
    OAuthError,
    identity_routes,
    make_identity_app,
)
from emulator.identity.tokens import Expectation, TokenError, bearer_token, mint, validate

__all__ = [
    "IDENTITY",
    "Expectation",
    "IdentityError",
    "IdentityService",
    "KeyStore",
    "OAuthError",
    "SigningKey",
    "TokenError",
    "bearer_token",
    "identity_routes",
    "make_identity_app",
    "mint",
    "validate",
]
