"""The Bearer token of a load run's calls, got without an event loop: signed here with the keys
of a certificates directory (``LocalTokens``, as ``botemu serve`` publishes them), or asked of a
running botemu (``POST /_botemu/calling/token``, with its control secret) and cached until five
minutes before it expires. The gevent driver asks ``token_now()``; under Locust, the request
yields to the other callers like any socket call.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from emulator.calling.tokens import LocalTokens, TokenUnavailable
from emulator.guard import control_headers
from emulator.identity.bearer import REFRESH_BEFORE

TIMEOUT = 10.0
MAX_ANSWER = 64 * 1024


class AskedTokens:
    """Calling tokens from the running botemu at ``emulator``, cached per process."""

    def __init__(self, emulator: str, app_id: str, *, certs: Path | None = None,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.emulator = emulator.rstrip("/")
        self.app_id = app_id
        self.certs = certs
        self.clock = clock
        self._cached: tuple[str, float] | None = None
        self._lock = threading.Lock()

    @property
    def origin(self) -> str:
        return f"botemu at {self.emulator}"

    async def token(self, http: object) -> str:  # the TokenSource protocol, for the transcript
        return self.token_now()

    def token_now(self) -> str:
        """The token to send now; raises ``TokenUnavailable``."""
        with self._lock:
            cached = self._cached
            if cached is None or cached[1] - REFRESH_BEFORE <= self.clock():
                cached = self._cached = self._fetch()
            return cached[0]

    def _fetch(self) -> tuple[str, float]:
        url = f"{self.emulator}/_botemu/calling/token"
        headers = {**control_headers(self.certs), "Content-Type": "application/json"}
        body = json.dumps({"app_id": self.app_id}).encode()
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                document = json.loads(answer.read(MAX_ANSWER))
        except (OSError, ValueError) as e:
            raise TokenUnavailable(f"no calling token from {self.emulator}: {e}") from None
        token = document.get("token") if isinstance(document, dict) else None
        expires_in = document.get("expires_in") if isinstance(document, dict) else None
        if not isinstance(token, str) or not isinstance(expires_in, int | float):
            raise TokenUnavailable(f"{url}: the answer has no token and expires_in")
        return token, self.clock() + float(expires_in)


def token_now(tokens: object) -> str | TokenUnavailable:
    """The token of a load run's token source, or why there is none."""
    try:
        if isinstance(tokens, AskedTokens):
            return tokens.token_now()
        if isinstance(tokens, LocalTokens):
            return tokens.tokens.calling(tokens.app_id)[0]
    except TokenUnavailable as e:
        return e
    return TokenUnavailable("a load run signs calling tokens here or asks a running botemu")
