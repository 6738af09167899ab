"""The log view's HTTP surface: the page, its static files, and a small JSON API over the store.

==========================================================  =====================================
``GET /``                                                   the page (``static/index.html``;
                                                            ``/_logview/`` sends there)
``GET /_logview/static/{name}``                             its scripts, style sheet and icon
``GET /_logview/docs/rules.md``                             every rule (``botemu rules --markdown``)
``GET /_logview/api/calls``                                 ``{"total", "limit", "offset",
``?limit=&offset=&text=&reason=&has_findings=&kind=``       "calls"}``: one page, newest first
``GET /_logview/api/calls/{id}?after=N``                    ``{"call", "events", "rules"}`` (and
                                                            ``"activities"`` for a conversation)
``GET /_logview/api/calls/{id}/events/{seq}/blob``          an event's bytes (recordings: audio)
``GET /_logview/api/calls/{id}/export?format=json``         the store's export, as a download
``GET /_logview/api/calls/{id}/export?format=transcript``   a conversation's ``.transcript``
``GET /_logview/api/stream``                                server-sent events: ``calls``
==========================================================  =====================================

Explorations and the vendored layout library are ``explorations.py``'s; scenarios ``replays.py``'s.

``{id}`` is a call id or a unique prefix of one. Every API error is JSON, ``{"error": "..."}``:
400 for a bad parameter or an ambiguous id, 404 for an unknown call, event, blob or route. Every
response of the log view carries ``SECURITY_HEADERS``: a Content-Security-Policy that allows no
inline script (everything from the bot is rendered as text, and this is the second line of
defence), and ``nosniff``. The store is only read.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from emulator.findings import Rule
from emulator.jsonutil import JSON, JSONObject
from emulator.logview.activities import carried, transcript
from emulator.logview.audio import audio_routes
from emulator.logview.explorations import STORE, exploration_routes
from emulator.logview.feed import Feed
from emulator.logview.params import number, ranged, rules_json
from emulator.logview.replays import replay_routes
from emulator.transcripts.store import CallSummary, StoredEvent, TranscriptError, TranscriptStore

PREFIX = "/_logview"
STATIC = Path(__file__).resolve().parent / "static"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "media-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
PAGE_SIZE, MAX_PAGE = 50, 500
SHORT_ID = 12
"""Characters of an id the list shows, as ``botemu transcript list`` does."""
HEARTBEAT = 15.0
"""Seconds between keep-alive comments on an idle event stream."""
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/x-ms-wma", "audio/mpeg", "audio/ogg"})
"""The blob types served as themselves; any other blob is application/octet-stream."""
EXPORTS = ("json", "transcript")
_STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.(?:html|js|css|svg)$")


@dataclass
class LogView:
    """The log view's state, owned by its app: the store it reads and the live feed."""

    store: TranscriptStore
    feed: Feed
    _rules: dict[str, Rule] | None = field(default=None, repr=False)

    def rules(self) -> dict[str, Rule]:
        """Rule id -> rule, over every registry ``botemu rules`` lists (built once)."""
        if self._rules is None:
            from emulator.rulebook import rule_index  # every area's rules: loaded when first asked

            self._rules = rule_index()
        return self._rules


LOGVIEW = web.AppKey("logview", LogView)


# --- mounting ----------------------------------------------------------------------------------


def setup_logview(app: web.Application, store: TranscriptStore, *, interval: float = 0.25) -> None:
    """Serve the log view of ``store`` on ``app``: ``GET /`` and everything under ``/_logview``.
    ``interval``: seconds between two looks at the store while a page listens."""
    app.router.add_get("/", _index)
    sub = logview_app(store, interval=interval)
    app.add_subapp(PREFIX, sub)
    app[LOGVIEW] = sub[LOGVIEW]  # the same state, reachable from the app that mounts it
    app.on_response_prepare.append(_secure)


def standalone_app(store: TranscriptStore, *, interval: float = 0.25) -> web.Application:
    """The log view alone (``botemu logview``), over a store some earlier run wrote."""
    app = web.Application()
    setup_logview(app, store, interval=interval)
    return app


def logview_app(store: TranscriptStore, *, interval: float = 0.25) -> web.Application:
    """The sub-application mounted at ``/_logview``."""
    memory = str(store.path) == ":memory:"
    view = LogView(store, Feed(None if memory else store.path.resolve(), interval=interval))
    app = web.Application(middlewares=[_errors])
    app[LOGVIEW] = view
    app[STORE] = store  # the explorations' routes (explorations.py)
    app.add_routes(routes())
    app.on_shutdown.append(_close_feed)
    return app


def routes() -> list[web.RouteDef]:
    """Relative to ``/_logview``."""
    return [
        web.get("/", _home),
        web.get("/static/{name}", _static),
        web.get("/docs/rules.md", _rules_doc),
        web.get("/api/calls", _calls),
        web.get("/api/calls/{id}", _call),
        web.get("/api/calls/{id}/events/{seq}/blob", _blob),
        web.get("/api/calls/{id}/export", _export),
        web.get("/api/stream", _stream),
        *exploration_routes(),
        *replay_routes(),
        *audio_routes(),
        web.get("/api/{tail:.*}", _no_route),
    ]


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    if request.path == "/" or request.path == PREFIX or request.path.startswith(PREFIX + "/"):
        response.headers.update(SECURITY_HEADERS)


async def _close_feed(app: web.Application) -> None:
    await app[LOGVIEW].feed.close()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every API error as ``{"error": "..."}``, in one place."""
    try:
        return await handler(request)
    except web.HTTPException as e:
        if e.status < 400 or not request.path.startswith(f"{PREFIX}/api/"):
            raise
        message = e.text or e.reason
        if e.status == 405:
            message = f"{request.method} is not allowed: the log view only reads (GET)"
        response = _error(e.status, message)
        if "Content-Range" in e.headers:  # 416 says how long the blob is
            response.headers["Content-Range"] = e.headers["Content-Range"]
        return response
    except TranscriptError as e:
        return _error(500, e.message)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


# --- the page ----------------------------------------------------------------------------------


async def _index(request: web.Request) -> web.Response:
    return _file(STATIC / "index.html")


async def _home(request: web.Request) -> web.Response:
    raise web.HTTPFound("/")


async def _static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    # The name is matched before the file system is asked: a name longer than the system
    # allows (ENAMETOOLONG) is not found, like any other name that is not one of ours.
    if not _STATIC_NAME.match(name) or len(name) > 100 or not _is_file(STATIC / name):
        raise web.HTTPNotFound(text=f"no static file {name[:100]}")
    return _file(STATIC / name)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long, say
        return False


def _file(path: Path) -> web.Response:
    response = web.Response(body=path.read_bytes(), headers={"Cache-Control": "no-cache"})
    response.headers["Content-Type"] = STATIC_TYPES[path.suffix]
    return response


async def _rules_doc(request: web.Request) -> web.Response:
    from emulator.rulebook import rules_markdown

    return web.Response(text=rules_markdown(), content_type="text/plain", charset="utf-8")


# --- the API -----------------------------------------------------------------------------------


async def _calls(request: web.Request) -> web.Response:
    store = request.app[LOGVIEW].store
    query = request.query
    limit = number(query, "limit", PAGE_SIZE, 1, MAX_PAGE)
    offset = number(query, "offset", 0, 0, None)
    text = query.get("text") or None
    reason = query.get("reason") or None
    findings = _flag(query, "has_findings")
    kind = query.get("kind") or None
    if kind not in (None, "call", "conversation"):
        raise web.HTTPBadRequest(text=f"kind is call or conversation, not {kind!r}")
    total = store.count(text=text, reason=reason, has_findings=findings, kind=kind)
    page = store.calls(limit=limit, offset=offset, text=text, reason=reason,
                       has_findings=findings, kind=kind)  # fmt: skip
    calls: list[JSON] = [_summary(c) for c in page]
    return web.json_response({"total": total, "limit": limit, "offset": offset, "calls": calls})


async def _call(request: web.Request) -> web.Response:
    view = request.app[LOGVIEW]
    call = _find(request)
    after = number(request.query, "after", 0, 0, None)
    events = view.store.events(call.id)
    shown = [e for e in events if e.seq > after]
    out: JSONObject = {
        "call": _summary(call),
        "events": [e.to_json() for e in shown],
        "rules": _rules(view, shown),
    }
    if call.kind == "conversation":
        out["activities"] = [c.to_json() for c in carried(events, call.bot)]
    return web.json_response(out)


async def _blob(request: web.Request) -> web.Response:
    store = request.app[LOGVIEW].store
    call = _find(request)
    try:
        seq = int(request.match_info["seq"])
    except ValueError:
        raise web.HTTPBadRequest(text="seq is a number") from None
    data = store.blob(call.id, seq) if seq > 0 else None
    if data is None:
        raise web.HTTPNotFound(text=f"event {seq} of call {call.id} has no blob")
    event = next(iter(store.events(call.id, after=seq - 1)), None)
    given = event.payload.get("content_type") if event is not None else None
    audio = isinstance(given, str) and given in AUDIO_TYPES
    headers = {
        "Content-Type": given if audio and isinstance(given, str) else "application/octet-stream",
        "Accept-Ranges": "bytes",
        "Cache-Control": "no-cache",
        "Content-Disposition": f"{'inline' if audio else 'attachment'}; "
        f'filename="{_filename(call.id)}-{seq}{_extension(given)}"',
    }
    return ranged(request, data, headers)


async def _export(request: web.Request) -> web.Response:
    store = request.app[LOGVIEW].store
    call = _find(request)
    form = request.query.get("format", "json")
    if form not in EXPORTS:
        raise web.HTTPBadRequest(text=f"format is json or transcript, not {form!r}")
    if form == "json":
        document: JSON = store.export(call.id)
        suffix = "json"
    elif call.kind != "conversation":
        raise web.HTTPBadRequest(
            text=f"{call.id} is a {call.kind}, and only a conversation has activities to put in "
            "a .transcript: export it as json"
        )
    else:
        document = transcript(carried(store.events(call.id), call.bot))
        suffix = "transcript"
    return web.Response(
        body=_pretty(document),
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "Content-Disposition": f'attachment; filename="{_filename(call.id)}.{suffix}"',
        },
    )


async def _stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``hello`` once (``{"live"}``), then ``calls`` (``{"id", "seq"}``) for
    each call created, appended to or ended; a comment every HEARTBEAT seconds when idle."""
    feed = request.app[LOGVIEW].feed
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    })  # fmt: skip
    await response.prepare(request)
    live = feed.live
    subscription = feed.subscribe()
    try:
        await response.write(f"retry: 2000\nevent: hello\ndata: {_compact({'live': live})}\n\n"
                             .encode())  # fmt: skip
        quiet = time.monotonic()
        while not subscription.closed and not _gone(request):
            changes = await subscription.wait(max(feed.interval * 4, 0.1))
            if changes:
                await response.write(b"".join(
                    f"event: calls\ndata: {_compact({'id': i, 'seq': s})}\n\n".encode()
                    for i, s in changes.items()
                ))  # fmt: skip
                quiet = time.monotonic()
            elif time.monotonic() - quiet >= HEARTBEAT:
                await response.write(b": keep-alive\n\n")
                quiet = time.monotonic()
    except ConnectionError:
        pass  # the page went away between two looks
    finally:
        feed.unsubscribe(subscription)
    return response


def _gone(request: web.Request) -> bool:
    return request.transport is None or request.transport.is_closing()


async def _no_route(request: web.Request) -> web.Response:
    raise web.HTTPNotFound(text=f"no log view API at {request.path}")


# --- helpers -----------------------------------------------------------------------------------


def _find(request: web.Request) -> CallSummary:
    """The call named by ``{id}`` (or a unique prefix): 404 if none, 400 if several."""
    call_id = request.match_info["id"]
    try:
        call = request.app[LOGVIEW].store.call(call_id)
    except TranscriptError as e:
        raise web.HTTPBadRequest(text=e.message) from e
    if call is None:
        raise web.HTTPNotFound(text=f"no call with id {call_id!r}")
    return call


def _summary(call: CallSummary) -> JSONObject:
    out = call.to_json()
    out["short_id"] = call.id[:SHORT_ID]
    return out


def _rules(view: LogView, events: list[StoredEvent]) -> JSONObject:
    """What the registry says of each rule the findings among ``events`` name."""
    return rules_json((e.payload.get("rule") for e in events if e.kind == "finding"), view.rules())


def _flag(query: Mapping[str, str], name: str) -> bool | None:
    raw = query.get(name, "")
    if raw == "":
        return None
    if raw.lower() in ("1", "true", "yes"):
        return True
    if raw.lower() in ("0", "false", "no"):
        return False
    raise web.HTTPBadRequest(text=f"{name} is 1 or 0, not {raw!r}")


def _extension(content_type: JSON) -> str:
    return {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/x-ms-wma": ".wma",
            "audio/mpeg": ".mp3", "audio/ogg": ".ogg"}.get(str(content_type), ".bin")  # fmt: skip


def _filename(call_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", call_id)[:120] or "call"


def _pretty(document: JSON) -> bytes:
    text = json.dumps(document, indent=2, ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        return json.dumps(document, indent=2).encode("ascii") + b"\n"


def _compact(value: JSON) -> str:
    return json.dumps(value, separators=(",", ":"))
