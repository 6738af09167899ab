"""A bot from the JavaScript SDK's echo template (botbuilder 4.23.3) against botemu.

tests/sdk/node_echo/index.js is the template's index.js with the two changes docs/sdk.md gives
(each marked "botemu:"): ``new ConfigurationBotFrameworkAuthentication(process.env, ...)``
instead of the template's ``createBotFrameworkAuthenticationFromConfiguration(null, ...)``,
which reads no setting, and, with an app id, an MSAL client built by the bot with
``knownAuthorities`` (msal-node asks the public cloud's instance discovery about any other
authority host, ``/adfs`` paths included) handed to the SDK through
``MsalServiceClientCredentialsFactory``. bot.js is the template's, unchanged. Every other
setting comes from the banner of ``botemu serve``, as in tests/sdk/python.

The packages are installed once per lock file (``npm ci``) into a cache outside the repository
(``~/.cache/botemu-tests/node_echo/<hash>``); the tests are skipped when node or npm is missing
or the install fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.sdk.harness import (
    ANONYMOUS,
    Bot,
    Botemu,
    chat,
    chat_greets_and_echoes,
    loopback_env,
    npm_install,
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
    tls: bool,
    real_issuers: bool = False,
    anonymous: bool = False,
) -> Iterator[Pair]:
    """botemu and the bot; a credentialed bot trusts botemu's CA through NODE_EXTRA_CA_CERTS."""
    yield from serve_bot(
        state,
        lambda port, settings: NodeBot(node_modules, port, settings),
        credentials=None if anonymous else (APP_ID, APP_PASSWORD),
        trust="NODE_EXTRA_CA_CERTS",
        tls=tls,
        real_issuers=real_issuers,
    )


@pytest.fixture(scope="module")
def credentialed(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-tls"), tls=True)


@pytest.fixture(scope="module")
def real(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-real"), tls=True,
                     real_issuers=True)  # fmt: skip


@pytest.fixture(scope="module")
def anonymous(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    if not ANONYMOUS:
        pytest.skip("this botemu has no anonymous bots (BotRegistration.anonymous) yet")
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-anon"), tls=False,
                     anonymous=True)  # fmt: skip


def msal_token(node_modules: Path, emulator: Botemu, known: str | None) -> dict[str, object]:
    settings = emulator.settings
    argv = [shutil.which("node") or "node", str(NODE_DIR / "msal_token.js"),
            settings["ToChannelFromBotLoginUrl"], APP_ID, APP_PASSWORD,
            f"{settings['ToChannelFromBotOAuthScope']}/.default"]  # fmt: skip
    if known:
        argv.append(known)
    env = loopback_env(os.environ) | {"NODE_PATH": str(node_modules),
                                      "NODE_EXTRA_CA_CERTS": str(emulator.ca)}  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


# --- tests --------------------------------------------------------------------------------------


def test_msal_node_needs_known_authorities(node_modules: Path, credentialed: Pair) -> None:
    """msal-node 2.16 asks the public cloud's instance discovery about botemu's ``/adfs``
    authority unless the host is a known authority; with it, botemu alone issues the token."""
    emulator, _bot = credentialed
    authority = emulator.settings["ToChannelFromBotLoginUrl"]
    alone = msal_token(node_modules, emulator, None)
    assert alone["token"] is None, alone
    assert "login.microsoftonline.com" in json.dumps(alone["log"]), alone
    known = msal_token(node_modules, emulator, authority)
    assert isinstance(known["token"], str) and known["token"].count(".") == 2, known
    assert "login.microsoftonline.com" not in json.dumps(known["log"]), known


@pytest.mark.parametrize("pair", ["credentialed", "anonymous"])
def test_bot_greets_and_echoes(
    pair: str,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The credentialed bot over https, the anonymous one over http."""
    emulator, bot = request.getfixturevalue(pair)
    mark = bot.mark()
    chat_greets_and_echoes(emulator, bot, capsys, monkeypatch)
    assert not bot.errors(mark), bot.process.since(mark)


def test_emulator_path_tokens_need_the_real_issuers(
    credentialed: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK tells emulator-path tokens apart by a hard-coded list of the real platform's
    issuers: botemu's own issuer makes them connector tokens with the wrong issuer (401)."""
    code, out = chat(*credentialed, capsys, monkeypatch, "--emulator-token")
    assert code == 1, out
    assert "401" in out, out


@pytest.mark.parametrize("token", ["connector", "emulator"])
def test_real_issuers_make_both_paths_work(
    token: str, real: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = ("--emulator-token",) if token == "emulator" else ()
    chat_greets_and_echoes(*real, capsys, monkeypatch, *extra)


def test_greeting_replies_to_the_conversation_update(credentialed: Pair) -> None:
    """The JavaScript SDK answers in a turn with reply_to_activity, the conversationUpdate
    included: both replies go to ``POST .../activities/{id}`` of what they answer."""
    emulator, _bot = credentialed
    sent = emulator.send(APP_ID, "reply routes")
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: reply routes"]
    update = next(a for a in emulator.activities(conversation)
                  if a.get("type") == "conversationUpdate")  # fmt: skip
    assert replies[0].get("replyToId") == update["id"]
    assert replies[1].get("replyToId") == sent["activity_id"]
    activities = f"/v3/conversations/{conversation}/activities"
    assert emulator.request_paths(conversation) == [
        f"{activities}/{update['id']}",
        f"{activities}/{sent['activity_id']}",
    ]


@pytest.mark.parametrize("pair", ["real", "anonymous"])
def test_botemu_test_runs_a_conversation_scenario(
    pair: str, request: pytest.FixtureRequest
) -> None:
    """The credentialed bot through botemu with ``--real-issuers`` over https, the anonymous
    one over http."""
    done = run_scenario(*request.getfixturevalue(pair))
    assert done.returncode == 0, done.stdout + done.stderr
