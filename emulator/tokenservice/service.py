"""The user token service's operations, over its state (``model.py``) and botemu's keys.

User tokens are RS256 JWTs signed with botemu's identity keys (published in its key document),
with ``oid``, ``upn``, ``name``, ``preferred_username``, ``scp``, ``tid``, ``aud`` (the
connection's resource) and expiry, so a bot that calls an API with one can have that API check
it against botemu's keys. Every refusal is a ``TokenServiceError`` with the service's error body.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import jwt

from emulator.errors import BotemuError
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON, JSONObject
from emulator.tokenservice.model import (
    DEFAULT_CONNECTION,
    TENANT,
    Issued,
    OAuthConnection,
    Pending,
    SignInState,
    TestUser,
    TokenStore,
    made_up_user,
    test_users,
)
from emulator.tokenservice.rules import CODE_WAIT

USER_TOKEN_ISSUER = "https://login.microsoftonline.com/5f7c1a2e-8b3d-4e6f-9a0b-1c2d3e4f5a6b/v2.0"
"""The issuer of the user tokens botemu's test identity provider signs (with botemu's keys)."""


class TokenServiceError(BotemuError):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> JSONObject:
        return {"error": {"code": self.code, "message": self.message}}


@dataclass
class TokenService:
    """The token service of one running botemu."""

    keys: KeyStore
    connections: dict[str, OAuthConnection]
    base_url: str
    clock: Callable[[], float] = time.time
    store: TokenStore | None = None
    code_wait: float = CODE_WAIT
    """Seconds a bot has to redeem a code the channel gave it (SIGNIN-CODE-IGNORED)."""

    def __post_init__(self) -> None:
        if self.store is None:
            self.store = TokenStore(clock=self.clock)

    @property
    def tokens(self) -> TokenStore:
        assert self.store is not None
        return self.store

    def connection(self, name: str) -> OAuthConnection:
        """The connection ``name``; one the configuration does not name is made with the
        default test users (and said so in the transcript by the caller)."""
        found = self.connections.get(name)
        if found is None:
            if len(self.connections) >= 64:
                raise TokenServiceError(400, "BadArgument", f"no OAuth connection {name[:60]!r}")
            found = self.connections[name] = OAuthConnection(name, users=test_users())
        return found

    def user(self, connection: OAuthConnection, user_id: str) -> TestUser:
        """The connection's test user of that id (or name), made on the fly when it has none."""
        for user in connection.users:
            if user_id in (user.id, user.upn, user.name):
                return user
        return made_up_user(user_id)

    def sign(self, user: TestUser, connection: OAuthConnection, channel: str,
             *, audience: str | None = None, lifetime: int | None = None) -> Issued:  # fmt: skip
        """A user token for ``user`` (``audience``: the connection's resource by default)."""
        now = self.clock()
        life = connection.lifetime if lifetime is None else lifetime
        claims: dict[str, JSON] = {
            "aud": audience or connection.resource, "iss": USER_TOKEN_ISSUER, "tid": TENANT,
            "oid": user.oid, "sub": user.oid, "upn": user.upn, "name": user.name,
            "preferred_username": user.upn, "scp": " ".join(connection.scopes), "ver": "2.0",
        }  # fmt: skip
        token = mint(self.keys, claims, now=now, lifetime=life)
        return Issued(token, user, connection.name, channel, now + life)

    def sign_in_link(self, state: SignInState) -> str:
        return f"{self.base_url}/_signin?state={state.raw}"

    def sign_in_resource(self, state: SignInState) -> JSONObject:
        """``GetSignInResource``: the link, the token exchange resource, the post resource."""
        self.tokens.begin(state)
        connection = self.connection(state.connection)
        return {
            "signInLink": self.sign_in_link(state),
            "tokenExchangeResource": {"id": f"botemu-{connection.name}",
                                      "uri": connection.exchange_uri,
                                      "providerId": "botemu-test-idp"},
            "tokenPostResource": {"sasUrl": f"{self.base_url}/_signin/post?state={state.raw}"},
        }  # fmt: skip

    def consent(self, pending: Pending, user_id: str) -> str:
        """The person signed in as ``user_id`` and consented: the magic code."""
        connection = self.connection(pending.state.connection)
        issued = self.sign(self.user(connection, user_id), connection,
                           pending.state.channel_id or "webchat")  # fmt: skip
        return self.tokens.consent(pending, issued)

    def refuse(self, pending: Pending) -> None:
        pending.refused = True

    def get_token(self, user_id: str, name: str, channel: str, code: str | None) -> Issued | None:
        """``GetToken``: the user's current token, or the one behind ``code``."""
        connection = self.connection(name)
        if code:
            issued = self.tokens.redeem(user_id, connection.name, channel, code.strip())
            if issued is not None:
                return replace(issued, channel=channel)
        return self.tokens.current(user_id, connection.name, channel)

    def sso_token(self, user: TestUser, connection: OAuthConnection) -> str:
        """What a Teams client holds for single sign-on: the user's token for the exchange URI."""
        return self.sign(user, connection, "msteams", audience=connection.exchange_uri,
                         lifetime=600).token  # fmt: skip

    def exchange(self, user_id: str, name: str, channel: str, given: str) -> Issued:
        """``exchange``: the user's token for the connection, for an SSO token botemu signed
        for the exchange URI; 404 otherwise, as the service answers an exchange with no token
        (the SDKs read a 404's body as an empty TokenResponse, and the bot falls back to the
        card; a 400's body they read as an ErrorResponse, which botbuilder-python 4.17's
        OAuthPrompt then fails on)."""
        connection = self.connection(name)
        if not connection.sso:
            raise TokenServiceError(404, "NotFound", f"the connection {name[:60]!r} has no "
                                    "token exchange URL: single sign-on is off")  # fmt: skip
        try:
            key = self.keys.find(jwt.get_unverified_header(given).get("kid", ""))
            if key is None:
                raise jwt.InvalidTokenError("unknown kid")
            claims = jwt.decode(given, key.public_key, algorithms=["RS256"],
                                audience=connection.exchange_uri, leeway=300)  # fmt: skip
        except (jwt.PyJWTError, ValueError) as e:
            raise TokenServiceError(404, "NotFound", f"the token cannot be exchanged: {e}") from None
        oid, upn = str(claims.get("oid", "")), str(claims.get("upn") or user_id)
        user = next((u for u in connection.users if u.oid == oid), None) or made_up_user(
            upn.split("@", 1)[0], str(claims.get("name") or upn))
        issued = self.sign(user, connection, channel)
        self.tokens.tokens[(user_id, connection.name, channel)] = issued
        return issued


def token_response(issued: Issued, channel: str) -> JSONObject:
    """The wire TokenResponse."""
    expiration = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(issued.expires))
    return {"channelId": channel, "connectionName": issued.connection, "token": issued.token,
            "expiration": expiration}  # fmt: skip


def default_connections(names: tuple[str, ...] = ()) -> dict[str, OAuthConnection]:
    users = test_users()
    chosen = names or (DEFAULT_CONNECTION,)
    return {name: OAuthConnection(name, users=users) for name in chosen}
