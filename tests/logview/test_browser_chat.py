"""The web chat (``#/chat``) in a real browser: Playwright driving the system's Chromium, as in
``test_browser.py`` (skipped, with the reason, without Chromium or playwright).

botemu runs with two bots: the reference echo bot (examples/echo_bot.py, with credentials) and
the small anonymous bot of ``tests/service/chat_bot.py`` (typing, attachments, suggested
actions, invoke responses). Every wait is bounded by a few seconds.

``test_the_chat_screenshot`` writes ``docs/images/chat.png`` when it is missing or when
``BOTEMU_SCREENSHOT=1``; otherwise it only takes the picture.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from emulator.config import BotRegistration, anonymous_app_id
from emulator.logview import standalone_app
from emulator.service.livechat import LIVE_CHAT_PATH, LIVECHAT
from emulator.transcripts.store import TranscriptStore
from tests.logview.conftest import LiveBotemu
from tests.service.chat_bot import HOSTILE
from tests.service.chat_bot import make_bot as make_chat_bot
from tests.support import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.logview.conftest import Tab

pytestmark = pytest.mark.browser

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "images" / "chat.png"
CHAT_BOT = anonymous_app_id(1)
MANIFEST = Path(__file__).resolve().parent.parent.parent / "examples" / "skill" / "manifest.json"


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


class ChatBotemu(LiveBotemu):
    """The log view's botemu, with the chat bot registered (anonymous) and served beside it."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.chat_port = free_port()
        chat = BotRegistration(CHAT_BOT, "", f"http://127.0.0.1:{self.chat_port}/api/messages",
                               anonymous=True)  # fmt: skip
        self.config = replace(self.config, bots=(*self.config.bots, chat))

    def start(self) -> None:
        super().start()
        self.run(self._serve(make_chat_bot(), self.chat_port))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatBotemu]:
    botemu = ChatBotemu(tmp_path_factory.mktemp("livechat"))
    try:
        botemu.start()
        yield botemu
    finally:
        botemu.stop()
        shutil.rmtree(botemu.root, ignore_errors=True)


def open_chat(tab: Tab, bot: str | None = None) -> tuple[Page, Locator]:
    """The chat page, its conversation started (with ``bot`` when given); the log."""
    page = tab.page
    response = page.goto("/#/chat")
    assert response is not None and response.status == 200
    log = page.locator("#livechat-log")
    page.get_by_role("button", name="Start", exact=True).click()  # loading the page starts none
    expect(log.locator('[data-type="conversationUpdate"]')).to_have_count(1)
    if bot is not None:
        choose(page, bot)
    return page, log


def choose(page: Page, bot: str) -> None:
    """Talk to ``bot`` instead: a new conversation with it."""
    first = conversation_of(page)
    page.get_by_label("Bot", exact=True).select_option(bot)
    expect(page.locator("#livechat-page")).not_to_have_attribute("data-conversation", first)
    expect(page.locator('#livechat-log [data-type="conversationUpdate"]')).to_have_count(1)


def say(page: Page, text: str) -> None:
    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


def conversation_of(page: Page) -> str:
    value = page.locator("#livechat-page").get_attribute("data-conversation")
    assert value
    return value


def test_a_conversation_with_the_echo_bot_in_order(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    welcome = log.locator('[data-from="bot"][data-type="message"]')
    expect(welcome).to_have_count(1)
    expect(welcome).to_contain_text("Welcome, User!")
    say(page, "hello from the browser")
    expect(log.locator("[data-type]")).to_have_count(4)
    order = [(item.get_attribute("data-from"), item.get_attribute("data-type"),
              item.locator(".text, .note-line").first.inner_text())
             for item in log.locator("[data-type]").all()]  # fmt: skip
    assert order[0][:2] == ("user", "conversationUpdate")
    assert order[1][:2] == ("bot", "message")
    assert order[2] == ("user", "message", "hello from the browser")
    assert order[3] == ("bot", "message", "echo: hello from the browser")
    conversation = conversation_of(page)
    call = live.store.call(conversation)
    assert call is not None and call.kind == "conversation"
    rows = [str(e.payload.get("summary")) for e in live.store.events(conversation)]
    assert "client → Direct Line: conversation started (201)" in rows  # a Direct Line client
    assert "client → Direct Line: message sent (200)" in rows
    page.locator("#livechat-conversation").click()  # the conversation in the log view
    expect(page.locator("#chat")).to_contain_text("echo: hello from the browser")
    page.go_back()  # the chat goes on meanwhile
    expect(page.locator("#livechat-page")).to_have_attribute("data-conversation", conversation)
    assert not tab.errors


def test_the_channel_picker_opens_a_conversation_on_that_channel(
    live: ChatBotemu, tab: Tab
) -> None:
    page, log = open_chat(tab)
    first = conversation_of(page)
    page.get_by_label("Channel", exact=True).select_option("msteams")
    expect(page.locator("#livechat-page")).not_to_have_attribute("data-conversation", first)
    expect(log.locator('[data-from="bot"][data-type="message"]')).to_have_count(1)
    say(page, "from teams")
    expect(log.locator('[data-from="bot"][data-type="message"]')).to_have_count(2)
    conversation = conversation_of(page)
    bodies = [e.payload["body"] for e in live.store.events(conversation)
              if e.kind == "http.request" and isinstance(e.payload.get("body"), dict)]  # fmt: skip
    assert bodies and {b.get("channelId") for b in bodies} == {"msteams"}
    users = [b for b in bodies if (b.get("from") or {}).get("role") == "user"]
    assert users and all(b["channelData"]["tenant"]["id"] for b in users)
    assert not tab.errors


def test_an_event_with_a_value_and_its_json(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    page.locator("#livechat-menu summary").click()
    page.get_by_label("Activity type", exact=True).select_option("event")
    page.get_by_label("Name", exact=True).fill("tokens/response")
    page.get_by_label("Value (JSON)", exact=True).fill('{"answer": 42}')
    page.get_by_role("button", name="Send activity").click()
    event = log.locator('[data-from="user"][data-type="event"]')
    expect(event).to_contain_text("tokens/response")
    event.locator(".note-line").click()  # a click shows its JSON
    expect(event.locator("pre.raw-json")).to_contain_text('"answer": 42')
    page.get_by_label("Value (JSON)", exact=True).fill("{not json")
    page.get_by_role("button", name="Send activity").click()
    expect(page.locator(".livechat-menu-error")).to_contain_text("not JSON")
    assert not tab.errors


def test_restart_gives_a_new_conversation_id(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    first = conversation_of(page)
    say(page, "before the restart")
    expect(log.locator('[data-from="bot"]', has_text="echo: before the restart")).to_have_count(1)
    page.get_by_role("button", name="Restart").click()
    expect(page.locator("#livechat-page")).not_to_have_attribute("data-conversation", first)
    expect(log.locator('[data-type="conversationUpdate"]')).to_have_count(1)
    expect(log).not_to_contain_text("before the restart")
    assert conversation_of(page) != first
    assert page.locator("#livechat-conversation").inner_text() == conversation_of(page)


def test_a_hostile_reply_shows_as_text(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    say(page, HOSTILE)
    reply = log.locator('[data-from="bot"][data-type="message"]').last
    expect(reply).to_contain_text(f"echo: {HOSTILE}")
    choose(page, CHAT_BOT)
    say(page, "html")
    expect(log.locator('[data-from="bot"]', has_text=HOSTILE)).to_have_count(1)
    assert log.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert not tab.errors


def test_typing_attachments_suggested_actions_and_invoke(live: ChatBotemu, tab: Tab) -> None:
    requested: list[str] = []
    tab.page.on("request", lambda request: requested.append(request.url))
    page, log = open_chat(tab, CHAT_BOT)
    say(page, "typing")
    expect(page.locator("#livechat-typing")).to_be_visible()
    say(page, "card")
    card = log.locator('[data-from="bot"][data-type="message"]', has_text="a card")
    expect(card).to_have_count(1)
    expect(page.locator("#livechat-typing")).to_be_hidden()
    images = card.locator("img")
    expect(images).to_have_count(1)  # the data: image; the remote one is a link, not loaded
    assert (images.get_attribute("src") or "").startswith("data:image/png")
    expect(card).to_contain_text("remote.png")
    expect(card.locator("a", has_text="report.pdf")).to_have_attribute("rel", "noopener noreferrer")
    assert not [url for url in requested if "example.invalid" in url]
    card.get_by_role("button", name="Blue (suggested action)").click()
    expect(log.locator('[data-from="user"][data-type="message"]', has_text="blue")).to_have_count(1)
    expect(log.locator('[data-from="bot"]', has_text="you said: blue")).to_have_count(1)
    page.locator("#livechat-menu summary").click()
    page.get_by_label("Activity type", exact=True).select_option("invoke")
    page.get_by_label("Name", exact=True).fill("adaptiveCard/action")
    page.get_by_label("Value (JSON)", exact=True).fill('{"verb": "go"}')
    page.get_by_role("button", name="Send activity").click()
    invoke = log.locator('[data-from="user"][data-type="invoke"]')
    expect(invoke.locator(".invoke-response")).to_contain_text('"verb": "go"')
    assert not tab.errors


def test_a_skill_manifest_makes_forms_and_checks_the_answer(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    choose(page, CHAT_BOT)
    page.locator("#livechat-menu summary").click()
    page.get_by_label("Skill manifest", exact=True).set_input_files(str(MANIFEST))
    expect(page.locator("#livechat-manifest-state")).to_contain_text("3 declared activities")
    page.get_by_label("Activity type", exact=True).select_option("manifest:getWeather")
    city = page.locator("#livechat-schema-form").get_by_label("city", exact=True)
    expect(city).to_be_visible()  # a form from the schema, with a sample in it
    assert city.input_value()
    expect(page.get_by_label("Name", exact=True)).to_have_value("getWeather")
    city.fill("Paris")
    page.get_by_role("button", name="Send activity").click()
    invoke = log.locator('[data-from="user"][data-type="invoke"]')
    expect(invoke.locator(".invoke-response")).to_contain_text('"city": "Paris"')
    finding = invoke.locator('.livechat-findings li[data-rule="SKILL-INVOKE-RESULT"]').first
    expect(finding).to_contain_text("does not match")  # the chat bot's answer is no weatherReport
    invoke.locator(".note-line").click()
    expect(invoke.locator("pre.raw-json").first).to_contain_text('"value": {')
    page.get_by_label("Activity type", exact=True).select_option("manifest:bookFlight")
    form = page.locator("#livechat-schema-form")
    expect(form.get_by_label("origin", exact=True)).to_be_visible()
    expect(form.get_by_label("passengers", exact=True)).to_have_attribute("type", "number")
    assert not tab.errors


def test_a_manifest_given_on_the_command_line_is_there_as_if_picked(
    live: ChatBotemu, tab: Tab
) -> None:
    """``botemu serve --manifest``: the page starts with it (its menu, the forget button);
    forgetting it is the page's own business."""
    from emulator.manifest.source import load_manifest
    from emulator.manifest.validate import validate_manifest
    from emulator.service.livechat_skill import given

    manifest = load_manifest(MANIFEST)
    chat = live_chat(live)
    chat.given = given(manifest.document, "travel.json", validate_manifest(manifest))
    try:
        page, log = open_chat(tab, CHAT_BOT)
        state = page.locator("#livechat-manifest-state")
        expect(state).to_have_text("travel.json: 3 declared activities")
        expect(page.locator(".livechat-manifest-findings")).to_contain_text("MF-ENDPOINT-HTTPS")
        page.get_by_label("Activity type", exact=True).select_option("manifest:getWeather")
        form = page.locator("#livechat-schema-form")
        expect(form.get_by_label("city", exact=True)).to_be_visible()
        page.get_by_role("button", name="Send activity").click()
        invoke = log.locator('[data-from="user"][data-type="invoke"]')
        finding = invoke.locator('.livechat-findings li[data-rule="SKILL-INVOKE-RESULT"]')
        expect(finding.first).to_be_visible()  # checked against the given manifest
        page.get_by_role("button", name="Forget the manifest").click()
        expect(state).to_have_text("")
        expect(page.get_by_role("button", name="Forget the manifest")).to_be_hidden()
    finally:
        chat.given = None
    assert not tab.errors


def test_every_control_has_an_accessible_name(live: ChatBotemu, tab: Tab) -> None:
    page, _ = open_chat(tab)
    page.locator("#livechat-menu summary").click()
    for name in ("Send", "Restart", "Send activity"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    for label in ("Bot", "Message", "Activity type"):
        expect(page.get_by_label(label, exact=True)).to_be_visible()
    unnamed = page.evaluate("""() => [...document.querySelectorAll(
        '#livechat-page button, #livechat-page input, #livechat-page select, #livechat-page textarea')]
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.textContent.trim()))
        .map((el) => el.outerHTML)""")
    assert unnamed == []


def test_a_refusal_is_shown_and_the_chat_goes_on(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab)
    page.locator("#livechat-menu summary").click()
    page.get_by_label("Activity type", exact=True).select_option("conversationUpdate")
    page.get_by_label("Members (JSON)", exact=True).fill('{"membersAdded": "nobody"}')
    page.get_by_role("button", name="Send activity").click()  # Direct Line refuses it (400)
    expect(page.locator("#livechat-problem")).to_contain_text("membersAdded must be an array")
    say(page, "x" * 20_000)
    expect(page.locator("#livechat-problem")).to_contain_text("at most 16384")
    say(page, "still here")
    expect(log.locator('[data-from="bot"]', has_text="echo: still here")).to_have_count(1)


def live_chat(live: LiveBotemu) -> Any:
    app = live.runners[0].app
    return app[LIVECHAT]


def test_a_page_on_another_origin_cannot_open_the_chat(live: ChatBotemu, tab: Tab) -> None:
    async def evil_page(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>evil</title>", content_type="text/html")

    evil = web.Application()
    evil.router.add_get("/", evil_page)
    port = free_port()
    live.run(live._serve(evil, port))
    page = tab.page
    page.goto(f"http://localhost:{port}/")
    token = live_chat(live).page_token  # even with the token (a leak), the Origin is refused
    result = page.evaluate("""([url, token]) => new Promise((resolve) => {
        const ws = new WebSocket(url, ['botemu.live.v1', 'botemu.secret.' + token]);
        ws.onopen = () => resolve('open');
        ws.onerror = () => resolve('refused');
    })""", [f"ws://127.0.0.1:{live.port}{LIVE_CHAT_PATH}", token])  # fmt: skip
    assert result == "refused"
    read = page.evaluate("""(url) => fetch(url).then((r) => r.text()).catch((e) => 'blocked: ' + e.name)""",
                         live.url("/"))  # fmt: skip
    assert read.startswith("blocked")


def test_a_page_on_another_origin_that_opens_the_chat_starts_no_conversation(
    live: ChatBotemu, tab: Tab
) -> None:
    """The page may be opened by anyone (a link, ``window.open``): loading it starts nothing;
    the person does, with Start or a first message."""

    async def evil_page(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>evil</title>", content_type="text/html")

    evil = web.Application()
    evil.router.add_get("/", evil_page)
    port = free_port()
    live.run(live._serve(evil, port))
    page = tab.page
    page.goto(f"http://localhost:{port}/")
    chat = live_chat(live)
    connector = chat.emulator.connector
    before = len(connector._conversations)
    with page.context.expect_page() as opened:
        page.evaluate("(url) => { window.open(url); }", live.url("/#/chat"))
    popup = opened.value
    expect(popup.locator("#livechat-state")).to_have_text("connected")
    expect(popup.get_by_role("button", name="Start", exact=True)).to_be_enabled()
    popup.wait_for_timeout(300)  # a start frame, were one sent, would be acted on by now
    assert chat.live == {} and len(connector._conversations) == before
    expect(popup.locator('#livechat-log [data-type="conversationUpdate"]')).to_have_count(0)
    popup.get_by_label("Message", exact=True).fill("hello")  # the person's first message
    popup.get_by_role("button", name="Send", exact=True).click()
    log = popup.locator("#livechat-log")
    expect(log.locator('[data-type="conversationUpdate"]')).to_have_count(1)
    expect(log.locator('[data-from="bot"]', has_text="echo: hello")).to_have_count(1)
    expect(popup.get_by_role("button", name="Restart", exact=True)).to_be_visible()
    popup.close()


def test_the_standalone_log_view_says_it_has_no_chat(live: ChatBotemu, tab: Tab) -> None:
    port = free_port()
    store = TranscriptStore(live.root / "standalone.db")
    try:
        live.run(live._serve(standalone_app(store), port))
        page = tab.page
        page.goto(f"http://127.0.0.1:{port}/#/chat")
        expect(page.locator("#livechat-unavailable")).to_contain_text("botemu serve")
        page.goto("about:blank")
    finally:
        store.close()


def test_the_chat_screenshot(live: ChatBotemu, tab: Tab) -> None:
    page, log = open_chat(tab, CHAT_BOT)
    say(page, "card")
    expect(log.locator('[data-from="bot"]', has_text="a card")).to_have_count(1)
    say(page, "hello")
    expect(log.locator('[data-from="bot"]', has_text="you said: hello")).to_have_count(1)
    page.locator("#livechat-menu summary").click()
    page.get_by_label("Skill manifest", exact=True).set_input_files(str(MANIFEST))
    page.get_by_label("Activity type", exact=True).select_option("manifest:getWeather")
    page.locator("#livechat-schema-form").get_by_label("city", exact=True).fill("Lisbon")
    page.get_by_role("button", name="Send activity").click()
    expect(log.locator(".livechat-findings")).to_have_count(1)
    page.get_by_label("Activity type", exact=True).select_option("manifest:bookFlight")
    page.set_viewport_size({"width": 1280, "height": 1500})  # the whole conversation, unscrolled
    page.mouse.move(0, 0)
    picture = page.screenshot(full_page=True)
    assert picture[:8] == b"\x89PNG\r\n\x1a\n"
    if not SCREENSHOT.exists() or os.environ.get("BOTEMU_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(picture)


def test_start_and_send_wait_for_the_bots_to_talk_to(live: ChatBotemu, tab: Tab) -> None:
    """A Start clicked after the socket opened but before its ``ready`` frame (the bots) found
    no bot and did nothing; a loaded machine showed it. Start and Send are disabled until
    ``ready``: here it is held back, then let through."""
    page = tab.page
    held: list[str | bytes] = []
    routes: list[Any] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        routes.append(ws)

        def from_server(message: str | bytes) -> None:
            if not held and isinstance(message, str) and '"ready"' in message:
                held.append(message)  # let through below
            else:
                ws.send(message)

        server.on_message(from_server)

    page.route_web_socket(re.compile(re.escape(LIVE_CHAT_PATH)), route)
    page.goto("/#/chat")
    expect(page.locator("#livechat-state")).to_have_text("connected")
    start = page.get_by_role("button", name="Start", exact=True)
    expect(start).to_be_disabled()
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_disabled()
    assert held and routes
    routes[0].send(held[0])
    expect(start).to_be_enabled()
    start.click()
    log = page.locator("#livechat-log")
    expect(log.locator('[data-type="conversationUpdate"]')).to_have_count(1)
    assert not tab.errors
