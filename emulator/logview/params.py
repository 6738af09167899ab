"""What the log view's API routes share: a whole-number query parameter within bounds, what the
rulebook says of the rules a page's findings name, and a body served by byte ranges (a player
seeks in it)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from aiohttp import web

from emulator.findings import Rule
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import CallSummary, TranscriptError, TranscriptStore


def number(query: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
    """The query parameter ``name`` as a whole number from ``low`` to ``high`` (None: no upper
    bound), ``default`` when absent or empty; otherwise 400 naming the bounds."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise web.HTTPBadRequest(text=f"{name} is a whole number {bounds}, not {raw[:100]!r}")
    return value


def rules_json(names: Iterable[object], index: Mapping[str, Rule]) -> JSONObject:
    """Severity, source and summary of each rule in ``index`` that ``names`` name."""
    out: JSONObject = {}
    for name in names:
        rule = index.get(name) if isinstance(name, str) else None
        if rule is not None:
            out[rule.id] = {"severity": rule.severity.value, "source": rule.source,
                            "summary": rule.summary}  # fmt: skip
    return out


_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(start, end) of one satisfiable byte range; None for the whole body (416 if outside)."""
    match = _RANGE.match(header.strip()) if header else None
    if match is None:
        return None
    first, last = match.groups()
    if first:
        start, end = int(first), (int(last) + 1 if last else size)
    elif last:
        start, end = max(size - int(last), 0), size
    else:
        return None
    end = min(end, size)
    if start >= end:
        raise web.HTTPRequestRangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})
    return start, end


def ranged(request: web.Request, data: bytes, headers: dict[str, str]) -> web.Response:
    """``data`` with ``headers``, whole or the one byte range the request asks for (206)."""
    headers = {**headers, "Accept-Ranges": "bytes"}
    wanted = byte_range(request.headers.get("Range"), len(data))
    if wanted is None:
        return web.Response(body=data, headers=headers)
    start, end = wanted
    headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
    return web.Response(body=data[start:end], status=206, headers=headers)


def ended_call(store: TranscriptStore, wanted: str, what: str) -> CallSummary:
    """The call named by ``{id}`` (a full id or a unique prefix): 404 if none, 400 if several,
    409 while a call runs (``what`` says what comes once it has ended)."""
    try:
        summary = store.call(wanted)
    except TranscriptError as e:
        raise web.HTTPBadRequest(text=e.message) from e
    if summary is None:
        raise web.HTTPNotFound(text=f"no call with id {wanted[:100]!r}")
    if summary.kind == "call" and summary.end_reason is None:
        raise web.HTTPConflict(text=f"call {summary.id} is still running: {what} once it has ended")
    return summary
