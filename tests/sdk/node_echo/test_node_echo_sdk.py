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

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from emulator.cli import main
from emulator.config import BotRegistration
from tests.sdk.python.harness import (
    SDK_NAMES,
    START_TIMEOUT,
    TRUST_NAMES,
    Botemu,
    Process,
    cache_root,
    loopback_env,
    tail,
)
from tests.support import ROOT, free_port

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).resolve().parent
SCENARIO = ROOT / "tests" / "sdk" / "python" / "echo-template.yaml"
APP_ID = "7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
APP_PASSWORD = "node-echo-s3cret"
NPM_TIMEOUT = 300.0
ANONYMOUS = "anonymous" in BotRegistration.__dataclass_fields__


# --- the SDK's packages -------------------------------------------------------------------------


def _lock_hash() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((NODE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _install(target: Path) -> None:
    """``npm ci`` of node_echo's lock file into ``target`` (created whole or not at all)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = target.parent / f"{target.name}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(NODE_DIR / name, work / name)
    npm = shutil.which("npm")
    assert npm is not None
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=work, capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"npm ci of {NODE_DIR.name} took over {NPM_TIMEOUT:g} s")
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"npm ci of {NODE_DIR.name} failed ({done.returncode}): "
                    f"{tail(done.stderr + done.stdout)}")  # fmt: skip
    try:
        work.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed node_modules of tests/sdk/node_echo."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run the JavaScript SDK's echo bot (not on PATH)")
    key = _lock_hash()
    target = cache_root("node_echo") / key
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache: install for this session only
        target = tmp_path_factory.mktemp("node_echo") / key
    if not (target / "node_modules" / "botbuilder" / "package.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        _install(target)
    return target / "node_modules"


# --- the bot ------------------------------------------------------------------------------------


class NodeBot:
    """tests/sdk/node_echo/index.js on ``port`` with ``settings`` in its environment."""

    def __init__(self, node_modules: Path, port: int, settings: Mapping[str, str]) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/api/messages"
        env = loopback_env(os.environ)
        for name in (*SDK_NAMES, *TRUST_NAMES):
            env.pop(name, None)
        env.update(settings)
        env.update({"NODE_PATH": str(node_modules), "PORT": str(port),
                    "NODE_NO_WARNINGS": "1"})  # fmt: skip
        node = shutil.which("node")
        assert node is not None
        self.process = Process([node, str(NODE_DIR / "index.js")], env, NODE_DIR)
        try:
            self.process.wait_for(r"^listening: ", START_TIMEOUT)
        except BaseException:
            self.process.stop()
            raise

    def errors(self, start: int = 0) -> list[str]:
        return [line for line in self.process.since(start) if "error" in line.lower()]

    def stop(self) -> None:
        self.process.stop()


def _pair(
    node_modules: Path,
    state: Path,
    *,
    tls: bool,
    real_issuers: bool = False,
    anonymous: bool = False,
) -> Iterator[tuple[Botemu, NodeBot]]:
    bot_port = free_port()
    endpoint = f"http://127.0.0.1:{bot_port}/api/messages"
    bots = ([{"endpoint": endpoint}] if anonymous
            else [{"app_id": APP_ID, "app_password": APP_PASSWORD, "endpoint": endpoint}])  # fmt: skip
    emulator = Botemu(state, free_port(), bots, tls=tls, real_issuers=real_issuers)
    try:
        bot = NodeBot(
            node_modules, bot_port, {} if anonymous else emulator.bot_env("NODE_EXTRA_CA_CERTS")
        )
    except BaseException:
        emulator.stop()
        raise
    try:
        yield emulator, bot
    finally:
        bot.stop()
        emulator.stop()


@pytest.fixture(scope="module")
def credentialed(
    node_modules: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Botemu, NodeBot]]:
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-tls"), tls=True)


@pytest.fixture(scope="module")
def real(
    node_modules: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Botemu, NodeBot]]:
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-real"), tls=True,
                     real_issuers=True)  # fmt: skip


@pytest.fixture(scope="module")
def anonymous(
    node_modules: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Botemu, NodeBot]]:
    if not ANONYMOUS:
        pytest.skip("this botemu has no anonymous bots (BotRegistration.anonymous) yet")
    yield from _pair(node_modules, tmp_path_factory.mktemp("node-anon"), tls=False,
                     anonymous=True)  # fmt: skip


def chat(
    emulator: Botemu,
    bot: NodeBot,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
) -> tuple[int, str]:
    """``botemu chat --send hello`` in this process, from botemu's state directory."""
    monkeypatch.chdir(emulator.state)
    capsys.readouterr()
    code = main(["chat", "--bot", bot.url, "--emulator", emulator.url, "--send", "hello",
                 "--wait", "10", *extra])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out + err


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


def test_msal_node_needs_known_authorities(
    node_modules: Path, credentialed: tuple[Botemu, NodeBot]
) -> None:
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


def test_credentialed_bot_greets_and_echoes_over_https(
    credentialed: tuple[Botemu, NodeBot],
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
    credentialed: tuple[Botemu, NodeBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK tells emulator-path tokens apart by a hard-coded list of the real platform's
    issuers: botemu's own issuer makes them connector tokens with the wrong issuer (401)."""
    emulator, bot = credentialed
    code, out = chat(emulator, bot, capsys, monkeypatch, "--emulator-token")
    assert code == 1, out
    assert "401" in out, out


@pytest.mark.parametrize("token", ["connector", "emulator"])
def test_real_issuers_make_both_paths_work(
    token: str,
    real: tuple[Botemu, NodeBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, bot = real
    extra = ("--emulator-token",) if token == "emulator" else ()
    code, out = chat(emulator, bot, capsys, monkeypatch, *extra)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out


def test_greeting_replies_to_the_conversation_update(credentialed: tuple[Botemu, NodeBot]) -> None:
    """The JavaScript SDK answers in a turn with reply_to_activity, the conversationUpdate
    included: both replies go to ``POST .../activities/{id}`` of what they answer."""
    emulator, _bot = credentialed
    sent = emulator.post("/_botemu/chat", {"app_id": APP_ID, "text": "reply routes"})
    assert 200 <= sent["status"] < 300, sent
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == ["Hello and welcome!", "Echo: reply routes"]
    update = next(a for a in emulator.activities(conversation)
                  if a.get("type") == "conversationUpdate")  # fmt: skip
    assert replies[0].get("replyToId") == update["id"]
    assert replies[1].get("replyToId") == sent["activity_id"]
    export = emulator.get(f"/_logview/api/calls/{conversation}/export")
    paths = [e["payload"]["path"] for e in export["events"]
             if e.get("kind") == "http.request" and e["payload"].get("path")]  # fmt: skip
    activities = f"/v3/conversations/{conversation}/activities"
    assert paths == [f"{activities}/{update['id']}", f"{activities}/{sent['activity_id']}"]


def test_botemu_test_runs_a_conversation_scenario(real: tuple[Botemu, NodeBot]) -> None:
    emulator, bot = real
    env = loopback_env(os.environ) | {"SSL_CERT_FILE": str(emulator.ca),
                                      "BOT_APP_PASSWORD": APP_PASSWORD}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(SCENARIO), "--messaging-bot", bot.url,
         "--app-id", APP_ID, "--emulator", emulator.url, "--db", str(emulator.state / "t.db")],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_anonymous_bot_greets_and_echoes(
    anonymous: tuple[Botemu, NodeBot],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, bot = anonymous
    mark = len(bot.process.lines)
    code, out = chat(emulator, bot, capsys, monkeypatch)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out
    assert not bot.errors(mark), bot.process.since(mark)


def test_anonymous_bot_runs_a_conversation_scenario(anonymous: tuple[Botemu, NodeBot]) -> None:
    emulator, bot = anonymous
    app_id = emulator.config["bots"][0]["app_id"]
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(SCENARIO), "--messaging-bot", bot.url,
         "--app-id", app_id, "--emulator", emulator.url, "--db", str(emulator.state / "t.db")],
        capture_output=True, text=True, timeout=120, env=loopback_env(os.environ), cwd=ROOT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
