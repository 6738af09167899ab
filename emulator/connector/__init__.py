"""The connector service: carries activities between users and a bot (REST v3 under ``/v3``).

``models.py`` holds the state (conversations, activities, members, attachments) and raises the
domain errors of ``errors.py``; ``auth.py`` turns a Bearer token into the caller's app id;
``routes.py`` is the HTTP surface, the one error middleware and the transcript recorder.
See ``docs/connector.md``.
"""

from __future__ import annotations

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
