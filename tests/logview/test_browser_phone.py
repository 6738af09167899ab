"""The phone (``#/phone``) in a real browser: Playwright driving the system's Chromium, as in
``test_browser.py`` (skipped, with the reason, without Chromium or playwright).

botemu runs with the reference IVR bot (examples/ivr_bot.py) registered by its calling endpoint.
The calls run five times faster than real time (``#/phone?pace=0.2``: the page asks for it), so
that the bot's 9-second menu lasts under two seconds. Every wait is bounded.

``test_the_phone_screenshot`` writes ``docs/images/phone.png`` when it is missing or when
``BOTEMU_SCREENSHOT=1``; otherwise it only takes the picture.
"""

from __future__ import annotations

import array
import math
import os
import shutil
import time
import wave
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from emulator.audio.pcm import SAMPLE_RATE, wav_bytes
from emulator.config import BotRegistration
from tests.audio.sound import goertzel
from tests.logview.conftest import LiveBotemu, launched, load_example
from tests.support import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from tests.logview.conftest import Tab

pytestmark = pytest.mark.browser

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "images" / "phone.png"
IVR_APP_ID = "33333333-4444-5555-6666-777777777777"
WAIT_MS = 15_000
TONE = 440.0
PACE = 0.2  # the page runs calls five times faster than real time


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
        self.voicemail = self.root / "voicemail"
        self.voicemail.mkdir()
        bot = load_example("ivr_bot").make_app(voicemail_dir=self.voicemail)
        self.run(self._serve(bot, self.ivr_port))


def fake_microphone(path: Path, seconds: float = 5.0) -> Path:
    """A WAV of a 440 Hz tone, for Chromium's fake microphone (it loops the file)."""
    n = round(seconds * SAMPLE_RATE)
    path.write_bytes(wav_bytes(array.array("h", (round(9000 * math.sin(2 * math.pi * TONE * i / SAMPLE_RATE))
                                                  for i in range(n)))))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """The system's Chromium as the log view's tests launch it, with a fake microphone that
    hears a 440 Hz tone, granted without asking, and sound allowed without a click."""
    microphone = fake_microphone(tmp_path_factory.mktemp("microphone") / "tone.wav")
    flags = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
             f"--use-file-for-fake-audio-capture={microphone}",
             "--autoplay-policy=no-user-gesture-required"]  # fmt: skip
    with launched(flags) as browser:
        yield browser


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
    response = page.goto(f"/#/phone?pace={PACE}")
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


def test_a_key_during_a_prompt_cuts_it_and_its_audio_plays_until_then(
    live: PhoneBotemu, tab: Tab
) -> None:
    page = call(tab)
    # The welcome prompt's audio arrives as it begins, and the page plays it.
    expect(page.locator("#phone-sound")).to_contain_text("s of audio (eSpeak NG", timeout=WAIT_MS)
    expect(page.locator("#phone-playing")).to_contain_text("For sales, press 1", timeout=WAIT_MS)
    page.get_by_role("button", name="2", exact=True).click()  # the menu allows barge-in
    ladder = page.locator("#phone-ladder")
    expect(ladder).to_contain_text("press 3 or say voicemail.' (cut off)", timeout=WAIT_MS)
    expect(ladder).to_contain_text("choice=support")
    assert int(page.locator("#phone-sound").get_attribute("data-played") or 0) >= 2
    page.get_by_role("button", name="Hang up", exact=True).click()
    expect(page.locator("#phone-status")).to_contain_text("Call ended", timeout=WAIT_MS)
    assert not tab.errors


def test_the_caller_chosen_on_the_page_places_the_call(live: PhoneBotemu, tab: Tab) -> None:
    page = tab.page
    page.goto(f"/#/phone?pace={PACE}")
    expect(page.locator("#phone-status")).to_contain_text("Ready")
    page.get_by_text("Caller", exact=True).click()
    page.get_by_label("Caller identity").fill("8:alice")
    page.get_by_label("Display name").fill("Alice Example")
    page.get_by_role("button", name="Call", exact=True).click()
    expect(page.locator("#phone-ladder")).to_contain_text("from Alice Example (8:alice)",
                                                          timeout=WAIT_MS)  # fmt: skip
    page.get_by_role("button", name="Hang up", exact=True).click()
    expect(page.locator("#phone-status")).to_contain_text("Call ended", timeout=WAIT_MS)


def test_hold_to_record_gives_the_bot_the_microphone_in_a_recording(
    live: PhoneBotemu, tab: Tab
) -> None:
    page = call(tab)
    page.keyboard.press("3")  # voicemail
    timer = page.locator("#phone-timer")
    expect(timer).to_contain_text("recording ends in", timeout=WAIT_MS)  # the record's timers
    expect(timer).to_contain_text("initial silence")
    hold = page.get_by_role("button", name="Hold to record")
    hold.hover()
    page.mouse.down()
    held_from = time.monotonic()
    expect(page.locator("#phone-mic")).to_contain_text("Recording from the microphone")
    expect(timer).to_contain_text("maximum duration")  # talking: the silence timer waits
    page.wait_for_timeout(1200)  # 1.2 s of microphone: 6 s of the call at this pace
    page.mouse.up()
    held = (time.monotonic() - held_from) / PACE  # call seconds, however slow the machine
    expect(timer).to_contain_text("silence:")
    expect(page.locator("#phone-playing")).to_contain_text("message has been recorded",
                                                           timeout=WAIT_MS)  # fmt: skip
    call_id = (page.locator("#phone-call-page").get_attribute("href") or "").removeprefix("#/calls/")
    [saved] = list(live.voicemail.glob(f"{call_id}*"))
    assert saved.suffix == ".wav"  # the format the bot asked for
    with wave.open(str(saved), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        samples = array.array("h", w.readframes(w.getnframes()))
    recorded = [e.payload for e in live.store.events(call_id)
                if e.payload.get("kind") == "recording made"]  # fmt: skip
    [made] = recorded
    length = float(made["end"]) - float(made["at"])
    assert abs(len(samples) / SAMPLE_RATE - length) < 0.05  # as long as the outcome says
    # About 6 s of talk (however long the button was held), then 5 s of silence ended it.
    talk = [(float(a), float(b)) for a, b in made["speech"]]
    assert talk and 3.0 < sum(b - a for a, b in talk) < held + 1.0  # less its capture start
    assert 4.5 < length - talk[-1][1] < 6.0
    # What the microphone heard while held is in the talk's span (from whenever the browser
    # started capturing, which a loaded machine delays): the fake microphone's tone. A window of
    # noise or silence gives a ratio near 1 or below; the tone's best window gives millions
    # (here, with or without three busy loops), yet only 24 in the first 3 s of one run on a
    # loaded machine, whose capture started late: the whole span is searched.
    quarter = SAMPLE_RATE // 4
    span = range(int(talk[0][0] * SAMPLE_RATE), int(talk[-1][1] * SAMPLE_RATE) - quarter, quarter)
    windows = [samples[a : a + quarter] for a in span]
    ratio = max(goertzel(w, TONE) / max(goertzel(w, 1000.0), 1e-9) for w in windows)
    assert ratio > 10
    assert not tab.errors
