"""Direct Line's secrets and tokens, kept as the real service keeps them.

Each registered bot has a **secret** (``secrets.token_urlsafe``), made once and kept in
``<certs>/directline-secrets.json`` (mode 0600) beside botemu's signing keys, keyed by the bot's
app id (for an anonymous bot, its messaging endpoint). A secret opens any conversation with its
bot and mints tokens; it is never sent to a page.

A **token** is an HS256 JWT signed with this run's key: it names its bot, one conversation, at
most one user id, and the origins it may be used from (``trustedOrigins``); it expires after
``TOKEN_LIFETIME`` seconds and can be refreshed (a new token, same conversation and user) until
then. A **stream token** (``streamUrl``'s ``t``) is a token for one conversation's socket, good
for ``STREAM_LIFETIME`` seconds.

``Grants.check(header)`` reads ``Authorization: Bearer <secret or token>`` into a ``Grant``;
anything else is a ``DirectLineError`` (403 for a bad or expired credential).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jwt

from emulator.channels.directline.errors import DirectLineError

TOKEN_LIFETIME = 1800
STREAM_LIFETIME = 60
SECRETS_FILE = "directline-secrets.json"
MAX_ORIGINS = 16
_ALGORITHM = "HS256"


@dataclass(frozen=True, slots=True)
class Grant:
    """What a credential allows: its bot, and for a token its conversation, user and origins."""

    bot: str
    """The bot's key: its app id (or, for an anonymous bot, its messaging endpoint)."""
    kind: str
    """``secret``, ``token`` or ``stream``."""
    conversation: str | None = None
    user: str | None = None
    origins: tuple[str, ...] = ()
    expires: float = 0.0

    def may_open(self, conversation_id: str) -> bool:
        return self.kind == "secret" or self.conversation == conversation_id


class Grants:
    """The secrets of the registered bots and the tokens of this run."""

    def __init__(self, certs_dir: Path, *, clock: Callable[[], float] = time.time) -> None:
        self._file = certs_dir / SECRETS_FILE
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._secrets: dict[str, str] = self._load()

    def _load(self) -> dict[str, str]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self._file.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
        return {}

    def secret(self, bot: str) -> str:
        """The secret of ``bot`` (made and kept the first time it is asked for)."""
        found = self._secrets.get(bot)
        if found is None:
            found = self._secrets[bot] = secrets.token_urlsafe(32)
            self._save()
        return found

    def _save(self) -> None:
        self._file.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._file.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._secrets, indent=1), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(self._file)

    def token(
        self,
        bot: str,
        conversation: str,
        user: str | None,
        origins: Sequence[str] = (),
        *,
        kind: str = "token",
    ) -> tuple[str, int]:
        """(a token, its lifetime in seconds)."""
        lifetime = STREAM_LIFETIME if kind == "stream" else TOKEN_LIFETIME
        now = self._clock()
        claims = {"bot": bot, "conv": conversation, "user": user, "origins": list(origins),
                  "kind": kind, "iat": int(now), "exp": int(now) + lifetime,
                  "n": secrets.token_hex(4)}  # fmt: skip
        return jwt.encode(claims, self._key, algorithm=_ALGORITHM), lifetime

    def check(self, authorization: str | None, *, stream: str | None = None) -> Grant:
        """The grant of a request's ``Authorization`` header (or a socket's ``t``)."""
        credential = stream
        if credential is None:
            scheme, _, credential = (authorization or "").strip().partition(" ")
            if scheme.lower() != "bearer" or not credential.strip():
                raise DirectLineError(403, "Forbidden",
                                      "send Authorization: Bearer <secret or token>")  # fmt: skip
            credential = credential.strip()
        for bot, secret in self._secrets.items():
            if stream is None and hmac.compare_digest(credential.encode(), secret.encode()):
                return Grant(bot, "secret")
        try:
            claims = jwt.decode(credential, self._key, algorithms=[_ALGORITHM],
                                options={"require": ["exp"]}, leeway=0)  # fmt: skip
        except jwt.ExpiredSignatureError:
            raise DirectLineError(403, "TokenExpired", "the token has expired") from None
        except jwt.PyJWTError:
            raise DirectLineError(403, "Forbidden", "the secret or token is not valid") from None
        kind = str(claims.get("kind"))
        if (stream is not None) != (kind == "stream"):
            raise DirectLineError(403, "Forbidden", "this token is not valid here")
        user = claims.get("user")
        return Grant(str(claims["bot"]), kind, str(claims["conv"]),
                     user if isinstance(user, str) else None,
                     tuple(str(o) for o in claims.get("origins") or ()),
                     float(claims["exp"]))  # fmt: skip

    def known(self) -> dict[str, str]:
        return dict(self._secrets)
