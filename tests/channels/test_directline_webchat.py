"""Web Chat's own bundle (``botframework-webchat``'s UMD ``dist/webchat.js``, pinned in
directline_support.WEBCHAT) in Chromium, on a page of another origin, against botemu's
Direct Line: the site of examples/webchat/ (``site.py`` serving ``index.html``, the bundle and a
token it asks Direct Line for with the bot's secret), on a loopback port of its own.

With the reference echo bot: the welcome shows and a typed message is echoed; with the
suggested-actions bot (tests/bots/actions_bot.py): a suggested action is clicked and its value
answered. Skipped, with the reason, without Chromium, playwright, node or npm.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.channels.directline_support import ACTIONS_BOT, DirectLineBotemu, webchat_bundle
from tests.logview.conftest import APP_ID, launched
from tests.support import EXAMPLES, free_port, load_module

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT_MS = 8_000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DirectLineBotemu, str]]:
    """botemu with its bots, and the site that hosts Web Chat: (botemu, the site's origin)."""
    bundle = webchat_bundle()
    running = DirectLineBotemu(tmp_path_factory.mktemp("directline-webchat"))
    try:
        running.start()
        port = free_port()
        origin = f"http://127.0.0.1:{port}"
        hosting = load_module(EXAMPLES / "webchat" / "site.py", "webchat_site")
        bots = {"": running.secret(APP_ID), "actions": running.secret(ACTIONS_BOT)}
        running.run(running._serve(hosting.make_site(running.domain, bots, bundle, origin), port))
        yield running, origin
    finally:
        running.stop()
        shutil.rmtree(running.root, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with launched() as browser:
        yield browser


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 900, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    try:
        yield opened
        assert problems == [], problems  # no CORS refusal, no failed request, no script error
    finally:
        context.close()


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


def say(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message input box")
    box.fill(text)
    box.press("Enter")


def test_web_chat_greets_and_echoes(site: tuple[DirectLineBotemu, str], page: Page) -> None:
    botemu, origin = site
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url}"))
    page.goto(f"{origin}/")
    expect(page.get_by_text("Welcome, Ada! Say something and I will echo it.").first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    say(page, "hello from Web Chat")
    expect(page.get_by_text("echo: hello from Web Chat").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Connectivity Status: Connected").first).to_be_attached()
    to_botemu = [r for r in requests if r.split(" ", 1)[1].startswith(botemu.domain)]
    assert f"POST {botemu.domain}/conversations" in to_botemu  # straight to botemu, cross-origin


def test_a_suggested_action_is_clicked(site: tuple[DirectLineBotemu, str], page: Page) -> None:
    _, origin = site
    page.goto(f"{origin}/?bot=actions")
    expect(page.get_by_text("Hello! Say colours to pick one.").first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    say(page, "colours")
    page.get_by_role("button", name="Red").first.click()
    expect(page.get_by_text("you picked red").first).to_be_visible(timeout=TIMEOUT_MS)
