"""The servers of ``botemu demo`` (``emulator.demo``): botemu, the reference IVR bot (mutual TLS)
and the echo bot, served on one event loop in a background thread (``DemoServers``), and where
they are (``Endpoints``). The reference bots are loaded from the source tree (``load_bot``); their
loggers write to a file in the demo's directory while they serve.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import secrets
import socket
import ssl
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from aiohttp import web

from emulator.certs import PLATFORM_CN, CertPaths, common_name, ensure_certs
from emulator.config import DEFAULT_HOST, BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
ECHO_NAME = "echo bot (botemu demo)"
BOT_LOG = "bots.log"
"""The reference bots' log, in the demo's directory (rewritten by each run)."""


class DemoError(BotemuError):
    """The demo cannot start: one line, exit 2."""


def load_bot(root: Path, file: str) -> ModuleType:
    """A reference bot's module, from ``examples/`` (they are scripts, not a package)."""
    name = f"botemu_demo_{Path(file).stem}"
    spec = importlib.util.spec_from_file_location(name, root / "examples" / file)
    if spec is None or spec.loader is None:
        raise DemoError(f"{root / 'examples' / file}: cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


# --- the servers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where the demo's services are, and what reaches them."""

    emulator: str
    ivr_bot: str
    echo_bot: str
    app_id: str
    app_password: str
    certs: Path
    """The certificates directory: the platform's client certificate, the CA, the bot's."""
    log: Path
    """The reference bots' log."""


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((DEFAULT_HOST, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _port(sock: socket.socket) -> int:
    return int(sock.getsockname()[1])


class DemoServers:
    """botemu, the IVR bot (mutual TLS) and the echo bot, served on one event loop in a
    background thread from ``start()`` to ``stop()``."""

    def __init__(
        self, root: Path, directory: Path, port: int, db: Path, *, allow_hosts: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.allow_hosts = allow_hosts
        self.directory = directory
        self.port = port
        self.db = db
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._log: _BotLog | None = None

    def start(self) -> Endpoints:
        """Bind every port, then serve. Raises ``DemoError`` (with the address) when a port is
        taken, ``BotemuError`` for certificates or the transcript database."""
        ivr, echo = load_bot(self.root, "ivr_bot.py"), load_bot(self.root, "echo_bot.py")
        certs = ensure_certs(self.directory / "certs")
        try:
            sockets = [_listen(self.port)]
        except OSError as e:
            raise DemoError(f"cannot listen on {DEFAULT_HOST}:{self.port}: {e.strerror or e} "
                            "(is botemu serve running? give --port N)") from e  # fmt: skip
        try:
            sockets += [_listen(0), _listen(0)]  # the IVR bot's, the echo bot's
            endpoints, apps = self._apps(ivr, echo, certs, [_port(s) for s in sockets])
            self._log = _BotLog.open(endpoints.log, (ivr.log, echo.log))
            self._serve_in_background(list(zip(sockets, apps, strict=True)))
        except BaseException:
            for sock in sockets:
                sock.close()
            self._close_log()
            raise
        return endpoints

    def _apps(
        self, ivr: ModuleType, echo: ModuleType, certs: CertPaths, ports: list[int]
    ) -> tuple[Endpoints, list[_App]]:
        emulator_port, ivr_port, echo_port = ports
        endpoints = Endpoints(
            emulator=f"http://{DEFAULT_HOST}:{emulator_port}",
            ivr_bot=f"https://{DEFAULT_HOST}:{ivr_port}{ivr.CALLS_PATH}",
            echo_bot=f"http://{DEFAULT_HOST}:{echo_port}{echo.MESSAGES_PATH}",
            app_id=str(uuid.uuid4()),
            app_password=secrets.token_urlsafe(24),
            certs=certs.dir,
            log=self.directory / BOT_LOG,
        )
        # One bot registration with both channels, as the platform registers a bot: the echo
        # bot answers its messages, the IVR bot its calls (and checks the calling Bearer token).
        registration = BotRegistration(endpoints.app_id, endpoints.app_password,
                                       endpoints.echo_bot, endpoints.ivr_bot, name=ECHO_NAME)  # fmt: skip
        config = ServiceConfig(port=emulator_port, bots=(registration,), certs_dir=certs.dir,
                               allow_hosts=self.allow_hosts)  # fmt: skip
        p = config.placeholders()
        settings = echo.Settings(
            app_id=endpoints.app_id, app_password=endpoints.app_password,
            token_url=p.token_url, connector_scope=p.connector_scope,
            openid_metadata_url=p.openid_metadata_url, connector_issuer=p.connector_issuer,
            idp_openid_url=p.idp_openid_url, emulator_issuer=p.emulator_issuer,
            profile=config.profile.value, legacy_audience=p.legacy_audience,
        )  # fmt: skip
        ivr_tokens = ivr.TokenSettings(endpoints.app_id, p.openid_metadata_url, p.connector_issuer)
        platform = common_name(certs.client_cert) or PLATFORM_CN
        voicemail = self.directory / "voicemail"
        apps = [
            _App(lambda store: make_app(config, store)),
            _App(
                lambda store: ivr.make_app(
                    voicemail_dir=voicemail, platform_cn=platform, tokens=ivr_tokens
                ),
                ivr.tls_context(certs.dir),
            ),
            _App(lambda store: echo.make_app(settings)),
        ]
        return endpoints, apps

    def _serve_in_background(self, sites: list[tuple[socket.socket, _App]]) -> None:
        ready = threading.Event()
        failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._serve, args=(sites, ready, failed),
                                        name="botemu-demo", daemon=True)  # fmt: skip
        self._thread.start()
        if not ready.wait(START_TIMEOUT):
            raise DemoError(f"the demo's services did not start within {START_TIMEOUT:g} s")
        if failed:
            self._thread.join()
            raise failed[0]

    def _serve(
        self,
        sites: list[tuple[socket.socket, _App]],
        ready: threading.Event,
        failed: list[BaseException],
    ) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main(sites, ready, failed))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            for sock, _ in sites:
                sock.close()

    async def _main(
        self,
        sites: list[tuple[socket.socket, _App]],
        ready: threading.Event,
        failed: list[BaseException],
    ) -> None:
        self._stopped = asyncio.Event()
        runners: list[web.AppRunner] = []
        store: TranscriptStore | None = None
        try:
            try:
                store = TranscriptStore(self.db, write_behind=True)
                for sock, app in sites:
                    runner = web.AppRunner(app.make(store), access_log=None)
                    await runner.setup()
                    runners.append(runner)
                    await web.SockSite(runner, sock, ssl_context=app.ssl_context).start()
            except BaseException as e:  # reported to start(), on the caller's thread
                failed.append(e)
                return
            finally:
                ready.set()
            await self._stopped.wait()
        finally:
            for runner in reversed(runners):
                await runner.cleanup()
            if store is not None:
                store.close()

    def stop(self) -> None:
        """Stop serving and wait for the thread (idempotent)."""
        loop, stopped, thread = self._loop, self._stopped, self._thread
        self._thread = None
        if thread is None:
            return
        if loop is not None and stopped is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopped.set)
            except RuntimeError:  # the loop closed in between
                pass
        thread.join(STOP_TIMEOUT)
        self._close_log()

    def _close_log(self) -> None:
        log, self._log = self._log, None
        if log is not None:
            log.close()


class _BotLog:
    """The bots' loggers written to a file instead of the terminal, where their warnings (a
    token the auth probe forged, a Workflow a scenario forced invalid) would cut into the
    report; ``close`` puts the loggers back as they were."""

    def __init__(self, handler: logging.Handler, loggers: Sequence[logging.Logger]) -> None:
        self.handler = handler
        self.saved = [(logger, logger.level, logger.propagate) for logger in loggers]

    @classmethod
    def open(cls, path: Path, loggers: Sequence[logging.Logger]) -> _BotLog:
        handler = logging.FileHandler(path, mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        log = cls(handler, loggers)
        for logger in loggers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            logger.propagate = False
        return log

    def close(self) -> None:
        for logger, level, propagate in self.saved:
            logger.removeHandler(self.handler)
            logger.setLevel(level)
            logger.propagate = propagate
        self.handler.close()


@dataclass(frozen=True, slots=True)
class _App:
    """How to make one server's application (given the emulator's transcript store), and its
    TLS context."""

    make: Callable[[TranscriptStore], web.Application]
    ssl_context: ssl.SSLContext | None = None
