"""A bot from the JavaScript SDK's echo template (botbuilder 4.23.3) against botemu, unchanged.

tests/sdk/node_echo/index.js is the template's index.js as the generator writes it (it listens on
127.0.0.1 and says so): ``createBotFrameworkAuthenticationFromConfiguration(null, ...)`` reads
no setting but the app id and password, so the SDK fetches keys and asks for tokens at the
platform's fixed addresses, which botemu answers (its listener of the platform's hosts, reached
through the node preload that ``botemu env botbuilder-js`` names), and checks the real
platform's issuers, which botemu's tokens carry by default. bot.js is the template's, unchanged.
The bot's whole environment is what ``botemu env botbuilder-js --format json`` prints.

The packages are installed once per lock file (``npm ci``) into a cache outside the repository
(``~/.cache/botemu-tests/node_echo/<hash>``); the tests are skipped when node or npm is missing
or the install fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.sdk.harness import (
    ANONYMOUS,
    Bot,
    Botemu,
    botemu_env,
    chat,
    chat_greets_and_echoes,
    npm_install,
    refused_without_a_token,
    run_scenario,
    sdk_bot_env,
    serve_bot,
)

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).resolve().parent
APP_ID = "7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
APP_PASSWORD = "node-echo-s3cret"


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed node_modules of tests/sdk/node_echo."""
    return npm_install(NODE_DIR, "botbuilder", "the JavaScript SDK's echo bot", tmp_path_factory)


# --- the bot ------------------------------------------------------------------------------------


class NodeBot(Bot):
    """tests/sdk/node_echo/index.js on ``port`` with ``settings`` in its environment."""

    def __init__(self, node_modules: Path, port: int, settings: Mapping[str, str]) -> None:
        env = sdk_bot_env(settings) | {"NODE_PATH": str(node_modules), "PORT": str(port),
                                       "NODE_NO_WARNINGS": "1"}  # fmt: skip
        node = shutil.which("node")
        assert node is not None
        super().__init__([node, str(NODE_DIR / "index.js")], env, NODE_DIR,
                         f"http://127.0.0.1:{port}/api/messages")  # fmt: skip


Pair = tuple[Botemu, NodeBot]


def _pair(
    node_modules: Path,
    state: Path,
    *,
    tls: bool = False,
    real_issuers: bool = True,
    anonymous: bool = False,
) -> Iterator[Pair]:
    """botemu and the bot, given what ``botemu env botbuilder-js`` prints."""
    yield from serve_bot(
        state,
        lambda port, settings: NodeBot(node_modules, port, settings),
        credentials=None if anonymous else (APP_ID, APP_PASSWORD),
        tls=tls,
        real_issuers=real_issuers,
        settings=lambda emulator: botemu_env(emulator, "botbuilder-js"),
    )


@pytest.fixture(scope="module")
def credentialed(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-cred"))


@pytest.fixture(scope="module")
def anonymous(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    if not ANONYMOUS:
        pytest.skip("this botemu has no anonymous bots (BotRegistration.anonymous) yet")
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-anon"), anonymous=True)


def msal_token(node_modules: Path, emulator: Botemu, authority: str, scope: str,
               env: Mapping[str, str]) -> dict[str, object]:  # fmt: skip
    argv = [shutil.which("node") or "node", str(NODE_DIR / "msal_token.js"), authority, APP_ID,
            APP_PASSWORD, scope]  # fmt: skip
    run_env = sdk_bot_env(env) | {"NODE_PATH": str(node_modules)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=run_env,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


# --- tests --------------------------------------------------------------------------------------


def test_msal_node_gets_its_token_from_the_platform_hosts(
    node_modules: Path, credentialed: Pair
) -> None:
    """msal-node 2.16, as the SDK uses it (authority login.microsoftonline.com/botframework.com,
    the platform's scope), gets botemu's token through the preload, with no knownAuthorities."""
    emulator, _bot = credentialed
    env = botemu_env(emulator, "botbuilder-js")
    report = msal_token(node_modules, emulator, "https://login.microsoftonline.com/botframework.com",
                        "https://api.botframework.com/.default", env)  # fmt: skip
    assert isinstance(report["token"], str) and report["token"].count(".") == 2, report


@pytest.mark.parametrize("pair", ["credentialed", "anonymous"])
def test_bot_greets_and_echoes(
    pair: str,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The unchanged template, credentialed and anonymous, over http."""
    emulator, bot = request.getfixturevalue(pair)
    mark = bot.mark()
    chat_greets_and_echoes(emulator, bot, capsys, monkeypatch)
    assert not bot.errors(mark), bot.process.since(mark)


def test_both_token_paths_work(
    credentialed: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_greets_and_echoes(*credentialed, capsys, monkeypatch, "--emulator-token")


def test_own_issuers_are_refused_by_the_template(
    node_modules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """With ``--own-issuers``, the template (which reads no issuer setting) refuses botemu's
    tokens: why botemu carries the real platform's issuers by default."""
    for pair in _pair(node_modules, tmp_path, real_issuers=False):
        code, out = chat(*pair, capsys, monkeypatch)
        assert code == 1, out
        assert "401" in out, out


def test_the_bot_refuses_a_request_with_no_token(credentialed: Pair) -> None:
    emulator, bot = credentialed
    assert refused_without_a_token(emulator, bot, APP_ID) == 401


@pytest.mark.parametrize("channel", ["webchat", "emulator"])
def test_replies_take_the_routes_the_sdk_picks(credentialed: Pair, channel: str) -> None:
    """The JavaScript SDK answers a message in its turn with reply_to_activity; it replies to
    the conversationUpdate too, except on ``webchat`` and ``directline``, where its conversation
    reference keeps no id for a conversationUpdate (the greeting is then sent to the
    conversation)."""
    emulator, _bot = credentialed
    sent = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "reply routes",
                                           "channel": channel})  # fmt: skip
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: reply routes"]
    update = next(a for a in emulator.activities(conversation)
                  if a.get("type") == "conversationUpdate")  # fmt: skip
    activities = f"/v3/conversations/{conversation}/activities"
    greeting = activities if channel == "webchat" else f"{activities}/{update['id']}"
    assert replies[0].get("replyToId") == (None if channel == "webchat" else update["id"])
    assert replies[1].get("replyToId") == sent["activity_id"]
    assert emulator.request_paths(conversation) == [greeting, f"{activities}/{sent['activity_id']}"]


@pytest.mark.parametrize("pair", ["credentialed", "anonymous"])
def test_botemu_test_runs_a_conversation_scenario(
    pair: str, request: pytest.FixtureRequest
) -> None:
    done = run_scenario(*request.getfixturevalue(pair))
    assert done.returncode == 0, done.stdout + done.stderr
