"""pytest fixtures for bot developers: one botemu per test session, reset before every test.

Installed with botemu and registered through the ``pytest11`` entry point (plugin name
``botemu``), so a bot project's tests only ask for the fixture::

    async def test_menu(botemu, bot_url):
        call = await botemu.call(bot_url, caller=["press 1", "hangup"])
        assert call.prompts[0].text.startswith("Welcome")

Fixtures (docs/pytest-plugin.md):

=====================  ========  =============================================================
``botemu_config``      session   the ``ServiceConfig`` of the emulator (profile, bots, key
                                 directory); port 0 means a free port. Override it.
``botemu_store_path``  session   the transcript database (a temporary file). Override it.
``botemu_server``      session   the running emulator: a ``BotemuServer`` (``.url``, ``.config``,
                                 ``.placeholders``, ``.env``, ``.store``)
``botemu``             function  a ``Botemu`` on that server, reset first: ``call``, ``chat``,
                                 ``run_scenario``
=====================  ========  =============================================================

The emulator (identity, connector, control API) runs on its own event loop in a background
thread, the way pytest-httpserver runs its server. So the fixtures are plain synchronous
fixtures, and a test may run on any event loop: pytest-asyncio in auto or strict mode
(``@pytest.mark.asyncio``), pytest-aiohttp, or ``asyncio.run`` in a synchronous test. Calls are
placed from the test's own loop (the calling platform is the client side of a call).

This module holds the fixtures; the server, the per-test handle and the typed results are in
``emulator.testkit`` (``server``, ``handle``, ``results``) and importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.config import ServiceConfig
from emulator.testkit.handle import Botemu, caller_script
from emulator.testkit.results import (
    Attachment,
    CallResult,
    EndedBy,
    Message,
    Prompt,
    message_of,
    read_call,
)
from emulator.testkit.server import START_TIMEOUT, BotemuServer

__all__ = [
    "START_TIMEOUT",
    "Attachment",
    "Botemu",
    "BotemuServer",
    "CallResult",
    "EndedBy",
    "Message",
    "Prompt",
    "botemu",
    "botemu_config",
    "botemu_server",
    "botemu_store_path",
    "caller_script",
    "message_of",
    "read_call",
]


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def botemu_config(tmp_path_factory: pytest.TempPathFactory) -> ServiceConfig:
    """How the session's emulator is set up. Override it (session scope) to register bots,
    choose the auth profile or a fixed port; ``port=0`` picks a free one."""
    return ServiceConfig(port=0, certs_dir=tmp_path_factory.mktemp("botemu-keys"))


@pytest.fixture(scope="session")
def botemu_store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The transcript database of the session (override it to keep transcripts for
    ``botemu transcript show`` after the run)."""
    return tmp_path_factory.mktemp("botemu") / "transcripts.db"


@pytest.fixture(scope="session")
def botemu_server(botemu_config: ServiceConfig, botemu_store_path: Path) -> Iterator[BotemuServer]:
    """The session's running emulator (started on first use, stopped at the end)."""
    server = BotemuServer(botemu_config, botemu_store_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def botemu(botemu_server: BotemuServer) -> Botemu:
    """The session's emulator, reset for this test: ``call``, ``chat``, ``run_scenario``."""
    botemu_server.reset()
    return Botemu(botemu_server)
