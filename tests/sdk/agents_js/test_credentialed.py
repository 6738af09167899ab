"""The Agents SDK's Node quickstart with an app id and password against botemu, given nothing but
what ``botemu env agents-js --format json`` prints: its MSAL gets botemu's tokens and its key
client botemu's keys from the platform's hosts (the node preload), it refuses a request with no
token, and its replies carry botemu's tokens. And a streamed reply on ``webchat``: stored as one
stream with its chunks and final message, shown once by ``botemu chat``, and checked."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sdk.agents_js.agents import GREETING, HERE, READY, Agent, Pair, agent_env
from tests.sdk.harness import botemu_env, chat, refused_without_a_token, serve_bot

pytestmark = pytest.mark.slow

APP_ID = "2b6d1c3e-7f80-4a91-b2c3-d4e5f6a7b8c9"
PASSWORD = "agents-js-s3cret"


class StreamingAgent(Agent):
    """tests/sdk/agents_js/streaming.js instead of the quickstart's index.js."""

    def __init__(self, node_modules: Path, port: int, settings: dict[str, str]) -> None:
        from tests.sdk.harness import Bot

        node = shutil.which("node")
        assert node is not None
        Bot.__init__(self, [node, "--require", str(HERE / "loopback.cjs"), str(HERE / "streaming.js")],
                     agent_env(node_modules, settings), HERE,
                     f"http://127.0.0.1:{port}/api/messages", ready=READY)  # fmt: skip


@pytest.fixture(scope="module")
def credentialed(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from serve_bot(tmp_path_factory.mktemp("agents-js-cred"),
                         lambda port, settings: Agent(node_modules, port, settings),
                         credentials=(APP_ID, PASSWORD),
                         settings=lambda emulator: botemu_env(emulator, "agents-js"))  # fmt: skip


@pytest.fixture(scope="module")
def streaming(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from serve_bot(tmp_path_factory.mktemp("agents-js-stream"),
                         lambda port, settings: StreamingAgent(node_modules, port, settings),
                         credentials=(APP_ID, PASSWORD),
                         settings=lambda emulator: botemu_env(emulator, "agents-js"))  # fmt: skip


def test_the_credentialed_agent_chats_with_botemus_tokens(
    credentialed: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, agent = credentialed
    mark = agent.mark()
    code, out = chat(emulator, agent, capsys, monkeypatch)
    assert code == 0, out
    assert GREETING in out and "You said: hello" in out, out
    assert not agent.errors(mark), agent.process.since(mark)
    # its replies carried a token the connector took (the bot is registered with credentials)
    conversation = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "again"})
    export = emulator.get(f"/_logview/api/calls/{conversation['conversation_id']}/export")
    posts = [e["payload"] for e in export["events"]
             if e.get("kind") == "http.request" and e["payload"].get("path")]  # fmt: skip
    assert posts and all(p["headers"].get("Authorization", "").startswith("Bearer ") for p in posts)


def test_the_credentialed_agent_refuses_a_request_with_no_token(credentialed: Pair) -> None:
    emulator, agent = credentialed
    assert refused_without_a_token(emulator, agent, APP_ID) == 401


def test_a_streamed_reply_is_one_stream_shown_once_and_checked(
    streaming: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, agent = streaming
    monkeypatch.chdir(emulator.state)
    from emulator.cli import main

    capsys.readouterr()
    code = main(["chat", "--bot", agent.url, "--emulator", emulator.url, "--send", "stream",
                 "--wait", "10", "--channel", "webchat"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("Hello, world!") == 1, out
    conversation = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "stream",
                                                   "channel": "webchat"})["conversation_id"]  # fmt: skip
    replies = emulator.replies(conversation, 2)
    streamed = [r for r in replies if r.get("botemuStream")]
    assert len(streamed) == 1, replies
    stream = streamed[0]
    assert stream["text"] == "Hello, world!" and stream["botemuStream"]["state"] == "final"
    kinds = [e.get("streamType") for c in stream["botemuStream"]["chunks"]
             for e in c.get("entities") or [] if e.get("type") == "streaminfo"]  # fmt: skip
    assert kinds[0] == "informative" and kinds[-1] == "final"  # text chunks come as they come
    export = emulator.get(f"/_logview/api/calls/{conversation}/export")
    rules = [e["payload"].get("rule") for e in export["events"] if e.get("kind") == "finding"]
    assert not [r for r in rules if str(r).startswith("CONN-STREAM")], rules
