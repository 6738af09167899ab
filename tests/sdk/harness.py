"""What the SDK tests share: child processes, cached installs, ``botemu serve`` and the echo bots.

``Process`` runs a child (botemu, a bot, an SDK's script) and reads its combined output line by
line as it comes (``wait_for`` a line, ``settle`` until it is quiet, ``stop``).

The SDKs' packages are installed once per pin set or lock file into a cache outside the
repository (``~/.cache/botemu-tests/<name>/<hash>``, ``$XDG_CACHE_HOME`` respected), each made
whole under a temporary name, then renamed (``install_whole``), by one worker while the others
that need it wait, and reused; tests are skipped, with the reason, when an install step fails or
takes too long. ``npm_install`` is that for a directory with a ``package.json`` and its lock
file (``npm ci``), ``npm_pack`` for one package's own files, checked against its pinned
integrity (``unpack_checked``).

``Botemu`` runs ``python -m emulator serve`` in its own state directory (``certs/`` and the
transcript database there), waits for its health route and reads the settings a bot needs from
the banner it prints, exactly as a developer would paste them (``Botemu.settings``).

``Bot`` is a bot's process, started once it prints ``listening: ``; ``serve_bot`` starts botemu
with one bot registered and then the bot with the banner's settings. The echo template's bots
(Python and JavaScript) are checked the same ways: ``chat``, ``chat_greets_and_echoes`` and
``run_scenario``.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from emulator.cli import main
from emulator.config import BotRegistration
from tests.support import ROOT, free_port

SDK = Path(__file__).resolve().parent
ECHO_SCENARIO = SDK / "python" / "echo-template.yaml"
"""The echo template's conversation (greeting, echo) as a ``botemu test`` scenario."""
START_TIMEOUT = 30.0
NPM_TIMEOUT = 300.0
ANONYMOUS = "anonymous" in BotRegistration.__dataclass_fields__
TRUST_NAMES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS")
PLATFORM_NAMES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NODE_OPTIONS",
                  "BOTEMU_PLATFORM_ADDRESS")  # fmt: skip
"""What reaches the platform's hosts (``botemu env``): never inherited by a bot from here."""
SDK_NAMES = (
    "MicrosoftAppId",
    "MicrosoftAppPassword",
    "ToChannelFromBotLoginUrl",
    "ToChannelFromBotOAuthScope",
    "ToBotFromChannelTokenIssuer",
    "ToBotFromChannelOpenIdMetadataUrl",
    "ToBotFromEmulatorOpenIdMetadataUrl",
)


def loopback_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with loopback kept away from any proxy the environment names."""
    out = dict(env)
    for name in ("NO_PROXY", "no_proxy"):
        out[name] = ",".join(filter(None, [out.get(name), "127.0.0.1", "localhost"]))
    return out


def loopback_opener(context: ssl.SSLContext | None = None) -> urllib.request.OpenerDirector:
    """An opener that talks to loopback servers directly, whatever proxy the environment names;
    over https, trusting what ``context`` trusts."""
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    return urllib.request.build_opener(*handlers)


# --- child processes ----------------------------------------------------------------------------


class Process:
    """A child process whose combined output is read line by line as it comes."""

    def __init__(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, *, stdin: bool = False
    ) -> None:
        self.argv = argv
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            argv, env=dict(env), cwd=cwd, stdout=subprocess.PIPE,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
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
            f"no line matching {pattern!r} within {timeout:g} s from {' '.join(self.argv[-3:])} "
            f"(exit {self.proc.poll()}):\n" + "\n".join(self.lines[-40:])
        )

    def type(self, line: str) -> int:
        """Write ``line`` to the child's standard input (``stdin=True``); where its answer's
        lines start."""
        assert self.proc.stdin is not None
        start = len(self.lines)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return start

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
        if self.proc.stdin is not None:
            self.proc.stdin.close()
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


# --- cached installs ----------------------------------------------------------------------------


def cache_root(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "botemu-tests" / name


def tail(text: str, lines: int = 8) -> str:
    """The last lines of an installer's output that say something, on one line."""
    kept = [line for line in text.strip().splitlines() if line.strip() not in ("", "npm error")]
    return " | ".join(kept[-lines:]) or "(no output)"


def install_whole(
    target: Path, ready: Callable[[Path], bool], fill: Callable[[Path], None]
) -> None:
    """``target``, unless it is ``ready``, made by ``fill`` in a temporary directory beside it,
    then renamed: created whole or not at all (``fill`` skips the test when a step fails). One
    process at a time (a lock file beside it): the suite's workers that need the same install
    wait for the first instead of making it again (two of 613 MB made at once, by the two
    modules of Direct Line clients, doubled a fresh machine's install time)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready(target):
            return
        shutil.rmtree(target, ignore_errors=True)
        work = target.parent / f"{target.name}.partial-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        try:
            fill(work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        try:
            work.rename(target)
        except OSError:  # another run, without this lock, installed it meanwhile
            shutil.rmtree(work, ignore_errors=True)


def install_step(
    argv: list[str], *, timeout: float, slow: str, failed: str, cwd: Path | None = None
) -> None:
    """One step of an install; the test is skipped with ``slow`` when it takes over ``timeout``
    seconds, with ``failed`` (``{code}``: its exit code) and its output's tail when it fails."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip(slow)
    if done.returncode != 0:
        pytest.skip(f"{failed.format(code=done.returncode)}: {tail(done.stderr + done.stdout)}")


def npm_install(
    node_dir: Path, package: str, needs: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The node_modules of ``node_dir``'s lock file (``npm ci``), installed once per lock file into
    ``cache_root(node_dir.name)/<hash>`` (for this session only when the cache cannot be written)
    and reused while it holds ``package``. Skipped when node or npm is missing (``needs``: what
    they are needed to run) or the install fails."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node and npm are needed to run {needs} (not on PATH)")
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((node_dir / name).read_bytes())
    key = digest.hexdigest()[:16]
    target = cache_root(node_dir.name) / key
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache: install for this session only
        target = tmp_path_factory.mktemp(node_dir.name) / key
    install_whole(target, lambda made: (made / "node_modules" / package / "package.json").is_file(),
                  lambda work: _npm_ci(node_dir, work))  # fmt: skip
    return target / "node_modules"


def _npm_ci(node_dir: Path, work: Path) -> None:
    work.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(node_dir / name, work / name)
    npm = shutil.which("npm")
    assert npm is not None
    install_step([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=work,
                 timeout=NPM_TIMEOUT, slow=f"npm ci of {node_dir.name} took over {NPM_TIMEOUT:g} s",
                 failed=f"npm ci of {node_dir.name} failed ({{code}})")  # fmt: skip


def npm_pack(name: str, version: str, integrity: str, needs: str) -> Path:
    """The files of the npm package ``name`` at ``version``, without its dependencies (what a
    test needs of it is a file it ships, as Web Chat's bundle): its tarball (``npm pack``, from
    the registry or npm's cache) checked against ``integrity`` (``sha512-<base64>``, as a lock
    file records it) and unpacked once into ``cache_root(name)/<version>-<hash>``. Skipped as
    ``npm_install`` is; a tarball that is not the pinned one fails the test."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node and npm are needed to run {needs} (not on PATH)")
    key = f"{version}-{hashlib.sha256(integrity.encode()).hexdigest()[:16]}"
    target = cache_root(name) / key
    install_whole(target, lambda made: (made / "package" / "package.json").is_file(),
                  lambda work: _npm_pack(name, version, integrity, work))  # fmt: skip
    return target / "package"


def _npm_pack(name: str, version: str, integrity: str, work: Path) -> None:
    work.mkdir()
    npm = shutil.which("npm")
    assert npm is not None
    install_step([npm, "pack", f"{name}@{version}", "--prefer-offline", "--pack-destination",
                  str(work)], timeout=NPM_TIMEOUT,
                 slow=f"npm pack of {name} took over {NPM_TIMEOUT:g} s",
                 failed=f"npm pack of {name}@{version} failed ({{code}})")  # fmt: skip
    [tarball] = work.glob("*.tgz")
    unpack_checked(tarball, integrity, f"{name}@{version}")


def unpack_checked(tarball: Path, integrity: str, what: str) -> None:
    """``tarball`` unpacked beside it and removed, if its ``sha512-<base64>`` is ``integrity``;
    else an ``AssertionError`` naming ``what``, and nothing unpacked."""
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    assert digest == integrity, f"{what}: {digest}, not the pinned {integrity}"
    with tarfile.open(tarball) as archive:
        archive.extractall(tarball.parent, filter="data")
    tarball.unlink()


def requirement_pins(requirements: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file, names lower-cased."""
    pins = {}
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


_pythons: dict[Path, Path] = {}
PYTHON_INSTALL_TIMEOUT = 600.0


def pinned_python(requirements: Path, name: str, what: str) -> Path:
    """A Python with exactly the pins of ``requirements``: this interpreter when it has them,
    else a virtual environment made once per pin set and Python version in
    ``cache_root(name)/<hash>`` (``install_whole``); the test is skipped, saying ``what`` could
    not be installed, when a step fails or takes too long."""
    found = _pythons.get(requirements)
    if found is not None:
        return found
    try:
        if all(metadata.version(n) == v for n, v in requirement_pins(requirements).items()):
            _pythons[requirements] = Path(sys.executable)
            return _pythons[requirements]
    except metadata.PackageNotFoundError:
        pass
    key = hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
    key += f"-py{sys.version_info.major}{sys.version_info.minor}"
    target = cache_root(name) / key
    install_whole(target, lambda made: (made / "installed").is_file(),
                  lambda work: _install_venv(work, requirements, what))  # fmt: skip
    _pythons[requirements] = target / "bin" / "python"
    return _pythons[requirements]


def _install_venv(work: Path, requirements: Path, what: str) -> None:
    steps = [
        [sys.executable, "-m", "venv", str(work)],
        [str(work / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "-r", str(requirements)],
    ]  # fmt: skip
    for argv in steps:
        install_step(argv, timeout=PYTHON_INSTALL_TIMEOUT,
                     slow=f"installing {what} took over {PYTHON_INSTALL_TIMEOUT:g} s",
                     failed=f"{what} ({requirements.name}) cannot be installed")  # fmt: skip
    (work / "installed").write_text(requirements.read_text())


# --- botemu serve -------------------------------------------------------------------------------


class Botemu:
    """``botemu serve`` on ``port`` with the bots of ``bots`` (mappings as in a configuration
    file), run in ``state``; ``tls`` and ``real_issuers`` as the options of the same names."""

    def __init__(
        self,
        state: Path,
        port: int,
        bots: list[dict[str, Any]],
        *,
        tls: bool = True,
        real_issuers: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.state = state
        self.port = port
        self.bots = bots
        self.tls = tls
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{port}"
        state.mkdir(parents=True, exist_ok=True)
        config = {"port": port, "bots": bots, **(extra or {})}
        (state / "botemu.yaml").write_text(yaml.safe_dump(config))
        argv = [sys.executable, "-m", "emulator", "serve", "--config", "botemu.yaml",
                "--db", "serve.db"]  # fmt: skip
        if tls:
            argv.append("--tls")
        argv.append("--real-issuers" if real_issuers else "--own-issuers")
        env = loopback_env(os.environ) | {"PYTHONUNBUFFERED": "1",
                                          "PYTHONPATH": str(ROOT)}  # fmt: skip
        self.process = Process(argv, env, state)
        try:
            self.process.wait_for(r"^Ctrl-C stops\.$", START_TIMEOUT)
            self.banner = self.process.since(0)
            self._wait_healthy()
            self.config = self.get("/_botemu/config")
        except BaseException:
            self.process.stop()
            raise

    @property
    def ca(self) -> Path:
        return self.state / "certs" / "ca.pem"

    def ssl_context(self) -> ssl.SSLContext | None:
        return ssl.create_default_context(cafile=str(self.ca)) if self.tls else None

    @property
    def settings(self) -> dict[str, str]:
        """Every ``NAME=value`` line of the banner (the settings to paste)."""
        found = (re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line) for line in self.banner)
        return {m.group(1): m.group(2) for m in found if m}

    def bot_env(self, trust: str) -> dict[str, str]:
        """The banner's settings a Bot Framework SDK bot reads: the SDK settings (credentials
        and the To* settings) and, over https, ``trust``: the one variable that makes its
        runtime trust botemu's CA (docs/sdk.md: ``REQUESTS_CA_BUNDLE`` for the Python SDK,
        ``NODE_EXTRA_CA_CERTS`` for node)."""
        settings = self.settings
        return {name: settings[name] for name in (*SDK_NAMES, trust) if name in settings}

    def _open(self, request: urllib.request.Request | str, timeout: float = 5.0) -> Any:
        with loopback_opener(self.ssl_context()).open(request, timeout=timeout) as response:
            return json.loads(response.read())

    def get(self, path: str) -> Any:
        return self._open(f"{self.url}{path}")

    def post(self, path: str, body: Mapping[str, Any], timeout: float = 30.0) -> Any:
        from emulator.guard import control_headers  # the run's secret (docs/security.md)

        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), method="POST",
            headers=control_headers(self.state / "certs"),
        )  # fmt: skip
        return self._open(request, timeout)

    def send(self, app_id: str, text: str) -> dict[str, Any]:
        """A user's message to the bot ``app_id`` through the control API (``POST
        /_botemu/chat``), which botemu must take."""
        sent: dict[str, Any] = self.post("/_botemu/chat", {"app_id": app_id, "text": text})
        assert 200 <= sent["status"] < 300, sent
        return sent

    def activities(self, conversation_id: str) -> list[dict[str, Any]]:
        page = self.get(f"/_botemu/conversations/{conversation_id}/activities")
        activities: list[dict[str, Any]] = page["activities"]
        return activities

    def replies(
        self, conversation_id: str, count: int, timeout: float = 15.0
    ) -> list[dict[str, Any]]:
        """The bot's activities in the conversation once there are ``count`` (or the timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [a for a in self.activities(conversation_id)
                     if (a.get("from") or {}).get("role") != "user"]  # fmt: skip
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def request_paths(self, conversation_id: str) -> list[str]:
        """The paths of the requests made to botemu in the conversation (its transcript's
        export), in order."""
        export = self.get(f"/_logview/api/calls/{conversation_id}/export")
        return [e["payload"]["path"] for e in export["events"]
                if e.get("kind") == "http.request" and e["payload"].get("path")]  # fmt: skip

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.proc.poll() is not None:
                break
            try:
                if self.get("/_botemu/health").get("status") == "ok":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"botemu serve did not answer on {self.url} within "
                             f"{START_TIMEOUT:g} s:\n" + "\n".join(self.process.lines[-30:]))  # fmt: skip

    def stop(self) -> None:
        self.process.stop()


# --- bots ---------------------------------------------------------------------------------------


class Bot:
    """A bot's process (``argv`` in ``cwd`` with ``env``) answering at ``url``, started once it
    prints a line matching ``ready`` (``listening: ``)."""

    def __init__(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, url: str,
        ready: str = r"^listening: ",
    ) -> None:  # fmt: skip
        self.url = url
        self.process = Process(argv, env, cwd)
        try:
            self.process.wait_for(ready, START_TIMEOUT)
        except BaseException:
            self.process.stop()
            raise

    def mark(self) -> int:
        """Where the lines the bot prints from now on start."""
        return len(self.process.lines)

    def errors(self, start: int = 0) -> list[str]:
        """What the bot wrote about failures (its on_turn_error and tracebacks)."""
        return [line for line in self.process.since(start)
                if "error" in line.lower() or "Traceback" in line]  # fmt: skip

    def stop(self) -> None:
        self.process.stop()


def sdk_bot_env(settings: Mapping[str, str]) -> dict[str, str]:
    """This environment for an SDK bot given ``settings`` and nothing else of botemu's: the SDK
    and trust variables found here are replaced, not added to."""
    env = loopback_env(os.environ)
    for name in (*SDK_NAMES, *TRUST_NAMES, *PLATFORM_NAMES):
        env.pop(name, None)
    env.update(settings)
    return env


def botemu_env(emulator: Botemu, sdk: str) -> dict[str, str]:
    """What ``botemu env SDK --format json`` prints for the running ``emulator`` (run from its
    state directory, as a developer would beside it): a bot's whole environment."""
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "env", sdk, "--format", "json",
         "--emulator", emulator.url],
        capture_output=True, text=True, timeout=60, cwd=emulator.state,
        env=loopback_env(os.environ) | {"PYTHONPATH": str(ROOT)}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    printed: dict[str, str] = json.loads(done.stdout)
    return printed


B = TypeVar("B", bound=Bot)


def serve_bot(
    state: Path,
    start: Callable[[int, dict[str, str]], B],
    *,
    credentials: tuple[str, str] | None,
    trust: str = "",
    tls: bool = True,
    real_issuers: bool = False,
    settings: Callable[[Botemu], dict[str, str]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Iterator[tuple[Botemu, B]]:
    """botemu (in ``state``) with one bot registered, its messaging endpoint on a free port, and
    the bot ``start(port, settings)``, for a fixture to yield; with ``credentials`` (app id,
    password) the bot gets the banner's settings (``Botemu.bot_env(trust)``), without them it
    is anonymous and gets none; ``settings``, when given, makes the bot's settings instead."""
    bot_port = free_port()
    endpoint = f"http://127.0.0.1:{bot_port}/api/messages"
    bots: list[dict[str, Any]] = [{"endpoint": endpoint}]
    if credentials is not None:
        app_id, app_password = credentials
        bots = [{"app_id": app_id, "app_password": app_password, "endpoint": endpoint}]
    emulator = Botemu(state, free_port(), bots, tls=tls, real_issuers=real_issuers, extra=extra)
    try:
        if settings is not None:
            given = settings(emulator)
        else:
            given = {} if credentials is None else emulator.bot_env(trust)
        bot = start(bot_port, given)
    except BaseException:
        emulator.stop()
        raise
    try:
        yield emulator, bot
    finally:
        bot.stop()
        emulator.stop()


# --- what the echo template's bots are asked ----------------------------------------------------


def chat(
    emulator: Botemu,
    bot: Bot,
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


def chat_greets_and_echoes(
    emulator: Botemu,
    bot: Bot,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
) -> None:
    """``chat`` succeeds with the template's greeting and its echo of ``hello``."""
    code, out = chat(emulator, bot, capsys, monkeypatch, *extra)
    assert code == 0, out
    assert "Hello and welcome!" in out and "Echo: hello" in out, out


def run_scenario(
    emulator: Botemu, bot: Bot, scenario: Path = ECHO_SCENARIO
) -> subprocess.CompletedProcess[str]:
    """``botemu test`` of ``scenario`` (``messaging:`` turns) against ``bot`` through the
    running ``emulator``, as the bot registered there: its app id (botemu's for an anonymous
    bot), its password in BOT_APP_PASSWORD, and over https botemu's CA in SSL_CERT_FILE (which
    its HTTP client trusts)."""
    registered = emulator.bots[0]
    app_id = registered.get("app_id") or emulator.config["bots"][0]["app_id"]
    env = loopback_env(os.environ)
    if emulator.tls:
        env["SSL_CERT_FILE"] = str(emulator.ca)
    if registered.get("app_password"):
        env["BOT_APP_PASSWORD"] = registered["app_password"]
    return subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(scenario), "--messaging-bot", bot.url,
         "--app-id", app_id, "--emulator", emulator.url, "--db", str(emulator.state / "t.db"),
         "--certs", str(emulator.state / "certs")],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, check=False,
    )  # fmt: skip


def probe_auth(emulator: Botemu, bot: Bot) -> tuple[int, dict[str, Any]]:
    """``botemu probe auth --json`` of ``bot`` through the running ``emulator`` (from its state
    directory: its CA and control secret); (exit code, the report)."""
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "probe", "auth", "--bot", bot.url,
         "--emulator", emulator.url, "--json"],
        capture_output=True, text=True, timeout=120, cwd=emulator.state,
        env=loopback_env(os.environ) | {"PYTHONPATH": str(ROOT)}, check=False,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    assert report, done.stderr
    return done.returncode, report


def refused_without_a_token(emulator: Botemu, bot: Bot, app_id: str) -> int:
    """The status a credentialed bot answers a well-formed activity with no Authorization header
    with (the SDKs: 401)."""
    body = json.dumps({"type": "message", "text": "x", "serviceUrl": emulator.url,
                       "channelId": "webchat", "conversation": {"id": "c"},
                       "from": {"id": "u"}, "recipient": {"id": app_id}}).encode()  # fmt: skip
    request = urllib.request.Request(bot.url, data=body,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with loopback_opener().open(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        refused.close()
        return int(refused.code)
