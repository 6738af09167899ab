"""The live phone's calls (emulator/service/phone.py), with no page: a call to the reference IVR
bot registered with a running botemu, signed with its token, driven by a person's acts at a tenth
of real time; what the page is told; the refusals; a page that goes away and its grace period.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.config import BotRegistration, ServiceConfig
from emulator.service import EMULATOR, make_app
from emulator.service.phone import LivePhone, PhoneRefused
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, ivr_bot

APP_ID = "22222222-3333-4444-5555-666666666666"
PACE = 0.1


@dataclass
class Page:
    """What a page would be told, for a test to wait on."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        self.changed.set()

    async def until(self, test: Any, seconds: float = 20.0) -> dict[str, Any]:
        async with asyncio.timeout(seconds):
            while True:
                found = next((f for f in self.frames if test(f)), None)
                if found is not None:
                    return found
                self.changed.clear()
                await self.changed.wait()


@dataclass
class Running:
    app: web.Application
    url: str

    @property
    def phone(self) -> LivePhone:
        return LivePhone(self.app[EMULATOR], max_live=2, grace=0.2)


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    port, bot_port = free_port(), free_port()
    url = f"http://127.0.0.1:{bot_port}/api/calls"
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(APP_ID, "s3cret", None, calling_endpoint=url, name="IVR"),))  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    server = TestServer(app, host="127.0.0.1", port=port)
    await server.start_server()
    p = config.placeholders()
    args = ("--app-id", APP_ID, "--openid-metadata-url", p.openid_metadata_url,
            "--connector-issuer", p.connector_issuer)  # fmt: skip
    try:
        with ivr_bot(*args, port=bot_port):
            yield Running(app, url)
    finally:
        await server.close()
        store.close()


async def test_a_live_call_to_a_registered_bot_is_signed_shown_and_driven_by_the_person(
    running: Running,
) -> None:
    phone, page = running.phone, Page()
    assert phone.bots() == [{"app_id": APP_ID, "name": "IVR", "url": running.url}]
    live = phone.call(page.push, running.url, pace=PACE)
    started = await page.until(lambda f: f["op"] == "started")
    playing = await page.until(lambda f: f["op"] == "event" and f["kind"] == "live.playing"
                               and f["payload"]["operation_id"] == "menu-1")  # fmt: skip
    assert playing["payload"]["text"].startswith("For sales, press 1")
    menu = next(f["workflow"] for f in page.frames if "workflow" in f)
    assert [a["action"] for a in menu["actions"]] == ["answer", "playPrompt", "recognize"]
    live.act("press", {"keys": "1"})
    with pytest.raises(PhoneRefused, match="keys are 1 to 32"):
        live.act("press", {"keys": "x"})  # refused; the call goes on
    await page.until(lambda f: f["op"] == "event" and "choice=sales" in str(f["payload"]))
    live.act("press", {"keys": "12345678#"})
    ended = await page.until(lambda f: f["op"] == "ended")
    assert ended["reason"] == "bot hung up" and ended["errors"] == 0
    store = running.app[EMULATOR].store
    call = store.call(started["call_id"])
    assert call is not None and call.end_reason == "bot hung up"
    notes = [e.payload["summary"] for e in store.events(call.id) if e.kind == "note"]
    assert any(f"Bearer token for app id {APP_ID}" in n for n in notes)  # signed by botemu
    assert phone.calls == set()


async def test_a_page_that_goes_away_hangs_up_after_the_grace_period_unless_it_comes_back(
    running: Running,
) -> None:
    phone, page, again = running.phone, Page(), Page()
    live = phone.call(page.push, running.url, pace=PACE)
    started = await page.until(lambda f: f["op"] == "started")
    phone.detach(live)
    await asyncio.sleep(0.05)
    assert phone.attach(started["call_id"], again.push) is live  # back within 0.2 s
    phone.detach(live)  # gone again, for good: the caller hangs up after 0.2 s
    report = await asyncio.wait_for(live.task, 20)  # type: ignore[arg-type]
    assert report.end_reason.value == "caller hung up"
    with pytest.raises(PhoneRefused, match="has ended"):
        phone.attach(started["call_id"], again.push)


async def test_calls_are_refused_for_a_bad_url_and_past_the_limit(running: Running) -> None:
    phone, page = running.phone, Page()
    for url, error in [(None, "calling URL"), ("ftp://x/y", "not an http"), ("x" * 3000, "2,048")]:
        with pytest.raises(PhoneRefused, match=error):
            phone.call(page.push, url)
    first, second = phone.call(page.push, running.url), phone.call(page.push, running.url)
    with pytest.raises(PhoneRefused, match="too many live calls"):
        phone.call(page.push, running.url)
    for live in (first, second):
        live.act("hangup", {})
    await asyncio.wait_for(asyncio.gather(first.task, second.task), 20)  # type: ignore[arg-type]
    with pytest.raises(PhoneRefused, match="press, say, talk, hold, release or hangup"):
        first.act("dial", {})


def test_calling_bots_given_on_the_command_line_are_registered_for_the_phone() -> None:
    from argparse import Namespace

    from emulator.cli.options import service_config

    args = Namespace(config=None, host=None, port=None, profile=None, certs=None,
                     bot_endpoint="http://127.0.0.1:3978/api/messages", bot_app_id=APP_ID,
                     bot_app_password="pw", calling_bot=["http://127.0.0.1:3979/api/calls",
                                                         "http://127.0.0.1:3980/api/calls"])  # fmt: skip
    own, other = service_config(args).bots
    assert (own.app_id, own.endpoint, own.calling_endpoint) == (
        APP_ID,
        "http://127.0.0.1:3978/api/messages",
        "http://127.0.0.1:3979/api/calls",
    )
    assert other.anonymous and other.endpoint is None
    assert other.calling_endpoint == "http://127.0.0.1:3980/api/calls"


async def test_a_calling_bot_registered_with_no_app_id_is_called_with_no_token(
    running: Running,
) -> None:
    emulator = running.app[EMULATOR]
    anonymous = BotRegistration("anonymous-9", "", None, "http://127.0.0.1:9/api/calls",
                                anonymous=True)  # fmt: skip
    emulator.config = replace(emulator.config, bots=(*emulator.config.bots, anonymous))
    settings = running.phone.settings("http://127.0.0.1:9/api/calls", 1.0)
    assert settings.tokens is None and settings.app_id is None and settings.live
    signed = running.phone.settings(running.url, 1.0)
    assert signed.tokens is not None and signed.app_id == APP_ID


async def test_botemu_lets_go_of_a_hold_too_long_or_whose_page_went_away(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    from emulator.service import phone as phone_module

    monkeypatch.setattr(phone_module, "MAX_TALK", 2.0)  # two seconds of the call: 0.2 s here
    phone, page = running.phone, Page()
    live = phone.call(page.push, running.url, pace=PACE)
    await page.until(lambda f: f["op"] == "started")
    live.act("hold", {})
    released = await page.until(lambda f: f["op"] == "released")
    assert "the longest talk" in released["reason"] and live.caller.held is None
    live.act("hold", {})  # a new hold is allowed: the last one ended
    phone.detach(live)  # the page goes away holding: botemu lets go at once
    assert live.caller.held is None
    assert phone.attach(live.call_id, page.push) is live
    live.act("hangup", {})
    report = await asyncio.wait_for(live.task, 20)  # type: ignore[arg-type]
    assert report.end_reason.value == "caller hung up"
