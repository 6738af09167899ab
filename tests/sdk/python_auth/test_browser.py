"""The platform's Python authentication sample (``sample.py``: app.py as the sample writes it)
signs in from botemu's web chat in Chromium (Playwright, as tests/logview/test_browser_signin.py
drives it): the OAuth card's button opens botemu's sign-in page, the person consents, the code
reaches the sample (typed for the person, as on Web Chat), and the sample shows the token botemu
signed for that user."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sdk.harness import Botemu
from tests.sdk.python_auth.sample import APP_ID, Sample, sample_pair
from tests.sdk.signin import claims

pytestmark = [pytest.mark.slow, pytest.mark.browser]

TIMEOUT_MS = 30_000


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Botemu, Sample]]:
    yield from sample_pair(tmp_path_factory.mktemp("python-auth-browser"), "app.py")


def test_signing_in_from_the_web_chat(sample: tuple[Botemu, Sample]) -> None:
    from tests.logview.conftest import launched

    emulator, _ = sample
    with launched() as browser:
        context = browser.new_context(base_url=emulator.url)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/#/chat")
        page.get_by_label("Bot", exact=True).select_option(APP_ID)
        log = page.locator("#livechat-log")
        page.get_by_label("Message", exact=True).fill("hello")
        page.get_by_role("button", name="Send", exact=True).click()
        sign_in = log.locator(".signin-link").first
        expect(sign_in).to_be_visible(timeout=TIMEOUT_MS)
        with page.context.expect_page() as opened:
            sign_in.click()
        popup = opened.value
        popup.wait_for_load_state()
        expect(popup.get_by_role("heading")).to_contain_text("Sign in to graph")
        chosen = popup.locator("label").first.inner_text()  # "<name> <upn>": the first user
        popup.get_by_role("button", name="Consent").click()
        expect(popup.locator("#code")).to_have_text(re.compile(r"^\d{6}$"))
        popup.close()
        bot_says = log.locator('[data-from="bot"]')
        logged_in = bot_says.filter(has_text="You are now logged in.")
        expect(logged_in).to_have_count(1, timeout=TIMEOUT_MS)
        page.get_by_label("Message", exact=True).fill("yes")
        page.get_by_role("button", name="Send", exact=True).click()
        shown = bot_says.filter(has_text="Here is your token")
        expect(shown).to_have_count(1, timeout=TIMEOUT_MS)
        token = re.search(r"Here is your token (\S+)", shown.inner_text())
        assert token is not None
        user = claims(token.group(1))
        assert chosen.split() == [*user["name"].split(), user["upn"]]
        assert not errors
        context.close()
