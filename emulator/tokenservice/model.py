"""The user token service's state: OAuth connections, their test users, the tokens issued and
the sign-ins under way. No HTTP here (``routes.py``).

A sign-in starts when a bot asks for a sign-in resource with a ``state`` (the SDKs' base64 JSON
TokenExchangeState: the connection, the conversation, the bot's app id). The person (the sign-in
page, ``botemu chat --sign-in-as``, a scenario's ``sign_in``) picks a test user and consents:
botemu signs that user's token and keeps it behind a **magic code**, which the channel gives the
bot (``signin/verifyState``) or the person types; the bot redeems it with ``GetToken?code=``.
A refusal ends the sign-in with no token. Single sign-on (``exchange``) takes a token that
botemu signed for the user with the connection's exchange URI as its audience.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.jsonutil import JSON, JSONObject

DEFAULT_CONNECTION = "botemu-oauth"
MAX_STATE = 8 * 1024
MAX_PENDING = 200
CODE_LIFETIME = 300.0
TENANT = "5f7c1a2e-8b3d-4e6f-9a0b-1c2d3e4f5a6b"


@dataclass(frozen=True, slots=True)
class TestUser:
    """A person of the test identity provider."""

    id: str
    name: str
    upn: str
    oid: str


@dataclass(frozen=True, slots=True)
class OAuthConnection:
    """An OAuth connection of the bot, by name, with its scopes, token lifetime and users."""

    name: str
    scopes: tuple[str, ...] = ("User.Read",)
    lifetime: int = 3600
    users: tuple[TestUser, ...] = ()
    resource: str = "api://botemu-resource"
    """The audience of the tokens it issues (the API the bot calls with them)."""
    sso: bool = True
    """Whether it has a token exchange URL: without, ``exchange`` is refused (400)."""

    @property
    def exchange_uri(self) -> str:
        """The token exchange resource's URI (the audience of an SSO token for it)."""
        return f"api://botemu/{self.name}"


def test_users(seed: int = 7, count: int = 3) -> tuple[TestUser, ...]:
    """The default test users, made by Faker with a seed (the same every run)."""
    from faker import Faker  # imported when first used: 100 ms a process that never does

    fake = Faker()
    fake.seed_instance(seed)
    users = []
    for _ in range(count):
        first, last = fake.first_name(), fake.last_name()
        handle = f"{first}.{last}".lower()
        users.append(TestUser(handle, f"{first} {last}", f"{handle}@botemu.test",
                              str(uuid.UUID(int=fake.random.getrandbits(128), version=4))))  # fmt: skip
    return tuple(users)


def made_up_user(user_id: str, name: str | None = None) -> TestUser:
    """A test user of that id (its name the id unless given): a configured one, or one made
    on the fly (``--sign-in-as`` a user no connection has)."""
    return TestUser(user_id, name or user_id, f"{user_id}@botemu.test",
                    str(uuid.uuid5(uuid.NAMESPACE_URL, f"botemu:{user_id}")))  # fmt: skip


@dataclass(frozen=True, slots=True)
class SignInState:
    """What a bot's ``state`` says: the connection, the conversation and the bot."""

    raw: str
    connection: str
    app_id: str | None
    conversation_id: str | None
    user_id: str | None
    channel_id: str | None
    service_url: str | None


def read_state(raw: str) -> SignInState:
    """The TokenExchangeState of a ``state`` parameter; ValueError when it is not one."""
    if not raw or len(raw) > MAX_STATE:
        raise ValueError("state is missing or too long")
    padded = raw + "=" * (-len(raw) % 4)
    try:
        data = json.loads(base64.b64decode(padded.replace("-", "+").replace("_", "/")))
    except (ValueError, UnicodeDecodeError):
        raise ValueError("state is not base64 of a JSON TokenExchangeState") from None
    if not isinstance(data, dict):
        raise ValueError("state is not a TokenExchangeState")
    ref = _object(data.get("conversation") or data.get("Conversation"))
    conversation = _object(ref.get("conversation"))
    user = _object(ref.get("user"))
    name = data.get("connectionName") or data.get("ConnectionName")
    if not isinstance(name, str) or not name:
        raise ValueError("state has no connectionName")
    return SignInState(raw, name, _text(data.get("msAppId") or data.get("MsAppId")),
                       _text(conversation.get("id")), _text(user.get("id")),
                       _text(ref.get("channelId")), _text(ref.get("serviceUrl")))  # fmt: skip


def _object(value: JSON) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _text(value: JSON) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class Issued:
    """A user token: who, for which connection and channel, until when."""

    token: str
    user: TestUser
    connection: str
    channel: str
    expires: float


@dataclass
class Pending:
    """A sign-in under way (``state``), and its magic code once the person consented."""

    state: SignInState
    started: float
    code: str | None = None
    issued: Issued | None = None
    refused: bool = False
    redeemed: bool = False


@dataclass
class TokenStore:
    """Tokens issued, by (user id, connection, channel); sign-ins under way, by state."""

    clock: Callable[[], float] = time.time
    tokens: dict[tuple[str, str, str], Issued] = field(default_factory=dict)
    pending: dict[str, Pending] = field(default_factory=dict)
    signed_out: set[str] = field(default_factory=set)
    """Tokens given out, then signed out (a bot that keeps using one: a finding)."""

    def begin(self, state: SignInState) -> Pending:
        found = self.pending.get(state.raw)
        if found is None:
            if len(self.pending) >= MAX_PENDING:
                oldest = min(self.pending.values(), key=lambda p: p.started)
                del self.pending[oldest.state.raw]
            found = self.pending[state.raw] = Pending(state, self.clock())
        return found

    def consent(self, pending: Pending, issued: Issued) -> str:
        """The person consented: the token waits behind a new magic code."""
        pending.code = f"{secrets.randbelow(1_000_000):06d}"
        pending.issued = issued
        return pending.code

    def redeem(self, user_id: str, connection: str, channel: str, code: str) -> Issued | None:
        """The token behind ``code`` for that user and connection (once, within its time)."""
        for pending in self.pending.values():
            issued = pending.issued
            if (pending.code == code and issued is not None and not pending.redeemed
                    and issued.connection == connection
                    and self.clock() - pending.started < CODE_LIFETIME):  # fmt: skip
                pending.redeemed = True
                self.tokens[(user_id, connection, channel)] = issued
                return issued
        return None

    def current(self, user_id: str, connection: str, channel: str) -> Issued | None:
        found = self.tokens.get((user_id, connection, channel))
        if found is not None and found.expires <= self.clock():
            del self.tokens[(user_id, connection, channel)]
            return None
        return found

    def sign_out(self, user_id: str, connection: str | None, channel: str | None) -> int:
        gone = [k for k in self.tokens if k[0] == user_id and connection in (None, k[1])
                and channel in (None, k[2])]  # fmt: skip
        for key in gone:
            self.signed_out.add(self.tokens.pop(key).token)
        return len(gone)

    def reset(self) -> None:
        self.tokens.clear()
        self.pending.clear()
        self.signed_out.clear()
