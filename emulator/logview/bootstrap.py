"""The page's bootstrap: values the running emulator hands its own log view page, as ``<meta>``
tags in the index HTML (the web chat's token and address; docs/security.md, "The live
transport").

The log view serves ``GET /`` (``routes._index``); an app that mounts it and has something to
hand the page adds ``bootstrap_middleware``, which puts the values into that page, and only there:

- only into a page the guard let through (its Host check runs first: a page of a rebound name,
  the one way another site could read botemu's answers, never gets here);
- only when the browser loads it as a document (a navigation, ``Sec-Fetch-Dest: document``), or
  when the request is the page's own (``Sec-Fetch-Site: same-origin``), or comes from no browser
  at all (no ``Sec-Fetch-*`` header: a local process, which can read the state directory anyway).
  A cross-site ``fetch``, ``<iframe>``, ``<script>`` or ``<img>`` of ``/`` gets the plain page;
- never cached (``Cache-Control: no-store``).

It imports aiohttp and the log view's static directory; nothing of the service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from html import escape

from aiohttp import web
from aiohttp.typedefs import Middleware

BOOTSTRAP_PATH = "/"
ANCHOR = b'<meta charset="utf-8">'
"""The bootstrap's tags go right after this tag of ``static/index.html``."""

Values = Callable[[web.Request], Mapping[str, str]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def may_bootstrap(request: web.Request) -> bool:
    """Whether ``request`` may receive the page with the bootstrap values in it."""
    dest = request.headers.get("Sec-Fetch-Dest")
    site = request.headers.get("Sec-Fetch-Site")
    if dest is None and site is None:
        return True  # not a browser: a local process with the developer's own rights
    return dest == "document" or site == "same-origin"


def with_meta(page: bytes, values: Mapping[str, str]) -> bytes:
    """``page`` with a ``<meta name=... content=...>`` per value after its charset tag (escaped:
    the values are ours, but an attribute is an attribute)."""
    if not values or ANCHOR not in page:
        return page
    tags = "".join(
        f'\n  <meta name="{escape(name, quote=True)}" content="{escape(value, quote=True)}">'
        for name, value in values.items()
    )
    return page.replace(ANCHOR, ANCHOR + tags.encode("utf-8"), 1)


def bootstrap_middleware(values: Values) -> Middleware:
    """A middleware that adds ``values(request)`` to the log view's page at ``/`` (GET and
    HEAD), for the requests ``may_bootstrap`` lets have them."""

    @web.middleware
    async def bootstrap(request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        if (
            request.path != BOOTSTRAP_PATH
            or request.method not in ("GET", "HEAD")
            or not isinstance(response, web.Response)
            or response.status != 200
            or not isinstance(response.body, bytes)
        ):
            return response
        response.headers["Cache-Control"] = "no-store"  # with or without values: one policy
        if may_bootstrap(request):
            response.body = with_meta(response.body, values(request))
        return response

    return bootstrap
