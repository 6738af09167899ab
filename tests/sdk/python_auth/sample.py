"""The platform's authentication sample for Python as the tests run it: ``bot/`` is
BotBuilder-Samples' samples/python/18.bot-authentication (its ``config.py`` reads ``PORT``),
``bot/teams_app.py`` the same as a Teams bot; a Python with ``tests/sdk/python/requirements.txt``
(the platform's Python SDK, ``botbuilder-dialogs`` for the sample's ``OAuthPrompt`` among its
pins: this interpreter when it has those versions, else the virtual environment the echo bot's
tests use, made once per pin set in ``~/.cache/botemu-tests/python_sdk/<hash>``); and botemu
with the bot registered with an app id and password, the sample started with nothing but what
``botemu env botbuilder-python --format json`` prints and the ``ConnectionName`` it reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.sdk.harness import (
    Bot,
    Botemu,
    botemu_env,
    pinned_python,
    sdk_bot_env,
    serve_bot,
)

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE.parent / "python" / "requirements.txt"
BOT = HERE / "bot"
APP_ID = "5d2e8a10-3b4c-4f5e-8a9b-0c1d2e3f4a5b"
APP_PASSWORD = "python-auth-s3cret"
CONNECTION = "graph"
"""The sample's ``ConnectionName``: a name botemu was not told of, made on first use."""


def python_auth() -> Path:
    """A Python with the pins of ``REQUIREMENTS`` (skipped when it cannot be installed)."""
    return pinned_python(REQUIREMENTS, "python_sdk", "the Python SDK")


class Sample(Bot):
    """``script`` of ``bot/`` on ``port`` with ``settings`` (and ``ConnectionName``)."""

    def __init__(self, script: str, port: int, settings: Mapping[str, str]) -> None:
        env = sdk_bot_env(settings) | {"ConnectionName": CONNECTION, "PORT": str(port),
                                       "PYTHONUNBUFFERED": "1"}  # fmt: skip
        super().__init__([str(python_auth()), script], env, BOT,
                         f"http://127.0.0.1:{port}/api/messages", ready=r"Running on ")  # fmt: skip


def sample_pair(
    state: Path, script: str, extra: dict[str, Any] | None = None
) -> Iterator[tuple[Botemu, Sample]]:
    """botemu over http (the real issuers, as by default; ``extra``: more of its configuration
    file) and ``script`` given ``botemu env``."""
    python_auth()  # skips before anything starts when the SDK cannot be installed
    yield from serve_bot(state, lambda port, settings: Sample(script, port, settings),
                         credentials=(APP_ID, APP_PASSWORD), tls=False, real_issuers=True,
                         settings=lambda emulator: botemu_env(emulator, "botbuilder-python"),
                         extra=extra)  # fmt: skip
