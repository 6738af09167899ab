"""A bot on the platform's own Node calling SDK (botbuilder-calling 3.0.1), called by botemu.

tests/sdk/node_calling/bot.js is a calling bot written the way the SDK's sample writes one
(docs/sdk-calling-node.md). The SDK checks a Bearer JWT on every calling request, with no switch
to turn it off: the issuer and the keys come from the OpenID metadata at its verify endpoint (here
botemu's connector metadata), the audience is its app id. Each test runs ``botemu call`` (through
``emulator.cli.main``) against a real ``botemu serve`` and the node bot, and checks the call from
both ends: botemu's ladder and the lines the bot prints.

The SDK's packages are installed once per lock file (``npm ci``) into a cache outside the
repository (``~/.cache/botemu-tests/node_calling/<hash>``, ``$XDG_CACHE_HOME`` respected) and
reused; the tests are skipped when node or npm is missing or the install fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from emulator.cli import main
from tests.sdk.harness import Bot, Botemu, loopback_env, npm_install
from tests.support import free_port

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).resolve().parent / "node_calling"
BOT_JS = NODE_DIR / "bot.js"
APP_ID = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"
APP_PASSWORD = "node-calling-s3cret"
CALL = "press 1; press 1234#; talk 3s"
"""The caller: menu option 1 (sales), account 1234 ended by #, a 3 s message ended by silence."""
RECORDING = re.compile(r"recording of (\d+)s \(wav, (\d+) bytes\)")


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed node_modules of tests/sdk/node_calling, shared by the whole session."""
    return npm_install(NODE_DIR, "botbuilder-calling", "the Node calling SDK's bot",
                       tmp_path_factory)  # fmt: skip


# --- botemu and the bot -------------------------------------------------------------------------


class NodeBot(Bot):
    """tests/sdk/node_calling/bot.js on a free port.

    Its callback URL is its own calling endpoint with ``?leg=result`` added: the SDK writes that
    URL into every Workflow's links.callback, so results arriving there (the bot prints each
    request's path) show that botemu followed the callback the SDK's setting produced.
    """

    def __init__(self, node_modules: Path, *, openid_metadata: str, app_id: str = APP_ID) -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}/api/calls"
        self.callback_url = f"{url}?leg=result"
        # The SDK's HTTP client honours proxy variables: loopback is kept away from them.
        env = loopback_env(os.environ) | {
            "NODE_PATH": str(node_modules),
            "PORT": str(port),
            "CALLBACK_URL": self.callback_url,
            "MICROSOFT_APP_ID": app_id,
            "MICROSOFT_APP_PASSWORD": APP_PASSWORD,
            "OPENID_METADATA": openid_metadata,
        }
        node = shutil.which("node")
        assert node is not None
        super().__init__([node, str(BOT_JS)], env, NODE_DIR, url)

    def requests(self, lines: list[str]) -> list[tuple[str, int]]:
        """(path, status) of each request the bot answered, from its ``http:`` lines."""
        found = (re.match(r"^http: POST (\S+) (\d{3})$", line) for line in lines)
        return [(m.group(1), int(m.group(2))) for m in found if m]


@pytest.fixture(scope="module")
def botemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Botemu]:
    """``botemu serve`` over http with no bot registered: it issues the tokens ``botemu call``
    sends and publishes the OpenID metadata the SDK checks them against."""
    emulator = Botemu(tmp_path_factory.mktemp("botemu"), free_port(), [], tls=False)
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture(scope="module")
def bot(node_modules: Path, botemu: Botemu) -> Iterator[NodeBot]:
    """The SDK bot, its verify endpoint botemu's OpenID metadata URL (as botemu config prints
    it), shared by the module's calls."""
    node_bot = NodeBot(node_modules, openid_metadata=botemu.config["openid_metadata_url"])
    try:
        yield node_bot
    finally:
        node_bot.stop()


@dataclass(frozen=True)
class Ran:
    """What one ``botemu call`` did: its exit code, its ladder (stdout, ending with the summary
    line) and what it said on stderr (where the token came from)."""

    code: int
    out: str
    err: str

    @property
    def summary(self) -> str:
        lines = self.out.strip().splitlines()
        return lines[-1] if lines else ""

    @property
    def statuses(self) -> list[int]:
        """The HTTP status of each answer of the bot, as the ladder shows them."""
        return [int(s) for s in re.findall(r"← (\d{3})\b", self.out)]

    def __str__(self) -> str:
        return f"exit {self.code}\n{self.out}\n{self.err}"


def call(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> Ran:
    """``botemu call ARGS`` in this process."""
    capsys.readouterr()
    code = main(["call", "--db", str(tmp_path / "calls.db"), "--seed", "7", "--timeout", "10",
                 *args])  # fmt: skip
    out, err = capsys.readouterr()
    return Ran(code, out, err)


# --- tests --------------------------------------------------------------------------------------


def test_whole_call_runs_through_the_sdk_with_botemus_token(
    bot: NodeBot, botemu: Botemu, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mark = bot.mark()
    ran = call(capsys, tmp_path, "--bot", bot.url, "--app-id", APP_ID,
               "--emulator", botemu.url, "--certs", str(botemu.state / "certs"), "--caller", CALL)  # fmt: skip

    assert ran.code == 0, ran
    assert "bot hung up" in ran.summary, ran
    assert " 0 errors" in ran.summary, ran
    assert len(ran.statuses) >= 5, ran
    assert set(ran.statuses) == {200}, ran  # never a 401 or 403: the SDK took every token
    bot.process.wait_for(r"^record: ", 10, start=mark)
    lines = bot.process.settle(mark)
    # What the caller did reached the bot's dialog, through the SDK's own parsing.
    assert "menu: sales" in lines, lines
    assert "digits: 1234" in lines, lines
    recorded = RECORDING.search(ran.out)
    assert recorded is not None, ran
    seconds, size = recorded.groups()
    # The multipart record result: the SDK's parser handed the whole WAV to the dialog.
    assert f'record: {seconds} s, {size} bytes, starts "RIFF"' in lines, lines
    # The Conversation came to the calling endpoint and every result to the callback URL the SDK
    # wrote into links.callback; the bot answered each with 200.
    requests = bot.requests(lines)
    assert requests[0] == ("/api/calls", 200), requests
    assert requests[1:] == [("/api/calls?leg=result", 200)] * len(ran.statuses[1:]), requests
    assert not [line for line in lines if line.startswith("error: ")], lines


def test_sdk_refuses_a_call_without_a_token(
    bot: NodeBot, botemu: Botemu, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mark = bot.mark()
    ran = call(capsys, tmp_path, "--bot", bot.url, "--app-id", APP_ID,
               "--emulator", botemu.url, "--certs", str(botemu.state / "certs"), "--no-token", "--caller", CALL)  # fmt: skip

    assert ran.code == 1, ran
    assert ran.statuses == [401], ran
    assert "bot refused the request" in ran.summary, ran
    bot.process.wait_for(r"^http: POST /api/calls 401$", 10, start=mark)
    lines = bot.process.settle(mark)
    assert bot.requests(lines) == [("/api/calls", 401)], lines
    assert not [line for line in lines if line.startswith("call: ")], lines  # no dialog ran


def test_sdk_refuses_a_token_for_another_app_id(
    bot: NodeBot, botemu: Botemu, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The audience is the app id the bot was given: a token for any other app id is refused."""
    mark = bot.mark()
    other = "00000000-0000-4000-8000-000000000000"
    ran = call(capsys, tmp_path, "--bot", bot.url, "--app-id", other,
               "--emulator", botemu.url, "--certs", str(botemu.state / "certs"), "--caller", CALL)  # fmt: skip

    assert ran.code == 1, ran
    assert ran.statuses == [403], ran
    assert "bot refused the request" in ran.summary, ran
    bot.process.wait_for(r"^http: POST /api/calls 403$", 10, start=mark)
    assert bot.requests(bot.process.settle(mark)) == [("/api/calls", 403)]


def test_sdk_without_botemus_metadata_cannot_check_the_token(
    node_modules: Path, botemu: Botemu, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The verify endpoint must be botemu's OpenID metadata URL: with a URL where nothing
    answers, the SDK cannot load the issuer and keys and answers every request 500."""
    nowhere = f"http://127.0.0.1:{free_port()}/_identity/v3.1/.well-known/openidconfiguration"
    lost = NodeBot(node_modules, openid_metadata=nowhere)
    try:
        mark = lost.mark()
        ran = call(capsys, tmp_path, "--bot", lost.url, "--app-id", APP_ID,
                   "--emulator", botemu.url, "--certs", str(botemu.state / "certs"), "--attempts", "1", "--caller", CALL)  # fmt: skip
        assert ran.code == 1, ran
        assert ran.statuses == [500], ran
        lost.process.wait_for(r"^http: POST /api/calls 500$", 10, start=mark)
        assert not [line for line in lost.process.since(mark) if line.startswith("call: ")]
    finally:
        lost.stop()


def test_probe_auth_calling_reports_the_sdks_weak_cases(
    bot: NodeBot, botemu: Botemu, capsys: pytest.CaptureFixture[str]
) -> None:
    """``botemu probe auth --calling`` on the SDK bot: it accepts an unsigned ``alg: none``
    token whose kid is not published (an error), refuses a token inside the 5-minute skew (a
    warning), answers 500 to ``Bearer not-a-jwt`` (a crash: an error) and 401 where the spec
    says 403 (warnings); it accepts the good token and keeps answering after every case."""
    capsys.readouterr()
    code = main(["probe", "auth", "--calling", "--bot", bot.url, "--app-id", APP_ID,
                 "--emulator", botemu.url, "--certs", str(botemu.state / "certs"), "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    severities = {f["rule"]: f["severity"] for f in report["findings"]}
    assert severities["AUTH-CALL-VALID-ACCEPTED"] == "info", report
    assert severities["AUTH-CALL-ALG-NONE-UNKNOWN-KID"] == "error", report
    assert severities["AUTH-CALL-EXPIRED-WITHIN-SKEW"] == "warning", report
    assert severities["AUTH-CALL-GARBAGE"] == "error", report
    assert severities["AUTH-CALL-NO-HEADER"] == "warning", report  # 401, not 403
    assert "AUTH-CALL-ALIVE" not in severities, report  # it survived every case
    assert severities["AUTH-CALL-ALG-NONE"] == "info", report  # a published kid: refused
