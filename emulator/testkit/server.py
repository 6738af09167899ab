"""``BotemuServer``: botemu's identity, connector and control API served from a background
thread, on an event loop of its own, so that a test on any event loop (or none) can use it."""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.request
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emulator.config import BotRegistration, Placeholders, ServiceConfig

if TYPE_CHECKING:
    from emulator.calling.tokens import LocalTokens
    from emulator.identity.bearer import BotTokens
    from emulator.transcripts.store import TranscriptStore

START_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class LiveConfig(ServiceConfig):
    """A ``ServiceConfig`` that also knows the bots registered while the session runs
    (``Botemu.chat`` with an app id and password registers the bot on first use)."""

    live: dict[str, BotRegistration] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @classmethod
    def of(cls, config: ServiceConfig, **changes: Any) -> LiveConfig:
        values = {f.name: getattr(config, f.name) for f in fields(ServiceConfig)}
        return cls(**(values | changes))

    def bot(self, app_id: str) -> BotRegistration | None:
        return self.live.get(app_id) or ServiceConfig.bot(self, app_id)

    def only_anonymous(self) -> str | None:
        found = {b.app_id for b in (*self.bots, *self.live.values()) if b.anonymous}
        return next(iter(found)) if len(found) == 1 else None


class BotemuServer:
    """botemu's identity, connector and control API, served from a background thread.

    ``start()`` binds the address of ``config`` (port 0: a free port, read back into
    ``config``), serves until ``stop()``. ``reset()`` forgets every conversation."""

    def __init__(self, config: ServiceConfig, store_path: Path) -> None:
        self.requested = config
        self.store_path = store_path
        self.config: LiveConfig = LiveConfig.of(config)
        self._store: TranscriptStore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._bot_tokens: BotTokens | None = None

    @property
    def url(self) -> str:
        return self.config.base_url

    @property
    def store(self) -> TranscriptStore:
        if self._store is None:
            raise RuntimeError("the botemu server is not running")
        return self._store

    @property
    def placeholders(self) -> Placeholders:
        """The value of every spec placeholder, as this emulator serves it."""
        return self.config.placeholders()

    @property
    def env(self) -> dict[str, str]:
        """The environment a bot reads its platform settings from (what ``botemu serve``
        prints): ``BOTEMU_TOKEN_URL``, ``BOTEMU_OPENID_METADATA_URL``, ... and
        ``BOTEMU_PROFILE``."""
        from emulator.config import ENV_NAMES

        out = {ENV_NAMES[k]: v for k, v in self.placeholders.to_json().items()}
        out["BOTEMU_PROFILE"] = self.config.profile.value
        return out

    def register(self, bot: BotRegistration) -> None:
        """Register (or re-register) a bot with the running emulator."""
        self.config.live[bot.app_id] = bot

    def calling_app_id(self, bot_url: str) -> str | None:
        """The app id of the bot registered with ``bot_url`` as its calling endpoint, or of the
        only registered bot; None when neither is."""
        bots = list(({b.app_id: b for b in self.config.bots} | self.config.live).values())
        for bot in bots:
            if bot.calling_endpoint is not None and bot.calling_endpoint.rstrip(
                "/"
            ) == bot_url.rstrip("/"):
                return bot.app_id
        return bots[0].app_id if len(bots) == 1 else None

    def calling_tokens(self, app_id: str) -> LocalTokens:
        """The Bearer tokens of calls to the bot ``app_id``, signed with this emulator's keys
        under its issuer."""
        from emulator.calling.tokens import LocalTokens
        from emulator.identity.bearer import BotTokens
        from emulator.identity.keys import KeyStore

        if self._bot_tokens is None:
            keys = KeyStore(self.config.certs_dir, grace_seconds=self.config.key_grace_seconds)
            self._bot_tokens = BotTokens(keys, self.placeholders, self.config.profile,
                                         lifetime=self.config.token_lifetime_seconds)  # fmt: skip
        return LocalTokens(self._bot_tokens, app_id)

    def start(self) -> None:
        from emulator.transcripts.store import TranscriptStore

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.requested.host, self.requested.port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        port = int(sock.getsockname()[1])
        self.config = LiveConfig.of(self.requested, port=port)
        self._store = TranscriptStore(self.store_path, write_behind=True)
        started: list[BaseException | None] = []
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready, started), name="botemu-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(START_TIMEOUT):
            raise RuntimeError(f"botemu did not start within {START_TIMEOUT:g}s")
        if started and started[0] is not None:
            self._thread.join()
            self._store.close()
            self._store = None
            raise started[0]

    def _serve(
        self, sock: socket.socket, ready: threading.Event, started: list[BaseException | None]
    ) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main(sock, ready, started))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            sock.close()

    async def _main(
        self, sock: socket.socket, ready: threading.Event, started: list[BaseException | None]
    ) -> None:
        from aiohttp import web

        from emulator.service import make_app

        self._stopped = asyncio.Event()
        runner: web.AppRunner | None = None
        try:
            runner = web.AppRunner(make_app(self.config, self.store), access_log=None)
            await runner.setup()
            await web.SockSite(runner, sock).start()
        except BaseException as e:  # reported to start(), in the test's thread
            started.append(e)
            ready.set()
            if runner is not None:
                await runner.cleanup()
            return
        started.append(None)
        ready.set()
        try:
            await self._stopped.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        loop, stopped, thread = self._loop, self._stopped, self._thread
        if loop is not None and stopped is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(stopped.set)
            thread.join(START_TIMEOUT)
        if self._store is not None:
            self._store.close()
            self._store = None

    def control_headers(self) -> dict[str, str]:
        """The headers of a control request: this emulator's secret (from its certificates
        directory, emulator/guard.py) and the JSON content type."""
        from emulator.guard import control_headers

        return control_headers(self.config.certs_dir)

    def reset(self) -> None:
        """Forget every conversation (``POST /_botemu/reset``)."""
        request = urllib.request.Request(f"{self.url}/_botemu/reset", data=b"{}", method="POST",
                                         headers=self.control_headers())  # fmt: skip
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
        with direct.open(request, timeout=10) as response:
            response.read()
