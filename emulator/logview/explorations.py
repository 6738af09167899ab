"""The log view's routes for explorations (``botemu explore``'s graphs in the store), and the
vendored layout library the call-flow page draws them with.

==============================================  ================================================
``GET /_logview/api/explorations``              ``{"total", "limit", "offset", "explorations"}``:
``?limit=50&offset=0``                          one page of summaries, newest first
``GET /_logview/api/explorations/{id}``         ``{"exploration": summary, "document": {...},
                                                "rules": {id: {severity, source, summary}}}``:
                                                the graph as ``botemu explore --json`` wrote
                                                it, and the rules its findings name
``GET /_logview/static/vendor/{name}``          ``dagre.min.js`` (@dagrejs/dagre, MIT) and its
                                                ``LICENSE``
==============================================  ================================================

``{id}`` is an exploration id or a unique prefix of one: 404 when none matches, 400 when several
do. Errors are the log view's (``{"error": "..."}``, by ``routes._errors``), and every answer
carries its security headers (``routes._secure``): they are mounted on the same sub-application.
Only reads; the documents come back as they were saved, bot-controlled text and all: the page
renders every string of them as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from aiohttp import web

from emulator.findings import Rule
from emulator.jsonutil import JSONObject
from emulator.logview.params import number, rules_json
from emulator.transcripts.store import ExplorationSummary, TranscriptError, TranscriptStore

STORE = web.AppKey("logview-explorations-store", TranscriptStore)
"""The store the exploration routes read (set by ``routes.logview_app``)."""
VENDOR = Path(__file__).resolve().parent / "static" / "vendor"
VENDORED = {
    "dagre.min.js": "text/javascript; charset=utf-8",
    "LICENSE": "text/plain; charset=utf-8",
}
"""The only vendored files served, with their types: no other name is looked up."""
PAGE_SIZE, MAX_PAGE = 50, 500
SHORT_ID = 12


def exploration_routes() -> list[web.RouteDef]:
    """Relative to ``/_logview``; before its catch-all ``/api/{tail}``."""
    return [
        web.get("/api/explorations", _explorations),
        web.get("/api/explorations/{id}", _exploration),
        web.get("/static/vendor/{name}", _vendored),
    ]


async def _explorations(request: web.Request) -> web.Response:
    store = request.app[STORE]
    limit = number(request.query, "limit", PAGE_SIZE, 1, MAX_PAGE)
    offset = number(request.query, "offset", 0, 0, None)
    total = store.count_explorations()
    page = [_summary(e) for e in store.explorations(limit=limit, offset=offset)]
    return web.json_response(
        {"total": total, "limit": limit, "offset": offset, "explorations": page}
    )


async def _exploration(request: web.Request) -> web.Response:
    store = request.app[STORE]
    wanted = request.match_info["id"]
    try:
        summary = store.exploration_summary(wanted)
        document = store.exploration(summary.id) if summary is not None else None
    except TranscriptError as e:
        if "ambiguous" not in e.message:
            raise
        raise web.HTTPBadRequest(text=e.message) from e
    if summary is None or document is None:
        raise web.HTTPNotFound(text=f"no exploration with id {wanted[:100]!r}")
    return web.json_response(
        {"exploration": _summary(summary), "document": document, "rules": _rules(document)}
    )


async def _vendored(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    kind = VENDORED.get(name)
    if kind is None:
        raise web.HTTPNotFound(text=f"no vendored file {name[:100]}")
    response = web.Response(body=(VENDOR / name).read_bytes(),
                            headers={"Cache-Control": "no-cache"})  # fmt: skip
    response.headers["Content-Type"] = kind
    return response


@cache
def _rule_index() -> dict[str, Rule]:
    from emulator.rulebook import rule_index  # every area's rules: loaded when first asked

    return rule_index()


def _rules(document: Mapping[str, Any]) -> JSONObject:
    """What the registry says of each rule the document's findings (and its moves' errors)
    name."""
    findings = list(document.get("findings") or [])
    for edge in document.get("edges") or []:
        if isinstance(edge, dict) and isinstance(edge.get("errors"), list):
            findings += edge["errors"]
    names = (finding.get("rule") for finding in findings if isinstance(finding, dict))
    return rules_json(names, _rule_index())


def _summary(exploration: ExplorationSummary) -> JSONObject:
    out = exploration.to_json()
    out["short_id"] = exploration.id[:SHORT_ID]
    return out
