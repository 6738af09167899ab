"""Bots on the platform's Python SDK (botbuilder 4.17) against botemu, with settings only.

tests/sdk/python/echo_bot is the SDK's echo template (CloudAdapter with
ConfigurationBotFrameworkAuthentication; a greeting for each member added, an echo of each
message) whose config.py reads the SDK's own settings from the environment. Each bot gets
exactly the settings ``botemu serve`` prints in its banner (docs/sdk.md):

- credentialed, over https: MicrosoftAppId/Password, the To* settings and the variables that
  make it trust botemu's CA; the SDK's MSAL gets its tokens from botemu's ``/adfs`` authority;
- the same with ``--real-issuers``: botemu's emulator-path tokens are then accepted too;
- anonymous (no app id, no password): the template as it starts, over http.

Conversations go through ``botemu chat --send`` (in this process), the control API and
``botemu test``. The SDK runs in its own Python, so nothing of it is imported here:
``python_sdk()`` gives a Python with the platform's Python SDK (botbuilder 4.17, the pins of
``requirements.txt``): this interpreter when it has exactly those versions (``pip install -e
'.[sdk]'``), else a virtual environment made once per pin set in a cache outside the repository
(``~/.cache/botemu-tests/python_sdk/<hash>``, ``$XDG_CACHE_HOME`` respected). Tests are skipped,
with the reason, when it cannot be installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
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
    loopback_env,
    loopback_opener,
    pinned_python,
    run_scenario,
    sdk_bot_env,
    serve_bot,
)

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
ECHO_BOT = HERE / "echo_bot" / "app.py"
APP_ID = "3c9a7e52-1f4b-4d8e-9a6c-5b2d7e8f9a10"
APP_PASSWORD = "python-sdk-s3cret"


# --- the Python SDK -----------------------------------------------------------------------------


def python_sdk() -> Path:
    """A Python interpreter with the pinned SDK installed (see the module docstring)."""
    return pinned_python(REQUIREMENTS, "python_sdk", "the Python SDK")


class PythonBot(Bot):
    """tests/sdk/python/echo_bot (the SDK's echo template) on ``port``, with ``settings`` in its
    environment (nothing else of botemu's: the trust variables are replaced, not added to)."""

    def __init__(self, port: int, settings: Mapping[str, str]) -> None:
        env = sdk_bot_env(settings) | {"PORT": str(port), "PYTHONUNBUFFERED": "1"}
        super().__init__([str(python_sdk()), str(ECHO_BOT)], env, ECHO_BOT.parent,
                         f"http://127.0.0.1:{port}/api/messages")  # fmt: skip


Pair = tuple[Botemu, PythonBot]


def _pair(state: Path, *, tls: bool = True, real_issuers: bool = False,
          anonymous: bool = False) -> Iterator[Pair]:  # fmt: skip
    """botemu and the bot; a credentialed bot trusts botemu's CA through REQUESTS_CA_BUNDLE."""
    python_sdk()  # skips before anything starts when the SDK cannot be installed
    yield from serve_bot(
        state,
        PythonBot,
        credentials=None if anonymous else (APP_ID, APP_PASSWORD),
        trust="REQUESTS_CA_BUNDLE",
        tls=tls,
        real_issuers=real_issuers,
    )


@pytest.fixture(scope="module")
def credentialed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """botemu over https (its own issuers) and a credentialed template bot set up from its banner."""
    yield from _pair(tmp_path_factory.mktemp("botemu-tls"))


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """The same with ``--real-issuers``."""
    yield from _pair(tmp_path_factory.mktemp("botemu-real"), real_issuers=True)


@pytest.fixture(scope="module")
def platform_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """botemu over http (the real issuers, its default) and the credentialed template given only
    what ``botemu env botbuilder-python`` prints: no To* setting, so the SDK keeps its defaults
    (the platform's addresses), which botemu answers through HTTPS_PROXY."""
    python_sdk()
    yield from serve_bot(tmp_path_factory.mktemp("botemu-hosts"), PythonBot,
                         credentials=(APP_ID, APP_PASSWORD), tls=False, real_issuers=True,
                         settings=lambda emulator: botemu_env(emulator, "botbuilder-python"))  # fmt: skip


@pytest.mark.parametrize("token", ["connector", "emulator"])
def test_the_template_with_botemu_env_alone_works_on_both_token_paths(
    token: str, platform_hosts: Pair, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    emulator, bot = platform_hosts
    env = botemu_env(emulator, "botbuilder-python")
    assert not [name for name in env if name.startswith("To")], env
    mark = bot.mark()
    extra = ("--emulator-token",) if token == "emulator" else ()
    chat_greets_and_echoes(emulator, bot, capsys, monkeypatch, *extra)
    assert not bot.errors(mark), bot.process.since(mark)


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """botemu over http with an anonymous bot (``--bot-endpoint`` without ``--app-id``) and the
    template bot with no settings at all."""
    if not ANONYMOUS:
        pytest.skip("this botemu has no anonymous bots (BotRegistration.anonymous) yet")
    yield from _pair(tmp_path_factory.mktemp("botemu-anon"), tls=False, anonymous=True)


# --- tokens -------------------------------------------------------------------------------------


def test_banner_prints_the_sdk_settings_and_the_ca_to_trust(credentialed: Pair) -> None:
    emulator, _bot = credentialed
    settings = emulator.settings
    base = emulator.url
    assert settings["ToChannelFromBotLoginUrl"] == f"{base}/adfs"
    assert settings["ToChannelFromBotOAuthScope"] == "api://botemu-connector"
    assert settings["ToBotFromChannelTokenIssuer"] == f"{base}/_identity/connector-issuer"
    assert settings["ToBotFromChannelOpenIdMetadataUrl"] == emulator.config["openid_metadata_url"]
    assert settings["ToBotFromEmulatorOpenIdMetadataUrl"] == emulator.config["idp_openid_url"]
    assert (settings["MicrosoftAppId"], settings["MicrosoftAppPassword"]) == (APP_ID, APP_PASSWORD)
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS"):
        assert Path(settings[name]) == emulator.ca.resolve()
    assert any(line.split()[:2] == ["serviceUrl", "(connector)"] and line.split()[2] == base
               for line in emulator.banner), emulator.banner  # fmt: skip


def test_msal_gets_a_token_from_botemu_and_asks_nothing_else(real: Pair) -> None:
    """The real MSAL, given the authority botemu prints: it reads the AD FS discovery document
    and posts to the token endpoint it names, and nothing else; the connector takes the token."""
    emulator, _bot = real
    settings = emulator.settings
    env = loopback_env(os.environ) | {"REQUESTS_CA_BUNDLE": str(emulator.ca)}
    done = subprocess.run(
        [str(python_sdk()), str(HERE / "msal_token.py"), settings["ToChannelFromBotLoginUrl"],
         APP_ID, APP_PASSWORD, f"{settings['ToChannelFromBotOAuthScope']}/.default"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"].get("token_type") == "Bearer", report
    host = f"127.0.0.1:{emulator.port}"
    requests = [line for line in report["requests"] if '"' in line]
    assert requests == [
        f'https://{host} "GET /adfs/.well-known/openid-configuration HTTP/1.1" 200 '
        + requests[0].rsplit(" ", 1)[-1],
        f'https://{host} "POST /_identity/connector/oauth2/v2.0/token HTTP/1.1" 200 '
        + requests[1].rsplit(" ", 1)[-1],
    ], report
    assert all(host in line for line in report["requests"]), report
    request = urllib.request.Request(f"{emulator.url}/v3/conversations",
                                     headers={"Authorization": f"Bearer {report['token']}"})  # fmt: skip
    with loopback_opener(emulator.ssl_context()).open(request, timeout=5) as response:
        assert response.status == 200


def test_msal_without_the_adfs_path_asks_the_public_cloud(real: Pair) -> None:
    """Why the authority is ``/adfs``: any other path on an unknown host makes MSAL ask the public
    cloud's instance discovery first (unreachable here, and never botemu)."""
    emulator, _bot = real
    env = loopback_env(os.environ) | {"REQUESTS_CA_BUNDLE": str(emulator.ca)}
    done = subprocess.run(
        [str(python_sdk()), str(HERE / "msal_token.py"), f"{emulator.url}/_identity/connector",
         APP_ID, APP_PASSWORD, "api://botemu-connector/.default"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["token"] is None, report
    assert any("login.microsoftonline.com" in line for line in report["requests"]), report


# --- conversations ------------------------------------------------------------------------------


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
    """The SDK recognises emulator-path tokens by the real platform's issuer strings only: with
    botemu's own issuer it treats them as connector tokens, whose issuer they are not (401)."""
    code, out = chat(*credentialed, capsys, monkeypatch, "--emulator-token")
    assert code == 1, out
    assert "401" in out, out


@pytest.mark.parametrize("token", ["connector", "emulator"])
def test_real_issuers_make_both_paths_work(
    token: str, real: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, bot = real
    assert emulator.settings["ToBotFromChannelTokenIssuer"] == "https://api.botframework.com"
    extra = ("--emulator-token",) if token == "emulator" else ()
    chat_greets_and_echoes(emulator, bot, capsys, monkeypatch, *extra)


@pytest.mark.parametrize("channel", ["webchat", "emulator"])
def test_replies_take_the_routes_the_sdk_picks(credentialed: Pair, channel: str) -> None:
    """On ``emulator`` (and any channel but two) the echo answers the message with
    reply_to_activity (``POST .../activities/{id}``); on ``webchat`` and ``directline``
    botbuilder-python 4.17 keeps no activity id in a conversation reference (its condition
    excludes those channels for every activity, not only a conversationUpdate), so every reply
    is sent with send_to_conversation (``POST .../activities``). The greeting always is: the
    SDK keeps no activity id for a conversationUpdate (the JavaScript SDK does, and replies to
    it: tests/sdk/node_echo)."""
    emulator, _bot = credentialed
    sent = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "reply routes",
                                           "channel": channel})  # fmt: skip
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: reply routes"]
    assert replies[0].get("replyToId") is None
    paths = emulator.request_paths(conversation)
    activities = f"/v3/conversations/{conversation}/activities"
    if channel == "webchat":
        assert replies[1].get("replyToId") is None
        assert paths == [activities, activities], paths
    else:
        assert replies[1].get("replyToId") == sent["activity_id"]
        assert paths == [activities, f"{activities}/{sent['activity_id']}"], paths


@pytest.mark.parametrize("pair", ["real", "anonymous"])
def test_botemu_test_runs_a_conversation_scenario(
    pair: str, request: pytest.FixtureRequest
) -> None:
    """``botemu test`` with ``messaging:`` turns, through the running botemu: the credentialed
    bot over https with ``--real-issuers`` (``botemu test``'s HTTP client trusts botemu's CA
    through SSL_CERT_FILE), the anonymous one over http."""
    done = run_scenario(*request.getfixturevalue(pair))
    assert done.returncode == 0, done.stdout + done.stderr


# --- anonymous ----------------------------------------------------------------------------------


def test_anonymous_bot_replies_to_the_conversation(anonymous: Pair) -> None:
    emulator, _bot = anonymous
    sent = emulator.send(emulator.config["bots"][0]["app_id"], "anonymous")
    replies = emulator.replies(sent["conversation_id"], 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: anonymous"]
    assert replies[1].get("replyToId") is None  # webchat: send_to_conversation (see above)


def test_the_sdk_refuses_a_token_for_another_bot(credentialed: Pair) -> None:
    """A control: the SDK checks what its settings tell it to. botemu's own connector-path token
    (right issuer, right keys) for another app id gets 401."""
    emulator, bot = credentialed
    body = json.dumps({"type": "message", "text": "x", "serviceUrl": emulator.url,
                       "channelId": "botemu", "conversation": {"id": "c"},
                       "from": {"id": "u"}, "recipient": {"id": APP_ID}}).encode()  # fmt: skip
    token = emulator.post("/_botemu/calling/token", {"app_id": "someone-else"})["token"]
    request = urllib.request.Request(bot.url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        loopback_opener().open(request, timeout=10)
    refused.value.close()
    assert refused.value.code == 401
