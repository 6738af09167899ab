"""The connector service: carries activities between users and a bot (REST v3 under ``/v3``).
May import: identity, transcripts, infra (config, errors, findings, jsonutil, ids, inputs, patterns).

``models.py`` holds the state (``ConnectorState``, with its operations on conversations; those on
activities, members and attachments are in ``activities.py``, ``members.py`` and
``attachments.py``, with the checks of their bodies) and raises the domain errors of
``errors.py``; ``auth.py`` turns a Bearer token into the caller's app id; ``routes.py`` is the HTTP
surface (the handlers: ``handlers.py`` over ``handling.py``), the one error middleware and the
wiring; ``recorder.py`` the transcript recorder; ``sender.py`` delivers activities to a bot.
See ``docs/connector.md``.

The names below are loaded on first use, so importing ``errors.py`` or ``models.py`` does not load
the HTTP surface (nor aiohttp).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.connector.auth import Verifier, claims_verifier, identity_verifier
    from emulator.connector.errors import ConnectorError
    from emulator.connector.models import ConnectorState, Conversation
    from emulator.connector.routes import (
        CONNECTOR,
        VERIFIER,
        ConnectorLimits,
        connector_errors,
        connector_routes,
        make_connector_app,
        setup_connector,
    )

__all__ = [
    "CONNECTOR",
    "VERIFIER",
    "ConnectorError",
    "ConnectorLimits",
    "ConnectorState",
    "Conversation",
    "Verifier",
    "claims_verifier",
    "connector_errors",
    "connector_routes",
    "identity_verifier",
    "make_connector_app",
    "setup_connector",
]

_HOMES = {
    "Verifier": "auth",
    "claims_verifier": "auth",
    "identity_verifier": "auth",
    "ConnectorError": "errors",
    "ConnectorState": "models",
    "Conversation": "models",
    "CONNECTOR": "routes",
    "VERIFIER": "routes",
    "ConnectorLimits": "routes",
    "connector_errors": "routes",
    "connector_routes": "routes",
    "make_connector_app": "routes",
    "setup_connector": "routes",
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
