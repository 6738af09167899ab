"""The bots a suite runs against: ``TargetSettings`` from the flags and a YAML config file
(``--config``), and which scenarios each bot is needed for (a run skips the others).

Errors: ``ConfigError`` (a ``BotemuError``) is a usage or configuration problem, one line, exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml

from emulator import yamldepth
from emulator.errors import BotemuError
from emulator.scenario.model import Scenario
from emulator.scenario.reports import SkippedResult

ENV_PASSWORD = "BOT_APP_PASSWORD"
CONFIG_KEYS = ("bot", "messaging_bot", "app_id", "app_password", "emulator", "certs", "ca")
_TEXT_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int")
"""A config value is a string; a number is taken as written (an app id or password of digits)."""


class ConfigError(BotemuError):
    """A usage or configuration problem: one line, exit 2."""


@dataclass(frozen=True, slots=True)
class TargetSettings:
    """The bots under test and how to reach them (the runner's ``Target``): ``bot`` a calling
    bot's URL, ``messaging_bot`` a messaging bot's endpoint with its ``app_id`` and
    ``app_password``, ``emulator`` a running botemu to chat through (else the runner starts
    one), ``certs``/``ca`` for https bots."""

    bot: str | None = None
    messaging_bot: str | None = None
    app_id: str | None = None
    app_password: str | None = None
    emulator: str | None = None
    certs: Path | None = None
    ca: Path | None = None
    no_token: bool = False
    legacy_validation_outcome: bool = False
    control_certs: Path | None = None
    """The running botemu's certificates directory (its control secret), when not ``certs``."""


def read_config(path: Path) -> dict[str, str]:
    """The target keys of a YAML config file (``CONFIG_KEYS``; every value a string). Problems
    raise ``ConfigError`` with ``file:line:col``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    try:
        node = yamldepth.compose(text, yamldepth.COMPOSABLE)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not YAML: {e.problem}") from None
    except yamldepth.TooDeep as e:
        raise ConfigError(f"{path}:{e.line}:{e.column}: not YAML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not YAML: nested too deeply") from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{_at(path, node)}: expected a mapping of settings ({', '.join(CONFIG_KEYS)})"
        )
    out: dict[str, str] = {}
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name not in CONFIG_KEYS:
            raise ConfigError(
                f"{_at(path, key)}: unknown setting {name!r} (known: {', '.join(CONFIG_KEYS)})"
            )
        if name in out:
            raise ConfigError(f"{_at(path, key)}: {name} is given twice")
        if not isinstance(value, yaml.ScalarNode) or value.tag not in _TEXT_TAGS:
            raise ConfigError(f"{_at(path, value)}: {name} is a string")
        out[name] = str(value.value)
    return out


def _at(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def target_settings(
    flags: Mapping[str, Any], environ: dict[str, str] | None = None
) -> TargetSettings:
    """The target from the configuration file ``flags["config"]`` and the flags (flags win;
    a flag that is None is not given); the password falls back to ``$BOT_APP_PASSWORD``."""
    environ = dict(os.environ) if environ is None else environ
    config = flags.get("config")
    data = read_config(config) if config is not None else {}

    def pick(name: str) -> str | None:
        flag = flags.get(name)
        return str(flag) if flag is not None else data.get(name)

    password = pick("app_password") or environ.get(ENV_PASSWORD) or None
    target = TargetSettings(
        bot=pick("bot"),
        messaging_bot=pick("messaging_bot"),
        app_id=pick("app_id"),
        app_password=password,
        emulator=pick("emulator"),
        certs=_path(pick("certs")),
        ca=_path(pick("ca")),
        no_token=bool(flags.get("no_token", False)),
        legacy_validation_outcome=bool(flags.get("legacy_validation_outcome", False)),
    )
    for flag, url in (("--bot", target.bot), ("--messaging-bot", target.messaging_bot),
                      ("--emulator", target.emulator)):  # fmt: skip
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"{flag} {url!r} is not an http(s) URL")
    return target


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def needs(scenario: Scenario) -> Literal["calling", "messaging"]:
    """The bot a scenario runs against: a call and ``probe: auth-calling`` need the calling bot;
    a conversation (``messaging:``) and ``probe: auth`` the messaging bot."""
    return "calling" if scenario.kind == "call" or scenario.probe == "auth-calling" else "messaging"


SKIP_REASONS = {
    "calling": "needs a calling bot: give --bot URL (or bot: in --config)",
    "messaging": "needs a messaging bot: give --messaging-bot URL (or messaging_bot: in --config)",
}
"""Why ``botemu test`` skips a scenario whose bot was not given."""


def split_by_target(
    has_calling: bool,
    has_messaging: bool,
    scenarios: Sequence[Scenario],
    reasons: Mapping[str, str] = SKIP_REASONS,
) -> tuple[list[Scenario], list[SkippedResult]]:
    """(the scenarios that can run, a ``SkippedResult`` for each of the others): a scenario
    whose bot (``needs``) is not there is skipped with ``reasons[kind]``."""
    runnable: list[Scenario] = []
    skipped: list[SkippedResult] = []
    for scenario in scenarios:
        kind = needs(scenario)
        if has_calling if kind == "calling" else has_messaging:
            runnable.append(scenario)
        else:
            skipped.append(SkippedResult(scenario, reasons[kind]))
    return runnable, skipped


def check_target(
    target: TargetSettings, scenarios: Sequence[Scenario]
) -> tuple[list[Scenario], list[SkippedResult]]:
    """Split a run by the bots it was given (``split_by_target``): the scenarios whose bot is
    missing are skipped, the rest run. A run of which nothing can run is refused (ConfigError,
    exit 2), naming the option that is missing."""
    runnable, skipped = split_by_target(
        target.bot is not None, target.messaging_bot is not None, scenarios
    )
    if runnable or not skipped:
        return runnable, skipped
    calls = sum(needs(s) == "calling" for s in scenarios)
    talks = len(scenarios) - calls
    if calls:
        raise ConfigError(f"{_are(calls, 'a call', 'calls')}: give --bot URL (or bot: in --config)")
    raise ConfigError(f"{_are(talks, 'a conversation', 'conversations')}: give "
                      "--messaging-bot URL, with --app-id ID and --app-password (or "
                      f"${ENV_PASSWORD}) for a bot with credentials")  # fmt: skip


def _are(n: int, one: str, many: str) -> str:
    """``1 selected scenario is a call`` / ``2 selected scenarios are calls``."""
    return f"1 selected scenario is {one}" if n == 1 else f"{n} selected scenarios are {many}"
