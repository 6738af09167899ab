"""``botemu serve``, ``config``, ``token`` and ``chat``: the messaging side of the command line.

One emulator, one issuer, one key set: the client commands talk to the running ``botemu serve``
at ``--emulator`` (default ``http://127.0.0.1:9070``). Only when none answers there do ``chat``
and ``token`` start one in-process on that address (with the bot given on the command line).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from emulator.cli.chat import chat_handler
from emulator.cli.options import limit_options, service_config, service_options
from emulator.config import (
    ENV_NAMES,
    ServiceConfig,
)
from emulator.errors import BotemuError
from emulator.transcripts.store import TranscriptStore, default_db

if TYPE_CHECKING:
    from emulator.service.livechat_skill import Given

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    _add_serve(subparsers)
    _add_config(subparsers)
    _add_token(subparsers)
    _add_chat(subparsers)


def _add_serve(subparsers: argparse._SubParsersAction[Any]) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run the connector, identity and control services until Ctrl-C",
        description="Run botemu's connector, identity service and control API on one address, "
        "print the settings a bot needs, and serve until Ctrl-C.",
    )
    service_options(serve)
    serve.add_argument("--db", type=Path, default=default_db(), help="transcript database")
    serve.add_argument("--max-live", type=int, default=20, metavar="N",
                       help="live web chat conversations at once (the log view's #/chat; 20)")  # fmt: skip
    limit_options(serve)
    serve.add_argument("--manifest", metavar="FILE",
                       help="a skill manifest (JSON or YAML, or an http(s) URL) every web chat "
                       "page starts with, as if picked there; read and validated at start")  # fmt: skip
    serve.set_defaults(handler=_serve)


def _add_config(subparsers: argparse._SubParsersAction[Any]) -> None:
    from emulator.client import DEFAULT_EMULATOR

    config = subparsers.add_parser(
        "config",
        help="print every spec placeholder as botemu serves it",
        description="Print the settings of the running botemu at --emulator (GET /_botemu/config), "
        "or at the --host and --port given (default 127.0.0.1:9070); when none runs there, or "
        "when other serve options are given, the ones these options give. A line on stderr "
        "says which is shown.",
    )
    service_options(config)
    config.add_argument("--emulator", default=None, metavar="URL",
                        help=f"the running botemu to ask (default {DEFAULT_EMULATOR})")  # fmt: skip
    config.add_argument("--json", action="store_true", help="print the JSON object")
    config.set_defaults(handler=_config)


def _add_token(subparsers: argparse._SubParsersAction[Any]) -> None:
    from emulator.client import DEFAULT_EMULATOR

    token = subparsers.add_parser(
        "token",
        help="mint an access token for a registered bot (for curl)",
        description="Print an access token for a bot, as the token endpoint issues it.",
    )
    token.add_argument("--app-id", required=True)
    token.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL")
    token.add_argument("--certs", type=Path, default=Path("certs"), metavar="DIR",
                       help="the running botemu's certificates directory: its control secret")  # fmt: skip
    token.add_argument("--json", action="store_true", help="print the token response JSON")
    token.set_defaults(handler=_token)


def _add_chat(subparsers: argparse._SubParsersAction[Any]) -> None:
    from emulator.client import DEFAULT_EMULATOR

    chat = subparsers.add_parser(
        "chat",
        help="chat with a messaging bot through botemu's connector",
        description="Chat with a bot: type a message, the bot's replies appear as they reach the "
        "connector. With --send, send one message and exit 0 when a reply came, 1 when none "
        "came before --wait ran out.",
    )
    chat.add_argument("--bot", required=True, metavar="URL", help="the bot's messaging endpoint")
    chat.add_argument("--app-id", help="the bot's app id (default: the bot registered at URL; "
                      "with no botemu running and none given, an anonymous bot)")  # fmt: skip
    chat.add_argument("--app-password", help="the bot's password (for an in-process emulator)")
    chat.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL")
    chat.add_argument("--certs", type=Path, default=Path("certs"), metavar="DIR",
                      help="the botemu's certificates directory: its control secret (certs/)")  # fmt: skip
    chat.add_argument("--send", metavar="TEXT", help="send one message, print the replies, exit")
    chat.add_argument("--wait", type=float, default=5.0, help="seconds to wait for a reply")
    chat.add_argument("--emulator-token", action="store_true",
                      help="send emulator-path tokens instead of connector-path ones")  # fmt: skip
    chat.add_argument("--token-version", choices=["1.0", "2.0"],
                      help="with --emulator-token: 1.0 (appid) or 2.0 (azp)")  # fmt: skip
    chat.add_argument("--channel", choices=["webchat", "directline", "emulator", "msteams"],
                      default=None, help="the channel id of the conversation, and that channel's "
                      "shape (default: webchat; docs/sdk.md, Channels)")  # fmt: skip
    chat.add_argument("--sign-in-as", metavar="USER", default=None,
                      help="whenever the bot asks the person to sign in (an OAuth or sign-in "
                      "card), sign in as this test user, as the channel would (docs/oauth.md)")  # fmt: skip
    chat.add_argument("--refuse-sign-in", action="store_true",
                      help="refuse every sign-in the bot asks for")  # fmt: skip
    chat.set_defaults(handler=chat_handler)


# --- serve -------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, out: TextIO) -> int:
    try:
        if not 0 <= args.max_live <= 1000:
            raise BotemuError(f"--max-live is from 0 to 1000, not {args.max_live}")
        config = service_config(args)
        manifest = None if args.manifest is None else chat_manifest(args.manifest, sys.stderr)
        store = TranscriptStore(args.db, write_behind=True)
    except BotemuError as e:
        print(f"botemu serve: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_run(config, store, out, max_live=args.max_live, manifest=manifest))
    except BotemuError as e:  # --tls: the certificate directory cannot be made or read
        print(f"botemu serve: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"botemu serve: cannot listen on {config.host}:{config.port}: {e.strerror or e}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    finally:
        store.close()


def chat_manifest(source: str, err: TextIO) -> Given:
    """The skill manifest of ``--manifest``, read and validated as ``botemu manifest validate``
    reads it (at most ``MAX_MANIFEST``, as the page may send). BotemuError when the web chat
    cannot use it, its errors first written to ``err`` as ``validate`` prints them
    (``file:line:col: error: /pointer: message [RULE]``)."""
    from emulator.cli.common import count
    from emulator.cli.manifest import check, finding_line
    from emulator.findings import Severity
    from emulator.service.livechat_skill import MAX_MANIFEST, given

    result = check(source, max_bytes=MAX_MANIFEST)
    if result.unreadable is not None:
        raise BotemuError(f"--manifest {result.unreadable}")
    if result.errors or result.document is None:
        for finding in result.findings:
            if finding.severity is Severity.ERROR:
                err.write(finding_line(result, finding, lambda text, _: text) + "\n")
        raise BotemuError(f"--manifest {result.source}: not a valid skill manifest "
                          f"({count(result.errors, 'error')}, above): the web chat starts "
                          "pages with a valid one only")  # fmt: skip
    try:
        made = given(result.document, result.source, result.findings)
    except ValueError as e:
        raise BotemuError(f"--manifest {e}") from None
    declared = len(made.skill.declared)
    what = f"{declared} declared {'activity' if declared == 1 else 'activities'}"
    warned = f"; {count(made.warnings, 'warning')}, listed in the page" if made.warnings else ""
    err.write(f"botemu serve: the web chat starts every page with the skill manifest "
              f"{result.source} ({what}{warned})\n")  # fmt: skip
    return made


async def _run(
    config: ServiceConfig,
    store: TranscriptStore,
    out: TextIO,
    *,
    max_live: int = 20,
    manifest: Given | None = None,
) -> int:
    from emulator.service.hosting import banner, serving
    from emulator.service.livechat import LIVECHAT
    from emulator.service.livephone import LIVEPHONE
    from emulator.service.state import EMULATOR

    async with serving(config, store) as runner:
        runner.app[LIVECHAT].max_live = runner.app[LIVEPHONE].max_live = max_live
        runner.app[LIVECHAT].given = manifest
        out.write(banner(config, runner.app[EMULATOR].platform))
        out.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        out.write("botemu: stopping\n")
    return EXIT_OK


FLAGS = {"bot_endpoint": "--bot-endpoint", "bot_app_id": "--app-id",
         "bot_app_password": "--app-password", "calling_bot": "--calling-bot"}  # fmt: skip
SERVE_OPTIONS = ("profile", "config", "certs", "tls", "real_issuers", "own_issuers", "endorse",
                 "bot_endpoint",
                 "bot_app_id", "bot_app_password", "calling_bot")  # fmt: skip


def _config(args: argparse.Namespace, out: TextIO) -> int:
    """The settings of the botemu asked for (``--emulator``, or the address of ``--host`` and
    ``--port``), or of the options given; one line on stderr says which."""
    import aiohttp

    from emulator.client import get_json, running
    from emulator.service import config_document

    given = [name for name in SERVE_OPTIONS if getattr(args, name, None) not in (None, False)]
    try:
        config = service_config(args)
        emulator = (args.emulator or config.base_url).rstrip("/")
        if not given and asyncio.run(running(emulator)):
            document = asyncio.run(get_json(f"{emulator}/_botemu/config"))
            shown = f"the running botemu at {emulator}"
        else:
            document = config_document(config)
            why = " ".join(FLAGS.get(n, f"--{n.replace('_', '-')}") for n in given)
            shown = f"botemu serve {why}" if given else f"botemu serve (none runs at {emulator})"
    except (BotemuError, aiohttp.ClientError) as e:
        print(f"botemu config: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"botemu config: the settings of {shown}", file=sys.stderr)
    if args.json:
        json.dump(document, out, indent=2)
        out.write("\n")
    else:
        for name, value in document.items():
            if name != "bots":
                out.write(f"{ENV_NAMES.get(name, name.upper())}={value}\n")
    return EXIT_OK


def _token(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.client import post_json, running

    emulator = args.emulator.rstrip("/")
    try:
        if not asyncio.run(running(emulator)):
            raise BotemuError(f"no botemu answers at {emulator}: start one with botemu serve")
        answer = asyncio.run(
            post_json(f"{emulator}/_botemu/token", {"app_id": args.app_id}, certs=args.certs)
        )
    except BotemuError as e:
        print(f"botemu token: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(answer, out, indent=2)
        out.write("\n")
    else:
        out.write(f"{answer['access_token']}\n")
    return EXIT_OK
