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

The servers are in ``emulator.demo_servers``; every name this module had is importable from it.
"""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import emulator
from emulator.config import DEFAULT_EMULATOR, DEFAULT_PORT
from emulator.demo_servers import (
    BOT_LOG,
    ECHO_NAME,
    START_TIMEOUT,
    STOP_TIMEOUT,
    DemoError,
    DemoServers,
    Endpoints,
    load_bot,
)
from emulator.errors import BotemuError
from emulator.runner.suite import EXIT_USAGE, RunOptions, TargetSettings, run_options
from emulator.transcripts.store import default_db

__all__ = [
    "BOT_FILES",
    "BOT_LOG",
    "DEFAULT_DIR",
    "DEFAULT_JOBS",
    "ECHO_NAME",
    "START_TIMEOUT",
    "STOP_TIMEOUT",
    "SUITES",
    "DemoError",
    "DemoOptions",
    "DemoServers",
    "Endpoints",
    "find_root",
    "introduction",
    "load_bot",
    "run_demo",
    "serving_hint",
    "shown",
    "suite_paths",
    "transcripts_hint",
]

DEFAULT_DIR = Path(".botemu") / "demo"
SUITES = ("examples", "conformance")
"""The bundled scenario directories under ``scenarios/``, in the order they run."""
BOT_FILES = ("ivr_bot.py", "echo_bot.py", "bot_auth.py")
DEFAULT_JOBS = 4


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
        code = _run_suites(options, endpoints, suites, db, out, err)
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


def _run_suites(
    options: DemoOptions,
    endpoints: Endpoints,
    suites: Sequence[Path],
    db: Path,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run the bundled scenarios against the demo's services, as ``botemu test`` runs them."""
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
    return run_options(run, out, err, prog="botemu demo")


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
