"""The log view's "Save as scenario": a stored call or conversation as the scenario that replays
it (``emulator.replay.convert.replay_of``, what ``botemu transcript to-scenario`` writes).

==================================================  ============================================
``GET /_logview/api/calls/{id}/scenario``           the scenario's YAML, ``text/yaml;
``?strict=0&format=yaml&download=0``                charset=utf-8``, with ``X-Botemu-Verified``
                                                    (``true`` or ``false``) and
                                                    ``X-Botemu-Notes`` (how many notes; each is a
                                                    ``# note:`` comment at the top); with
                                                    ``download=1``, as the attachment
                                                    ``replay-<short id>.yaml``
``GET /_logview/api/calls/{id}/scenario``           ``{"id", "short_id", "kind", "strict",
``?format=json``                                    "filename", "text", "notes", "verified"}``:
                                                    what the page shows
==================================================  ============================================

``strict``: 1 for every text exactly as it was (default 0, loose: numbers, dates, times and ids
as patterns). ``{id}`` is a call id or a unique prefix of one. Errors are the log view's JSON
(``routes._errors``): 400 for a bad parameter or an ambiguous prefix, 404 for an unknown id, 409
for a call that is still running, 422 for one that cannot be replayed (interrupted, too large, a
kind that is neither a call nor a conversation). The schema the file's editor line names is the
library's default: its absolute path in the installed package.

A GET that only reads the store: nothing is written, and the answer is never cached. The Host
check (``emulator/guard.py``) and the log view's security headers apply as to every route under
``/_logview``; no answer carries ``Access-Control-Allow-Origin``, so another origin reads nothing.
The YAML holds bot-controlled text: the page puts it in a ``<pre>`` as text.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping

from aiohttp import web

from emulator.jsonutil import JSONObject
from emulator.logview.explorations import STORE
from emulator.logview.params import ended_call
from emulator.replay.convert import Replay, ReplayError, replay_of
from emulator.transcripts.store import CallSummary, TranscriptStore

SHORT_ID = 12
YAML_TYPE = "text/yaml; charset=utf-8"
FORMATS = ("yaml", "json")


def replay_routes() -> list[web.RouteDef]:
    """Relative to ``/_logview``; before its catch-all ``/api/{tail}``."""
    return [web.get("/api/calls/{id}/scenario", _scenario)]


async def _scenario(request: web.Request) -> web.Response:
    query = request.query
    strict = _flag(query, "strict")
    download = _flag(query, "download")
    form = query.get("format") or "yaml"
    if form not in FORMATS:
        raise web.HTTPBadRequest(text=f"format is yaml or json, not {form[:100]!r}")
    if download and form != "yaml":
        raise web.HTTPBadRequest(text="download=1 gives the YAML file: leave format out")
    store = request.app[STORE]
    summary = ended_call(store, request.match_info["id"], "a scenario can be made")
    replay = await asyncio.to_thread(_replay, store, summary, strict)
    name = filename(summary.id)
    if form == "json":
        return web.json_response(_document(summary, replay, strict, name),
                                 headers={"Cache-Control": "no-store"})  # fmt: skip
    headers = {
        "Content-Type": YAML_TYPE,
        "Cache-Control": "no-store",
        "X-Botemu-Verified": "true" if replay.verified else "false",
        "X-Botemu-Notes": str(len(replay.notes)),
    }
    if download:
        headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return web.Response(body=replay.text.encode("utf-8", "backslashreplace"), headers=headers)


def _replay(store: TranscriptStore, summary: CallSummary, strict: bool) -> Replay:
    """The replay (on a worker thread: the store is thread-safe, and the engine's check of the
    steps is work the event loop should not wait on); 422 for a call the library refuses."""
    try:
        return replay_of(store, summary.id, strict=strict)
    except ReplayError as e:
        raise web.HTTPUnprocessableEntity(text=str(e)) from e


def _document(summary: CallSummary, replay: Replay, strict: bool, name: str) -> JSONObject:
    return {
        "id": summary.id,
        "short_id": summary.id[:SHORT_ID],
        "kind": replay.kind,
        "strict": strict,
        "filename": name,
        "text": replay.text,
        "notes": list(replay.notes),
        "verified": replay.verified,
    }


def filename(call_id: str) -> str:
    """``replay-<short id>.yaml``, in characters safe in a header and a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", call_id[:SHORT_ID]) or "call"
    return f"replay-{safe}.yaml"


def _flag(query: Mapping[str, str], name: str) -> bool:
    raw = query.get(name, "")
    if raw.lower() in ("", "0", "false", "no"):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise web.HTTPBadRequest(text=f"{name} is 1 or 0, not {raw[:100]!r}")
