"""``botemu probe auth`` against a bot botemu knows as anonymous (registered without an app id):
one ``AUTH-ANONYMOUS`` warning when it accepts a call without a token, and the probe passes; a
bot registered anonymous that refuses such a call gets the usual cases. The command takes an
https ``--emulator`` (its CA in ./certs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from emulator.cli import main
from emulator.config import PLATFORM_OFF, BotRegistration, ServiceConfig, anonymous_app_id
from emulator.service.hosting import serving
from emulator.transcripts.store import TranscriptStore
from tests.support import LoopbackServers, free_port


def a_bot(status: int) -> web.Application:
    """A bot that answers every activity with ``status`` and checks no token."""

    async def messages(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=status)

    app = web.Application()
    app.router.add_post("/api/messages", messages)
    return app


@pytest.fixture
async def servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[LoopbackServers]:
    monkeypatch.chdir(tmp_path)  # the CLI finds the botemu's CA and control secret in ./certs
    s = LoopbackServers(tmp_path)
    try:
        yield s
    finally:
        await s.close()


async def probe(servers: LoopbackServers, status: int, *, tls: bool,
                capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:  # fmt: skip
    """``botemu probe auth --json`` of a bot answering ``status``, registered anonymous."""
    port = free_port()
    await servers.serve(a_bot(status), port)
    url = f"http://127.0.0.1:{port}/api/messages"
    config = ServiceConfig(port=free_port(), certs_dir=Path("certs"), tls=tls,
                           platform_port=PLATFORM_OFF,
                           bots=(BotRegistration(anonymous_app_id(1), "", url, anonymous=True),))  # fmt: skip
    store = TranscriptStore(servers.tmp_path / "t.db")
    try:
        async with serving(config, store):
            argv = ["probe", "auth", "--bot", url, "--emulator", config.base_url, "--json"]
            code = await asyncio.to_thread(main, argv)
    finally:
        store.close()
    out = capsys.readouterr().out
    report: dict[str, object] = json.loads(out) if out else {}
    return code, report


@pytest.mark.parametrize("tls", [pytest.param(False, id="http"), pytest.param(True, id="https")])
async def test_an_anonymous_bot_is_one_warning_and_passes(
    servers: LoopbackServers, tls: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = await probe(servers, 200, tls=tls, capsys=capsys)
    assert code == 0, report
    assert (report["passed"], report["errors"], report["warnings"]) == (True, 0, 1)
    [finding] = report["findings"]  # type: ignore[misc]
    assert finding["rule"] == "AUTH-ANONYMOUS" and finding["where"] == "no-header"
    assert "runs anonymously" in finding["message"] and "never in production" in finding["message"]
    assert str(report["emulator"]).startswith("https://" if tls else "http://")


async def test_a_bot_registered_anonymous_that_refuses_gets_every_case(
    servers: LoopbackServers, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = await probe(servers, 401, tls=False, capsys=capsys)
    rules = [f["rule"] for f in report["findings"]]  # type: ignore[attr-defined]
    assert code == 1 and "AUTH-ANONYMOUS" not in rules and len(rules) == 43, report
