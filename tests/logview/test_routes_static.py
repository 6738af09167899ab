"""The log view's static-file route with hostile names (``routes._static``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from emulator.logview import standalone_app
from emulator.transcripts.store import TranscriptStore


@pytest.mark.parametrize(
    "name",
    [
        "a" * 5000 + ".js",  # longer than a file name may be: is_file() raised ENAMETOOLONG (500)
        "a" * 300 + ".css",
        "nope.js",
    ],
)
async def test_a_static_file_name_too_long_for_the_file_system_is_not_found(
    tmp_path: Path, name: str
) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        client = TestClient(TestServer(standalone_app(store)))
        await client.start_server()
        try:
            response = await client.get(f"/_logview/static/{name}")
            assert response.status == 404
            assert len(await response.text()) < 200  # the name is not echoed whole
        finally:
            await client.close()


async def test_a_real_static_file_is_still_served(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        client = TestClient(TestServer(standalone_app(store)))
        await client.start_server()
        try:
            assert (await client.get("/_logview/static/app.js")).status == 200
        finally:
            await client.close()
