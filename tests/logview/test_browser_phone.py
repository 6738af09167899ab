"""The phone (``#/phone``) in a real browser: Playwright driving the system's Chromium, as in
``test_browser.py`` (skipped, with the reason, without Chromium or playwright).

botemu runs with the reference IVR bot (examples/ivr_bot.py) registered by its calling endpoint.
The calls run five times faster than real time (``#/phone?pace=0.2``: the page asks for it), so
that the bot's 9-second menu lasts under two seconds. Every wait is bounded.

``test_the_phone_screenshot`` writes ``docs/images/phone.png`` when it is missing or when
``BOTEMU_SCREENSHOT=1``; otherwise it only takes the picture.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from emulator.config import BotRegistration
from tests.logview.conftest import LiveBotemu, load_example
from tests.support import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.logview.conftest import Tab

pytestmark = pytest.mark.browser

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "images" / "phone.png"
IVR_APP_ID = "33333333-4444-5555-6666-777777777777"
WAIT_MS = 15_000


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


class PhoneBotemu(LiveBotemu):
    """The log view's botemu, with the reference IVR bot registered by its calling endpoint."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.ivr_port = free_port()
        self.ivr_url = f"http://127.0.0.1:{self.ivr_port}/api/calls"
        ivr = BotRegistration(IVR_APP_ID, "", None, calling_endpoint=self.ivr_url, name="IVR")
        self.config = replace(self.config, bots=(*self.config.bots, ivr))

    def start(self) -> None:
        super().start()
        self.run(self._serve(load_example("ivr_bot").make_app(), self.ivr_port))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoneBotemu]:
    botemu = PhoneBotemu(tmp_path_factory.mktemp("phone"))
    try:
        botemu.start()
        yield botemu
    finally:
        botemu.stop()
        shutil.rmtree(botemu.root, ignore_errors=True)


def call(tab: Tab) -> Page:
    """The phone page, a call to the IVR bot placed, its first prompt playing."""
    page = tab.page
    response = page.goto("/#/phone?pace=0.2")
    assert response is not None and response.status == 200
    expect(page.locator("#phone-status")).to_contain_text("Ready")
    page.get_by_role("button", name="Call", exact=True).click()
    expect(page.locator("#phone-playing")).to_contain_text("Welcome to the botemu demo line",
                                                           timeout=WAIT_MS)  # fmt: skip
    return page


def test_a_call_from_the_dial_pad_to_its_hang_up(live: PhoneBotemu, tab: Tab) -> None:
    page = call(tab)
    playing = page.locator("#phone-playing")
    expect(playing).to_contain_text("For sales, press 1", timeout=WAIT_MS)
    page.get_by_role("button", name="1", exact=True).click()  # during the menu: a barge-in
    expect(playing).to_contain_text("Please enter your account number", timeout=WAIT_MS)
    page.get_by_role("button", name="Hang up", exact=True).click()
    expect(page.locator("#phone-status")).to_contain_text("Call ended: caller hung up",
                                                          timeout=WAIT_MS)  # fmt: skip
    ladder = page.locator("#phone-ladder")
    expect(ladder).to_contain_text("choice=sales")
    call_id = page.locator("#phone-call-page").get_attribute("href")
    assert call_id and call_id.startswith("#/calls/")
    stored = live.store.call(call_id.removeprefix("#/calls/"))
    assert stored is not None and stored.end_reason == "caller hung up"
    menu = [e.payload for e in live.store.events(stored.id)
            if e.payload.get("operation_id") == "menu-1" and e.payload.get("kind") == "prompt played"]  # fmt: skip
    assert menu and menu[0]["interrupted"] is True  # the key cut the menu prompt
    page.goto("/#/")
    expect(
        page.locator(f'[data-call-id="{stored.id}"], a[href="#/calls/{stored.id}"]').first
    ).to_be_visible()
    assert not tab.errors


def test_silence_runs_the_timer_out_into_the_re_prompt(live: PhoneBotemu, tab: Tab) -> None:
    page = call(tab)
    expect(page.locator("#phone-timer")).to_contain_text("initial silence", timeout=WAIT_MS)
    expect(page.locator("#phone-playing")).to_contain_text("Sorry, I did not catch that",
                                                           timeout=WAIT_MS)  # fmt: skip
    page.keyboard.press("3")  # the keyboard works as the dial pad
    expect(page.locator("#phone-playing")).to_contain_text("leave a message", timeout=WAIT_MS)
    page.get_by_role("button", name="Hang up", exact=True).click()
    expect(page.locator("#phone-status")).to_contain_text("Call ended", timeout=WAIT_MS)
    assert not tab.errors


def test_the_phone_screenshot(live: PhoneBotemu, tab: Tab) -> None:
    page = call(tab)
    expect(page.locator("#phone-playing")).to_contain_text("For sales, press 1", timeout=WAIT_MS)
    page.get_by_role("button", name="1", exact=True).click()
    expect(page.locator("#phone-playing")).to_contain_text("account number", timeout=WAIT_MS)
    picture = page.screenshot(full_page=False)
    if os.environ.get("BOTEMU_SCREENSHOT") == "1" or not SCREENSHOT.exists():
        SCREENSHOT.write_bytes(picture)
    page.get_by_role("button", name="Hang up", exact=True).click()
    expect(page.locator("#phone-status")).to_contain_text("Call ended", timeout=WAIT_MS)
