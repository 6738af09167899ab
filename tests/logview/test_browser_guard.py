"""A real browser attacks botemu from a page on another origin, and from a rebound name.

A second local server, on another port, plays the attacker's site. From its page, Chromium tries
what a page can do without botemu's help: a ``no-cors`` POST as ``text/plain`` (no preflight), a
form POST, a CORS fetch with JSON (needs a preflight), and a fetch that reads the transcripts.
Nothing changes in botemu and nothing is read. The log view still works from its own origin.
emulator/guard.py; docs/security.md. Skipped like the other browser tests without Chromium.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from tests.logview.conftest import CHROMIUM, CHROMIUM_FLAGS, TIMEOUT_MS
from tests.support import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.logview.conftest import LiveBotemu, Tab

pytestmark = pytest.mark.browser

EVIL_PAGE = "<!doctype html><html><head><title>evil</title></head><body>evil</body></html>"
REBOUND = "rebound.test"


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


@pytest.fixture(scope="module")
def evil(live: LiveBotemu) -> str:
    """The attacker's site: another local server, on another port (another origin)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=EVIL_PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    port = free_port()
    live.run(live._serve(app, port))
    return f"http://localhost:{port}"


def get(live: LiveBotemu, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(live.url(path), timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, None


def published_keys(live: LiveBotemu) -> list[str]:
    return [k["kid"] for k in get(live, "/_identity/keys")[1]["keys"]]


ATTACKS = """async ([botemu, appId]) => {
  const out = {};
  const tryIt = async (name, run) => {
    try { out[name] = await run(); } catch (e) { out[name] = 'blocked: ' + e.name; }
  };
  const simple = (path, body) => fetch(botemu + path, {
    method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body,
  }).then(r => r.type + ' ' + r.status);
  await tryIt('reset', () => simple('/_botemu/reset', '{}'));
  await tryIt('rotate', () => simple('/_botemu/keys/rotate', '{}'));
  await tryIt('mint', () => simple('/_botemu/token', JSON.stringify({app_id: appId})));
  await tryIt('mint-cors', () => fetch(botemu + '/_botemu/token', {
    method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({app_id: appId}),
  }).then(r => r.json()));
  await tryIt('read', () => fetch(botemu + '/_logview/api/calls').then(r => r.json()));
  await tryIt('read-control', () =>
    fetch(botemu + '/_botemu/config').then(r => r.json()));
  return out;
}"""

FORM_POST = """([botemu]) => new Promise(resolve => {
  const frame = document.createElement('iframe');
  frame.name = 'sink';
  frame.addEventListener('load', () => resolve('loaded'));
  document.body.append(frame);
  const form = document.createElement('form');
  form.method = 'POST';
  form.enctype = 'text/plain';
  form.action = botemu + '/_botemu/reset';
  form.target = 'sink';
  const field = document.createElement('input');
  field.name = '{"x":"';
  field.value = '"}';
  form.append(field);
  document.body.append(form);
  form.submit();
})"""


def test_a_page_on_another_origin_can_change_nothing_and_read_nothing(
    live: LiveBotemu, tab: Tab, evil: str
) -> None:
    from tests.logview.conftest import APP_ID

    conversation = live.chat("hello")["conversation_id"]
    keys = published_keys(live)
    page = tab.page
    page.goto(evil + "/")
    results = page.evaluate(ATTACKS, [live.base_url, APP_ID])
    # The simple requests were sent (opaque answers), and refused by botemu.
    assert results["reset"] == "opaque 0" and results["rotate"] == "opaque 0", results
    assert results["mint"] == "opaque 0", results
    # JSON needs a preflight, which botemu never grants; reading needs CORS, never granted.
    for name in ("mint-cors", "read", "read-control"):
        assert str(results[name]).startswith("blocked: TypeError"), results
    assert page.evaluate(FORM_POST, [live.base_url]) == "loaded"
    assert get(live, f"/_botemu/conversations/{conversation}/activities")[0] == 200  # not reset
    assert published_keys(live) == keys  # not rotated


def test_the_log_view_still_works_from_its_own_origin(live: LiveBotemu, tab: Tab) -> None:
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200
    expect(page.locator("#calls")).to_be_attached()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    calls = page.evaluate("() => fetch('/_logview/api/calls').then(r => r.json())")
    assert "calls" in calls
    assert not tab.errors


@pytest.fixture(scope="module")
def rebinding_browser(chromium: Browser) -> Iterator[Browser]:
    """A second Chromium, in which rebound.test resolves to 127.0.0.1: what DNS rebinding
    achieves (launched by the same Playwright as ``chromium``, which skips when it is missing)."""
    browser = chromium.browser_type.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=[*CHROMIUM_FLAGS, f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"],
        timeout=30_000,
    )
    try:
        yield browser
    finally:
        browser.close()


def test_a_rebound_name_gets_nothing(live: LiveBotemu, rebinding_browser: Browser) -> None:
    context = rebinding_browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        rebound = f"http://{REBOUND}:{live.port}"
        for path in ("/", "/_logview/api/calls", "/_botemu/config"):
            response = page.goto(rebound + path)
            assert response is not None and response.status == 403, path
            assert f"add --allow-host {REBOUND}:{live.port}" in page.content()
    finally:
        context.close()
