"""``botemu chat`` and streamed replies: the final text printed once (on a terminal, the line
updated in place as chunks come); the replies of an answer to expectReplies printed as replies."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest
from aiohttp import web

from emulator.cli import main
from emulator.cli.chat import ChatPrinter
from tests.bots.streaming_bot import StreamingBot
from tests.support import free_port


async def test_chat_prints_a_streamed_reply_once(capsys: pytest.CaptureFixture[str]) -> None:
    bot_port, emulator_port = free_port(), free_port()
    runner = web.AppRunner(StreamingBot().app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        code = await asyncio.to_thread(main, [
            "chat", "--bot", f"http://127.0.0.1:{bot_port}/api/messages", "--send", "good",
            "--wait", "3", "--emulator", f"http://127.0.0.1:{emulator_port}",
        ])  # fmt: skip
    finally:
        await runner.cleanup()
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [line for line in lines if line.startswith("bot")] == ["bot> Hello, world!"]
    assert "\r" not in "".join(lines)  # not a terminal: no line updated in place


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _exchange(seq: int, activity: dict[str, Any], status: int = 200) -> list[dict[str, Any]]:
    path = "/v3/conversations/c1/activities/a1"
    request = {"method": "POST", "path": path, "body": json.dumps(activity)}
    return [{"seq": seq, "kind": "http.request", "payload": request},
            {"seq": seq + 1, "kind": "http.response", "payload": {"status": status,
                                                                  "body": '{"id":"s1"}'}}]  # fmt: skip


def _chunk(kind: str, text: str, sequence: int) -> dict[str, Any]:
    return {"type": "message" if kind == "final" else "typing", "text": text,
            "entities": [{"type": "streaminfo", "streamType": kind, "streamSequence": sequence}]}  # fmt: skip


def test_on_a_terminal_the_line_is_updated_in_place() -> None:
    out = Terminal()
    printer = ChatPrinter(out)
    events = [*_exchange(1, _chunk("informative", "Thinking", 1)),
              *_exchange(3, _chunk("streaming", "Hel", 2)),
              *_exchange(5, _chunk("final", "Hello", 3))]  # fmt: skip
    for event in events:
        printer.show("c1", event)
    text = out.getvalue()
    assert text == ("\r\x1b[2Kbot> Thinking\r\x1b[2Kbot> Hel\r\x1b[2Kbot> Hello\n")
    assert printer.replies == 1


def test_a_refused_chunk_ends_the_line_and_says_why() -> None:
    out = Terminal()
    printer = ChatPrinter(out)
    for event in [*_exchange(1, _chunk("streaming", "A", 1)),
                  *_exchange(3, _chunk("streaming", "A", 1), status=202)]:  # fmt: skip
        printer.show("c1", event)
    lines = out.getvalue().split("\n")
    assert lines[0] == "\r\x1b[2Kbot> A"
    assert lines[1].startswith("  ! the connector refused the bot (HTTP 202)")
    assert printer.replies == 0


def test_expected_replies_are_printed_as_replies() -> None:
    out = io.StringIO()
    printer = ChatPrinter(out)
    reply = {"type": "message", "text": "Echo: hi"}
    printer.show("c1", {"seq": 1, "kind": "note", "payload": {"expected_reply": reply}})
    assert out.getvalue() == "bot> Echo: hi\n"
    assert printer.replies == 1
