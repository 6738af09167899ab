"""The log view in a real browser: Playwright driving the system's Chromium (``conftest.py``).

Each test places its own calls, on bots it starts itself, into the store of one running botemu,
and finds them by id (or by their bot's address, which is unique to the test). Every wait is
bounded by a few seconds. Skipped, with the reason, when the browser (``conftest.CHROMIUM``) or
the playwright package is missing; failed, with the reason, when botemu serves no log view.

``test_timeline_screenshot`` writes ``docs/logview-screenshot.png`` (the README shows it) when it
is missing or when ``BOTEMU_SCREENSHOT=1``; otherwise it only takes the picture and checks it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.bots.calling_bots import make_bot
from tests.bots.xss_bot import MARKUP, PROMPT
from tests.bots.xss_bot import make_bot as make_xss_bot

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.logview.conftest import LiveBotemu, Tab

pytestmark = pytest.mark.browser

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "logview-screenshot.png"
KINDS = {"call.start", "http.request", "http.response", "http.error", "retry", "caller",
         "platform", "state", "finding", "note", "call.end"}  # fmt: skip


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


def open_list(tab: Tab) -> Page:
    """The list page, checked to be the log view (not a 404) before any selector is waited on."""
    page = tab.page
    response = page.goto("/")
    assert response is not None
    assert response.status == 200, (
        f"the log view is not served: GET / answered {response.status} "
        "(emulator/logview missing, or not mounted by emulator.service.make_app)"
    )
    expect(page.locator("#calls")).to_be_attached()
    return page


def open_call(tab: Tab, call_id: str) -> Locator:
    """A call's page (hash route ``#/calls/<id>``); its ``#timeline``, once it has rows."""
    page = open_list(tab)
    page.goto(f"/#/calls/{call_id}")
    timeline = page.locator("#timeline")
    expect(timeline).to_be_visible()
    expect(timeline.locator(".row").first).to_be_visible()
    return timeline


def row_of(timeline: Locator, seq: int) -> Locator:
    return timeline.locator(f'.row[data-seq="{seq}"]')


def seq_of(live: LiveBotemu, call_id: str, kind: str, where: dict[str, Any] | None = None) -> int:
    """The seq of the first event of ``kind`` (whose payload has the items of ``where``)."""
    for event in live.store.events(call_id):
        if event.kind == kind and (where or {}).items() <= event.payload.items():
            return event.seq
    raise AssertionError(f"no {kind} event {where or ''} in call {call_id}")


# --- the list ---------------------------------------------------------------------------------


def test_a_call_placed_while_the_page_is_open_appears_live(live: LiveBotemu, tab: Tab) -> None:
    page = open_list(tab)
    page.evaluate("window.__loadedOnce = true")  # gone if the page reloads
    bot = live.serve_ivr_bot()
    address = bot.split("/")[2]  # 127.0.0.1:PORT, unique to this test
    # 17.8 s of virtual time at pace 0.2: the call runs for about 3.5 s of real time.
    running = live.call_in_background(bot, "listen; press 1; press 1234#", pace=0.2)
    row = page.locator("#calls tr.call").filter(has=page.locator(".bot", has_text=address))
    expect(row).to_have_count(1)
    assert not running.done(), "the call had ended before its row appeared: not live"
    report = running.result(timeout=15)
    assert row.get_attribute("data-id") == report.call_id
    expect(row.locator(".caller")).not_to_be_empty()
    expect(row.locator(".started")).not_to_be_empty()
    expect(row.locator(".ended")).to_contain_text("bot hung up")  # the row follows the call
    expect(row.locator(".workflows")).to_have_text(re.compile(rf"\b{report.workflows}\b"))
    expect(row.locator(".errors")).to_have_text(re.compile(r"\b0\b"))
    expect(row.locator(".warnings")).to_have_text(re.compile(rf"\b{report.warnings}\b"))
    assert page.evaluate("window.__loadedOnce") is True, "the page reloaded"
    row.click()  # the row opens the call's timeline, and #back returns to the list
    expect(page.locator("#timeline")).to_be_visible()
    assert page.url.endswith(f"#/calls/{report.call_id}")
    page.locator("#back").click()
    expect(page.locator(f'#calls tr.call[data-id="{report.call_id}"]')).to_be_visible()
    assert not tab.errors


def test_the_list_filters_by_text(live: LiveBotemu, tab: Tab) -> None:
    wanted = live.call(live.serve_bot(make_bot("ok")), "press 1")
    other = live.call(live.serve_bot(make_bot("ok")), "press 2")
    page = open_list(tab)
    expect(page.locator(f'tr.call[data-id="{other.call_id}"]')).to_have_count(1)
    page.locator("#filter-text").fill(wanted.call_id)
    expect(page.locator("#calls tr.call")).to_have_count(1)
    expect(page.locator(f'tr.call[data-id="{wanted.call_id}"]')).to_have_count(1)
    expect(page.locator("#page-info")).to_be_attached()
    assert not tab.errors


# --- the call timeline ------------------------------------------------------------------------


def test_timeline_rows_retry_group_and_finding(live: LiveBotemu, tab: Tab) -> None:
    bot = live.serve_bot(make_bot("flaky"))  # 500 to each first delivery, 200 to its retry
    report = live.call(bot, "press 1")
    events = {e.seq: e for e in live.store.events(report.call_id)}
    timeline = open_call(tab, report.call_id)
    page = tab.page

    # Rows: store kinds, in store order, each with virtual and wall time.
    expect(timeline.locator(".row[data-kind]").last).to_have_attribute("data-kind", "call.end")
    rows = timeline.locator(".row[data-kind][data-seq]")
    shown = [(int(r.get_attribute("data-seq") or "0"), r.get_attribute("data-kind"))
             for r in rows.all()]  # fmt: skip
    assert shown[0] == (1, "call.start")
    assert [seq for seq, _ in shown] == sorted(seq for seq, _ in shown)
    assert all(kind == events[seq].kind for seq, kind in shown), shown
    assert {kind for _, kind in shown} >= KINDS - {"http.error", "retry"}
    assert {kind for _, kind in shown} <= KINDS
    first = rows.first
    expect(first.locator(".vtime")).not_to_be_empty()
    expect(first.locator(".wall")).not_to_be_empty()
    expect(timeline).to_contain_text("caller pressed 1")
    expect(timeline).to_contain_text("Press 1 for sales or 2 for support")

    # The exact exchange: headers and the pretty-printed body; copy as curl.
    request = row_of(timeline, seq_of(live, report.call_id, "http.request"))
    request.locator("button.expand").click()
    details = request.locator(".details")
    expect(details).to_be_visible()
    expect(details).to_contain_text("X-Platform-Message-ID")
    body = details.locator("pre.body").first
    expect(body).to_contain_text('"participants"')
    assert "\n" in body.inner_text(), "the body is not pretty-printed"
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    request.locator("button.copy-curl").click()
    curl = page.evaluate("navigator.clipboard.readText()")
    assert curl.startswith("curl") and bot in curl and "X-Platform-Chain-ID" in curl, curl

    # A retry group per message id: attempt 1 got 500, attempt 2 got 200.
    retried = {str(e.payload["message_id"]) for e in events.values() if e.kind == "retry"}
    groups = timeline.locator(".retry-group[data-message-id]")
    expect(groups).to_have_count(len(retried))
    assert {g.get_attribute("data-message-id") for g in groups.all()} == retried
    conversation = str(events[seq_of(live, report.call_id, "http.request")].payload["message_id"])
    attempts = timeline.locator(f'.retry-group[data-message-id="{conversation}"] .attempt')
    expect(attempts).to_have_count(2)
    expect(attempts.nth(0).locator(".status")).to_contain_text("500")
    expect(attempts.nth(1).locator(".status")).to_contain_text("200")
    expect(attempts.nth(0).locator(".latency")).to_have_text(re.compile(r"\d"))

    # A finding, with rule, message, JSON path, source and a link to docs/rules.md.
    finding = timeline.locator(".finding").filter(
        has=page.locator(".rule", has_text="WF-CALLBACK-HTTPS")
    )
    expect(finding).to_have_count(1)
    expect(finding.locator(".message")).to_contain_text("http")
    expect(finding.locator(".where")).to_contain_text("$.links.callback")
    expect(finding.locator(".source")).not_to_be_empty()
    assert "rules" in (finding.locator("a.rule-doc").get_attribute("href") or "")
    errors = timeline.locator(".finding").filter(
        has=page.locator(".rule", has_text="CALL-HTTP-5XX")
    )
    expect(errors).to_have_count(report.errors)
    assert not tab.errors


def test_the_recording_plays_in_the_page(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_bot(make_bot("record-wav")), "talk 3s")
    recorded = seq_of(live, report.call_id, "platform", {"recording": True})
    seconds = float(live.store.events(report.call_id, after=recorded - 1)[0].payload["seconds"])
    timeline = open_call(tab, report.call_id)
    audio = timeline.locator("audio.recording")
    expect(audio).to_have_count(1)
    element = audio.element_handle()
    tab.page.wait_for_function("a => a.readyState >= 2", arg=element, timeout=5_000)
    state = audio.evaluate(
        """async a => {
            a.muted = true;
            await a.play();
            const playing = !a.paused;
            a.pause();
            return {duration: a.duration, playing, readyState: a.readyState};
        }"""
    )
    assert state["playing"] and state["readyState"] >= 2
    assert state["duration"] == pytest.approx(seconds, abs=0.1)
    with tab.page.expect_download() as downloading:
        timeline.locator("a.download-recording").click()
    saved = Path(downloading.value.path())
    assert saved.read_bytes()[:4] == b"RIFF"
    assert not tab.errors


# --- untrusted content ------------------------------------------------------------------------

SCENARIO = "<img src=x onerror=alert('scenario')>"
CANARY = "window.__inlineRan = true"

ANY_HANDLER = """() => [...document.querySelectorAll('*')]
    .filter(e => [...e.attributes].some(a => a.name.startsWith('on')))
    .map(e => e.outerHTML.slice(0, 120))"""


def test_markup_from_the_bot_is_shown_as_text_and_runs_nothing(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_bot(make_xss_bot()), "press 1", scenario=SCENARIO)
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200
    policy = response.headers.get("content-security-policy", "")
    scripts = re.search(r"script-src([^;]*)", policy) or re.search(r"default-src([^;]*)", policy)
    assert scripts, f"no Content-Security-Policy that governs scripts: {policy!r}"
    assert "'unsafe-inline'" not in scripts.group(1) and "'unsafe-eval'" not in scripts.group(1)

    row = page.locator(f'#calls tr.call[data-id="{report.call_id}"]')
    expect(row.locator(".scenario")).to_have_text(SCENARIO)  # the list, too, shows it as text
    page.goto(f"/#/calls/{report.call_id}")
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text(PROMPT)
    for button in timeline.locator("button.expand").all():  # headers and bodies, too
        button.click()
    expect(timeline.locator(".details:visible").first).to_be_visible()
    text = timeline.inner_text()
    for markup in MARKUP:
        assert markup in text, f"{markup!r} is not shown as text"

    assert page.locator('img[src="x"]').count() == 0, "an img element was made from the prompt"
    assert page.locator("iframe, marquee, u, b[onmouseover]").count() == 0
    assert page.evaluate(ANY_HANDLER) == []
    assert page.locator("script:not([src])").count() == 0  # the page's own scripts are files

    # The policy is enforced: an inline script, added as an injected one would be, never runs.
    violations = page.evaluate(
        """async canary => {
            const seen = [];
            document.addEventListener('securitypolicyviolation', e => seen.push(e.violatedDirective));
            const script = document.createElement('script');
            script.textContent = canary;
            document.body.append(script);
            await new Promise(r => setTimeout(r, 200));
            return seen;
        }""",
        CANARY,
    )
    assert page.evaluate("window.__inlineRan") is None
    assert any(v.startswith(("script-src", "default-src")) for v in violations), violations
    assert any("Content Security Policy" in m for m in tab.console_errors()), tab.console_errors()
    assert tab.dialogs == [], f"script from the bot ran: {tab.dialogs}"
    assert not tab.errors


# --- exports ----------------------------------------------------------------------------------


def test_export_a_call_as_json(live: LiveBotemu, tab: Tab) -> None:
    report = live.call(live.serve_bot(make_bot("ok")), "press 1")
    open_call(tab, report.call_id)
    with tab.page.expect_download() as downloading:
        tab.page.locator("#export-json").click()
    document = json.loads(Path(downloading.value.path()).read_text(encoding="utf-8"))
    expected = live.store.export(report.call_id)
    assert document["call"]["id"] == report.call_id
    assert [(e["seq"], e["kind"]) for e in document["events"]] == [
        (e["seq"], e["kind"]) for e in expected["events"]
    ]
    assert document["events"] == json.loads(json.dumps(expected["events"]))
    assert not tab.errors


def test_a_conversation_as_chat_and_as_a_transcript_file(live: LiveBotemu, tab: Tab) -> None:
    first = live.chat("hello")
    conversation = first["conversation_id"]
    live.chat("<b>bold?</b>", conversation)
    page = open_list(tab)
    page.goto(f"/#/calls/{conversation}")  # a conversation reads as chat, not as a ladder
    users = page.locator(".message.user .text")
    bots = page.locator(".message.bot .text")
    expect(users.filter(has_text="hello")).to_have_count(1)
    expect(users.filter(has_text="<b>bold?</b>")).to_have_count(1)
    expect(bots.filter(has_text="echo: hello")).to_have_count(1)
    expect(bots.filter(has_text="echo: <b>bold?</b>")).to_have_count(1)
    assert page.locator(".message b").count() == 0
    message = page.locator(".message.user").filter(has_text="hello")
    message.locator("button.raw").click()
    expect(message).to_contain_text('"type"')
    with page.expect_download() as downloading:
        page.locator("#export-transcript").click()
    assert downloading.value.suggested_filename.endswith(".transcript")
    activities = json.loads(Path(downloading.value.path()).read_text(encoding="utf-8"))
    assert isinstance(activities, list) and all("type" in a for a in activities)
    texts = [a.get("text") for a in activities if a["type"] == "message"]
    assert {"hello", "echo: hello", "<b>bold?</b>"} <= set(texts)
    assert not tab.errors


# --- the picture for the README ---------------------------------------------------------------


def test_timeline_screenshot(live: LiveBotemu, tab: Tab, tmp_path: Path) -> None:
    """A real call (the reference IVR bot: prompts, a menu choice, digits, and the http-callback
    finding) as its timeline shows it."""
    report = live.call(
        live.serve_ivr_bot(), "listen; press 1; press 1234#", scenario="account number read back"
    )
    timeline = open_call(tab, report.call_id)
    expect(timeline.locator(".row[data-kind]").last).to_have_attribute("data-kind", "call.end")
    expect(timeline.locator(".finding .rule").first).to_have_text("WF-CALLBACK-HTTPS")
    picture = tmp_path / "logview-screenshot.png"
    tab.page.screenshot(path=str(picture))
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 900)
    if os.environ.get("BOTEMU_SCREENSHOT") == "1" or not SCREENSHOT.exists():
        shutil.copyfile(picture, SCREENSHOT)
    assert not tab.errors


# --- a call whose writer is gone ------------------------------------------------------------------


def test_an_interrupted_call_shows_as_interrupted_in_the_list_and_its_page(
    live: LiveBotemu, tab: Tab
) -> None:
    """A call left running by a writer that was killed, once a store open has marked it
    ``interrupted``: its row says so in its own style (not the running dot), and so does the
    ``ended`` fact of its page."""
    import sqlite3
    import subprocess
    import sys

    from emulator.transcripts.store import EventKind, TranscriptStore

    cid = live.store.start(bot="http://interrupted.example/api/calls")
    live.store.append(cid, EventKind.NOTE, {"summary": "then its writer was killed"}, vtime=0.5)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    conn = sqlite3.connect(live.store.path)
    with conn:
        conn.execute("UPDATE calls SET writer_pid = ? WHERE id = ?", (int(dead.stdout), cid))
    conn.close()
    with TranscriptStore(live.store.path) as reopened:
        assert reopened.interrupted == [cid]
    page = open_list(tab)
    row = page.locator(f'tr.call[data-id="{cid}"]')
    expect(row).to_have_class(re.compile(r"\binterrupted\b"))
    expect(row).not_to_have_class(re.compile(r"\brunning\b"))
    expect(row.locator("td.ended")).to_have_text("interrupted")
    open_call(tab, cid)
    expect(page.locator(".facts dd.interrupted")).to_have_text("interrupted")
    assert not tab.errors
