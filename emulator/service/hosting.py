"""Hosting the emulator: serving its app on a host and port (over HTTPS with ``--tls``), and the
banner that tells a developer what to paste into a bot's environment."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator

from aiohttp import web

from emulator.certs import ensure_certs, server_ssl_context
from emulator.config import ENV_NAMES, PLATFORM_OFF, ServiceConfig
from emulator.identity.platform import PlatformListener
from emulator.identity.routes import msal_authority
from emulator.jsonutil import JSONObject
from emulator.service.app import make_app
from emulator.service.platform_hosts import start_platform_hosts
from emulator.transcripts.store import TranscriptStore


@contextlib.asynccontextmanager
async def serving(config: ServiceConfig, store: TranscriptStore) -> AsyncIterator[web.AppRunner]:
    """Run the emulator on config.host:config.port for the duration of the block; over HTTPS
    with ``config.tls`` (``server_ssl``)."""
    ssl_context = server_ssl(config) if config.tls else None
    runner = web.AppRunner(make_app(config, store), access_log=None)
    await runner.setup()
    platform: PlatformListener | None = None
    try:
        await web.TCPSite(runner, config.host, config.port, ssl_context=ssl_context).start()
        if config.platform_port != PLATFORM_OFF:
            platform = await start_platform_hosts(runner.app)
        yield runner
    finally:
        if platform is not None:
            await platform.close()
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


def banner(config: ServiceConfig, platform: JSONObject | None = None) -> str:
    """What ``botemu serve`` prints once it listens (``platform``: the listener of the
    platform's hosts, when it runs)."""
    p = config.placeholders()
    lines = [
        f"botemu {config.profile.value} listening on {config.base_url}",
        f"  serviceUrl (connector)   {p.base_url}   (REST v3 under {p.base_url}/v3)",
        f"  token endpoint           {p.token_url}",
        f"  OpenID metadata          {p.openid_metadata_url}",
        f"  control API              {config.base_url}/_botemu/health",
        f"  log view                 {config.base_url}/",
    ]
    if platform is not None:
        lines.append(f"  platform hosts           {platform['address']}   (login.botframework.com, "
                     "login.microsoftonline.com: botemu's keys and tokens)")  # fmt: skip
    lines += [
        "",
        "A bot's whole environment for its SDK: botemu env agents-python | agents-js | "
        "botbuilder-python | botbuilder-js | calling-node (docs/sdk.md)",
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
