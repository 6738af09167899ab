"""``botemu logview``: the log view over a transcript database an earlier run wrote.

For a database taken from a CI artifact, or kept after ``botemu test``: the page ``botemu serve``
shows at its own address, served alone at ``http://127.0.0.1:9071/`` (``--port``, ``--host``). The
store is only read, and the page updates live while another botemu writes to the same file.

Exit codes: 0 stopped with Ctrl-C; 2 the database is missing or is not a botemu database, or the
address cannot be listened on. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from emulator.config import DEFAULT_HOST
from emulator.errors import BotemuError
from emulator.transcripts.store import ENV_DB, TranscriptError, TranscriptStore, default_db

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_PORT = 9071
"""One above ``botemu serve``'s 9070, so that both can run side by side."""


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``logview`` to the ``botemu`` parser."""
    logview = subparsers.add_parser(
        "logview",
        help="browse recorded calls and conversations in a web page",
        description="Serve the log view (the list of calls and conversations, each call's "
        "timeline, each conversation's chat) over an existing transcript database, until Ctrl-C. "
        "botemu serve and botemu demo serve the same page at their own address.",
    )
    logview.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"the transcript database (default: ${ENV_DB}, else .botemu/transcripts.db)",
    )
    logview.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, metavar="N", help=f"port ({DEFAULT_PORT})"
    )
    logview.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on ({DEFAULT_HOST})"
    )
    logview.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME",
        help="answer to this Host name too (NAME or NAME:PORT; repeatable; docs/security.md)",
    )  # fmt: skip
    logview.set_defaults(handler=_logview)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {port}")
    return port


def _logview(args: argparse.Namespace, out: TextIO) -> int:
    db: Path = args.db or default_db()
    try:
        store = open_store(db)
    except BotemuError as e:
        print(f"botemu logview: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(serve(store, args.host, args.port, out,
                                 allow_hosts=tuple(getattr(args, "allow_host", None) or ())))  # fmt: skip
    except OSError as e:
        print(f"botemu logview: cannot listen on {args.host}:{args.port}: {e.strerror or e}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    finally:
        store.close()


def open_store(path: Path) -> TranscriptStore:
    """The database at ``path``, which must exist: the log view never creates one."""
    if not path.is_file():
        raise TranscriptError(
            "no such file (give --db FILE: a transcript database that a run wrote)", path=str(path)
        )
    if path.stat().st_size == 0:
        raise TranscriptError("not a botemu transcript database (an empty file)", path=str(path))
    return TranscriptStore(path)


async def serve(
    store: TranscriptStore,
    host: str,
    port: int,
    out: TextIO,
    stop: asyncio.Event | None = None,
    *,
    allow_hosts: tuple[str, ...] = (),
) -> int:
    """Serve the log view of ``store`` until ``stop`` is set, or SIGINT or SIGTERM. It answers
    to loopback names and ``allow_hosts`` only (emulator/guard.py)."""
    from aiohttp import web

    from emulator.guard import protect
    from emulator.logview.routes import standalone_app

    app = standalone_app(store)
    protect(app, port=port, bind_host=host, allow_hosts=allow_hosts)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1] if runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        out.write(f"botemu log view of {store.path} at http://{shown}:{bound}/\nCtrl-C stops.\n")
        out.flush()
        if stop is None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        out.write("botemu logview: stopping\n")
    finally:
        await runner.cleanup()
    return EXIT_OK
