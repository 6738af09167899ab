"""The track of a call for the log view's player: ``GET /_logview/api/calls/{id}/audio``.

The stored call rendered as one stereo WAV by ``emulator.audio`` (``botemu transcript audio``:
platform left, caller right, as long as the call), on a worker thread. Bounded at
``MAX_SECONDS`` of call, so that an answer holds at most about 37 MiB. 404 for an unknown call,
400 for an ambiguous prefix, 409 while it runs, 422 for a conversation or a call over the bound.
"""

from __future__ import annotations

import asyncio
import io

from aiohttp import web

from emulator.logview.explorations import STORE
from emulator.logview.params import ended_call, ranged
from emulator.transcripts.store import TranscriptStore

MAX_SECONDS = 600.0
"""Ten minutes of call: 16 kHz stereo 16-bit is 3.7 MiB a minute."""


def audio_routes() -> list[web.RouteDef]:
    """Relative to ``/_logview``; before its catch-all ``/api/{tail}``."""
    return [web.get("/api/calls/{id}/audio", _audio)]


async def _audio(request: web.Request) -> web.Response:
    store = request.app[STORE]
    summary = ended_call(store, request.match_info["id"], "its track comes")
    body = await asyncio.to_thread(_render, store, summary.id)
    return ranged(request, body, {"Content-Type": "audio/wav", "Cache-Control": "no-store"})


def _render(store: TranscriptStore, call_id: str) -> bytes:
    from emulator.audio.shared import shared_synthesizer
    from emulator.audio.track import TrackError, render_call

    out = io.BytesIO()
    try:
        render_call(store, call_id, out, shared_synthesizer(), max_seconds=MAX_SECONDS)
    except TrackError as e:
        raise web.HTTPUnprocessableEntity(text=str(e)) from e
    return out.getvalue()
