"""The benchmark's raw POST: a route that reads the body and answers, and does nothing else.

``benchmarks/connector.py`` compares connector activities per second with raw round trips of the
same request to the same server. A raw round trip needs a route that costs the server what any
POST costs it (aiohttp's parsing, routing, the app's middlewares, reading the body, writing the
answer) and nothing more. No route of botemu is that: each one checks a token, parses, keeps
state or writes a transcript. So ``setup_connector`` adds this one, and only when
``BOTEMU_BENCH_ECHO=1`` is in the environment as the app is built (``ENV_ECHO``):

``POST /_bench/conversations/{conversationId}/activities`` reads the body with aiohttp's
``request.read()`` and answers ``{"id": "<32 hex digits>"}`` as the connector answers an
activity (the same status, headers and body length), without looking at the body, the
Authorization header or the id in the path: no token check, no parsing, no state, no transcript.
The path is that of ``send_to_conversation`` under another prefix, outside ``/v3`` (so the
connector's middleware lets it through at once), and the benchmark sends the conversation's id
four characters shorter, so that the request line has the activity's length.

Without the variable the route does not exist: ``botemu serve`` answers it 404, as any unknown
path. Where it exists it is harmless: it keeps nothing, tells nothing and reads no more than
the app's ``client_max_size``.
"""

from __future__ import annotations

import os

from aiohttp import web

from emulator.connector.handling import ok

ENV_ECHO = "BOTEMU_BENCH_ECHO"
ECHO_PATH = "/_bench/conversations/{conversationId}/activities"
ECHO_ID = "0123456789abcdef0123456789abcdef"
"""The id the echo answers: as long as an activity's (``models.uuid4_hex``)."""


def echo_enabled() -> bool:
    """Whether ``BOTEMU_BENCH_ECHO=1`` is set (read when the app is built)."""
    return os.environ.get(ENV_ECHO, "").strip() == "1"


async def echo(request: web.Request) -> web.Response:
    """Read the body, answer as the connector answers an activity."""
    await request.read()
    return ok({"id": ECHO_ID})


def echo_routes() -> list[web.RouteDef]:
    return [web.post(ECHO_PATH, echo, name="bench.echo")]
