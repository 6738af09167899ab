"""Conversations: a conversation with the echo bot, made a scenario and run again (it passes),
and the turns and replies written from a conversation's activities."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from emulator.jsonutil import JSONObject
from emulator.replay.chat import Sent, messaging_lines, replies_lines
from emulator.replay.convert import replay_of
from emulator.replay.masking import DEFAULT_MASKER
from emulator.runner.runner import Runner, Target
from emulator.scenario.loader import load_scenarios_text
from emulator.scenario.model import Scenario, Turn
from emulator.transcripts.store import TranscriptStore
from tests.support import EXAMPLES, free_port, load_module

echo = load_module(EXAMPLES / "echo_bot.py", "echo_bot_for_replay")
APP_ID = "5e7a1c2b-0000-4000-8000-00000000e0b1"
PASSWORD = "replay-s3cret"


@pytest.fixture
async def echo_runner(tmp_path: Path) -> AsyncIterator[tuple[Runner, TranscriptStore]]:
    """A runner with its in-process botemu, and the echo bot configured against it."""
    port = free_port()
    target = Target(messaging_bot=f"http://127.0.0.1:{port}/api/messages", app_id=APP_ID,
                    app_password=PASSWORD, certs=tmp_path / "certs")  # fmt: skip
    with TranscriptStore(tmp_path / "t.db") as store:
        async with Runner(target, store) as runner:
            assert runner.emulator_config is not None
            p = runner.emulator_config.placeholders()
            settings = echo.Settings(
                app_id=APP_ID, app_password=PASSWORD, token_url=p.token_url,
                connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
                connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
                emulator_issuer=p.emulator_issuer,
            )  # fmt: skip
            bot = web.AppRunner(echo.make_app(settings))
            await bot.setup()
            await web.TCPSite(bot, "127.0.0.1", port).start()
            try:
                yield runner, store
            finally:
                await bot.cleanup()


async def test_a_conversation_replays_and_passes(
    echo_runner: tuple[Runner, TranscriptStore],
) -> None:
    runner, store = echo_runner
    turns = (
        Turn(text="hello", wait=2.0),
        Turn(type="event", name="ping", value={"n": 1, "s": "${x}"}, wait=0.2),
        Turn(type="invoke", name="task/fetch", value={}, wait=0.2),
        Turn(text="again 42", wait=2.0),
    )
    first = await runner.run(Scenario(name="chat", messaging=turns, path=Path("c.yaml"), line=1))
    assert first.passed
    replay = replay_of(store, first.transcript_ids[0])
    assert replay.notes == ()
    lines = replay.text.splitlines()
    assert lines[1] == f"# Replay of conversation {first.transcript_ids[0]}"
    assert '  - {event: {name: "ping", value: {"n": 1, "s": "$${x}"}}}  # turn 2' in lines
    assert '    - {type: message, text: {equals: "echo: hello"}, index: 1}  # reply #1' in lines
    (scenario,) = load_scenarios_text(replay.text, name="chat.yaml")
    assert scenario.messaging is not None and scenario.messaging[1].value == {"n": 1, "s": "${x}"}
    again = await runner.run(scenario)
    assert again.passed, [f.message for f in again.failures]


def sent(by: str, wall: float, kind: str, text: str | None = None) -> Sent:
    return Sent(by, wall, {"type": kind} if text is None else {"type": kind, "text": text})


def test_turns_skip_the_opening_wait_for_slow_replies_and_note_what_is_not_a_turn() -> None:
    conversation = [
        sent("user", 0.0, "conversationUpdate"),
        sent("bot", 0.1, "message", text="Welcome"),
        sent("user", 1.0, "message", text="slow"),
        sent("bot", 4.2, "message", text="done"),
        sent("user", 5.0, "typing"),
        sent("user", 6.0, "conversationUpdate"),
        sent("user", 7.0, "message", text="yes"),
    ]
    lines, notes = messaging_lines(conversation)
    assert lines == [
        "messaging:",
        '  - {say: "slow", wait: 5s}  # turn 1',
        "  - {conversationUpdate: {}}  # turn 2",
        '  - "yes"  # turn 3',
    ]
    assert notes == ["a typing activity is not a turn: left out"]


def test_replies_with_attachments_actions_and_volatile_text() -> None:
    actions: JSONObject = {"actions": [{"title": "Red", "value": "r"}, {"value": "Blue"}]}
    conversation = [
        Sent(
            "bot",
            0.0,
            {
                "type": "message",
                "text": "Order 1234 ships on 2026-12-01.",
                "attachments": [{}, {}],
                "suggestedActions": actions,
            },
        ),
        sent("bot", 0.1, "typing"),
    ]
    loose = replies_lines(conversation, strict=False, masker=DEFAULT_MASKER)
    assert loose[1].startswith(r'    - {type: message, text: {matches: "^Order \\+?\\d')
    assert loose[1].endswith(', attachments: 2, suggested_actions: ["Red", "Blue"], index: 0}  '
                             "# reply #0")  # fmt: skip
    assert loose[2] == "    - {type: typing, index: 1}  # reply #1"
    strict = replies_lines(conversation, strict=True, masker=DEFAULT_MASKER)
    assert 'text: {equals: "Order 1234 ships on 2026-12-01."}' in strict[1]
