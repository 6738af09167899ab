"""HTTP details both services share: the client session that plays the platform towards a bot,
a response body read up to a limit, and an Authorization header as a transcript keeps it (a JWT
without its signature, so it can never be replayed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not at run time: ``botemu load`` imports this before gevent patches ssl
    import aiohttp

SIGNATURE_REMOVED = "<signature removed>"


def platform_session(**options: Any) -> aiohttp.ClientSession:
    """A client session for requests to a bot, as the platform makes them: with no cookie jar.
    The connector and the calling platform send a bot's webhooks from many machines and keep no
    cookies, so a bot's ``Set-Cookie`` never comes back; a bot that keeps its state in a cookie
    loses it here as it would there (aiohttp's own jar would send it back to a bot on
    ``localhost``). ``options`` go to ``aiohttp.ClientSession``."""
    import aiohttp

    return aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar(), **options)


async def read_limited(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """The body, up to ``limit`` bytes; whether there was more."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await response.content.read(64 * 1024)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            response.close()
            return b"".join(chunks)[:limit], True


def redact_authorization(value: str) -> str:
    """An Authorization header as the transcript keeps it: a JWT's header and claims stay
    readable, its signature is cut, so what is stored can never be replayed to a bot."""
    scheme, _, token = value.partition(" ")
    parts = token.split(".")
    if len(parts) == 3:
        return f"{scheme} {parts[0]}.{parts[1]}.{SIGNATURE_REMOVED}"
    return value if len(value) <= 20 else f"{value[:20]}…"
