"""The platform's hosts beside a running botemu: its listener started with the app, each
exchange recorded, and what a bot's environment needs to reach it (``GET /_botemu/config``'s
``platform``; ``botemu env``). The listener itself is ``emulator.identity.platform``."""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from emulator.config import ServiceConfig
from emulator.httpio import redact_authorization
from emulator.identity.platform import PRELOAD, PlatformListener, trust_bundle
from emulator.identity.python_preload import preload_folder
from emulator.identity.routes import IDENTITY
from emulator.identity.wellknown import PLATFORM_HOSTS, Forward, Recorder
from emulator.jsonutil import JSON, JSONObject
from emulator.service.state import EMULATOR, Emulator
from emulator.transcripts.store import TranscriptError

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
"""Where the listener binds, whatever address botemu itself serves on: it answers for hosts that
are not botemu's, so it is never reachable from another machine."""
TRANSCRIPT_KIND = "identity"
"""The kind of the transcript that holds the exchanges with the platform's hosts."""


@dataclass
class PlatformRecord:
    """The exchanges with the platform's hosts, in one transcript of their own (started with the
    first)."""

    emulator: Emulator
    transcript: str | None = None
    failed: bool = field(default=False)

    def record(self, request: web.Request, status: int, body: JSON) -> None:
        if self.failed:
            return
        store = self.emulator.store
        try:
            if self.transcript is None:
                self.transcript = store.start(kind=TRANSCRIPT_KIND, bot="platform hosts",
                                              caller="bots")  # fmt: skip
            headers: JSONObject = {
                str(k): (redact_authorization(v) if k.lower() == "authorization" else v)
                for k, v in request.headers.items()
            }
            url = f"https://{request.host}{request.path_qs}"[:2048]
            store.append_many(self.transcript, [
                ("http.request", {"summary": f"bot → {request.host}: {request.method} "
                                  f"{request.path[:120]}", "method": request.method, "url": url,
                                  "headers": headers}, None),
                ("http.response", {"summary": f"← {request.host} {status}", "status": status,
                                   "body": body}, None),
            ])  # fmt: skip
        except (TranscriptError, OSError):
            log.exception("platform hosts: cannot record an exchange")
            self.failed = True


def platform_document(config: ServiceConfig, port: int) -> JSONObject:
    """What a bot's runtime is given to reach the listener on ``port``."""
    address = f"127.0.0.1:{port}"
    return {
        "address": address,
        "proxy": f"http://{address}",
        "hosts": list(PLATFORM_HOSTS),
        "trust_bundle": str(trust_bundle(config.certs_dir)),
        "ca": str((config.certs_dir / "ca.pem").resolve()),
        "node_preload": str(PRELOAD),
        "python_preload": preload_folder(str(config.certs_dir)),
    }


FORWARDED = ("Authorization", "Content-Type", "Accept")
MAX_FORWARD = 256 * 1024


def _forwarder(base_url: str) -> Forward:
    """Requests to the token service's public host, answered by botemu's own token service
    (its routes, its authentication) at ``base_url``."""

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.content.read(MAX_FORWARD + 1)
        if len(body) > MAX_FORWARD:
            return web.json_response({"error": {"code": "MessageSizeTooBig",
                                                "message": "the body is too large"}}, status=413)  # fmt: skip
        headers = {k: v for k, v in request.headers.items() if k in FORWARDED}
        timeout = aiohttp.ClientTimeout(total=30)
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.request(
                request.method,
                f"{base_url}{request.path_qs}",
                data=body or None,
                headers=headers,
                ssl=False,
                allow_redirects=False,
            ) as answer,  # fmt: skip
        ):
            data = await answer.read()
            kind = answer.headers.get("Content-Type", "application/json")
            return web.Response(status=answer.status, body=data, headers={"Content-Type": kind})

    return forward


async def start_platform_hosts(app: web.Application) -> PlatformListener:
    """Start the listener of ``app``'s botemu on loopback, ``config.platform_port`` (None: the
    port after botemu's, or any free one when that is taken), and publish it on the Emulator."""
    emulator = app[EMULATOR]
    config = emulator.config
    recorder: Recorder = PlatformRecord(emulator).record
    listener = PlatformListener(app[IDENTITY], config.certs_dir, record=recorder,
                                forward=_forwarder(config.base_url))  # fmt: skip
    wanted = config.platform_port
    try:
        port = await listener.start(LOOPBACK, config.port + 1 if wanted is None else wanted)
    except OSError as e:
        if wanted is not None or e.errno != errno.EADDRINUSE:
            await listener.close()
            raise
        port = await listener.start(LOOPBACK, 0)
    emulator.platform = platform_document(config, port)
    return listener
