"""Calls over mutual-TLS HTTPS on loopback: the reference bot, and a broken bot behind TLS."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import ModuleType

import pytest
from aiohttp import web

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.events import EndReason
from emulator.calling.session import CallSettings, place_call
from emulator.certs import CertPaths, client_ssl_context, ensure_certs
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import STATE, make_bot
from tests.support import load_module

ROOT = Path(__file__).resolve().parent.parent.parent
Serve = Callable[[web.Application, ssl.SSLContext], Awaitable[str]]


def load_ivr_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "ivr_bot.py", "ivr_bot_tls")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertPaths:
    return ensure_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(app: web.Application, context: ssl.SSLContext) -> str:
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        return f"https://127.0.0.1:{port}/api/calls"

    yield start
    for runner in runners:
        await runner.cleanup()


async def test_reference_bot_over_mutual_tls(
    certs: CertPaths, serve: Serve, tmp_path: Path
) -> None:
    ivr = load_ivr_bot()
    app = ivr.make_app(platform_cn="platform.botemu.local", voicemail_dir=tmp_path / "vm")
    url = await serve(app, ivr.tls_context(certs.dir))
    settings = CallSettings(
        bot_url=url,
        caller=CallerScript.from_inline("press 3; talk 4s"),
        ssl_context=client_ssl_context(certs),
        seed=1,
    )
    with TranscriptStore(tmp_path / "t.db") as store:
        report = await place_call(settings, store)
    assert report.end_reason is EndReason.BOT_HUNG_UP
    assert report.findings == ()  # https callbacks: not even the http warning
    saved = list((tmp_path / "vm").iterdir())
    assert len(saved) == 1 and saved[0].suffix == ".wav"


async def test_bot_rejects_a_platform_without_its_certificate(
    certs: CertPaths, serve: Serve, tmp_path: Path
) -> None:
    ivr = load_ivr_bot()
    url = await serve(ivr.make_app(platform_cn="platform.botemu.local"), ivr.tls_context(certs.dir))
    no_client_cert = ssl.create_default_context(cafile=str(certs.ca))
    settings = CallSettings(
        bot_url=url, ssl_context=no_client_cert, retry=RetryPolicy(attempts=2, backoff=0.01)
    )
    with TranscriptStore(tmp_path / "t.db") as store:
        report = await place_call(settings, store)
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert {f.rule for f in report.findings} == {"CALL-CONNECTION", "CALL-DELIVERY-FAILED"}


async def test_the_platform_rejects_a_bot_certificate_from_another_ca(
    certs: CertPaths, serve: Serve, tmp_path: Path
) -> None:
    other = ensure_certs(tmp_path / "other")
    ivr = load_ivr_bot()
    url = await serve(ivr.make_app(), ivr.tls_context(other.dir))
    settings = CallSettings(
        bot_url=url, ssl_context=client_ssl_context(certs), retry=RetryPolicy(attempts=1)
    )
    with TranscriptStore(tmp_path / "t.db") as store:
        report = await place_call(settings, store)
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert "TLS handshake failed" in report.findings[0].message


async def test_flaky_bot_behind_tls_is_retried_with_the_same_message_id(
    certs: CertPaths, serve: Serve, tmp_path: Path
) -> None:
    app = make_bot("flaky")
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(certs.ca))
    server.load_cert_chain(certs.bot_cert, certs.bot_key)
    server.verify_mode = ssl.CERT_REQUIRED
    url = await serve(app, server)
    settings = CallSettings(
        bot_url=url,
        caller=CallerScript.from_inline("press 1"),
        ssl_context=client_ssl_context(certs),
        retry=RetryPolicy(attempts=3, backoff=0.01),
    )
    with TranscriptStore(tmp_path / "t.db") as store:
        report = await place_call(settings, store)
    assert report.end_reason is EndReason.BOT_HUNG_UP
    ids = [r.headers["X-Platform-Message-ID"] for r in app[STATE].received]
    assert ids[0] == ids[1] and ids[2] == ids[3]
