"""The user token service: OAuth connections, a test identity provider, sign-in and single sign-on.
May import: the connector (its caller check), identity (the keys that sign user tokens), and
what they may import.

``model.py`` holds the connections, the test users, the tokens issued and the sign-ins under
way; ``service.py`` the operations and the signing of user tokens with botemu's keys;
``routes.py`` the routes the SDKs' token clients call (``/api/usertoken/...``,
``/api/botsignin/...``) and botemu's sign-in page (``/_signin``). docs/oauth.md.
"""

from __future__ import annotations

from emulator.tokenservice.model import (
    DEFAULT_CONNECTION,
    OAuthConnection,
    SignInState,
    TestUser,
    made_up_user,
    read_state,
    test_users,
)
from emulator.tokenservice.routes import (
    COMPLETE,
    RECORD,
    TOKENSERVICE,
    Completion,
    tokenservice_routes,
)
from emulator.tokenservice.service import TokenService, TokenServiceError, default_connections

__all__ = [
    "COMPLETE",
    "DEFAULT_CONNECTION",
    "RECORD",
    "TOKENSERVICE",
    "Completion",
    "OAuthConnection",
    "SignInState",
    "TestUser",
    "TokenService",
    "TokenServiceError",
    "default_connections",
    "made_up_user",
    "read_state",
    "test_users",
    "tokenservice_routes",
]
