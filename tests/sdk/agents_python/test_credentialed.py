"""The Agents SDK's Python quickstart with an app id and password against botemu, given nothing
but what ``botemu env agents-python --format json`` prints: its MSAL gets botemu's tokens (scope
``https://api.botframework.com/.default``) and its key client botemu's keys from the platform's
hosts (through HTTPS_PROXY), it refuses a request with no token, and its replies carry botemu's
tokens; every exchange with the platform's hosts is recorded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sdk.agents_python.agents import GREETING, Pair, agent_pair
from tests.sdk.harness import chat, refused_without_a_token

pytestmark = pytest.mark.slow

APP_ID = "6c7d8e9f-0a1b-4c2d-8e3f-405162738495"
PASSWORD = "agents-python-s3cret"


@pytest.fixture(scope="module")
def credentialed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from agent_pair(tmp_path_factory.mktemp("agents-python-cred"),
                          credentials=(APP_ID, PASSWORD))  # fmt: skip


def test_the_credentialed_agent_chats_with_botemus_tokens(
    credentialed: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, agent = credentialed
    mark = agent.mark()
    code, out = chat(emulator, agent, capsys, monkeypatch)
    assert code == 0, out
    assert GREETING in out and "Hello!" in out, out
    assert not agent.errors(mark), agent.process.since(mark)
    sent = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "again"})
    export = emulator.get(f"/_logview/api/calls/{sent['conversation_id']}/export")
    posts = [e["payload"] for e in export["events"]
             if e.get("kind") == "http.request" and e["payload"].get("path")]  # fmt: skip
    assert posts and all(p["headers"].get("Authorization", "").startswith("Bearer ") for p in posts)
    calls = emulator.get("/_logview/api/calls")
    listed = calls["calls"] if isinstance(calls, dict) else calls
    assert any(c.get("kind") == "identity" for c in listed), listed


def test_the_credentialed_agent_refuses_a_request_with_no_token(credentialed: Pair) -> None:
    emulator, agent = credentialed
    assert refused_without_a_token(emulator, agent, APP_ID) == 401
