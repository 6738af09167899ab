"""Real Direct Line clients, pinned in directline_clients/package.json, against botemu's Direct
Line and the reference echo bot (examples/echo_bot.py): the client library
(``botframework-directlinejs``, directline_clients/directlinejs.js) and Botium (``botium-core``
with ``botium-connector-directline3``, directline_clients/botium.js), each run by node.

One botemu, one echo bot and one install (the lock file's, cached outside the repository) for
the module; skipped, with the reason, without node and npm.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.channels.directline_support import DirectLineBotemu, install, run_node

pytestmark = pytest.mark.slow

USER = {"id": "dl-user-2", "name": "Ada"}
WELCOME = "Welcome, {name}! Say something and I will echo it."


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install(tmp_path_factory)


@pytest.fixture(scope="module")
def botemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectLineBotemu]:
    running = DirectLineBotemu(tmp_path_factory.mktemp("directline-clients"))
    try:
        running.start()
        yield running
    finally:
        running.stop()
        shutil.rmtree(running.root, ignore_errors=True)


def steps(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {line["step"]: line for line in lines}


def test_the_client_library(node_modules: Path, botemu: DirectLineBotemu) -> None:
    """With the secret, and with a token the test generated: a message sent and the echo bot's
    replies received over the WebSocket; the socket dropped and resumed from its watermark;
    ``reconnect(conversation)``; a refreshed token; a file uploaded from a data: URL and served
    back; the same conversation resumed by polling from its watermark."""
    generated = botemu.generate({"user": USER})
    code, lines, output = run_node(node_modules, ["directlinejs.js"], {
        "DL_DOMAIN": botemu.domain, "DL_SECRET": botemu.secret(), "DL_TOKEN": generated["token"],
        "DL_USER": USER["id"]})  # fmt: skip
    assert code == 0, output
    done = steps(lines)
    # the secret: no user at the start, so the user joins with their first message
    assert sorted(done["secret"]["texts"]) == [WELCOME.format(name="there"), "echo: hello"]
    token = done["token"]
    assert token["welcome"] == WELCOME.format(name="Ada")
    assert token["conversationId"] == generated["conversationId"]
    assert done["dropped"] == {"step": "dropped", "again": ["echo: after a drop"], "sockets": 1}
    assert done["reconnect"]["status"] == 200 and done["reconnect"]["same"]
    assert done["reconnect"]["fields"] == ["conversationId", "expires_in", "streamUrl", "token"]
    assert done["refresh"] == {"step": "refresh", "changed": True, "status": "Online"}
    upload = done["upload"]
    assert upload["attachments"] == [{"contentType": "text/plain", "name": "notes.txt"}]
    assert upload["same"]  # the bytes served back at the attachment's contentUrl
    polling = done["polling"]
    assert polling["conversationId"] == generated["conversationId"]
    assert polling["texts"] == ["by polling", "echo: by polling"]  # nothing before the watermark


@pytest.mark.parametrize("websocket", [pytest.param("true", id="websocket"),
                                       pytest.param("false", id="polling")])  # fmt: skip
def test_botium(node_modules: Path, botemu: DirectLineBotemu, websocket: str) -> None:
    """DIRECTLINE3_DOMAIN and DIRECTLINE3_SECRET set to botemu's: the echo convo passes and a
    wrong expectation fails, naming the line and what the bot said."""
    code, lines, output = run_node(
        node_modules, ["botium.js", "echo.convo.txt", "wrong.convo.txt"],
        {"DL_DOMAIN": botemu.domain, "DL_SECRET": botemu.secret(), "DL_WEBSOCKET": websocket},
    )  # fmt: skip
    assert code == 0, output
    results = {line["name"]: line for line in lines if line["step"] == "convo"}
    assert results["echo"]["passed"], results["echo"]
    wrong = results["wrong"]
    assert not wrong["passed"]
    assert "Line 9" in wrong["error"] and '"echo: hello botium"' in wrong["error"]
    assert "something the bot never says" in wrong["error"]
