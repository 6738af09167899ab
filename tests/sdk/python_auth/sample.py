"""The platform's authentication sample for Python as the tests run it: ``bot/`` is
BotBuilder-Samples' samples/python/18.bot-authentication (its ``config.py`` reads ``PORT``),
``bot/teams_app.py`` the same as a Teams bot; a Python with ``requirements.txt`` (this
interpreter when it has those versions, else a virtual environment made once per pin set in
``~/.cache/botemu-tests/python_auth/<hash>``); and botemu with the bot registered with an app id
and password, the sample started with nothing but what ``botemu env botbuilder-python --format
json`` prints and the ``ConnectionName`` it reads."""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from tests.sdk.harness import (
    Bot,
    Botemu,
    botemu_env,
    cache_root,
    install_step,
    install_whole,
    sdk_bot_env,
    serve_bot,
)

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
BOT = HERE / "bot"
INSTALL_TIMEOUT = 600.0
APP_ID = "5d2e8a10-3b4c-4f5e-8a9b-0c1d2e3f4a5b"
APP_PASSWORD = "python-auth-s3cret"
CONNECTION = "graph"
"""The sample's ``ConnectionName``: a name botemu was not told of, made on first use."""


def _pins() -> dict[str, str]:
    pins = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def _has_pins() -> bool:
    try:
        return all(metadata.version(name) == version for name, version in _pins().items())
    except metadata.PackageNotFoundError:
        return False


def python_auth() -> Path:
    """A Python with the pins of ``requirements.txt`` (skipped when it cannot be installed)."""
    if _has_pins():
        return Path(sys.executable)
    key = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    key += f"-py{sys.version_info.major}{sys.version_info.minor}"
    target = cache_root("python_auth") / key
    if not (target / "installed").is_file():
        shutil.rmtree(target, ignore_errors=True)
        install_whole(target, _install_venv)
    return target / "bin" / "python"


def _install_venv(work: Path) -> None:
    steps = [
        [sys.executable, "-m", "venv", str(work)],
        [str(work / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
    ]  # fmt: skip
    for argv in steps:
        install_step(argv, timeout=INSTALL_TIMEOUT,
                     slow=f"installing the Python SDK took over {INSTALL_TIMEOUT:g} s",
                     failed=f"the Python SDK ({REQUIREMENTS.name}) cannot be installed")  # fmt: skip
    (work / "installed").write_text(REQUIREMENTS.read_text())


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
