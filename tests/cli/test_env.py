"""``botemu env SDK`` (emulator/cli/env.py, emulator/cli/sdk_env.py): every SDK's environment for
an anonymous and a credentialed bot, over http and https, with and without the listener of the
platform's hosts; every format, odd values quoted; and the command against a running botemu over
https (in-process, its CA in ./certs), an unknown SDK and no botemu at all."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from emulator.cli import main
from emulator.cli.sdk_env import (
    FORMATS,
    SDKS,
    Running,
    Target,
    dotenv_value,
    environment,
    pick,
    render,
)
from emulator.config import PLATFORM_OFF, BotRegistration, ServiceConfig
from emulator.errors import BotemuError
from emulator.service.hosting import serving
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port

BASE = "http://127.0.0.1:9070"
CA = Path("/certs/ca.pem")
BUNDLE = "/certs/trust-bundle.pem"
PRELOAD = "/botemu/identity/platform_preload.cjs"
PLATFORM = {"address": "127.0.0.1:9071", "proxy": "http://127.0.0.1:9071",
            "trust_bundle": BUNDLE, "ca": str(CA), "node_preload": PRELOAD}  # fmt: skip
ENDPOINT = "http://127.0.0.1:3978/api/messages"
CREDENTIALED = Target("app-1", "pw", ENDPOINT, "http://127.0.0.1:3979/api/calls")
ANONYMOUS = Target(None, "", ENDPOINT)
PY = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"
JS = "connections__serviceConnection__settings__"
ODD = "p$ss 'w\"o\\rd\n*"


def running(*, https: bool = False, platform: bool = True) -> Running:
    base = BASE.replace("http:", "https:") if https else BASE
    document: dict[str, object] = {
        "base_url": base, "connector_scope": "api://botemu-connector",
        "connector_issuer": "https://api.botframework.com",
        "openid_metadata_url": f"{base}/_identity/v3.1/.well-known/openidconfiguration",
        "idp_openid_url": f"{base}/_identity/connector/v2.0/.well-known/openid-configuration",
    }  # fmt: skip
    if platform:
        document["platform"] = PLATFORM
    return Running(document, base, CA)


# --- the environments ---------------------------------------------------------------------------


def test_agents_python_anonymous_gets_the_anonymous_setting_and_the_port() -> None:
    env, notes = environment("agents-python", running(), ANONYMOUS)
    assert env == {f"{PY}ANONYMOUS_ALLOWED": "true", "PORT": "3978"}
    assert notes == []
    https, _ = environment("agents-python", running(https=True), ANONYMOUS)
    assert https == env | {"REQUESTS_CA_BUNDLE": str(CA), "SSL_CERT_FILE": str(CA)}


def test_agents_python_credentialed_gets_the_connection_and_the_platform_hosts() -> None:
    env, notes = environment("agents-python", running(), CREDENTIALED)
    assert env == {
        f"{PY}CLIENTID": "app-1", f"{PY}CLIENTSECRET": "pw", f"{PY}TENANTID": "botframework.com",
        "HTTPS_PROXY": "http://127.0.0.1:9071", "NO_PROXY": "127.0.0.1,localhost,::1",
        "REQUESTS_CA_BUNDLE": BUNDLE, "SSL_CERT_FILE": BUNDLE, "PORT": "3978",
    }  # fmt: skip
    assert notes == []
    _, notes = environment("agents-python", running(platform=False), CREDENTIALED)
    assert "no listener of the platform's hosts" in notes[0]


def test_agents_js_anonymous_and_credentialed() -> None:
    env, _ = environment("agents-js", running(), ANONYMOUS)
    assert env == {"NODE_ENV": "development", "PORT": "3978"}
    env, _ = environment("agents-js", running(https=True), CREDENTIALED)
    assert env == {
        f"{JS}clientId": "app-1", f"{JS}clientSecret": "pw", f"{JS}tenantId": "botframework.com",
        "connectionsMap__0__connection": "serviceConnection",
        "connectionsMap__0__serviceUrl": "*",
        "NODE_OPTIONS": f"--require {PRELOAD}", "BOTEMU_PLATFORM_ADDRESS": "127.0.0.1:9071",
        "NODE_EXTRA_CA_CERTS": BUNDLE, "PORT": "3978",
    }  # fmt: skip


def test_a_preload_path_with_a_space_is_quoted_for_node() -> None:
    spaced = running()
    spaced.document["platform"] = PLATFORM | {"node_preload": "/a b/preload.cjs"}
    env, _ = environment("agents-js", spaced, CREDENTIALED)
    assert env["NODE_OPTIONS"] == '--require "/a b/preload.cjs"'


def test_botbuilder_gets_the_banners_settings() -> None:
    env, _ = environment("botbuilder-js", running(https=True, platform=False), CREDENTIALED)
    assert env == {
        "MicrosoftAppId": "app-1", "MicrosoftAppPassword": "pw",
        "ToChannelFromBotLoginUrl": "https://127.0.0.1:9070/adfs",
        "ToChannelFromBotOAuthScope": "api://botemu-connector",
        "ToBotFromChannelTokenIssuer": "https://api.botframework.com",
        "ToBotFromChannelOpenIdMetadataUrl":
            "https://127.0.0.1:9070/_identity/v3.1/.well-known/openidconfiguration",
        "ToBotFromEmulatorOpenIdMetadataUrl":
            "https://127.0.0.1:9070/_identity/connector/v2.0/.well-known/openid-configuration",
        "NODE_EXTRA_CA_CERTS": str(CA), "PORT": "3978",
    }  # fmt: skip
    env, _ = environment("botbuilder-python", running(https=True, platform=False), CREDENTIALED)
    assert env["REQUESTS_CA_BUNDLE"] == str(CA) and "PORT" not in env
    env, _ = environment("botbuilder-python", running(), CREDENTIALED)
    assert env == {"MicrosoftAppId": "app-1", "MicrosoftAppPassword": "pw",
                   "HTTPS_PROXY": "http://127.0.0.1:9071", "NO_PROXY": "127.0.0.1,localhost,::1",
                   "REQUESTS_CA_BUNDLE": BUNDLE, "SSL_CERT_FILE": BUNDLE}  # fmt: skip
    assert environment("botbuilder-python", running(), ANONYMOUS)[0] == {}
    assert environment("botbuilder-js", running(), ANONYMOUS)[0] == {"PORT": "3978"}


def test_calling_node_gets_the_settings_of_its_page() -> None:
    env, notes = environment("calling-node", running(platform=False), CREDENTIALED)
    assert env == {
        "CALLBACK_URL": "http://127.0.0.1:3979/api/calls", "MICROSOFT_APP_ID": "app-1",
        "MICROSOFT_APP_PASSWORD": "pw",
        "OPENID_METADATA": f"{BASE}/_identity/v3.1/.well-known/openidconfiguration",
        "PORT": "3979",
    }  # fmt: skip
    assert notes == []
    _, notes = environment("calling-node", running(), ANONYMOUS)
    assert "always checks a token" in notes[0]


def test_an_unknown_sdk_is_refused() -> None:
    with pytest.raises(BotemuError, match="unknown SDK 'botbuilder-go'"):
        environment("botbuilder-go", running(), ANONYMOUS)


def test_pick_chooses_the_registered_bot() -> None:
    bots = [{"app_id": "a", "endpoint": "http://x/1", "app_password": "pa", "anonymous": False},
            {"app_id": "anonymous-bot", "endpoint": "http://x/2", "app_password": "",
             "anonymous": True}]  # fmt: skip
    assert pick({"bots": []}, None, None) == Target(None)
    assert pick({"bots": bots}, "http://x/1", None) == Target("a", "pa", "http://x/1")
    assert pick({"bots": bots}, None, "anonymous-bot").app_id is None
    with pytest.raises(BotemuError, match="2 bots are registered"):
        pick({"bots": bots}, None, None)
    with pytest.raises(BotemuError, match="no registered bot has --app-id b"):
        pick({"bots": bots}, None, "b")
    with pytest.raises(BotemuError, match="control secret"):
        pick({"bots": [{"app_id": "a", "endpoint": "http://x/1"}]}, None, None)


# --- the formats --------------------------------------------------------------------------------


@pytest.mark.parametrize("sdk", SDKS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_sdk_in_every_format_reads_back(sdk: str, fmt: str) -> None:
    target = Target("app-1", ODD, ENDPOINT, "http://127.0.0.1:3979/api/calls")
    env, _ = environment(sdk, running(https=True), target)
    assert ODD in env.values()
    text = render(env, fmt)
    if fmt == "json":
        assert json.loads(text) == env
    elif fmt == "compose":
        block = yaml.safe_load(text)["environment"]
        assert {k: v.replace("$$", "$") for k, v in block.items()} == env
    elif fmt == "shell":
        done = subprocess.run(
            ["bash", "-c", text + 'python3 -c "import json, os, sys; '
             'print(json.dumps({k: os.environ[k] for k in sys.argv[1:]}))" ' + shlex.join(env)],
            capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert json.loads(done.stdout) == env
    else:
        assert [line.split("=", 1)[0] for line in text.splitlines()] == list(env)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        pytest.param("plain/path-1.pem", "plain/path-1.pem", id="bare"),
        pytest.param("*", "'*'", id="glob"),
        pytest.param("--require /a b", "'--require /a b'", id="space"),
        pytest.param('p$w "x', "'p$w \"x'", id="dollar-and-double-quote"),
        pytest.param("it's", '"it\'s"', id="single-quote"),
        pytest.param("a\\b'\nc", '"a\\\\b\'\\nc"', id="backslash-newline"),
        pytest.param("", "", id="empty"),
    ],
)
def test_dotenv_quotes_where_needed(value: str, written: str) -> None:
    assert dotenv_value(value) == written


def test_compose_escapes_dollars_and_an_empty_block() -> None:
    assert render({"A": "x$y"}, "compose") == 'environment:\n  A: "x$$y"\n'
    assert render({}, "compose") == "environment: {}\n"


# --- the command --------------------------------------------------------------------------------


@pytest.fixture
async def https_botemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """A running botemu over https (its certificates in ./certs) with a credentialed bot."""
    monkeypatch.chdir(tmp_path)
    config = ServiceConfig(port=free_port(), certs_dir=Path("certs"), tls=True,
                           bots=(BotRegistration("app-1", ODD, ENDPOINT),),
                           platform_port=PLATFORM_OFF)  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    try:
        async with serving(config, store):
            yield config.base_url
    finally:
        store.close()


async def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["env", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_env_reads_the_running_botemu_over_https(
    https_botemu: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert https_botemu.startswith("https://")
    code, out, err = await run(["agents-python", "--emulator", https_botemu, "--format", "json"],
                               capsys)  # fmt: skip
    assert code == 0, err
    env = json.loads(out)
    assert env[f"{PY}CLIENTID"] == "app-1" and env[f"{PY}CLIENTSECRET"] == ODD
    assert env["SSL_CERT_FILE"] == str((Path("certs") / "ca.pem").resolve())
    assert "no listener of the platform's hosts" in err
    code, out, _ = await run(["botbuilder-js", "--emulator", https_botemu], capsys)
    assert code == 0
    assert "MicrosoftAppPassword=" in out and f"ToChannelFromBotLoginUrl={https_botemu}/adfs" in out


async def test_without_the_control_secret_no_password_is_told(
    https_botemu: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    code, out, err = await run(["agents-js", "--emulator", https_botemu, "--certs", str(other)],
                               capsys)  # fmt: skip
    assert (code, out) == (2, "")
    assert "control secret" in err and ODD not in err


async def test_an_unknown_sdk_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = await run(["botbuilder-go"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("botemu env: unknown SDK 'botbuilder-go' (known: agents-python, ")


async def test_no_botemu_running_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = await run(["agents-python", "--emulator", url], capsys)
    assert (code, out) == (2, "")
    assert (
        err == f"botemu env: no botemu answers at {url}: start one with botemu serve (or "
        "give --emulator URL)\n"
    )
