"""What the tests of real Direct Line clients share (test_directline_clients.py, the client
library and Botium in node; test_directline_webchat.py, Web Chat's bundle in Chromium).

``DirectLineBotemu`` is botemu with the reference echo bot, on an event loop of its own in a
thread (``tests.logview.conftest.LiveBotemu``), and the suggested-actions bot of
``tests/bots/actions_bot.py`` beside it; its ``domain``, each bot's ``secret`` (read as botemu's
own clients read it: ``GET /_botemu/config`` with the control secret) and ``generate`` (a token,
as a site's server asks for one). ``install`` installs ``directline_clients/``'s lock file
once, into the cache outside the repository (``tests.sdk.harness.npm_install``); ``webchat_bundle``
is Web Chat's own bundle, from its package (``WEBCHAT``) alone: the page loads nothing else of it,
and its 418 dependencies took a fresh machine half a minute to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from emulator.client import get_json
from emulator.config import BotRegistration, anonymous_app_id
from tests.bots.actions_bot import make_bot as make_actions_bot
from tests.logview.conftest import APP_ID, LiveBotemu
from tests.sdk.harness import loopback_env, loopback_opener, npm_install, npm_pack
from tests.support import free_port

NODE_DIR = Path(__file__).resolve().parent / "directline_clients"
ACTIONS_BOT = anonymous_app_id(1)
NODE_TIMEOUT = 90.0
WEBCHAT = (
    "botframework-webchat",
    "4.18.1",
    "sha512-7jpEUJ7olT62Xm+8eh7BhhIcXVfU2xD4pZDaeBt8K4XcNy6K/83UGIxE9BFkXmHMZ4hDEVOzs5cre07GWuaXzg==",
)
"""Web Chat's package: name, version and the integrity its registry gives."""


class DirectLineBotemu(LiveBotemu):
    """botemu with the echo bot (``APP_ID``) and the anonymous suggested-actions bot."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.actions_port = free_port()
        actions = BotRegistration(
            ACTIONS_BOT, "", f"http://127.0.0.1:{self.actions_port}/api/messages", anonymous=True
        )
        self.config = replace(self.config, bots=(*self.config.bots, actions))
        self.secrets: dict[str, str] = {}

    def start(self) -> None:
        super().start()
        self.run(self._serve(make_actions_bot(), self.actions_port))
        config = self.run(get_json(self.url("/_botemu/config"), certs=self.config.certs_dir))
        self.secrets = dict(config["directline"]["secrets"])

    @property
    def domain(self) -> str:
        return self.url("/v3/directline")

    def secret(self, bot: str = APP_ID) -> str:
        key = bot if bot == APP_ID else f"http://127.0.0.1:{self.actions_port}/api/messages"
        return self.secrets[key]

    def generate(self, body: dict[str, Any], bot: str = APP_ID) -> dict[str, Any]:
        """``POST /tokens/generate`` with the bot's secret, as a site's own server does."""
        request = urllib.request.Request(
            f"{self.domain}/tokens/generate", data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {self.secret(bot)}",
                     "Content-Type": "application/json"},
        )  # fmt: skip
        with loopback_opener().open(request, timeout=10) as response:
            answer: dict[str, Any] = json.load(response)
        return answer


def install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return npm_install(NODE_DIR, "botframework-directlinejs", "the Direct Line clients",
                       tmp_path_factory)  # fmt: skip


def webchat_bundle() -> Path:
    """Web Chat's UMD bundle, ``dist/webchat.js`` of its pinned package."""
    return npm_pack(*WEBCHAT, "Web Chat") / "dist" / "webchat.js"


def run_node(
    node_modules: Path, argv: list[str], env: dict[str, str], timeout: float = NODE_TIMEOUT
) -> tuple[int, list[dict[str, Any]], str]:
    """Run ``directline_clients/<argv[0]>`` with the rest of ``argv``: its exit code, the JSON
    lines it printed, and all it printed."""
    full = loopback_env(os.environ) | {"NODE_PATH": str(node_modules), "NO_COLOR": "1"} | env
    done = subprocess.run(["node", str(NODE_DIR / argv[0]), *argv[1:]], cwd=NODE_DIR, env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip
    output = done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, lines, output
