"""The Agents SDK's auto sign-in sample (``auto_signin.js``: microsoft/Agents,
samples/nodejs/auto-signin, with its ``graph`` handler) with @microsoft/agents-hosting 1.8.1 signs
in through botemu given nothing but what ``botemu env agents-js --format json`` prints and the
handler's connection name (``AgentApplication__UserAuthorization__Handlers__graph__Settings__
azureBotOAuthConnectionName``): ``-me`` asks for a sign-in, ``botemu chat --sign-in-as`` signs in
(the person types the code, as on Web Chat), the agent takes its token from botemu's token
service at its default address (``api.botframework.com``, through the node preload) and says
the user's name in it; ``-logout`` signs out."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sdk.agents_js.agents import HERE, READY, Agent, Pair, agent_env
from tests.sdk.harness import Bot, botemu_env, serve_bot
from tests.sdk.signin import USER, chat_session, say, sign_in_from_the_web_chat

pytestmark = pytest.mark.slow

APP_ID = "4a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d"
PASSWORD = "agents-js-auth-s3cret"
HANDLER = "AgentApplication__UserAuthorization__Handlers__graph__Settings__"


class AutoSignIn(Agent):
    def __init__(self, node_modules: Path, port: int, settings: dict[str, str]) -> None:
        node = shutil.which("node")
        assert node is not None
        given = settings | {f"{HANDLER}azureBotOAuthConnectionName": "graph",
                            f"{HANDLER}title": "Graph Sign In",
                            f"{HANDLER}text": "Sign in with Microsoft Graph"}  # fmt: skip
        Bot.__init__(self, [node, "--require", str(HERE / "loopback.cjs"),
                            str(HERE / "auto_signin.js")], agent_env(node_modules, given), HERE,
                     f"http://127.0.0.1:{port}/api/messages", ready=READY)  # fmt: skip


@pytest.fixture(scope="module")
def auto_signin(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield from serve_bot(tmp_path_factory.mktemp("agents-js-auth"),
                         lambda port, settings: AutoSignIn(node_modules, port, settings),
                         credentials=(APP_ID, PASSWORD), tls=False, real_issuers=True,
                         settings=lambda emulator: botemu_env(emulator, "agents-js"))  # fmt: skip


def test_the_agent_signs_in_says_the_users_name_and_signs_out(auto_signin: Pair) -> None:
    emulator, agent = auto_signin
    mark = agent.mark()
    chat = chat_session(emulator, agent)
    try:
        say(chat, "-me", rf"Signed in as {USER.name} \({USER.upn}\)")
        say(chat, "-logout", r"user logged out")
        out = "\n".join(chat.since(0))
    except AssertionError as e:
        raise AssertionError(
            f"{e}\nthe agent said:\n" + "\n".join(agent.process.since(mark))
        ) from None
    finally:
        chat.stop()
    assert "  ! " not in out, out


@pytest.mark.browser
def test_the_agent_signs_in_from_the_web_chat(auto_signin: Pair) -> None:
    emulator, _agent = auto_signin
    sign_in_from_the_web_chat(emulator, APP_ID, "-me", r"Signed in as {name} \({upn}\)")
