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
import re
import signal
import ssl
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import aiohttp
import yaml
from aiohttp import web

from emulator.calling.tokens import control_ssl
from emulator.certs import ensure_certs, server_ssl_context
from emulator.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    BotRegistration,
    Profile,
    ServiceConfig,
    anonymous_app_id,
)
from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.guard import control_headers
from emulator.identity.keys import endorsed_channels
from emulator.identity.routes import msal_authority
from emulator.service import config_document, make_app
from emulator.transcripts.store import EventKind, TranscriptStore, default_db

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
        "or at the --host and --port given (default 127.0.0.1:9070); when none runs there, or "
        "when other serve options are given, the ones these options give. A line on stderr "
        "says which is shown.",
    )
    _service_options(config)
    config.add_argument("--emulator", default=None, metavar="URL",
                        help=f"the running botemu to ask (default {DEFAULT_EMULATOR})")  # fmt: skip
    config.add_argument("--json", action="store_true", help="print the JSON object")
    config.set_defaults(handler=_config)

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
    chat.set_defaults(handler=_chat)


def _service_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help=f"address to listen on ({DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=None, help=f"port ({DEFAULT_PORT})")
    parser.add_argument("--profile", choices=[p.value for p in Profile], default=None,
                        help="authentication configuration (v3.1)")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="FILE", help="a YAML configuration file")
    parser.add_argument("--bot-endpoint", metavar="URL", help="register one bot: its endpoint")
    parser.add_argument("--app-id", dest="bot_app_id",
                        help="... its app id (none: an anonymous bot, as an SDK template starts)")  # fmt: skip
    parser.add_argument("--app-password", dest="bot_app_password", help="... its password")
    parser.add_argument("--certs", type=Path, default=None, help="certificates and keys (certs/)")
    parser.add_argument("--tls", action="store_true", default=None,
                        help="serve over HTTPS with the server certificate of botemu certs")  # fmt: skip
    parser.add_argument("--real-issuers", action="store_true", default=None,
                        help="tokens carry the real platform's issuer strings (docs/sdk.md)")  # fmt: skip
    parser.add_argument("--endorse", action="append", default=None, metavar="CHANNEL",
                        help="publish the signing keys endorsed for these channel ids only "
                        "(repeatable; list botemu, the channel of every activity botemu sends)")  # fmt: skip
    parser.add_argument("--allow-host", action="append", default=None, metavar="NAME",
                        help="answer to this Host name too (NAME or NAME:PORT; repeatable; "
                        "e.g. the compose service name a bot calls); docs/security.md")  # fmt: skip


def service_config(args: argparse.Namespace) -> ServiceConfig:
    """The ServiceConfig of a config file and command-line options (options win)."""
    data: dict[str, Any] = {}
    if args.config is not None:
        data = _read_config(args.config)
    bots: list[BotRegistration] = []
    for i, b in enumerate(data.get("bots") or []):
        bots.append(_bot(b, f"{args.config}: bots[{i}]", sum(x.anonymous for x in bots) + 1))
    if getattr(args, "bot_app_id", None):
        bots.append(BotRegistration(args.bot_app_id, args.bot_app_password or "",
                                    args.bot_endpoint))  # fmt: skip
    elif getattr(args, "bot_endpoint", None):  # a template bot with no credentials
        if getattr(args, "bot_app_password", None):
            raise BotemuError("--app-password needs --app-id")
        number = sum(b.anonymous for b in bots) + 1
        bots.append(BotRegistration(anonymous_app_id(number), "", args.bot_endpoint,
                                    anonymous=True))  # fmt: skip
    profile = args.profile or data.get("profile") or Profile.V31.value
    try:
        return ServiceConfig(
            host=args.host or str(data.get("host", DEFAULT_HOST)),
            port=int(args.port or data.get("port", DEFAULT_PORT)),
            profile=Profile(profile),
            bots=tuple(bots),
            certs_dir=Path(args.certs or data.get("certs", "certs")),
            overrides={str(k): str(v) for k, v in (data.get("overrides") or {}).items()},
            tls=_flag(getattr(args, "tls", None), data, "tls"),
            real_issuers=_flag(getattr(args, "real_issuers", None), data, "real_issuers"),
            endorsements=endorsed_channels(
                getattr(args, "endorse", None) or data.get("endorsements") or []
            ),
            allow_hosts=_hosts(getattr(args, "allow_host", None), data),
        )
    except (ValueError, TypeError) as e:
        raise BotemuError(f"bad configuration: {e}") from e


def _hosts(option: list[str] | None, data: dict[str, Any]) -> tuple[str, ...]:
    """``--allow-host`` and the file's ``allow_hosts`` (a list of names), together."""
    listed = data.get("allow_hosts") or []
    if not isinstance(listed, list) or not all(isinstance(h, str) for h in listed):
        raise ValueError(f"allow_hosts is a list of host names, not {listed!r}")
    return tuple(dict.fromkeys([*listed, *(option or [])]))


def _flag(option: bool | None, data: dict[str, Any], name: str) -> bool:
    """A yes/no setting: the command-line flag when given, else the file's (true or false)."""
    if option:
        return True
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} is true or false, not {value!r}")
    return value


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
    known = {"host", "port", "profile", "bots", "certs", "overrides", "tls", "real_issuers",
             "endorsements", "allow_hosts"}  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise BotemuError(
            f"{path}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    return data


def _bot(data: object, where: str, anonymous_number: int) -> BotRegistration:
    """A bot of the configuration file; without an app id (absent or empty), an anonymous bot
    named ``anonymous_app_id(anonymous_number)``."""
    if not isinstance(data, dict) or not isinstance(data.get("app_id", ""), str):
        raise BotemuError(f"{where}: a bot is a mapping with app_id, app_password and endpoint")
    if not data.get("app_id"):
        if data.get("app_password"):
            raise BotemuError(f"{where}: app_password without app_id")
        if not data.get("endpoint") and not data.get("calling_endpoint"):
            raise BotemuError(f"{where}: a bot is a mapping with app_id, app_password and "
                              "endpoint (an anonymous bot: an endpoint without app_id)")  # fmt: skip
        return BotRegistration(
            app_id=anonymous_app_id(anonymous_number), app_password="",
            endpoint=data.get("endpoint"), calling_endpoint=data.get("calling_endpoint"),
            name=data.get("name"), anonymous=True,
        )  # fmt: skip
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
    except BotemuError as e:  # --tls: the certificate directory cannot be made or read
        print(f"botemu serve: {e}", file=sys.stderr)
        return EXIT_USAGE
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
    """Run the emulator on config.host:config.port for the duration of the block; over HTTPS
    with ``config.tls`` (``server_ssl``)."""
    ssl_context = server_ssl(config) if config.tls else None
    runner = web.AppRunner(make_app(config, store), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, config.host, config.port, ssl_context=ssl_context).start()
        yield runner
    finally:
        await runner.cleanup()


def server_ssl(config: ServiceConfig) -> ssl.SSLContext:
    """botemu's side of ``--tls``: the server certificate of ``config.certs_dir`` (``botemu
    certs``; written first when missing), valid for localhost, 127.0.0.1 and ::1. No client
    certificate is asked for (spec, Transport: none in the connector scheme)."""
    paths = ensure_certs(config.certs_dir)
    context = server_ssl_context(paths, require_client_cert=False, check_revocation=False)
    context.verify_mode = ssl.CERT_NONE
    return context


TRUST_ENV = (
    ("REQUESTS_CA_BUNDLE", "Python: requests (the Python SDK and MSAL need only this one)"),
    ("SSL_CERT_FILE", "Python: the ssl module's default (aiohttp, urllib, botemu test)"),
    ("NODE_EXTRA_CA_CERTS", "Node (added to its CAs; read when node starts)"),
)
"""The environment variables that make each runtime trust botemu's CA (``--tls``)."""


def sdk_settings(config: ServiceConfig) -> dict[str, str]:
    """The settings a bot on the platform's SDK (botbuilder 4.x) needs to authenticate with botemu,
    by their JavaScript names (``process.env``; Python: the same in UPPER_SNAKE_CASE on the
    configuration object). docs/sdk.md."""
    p = config.placeholders()
    return {
        "ToChannelFromBotLoginUrl": msal_authority(p),
        "ToChannelFromBotOAuthScope": p.connector_audience,
        "ToBotFromChannelTokenIssuer": p.connector_issuer,
        "ToBotFromChannelOpenIdMetadataUrl": p.openid_metadata_url,
        "ToBotFromEmulatorOpenIdMetadataUrl": p.idp_openid_url,
    }


def banner(config: ServiceConfig) -> str:
    p = config.placeholders()
    lines = [
        f"botemu {config.profile.value} listening on {config.base_url}",
        f"  serviceUrl (connector)   {p.base_url}   (REST v3 under {p.base_url}/v3)",
        f"  token endpoint           {p.token_url}",
        f"  OpenID metadata          {p.openid_metadata_url}",
        f"  control API              {config.base_url}/_botemu/health",
        f"  log view                 {config.base_url}/",
        "",
        "Settings for your bot (paste into its environment):",
    ]
    for bot in config.bots:
        if bot.anonymous:
            lines.append(f"# {bot.endpoint or bot.app_id}: anonymous (no app id, no password)")
        else:
            lines += [f"BOT_APP_ID={bot.app_id}", f"BOT_APP_PASSWORD={bot.app_password}"]
    lines += [f"{ENV_NAMES[name]}={value}" for name, value in p.to_json().items()]
    lines.append(f"BOTEMU_PROFILE={config.profile.value}")
    if config.tls:
        ca = (config.certs_dir / "ca.pem").resolve()
        lines.append("# trust botemu's CA (https):")
        for name, what in TRUST_ENV:
            lines += [f"# {what}", f"{name}={ca}"]
    credentialed = next((b for b in config.bots if not b.anonymous), None)
    lines.append(
        "# bots on the platform's SDK, botbuilder 4.x (docs/sdk.md; Python: TO_CHANNEL_FROM_BOT_LOGIN_URL...)"
    )
    if credentialed is not None:
        lines += [f"MicrosoftAppId={credentialed.app_id}",
                  f"MicrosoftAppPassword={credentialed.app_password}"]  # fmt: skip
    if config.tls:
        lines += [f"{name}={value}" for name, value in sdk_settings(config).items()]
    else:
        lines.append("# (with credentials, the SDKs' MSAL needs https: botemu serve --tls)")
    return "\n".join(lines) + "\n\nCtrl-C stops.\n"


# --- clients of a running emulator -------------------------------------------------------------


async def _get(url: str) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, timeout=aiohttp.ClientTimeout(total=5), ssl=control_ssl(url)) as response,
    ):
        response.raise_for_status()
        return await response.json()


async def _post(
    url: str, body: dict[str, Any], timeout: float = 30.0, *, certs: Path | None = None
) -> Any:
    headers = control_headers(certs)
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            url,
            json=body,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout),
            ssl=control_ssl(url),
        ) as response,  # fmt: skip
    ):
        if response.status >= 400:
            raise BotemuError(f"{url}: HTTP {response.status}: {(await response.text())[:200]}")
        return await response.json()


async def post_control(
    emulator: str, path: str, body: dict[str, Any], timeout: float, *, certs: Path | None = None
) -> Any:
    """POST to a control route of the botemu at ``emulator`` (with the control secret of its
    certificates directory ``certs``, default ``certs/``); its JSON object answer. Every
    failure is one BotemuError line (the route's own message when it gave one)."""
    url = f"{emulator}{path}"
    headers = control_headers(certs)
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                url,
                json=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                ssl=control_ssl(url),
            ) as response,  # fmt: skip
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
    """Whether a botemu answers at ``emulator``. A TLS failure (an https botemu whose CA this
    client does not trust, say) is a BotemuError that says so."""
    try:
        health = await _get(f"{emulator}/_botemu/health")
    except aiohttp.ClientSSLError as e:
        raise BotemuError(
            f"TLS with {emulator} failed ({e}); to trust botemu's CA, run in the directory "
            "holding certs/ca.pem or set SSL_CERT_FILE to it"
        ) from None
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return False
    return isinstance(health, dict) and health.get("status") == "ok"


FLAGS = {"bot_endpoint": "--bot-endpoint", "bot_app_id": "--app-id",
         "bot_app_password": "--app-password"}  # fmt: skip
SERVE_OPTIONS = ("profile", "config", "certs", "tls", "real_issuers", "endorse", "bot_endpoint",
                 "bot_app_id", "bot_app_password")  # fmt: skip


def _config(args: argparse.Namespace, out: TextIO) -> int:
    """The settings of the botemu asked for (``--emulator``, or the address of ``--host`` and
    ``--port``), or of the options given; one line on stderr says which."""
    given = [name for name in SERVE_OPTIONS if getattr(args, name, None) not in (None, False)]
    try:
        config = service_config(args)
        emulator = (args.emulator or config.base_url).rstrip("/")
        if not given and asyncio.run(running(emulator)):
            document = asyncio.run(_get(f"{emulator}/_botemu/config"))
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
    emulator = args.emulator.rstrip("/")
    try:
        if not asyncio.run(running(emulator)):
            raise BotemuError(f"no botemu answers at {emulator}: start one with botemu serve")
        answer = asyncio.run(
            _post(f"{emulator}/_botemu/token", {"app_id": args.app_id}, certs=args.certs)
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


def _chat(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return asyncio.run(_chat_async(args, out))
    except BotemuError as e:
        print(f"botemu chat: {e}", file=sys.stderr)
        return EXIT_USAGE


async def _chat_async(args: argparse.Namespace, out: TextIO) -> int:
    if args.token_version and not args.emulator_token:
        raise BotemuError("--token-version needs --emulator-token")
    emulator = args.emulator.rstrip("/")
    if await running(emulator):
        return await _converse(emulator, args, out)
    if args.app_id:
        bot = BotRegistration(args.app_id, args.app_password or "", args.bot)
    elif args.app_password:
        raise BotemuError("--app-password needs --app-id")
    else:  # a template bot with no credentials
        bot = BotRegistration(anonymous_app_id(1), "", args.bot, anonymous=True)
    parts = urlsplit(emulator)
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST, port=parts.port or DEFAULT_PORT, bots=(bot,),
        tls=parts.scheme == "https", certs_dir=args.certs,
    )  # fmt: skip
    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await _converse(emulator, args, out)


async def _converse(emulator: str, args: argparse.Namespace, out: TextIO) -> int:
    # Without --app-id, the bot registered at the endpoint, or else an anonymous bot that the
    # running botemu registers now (an SDK template with no credentials).
    certs = args.certs
    app_id = (
        args.app_id
        or (await _post(f"{emulator}/_botemu/bots", {"endpoint": args.bot}, certs=certs))["app_id"]
    )
    token: dict[str, Any] = {
        "token": "emulator" if args.emulator_token else "connector",
        "app_id": app_id,
    }
    if args.token_version:
        token["version"] = args.token_version
    printer = ChatPrinter(out)
    if args.send is not None:
        sent = await _post(f"{emulator}/_botemu/chat", {"text": args.send, **token}, certs=certs)
        await _follow(emulator, sent["conversation_id"], printer, args.wait)
        return EXIT_OK if printer.replies else EXIT_FAILED
    out.write(f"chatting with {app_id} at {args.bot} through {emulator}; Ctrl-D ends\n")
    conversation: str | None = None
    loop = asyncio.get_running_loop()
    while True:
        out.write("you> ")
        out.flush()
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return EXIT_OK
        if not line.strip():
            continue
        body: dict[str, Any] = {"text": line.strip(), **token}
        if conversation:
            body["conversation_id"] = conversation
        sent = await _post(f"{emulator}/_botemu/chat", body, certs=certs)
        conversation = str(sent["conversation_id"])
        await _follow(emulator, conversation, printer, args.wait)


QUIET = 0.3
"""Seconds with nothing new after which a turn is over (a reply may come in parts, or be
updated or deleted right after it)."""


async def _follow(emulator: str, conversation: str, printer: ChatPrinter, wait: float) -> None:
    """Print what crosses the wire in ``conversation`` as it happens, both ways. A turn ends
    ``QUIET`` seconds after the last event once the bot has replied or refused the message, or
    when ``wait`` passes."""
    deadline = time.monotonic() + wait
    printer.refused = False
    while time.monotonic() < deadline:
        after = printer.seen(conversation)
        page = await _get(f"{emulator}/_botemu/conversations/{conversation}/events?after={after}")
        events = page.get("events") or []
        for event in events:
            printer.show(conversation, event)
        if events and (printer.replies or printer.refused):  # none comes to a refusal
            deadline = time.monotonic() + QUIET
        await asyncio.sleep(0.05)


class ChatPrinter:
    """``botemu chat``'s view of a conversation: every delivery to the bot that went wrong,
    every request the bot makes to the connector (what it sent, replied, updated or deleted, and
    any refusal), and every finding, one line each as they happen. ``replies`` counts the
    messages the connector took from the bot (a reply deleted later still counts)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.replies = 0
        self.refused = False
        """Whether the bot refused the user's last message (an error status, or no answer)."""
        self._seen: dict[str, int] = {}
        self._delivering: dict[str, str] = {}
        self._asked: dict[str, tuple[str, str] | None] = {}

    def seen(self, conversation: str) -> int:
        return self._seen.get(conversation, 0)

    def show(self, conversation: str, event: dict[str, Any]) -> None:
        self._seen[conversation] = max(self.seen(conversation), int(event.get("seq") or 0))
        payload = event.get("payload")
        line = self._line(
            conversation, str(event.get("kind")), payload if isinstance(payload, dict) else {}
        )
        if line is not None:
            self.out.write(line + "\n")
            self.out.flush()

    def _line(self, conversation: str, kind: str, p: dict[str, Any]) -> str | None:
        if kind == EventKind.FINDING:
            return f"  ! {p.get('summary') or kind}"
        if kind == EventKind.HTTP_REQUEST and "url" in p:  # botemu delivering to the bot
            body = p.get("body")
            self._delivering[conversation] = str(
                body.get("type") if isinstance(body, dict) else "activity"
            )
            return None
        if kind == EventKind.HTTP_REQUEST and "path" in p:  # the bot calling the connector
            self._asked[conversation] = _bot_request(p)
            return None
        if kind == "http.error" and conversation in self._delivering:
            label = self._delivering.pop(conversation)
            self.refused = label != "conversationUpdate"
            return f"  ! {label} not delivered to the bot: {p.get('error')}"
        if kind != EventKind.HTTP_RESPONSE:
            return None
        status = p.get("status")
        failed = not isinstance(status, int) or status >= 300
        if conversation in self._asked:
            asked = self._asked.pop(conversation)
            if failed:
                return f"  ! the connector refused the bot (HTTP {status}): {_short(p.get('body'))}"
            if asked is None:
                return None
            verb, text = asked
            if verb in ("sends", "replies"):
                self.replies += 1
                return f"bot> {text}"
            return f"bot {verb}> {text}" if text else f"bot {verb}"
        if conversation in self._delivering:
            label = self._delivering.pop(conversation)
            self.refused = failed and label != "conversationUpdate"
            if failed:
                return f"  ! the bot answered {label} with HTTP {status}: {_short(p.get('body'))}"
        return None


_ACTIVITY_PATH = re.compile(r"/v3/conversations/[^/]+/activities(?:/(?P<id>[^/?]+))?(?:\?|$)")


def _bot_request(p: dict[str, Any]) -> tuple[str, str] | None:
    """(what the bot did, the activity's text) for its send, reply, update and delete requests;
    None for its other requests (members, attachments, history, ...)."""
    found = _ACTIVITY_PATH.search(str(p.get("path") or ""))
    if found is None or found.group("id") == "history":
        return None
    method, activity_id = str(p.get("method")), found.group("id")
    if method == "DELETE" and activity_id:
        return f"deletes {activity_id}", ""
    try:
        activity = json.loads(str(p.get("body") or "null"))
    except ValueError:
        activity = None
    text = ""
    if isinstance(activity, dict):
        text = str(activity.get("text") or f"({activity.get('type')})")
    if method == "PUT" and activity_id:
        return f"updates {activity_id}", text
    if method == "POST":
        return ("replies" if activity_id else "sends"), text
    return None


def _short(body: object, limit: int = 160) -> str:
    text = " ".join(str(body or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
