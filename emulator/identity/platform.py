"""The listener of the platform's hosts: one loopback port, two ways in, and a trust bundle.

- **A proxy for the platform's hosts only.** A client given ``HTTPS_PROXY=http://127.0.0.1:P``
  (Python's requests and urllib read it) sends ``CONNECT login.microsoftonline.com:443``; the
  listener answers 200 for a host of ``PLATFORM_HOSTS`` on port 443 and then serves TLS itself,
  with a certificate for those hosts from botemu's CA. Any other host, any other port, any other
  method is refused (403, 405): it is not an open proxy.
- **TLS straight in.** A node process given botemu's preload (``NODE_OPTIONS=--require
  platform_preload.cjs``, ``BOTEMU_PLATFORM_ADDRESS=127.0.0.1:P``) opens its TLS connections
  for those hosts to this port, naming the host by SNI: a connection whose first byte is a TLS
  handshake goes to the same TLS server.

Behind both, ``wellknown.wellknown_app`` answers. Bounds: at most ``MAX_CONNECTIONS`` at once
(more are closed at once), a request head of at most ``MAX_HEAD`` bytes read within
``HEAD_TIMEOUT`` seconds, and a tunnel idle for ``IDLE_TIMEOUT`` seconds is closed.

``trust_bundle`` writes the CA file a bot's runtime is given (``SSL_CERT_FILE``,
``REQUESTS_CA_BUNDLE``): the system's CAs followed by botemu's, so the bot still reaches
anything else it calls over https.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import tempfile
from pathlib import Path

from aiohttp import web

from emulator.certs import KEY_MODE, ensure_certs, load_ca
from emulator.certs.issuing import issue_leaf
from emulator.certs.paths import write_file
from emulator.identity.routes import IdentityService
from emulator.identity.wellknown import PLATFORM_HOSTS, Forward, Recorder, wellknown_app

MAX_CONNECTIONS = 64
MAX_HEAD = 8 * 1024
HEAD_TIMEOUT = 10.0
IDLE_TIMEOUT = 120.0
PRELOAD = Path(__file__).resolve().parent / "platform_preload.cjs"
"""The node preload that sends the platform hosts' TLS connections to this listener."""

TRUST_BUNDLE = "trust-bundle.pem"
TLS_HANDSHAKE = 0x16


def platform_ssl_context(certs_dir: Path) -> ssl.SSLContext:
    """A server context with a certificate for ``PLATFORM_HOSTS`` from botemu's CA (issued
    anew in memory at each start; the CA is made first when ``certs_dir`` has none)."""
    paths = ensure_certs(certs_dir)
    chain, key = issue_leaf(load_ca(paths), "platform hosts", PLATFORM_HOSTS, PLATFORM_HOSTS[1])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="botemu-") as directory:
        cert_file, key_file = Path(directory) / "hosts.pem", Path(directory) / "hosts.key"
        write_file(cert_file, chain, KEY_MODE)
        write_file(key_file, key, KEY_MODE)
        context.load_cert_chain(str(cert_file), str(key_file))
    return context


def trust_bundle(certs_dir: Path) -> Path:
    """``certs_dir/trust-bundle.pem``: the system's CA certificates, then botemu's CA."""
    paths = ensure_certs(certs_dir)
    system = b""
    defaults = ssl.get_default_verify_paths()
    for candidate in (defaults.cafile, defaults.openssl_cafile):
        if candidate and Path(candidate).is_file():
            with contextlib.suppress(OSError):
                system = Path(candidate).read_bytes()
                break
    target = certs_dir / TRUST_BUNDLE
    bundle = (
        system.rstrip(b"\n") + b"\n" + paths.ca.read_bytes() if system else paths.ca.read_bytes()
    )
    if not target.is_file() or target.read_bytes() != bundle:
        write_file(target, bundle, 0o644)
    return target.resolve()


class PlatformListener:
    """The listener (see the module docstring); ``start`` binds it, ``close`` ends it."""

    def __init__(
        self,
        service: IdentityService,
        certs_dir: Path,
        *,
        record: Recorder | None = None,
        forward: Forward | None = None,
    ) -> None:
        self._app = wellknown_app(service, record, forward)
        self._certs_dir = certs_dir
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._inner_port = 0
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: any free port); the port bound. Called again after an
        ``OSError`` (the port taken), it listens on the new port with the same inner server."""
        if self._runner is None:
            runner = web.AppRunner(self._app, access_log=None)
            await runner.setup()
            self._runner = runner
            site = web.TCPSite(runner, "127.0.0.1", 0,
                               ssl_context=platform_ssl_context(self._certs_dir))  # fmt: skip
            await site.start()
            server = site._server
            assert isinstance(server, asyncio.Server)
            self._inner_port = server.sockets[0].getsockname()[1]
        self._server = await asyncio.start_server(self._accept, host, port, limit=MAX_HEAD)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        if self._runner is not None:
            await self._runner.cleanup()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._slots.locked():
            writer.close()
            return
        async with self._slots:
            try:
                await self._serve(reader, writer)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                    ValueError):  # fmt: skip
                pass
            finally:
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await asyncio.wait_for(reader.read(1), HEAD_TIMEOUT)
        if not first:
            return
        if first[0] == TLS_HANDSHAKE:
            await self._tunnel(reader, writer, first)
            return
        head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        refusal = _refusal(head)
        if refusal is not None:
            writer.write(refusal)
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await self._tunnel(reader, writer, b"")

    async def _tunnel(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes
    ) -> None:
        inner_reader, inner_writer = await asyncio.open_connection("127.0.0.1", self._inner_port)
        try:
            if first:
                inner_writer.write(first)
            await asyncio.gather(_pipe(reader, inner_writer), _pipe(inner_reader, writer))
        finally:
            inner_writer.close()


def _refusal(head: bytes) -> bytes | None:
    """None for ``CONNECT <platform host>:443``, else the response that refuses the request."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    method, _, rest = line.partition(" ")
    target = rest.split(" ", 1)[0]
    hosts = ", ".join(PLATFORM_HOSTS)
    if method != "CONNECT":
        return _response(405, f"botemu's platform listener only tunnels (CONNECT) to {hosts}")
    name, _, port = target.rpartition(":")
    if name.lower() not in PLATFORM_HOSTS or port != "443":
        return _response(403, f"botemu is not an open proxy: it answers only for {hosts} "
                              f"on port 443, not {target[:200]}")  # fmt: skip
    return None


def _response(status: int, text: str) -> bytes:
    reason = {403: "Forbidden", 405: "Method Not Allowed"}[status]
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body  # fmt: skip


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until the end of ``reader`` (or ``IDLE_TIMEOUT`` without a byte), then end
    ``writer``'s side."""
    try:
        while chunk := await asyncio.wait_for(reader.read(64 * 1024), IDLE_TIMEOUT):
            writer.write(chunk)
            await writer.drain()
    except (OSError, TimeoutError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
