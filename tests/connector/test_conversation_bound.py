"""A bot keeps at most ``MemoryLimits.conversations_per_bot`` conversations it created itself
(``POST /v3/conversations``; docs/security.md, Memory): past them, 429 ``TooManyRequests`` with
the connector's error body, until a reset. Nothing else forgets a conversation, so before the
bound a bot that created conversations in a loop held memory without end (the old build
af4a31e: 5,000 conversations with a 64 KB first message each, 335 MiB peak and growing; now
81 MiB, 4,000 of them refused; it had no ``MemoryLimits`` at all)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.cli import build_parser
from emulator.cli.options import service_config
from emulator.config import MemoryLimits
from emulator.connector.errors import ConnectorError, TooManyRequests
from emulator.connector.models import ConnectorState
from emulator.connector.routes import make_connector_app
from emulator.errors import BotemuError
from emulator.jsonutil import JSONObject
from tests.connector.test_routes import auth, fake_verifier

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[..., Awaitable[Client]]

USER: JSONObject = {"id": "user-1", "name": "Ada"}
PARAMS: JSONObject = {"members": [USER], "activity": {"type": "message", "text": "hi"}}


def bounded(n: int) -> ConnectorState:
    return ConnectorState(service_url="http://127.0.0.1:9070",
                          limits=MemoryLimits(conversations_per_bot=n))  # fmt: skip


def test_the_default_bound_is_a_thousand_conversations_per_bot() -> None:
    state = ConnectorState(service_url="http://127.0.0.1:9070")
    assert state.conversations_per_bot == MemoryLimits().conversations_per_bot == 1000


def test_a_bot_past_its_bound_is_refused_until_a_reset() -> None:
    state = bounded(3)
    ids = [state.create_conversation("botA", PARAMS)["id"] for _ in range(3)]
    with pytest.raises(TooManyRequests) as refused:
        state.create_conversation("botA", PARAMS)
    error = refused.value
    assert error.status == 429 and error.to_json()["error"] == {
        "code": "TooManyRequests",
        "message": "bot 'botA' has created 3 conversations, the most botemu keeps for one bot "
        "(botemu serve --max-conversations-per-bot; POST /_botemu/reset frees them)",
    }
    assert len(state.conversations("botA")["conversations"]) == 3  # nothing was created
    for conversation_id in ids:  # the bot's conversations go on
        state.post_activity(conversation_id, {"type": "message", "text": "still here"})
    state.create_conversation("botB", PARAMS)  # another bot has its own bound
    state.reset()
    state.create_conversation("botA", PARAMS)


def test_a_refused_body_counts_nothing_and_botemus_own_conversations_are_not_counted() -> None:
    """Conversations botemu opens for a person (chat, Direct Line with its own bound, the probe)
    are not the bot's doing: they do not use up its bound."""
    state = bounded(2)
    for _ in range(5):
        state.open_conversation("botA", USER)
        with pytest.raises(ConnectorError, match="exactly one member"):
            state.create_conversation("botA", {"members": []})
    state.create_conversation("botA", PARAMS)
    state.create_conversation("botA", PARAMS)
    with pytest.raises(TooManyRequests):
        state.create_conversation("botA", PARAMS)


async def test_post_conversations_past_the_bound_is_a_json_429(
    aiohttp_client: ClientFactory,
) -> None:
    client = await aiohttp_client(make_connector_app(bounded(2), fake_verifier))
    for _ in range(2):
        response = await client.post("/v3/conversations", json=PARAMS, headers=auth())
        assert response.status == 201
    response = await client.post("/v3/conversations", json=PARAMS, headers=auth())
    assert response.status == 429
    assert response.content_type == "application/json"
    body = await response.json()
    assert body["error"]["code"] == "TooManyRequests"
    assert "has created 2 conversations" in body["error"]["message"]
    response = await client.post("/v3/conversations", json=PARAMS, headers=auth("botB"))
    assert response.status == 201


def test_the_bound_is_an_option_of_serve_and_a_key_of_the_configuration_file(
    tmp_path: Path,
) -> None:
    parser = build_parser("serve")
    args = parser.parse_args(["serve", "--max-conversations-per-bot", "7"])
    assert service_config(args).limits.conversations_per_bot == 7
    file = tmp_path / "botemu.yaml"
    file.write_text("limits:\n  conversations_per_bot: 12\n", encoding="utf-8")
    args = parser.parse_args(["serve", "--config", str(file)])
    assert service_config(args).limits.conversations_per_bot == 12
    args = parser.parse_args(["serve", "--config", str(file), "--max-conversations-per-bot", "0"])
    with pytest.raises(BotemuError, match="conversations_per_bot"):
        service_config(args)
