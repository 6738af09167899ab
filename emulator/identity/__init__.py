"""The identity service: signing keys, tokens, and the token, metadata and key endpoints.
May import: transcripts, infrastructure (config, errors, findings, jsonutil, ids, inputs, patterns).

``keys.py`` keeps the RSA signing keys (persisted, rotated, published as a JWKS; their files:
``keyfiles.py``); ``tokens.py`` mints and validates RS256 JWTs; ``bearer.py`` makes and caches
the tokens botemu presents to bots; ``routes.py`` serves the token endpoint, the OpenID metadata
documents and the key document for both authentication profiles. See ``docs/identity.md``.

Errors: ``IdentityError`` (``errors.py``; a ``BotemuError``; ``OAuthError`` is one) for keys,
files and registrations; ``TokenError`` (a ``BotemuError``, with ``.reason``) for a refused token.

The names below are loaded on first use: importing ``keys.py`` or ``tokens.py`` does not load
``routes.py`` (nor aiohttp).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.identity.errors import IdentityError
    from emulator.identity.keys import KeyStore, SigningKey
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

_HOMES = {
    "IdentityError": "errors",
    "KeyStore": "keys",
    "SigningKey": "keys",
    "IDENTITY": "routes",
    "IdentityService": "routes",
    "OAuthError": "routes",
    "identity_routes": "routes",
    "make_identity_app": "routes",
    "Expectation": "tokens",
    "TokenError": "tokens",
    "bearer_token": "tokens",
    "mint": "tokens",
    "validate": "tokens",
}
"""The submodule each name of ``__all__`` comes from."""


def __getattr__(name: str) -> object:
    """The names of ``__all__``, imported from their submodule when first asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
