"""What ``botemu env SDK`` prints: the environment a bot on one SDK needs to work with a running
botemu, made from that botemu's configuration document (``GET /_botemu/config``), and written as
a ``.env`` file, shell exports, JSON or a docker-compose ``environment:`` block.

Every name is one the SDK, its quickstart or template, or its runtime reads (docs/sdk.md):

- ``agents-python`` (Microsoft 365 Agents SDK for Python, its quickstart):
  ``CONNECTIONS__SERVICE_CONNECTION__SETTINGS__*`` (``load_configuration_from_env``), ``PORT``
  (the quickstart's ``start_server``), and for a credentialed agent the proxy and trust
  variables that reach botemu's listener of the platform's hosts (``requests``, ``urllib``,
  ``ssl``).
- ``agents-js`` (its Node quickstart): ``connections__serviceConnection__settings__*`` and
  ``connectionsMap__0__*`` (as the quickstart's ``env.TEMPLATE``), ``PORT`` (``startServer``),
  ``NODE_ENV`` (anonymous only outside production), ``NODE_OPTIONS`` and
  ``NODE_EXTRA_CA_CERTS`` (node).
- ``botbuilder-python`` and ``botbuilder-js`` (botbuilder 4.x templates): what the banner of
  ``botemu serve`` prints, by the names the JavaScript SDK reads from ``process.env`` and the
  Python template's ``config.py`` reads from the environment.
- ``calling-node`` (botbuilder-calling 3.x): the settings of docs/sdk-calling-node.md.

Nothing here does I/O: the command (``emulator.cli.env``) fetches the document.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from emulator.config import ANONYMOUS_APP_ID
from emulator.errors import BotemuError

SDKS = ("agents-python", "agents-js", "botbuilder-python", "botbuilder-js", "calling-node")
FORMATS = ("dotenv", "shell", "json", "compose")
PY_CONNECTION = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"
JS_CONNECTION = "connections__serviceConnection__settings__"
PLATFORM_TENANT = "botframework.com"
"""The tenant a credentialed agent names (the platform's multi-tenant one, which botemu answers)."""
NO_PROXY = "127.0.0.1,localhost,::1"
ANONYMOUS_SETTING = f"{PY_CONNECTION}ANONYMOUS_ALLOWED"

Env = dict[str, str]


@dataclass(frozen=True)
class Target:
    """The bot an environment is for: its app id and password (None: anonymous) and endpoints."""

    app_id: str | None
    app_password: str = ""
    endpoint: str | None = None
    calling_endpoint: str | None = None


@dataclass(frozen=True)
class Running:
    """What an environment needs of the running botemu."""

    document: dict[str, Any]
    """Its ``GET /_botemu/config``."""
    url: str
    """Where it answers (``--emulator``)."""
    ca: Path
    """Its CA (``certs/ca.pem``, absolute), trusted when it serves https."""

    @property
    def https(self) -> bool:
        return urlsplit(self.url).scheme == "https"

    @property
    def platform(self) -> dict[str, Any] | None:
        found = self.document.get("platform")
        return found if isinstance(found, dict) else None

    def placeholder(self, name: str) -> str:
        return str(self.document.get(name, ""))

    def trust(self) -> str | None:
        """The CA file a bot's runtime must trust: the platform listener's trust bundle (the
        system's CAs and botemu's) when it runs, else botemu's CA over https, else none."""
        platform = self.platform
        if platform is not None and platform.get("trust_bundle"):
            return str(platform["trust_bundle"])
        return str(self.ca) if self.https else None


def pick(document: dict[str, Any], bot: str | None, app_id: str | None) -> Target:
    """The registered bot ``bot`` (its messaging endpoint) or ``app_id`` chooses, else the only
    one registered; with none registered, an anonymous bot. BotemuError when they choose none or
    several."""
    listed = [b for b in document.get("bots") or [] if isinstance(b, dict)]
    found = [b for b in listed
             if (bot is None or bot in (b.get("endpoint"), b.get("calling_endpoint")))
             and (app_id is None or b.get("app_id") == app_id)]  # fmt: skip
    if not listed and bot is None and app_id is None:
        return Target(None)
    if not found:
        asked = " and ".join(f"{k} {v}" for k, v in (("--bot", bot), ("--app-id", app_id)) if v)
        raise BotemuError(f"no registered bot has {asked or 'that'} (registered: "
                          f"{', '.join(_named(b) for b in listed) or 'none'})")  # fmt: skip
    if len(found) > 1:
        raise BotemuError(f"{len(found)} bots are registered ({', '.join(_named(b) for b in found)}):"
                          " choose one with --bot URL or --app-id ID")  # fmt: skip
    chosen = found[0]
    anonymous = chosen.get("anonymous")
    if anonymous is None:  # a document without the control secret's fields
        named = str(chosen.get("app_id", ""))
        anonymous = not chosen.get("app_password") and named.startswith(ANONYMOUS_APP_ID)
    if not anonymous and "app_password" not in chosen:
        raise BotemuError(f"botemu did not say the password of {chosen.get('app_id')}: run where "
                          "its certificates directory is (certs/, or --certs DIR): it holds the "
                          "control secret")  # fmt: skip
    return Target(None if anonymous else str(chosen.get("app_id")),
                  str(chosen.get("app_password") or ""), chosen.get("endpoint"),
                  chosen.get("calling_endpoint"))  # fmt: skip


def _named(bot: dict[str, Any]) -> str:
    return f"{bot.get('app_id')} at {bot.get('endpoint') or bot.get('calling_endpoint') or '-'}"


def environment(sdk: str, running: Running, target: Target) -> tuple[Env, list[str]]:
    """The environment of a bot on ``sdk``, and notes for the person (what it cannot do)."""
    makers = {"agents-python": _agents_python, "agents-js": _agents_js,
              "botbuilder-python": _botbuilder_python, "botbuilder-js": _botbuilder_js,
              "calling-node": _calling_node}  # fmt: skip
    if sdk not in makers:
        raise BotemuError(f"unknown SDK {sdk!r} (known: {', '.join(SDKS)})")
    notes: list[str] = []
    env = makers[sdk](running, target, notes)
    return env, notes


def _port(url: str | None) -> Env:
    """``PORT`` of a bot listening at ``url``, when the URL names one."""
    try:
        port = urlsplit(url).port if url else None
    except ValueError:
        port = None
    return {"PORT": str(port)} if port else {}


def _no_platform(running: Running, notes: list[str]) -> None:
    notes.append(f"the botemu at {running.url} runs no listener of the platform's hosts "
                 "(botemu serve --platform-port -1?): a credentialed agent gets no token "
                 "and checks no token without it")  # fmt: skip


def _python_trust(running: Running) -> Env:
    trust = running.trust()
    return {} if trust is None else {"REQUESTS_CA_BUNDLE": trust, "SSL_CERT_FILE": trust}


def _python_proxy(running: Running) -> Env:
    """HTTPS_PROXY to botemu's listener of the platform's hosts, loopback kept direct."""
    platform = running.platform
    if platform is None or not platform.get("proxy"):
        return {}
    host = urlsplit(running.url).hostname or ""
    direct = NO_PROXY if host in NO_PROXY.split(",") else f"{NO_PROXY},{host}"
    return {"HTTPS_PROXY": str(platform["proxy"]), "NO_PROXY": direct}


def _python_preload(running: Running) -> Env:
    """The Python preload (``PYTHONPATH``) that makes the Agents SDK's aiohttp token client read
    HTTPS_PROXY, and the address it is for."""
    platform = running.platform
    if platform is None or not platform.get("python_preload"):
        return {}
    return {"PYTHONPATH": str(platform["python_preload"]),
            "BOTEMU_PLATFORM_ADDRESS": str(platform["address"])}  # fmt: skip


def _node_platform(running: Running) -> Env:
    platform = running.platform
    if platform is None or not platform.get("node_preload"):
        return {}
    preload = str(platform["node_preload"])
    if re.search(r"[\s\"'\\]", preload):
        preload = json.dumps(preload)
    return {"NODE_OPTIONS": f"--require {preload}",
            "BOTEMU_PLATFORM_ADDRESS": str(platform["address"])}  # fmt: skip


def _node_trust(running: Running) -> Env:
    trust = running.trust()
    return {} if trust is None else {"NODE_EXTRA_CA_CERTS": trust}


def _agents_python(running: Running, target: Target, notes: list[str]) -> Env:
    if target.app_id is None:
        env = {ANONYMOUS_SETTING: "true"}
        trust = str(running.ca) if running.https else None
        if trust:
            env |= {"REQUESTS_CA_BUNDLE": trust, "SSL_CERT_FILE": trust}
        return env | _port(target.endpoint)
    if running.platform is None:
        _no_platform(running, notes)
    return {
        f"{PY_CONNECTION}CLIENTID": target.app_id,
        f"{PY_CONNECTION}CLIENTSECRET": target.app_password,
        f"{PY_CONNECTION}TENANTID": PLATFORM_TENANT,
        **_python_proxy(running),
        **_python_preload(running),
        **_python_trust(running),
        **_port(target.endpoint),
    }


def _agents_js(running: Running, target: Target, notes: list[str]) -> Env:
    if target.app_id is None:
        env = {"NODE_ENV": "development"}
        if running.https:
            env["NODE_EXTRA_CA_CERTS"] = str(running.ca)
        return env | _port(target.endpoint)
    if running.platform is None:
        _no_platform(running, notes)
    return {
        f"{JS_CONNECTION}clientId": target.app_id,
        f"{JS_CONNECTION}clientSecret": target.app_password,
        f"{JS_CONNECTION}tenantId": PLATFORM_TENANT,
        "connectionsMap__0__connection": "serviceConnection",
        "connectionsMap__0__serviceUrl": "*",
        **_node_platform(running),
        **_node_trust(running),
        **_port(target.endpoint),
    }


def _botbuilder(running: Running, target: Target) -> Env:
    """The banner's settings: the app id and password, and over https the To* settings."""
    if target.app_id is None:
        return {}
    env = {"MicrosoftAppId": target.app_id, "MicrosoftAppPassword": target.app_password}
    if running.https:
        env |= {
            "ToChannelFromBotLoginUrl": f"{running.placeholder('base_url')}/adfs",
            "ToChannelFromBotOAuthScope": running.placeholder("connector_scope"),
            "ToBotFromChannelTokenIssuer": running.placeholder("connector_issuer"),
            "ToBotFromChannelOpenIdMetadataUrl": running.placeholder("openid_metadata_url"),
            "ToBotFromEmulatorOpenIdMetadataUrl": running.placeholder("idp_openid_url"),
        }
    return env


def _botbuilder_python(running: Running, target: Target, notes: list[str]) -> Env:
    env = _botbuilder(running, target)
    if target.app_id is not None and running.platform is not None:
        return env | _python_proxy(running) | _python_trust(running)
    if running.https:
        env["REQUESTS_CA_BUNDLE"] = str(running.ca)
    return env


def _botbuilder_js(running: Running, target: Target, notes: list[str]) -> Env:
    env = _botbuilder(running, target)
    if target.app_id is not None:
        env |= _node_platform(running)
    trust = running.trust() if target.app_id is not None else (
        str(running.ca) if running.https else None)  # fmt: skip
    if trust:
        env["NODE_EXTRA_CA_CERTS"] = trust
    return env | _port(target.endpoint)


def _calling_node(running: Running, target: Target, notes: list[str]) -> Env:
    if target.app_id is None:
        notes.append("a bot on botbuilder-calling always checks a token: register it with an "
                     "app id (botemu serve --app-id ID --calling-bot URL)")  # fmt: skip
    env = {
        "CALLBACK_URL": target.calling_endpoint or "",
        "MICROSOFT_APP_ID": target.app_id or "",
        "MICROSOFT_APP_PASSWORD": target.app_password,
        "OPENID_METADATA": running.placeholder("openid_metadata_url"),
    }
    env = {k: v for k, v in env.items() if v}
    if running.https:
        env["NODE_EXTRA_CA_CERTS"] = str(running.ca)
    return env | _port(target.calling_endpoint)


# --- formats ------------------------------------------------------------------------------------

_BARE = re.compile(r"^[A-Za-z0-9_./:@%+,=-]*$")


def dotenv_value(value: str) -> str:
    """A value as a ``.env`` file holds it: bare when plain; else in single quotes (literal for
    python-dotenv and node's ``--env-file``); else in double quotes with escapes."""
    if _BARE.match(value):
        return value
    if "'" not in value and "\n" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def render(env: Env, fmt: str) -> str:
    """``env`` in the format ``fmt`` (one of FORMATS), ending with a new line."""
    if fmt == "json":
        return json.dumps(env, indent=2) + "\n"
    if fmt == "shell":
        return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    if fmt == "compose":
        lines = ["environment:"] + [
            f"  {k}: {json.dumps(v.replace('$', '$$'))}" for k, v in env.items()
        ]  # compose interpolates $: $$ is a literal one
        return "\n".join(lines) + "\n" if env else "environment: {}\n"
    if fmt == "dotenv":
        return "".join(f"{k}={dotenv_value(v)}\n" for k, v in env.items())
    raise BotemuError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
