"""What the connector sends a bot, beyond the activity: no cookie of the bot's ever comes back."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import ANONYMOUS_APP_ID, BotRegistration, ServiceConfig
from emulator.connector.sender import TokenKind
from emulator.service import EMULATOR, make_app
from emulator.transcripts.store import TranscriptStore
from tests.support import control_headers, cookie_bot, free_port


async def test_a_cookie_the_bot_sets_never_comes_back(tmp_path: Path) -> None:
    """The connector keeps no cookies (it sends a bot's activities from many machines). Before,
    botemu's client session kept them: a bot on ``localhost`` that set one in its answer got it
    back with the next activity, and one that kept its state there worked here and nowhere
    else."""
    async with cookie_bot("/api/messages", lambda request, body: web.Response()) as (
        port,
        cookies,
    ):
        config = ServiceConfig(port=free_port(), certs_dir=tmp_path / "certs", bots=(
            BotRegistration(ANONYMOUS_APP_ID, "", f"http://localhost:{port}/api/messages",
                            anonymous=True),
        ))  # fmt: skip
        with TranscriptStore(tmp_path / "t.db") as store:
            service = make_app(config, store)
            client = TestClient(TestServer(service, host="127.0.0.1", port=config.port),
                                headers=control_headers(service))  # fmt: skip
            await client.start_server()
            try:
                emulator = service[EMULATOR]
                conversation, _, first = await emulator.chat(ANONYMOUS_APP_ID, "hi", None,
                                                             TokenKind.CONNECTOR)  # fmt: skip
                _, _, second = await emulator.chat(ANONYMOUS_APP_ID, "again", conversation,
                                                   TokenKind.CONNECTOR)  # fmt: skip
            finally:
                await client.close()
    assert first.status == second.status == 200
    assert cookies == [None] * 3, cookies  # the member who joined, "hi", "again"
