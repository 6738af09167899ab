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
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import aiohttp
import yaml
from aiohttp import web

from emulator.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    BotRegistration,
    Profile,
    ServiceConfig,
)
from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.service import config_document, make_app
from emulator.transcripts.store import TranscriptStore, default_db

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_EMULATOR = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
ENV_NAMES = {
    "base_url": "BOTEMU_BASE_URL",
    "token_url": "BOTEMU_TOKEN_URL",
    "connector_scope": "BOTEMU_CONNECTOR_SCOPE",
    "openid_metadata_url": "BOTEMU_OPENID_METADATA_URL",
    "jwks_uri": "BOTEMU_JWKS_URI",
    "connector_issuer": "BOTEMU_CONNECTOR_ISSUER",
    "emulator_issuer": "BOTEMU_EMULATOR_ISSUER",
    "idp_openid_url": "BOTEMU_IDP_OPENID_URL",
    "legacy_audience": "BOTEMU_LEGACY_AUDIENCE",
}


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run the connector, identity and control services until Ctrl-C",
        description="Run botemu's connector, identity service and control API on one address, "
        "print the settings a bot needs, and serve until Ctrl-C.",
    )
    _service_options(serve)
    serve.add_argument("--db", type=Path, default=default_db(), help="transcript database")
    serve.set_defaults(handler=_serve)

    config = subparsers.add_parser(
        "config",
        help="print every spec placeholder as botemu serves it",
        description="Print the settings of the running botemu at --emulator (GET /_botemu/config), "
        "or, when none is running, the ones these options would give.",
    )
    _service_options(config)
    config.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL")
    config.add_argument("--json", action="store_true", help="print the JSON object")
    config.set_defaults(handler=_config)

    token = subparsers.add_parser(
        "token",
        help="mint an access token for a registered bot (for curl)",
        description="Print an access token for a bot, as the token endpoint issues it.",
    )
    token.add_argument("--app-id", required=True)
    token.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL")
    token.add_argument("--json", action="store_true", help="print the token response JSON")
    token.set_defaults(handler=_token)

    chat = subparsers.add_parser(
        "chat",
        help="chat with a messaging bot through botemu's connector",
        description="Chat with a bot: type a message, the bot's replies appear as they reach the "
        "connector. With --send, send one message and exit 0 when a reply came, 1 when none "
        "came before --wait ran out.",
    )
    chat.add_argument("--bot", required=True, metavar="URL", help="the bot's messaging endpoint")
    chat.add_argument("--app-id", help="the bot's app id (default: the bot registered at URL)")
    chat.add_argument("--app-password", help="the bot's password (for an in-process emulator)")
    chat.add_argument("--emulator", default=DEFAULT_EMULATOR, metavar="URL")
    chat.add_argument("--send", metavar="TEXT", help="send one message, print the replies, exit")
    chat.add_argument("--wait", type=float, default=5.0, help="seconds to wait for a reply")
    chat.add_argument("--emulator-token", action="store_true",
                      help="send emulator-path tokens instead of connector-path ones")  # fmt: skip
    chat.set_defaults(handler=_chat)


def _service_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help=f"address to listen on ({DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=None, help=f"port ({DEFAULT_PORT})")
    parser.add_argument("--profile", choices=[p.value for p in Profile], default=None,
                        help="authentication configuration (v3.1)")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="FILE", help="a YAML configuration file")
    parser.add_argument("--bot-endpoint", metavar="URL", help="register one bot: its endpoint")
    parser.add_argument("--app-id", dest="bot_app_id", help="... its app id")
    parser.add_argument("--app-password", dest="bot_app_password", help="... its password")
    parser.add_argument("--certs", type=Path, default=None, help="certificates and keys (certs/)")


def service_config(args: argparse.Namespace) -> ServiceConfig:
    """The ServiceConfig of a config file and command-line options (options win)."""
    data: dict[str, Any] = {}
    if args.config is not None:
        data = _read_config(args.config)
    bots = [_bot(b, f"{args.config}: bots[{i}]") for i, b in enumerate(data.get("bots") or [])]
    if getattr(args, "bot_app_id", None):
        bots.append(BotRegistration(args.bot_app_id, args.bot_app_password or "",
                                    args.bot_endpoint))  # fmt: skip
    elif getattr(args, "bot_endpoint", None):
        raise BotemuError("--bot-endpoint needs --app-id (and --app-password)")
    profile = args.profile or data.get("profile") or Profile.V31.value
    try:
        return ServiceConfig(
            host=args.host or str(data.get("host", DEFAULT_HOST)),
            port=int(args.port or data.get("port", DEFAULT_PORT)),
            profile=Profile(profile),
            bots=tuple(bots),
            certs_dir=Path(args.certs or data.get("certs", "certs")),
            overrides={str(k): str(v) for k, v in (data.get("overrides") or {}).items()},
        )
    except (ValueError, TypeError) as e:
        raise BotemuError(f"bad configuration: {e}") from e


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotemuError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BotemuError(f"{path}: cannot read: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise BotemuError(f"{where}: not YAML: {getattr(e, 'problem', e)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BotemuError(f"{path}: expected a mapping of settings")
    known = {"host", "port", "profile", "bots", "certs", "overrides"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BotemuError(
            f"{path}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    return data


def _bot(data: object, where: str) -> BotRegistration:
    if not isinstance(data, dict) or not isinstance(data.get("app_id"), str):
        raise BotemuError(f"{where}: a bot is a mapping with app_id, app_password and endpoint")
    return BotRegistration(
        app_id=data["app_id"],
        app_password=str(data.get("app_password", "")),
        endpoint=data.get("endpoint"),
        calling_endpoint=data.get("calling_endpoint"),
        name=data.get("name"),
    )


# --- serve -------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, out: TextIO) -> int:
    try:
        config = service_config(args)
        store = TranscriptStore(args.db, write_behind=True)
    except BotemuError as e:
        print(f"botemu serve: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_run(config, store, out))
    except OSError as e:
        print(f"botemu serve: cannot listen on {config.host}:{config.port}: {e.strerror or e}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    finally:
        store.close()


async def _run(config: ServiceConfig, store: TranscriptStore, out: TextIO) -> int:
    async with serving(config, store):
        out.write(banner(config))
        out.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        out.write("botemu: stopping\n")
    return EXIT_OK


@contextlib.asynccontextmanager
async def serving(config: ServiceConfig, store: TranscriptStore) -> AsyncIterator[web.AppRunner]:
    """Run the emulator on config.host:config.port for the duration of the block."""
    runner = web.AppRunner(make_app(config, store), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, config.host, config.port).start()
        yield runner
    finally:
        await runner.cleanup()


def banner(config: ServiceConfig) -> str:
    p = config.placeholders()
    lines = [
        f"botemu {config.profile.value} listening on {config.base_url}",
        f"  connector (serviceUrl)   {p.base_url}/v3",
        f"  token endpoint           {p.token_url}",
        f"  OpenID metadata          {p.openid_metadata_url}",
        f"  control API              {config.base_url}/_botemu/health",
        f"  log view                 {config.base_url}/",
        "",
        "Settings for your bot (paste into its environment):",
    ]
    for bot in config.bots:
        lines += [f"BOT_APP_ID={bot.app_id}", f"BOT_APP_PASSWORD={bot.app_password}"]
    lines += [f"{ENV_NAMES[name]}={value}" for name, value in p.to_json().items()]
    lines.append(f"BOTEMU_PROFILE={config.profile.value}")
    return "\n".join(lines) + "\n\nCtrl-C stops.\n"


# --- clients of a running emulator -------------------------------------------------------------


async def _get(url: str) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, timeout=aiohttp.ClientTimeout(total=5)) as response,
    ):
        response.raise_for_status()
        return await response.json()


async def _post(url: str, body: dict[str, Any], timeout: float = 30.0) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=body, timeout=aiohttp.ClientTimeout(total=timeout)) as response,
    ):
        if response.status >= 400:
            raise BotemuError(f"{url}: HTTP {response.status}: {(await response.text())[:200]}")
        return await response.json()


async def post_control(emulator: str, path: str, body: dict[str, Any], timeout: float) -> Any:
    """POST to a control route of the botemu at ``emulator``; its JSON object answer. Every
    failure is one BotemuError line (the route's own message when it gave one)."""
    url = f"{emulator}{path}"
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, json=body, timeout=aiohttp.ClientTimeout(total=timeout)) as response,
        ):
            text = await response.text()
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as e:
        raise BotemuError(f"POST {url} failed: {str(e) or type(e).__name__}") from None
    if status >= 400:
        message = " ".join(text.split())[:400]
        if not message or message.startswith(f"{status}:"):  # not an answer of the route
            message = f"POST {url}: HTTP {status}{': ' if message else ''}{message}"
        raise BotemuError(message)
    try:
        report = json.loads(text)
    except ValueError:
        report = None
    if not isinstance(report, dict):
        raise BotemuError(f"POST {url}: the answer is not a JSON object")
    return report


def finding_of(item: object) -> Finding:
    """A finding a control route answered, or one BotemuError line."""
    try:
        return Finding.from_json(item)
    except ValueError as e:
        raise BotemuError(f"the botemu answered an unreadable finding: {e}") from None


async def running(emulator: str) -> bool:
    """Whether a botemu answers at ``emulator``."""
    try:
        health = await _get(f"{emulator}/_botemu/health")
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return False
    return isinstance(health, dict) and health.get("status") == "ok"


def _config(args: argparse.Namespace, out: TextIO) -> int:
    emulator = args.emulator.rstrip("/")
    try:
        document = (
            asyncio.run(_get(f"{emulator}/_botemu/config"))
            if asyncio.run(running(emulator))
            else config_document(service_config(args))
        )
    except (BotemuError, aiohttp.ClientError) as e:
        print(f"botemu config: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(document, out, indent=2)
        out.write("\n")
    else:
        for name, value in document.items():
            if name != "bots":
                out.write(f"{ENV_NAMES.get(name, name.upper())}={value}\n")
    return EXIT_OK


def _token(args: argparse.Namespace, out: TextIO) -> int:
    emulator = args.emulator.rstrip("/")
    try:
        if not asyncio.run(running(emulator)):
            raise BotemuError(f"no botemu answers at {emulator}: start one with botemu serve")
        answer = asyncio.run(_post(f"{emulator}/_botemu/token", {"app_id": args.app_id}))
    except BotemuError as e:
        print(f"botemu token: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(answer, out, indent=2)
        out.write("\n")
    else:
        out.write(f"{answer['access_token']}\n")
    return EXIT_OK


def _chat(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return asyncio.run(_chat_async(args, out))
    except BotemuError as e:
        print(f"botemu chat: {e}", file=sys.stderr)
        return EXIT_USAGE


async def _chat_async(args: argparse.Namespace, out: TextIO) -> int:
    emulator = args.emulator.rstrip("/")
    if await running(emulator):
        return await _converse(emulator, args, out)
    if not args.app_id:
        raise BotemuError(f"no botemu answers at {emulator}; to start one here, give --app-id "
                          "and --app-password")  # fmt: skip
    parts = urlsplit(emulator)
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST,
        port=parts.port or DEFAULT_PORT,
        bots=(BotRegistration(args.app_id, args.app_password or "", args.bot),),
    )
    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await _converse(emulator, args, out)


async def _converse(emulator: str, args: argparse.Namespace, out: TextIO) -> int:
    app_id = args.app_id or await _registered(emulator, args.bot)
    token = "emulator" if args.emulator_token else "connector"
    if args.send is not None:
        sent = await _post(f"{emulator}/_botemu/chat",
                           {"app_id": app_id, "text": args.send, "token": token})  # fmt: skip
        _report_send(sent, out)
        replies = await _replies(emulator, sent["conversation_id"], 0, args.wait, out, first=True)
        return EXIT_OK if replies else EXIT_FAILED
    out.write(f"chatting with {app_id} at {args.bot} through {emulator}; Ctrl-D ends\n")
    conversation: str | None = None
    seen = 0
    loop = asyncio.get_running_loop()
    while True:
        out.write("you> ")
        out.flush()
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return EXIT_OK
        if not line.strip():
            continue
        body: dict[str, Any] = {"app_id": app_id, "text": line.strip(), "token": token}
        if conversation:
            body["conversation_id"] = conversation
        sent = await _post(f"{emulator}/_botemu/chat", body)
        _report_send(sent, out)
        conversation = sent["conversation_id"]
        seen = await _replies(emulator, conversation or "", seen, args.wait, out, first=False)


def _report_send(sent: dict[str, Any], out: TextIO) -> None:
    if sent.get("status") is None or int(sent["status"]) >= 300:
        why = sent.get("failure") or f"HTTP {sent.get('status')}"
        out.write(f"  ! the bot did not take the message: {why}\n")


async def _registered(emulator: str, endpoint: str) -> str:
    document = await _get(f"{emulator}/_botemu/config")
    for bot in document.get("bots", []):
        if bot.get("endpoint") == endpoint:
            return str(bot["app_id"])
    raise BotemuError(f"no bot is registered at {endpoint} with the botemu at {emulator}; "
                      "give --app-id, or register it with botemu serve")  # fmt: skip


async def _replies(
    emulator: str, conversation: str, seen: int, wait: float, out: TextIO, *, first: bool
) -> int:
    """Print the bot's new activities until ``wait`` passes with none; the index reached.
    With ``first``, the count of replies is returned instead."""
    deadline = time.monotonic() + wait
    replies = 0
    index = seen
    while time.monotonic() < deadline:
        page = await _get(
            f"{emulator}/_botemu/conversations/{conversation}/activities?after={index}"
        )
        index = int(page["next"])
        for activity in page["activities"]:
            if (activity.get("from") or {}).get("role") == "user":
                continue
            replies += 1
            text = activity.get("text") or f"({activity.get('type')})"
            out.write(f"bot> {text}\n")
            out.flush()
            deadline = max(deadline, time.monotonic() + 0.3)  # a reply may come in parts
        if replies and first:
            break
        await asyncio.sleep(0.05)
    return replies if first else index
