"""Streamed replies (emulator/connector/streams.py): a bot streams through the connector
(``tests/bots/streaming_bot.py``); a good stream is stored and shown as one reply with every
chunk kept, and each rule the platform enforces on a stream answers as the platform does and
leaves a finding with its rule id. And replies in the answer to ``deliveryMode:
expectReplies``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import ANONYMOUS_APP_ID, BotRegistration, ServiceConfig
from emulator.connector.errors import BadArgument, ContentStreamNotAllowed
from emulator.connector.models import ConnectorState
from emulator.connector.sender import TokenKind
from emulator.connector.streams import STREAM_KEY, StreamLimits
from emulator.service import EMULATOR, make_app
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.bots.streaming_bot import BIG, SLOW, StreamingBot
from tests.support import control_headers, free_port


@dataclass
class World:
    emulator: TestClient
    bot: StreamingBot
    store: TranscriptStore


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    bot = StreamingBot()
    bot_port = free_port()
    runner = web.AppRunner(bot.app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    port = free_port()
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(ANONYMOUS_APP_ID, "", f"http://127.0.0.1:{bot_port}/api/messages",
                        anonymous=True),
    ))  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    emulator = TestClient(TestServer(app, host="127.0.0.1", port=port),
                          headers=control_headers(app))  # fmt: skip
    await emulator.start_server()
    try:
        yield World(emulator, bot, store)
    finally:
        await emulator.close()
        await runner.cleanup()
        store.close()


async def converse(world: World, text: str, chunks: int, **fields: Any) -> str:
    """Send ``text``; wait until the bot has sent ``chunks`` chunks."""
    emulator = world.emulator.app[EMULATOR]
    activity = {"type": "message", "text": text, **fields} if fields else None
    conversation_id, _, answer = await emulator.chat(ANONYMOUS_APP_ID, text, None,
                                                     TokenKind.CONNECTOR, activity)  # fmt: skip
    assert answer.status == 200
    for _ in range(200):
        if len(world.bot.answers) >= chunks:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)  # the transcript's events of the last exchange
    return conversation_id


async def stored(world: World, conversation_id: str) -> list[dict[str, Any]]:
    answer = await world.emulator.get(f"/_botemu/conversations/{conversation_id}/activities")
    assert answer.status == 200
    activities: list[dict[str, Any]] = (await answer.json())["activities"]
    return [a for a in activities if (a.get("from") or {}).get("role") != "user"]


def rules(world: World, conversation_id: str) -> list[str]:
    events = world.store.events(conversation_id)
    return [e.payload["rule"] for e in events if e.kind == EventKind.FINDING
            and e.payload["rule"] != "CONN-ANONYMOUS-BOT"]  # fmt: skip


@pytest.mark.parametrize("plan", ["good", "python", "teams"])
async def test_a_good_stream_is_stored_as_one_reply_with_every_chunk(
    world: World, plan: str
) -> None:
    conversation_id = await converse(world, plan, 4 if plan != "python" else 3)
    assert {status for status, _ in world.bot.answers} == {200}
    stream_id = world.bot.answers[0][1]["id"]
    if plan == "python":
        assert stream_id == "b0t-chosen-5tream"  # the id the bot chose itself
    assert all(body == {"id": stream_id} for _, body in world.bot.answers)
    (reply,) = [
        a for a in await stored(world, conversation_id) if a["type"] != "conversationUpdate"
    ]
    assert reply["type"] == "message" and reply["id"] == stream_id
    assert reply["text"] == ("Hi there" if plan == "python" else "Hello, world!")
    stream = reply[STREAM_KEY]
    assert stream["id"] == stream_id and stream["state"] == "final"
    assert len(stream["chunks"]) == len(world.bot.answers)
    assert [c["type"] for c in stream["chunks"]][-1] == "message"
    assert all(c["id"] == stream_id for c in stream["chunks"])
    assert rules(world, conversation_id) == []
    requests = [e for e in world.store.events(conversation_id) if e.kind == EventKind.HTTP_REQUEST
                and "streamSequence" in str(e.payload.get("body"))]  # fmt: skip
    assert len(requests) == len(world.bot.answers)  # the transcript holds every chunk


@pytest.mark.parametrize(
    ("plan", "chunks", "status", "code", "rule"),
    [
        pytest.param(
            "shrink", 3, 403, "ContentStreamNotAllowed", "CONN-STREAM-SHRINK", id="shrink"
        ),
        pytest.param(
            "order",
            4,
            202,
            "ContentStreamSequenceOrderPreConditionFailed",
            "CONN-STREAM-ORDER",
            id="order",
        ),
        pytest.param(
            "after-final", 3, 403, "ContentStreamNotAllowed", "CONN-STREAM-ENDED", id="after-final"
        ),
        pytest.param("no-id", 2, 400, "BadArgument", "CONN-STREAM-ID", id="no-id"),
        pytest.param("unknown-id", 2, 400, "BadArgument", "CONN-STREAM-ID", id="unknown-id"),
        pytest.param("big", 2, 403, "ContentStreamNotAllowed", "CONN-STREAM-SIZE", id="size"),
        pytest.param("bad-entity", 2, 400, "BadArgument", "CONN-STREAM-ENTITY", id="entity"),
        pytest.param(
            "slow", 2, 403, "ContentStreamNotAllowed", "CONN-STREAM-TIMEOUT", id="timeout"
        ),
    ],
)
async def test_each_broken_rule_answers_as_the_platform_and_is_a_finding(
    world: World, plan: str, chunks: int, status: int, code: str, rule: str
) -> None:
    world.emulator.app[EMULATOR].connector.stream_limits = StreamLimits(seconds=SLOW / 2)
    conversation_id = await converse(world, plan, chunks)
    refused = [(s, body) for s, body in world.bot.answers if s != 200]
    assert [s for s, _ in refused] == [status]
    assert refused[0][1]["error"]["code"] == code
    assert rules(world, conversation_id) == [rule]
    (reply,) = [
        a for a in await stored(world, conversation_id) if a["type"] != "conversationUpdate"
    ]
    assert STREAM_KEY in reply  # what was accepted is still one reply
    if rule == "CONN-STREAM-TIMEOUT":
        assert reply[STREAM_KEY]["state"] == "expired"
    assert len(reply[STREAM_KEY]["chunks"]) == chunks - 1


def _state(channel: str) -> tuple[ConnectorState, str]:
    state = ConnectorState(service_url="http://127.0.0.1:1", clock=lambda: 1000.0)
    return state, state.open_conversation("bot", {"id": "u1"}, channel_id=channel).id


def _chunk(kind: str, sequence: int, **info: Any) -> dict[str, Any]:
    return {"type": "message" if kind == "final" else "typing", "text": "x",
            "entities": [{"type": "streaminfo", "streamType": kind, "streamSequence": sequence,
                          **info}]}  # fmt: skip


def test_a_channel_that_does_not_stream_refuses_a_stream() -> None:
    """CONN-STREAM-CHANNEL"""
    state, conversation_id = _state("slack")
    with pytest.raises(ContentStreamNotAllowed) as caught:
        state.post_activity(conversation_id, _chunk("streaming", 1))
    assert caught.value.finding is not None and caught.value.finding.rule == "CONN-STREAM-CHANNEL"
    assert state.conversation(conversation_id).activities == []


@pytest.mark.parametrize("entity", [
    pytest.param({"streamSequence": 0}, id="sequence-zero"),
    pytest.param({"streamSequence": "2"}, id="sequence-text"),
    pytest.param({"streamSequence": True}, id="sequence-bool"),
    pytest.param({"streamId": 7}, id="id-number"),
    pytest.param({"streamType": None}, id="no-type"),
])  # fmt: skip
def test_a_malformed_streaminfo_is_a_bad_argument(entity: dict[str, Any]) -> None:
    """CONN-STREAM-ENTITY"""
    state, conversation_id = _state("webchat")
    chunk = _chunk("streaming", 1)
    chunk["entities"][0].update(entity)
    with pytest.raises(BadArgument) as caught:
        state.post_activity(conversation_id, chunk)
    assert caught.value.finding is not None and caught.value.finding.rule == "CONN-STREAM-ENTITY"


def test_a_chunk_of_the_wrong_type_is_a_bad_argument() -> None:
    """CONN-STREAM-ENTITY: chunks are typing activities, the final one a message."""
    state, conversation_id = _state("webchat")
    chunk = _chunk("streaming", 1)
    chunk["type"] = "message"
    with pytest.raises(BadArgument) as caught:
        state.post_activity(conversation_id, chunk)
    assert caught.value.finding is not None and caught.value.finding.rule == "CONN-STREAM-ENTITY"


def test_too_many_chunks_is_too_large() -> None:
    """CONN-STREAM-SIZE: a bound on the chunks of one stream."""
    state, conversation_id = _state("msteams")
    state.stream_limits = StreamLimits(chunks=2)
    stream_id = state.post_activity(conversation_id, _chunk("streaming", 1))
    state.post_activity(conversation_id, _chunk("streaming", 2, streamId=stream_id))
    with pytest.raises(ContentStreamNotAllowed) as caught:
        state.post_activity(conversation_id, _chunk("streaming", 3, streamId=stream_id))
    assert caught.value.finding is not None and caught.value.finding.rule == "CONN-STREAM-SIZE"
    assert BIG > StreamLimits().text_bytes


def test_listeners_hear_each_chunk_and_the_stream_stays_one_activity() -> None:
    state, conversation_id = _state("directline")
    heard: list[dict[str, Any]] = []
    state.add_listener(lambda _c, activity: heard.append(activity))
    stream_id = state.post_activity(conversation_id, _chunk("informative", 1))
    state.post_activity(conversation_id, _chunk("final", 2, streamId=stream_id))
    assert [a["type"] for a in heard] == ["typing", "message"]
    assert STREAM_KEY not in heard[0] and heard[1]["id"] == stream_id
    (head,) = state.conversation(conversation_id).activities
    assert head["type"] == "message" and head[STREAM_KEY]["state"] == "final"
    assert [m["id"] for m in state.activity_members(conversation_id, stream_id)] == ["bot", "u1"]


async def test_expect_replies_come_back_in_the_answer_and_are_stored(world: World) -> None:
    conversation_id = await converse(world, "hi", 0, deliveryMode="expectReplies")
    texts = [a.get("text") for a in await stored(world, conversation_id)
             if a["type"] == "message"]  # fmt: skip
    assert texts == ["Echo: hi", "and one more"]
    notes = [e.payload for e in world.store.events(conversation_id)
             if e.kind == EventKind.NOTE and "expected_reply" in e.payload]  # fmt: skip
    assert [n["expected_reply"]["text"] for n in notes] == ["Echo: hi", "and one more"]
    assert world.bot.answers == []  # nothing through the connector
