"""``botemu env SDK``: the exact environment a bot process on SDK needs to work with the running
botemu, from its ``GET /_botemu/config`` (the bot registered there, its password told to
botemu's own clients only), as a ``.env`` file (the default), shell exports, JSON or a
docker-compose ``environment:`` block. The environments themselves: ``emulator.cli.sdk_env``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, TextIO

from emulator.cli.common import EXIT_OK, EXIT_USAGE
from emulator.cli.sdk_env import FORMATS, SDKS


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    from emulator.config import DEFAULT_EMULATOR

    env = subparsers.add_parser(
        "env",
        help="print the environment a bot on an SDK needs to work with the running botemu",
        description="Print the environment a bot process on SDK needs to work with the running "
        "botemu (its GET /_botemu/config): the bot registered there (--bot or --app-id when "
        "several are), or an anonymous bot when none is. docs/sdk.md.",
    )
    env.add_argument("sdk", metavar="SDK", help=f"one of: {', '.join(SDKS)}")
    env.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL",
                     help=f"the running botemu (default {DEFAULT_EMULATOR}; https: trusts "
                     "certs/ca.pem of this directory)")  # fmt: skip
    env.add_argument("--certs", type=Path, default=Path("certs"), metavar="DIR",
                     help="the botemu's certificates directory: its control secret, which "
                     "botemu asks before it tells a bot's password (certs/)")  # fmt: skip
    env.add_argument("--bot", metavar="URL", help="the registered bot at this endpoint")
    env.add_argument("--app-id", metavar="ID", help="the registered bot with this app id")
    env.add_argument("--anonymous", action="store_true",
                     help="an anonymous bot (no app id), whatever is registered")  # fmt: skip
    env.add_argument("--format", choices=FORMATS,
                     default="dotenv", help="dotenv (the default: a .env file), shell (export "
                     "lines), json (one object), compose (a docker-compose environment: block)")  # fmt: skip
    env.set_defaults(handler=_env)


def _env(args: argparse.Namespace, out: TextIO) -> int:
    import aiohttp

    from emulator.cli.sdk_env import Running, Target, environment, pick, render
    from emulator.errors import BotemuError

    if args.sdk not in SDKS:
        print(f"botemu env: unknown SDK {args.sdk!r} (known: {', '.join(SDKS)})",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    emulator = args.emulator.rstrip("/")
    try:
        document = asyncio.run(_document(emulator, args.certs))
        target = Target(None) if args.anonymous else pick(document, args.bot, args.app_id)
        running = Running(document, emulator, (args.certs / "ca.pem").resolve())
        env, notes = environment(args.sdk, running, target)
    except (BotemuError, aiohttp.ClientError, ValueError) as e:
        print(f"botemu env: {e}", file=sys.stderr)
        return EXIT_USAGE
    who = "an anonymous bot" if target.app_id is None else f"the bot {target.app_id}"
    print(f"botemu env: {args.sdk}, {who}, with the botemu at {emulator}", file=sys.stderr)
    for note in notes:
        print(f"botemu env: note: {note}", file=sys.stderr)
    out.write(render(env, args.format))
    return EXIT_OK


async def _document(emulator: str, certs: Path) -> dict[str, Any]:
    """The running botemu's configuration document, with the control secret of ``certs``."""
    from emulator.client import get_json, running
    from emulator.errors import BotemuError

    if not await running(emulator):
        raise BotemuError(f"no botemu answers at {emulator}: start one with botemu serve "
                          "(or give --emulator URL)")  # fmt: skip
    document = await get_json(f"{emulator}/_botemu/config", certs=certs)
    if not isinstance(document, dict):
        raise BotemuError(f"{emulator}/_botemu/config: not a JSON object")
    return document
