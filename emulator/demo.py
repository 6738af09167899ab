"""``botemu demo``: botemu, the reference bots and the bundled scenarios, in one command.

In one process it starts

- botemu's connector, identity service and control API on ``127.0.0.1:--port`` (9070);
- the reference IVR bot (``examples/ivr_bot.py``) over mutual TLS on a free port, with the
  certificates of ``<dir>/certs`` (``ensure_certs``: made on the first run, kept after);
- the reference echo bot (``examples/echo_bot.py``) on a free port, configured with botemu's
  placeholders and registered with it under a new app id and password;

then runs ``scenarios/examples`` and ``scenarios/conformance`` against them through ``botemu
test``'s machinery (``testing.run_options``: the live progress, the failures, the summary),
and says where the transcripts are. ``--once`` returns there; otherwise the services stay up,
with the commands that reach them printed, until Ctrl-C (SIGINT or SIGTERM).

The servers run on one event loop in a background thread (``DemoServers``); the scenarios run
on the caller's thread, as ``botemu test`` runs them. ``<dir>`` (``.botemu/demo``) holds the
certificates with botemu's signing keys (``certs/signing-keys/``), the IVR bot's voicemail and the bots'
log (``bots.log``: their warnings would cut into the report); transcripts go to the usual
database (``$BOTEMU_DB``, else ``.botemu/transcripts.db``).

The reference bots and the scenarios are not part of the package: they are read from the source
tree (``find_root``), next to the ``emulator`` package for a clone installed with ``pip install
-e .``, else from the current directory (the Docker image). docs/demo.md says why.

Exit codes: those of ``botemu test`` (0 every scenario passed, 1 one did not, 2 a usage or
configuration problem), and 2 when the source tree or a port cannot be had.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import secrets
import shlex
import signal
import socket
import ssl
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TextIO

from aiohttp import web

import emulator
from emulator.certs import PLATFORM_CN, CertPaths, common_name, ensure_certs
from emulator.config import (
    DEFAULT_EMULATOR,
    DEFAULT_HOST,
    DEFAULT_PORT,
    BotRegistration,
    ServiceConfig,
)
from emulator.errors import BotemuError
from emulator.runner.suite import EXIT_USAGE, RunOptions, TargetSettings, run_options
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore, default_db

DEFAULT_DIR = Path(".botemu") / "demo"
SUITES = ("examples", "conformance")
"""The bundled scenario directories under ``scenarios/``, in the order they run."""
BOT_FILES = ("ivr_bot.py", "echo_bot.py", "bot_auth.py")
DEFAULT_JOBS = 4
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
ECHO_NAME = "echo bot (botemu demo)"
BOT_LOG = "bots.log"
"""The reference bots' log, in the demo's directory (rewritten by each run)."""


class DemoError(BotemuError):
    """The demo cannot start: one line, exit 2."""


# --- the source tree ------------------------------------------------------------------------------


def find_root(candidates: Sequence[Path] | None = None) -> Path:
    """The directory holding ``scenarios/`` and the reference bots (``examples/``): the parent of
    the ``emulator`` package (a clone, installed editable), else the current directory."""
    if candidates is None:
        candidates = (Path(emulator.__file__).resolve().parent.parent, Path.cwd())
    for root in candidates:
        if (root / "scenarios").is_dir() and all((root / "examples" / f).is_file()
                                                  for f in BOT_FILES):  # fmt: skip
            return root
    raise DemoError(
        "the reference bots and the bundled scenarios come with botemu's source, and none is "
        "here: run botemu demo in a clone of botemu (pip install -e .), or in a directory that "
        "holds its scenarios/ and examples/"
    )


def suite_paths(root: Path) -> tuple[list[Path], list[Path]]:
    """(the bundled scenario directories that exist, those that do not), shown relative to the
    current directory when they are under it."""
    found: list[Path] = []
    missing: list[Path] = []
    for name in SUITES:
        path = shown(root / "scenarios" / name)
        (found if path.is_dir() else missing).append(path)
    return found, missing


def shown(path: Path) -> Path:
    """``path`` relative to the current directory when it is under it, else absolute."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve())
    except ValueError:
        return absolute


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


# --- a run -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """A parsed ``botemu demo`` command line."""

    once: bool = False
    port: int = DEFAULT_PORT
    directory: Path = DEFAULT_DIR
    db: Path | None = None
    jobs: int = DEFAULT_JOBS
    seed: int | None = None
    root: Path | None = None
    """The source tree with ``scenarios/`` and ``examples/`` (None: ``find_root()``)."""
    allow_hosts: tuple[str, ...] = ()
    """Host names botemu answers to besides loopback (``--allow-host``)."""


def run_demo(
    options: DemoOptions, out: TextIO, err: TextIO, stop: threading.Event | None = None
) -> int:
    """The whole command. Without ``options.once`` it serves until ``stop`` is set, or (on the
    main thread) SIGINT or SIGTERM arrives; then the exit code is still the run's."""
    db = options.db or default_db()
    try:
        root = options.root or find_root()
        suites, missing = suite_paths(root)
        if not suites:
            raise DemoError(f"no bundled scenarios under {shown(root / 'scenarios')}")
        servers = DemoServers(root, options.directory, options.port, db,
                              allow_hosts=options.allow_hosts)  # fmt: skip
        endpoints = servers.start()
    except (BotemuError, OSError) as e:
        err.write(f"botemu demo: {e}\n")
        return EXIT_USAGE
    try:
        out.write(introduction(endpoints, suites))
        for path in missing:
            out.write(f"  ({path} is not there: skipped)\n")
        out.write("\n")
        out.flush()
        target = TargetSettings(
            bot=endpoints.ivr_bot,
            messaging_bot=endpoints.echo_bot,
            app_id=endpoints.app_id,
            app_password=endpoints.app_password,
            emulator=endpoints.emulator,
            certs=endpoints.certs,
        )
        run = RunOptions(paths=tuple(suites), target=target, jobs=options.jobs,
                         seed=options.seed, db=db)  # fmt: skip
        code = run_options(run, out, err, prog="botemu demo")
        if code == EXIT_USAGE:
            return code
        out.write("\n" + transcripts_hint(db, options.db is not None))
        if options.once:
            out.flush()
            return code
        out.write("\n" + serving_hint(endpoints, suites))
        out.flush()
        _wait(stop)
        out.write("botemu demo: stopping\n")
        out.flush()
        return code
    finally:
        servers.stop()


def _wait(stop: threading.Event | None) -> None:
    """Until ``stop`` is set, or SIGINT or SIGTERM (handled on the main thread only)."""
    stop = stop or threading.Event()
    if threading.current_thread() is not threading.main_thread():
        stop.wait()
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda number, frame: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- what it prints -------------------------------------------------------------------------------


def introduction(endpoints: Endpoints, suites: Sequence[Path]) -> str:
    return (
        "botemu demo: botemu and the reference bots are up\n"
        f"  botemu     {endpoints.emulator}  (connector, identity, control API)\n"
        f"  log view   {endpoints.emulator}/  (every call and conversation, live)\n"
        f"  IVR bot    {endpoints.ivr_bot}  (mutual TLS, certificates in "
        f"{shown(endpoints.certs)})\n"
        f"  echo bot   {endpoints.echo_bot}  (app id {endpoints.app_id})\n"
        f"  bot logs   {shown(endpoints.log)}\n"
        f"  scenarios  {', '.join(str(p) for p in suites)}\n"
    )


def transcripts_hint(db: Path, explicit: bool) -> str:
    """Where the transcripts are and the commands that read them."""
    flag = f" --db {_quote(db)}" if explicit else ""
    return (
        f"Every call and conversation of this run is in {db}:\n"
        f"  botemu transcript list{flag}            the transcripts, newest first\n"
        f"  botemu transcript show{flag} ID         one of them, event by event\n"
    )


def serving_hint(endpoints: Endpoints, suites: Sequence[Path]) -> str:
    """The commands that reach the running services, with their exact addresses."""
    certs = _quote(shown(endpoints.certs))
    emulator = "" if endpoints.emulator == DEFAULT_EMULATOR else f" --emulator {endpoints.emulator}"
    paths = " ".join(_quote(p) for p in suites)
    return (
        "Serving until Ctrl-C. From another terminal in this directory:\n"
        f"  botemu call --bot {endpoints.ivr_bot} --certs {certs}{emulator} --caller 'press 1; hangup'\n"
        f"  botemu chat --bot {endpoints.echo_bot} --certs {certs}{emulator}\n"
        f"  botemu test {paths} --bot {endpoints.ivr_bot} --certs {certs} "
        f"--messaging-bot {endpoints.echo_bot} --app-id {endpoints.app_id} "
        f"--emulator {endpoints.emulator}\n"
        f"Watch them in the log view: {endpoints.emulator}/\n"
    )


def _quote(path: Path) -> str:
    return shlex.quote(str(path))
