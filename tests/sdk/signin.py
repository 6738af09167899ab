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


def sign_in_from_the_web_chat(emulator: Botemu, app_id: str, ask: str, signed_in: str) -> None:
    """In Chromium (Playwright, as tests/logview/test_browser_signin.py drives it): botemu's web
    chat with the bot ``app_id``; ``ask`` sent, the OAuth card's button opens botemu's sign-in
    page, the first test user consents, and the bot then says something matching
    ``signed_in`` (a pattern; ``{name}`` and ``{upn}`` stand for the user's). Skipped without
    Chromium or playwright (``launched``)."""
    import re

    from playwright.sync_api import expect

    from tests.logview.conftest import launched

    timeout = int(TURN * 1000)
    with launched() as browser:
        context = browser.new_context(base_url=emulator.url)
        context.set_default_timeout(timeout)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/#/chat")
        page.get_by_label("Bot", exact=True).select_option(app_id)
        log = page.locator("#livechat-log")
        page.get_by_label("Message", exact=True).fill(ask)
        page.get_by_role("button", name="Send", exact=True).click()
        button = log.locator(".signin-link").first
        expect(button).to_be_visible(timeout=timeout)
        with page.context.expect_page() as opened:
            button.click()
        popup = opened.value
        popup.wait_for_load_state()
        popup.get_by_role("button", name="Consent").click()
        expect(popup.locator("#code")).to_have_text(re.compile(r"^\d{6}$"))
        popup.close()
        wanted = signed_in.format(name=re.escape(USER.name), upn=re.escape(USER.upn))
        said = log.locator('[data-from="bot"]').filter(has_text=re.compile(wanted))
        expect(said).to_have_count(1, timeout=timeout)
        assert not errors, errors
        context.close()
