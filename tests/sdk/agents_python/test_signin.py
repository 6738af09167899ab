"""The Agents SDK's Python auto sign-in sample (microsoft/Agents, samples/python/auto-signin, its
GRAPH handler; tests/sdk/agents_python/auto_signin) with 1.9.0 signs in through botemu given
nothing but what ``botemu env agents-python --format json`` prints and the handler's connection
name. Its token client is an aiohttp session for ``api.botframework.com`` made without
``trust_env``: botemu's Python preload (``PYTHONPATH``, which ``botemu env`` prints) makes that
session read ``HTTPS_PROXY``, so it reaches botemu's token service through the platform's hosts.
``/me`` asks for a sign-in, ``botemu chat --sign-in-as`` signs in (the person types the code,
as on Web Chat), the agent says the name in its token; ``/logout`` signs out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from tests.sdk.agents_python.agents import HERE, READY, Pair, agent_env, agents_python
from tests.sdk.harness import Bot, botemu_env, serve_bot
from tests.sdk.signin import USER, chat_session, say, sign_in_from_the_web_chat

pytestmark = pytest.mark.slow

APP_ID = "8d9e0f1a-2b3c-4d5e-8f60-718293a4b5c6"
PASSWORD = "agents-python-auth-s3cret"
HANDLER = "AGENTAPPLICATION__USERAUTHORIZATION__HANDLERS__GRAPH__SETTINGS__"
SAMPLE = HERE / "auto_signin"


class AutoSignIn(Bot):
    def __init__(self, port: int, settings: Mapping[str, str]) -> None:
        given = dict(settings) | {f"{HANDLER}AZUREBOTOAUTHCONNECTIONNAME": "graph",
                                  f"{HANDLER}TITLE": "Graph Sign In",
                                  f"{HANDLER}TEXT": "Sign in with Microsoft Graph"}  # fmt: skip
        env = agent_env(given)
        super().__init__([str(agents_python()), "-m", "src.main"], env, SAMPLE,
                         f"http://127.0.0.1:{port}/api/messages", ready=READY)  # fmt: skip


@pytest.fixture(scope="module")
def auto_signin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    agents_python()
    yield from serve_bot(tmp_path_factory.mktemp("agents-python-auth"), AutoSignIn,
                         credentials=(APP_ID, PASSWORD), tls=False, real_issuers=True,
                         settings=lambda emulator: botemu_env(emulator, "agents-python"))  # fmt: skip


def test_the_agent_signs_in_says_the_users_name_and_signs_out(auto_signin: Pair) -> None:
    emulator, agent = auto_signin
    env = botemu_env(emulator, "agents-python")
    assert env["PYTHONPATH"].endswith("python-preload") and "BOTEMU_PLATFORM_ADDRESS" in env
    mark = agent.mark()
    chat = chat_session(emulator, agent)
    try:
        say(chat, "/me", rf"Signed in as {USER.name} \({USER.upn}\)")
        say(chat, "/logout", r"You have been logged out")
    except AssertionError as e:
        raise AssertionError(
            f"{e}\nthe agent said:\n" + "\n".join(agent.process.since(mark))
        ) from None
    finally:
        chat.stop()


@pytest.mark.browser
def test_the_agent_signs_in_from_the_web_chat(auto_signin: Pair) -> None:
    emulator, _agent = auto_signin
    sign_in_from_the_web_chat(emulator, APP_ID, "/me", r"Signed in as {name} \({upn}\)")
