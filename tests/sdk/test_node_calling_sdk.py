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

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from emulator.cli import main
from tests.support import ROOT, free_port

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).resolve().parent / "node_calling"
BOT_JS = NODE_DIR / "bot.js"
APP_ID = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"
APP_PASSWORD = "node-calling-s3cret"
NPM_TIMEOUT = 300.0
START_TIMEOUT = 20.0
CALL = "press 1; press 1234#; talk 3s"
"""The caller: menu option 1 (sales), account 1234 ended by #, a 3 s message ended by silence."""
RECORDING = re.compile(r"recording of (\d+)s \(wav, (\d+) bytes\)")


# --- the SDK's packages -------------------------------------------------------------------------


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "botemu-tests" / "node_calling"


def _lock_hash() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((NODE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _tail(text: str, lines: int = 8) -> str:
    """The last lines of npm's output that say something, on one line."""
    kept = [line for line in text.strip().splitlines() if line.strip() not in ("", "npm error")]
    return " | ".join(kept[-lines:]) or "(no output)"


def _install(target: Path) -> None:
    """``npm ci`` of node_calling's lock file into ``target`` (created whole or not at all)."""
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
            cwd=work,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"npm ci of {NODE_DIR.name} took over {NPM_TIMEOUT:g} s")
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"npm ci of {NODE_DIR.name} failed ({done.returncode}): "
                    f"{_tail(done.stderr + done.stdout)}")  # fmt: skip
    try:
        work.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed node_modules of tests/sdk/node_calling, shared by the whole session."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run the Node calling SDK's bot (not on PATH)")
    key = _lock_hash()
    target = _cache_root() / key
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache: install for this session only
        target = tmp_path_factory.mktemp("node_calling") / key
    if not (target / "node_modules" / "botbuilder-calling" / "package.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        _install(target)
    return target / "node_modules"


# --- botemu and the bot -------------------------------------------------------------------------


_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Talks to loopback servers directly, whatever proxy the environment names."""


def _get_json(url: str, timeout: float = 2.0) -> dict[str, object]:
    with _LOOPBACK.open(url, timeout=timeout) as response:
        document = json.loads(response.read())
    assert isinstance(document, dict)
    return document


class Process:
    """A child process whose combined output is read line by line as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.argv = argv
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace",
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float, start: int = 0) -> re.Match[str]:
        """The first line from ``start`` on matching ``pattern``; fails after ``timeout``."""
        compiled = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines[start:]:
                    found = compiled.search(line)
                    if found:
                        return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    break
                self._changed.wait(min(left, 0.2))
        raise AssertionError(
            f"no line matching {pattern!r} within {timeout:g} s from {self.argv[-1]} "
            f"(exit {self.proc.poll()}):\n" + "\n".join(self.lines[-30:])
        )

    def since(self, start: int) -> list[str]:
        with self._changed:
            return list(self.lines[start:])

    def settle(self, start: int, quiet: float = 0.3, timeout: float = 5.0) -> list[str]:
        """The lines from ``start`` on, once none has come for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        count = -1
        while time.monotonic() < deadline:
            now = len(self.lines)
            if now == count:
                break
            count = now
            time.sleep(quiet)
        return self.since(start)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._reader.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Botemu:
    """``botemu serve`` on a free loopback port, with its own keys and transcripts."""

    def __init__(self, state: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "emulator", "serve", "--port", str(self.port),
                "--certs", str(state / "certs"), "--db", str(state / "serve.db")]  # fmt: skip
        self.process = Process(argv, dict(os.environ), ROOT)
        try:
            self._wait_healthy()
            self.config = _get_json(f"{self.url}/_botemu/config")
        except BaseException:
            self.process.stop()
            raise

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.proc.poll() is not None:
                break
            try:
                if _get_json(f"{self.url}/_botemu/health", timeout=1.0).get("status") == "ok":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"botemu serve did not answer on {self.url} within "
                             f"{START_TIMEOUT:g} s:\n" + "\n".join(self.process.lines[-30:]))  # fmt: skip

    @property
    def openid_metadata_url(self) -> str:
        value = self.config["openid_metadata_url"]
        assert isinstance(value, str)
        return value


class NodeBot:
    """tests/sdk/node_calling/bot.js on a free port.

    Its callback URL is its own calling endpoint with ``?leg=result`` added: the SDK writes that
    URL into every Workflow's links.callback, so results arriving there (the bot prints each
    request's path) show that botemu followed the callback the SDK's setting produced.
    """

    def __init__(self, node_modules: Path, *, openid_metadata: str, app_id: str = APP_ID) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/api/calls"
        self.callback_url = f"{self.url}?leg=result"
        env = dict(os.environ)
        env.update({
            "NODE_PATH": str(node_modules),
            "PORT": str(self.port),
            "CALLBACK_URL": self.callback_url,
            "MICROSOFT_APP_ID": app_id,
            "MICROSOFT_APP_PASSWORD": APP_PASSWORD,
            "OPENID_METADATA": openid_metadata,
        })  # fmt: skip
        for name in ("NO_PROXY", "no_proxy"):  # the SDK's HTTP client honours proxy variables
            env[name] = ",".join(filter(None, [env.get(name), "127.0.0.1", "localhost"]))
        node = shutil.which("node")
        assert node is not None
        self.process = Process([node, str(BOT_JS)], env, NODE_DIR)
        try:
            self.process.wait_for(r"^listening: ", START_TIMEOUT)
        except BaseException:
            self.process.stop()
            raise

    def mark(self) -> int:
        return len(self.process.lines)

    def requests(self, lines: list[str]) -> list[tuple[str, int]]:
        """(path, status) of each request the bot answered, from its ``http:`` lines."""
        found = (re.match(r"^http: POST (\S+) (\d{3})$", line) for line in lines)
        return [(m.group(1), int(m.group(2))) for m in found if m]


@pytest.fixture(scope="module")
def botemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Botemu]:
    emulator = Botemu(tmp_path_factory.mktemp("botemu"))
    try:
        yield emulator
    finally:
        emulator.process.stop()


@pytest.fixture(scope="module")
def bot(node_modules: Path, botemu: Botemu) -> Iterator[NodeBot]:
    """The SDK bot, its verify endpoint botemu's OpenID metadata URL (as botemu config prints
    it), shared by the module's calls."""
    node_bot = NodeBot(node_modules, openid_metadata=botemu.openid_metadata_url)
    try:
        yield node_bot
    finally:
        node_bot.process.stop()


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
               "--emulator", botemu.url, "--caller", CALL)  # fmt: skip

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
               "--emulator", botemu.url, "--no-token", "--caller", CALL)  # fmt: skip

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
               "--emulator", botemu.url, "--caller", CALL)  # fmt: skip

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
                   "--emulator", botemu.url, "--attempts", "1", "--caller", CALL)  # fmt: skip
        assert ran.code == 1, ran
        assert ran.statuses == [500], ran
        lost.process.wait_for(r"^http: POST /api/calls 500$", 10, start=mark)
        assert not [line for line in lost.process.since(mark) if line.startswith("call: ")]
    finally:
        lost.process.stop()


def test_probe_auth_calling_reports_the_sdks_weak_cases(
    bot: NodeBot, botemu: Botemu, capsys: pytest.CaptureFixture[str]
) -> None:
    """``botemu probe auth --calling`` on the SDK bot: it accepts an unsigned ``alg: none``
    token whose kid is not published (an error), refuses a token inside the 5-minute skew (a
    warning), answers 500 to ``Bearer not-a-jwt`` (a crash: an error) and 401 where the spec
    says 403 (warnings); it accepts the good token and keeps answering after every case."""
    capsys.readouterr()
    code = main(["probe", "auth", "--calling", "--bot", bot.url, "--app-id", APP_ID,
                 "--emulator", botemu.url, "--json"])  # fmt: skip
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
