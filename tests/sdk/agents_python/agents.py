"""The Agents SDK's Python quickstart as the tests run it: a Python with the pinned SDK
(``requirements.txt``: microsoft-agents-hosting-aiohttp 1.9.0 and its siblings), made once per
pin set in a cache outside the repository (``~/.cache/botemu-tests/agents_python/<hash>``), the
quickstart's process (``quickstart/src``, unchanged, run as its README says: ``python -m
src.main``), and botemu with one bot registered and the agent started with nothing but what
``botemu env agents-python --format json`` prints (``agent_pair``; with ``credentials`` the bot is
registered with an app id and password, without them it is anonymous)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.sdk.harness import (
    Bot,
    Botemu,
    botemu_env,
    pinned_python,
    sdk_bot_env,
    serve_bot,
)

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
QUICKSTART = HERE / "quickstart"
SCENARIO = HERE / "quickstart.yaml"
READY = r"Running on http://"
"""What the quickstart's aiohttp ``run_app`` prints once it listens."""
GREETING = ("Welcome to the empty agent! This agent is designed to be a starting point for your "
            "own agent development.")  # fmt: skip


def agents_python() -> Path:
    """A Python interpreter with the pinned Agents SDK (skips the test when it cannot be made)."""
    return pinned_python(REQUIREMENTS, "agents_python", "the Agents SDK")


def agent_argv() -> list[str]:
    return [str(agents_python()), "-m", "src.main"]


def agent_env(settings: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: this one without anything of botemu's or the SDK's, and
    ``settings`` (what ``botemu env`` printed)."""
    env = sdk_bot_env(settings)
    for name in list(env):
        if name.upper().startswith(("CONNECTIONS__", "CONNECTIONSMAP__", "AGENTAPPLICATION__")):
            del env[name]
    return env | dict(settings) | {"PYTHONUNBUFFERED": "1"}


class Agent(Bot):
    """The quickstart on ``port`` with ``settings`` (``PORT`` among them, from ``botemu env``)."""

    def __init__(self, port: int, settings: Mapping[str, str]) -> None:
        assert settings.get("PORT") == str(port), settings
        super().__init__(agent_argv(), agent_env(settings), QUICKSTART,
                         f"http://127.0.0.1:{port}/api/messages", ready=READY)  # fmt: skip


Pair = tuple[Botemu, Agent]


def agent_pair(
    state: Path, *, credentials: tuple[str, str] | None = None, tls: bool = False
) -> Iterator[Pair]:
    """botemu (in ``state``) with the bot registered, and the quickstart given what ``botemu env
    agents-python --format json`` prints for it, for a fixture to yield."""
    agents_python()  # skips before anything starts when the SDK cannot be installed
    yield from serve_bot(state, Agent, credentials=credentials, tls=tls,
                         settings=lambda emulator: botemu_env(emulator, "agents-python"))  # fmt: skip
