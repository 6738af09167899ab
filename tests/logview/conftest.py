"""Browser fixtures: the system's Chromium driven by Playwright, and botemu serving the log view.

- ``chromium``: Debian's headless Chromium (``CHROMIUM``), launched by Playwright (never a
  downloaded browser) headless, with the flags this closed network needs, in a fresh profile of
  its own. Skips, with the reason, when the browser or the ``playwright`` package is missing.
- ``live``: botemu (``emulator.service.make_app``, which mounts the log view) on a free port of
  127.0.0.1, with the echo bot registered and running beside it. Its event loop runs in a thread
  of its own, because Playwright's sync API owns the test's thread; the tests place calls on that
  loop, into the emulator's own transcript store, and start their bots there too.
- ``tab``: a new browser context and page per test (1280x900), with every wait bounded by a few
  seconds, and the console messages, page errors and dialogs it saw.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from aiohttp import web

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.config import BotRegistration, ServiceConfig
from emulator.guard import control_headers
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, load_module

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page

ROOT = Path(__file__).resolve().parent.parent.parent
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
"""Debian's ``chromium-headless-shell``: Chromium's old headless mode, built alone. It renders the
pages these tests open as Chromium does, for about half the CPU: the log view's and channels'
browser tests took 73 s instead of 137 s (57 s of user CPU instead of 96 s), on 2 workers, in one
run."""


def _chromium() -> Path:
    """``$BOTEMU_CHROMIUM``, else the headless shell, else Debian's ``/usr/bin/chromium``."""
    if named := os.environ.get("BOTEMU_CHROMIUM"):
        return Path(named)
    return HEADLESS_SHELL if HEADLESS_SHELL.exists() else Path("/usr/bin/chromium")


CHROMIUM = _chromium()
"""The Chromium the browser tests drive (``apt-get install chromium-headless-shell``, which
``.ci/run`` does; ``BOTEMU_CHROMIUM`` names another binary)."""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # without these, Chromium dials out and is refused
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 10_000
"""Every Playwright wait (locators, expect, downloads): seconds, never the 30 s default. A wait
ends as soon as what it waits for holds; 5 s was once too short for a conversation to start
while four workers and other work shared two cores."""
APP_ID = "11111111-2222-3333-4444-555555555555"
APP_PASSWORD = "s3cret"
FAST = RetryPolicy(attempts=3, backoff=0.01, timeout=5.0)

T = TypeVar("T")


def load_example(name: str) -> ModuleType:
    """A reference bot from examples/, imported under a name of its own."""
    return load_module(ROOT / "examples" / f"{name}.py", f"{name}_logview")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """The system's Chromium, headless, in a fresh profile (Playwright makes a new temporary
    user-data dir for each launch and deletes it at close)."""
    with launched() as browser:
        yield browser


@contextmanager
def launched(flags: Sequence[str] = ()) -> Iterator[Browser]:
    """The system's Chromium launched as ``chromium`` does, with more ``flags``; skips the test
    without the browser or playwright."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"no browser: {CHROMIUM} is missing (apt-get install chromium-headless-shell; "
            ".ci/run installs it)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        pytest.skip(f"the playwright package is missing (pip install -e '.[test]'): {e}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_FLAGS, *flags],
            timeout=30_000,
        )
        try:
            yield browser
        finally:
            browser.close()


class LiveBotemu:
    """botemu with the log view on a free port; its event loop runs in a thread of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port, self.echo_port = free_port(), free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.echo_url = f"http://127.0.0.1:{self.echo_port}/api/messages"
        self.config = ServiceConfig(
            port=self.port,
            certs_dir=root / "certs",
            bots=(BotRegistration(APP_ID, APP_PASSWORD, self.echo_url),),
        )
        self.store = TranscriptStore(root / "transcripts.db")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="botemu", daemon=True)
        self.runners: list[web.AppRunner] = []

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
        """Run ``coro`` on the emulator's loop and wait (bounded) for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self.thread.start()
        self.run(self._serve(make_app(self.config, self.store), self.port))
        p = self.config.placeholders()
        echo = load_example("echo_bot")
        settings = echo.Settings(
            app_id=APP_ID, app_password=APP_PASSWORD, token_url=p.token_url,
            connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
            connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
            emulator_issuer=p.emulator_issuer,
        )  # fmt: skip
        self.run(self._serve(echo.make_app(settings), self.echo_port))

    def stop(self) -> None:
        try:
            for runner in reversed(self.runners):
                self.run(runner.cleanup())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            self.loop.close()
            self.store.close()

    async def _serve(self, app: web.Application, port: int) -> None:
        runner = web.AppRunner(app, shutdown_timeout=1.0)
        await runner.setup()
        self.runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", port).start()

    def serve_bot(self, app: web.Application) -> str:
        """Serve a calling bot on the emulator's loop; its callback URL."""
        port = free_port()
        self.run(self._serve(app, port))
        return f"http://127.0.0.1:{port}/api/calls"

    def serve_ivr_bot(self) -> str:
        """Serve the reference IVR bot (examples/ivr_bot.py); its callback URL."""
        return self.serve_bot(load_example("ivr_bot").make_app())

    def settings(self, bot_url: str, caller: str, **options: Any) -> CallSettings:
        values: dict[str, Any] = {"retry": FAST, "seed": 7} | options
        return CallSettings(bot_url=bot_url, caller=CallerScript.from_inline(caller), **values)

    def call(self, bot_url: str, caller: str, **options: Any) -> CallReport:
        """Place a call into the emulator's store and wait for its end."""
        return self.run(place_call(self.settings(bot_url, caller, **options), self.store))

    def call_in_background(
        self, bot_url: str, caller: str, **options: Any
    ) -> concurrent.futures.Future[CallReport]:
        """Place a call and return at once (``.result(timeout)`` waits for its end)."""
        coro = place_call(self.settings(bot_url, caller, **options), self.store)
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def chat(self, text: str, conversation_id: str | None = None) -> dict[str, Any]:
        """A user's message to the echo bot through the control API."""
        body: dict[str, Any] = {"app_id": APP_ID, "text": text}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        request = urllib.request.Request(
            self.url("/_botemu/chat"),
            data=json.dumps(body).encode(),
            headers=control_headers(self.config.certs_dir),  # the secret, and JSON
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.load(response)
        return answer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveBotemu]:
    botemu = LiveBotemu(tmp_path_factory.mktemp("logview"))
    try:
        botemu.start()
        yield botemu
    finally:
        botemu.stop()
        shutil.rmtree(botemu.root, ignore_errors=True)


@dataclass
class Tab:
    """One page of the log view, and what the browser reported while it was open."""

    page: Page
    console: list[ConsoleMessage] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def console_errors(self) -> list[str]:
        return [m.text for m in self.console if m.type == "error"]


@pytest.fixture
def tab(chromium: Browser, live: LiveBotemu) -> Iterator[Tab]:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    context = chromium.new_context(
        viewport={"width": 1280, "height": 900}, accept_downloads=True, base_url=live.base_url
    )
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(2 * TIMEOUT_MS)
    page = context.new_page()
    opened = Tab(page)
    page.on("console", lambda message: opened.console.append(message))
    page.on("pageerror", lambda error: opened.errors.append(str(error)))

    def on_dialog(dialog: Dialog) -> None:
        opened.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield opened
    finally:
        context.close()
