"""Tests of emulator/connector/echo.py: the benchmark's raw POST exists only with
``BOTEMU_BENCH_ECHO=1`` as the app is built, and answers as the connector answers an activity,
doing nothing else."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.connector.echo import ECHO_ID, ENV_ECHO
from emulator.connector.errors import unauthorized
from emulator.connector.models import ConnectorState
from emulator.connector.routes import make_connector_app
from emulator.transcripts.store import TranscriptStore

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[..., Awaitable[Client]]

BODY = b'{"type": "message", "text": "benchmark message"}'


def refuse_all(authorization: str | None) -> str:
    raise unauthorized("no token is accepted here", reason="missing")


def app(tmp_path: Path) -> tuple[web.Application, ConnectorState, TranscriptStore]:
    state = ConnectorState(service_url="http://127.0.0.1:9070")
    store = TranscriptStore(tmp_path / "t.db")
    return make_connector_app(state, refuse_all, store=store), state, store


async def test_without_the_variable_there_is_no_echo(
    aiohttp_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ECHO, raising=False)
    built, _, store = app(tmp_path)
    client = await aiohttp_client(built)
    r = await client.post("/_bench/conversations/c1/activities", data=BODY)
    assert r.status == 404
    store.close()


@pytest.mark.parametrize("value", ["0", "", "yes"])
async def test_only_the_value_1_turns_it_on(
    aiohttp_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV_ECHO, value)
    built, _, store = app(tmp_path)
    client = await aiohttp_client(built)
    assert (await client.post("/_bench/conversations/c1/activities", data=BODY)).status == 404
    store.close()


async def test_the_echo_reads_the_body_and_answers_as_an_activity_is_answered(
    aiohttp_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_ECHO, "1")
    built, state, store = app(tmp_path)
    client = await aiohttp_client(built)
    r = await client.post("/_bench/conversations/c1/activities", data=BODY,
                          headers={"Authorization": "Bearer anything"})  # fmt: skip
    assert r.status == 200
    assert await r.read() == b'{"id":"' + ECHO_ID.encode() + b'"}'
    assert r.headers["Content-Type"] == "application/json; charset=utf-8"
    assert len(ECHO_ID) == 32
    # no token was checked (every one is refused here), nothing kept, nothing recorded
    assert state.conversations("anyone", None)["conversations"] == []
    assert store.count() == 0
    assert (await client.get("/_bench/conversations/c1/activities")).status == 405
    store.close()
