"""The options every command that runs or finds an emulator shares (``--host``, ``--port``,
``--profile``, ``--config`` FILE, a bot, ``--certs``, ``--tls``, ...), and the ``ServiceConfig``
they make together with the configuration file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from emulator.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    BotRegistration,
    MemoryLimits,
    OAuthSettings,
    Profile,
    ServiceConfig,
    anonymous_app_id,
)
from emulator.errors import BotemuError


def service_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help=f"address to listen on ({DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=None, help=f"port ({DEFAULT_PORT})")
    parser.add_argument("--profile", choices=[p.value for p in Profile], default=None,
                        help="authentication configuration (v3.1)")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="FILE", help="a YAML configuration file")
    parser.add_argument("--bot-endpoint", metavar="URL", help="register one bot: its endpoint")
    parser.add_argument("--app-id", dest="bot_app_id",
                        help="... its app id (none: an anonymous bot, as an SDK template starts)")  # fmt: skip
    parser.add_argument("--app-password", dest="bot_app_password", help="... its password")
    parser.add_argument("--calling-bot", action="append", default=None, metavar="URL",
                        help="register a calling bot's address, for the log view's phone "
                        "(repeatable; the first is --app-id's calling endpoint when --app-id "
                        "is given, the others are calling bots with no app id)")  # fmt: skip
    parser.add_argument("--certs", type=Path, default=None, help="certificates and keys (certs/)")
    parser.add_argument("--tls", action="store_true", default=None,
                        help="serve over HTTPS with the server certificate of botemu certs")  # fmt: skip
    issuers = parser.add_mutually_exclusive_group()
    issuers.add_argument("--real-issuers", action="store_true", default=None,
                         help="tokens carry the real platform's issuer strings, signed with "
                         "botemu's keys (the default; docs/sdk.md)")  # fmt: skip
    issuers.add_argument("--own-issuers", action="store_true", default=None,
                         help="tokens carry botemu's own issuer URLs instead (docs/sdk.md)")  # fmt: skip
    parser.add_argument("--endorse", action="append", default=None, metavar="CHANNEL",
                        help="publish the signing keys endorsed for these channel ids only "
                        "(repeatable; list the channels of your conversations: webchat, the "
                        "default, directline, emulator, msteams)")  # fmt: skip
    parser.add_argument("--oauth-connection", action="append", default=None, metavar="NAME",
                        help="an OAuth connection of the user token service, with the default "
                        "test users (repeatable; the file's oauth_connections say more; "
                        "docs/oauth.md)")  # fmt: skip
    parser.add_argument("--platform-port", type=int, default=None, metavar="N",
                        help="the port of the listener that answers for the platform's identity "
                        "hosts (default: the port after --port; 0: any free port; -1: none); "
                        "botemu env prints how a bot reaches it (docs/sdk.md)")  # fmt: skip
    parser.add_argument("--allow-host", action="append", default=None, metavar="NAME",
                        help="answer to this Host name too (NAME or NAME:PORT; repeatable; "
                        "e.g. the compose service name a bot calls); docs/security.md")  # fmt: skip


def service_config(args: argparse.Namespace) -> ServiceConfig:
    """The ServiceConfig of a config file and command-line options (options win)."""
    from emulator.identity.keys import endorsed_channels

    data: dict[str, Any] = {}
    if args.config is not None:
        data = _read_config(args.config)
    bots: list[BotRegistration] = []
    for i, b in enumerate(data.get("bots") or []):
        bots.append(_bot(b, f"{args.config}: bots[{i}]", sum(x.anonymous for x in bots) + 1))
    calling = list(getattr(args, "calling_bot", None) or [])
    if getattr(args, "bot_app_id", None):
        own = calling.pop(0) if calling else None
        bots.append(BotRegistration(args.bot_app_id, args.bot_app_password or "",
                                    args.bot_endpoint, own))  # fmt: skip
    elif getattr(args, "bot_endpoint", None):  # a template bot with no credentials
        if getattr(args, "bot_app_password", None):
            raise BotemuError("--app-password needs --app-id")
        number = sum(b.anonymous for b in bots) + 1
        bots.append(BotRegistration(anonymous_app_id(number), "", args.bot_endpoint,
                                    anonymous=True))  # fmt: skip
    for url in calling:  # calling bots with no app id: their calls carry no token
        number = sum(b.anonymous for b in bots) + 1
        bots.append(BotRegistration(anonymous_app_id(number), "", None, url, anonymous=True))
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
            real_issuers=_real_issuers(args, data),
            endorsements=endorsed_channels(
                getattr(args, "endorse", None) or data.get("endorsements") or []
            ),
            allow_hosts=_hosts(getattr(args, "allow_host", None), data),
            oauth_connections=_oauth(getattr(args, "oauth_connection", None), data),
            platform_port=_platform_port(getattr(args, "platform_port", None), data),
            limits=_limits(args, data),
        )
    except (ValueError, TypeError) as e:
        raise BotemuError(f"bad configuration: {e}") from e


def _oauth(option: list[str] | None, data: dict[str, Any]) -> tuple[OAuthSettings, ...]:
    """``--oauth-connection NAME`` and the file's ``oauth_connections``: a list of names or of
    mappings ``{name, scopes, lifetime, users: [{id, name}], sso}``."""
    listed = data.get("oauth_connections") or []
    if not isinstance(listed, list) or len(listed) > 32:
        raise ValueError("oauth_connections is a list of at most 32 connections")
    found: dict[str, OAuthSettings] = {}
    for i, item in enumerate([*listed, *(option or [])]):
        item = {"name": item} if isinstance(item, str) else item
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ValueError(f"oauth_connections[{i}] is a name or a mapping with a name")
        unknown = set(item) - {"name", "scopes", "lifetime", "users", "sso"}
        if unknown:
            raise ValueError(f"oauth_connections[{i}]: unknown key {sorted(unknown)[0]!r}")
        scopes = item.get("scopes", ["User.Read"])
        lifetime = item.get("lifetime", 3600)
        users = item.get("users", [])
        if not (isinstance(scopes, list) and all(isinstance(x, str) for x in scopes)):
            raise ValueError(f"oauth_connections[{i}].scopes is a list of strings")
        if not isinstance(lifetime, int) or isinstance(lifetime, bool) or not 1 <= lifetime <= 86400:
            raise ValueError(f"oauth_connections[{i}].lifetime is seconds, 1 to 86400")
        if not isinstance(users, list) or not all(
            isinstance(u, dict) and isinstance(u.get("id"), str) for u in users
        ):
            raise ValueError(f"oauth_connections[{i}].users is a list of {{id, name}}")
        sso = item.get("sso", True)
        if not isinstance(sso, bool):
            raise ValueError(f"oauth_connections[{i}].sso is true or false")
        pairs = tuple((str(u["id"]), str(u.get("name") or u["id"])) for u in users[:100])
        found[item["name"]] = OAuthSettings(item["name"][:100], tuple(scopes[:50]), lifetime,
                                            pairs, sso)  # fmt: skip
    return tuple(found.values())


LIMITS = {  # the file's ``limits`` key, the option, the MemoryLimits field, its unit, its range
    "attachments_mib": ("max_attachments_mib", "attachment_bytes", 1 << 20, 1, 65536),
    "attachments_per_bot_mib": ("max_attachments_per_bot_mib", "attachment_bytes_per_bot",
                                1 << 20, 1, 65536),
    "activities_kept": ("activities_kept", "activities_kept", 1, 1, 1_000_000),
    "outbox_mib": ("outbox_mib", "outbox_bytes", 1 << 20, 1, 1024),
    "conversations_per_bot": ("max_conversations_per_bot", "conversations_per_bot", 1, 1,
                              1_000_000),
}  # fmt: skip


def limit_options(parser: argparse.ArgumentParser) -> None:
    """``botemu serve``'s options of ``MemoryLimits`` (docs/security.md, "Memory")."""
    d = MemoryLimits()
    parser.add_argument("--max-attachments-mib", type=int, default=None, metavar="N",
                        help=f"stored attachments and uploads, every bot together "
                        f"({d.attachment_bytes >> 20} MiB)")  # fmt: skip
    parser.add_argument("--max-attachments-per-bot-mib", type=int, default=None, metavar="N",
                        help=f"... of one bot ({d.attachment_bytes_per_bot >> 20} MiB)")  # fmt: skip
    parser.add_argument("--activities-kept", type=int, default=None, metavar="N",
                        help=f"activities of a conversation kept in memory, the last ones "
                        f"({d.activities_kept}; the transcript keeps all)")  # fmt: skip
    parser.add_argument("--outbox-mib", type=int, default=None, metavar="N",
                        help=f"bytes waiting for a log view page's socket before it is closed "
                        f"({d.outbox_bytes >> 20} MiB)")  # fmt: skip
    parser.add_argument("--max-conversations-per-bot", type=int, default=None, metavar="N",
                        help=f"conversations one bot creates (POST /v3/conversations) kept "
                        f"until a reset; past them, 429 ({d.conversations_per_bot})")  # fmt: skip


def _limits(args: argparse.Namespace, data: dict[str, Any]) -> MemoryLimits:
    """The options of ``limit_options`` and the file's ``limits`` mapping (options win)."""
    listed = data.get("limits") or {}
    if not isinstance(listed, dict):
        raise ValueError(f"limits is a mapping of {', '.join(LIMITS)}")
    unknown = sorted(set(listed) - set(LIMITS))
    if unknown:
        raise ValueError(f"limits: unknown key {unknown[0]!r} (known: {', '.join(LIMITS)})")
    values: dict[str, int] = {}
    for key, (option, name, unit, low, high) in LIMITS.items():
        given = getattr(args, option, None)
        value = given if given is not None else listed.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"limits.{key} (--{option.replace('_', '-')}) is a whole number "
                             f"from {low} to {high}, not {value!r}")  # fmt: skip
        values[name] = value * unit
    return MemoryLimits(**values)


def _hosts(option: list[str] | None, data: dict[str, Any]) -> tuple[str, ...]:
    """``--allow-host`` and the file's ``allow_hosts`` (a list of names), together."""
    listed = data.get("allow_hosts") or []
    if not isinstance(listed, list) or not all(isinstance(h, str) for h in listed):
        raise ValueError(f"allow_hosts is a list of host names, not {listed!r}")
    return tuple(dict.fromkeys([*listed, *(option or [])]))


def _real_issuers(args: argparse.Namespace, data: dict[str, Any]) -> bool:
    """Whether tokens carry the real platform's issuers: yes unless ``--own-issuers`` or the
    file's ``real_issuers: false`` (docs/decisions.md, "The real issuers by default")."""
    if getattr(args, "own_issuers", None):
        return False
    if getattr(args, "real_issuers", None):
        return True
    value = data.get("real_issuers", True)
    if not isinstance(value, bool):
        raise ValueError(f"real_issuers is true or false, not {value!r}")
    return value


def _platform_port(option: int | None, data: dict[str, Any]) -> int | None:
    """``--platform-port`` or the file's ``platform_port``: -1 (none) to 65535, or None."""
    value = option if option is not None else data.get("platform_port")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not -1 <= value <= 65535:
        raise ValueError(f"platform_port is a port number (0: any free one; -1: none), not {value!r}")
    return value


def _flag(option: bool | None, data: dict[str, Any], name: str) -> bool:
    """A yes/no setting: the command-line flag when given, else the file's (true or false)."""
    if option:
        return True
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} is true or false, not {value!r}")
    return value


def _read_config(path: Path) -> dict[str, Any]:
    import yaml

    from emulator import yamldepth

    try:
        data = yamldepth.load(path.read_text(encoding="utf-8"), yamldepth.COMPOSABLE)
    except FileNotFoundError:
        raise BotemuError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BotemuError(f"{path}: cannot read: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise BotemuError(f"{where}: not YAML: {getattr(e, 'problem', e)}") from None
    except yamldepth.TooDeep as e:
        raise BotemuError(f"{path}:{e.line}:{e.column}: not YAML: {e}") from None
    except RecursionError:
        raise BotemuError(f"{path}: not YAML: nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BotemuError(f"{path}: expected a mapping of settings")
    known = {"host", "port", "profile", "bots", "certs", "overrides", "tls", "real_issuers",
             "endorsements", "allow_hosts", "platform_port", "oauth_connections",
             "limits"}  # fmt: skip
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
