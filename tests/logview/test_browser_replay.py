"""The log view's "Save as scenario" in a real browser (Playwright driving the system's Chromium,
``conftest.py``): a real call to the reference IVR bot made a scenario on its page, shown,
copied, downloaded, and switched from loose to strict; a conversation too; a running call's
button waits for its end; a bot's markup shows as text; and a page on another origin reads no
YAML. Skipped, with the reason, when the browser or the playwright package is missing.
Every wait is bounded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from emulator.replay.convert import SCHEMA, scenario_of
from tests.bots.xss_bot import PROMPT
from tests.bots.xss_bot import make_bot as make_xss_bot
from tests.support import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.logview.conftest import LiveBotemu, Tab

pytestmark = pytest.mark.browser

MENU = "For sales, press 1 or say sales. For support, press 2 or say support."
LOOSE_MENU = '{matches: "^For sales, press \\\\+?\\\\d'
"""The menu prompt's item in a loose scenario (as YAML writes the pattern's backslashes)."""
ANY_HANDLER = """() => [...document.querySelectorAll('*')]
    .filter(e => [...e.attributes].some(a => a.name.startsWith('on')))
    .map(e => e.outerHTML.slice(0, 120))"""


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


def open_page(tab: Tab, call_id: str) -> Page:
    """A call's (or conversation's) page, checked to be the log view, with its button shown."""
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200, "the log view is not served"
    page.goto(f"/#/calls/{call_id}")
    expect(page.locator("#call-head h1")).to_be_visible()
    expect(page.locator("#save-scenario")).to_be_visible()
    return page


def save_as_scenario(page: Page) -> Locator:
    """Click "Save as scenario"; the YAML, once it is shown."""
    page.locator("#save-scenario").click()
    expect(page.locator("#scenario-panel")).to_have_attribute("data-state", "ready")
    yaml = page.locator("#scenario-yaml")
    expect(yaml).to_be_visible()
    return yaml


def test_a_call_is_shown_as_its_scenario_copied_and_downloaded(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_ivr_bot(), "listen; press 1; press 1234#")
    page = open_page(tab, report.call_id)
    expect(page.locator("#scenario-panel")).to_be_hidden()  # shown only when asked
    yaml = save_as_scenario(page)
    expected = scenario_of(live.store, report.call_id)
    expect(yaml).to_have_text(expected)  # exactly the library's scenario, as text
    text = yaml.inner_text()
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={SCHEMA}"
    assert "\ncaller:\n  - listen" in text and '  - press: "1"' in text
    assert '  - press: "1234#"' in text
    expect(page.locator("#save-scenario")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#scenario-status")).to_contain_text("checked")
    expect(page.locator("#scenario-notes")).to_be_hidden()  # a verified call has no notes

    name = f"replay-{report.call_id[:12]}.yaml"
    link = page.locator("#scenario-download")
    expect(link).to_have_attribute("download", name)
    expect(link).to_have_attribute("href", re.compile(r"/scenario\?strict=0&download=1$"))
    with page.expect_download() as downloading:
        link.click()
    assert downloading.value.suggested_filename == name
    assert Path(downloading.value.path()).read_text(encoding="utf-8") == expected

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator("#scenario-copy").click()
    expect(page.locator("#scenario-copy")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == expected
    page.locator("#scenario-close").click()
    expect(page.locator("#scenario-panel")).to_be_hidden()
    assert not tab.errors and not tab.console_errors()


def test_the_strict_toggle_makes_a_pattern_a_literal(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_ivr_bot(), "listen; press 2; press 42#")
    page = open_page(tab, report.call_id)
    yaml = save_as_scenario(page)
    expect(yaml).to_have_attribute("data-mode", "loose")
    expect(yaml).to_contain_text(LOOSE_MENU)
    assert MENU not in yaml.inner_text()
    page.locator("#scenario-strict").check()
    expect(yaml).to_have_attribute("data-mode", "strict")
    expect(yaml).to_contain_text(f'{{equals: "{MENU}')
    assert LOOSE_MENU not in yaml.inner_text()
    expect(yaml).to_have_text(scenario_of(live.store, report.call_id, strict=True))
    link = page.locator("#scenario-download")
    expect(link).to_have_attribute("href", re.compile(r"\?strict=1&download=1$"))
    page.locator("#scenario-loose").check()
    expect(yaml).to_have_attribute("data-mode", "loose")
    expect(yaml).to_contain_text(LOOSE_MENU)
    assert not tab.errors


def test_a_conversation_is_saved_as_a_messaging_scenario(live: LiveBotemu, tab: Tab) -> None:
    conversation = live.chat("hello")["conversation_id"]
    live.chat("second <b>turn</b>", conversation)
    page = open_page(tab, conversation)
    yaml = save_as_scenario(page)
    expect(yaml).to_contain_text("messaging:")
    expect(yaml).to_contain_text('"second <b>turn</b>"')
    assert page.locator("#scenario-yaml b").count() == 0
    assert not tab.errors


def test_a_running_call_can_be_saved_once_it_has_ended(live: LiveBotemu, tab: Tab) -> None:
    from emulator.transcripts.store import EventKind

    call_id = live.store.start(bot="http://127.0.0.1:1/api/calls", caller="8:alice")
    live.store.append(call_id, EventKind.CALL_START, {"summary": "call"}, vtime=0.0)
    page = open_page(tab, call_id)
    expect(page.locator("#save-scenario")).to_be_disabled()
    live.store.append(call_id, EventKind.CALL_END, {"summary": "ended", "reason": "bot hung up"},
                      vtime=1.0)  # fmt: skip
    live.store.finish(call_id, reason="bot hung up")
    expect(page.locator("#save-scenario")).to_be_enabled()  # the live feed brought its end
    save_as_scenario(page)
    expect(page.locator("#scenario-yaml")).to_contain_text("caller: []")
    assert not tab.errors


def test_a_prompt_with_markup_shows_as_text_in_the_scenario(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_bot(make_xss_bot()), "press 1")
    page = open_page(tab, report.call_id)
    yaml = save_as_scenario(page)
    page.locator("#scenario-strict").check()
    expect(yaml).to_have_attribute("data-mode", "strict")
    expect(yaml).to_contain_text(f'{{equals: "{PROMPT}"}}')
    assert page.locator('img[src="x"]').count() == 0, "an img element was made from the prompt"
    assert page.locator("#scenario-panel iframe, #scenario-panel script").count() == 0
    assert page.evaluate(ANY_HANDLER) == []
    assert page.locator("#scenario-yaml *").count() == 0  # one text node, no elements
    assert tab.dialogs == [], f"script from the bot ran: {tab.dialogs}"
    assert not tab.errors


READ = """async (url) => {
  const out = {};
  try { out.cors = await fetch(url).then(r => r.text()); }
  catch (e) { out.cors = 'blocked: ' + e.name; }
  try { out.opaque = await fetch(url, {mode: 'no-cors'}).then(async r => r.type + ' ' + r.status
    + ' ' + (await r.text()).length); }
  catch (e) { out.opaque = 'blocked: ' + e.name; }
  return out;
}"""


def test_a_page_on_another_origin_reads_no_yaml(live: LiveBotemu, tab: Tab) -> None:
    async def evil_page(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>evil</title>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", evil_page)
    port = free_port()
    live.run(live._serve(app, port))
    report = live.call(live.serve_ivr_bot(), "press 1")
    url = live.url(f"/_logview/api/calls/{report.call_id}/scenario")
    page = tab.page
    page.goto(f"http://localhost:{port}/")
    result = page.evaluate(READ, url)
    assert result["cors"] == "blocked: TypeError", result  # no CORS: the answer is not readable
    assert result["opaque"] == "opaque 0 0", result  # no-cors: an opaque, empty answer
    own = open_page(tab, report.call_id)  # the log view itself still reads it
    expect(save_as_scenario(own)).to_contain_text("caller:")
