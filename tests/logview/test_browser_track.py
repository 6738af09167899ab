"""The call's track on its page in a real browser: the player plays the whole call, the row of
the moment is highlighted as it plays, a click on a row's time seeks the track there, and the
waveform strip is drawn (Playwright driving the system's Chromium, as in ``test_browser.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.logview.conftest import LiveBotemu
from tests.logview.test_browser import open_call

if TYPE_CHECKING:
    from tests.logview.conftest import Tab

pytestmark = pytest.mark.browser


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


def test_the_track_plays_and_the_highlighted_row_follows_it(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_ivr_bot(), "press 1; press 1234#")
    timeline = open_call(tab, report.call_id)
    page = tab.page
    audio = page.locator("#track-audio")
    expect(page.locator("#track")).to_be_visible()
    state = audio.evaluate(
        """async a => {
            a.muted = true;
            a.preload = 'auto';
            await a.play();
            await new Promise(r => setTimeout(r, 600));
            const playing = !a.paused;
            a.pause();
            return {duration: a.duration, playing, now: a.currentTime};
        }"""
    )
    assert state["playing"] and state["duration"] == pytest.approx(report.vtime, abs=0.05)
    current = page.locator(".now-playing")
    expect(current).to_have_count(1)
    assert float(current.get_attribute("data-vtime") or "nan") <= state["now"] + 1e-6
    expect(page.locator("#track-wave")).to_have_attribute("data-drawn", "true")
    rows = timeline.locator("[data-vtime]")
    later = next(r for r in rows.all() if float(r.get_attribute("data-vtime") or 0) > 3)
    at = float(later.get_attribute("data-vtime") or "nan")
    later.locator(".vtime").click()  # seek there
    assert audio.evaluate("a => a.currentTime") == pytest.approx(at, abs=0.01)
    expect(page.locator(".now-playing")).to_have_attribute(
        "data-vtime", later.get_attribute("data-vtime") or ""
    )
    assert not tab.errors
