"""Explorations for the log view's tests: the reference IVR bot crawled for real (``Crawler``, as
``botemu explore`` runs it) into a store, its document as ``to_json`` makes it; and a copy of a
document full of markup, as a hostile bot (or a hand-edited file) would make one."""

from __future__ import annotations

import copy
from typing import Any

from emulator.calling.session import CallSettings
from emulator.explore.crawler import Crawler
from emulator.explore.report import to_json
from emulator.explore.verdicts import judge
from emulator.transcripts.store import TranscriptStore

MARKUP = "<img src=x onerror=alert('flow')>"
"""Markup that would run if it were ever parsed as HTML."""
CHOICE = "<b onmouseover=alert('choice')>sales</b>"
MOVE = "<svg onload=alert('move')>"
END = "<iframe src=javascript:alert('end')>"


async def explore(store: TranscriptStore, bot_url: str, *, max_choices: int = 5) -> dict[str, Any]:
    """Crawl the bot at ``bot_url`` (every call into ``store``) and return the document, judged
    with menus long above ``max_choices``."""
    graph = await Crawler(CallSettings(bot_url=bot_url, seed=1), store).crawl()
    return to_json(graph, bot_url, judge(graph, max_choices=max_choices))


def expected_shape(document: dict[str, Any]) -> dict[str, int]:
    """What the call-flow page draws for ``document`` (no bound hit): a box for the start, for
    each state and for each (state, end reason, prompts heard after the last input) that ended
    calls; a move for each edge, and an arrow for each pair of boxes with moves between them."""
    ends = {(e["from"], e["end"], tuple(e["heard"])) for e in document["edges"] if e["to"] is None}
    arrows = {(e["from"], e["to"] if e["to"] is not None else ("end", e["end"], tuple(e["heard"])))
              for e in document["edges"]}  # fmt: skip
    return {"nodes": 1 + len(document["states"]) + len(ends), "ends": len(ends),
            "moves": len(document["edges"]), "arrows": len(arrows)}  # fmt: skip


def hostile(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with markup in the bot, the first state's prompts and first choice, a move, an
    end reason and a finding; and its first move from the menu crashing the bot (its errors, and
    an EXPLORE-CRASH-PATH finding naming it)."""
    out = copy.deepcopy(document)
    out["bot"] = f"http://bot.example/{MARKUP}"
    menu = out["states"][0]
    menu["prompts"] = [MARKUP, f"then {MARKUP}"]
    menu["choices"][0]["name"] = CHOICE
    crash = next(e for e in out["edges"] if e["from"] == menu["id"])
    crash["move"] = MOVE
    crash["errors"] = [{"rule": "CALL-HTTP-5XX", "severity": "error", "where": "$",
                        "message": f"the bot answered 500: {MARKUP}"}]  # fmt: skip
    ended = next(e for e in out["edges"] if e["to"] is None)
    ended["end"] = END
    out["findings"] = [
        {"rule": "EXPLORE-CRASH-PATH", "severity": "error", "where": "; ".join(crash["steps"]),
         "message": f"CALL-HTTP-5XX: {MARKUP}", "evidence": f"call {crash['call_id']}"},
        {"rule": "EXPLORE-LONG-PROMPT", "severity": "warning", "where": menu["id"],
         "message": MARKUP},
    ]  # fmt: skip
    return out
