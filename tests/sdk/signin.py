"""What the SDK sign-in tests share: ``botemu chat --sign-in-as`` as a person runs it, in a
terminal of its own (a child process whose standard input the test types into, line by line),
and the user a token is for.

The authentication samples sign in as a person does with them: a message, the OAuth card, the
sign-in (botemu, as the channel: the code typed, or on ``msteams`` the token exchange), the
sample's answers, ``logout``. Each wait is bounded (``TURN``)."""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any

from emulator.tokenservice.model import TestUser, test_users
from tests.sdk.harness import Bot, Botemu, Process, loopback_env
from tests.support import ROOT

TURN = 30.0
"""Seconds a turn (with its sign-in) may take."""
USER: TestUser = test_users()[0]
"""Who signs in: the first of botemu's default test users (the same every run)."""


def chat_session(emulator: Botemu, bot: Bot, *extra: str) -> Process:
    """``botemu chat --bot URL --sign-in-as USER`` (``extra``: more options), reading what is
    typed into it, from botemu's state directory (its CA and control secret)."""
    argv = [sys.executable, "-m", "emulator", "chat", "--bot", bot.url, "--emulator",
            emulator.url, "--sign-in-as", USER.id, "--wait", str(TURN), *extra]  # fmt: skip
    env = loopback_env(os.environ) | {"PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return Process(argv, env, emulator.state, stdin=True)


def say(chat: Process, text: str, answer: str) -> str:
    """Type ``text``; the first line of the answer that matches ``answer`` (a pattern)."""
    start = chat.type(text)
    return chat.wait_for(answer, TURN, start).group(0)


def claims(token: str) -> dict[str, Any]:
    """The claims of a JWT (the sample shows the token; botemu signed it)."""
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return decoded


def newest_notes(emulator: Botemu) -> list[str]:
    """The notes of the newest conversation botemu carries (what the channel did: a sign-in, a
    single sign-on taken or refused)."""
    page = emulator.get("/_logview/api/calls?limit=5&kind=conversation")
    newest = page["calls"][0]["id"]
    export = emulator.get(f"/_logview/api/calls/{newest}/export")
    return [str(e["payload"].get("summary")) for e in export["events"] if e.get("kind") == "note"]
