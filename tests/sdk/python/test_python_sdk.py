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
``botemu test``. The SDK runs in its own Python (harness.python_sdk: a cached virtual
environment with the pins of requirements.txt), so nothing of it is imported here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from emulator.cli import main
from emulator.config import BotRegistration
from tests.sdk.python.harness import HERE, Botemu, PythonBot, loopback_env, python_sdk
from tests.support import ROOT, free_port

pytestmark = pytest.mark.slow

APP_ID = "3c9a7e52-1f4b-4d8e-9a6c-5b2d7e8f9a10"
APP_PASSWORD = "python-sdk-s3cret"
SCENARIO = HERE / "echo-template.yaml"
ANONYMOUS = "anonymous" in BotRegistration.__dataclass_fields__


def _credentialed(state: Path, *, real_issuers: bool) -> Iterator[tuple[Botemu, PythonBot]]:
    python_sdk()  # skips before anything starts when the SDK cannot be installed
    bot_port = free_port()
    bots = [{"app_id": APP_ID, "app_password": APP_PASSWORD,
             "endpoint": f"http://127.0.0.1:{bot_port}/api/messages"}]  # fmt: skip
    emulator = Botemu(state, free_port(), bots, real_issuers=real_issuers)
    try:
        bot = PythonBot(bot_port, emulator.bot_env("REQUESTS_CA_BUNDLE"))
    except BaseException:
        emulator.stop()
        raise
    try:
        yield emulator, bot
    finally:
        bot.stop()
        emulator.stop()


@pytest.fixture(scope="module")
def credentialed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Botemu, PythonBot]]:
    """botemu over https (its own issuers) and a credentialed template bot set up from its banner."""
    yield from _credentialed(tmp_path_factory.mktemp("botemu-tls"), real_issuers=False)


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Botemu, PythonBot]]:
    """The same with ``--real-issuers``."""
    yield from _credentialed(tmp_path_factory.mktemp("botemu-real"), real_issuers=True)


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Botemu, PythonBot]]:
    """botemu over http with an anonymous bot (``--bot-endpoint`` without ``--app-id``) and the
    template bot with no settings at all."""
    if not ANONYMOUS:
        pytest.skip("this botemu has no anonymous bots (BotRegistration.anonymous) yet")
    python_sdk()
    bot_port = free_port()
    bots = [{"endpoint": f"http://127.0.0.1:{bot_port}/api/messages"}]
    emulator = Botemu(tmp_path_factory.mktemp("botemu-anon"), free_port(), bots, tls=False)
    try:
        bot = PythonBot(bot_port, {})
    except BaseException:
        emulator.stop()
        raise
    try:
        yield emulator, bot
    finally:
        bot.stop()
        emulator.stop()


def chat(
    emulator: Botemu,
    bot: PythonBot,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
) -> tuple[int, str]:
    """``botemu chat --send hello`` in this process, from botemu's state directory (so that the
    client trusts its ``certs/ca.pem``); (exit code, everything printed)."""
    monkeypatch.chdir(emulator.state)
    capsys.readouterr()
    code = main(["chat", "--bot", bot.url, "--emulator", emulator.url, "--send", "hello",
                 "--wait", "10", *extra])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out + err


def _export(emulator: Botemu, conversation_id: str) -> dict[str, Any]:
    document: dict[str, Any] = emulator.get(f"/_logview/api/calls/{conversation_id}/export")
    return document


# --- tokens -------------------------------------------------------------------------------------


def test_banner_prints_the_sdk_settings_and_the_ca_to_trust(
    credentialed: tuple[Botemu, PythonBot],
) -> None:
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


def test_msal_gets_a_token_from_botemu_and_asks_nothing_else(
    real: tuple[Botemu, PythonBot],
) -> None:
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
    context = emulator.ssl_context()
    request = urllib.request.Request(f"{emulator.url}/v3/conversations",
                                     headers={"Authorization": f"Bearer {report['token']}"})  # fmt: skip
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                         urllib.request.HTTPSHandler(context=context))  # fmt: skip
    with opener.open(request, timeout=5) as response:
        assert response.status == 200


def test_msal_without_the_adfs_path_asks_the_public_cloud(real: tuple[Botemu, PythonBot]) -> None:
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


def test_credentialed_bot_greets_and_echoes_over_https(
    credentialed: tuple[Botemu, PythonBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, bot = credentialed
    mark = len(bot.process.lines)
    code, out = chat(emulator, bot, capsys, monkeypatch)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out
    assert not bot.errors(mark), bot.process.since(mark)


def test_emulator_path_tokens_need_the_real_issuers(
    credentialed: tuple[Botemu, PythonBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK recognises emulator-path tokens by the real platform's issuer strings only: with
    botemu's own issuer it treats them as connector tokens, whose issuer they are not (401)."""
    emulator, bot = credentialed
    code, out = chat(emulator, bot, capsys, monkeypatch, "--emulator-token")
    assert code == 1, out
    assert "401" in out, out


@pytest.mark.parametrize("token", ["connector", "emulator"])
def test_real_issuers_make_both_paths_work(
    token: str,
    real: tuple[Botemu, PythonBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, bot = real
    assert emulator.settings["ToBotFromChannelTokenIssuer"] == "https://api.botframework.com"
    extra = ("--emulator-token",) if token == "emulator" else ()
    code, out = chat(emulator, bot, capsys, monkeypatch, *extra)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out


def test_replies_take_the_routes_the_sdk_picks(credentialed: tuple[Botemu, PythonBot]) -> None:
    """The echo answers the message with reply_to_activity (``POST .../activities/{id}``). The
    greeting is sent with send_to_conversation (``POST .../activities``): botbuilder-python 4.17
    keeps no activity id in the conversation reference of a conversationUpdate (the JavaScript
    SDK does, and replies to it: tests/sdk/node_echo)."""
    emulator, _bot = credentialed
    sent = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "reply routes"})
    assert 200 <= sent["status"] < 300, sent
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: reply routes"]
    assert replies[0].get("replyToId") is None
    assert replies[1].get("replyToId") == sent["activity_id"]
    paths = [e["payload"]["path"] for e in _export(emulator, conversation)["events"]
             if e.get("kind") == "http.request" and e["payload"].get("path")]  # fmt: skip
    activities = f"/v3/conversations/{conversation}/activities"
    assert paths == [activities, f"{activities}/{sent['activity_id']}"], paths


def test_botemu_test_runs_a_conversation_scenario(real: tuple[Botemu, PythonBot]) -> None:
    """``botemu test`` with ``messaging:`` turns, through the running botemu over https (its
    HTTP client trusts botemu's CA through SSL_CERT_FILE)."""
    emulator, bot = real
    env = loopback_env(os.environ) | {"SSL_CERT_FILE": str(emulator.ca),
                                      "BOT_APP_PASSWORD": APP_PASSWORD}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(SCENARIO), "--messaging-bot", bot.url,
         "--app-id", APP_ID, "--emulator", emulator.url, "--db", str(emulator.state / "t.db")],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# --- anonymous ----------------------------------------------------------------------------------


def test_anonymous_bot_greets_and_echoes(
    anonymous: tuple[Botemu, PythonBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, bot = anonymous
    mark = len(bot.process.lines)
    code, out = chat(emulator, bot, capsys, monkeypatch)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out
    assert not bot.errors(mark), bot.process.since(mark)


def test_anonymous_bot_replies_through_the_reply_route(
    anonymous: tuple[Botemu, PythonBot],
) -> None:
    emulator, _bot = anonymous
    app_id = emulator.config["bots"][0]["app_id"]
    sent = emulator.post("/_botemu/chat", {"app_id": app_id, "text": "anonymous"})
    assert 200 <= sent["status"] < 300, sent
    replies = emulator.replies(sent["conversation_id"], 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: anonymous"]
    assert replies[1].get("replyToId") == sent["activity_id"]


def test_anonymous_bot_runs_a_conversation_scenario(anonymous: tuple[Botemu, PythonBot]) -> None:
    emulator, bot = anonymous
    app_id = emulator.config["bots"][0]["app_id"]
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(SCENARIO), "--messaging-bot", bot.url,
         "--app-id", app_id, "--emulator", emulator.url, "--db", str(emulator.state / "t.db")],
        capture_output=True, text=True, timeout=120, env=loopback_env(os.environ), cwd=ROOT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_sdk_refuses_a_token_for_another_bot(credentialed: tuple[Botemu, PythonBot]) -> None:
    """A control: the SDK checks what its settings tell it to. botemu's own connector-path token
    (right issuer, right keys) for another app id gets 401."""
    emulator, bot = credentialed
    body = json.dumps({"type": "message", "text": "x", "serviceUrl": emulator.url,
                       "channelId": "botemu", "conversation": {"id": "c"},
                       "from": {"id": "u"}, "recipient": {"id": APP_ID}}).encode()  # fmt: skip
    token = emulator.post("/_botemu/calling/token", {"app_id": "someone-else"})["token"]
    request = urllib.request.Request(bot.url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})  # fmt: skip
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(request, timeout=10)
    refused.value.close()
    assert refused.value.code == 401
