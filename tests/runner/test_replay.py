"""Recordings replayed against real bots: a ``.transcript`` that botemu exported of a conversation
with the reference echo bot, and ``.chat`` files, green against the same bot and red, at the
right activity and field, against a changed one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.cli import main
from emulator.runner.runner import Runner, ScenarioResult, Target
from emulator.scenario.loader import load_scenario
from emulator.scenario.model import Scenario, Turn
from emulator.transcripts.store import TranscriptStore
from tests.bots.card_bot import make_bot
from tests.runner.test_runner import APP_ID, PASSWORD, echo, echo_settings
from tests.support import free_port

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


@pytest.fixture
async def echo_runner(store: TranscriptStore, tmp_path: Path) -> AsyncIterator[Runner]:
    """A runner with its in-process botemu, and the echo bot configured against it."""
    port = free_port()
    target = Target(messaging_bot=f"http://127.0.0.1:{port}/api/messages", app_id=APP_ID,
                    app_password=PASSWORD, certs=tmp_path / "certs")  # fmt: skip
    async with Runner(target, store) as runner:
        assert runner.emulator_config is not None
        bot = web.AppRunner(echo.make_app(echo_settings(runner.emulator_config)))
        await bot.setup()
        await web.TCPSite(bot, "127.0.0.1", port).start()
        try:
            yield runner
        finally:
            await bot.cleanup()


def failure(result: ScenarioResult) -> tuple[str, str, str]:
    (only,) = result.failures
    return only.rule, only.where, only.message


async def recorded(echo_runner: Runner, tmp_path: Path) -> Path:
    """A conversation with the echo bot, exported as ``botemu transcript export`` writes it."""
    chat = Scenario(name="chat", messaging=(Turn(text="hello"), Turn(text="again")))
    result = await echo_runner.run(chat)
    assert result.passed, result.failures
    out = tmp_path / "echo.transcript"
    code = main(["transcript", "export", result.transcript_ids[0], "--format", "transcript",
                 "--db", str(tmp_path / "t.db"), "-o", str(out)])  # fmt: skip
    assert code == 0
    return out


def line_of(path: Path, text: str) -> int:
    """The line of the activity whose text is ``text`` in an indented transcript."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if f'"text": "{text}"' in line)
    return next(i for i in range(at, -1, -1) if lines[i].startswith("  {")) + 1


async def test_a_transcript_botemu_exported_replays_green(
    echo_runner: Runner, tmp_path: Path
) -> None:
    path = await recorded(echo_runner, tmp_path)
    scenario = load_scenario(path)
    assert [t.text for t in scenario.messaging or ()] == ["hello", "again"]
    result = await echo_runner.run(scenario)
    assert result.passed, result.failures


async def test_a_changed_bot_fails_at_the_activity_and_field(
    echo_runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = await recorded(echo_runner, tmp_path)
    original = echo.replies_for

    def shouting(activity: Mapping[str, Any]) -> list[Any]:
        out = original(activity)
        for reply in out:
            if reply.activity.get("text") == "echo: again":
                reply.activity["text"] = "ECHO: AGAIN"
        return out

    monkeypatch.setattr(echo, "replies_for", shouting)
    result = await echo_runner.run(load_scenario(path))
    rule, where, message = failure(result)
    assert rule == "EXP-REPLY"
    assert where == f"{path}:{line_of(path, 'echo: again')}"
    assert message == ("activity #5 (after user activity #4 'again'), reply #2 of the run: "
                       "text: expected 'echo: again', got 'ECHO: AGAIN'")  # fmt: skip


async def test_a_missing_reply_names_the_activity_that_never_came(
    echo_runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = await recorded(echo_runner, tmp_path)
    original = echo.replies_for

    def forgetful(activity: Mapping[str, Any]) -> list[Any]:
        return [] if activity.get("text") == "again" else original(activity)

    monkeypatch.setattr(echo, "replies_for", forgetful)
    _, where, message = failure(await echo_runner.run(load_scenario(path)))
    assert where == f"{path}:{line_of(path, 'echo: again')}"
    assert message.startswith("activity #5 (after user activity #4 'again'): expected message "
                              "'echo: again', got no reply (the bot sent 2 replies, 3 expected)")  # fmt: skip


ECHO_CHAT = """\
user=User
bot=EchoBot

bot: Welcome, User! Say something and I will echo it.
user: hello
bot: echo: hello
User: two
lines
EchoBot: echo: two
lines
"""


async def test_a_chat_file_replays_against_the_echo_bot(
    echo_runner: Runner, tmp_path: Path
) -> None:
    path = tmp_path / "echo.chat"
    path.write_text(ECHO_CHAT)
    result = await echo_runner.run(load_scenario(path))
    assert result.passed, result.failures
    path.write_text(ECHO_CHAT.replace("bot: echo: hello", "bot: echo: hullo"))
    rule, where, message = failure(await echo_runner.run(load_scenario(path)))
    assert (rule, where) == ("EXP-REPLY", f"{path}:6")
    assert message.endswith("text: expected 'echo: hullo', got 'echo: hello'")


CARDS_CHAT = """\
user=User
bot=CardBot

bot: Hi! Ask for cards.
user: cards
bot: Here are your cards
[AttachmentLayout=carousel]
[HeroCard
    title=One
    buttons=Pick]
[Attachment=https://example.com/two.png]
[Suggestions=More|Done]
user: done
bot: [Typing][Delay=500]
Bye!
"""


@pytest.mark.parametrize("changed", [False, True])
async def test_a_chat_file_with_cards_and_suggested_actions(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path, changed: bool
) -> None:
    server = await aiohttp_server(make_bot(changed))
    path = tmp_path / "cards.chat"
    path.write_text(CARDS_CHAT)
    target = Target(messaging_bot=str(server.make_url("/api/messages")), certs=tmp_path / "certs")
    async with Runner(target, store) as runner:
        result = await runner.run(load_scenario(path))
    if not changed:
        assert result.passed, result.failures
        return
    rule, where, message = failure(result)
    assert (rule, where) == ("EXP-REPLY", f"{path}:6")
    assert message == ("activity #3 (after user activity #2 'cards'), reply #1 of the run: "
                       "suggestedActions: expected [More, Done], got [More]")  # fmt: skip


def test_botemu_test_refuses_a_malformed_recording_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.transcript").write_text(
        '[\n  {"type": "message", "from": {"role": "user"}},\n  {"type": "message"}\n]\n'
    )
    (tmp_path / "b.chat").write_text("user=Joe\nbot=Lula\n\nbot: hi\n[AttachmentLayout=grid]\n")
    code = main(["test", str(tmp_path), "--messaging-bot", "http://127.0.0.1:9/api/messages",
                 "--db", str(tmp_path / "t.db")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / 'a.transcript'}:3:3: activity #1: expected 'from.role' user or bot" in err
    assert f"{tmp_path / 'b.chat'}:5:1: AttachmentLayout 'grid' is not carousel or list" in err
    assert "Traceback" not in err
