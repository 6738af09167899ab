"""The Agents SDK's Node quickstart as the tests run it: ``index.js`` (samples/nodejs/quickstart's
index.ts as node runs it once compiled) with the packages of ``package-lock.json``
(@microsoft/agents-hosting and -hosting-express 1.8.1, installed once per lock file into
``~/.cache/botemu-tests/agents_js/<hash>``), bound to loopback by ``loopback.cjs``, and botemu
with one bot registered and the agent started with nothing but what ``botemu env agents-js
--format json`` prints (``agent_pair``; with ``credentials`` the bot is registered with an app id
and password, without them it is anonymous)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.sdk.harness import Bot, Botemu, botemu_env, sdk_bot_env, serve_bot

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "quickstart.yaml"
READY = r"^Server listening to port "
"""What the quickstart's ``startServer`` prints once it listens."""
GREETING = "Hello and Welcome!"


def agent_argv() -> list[str]:
    node = shutil.which("node")
    assert node is not None
    return [node, "--require", str(HERE / "loopback.cjs"), str(HERE / "index.js")]


def agent_env(node_modules: Path, settings: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: this one without anything of botemu's or the SDK's, the
    installed packages, and ``settings`` (what ``botemu env`` printed)."""
    env = sdk_bot_env(settings)
    for name in list(env):
        if name.upper().startswith(("CONNECTIONS__", "CONNECTIONSMAP__")) or name in (
            "NODE_ENV", "clientId", "clientSecret", "tenantId"):  # fmt: skip
            del env[name]
    return env | {"NODE_PATH": str(node_modules), "NODE_NO_WARNINGS": "1"} | dict(settings)


class Agent(Bot):
    """The quickstart on ``port`` with ``settings`` (``PORT`` among them, from ``botemu env``)."""

    def __init__(self, node_modules: Path, port: int, settings: Mapping[str, str]) -> None:
        assert settings.get("PORT") == str(port), settings
        super().__init__(agent_argv(), agent_env(node_modules, settings), HERE,
                         f"http://127.0.0.1:{port}/api/messages", ready=READY)  # fmt: skip


Pair = tuple[Botemu, Agent]


def agent_pair(
    node_modules: Path,
    state: Path,
    *,
    credentials: tuple[str, str] | None = None,
    tls: bool = False,
) -> Iterator[Pair]:
    """botemu (in ``state``) with the bot registered, and the quickstart given what ``botemu env
    agents-js --format json`` prints for it, for a fixture to yield."""
    yield from serve_bot(state, lambda port, settings: Agent(node_modules, port, settings),
                         credentials=credentials, tls=tls,
                         settings=lambda emulator: botemu_env(emulator, "agents-js"))  # fmt: skip
