"""HTTP details both services share: a response body read up to a limit, and an Authorization
header as a transcript keeps it (a JWT without its signature, so it can never be replayed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

SIGNATURE_REMOVED = "<signature removed>"


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
