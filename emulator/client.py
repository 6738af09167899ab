"""The client of a running botemu: its control API (``/_botemu/...``) as commands, the pytest
plugin and the demo use it, and how such a client trusts an https botemu.

It imports only the infrastructure below it (configuration, errors, findings, the guard's
control headers) and aiohttp.
"""

from __future__ import annotations

import functools
import json
import os
import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from emulator.config import DEFAULT_EMULATOR
from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.guard import SECRET_HEADER, control_headers, read_secret

__all__ = [
    "DEFAULT_CA",
    "DEFAULT_EMULATOR",
    "control_ssl",
    "finding_of",
    "get_json",
    "post_control",
    "post_json",
    "running",
]

DEFAULT_CA = Path("certs") / "ca.pem"
"""botemu's CA as ``botemu certs`` and ``botemu serve --tls`` write it by default."""


def control_ssl(url: str) -> ssl.SSLContext | bool:
    """How a client checks the certificate of the botemu at ``url``: aiohttp's default (True) for
    http; for https, the system's trust (``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured) plus
    botemu's CA ``certs/ca.pem`` when that file exists (``botemu serve --tls`` in the same
    directory), host name checked."""
    if urlsplit(url).scheme != "https":
        return True
    try:
        stamp = DEFAULT_CA.resolve().stat().st_mtime_ns
    except OSError:
        stamp = None
    ca_file = str(DEFAULT_CA.resolve()) if stamp is not None else None
    system = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    return _trusting(ca_file, stamp, system)


@functools.lru_cache(maxsize=4)
def _trusting(
    ca_file: str | None, stamp: int | None, system: tuple[str | None, str | None]
) -> ssl.SSLContext:
    """(``stamp`` and ``system`` only key the cache: a changed file or environment, a new one.)"""
    context = ssl.create_default_context()
    if ca_file is not None:
        try:
            context.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError):
            pass  # not a CA file after all: the system's trust alone
    return context


async def get_json(url: str, timeout: float = 5.0, *, certs: Path | None = None) -> Any:
    """GET a control route; its JSON answer (aiohttp's errors as they come). The control
    secret goes with it when ``certs`` (default ``certs/``) has it: some routes say more to
    botemu's own clients (the Direct Line secrets of ``/_botemu/config``)."""
    try:
        headers = {SECRET_HEADER: read_secret(certs)}
    except BotemuError:
        headers = {}
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, timeout=aiohttp.ClientTimeout(total=timeout), ssl=control_ssl(url),
                 headers=headers) as response,
    ):
        response.raise_for_status()
        return await response.json()


async def post_json(
    url: str, body: dict[str, Any], timeout: float = 30.0, *, certs: Path | None = None
) -> Any:
    """POST to a control route with the control secret; its JSON answer, or one BotemuError line
    for an HTTP error."""
    headers = control_headers(certs)
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            url,
            json=body,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout),
            ssl=control_ssl(url),
        ) as response,  # fmt: skip
    ):
        if response.status >= 400:
            raise BotemuError(f"{url}: HTTP {response.status}: {(await response.text())[:200]}")
        return await response.json()


async def post_control(
    emulator: str, path: str, body: dict[str, Any], timeout: float, *, certs: Path | None = None
) -> Any:
    """POST to a control route of the botemu at ``emulator`` (with the control secret of its
    certificates directory ``certs``, default ``certs/``); its JSON object answer. Every
    failure is one BotemuError line (the route's own message when it gave one)."""
    url = f"{emulator}{path}"
    headers = control_headers(certs)
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                url,
                json=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                ssl=control_ssl(url),
            ) as response,  # fmt: skip
        ):
            text = await response.text()
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as e:
        raise BotemuError(f"POST {url} failed: {str(e) or type(e).__name__}") from None
    if status >= 400:
        message = " ".join(text.split())[:400]
        if not message or message.startswith(f"{status}:"):  # not an answer of the route
            message = f"POST {url}: HTTP {status}{': ' if message else ''}{message}"
        raise BotemuError(message)
    try:
        report = json.loads(text)
    except ValueError:
        report = None
    if not isinstance(report, dict):
        raise BotemuError(f"POST {url}: the answer is not a JSON object")
    return report


def finding_of(item: object) -> Finding:
    """A finding a control route answered, or one BotemuError line."""
    try:
        return Finding.from_json(item)
    except ValueError as e:
        raise BotemuError(f"the botemu answered an unreadable finding: {e}") from None


async def running(emulator: str) -> bool:
    """Whether a botemu answers at ``emulator``. A TLS failure (an https botemu whose CA this
    client does not trust, say) is a BotemuError that says so."""
    try:
        health = await get_json(f"{emulator}/_botemu/health")
    except aiohttp.ClientSSLError as e:
        raise BotemuError(
            f"TLS with {emulator} failed ({e}); to trust botemu's CA, run in the directory "
            "holding certs/ca.pem or set SSL_CERT_FILE to it"
        ) from None
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return False
    return isinstance(health, dict) and health.get("status") == "ok"
