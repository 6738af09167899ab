"""Sign-in in the web chat, in a real browser (Playwright driving the system's Chromium): the
OAuth card's button opens botemu's sign-in page, the person picks a test user and consents, and
the bot, given the code by the channel, says who signed in; a card with no link is signed in
the same way (the page asks botemu for the link)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from emulator.config import BotRegistration, anonymous_app_id
from tests.bots.oauth_bot import make_bot
from tests.logview.conftest import LiveBotemu
from tests.support import free_port

if TYPE_CHECKING:
    from tests.logview.conftest import Tab

pytestmark = pytest.mark.browser

OAUTH_BOT = anonymous_app_id(1)
NO_LINK_BOT = anonymous_app_id(2)


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


class SignInBotemu(LiveBotemu):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.ports = (free_port(), free_port())
        bots = tuple(BotRegistration(app_id, "", f"http://127.0.0.1:{port}/api/messages",
                                     name=app_id, anonymous=True)
                     for app_id, port in zip((OAUTH_BOT, NO_LINK_BOT), self.ports, strict=True))  # fmt: skip
        self.config = replace(self.config, bots=(*self.config.bots, *bots))

    def start(self) -> None:
        super().start()
        self.run(self._serve(make_bot(), self.ports[0]))
        self.run(self._serve(make_bot(no_link=True), self.ports[1]))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignInBotemu]:
    botemu = SignInBotemu(tmp_path_factory.mktemp("signin"))
    try:
        botemu.start()
        yield botemu
    finally:
        botemu.stop()
        shutil.rmtree(botemu.root, ignore_errors=True)


@pytest.mark.parametrize("bot", [OAUTH_BOT, NO_LINK_BOT])
def test_signing_in_from_the_web_chat(live: SignInBotemu, tab: Tab, bot: str) -> None:
    page = tab.page
    page.goto("/#/chat")
    page.get_by_label("Bot", exact=True).select_option(bot)
    log = page.locator("#livechat-log")
    expect(log.locator('[data-type="conversationUpdate"]')).to_have_count(1)
    for text in ("logout", "login"):  # the user signed in by another test signs out first
        page.get_by_label("Message", exact=True).fill(text)
        page.get_by_role("button", name="Send", exact=True).click()
        if text == "logout":
            expect(log.locator('[data-from="bot"]').filter(has_text="signed out")).to_have_count(1)
    sign_in = log.locator(".signin-link").first
    expect(sign_in).to_be_visible()
    with page.context.expect_page() as opened:
        sign_in.click()
    popup = opened.value
    popup.wait_for_load_state()
    expect(popup.get_by_role("heading")).to_contain_text("Sign in to graph")
    name = popup.locator("label").first.inner_text().split("  ")[0].strip()
    popup.get_by_role("button", name="Consent").click()
    expect(popup.locator("#code")).to_have_text(re.compile(r"^\d{6}$"))
    popup.close()
    expect(log.locator('[data-from="bot"]').filter(has_text="signed in as")).to_have_count(1)
    assert name.split(" ")[0] in log.inner_text()
    assert not tab.errors
