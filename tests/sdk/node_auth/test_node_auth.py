"""The JavaScript SDK's authentication sample (BotBuilder-Samples,
samples/javascript_nodejs/18.bot-authentication: ``index.js``, ``bots/`` and ``dialogs/``
unchanged) with botbuilder and botbuilder-dialogs 4.23.3 (``package-lock.json``, installed once
per lock file into ``~/.cache/botemu-tests/node_auth/<hash>``), bound to loopback by
tests/sdk/agents_js/loopback.cjs, signs in through botemu given nothing but what ``botemu env
botbuilder-js --format json`` prints and the ``connectionName`` it reads: ``botemu chat
--sign-in-as`` signs in when it sends its OAuth card (the person types the code, as on Web
Chat), the sample shows the token botemu signed for the user, and signs out. Its
``ConfigurationBotFrameworkAuthentication(process.env)`` reaches the token service at its
default address, ``api.botframework.com``, through botemu's node preload."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.sdk.harness import Bot, Botemu, botemu_env, npm_install, sdk_bot_env, serve_bot
from tests.sdk.signin import USER, chat_session, claims, say, sign_in_from_the_web_chat

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
LOOPBACK = HERE.parent / "agents_js" / "loopback.cjs"
APP_ID = "8e1f2a3b-4c5d-4e6f-9a0b-1c2d3e4f5a6c"
PASSWORD = "node-auth-s3cret"
CONNECTION = "graph"


class Sample(Bot):
    def __init__(self, node_modules: Path, port: int, settings: Mapping[str, str]) -> None:
        assert settings.get("PORT") == str(port), settings
        node = shutil.which("node")
        assert node is not None
        env = sdk_bot_env(settings) | {"connectionName": CONNECTION, "NODE_NO_WARNINGS": "1",
                                       "NODE_PATH": str(node_modules)}  # fmt: skip
        super().__init__([node, "--require", str(LOOPBACK), str(HERE / "index.js")], env, HERE,
                         f"http://127.0.0.1:{port}/api/messages", ready=r" listening to ")  # fmt: skip


Pair = tuple[Botemu, Sample]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    node_modules = npm_install(HERE, "botbuilder-dialogs", "the JavaScript SDK's sample",
                               tmp_path_factory)  # fmt: skip
    yield from serve_bot(tmp_path_factory.mktemp("node-auth"),
                         lambda port, settings: Sample(node_modules, port, settings),
                         credentials=(APP_ID, PASSWORD), tls=False, real_issuers=True,
                         settings=lambda emulator: botemu_env(emulator, "botbuilder-js"))  # fmt: skip


def test_the_sample_signs_in_shows_the_users_token_and_signs_out(sample: Pair) -> None:
    emulator, bot = sample
    mark = bot.mark()
    chat = chat_session(emulator, bot)
    try:
        say(chat, "hello", r"Would you like to view your token\?")
        token = say(chat, "yes", r"Here is your token (\S+)").split()[-1]
        assert claims(token)["name"] == USER.name and claims(token)["upn"] == USER.upn
        say(chat, "logout", r"You have been signed out\.")
        out = "\n".join(chat.since(0))
    except AssertionError as e:
        raise AssertionError(
            f"{e}\nthe sample said:\n" + "\n".join(bot.process.since(mark))
        ) from None
    finally:
        chat.stop()
    assert "You are now logged in." in out and "  ! " not in out, out
    assert not bot.errors(mark), bot.process.since(mark)


@pytest.mark.browser
def test_the_sample_signs_in_from_the_web_chat(sample: Pair) -> None:
    """The person signs out first (another test signed the same user in)."""
    emulator, _bot = sample
    emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "logout"})
    sign_in_from_the_web_chat(emulator, APP_ID, "hello", r"You are now logged in\.")
