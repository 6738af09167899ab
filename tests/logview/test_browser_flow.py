"""The call-flow page in a real browser (Playwright driving the system's Chromium, as
``test_browser.py`` does; fixtures in ``conftest.py``).

Each test crawls the reference IVR bot for real, on botemu's own loop and into its store (so every
move's call is there to open), saves the document with ``save_exploration`` and opens the page:
the list of explorations, the graph drawn by the vendored layout library under the log view's
Content-Security-Policy, a box's prompts and choices, a move's call, the findings, markup shown
as text, and the bound on what is drawn.

``test_call_flow_screenshot`` writes ``docs/images/call-flow.png`` when it is missing or when
``BOTEMU_SCREENSHOT=1``; otherwise it only takes the picture and checks it.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.logview.explored import CHOICE, END, MARKUP, MOVE, expected_shape, explore, hostile

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.logview.conftest import LiveBotemu, Tab

pytestmark = pytest.mark.browser

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "call-flow.png"
ANY_HANDLER = """() => [...document.querySelectorAll('*')]
    .filter(e => [...e.attributes].some(a => a.name.startsWith('on')))
    .map(e => e.outerHTML.slice(0, 120))"""


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


@pytest.fixture(scope="module")
def explored(live: LiveBotemu) -> dict[str, Any]:
    """The reference IVR bot explored into botemu's store (menus judged long above 2 choices:
    two findings to mark)."""
    return live.run(explore(live.store, live.serve_ivr_bot(), max_choices=2), timeout=60)


def open_flow(tab: Tab, exploration_id: str) -> Locator:
    """The call-flow page (``#/explorations/<id>``), once its graph is drawn; the ``svg``."""
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200
    page.goto(f"/#/explorations/{exploration_id}")
    svg = page.locator("#flow svg.flow-graph")
    expect(svg).to_be_visible()
    return svg


def node(svg: Locator, state_id: str) -> Locator:
    return svg.locator(f'g.node[data-kind="state"][data-id="{state_id}"]')


def clean(tab: Tab) -> None:
    """Nothing went wrong in the page: no uncaught error, no console error (a policy violation
    would be one), no dialog."""
    assert not tab.errors, tab.errors
    assert not tab.console_errors(), tab.console_errors()
    assert not tab.dialogs, tab.dialogs


def test_the_list_shows_the_exploration_and_its_page_draws_every_box_and_move(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    saved = live.store.save_exploration(explored)
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200
    policy = response.headers["content-security-policy"]
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in policy
    page.locator("#tab-explorations").click()
    row = page.locator(f'#explorations tr.exploration[data-id="{saved}"]')
    expect(row).to_be_visible()
    expect(row.locator(".states")).to_have_text(str(len(explored["states"])))
    expect(row.locator(".edges")).to_have_text(str(len(explored["edges"])))
    expect(row.locator(".warnings")).to_have_text("2")
    expect(row.locator(".bot")).to_have_text(explored["bot"])
    row.click()
    assert page.url.endswith(f"#/explorations/{saved}")
    svg = page.locator("#flow svg.flow-graph")
    expect(svg).to_be_visible()

    shape = expected_shape(explored)
    expect(svg.locator("g.node")).to_have_count(shape["nodes"])
    expect(svg.locator('g.node[data-kind="start"]')).to_have_count(1)
    expect(svg.locator('g.node[data-kind="state"]')).to_have_count(len(explored["states"]))
    expect(svg.locator('g.node[data-kind="end"]')).to_have_count(shape["ends"])
    expect(svg.locator("g.move")).to_have_count(shape["moves"])
    expect(svg.locator("g.arrow")).to_have_count(shape["arrows"])
    expect(svg.locator("g.arrow.error, g.move.error")).to_have_count(0)
    calls = {m.get_attribute("data-call-id") for m in svg.locator("g.move").all()}
    assert calls == {e["call_id"] for e in explored["edges"]}
    menu = explored["states"][0]
    expect(node(svg, menu["id"]).locator("text.kind")).to_have_text("menu · 3 choices")
    expect(node(svg, menu["id"])).to_contain_text(menu["prompts"][-1][:20])
    ends = svg.locator('g.node[data-kind="end"]')
    reasons = {e.locator("text.label").text_content() for e in ends.all()}
    assert reasons >= {"caller hung up", "bot hung up"}
    expect(page.locator("#flow-note")).to_be_hidden()
    assert page.evaluate("typeof window.dagre.layout") == "function"  # the vendored script ran
    clean(tab)


def test_a_click_on_a_box_shows_its_prompts_and_choices(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    saved = live.store.save_exploration(explored)
    svg = open_flow(tab, saved)
    panel = tab.page.locator("#flow-panel")
    menu = explored["states"][0]
    node(svg, menu["id"]).click()
    expect(node(svg, menu["id"])).to_have_class(re.compile(r"\bselected\b"))
    expect(panel.locator(".state-id")).to_have_text(menu["id"])
    expect(panel.locator(".choice")).to_have_count(len(menu["choices"]))
    choices = menu["choices"]
    assert panel.locator(".choice .name").all_text_contents() == [c["name"] for c in choices]
    assert panel.locator(".choice .dtmf").all_text_contents() == [c["dtmf"] for c in choices]
    assert panel.locator(".prompt").all_text_contents() == menu["prompts"]
    out = [e for e in explored["edges"] if e["from"] == menu["id"]]
    moves = panel.locator(".panel-moves.out li.move")
    expect(moves).to_have_count(len(out))
    assert moves.locator(".move-name").all_text_contents() == [e["move"] for e in out]
    assert [m.get_attribute("data-call-id") for m in moves.all()] == [e["call_id"] for e in out]
    panel.locator(".panel-close").click()
    expect(panel.locator(".choice")).to_have_count(0)
    expect(svg.locator("g.node.selected")).to_have_count(0)
    clean(tab)


def test_a_click_on_a_move_opens_the_call_that_took_it(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    saved = live.store.save_exploration(explored)
    svg = open_flow(tab, saved)
    page = tab.page
    edge = next(e for e in explored["edges"] if e["move"] == "press 3")
    move = svg.locator(f'g.move[data-call-id="{edge["call_id"]}"]')
    expect(move.locator("text")).to_have_text("press 3")
    move.click()
    timeline = page.locator("#timeline")
    expect(timeline).to_be_visible()
    assert page.url.endswith(f"#/calls/{edge['call_id']}")
    expect(timeline).to_contain_text("caller pressed 3")
    back = page.locator("#back")
    expect(back).to_have_text("← call flow")
    back.click()
    expect(page.locator("#flow svg.flow-graph g.move").first).to_be_visible()
    assert page.url.endswith(f"#/explorations/{saved}")
    clean(tab)


def test_an_end_box_shows_what_the_caller_heard_after_the_last_input(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    saved = live.store.save_exploration(explored)
    svg = open_flow(tab, saved)
    edge = next(e for e in explored["edges"] if e["to"] is None and e["heard"])
    last = edge["heard"][-1]
    box = svg.locator('g.node[data-kind="end"]').filter(has=tab.page.locator("text.heard"))
    expect(box.filter(has_text=last[:20]).first).to_be_visible()
    assert all(e["heard"] == [] for e in explored["edges"] if e["to"] is not None)
    box.filter(has_text=last[:20]).first.click()
    panel = tab.page.locator("#flow-panel")
    expect(panel.locator(".end-reason")).to_have_text(edge["end"])
    heard = panel.locator(".panel-heard .prompt").all_text_contents()
    assert heard[-1] == last and any(ch.isdigit() for ch in "".join(
        p for e in explored["edges"] for p in e["heard"]))  # as said: digits kept  # fmt: skip
    clean(tab)


def test_findings_are_marked_on_their_boxes_and_listed(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    saved = live.store.save_exploration(explored)
    svg = open_flow(tab, saved)
    flagged = {f["where"] for f in explored["findings"] if f["rule"] == "EXPLORE-LONG-MENU"}
    assert len(flagged) == 2
    marked = svg.locator("g.node.sev-warning")
    expect(marked).to_have_count(2)
    assert {m.get_attribute("data-id") for m in marked.all()} == flagged
    expect(marked.locator(".finding-badge")).to_have_count(2)
    panel = tab.page.locator("#flow-panel")
    expect(panel.locator(".finding .rule")).to_have_count(2)  # the overview lists them
    node(svg, sorted(flagged)[0]).click()
    finding = panel.locator(".finding.sev-warning")
    expect(finding).to_have_count(1)
    expect(finding.locator(".rule")).to_have_text("EXPLORE-LONG-MENU")
    expect(finding.locator(".message")).to_contain_text("3 choices")
    expect(finding.locator(".source")).to_contain_text("explore")
    clean(tab)


def test_markup_in_an_exploration_is_shown_as_text_and_runs_nothing(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any]
) -> None:
    document = hostile(explored)
    saved = live.store.save_exploration(document)
    page = tab.page
    response = page.goto("/")
    assert response is not None and response.status == 200
    page.goto("/#/explorations")
    row = page.locator(f'#explorations tr.exploration[data-id="{saved}"]')
    expect(row.locator(".bot")).to_have_text(document["bot"])  # as text in the list
    row.click()
    svg = page.locator("#flow svg.flow-graph")
    expect(svg).to_be_visible()
    menu = document["states"][0]
    expect(node(svg, menu["id"]).locator("text.prompt").first).to_contain_text("then <img src=x")
    expect(page.locator("#flow-head .call-bot")).to_have_text(document["bot"])
    crashed = svg.locator("g.move.error")
    expect(crashed).to_have_count(1)
    expect(crashed.locator("text")).to_have_text(MOVE)
    expect(svg.locator("g.arrow.error")).to_have_count(1)
    expect(svg.locator('g.node[data-kind="end"]').filter(has_text=END[:20])).to_have_count(1)
    panel = page.locator("#flow-panel")
    expect(panel.locator(".move.error .move-name")).to_have_text("; ".join(
        next(e for e in document["edges"] if e["errors"])["steps"]))  # fmt: skip
    expect(panel.locator(".finding.sev-error .message")).to_have_text(f"CALL-HTTP-5XX: {MARKUP}")
    node(svg, menu["id"]).click()
    assert panel.locator(".prompt").all_text_contents() == menu["prompts"]
    expect(panel.locator(".choice .name").first).to_have_text(CHOICE)
    expect(panel.locator(".finding.sev-warning .message")).to_have_text(MARKUP)

    assert page.locator('img[src="x"], iframe, b, svg svg').count() == 0, "markup became elements"
    assert page.evaluate(ANY_HANDLER) == []
    assert page.locator("script:not([src])").count() == 0
    clean(tab)


def test_a_graph_too_large_is_cut_at_500_boxes_with_a_note(live: LiveBotemu, tab: Tab) -> None:
    """700 states in a chain: the page draws the first 500 boxes (the start and 499 states) and
    the moves between them, and says so."""
    states = [{"id": f"{i:012x}", "kind": "digits", "prompts": [f"step {i}"], "choices": [],
               "max_digits": 1, "stop_tones": [], "heard_seconds": 1.0} for i in range(700)]  # fmt: skip
    ids = ["start"] + [s["id"] for s in states]
    edges = [{"from": a, "move": "press 1", "steps": ["press 1"], "to": b, "end": None,
              "call_id": f"call-{b}", "errors": []} for a, b in pairwise(ids)]  # fmt: skip
    document = {"version": 1, "bot": "http://big.example/api/calls", "calls": 700, "bounds": [],
                "states": states, "edges": edges, "findings": []}  # fmt: skip
    svg = open_flow(tab, live.store.save_exploration(document))
    expect(svg.locator("g.node")).to_have_count(500)
    expect(svg.locator("g.move")).to_have_count(499)
    note = tab.page.locator("#flow-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("500 of 701 boxes")
    expect(note).to_contain_text("499 of 700 moves")
    clean(tab)


def test_an_unknown_exploration_says_so(live: LiveBotemu, tab: Tab) -> None:
    page = tab.page
    page.goto("/")
    page.goto("/#/explorations/0000nothing")
    expect(page.locator("#flow-error")).to_contain_text("no exploration with id 0000nothing")
    expect(page.locator("#flow svg")).to_have_count(0)
    assert not tab.errors


# --- the picture for docs/logview.md --------------------------------------------------------------


def test_call_flow_screenshot(
    live: LiveBotemu, tab: Tab, explored: dict[str, Any], tmp_path: Path
) -> None:
    """The reference IVR bot's call flow (its main menu selected), at 1280x900."""
    plain = {**explored, "findings": []}  # as botemu explore judges it: no finding
    svg = open_flow(tab, live.store.save_exploration(plain, started=1_764_000_000.0))
    node(svg, explored["states"][0]["id"]).click()
    expect(tab.page.locator("#flow-panel .choice")).to_have_count(3)
    page: Page = tab.page
    page.mouse.move(0, 0)
    picture = tmp_path / "call-flow.png"
    page.screenshot(path=str(picture))
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 900)
    if os.environ.get("BOTEMU_SCREENSHOT") == "1" or not SCREENSHOT.exists():
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(picture, SCREENSHOT)
    clean(tab)
