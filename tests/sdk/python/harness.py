"""What the SDK tests share: child processes, ``botemu serve`` (over HTTPS), the SDK's Python.

``Botemu`` runs ``python -m emulator serve`` in its own state directory (``certs/`` and the
transcript database there), waits for its health route and reads the settings a bot needs from
the banner it prints, exactly as a developer would paste them (``Botemu.settings``).

``python_sdk()`` gives a Python with the platform's Python SDK (botbuilder 4.17, the pins of
``requirements.txt``): this interpreter when it has exactly those versions (``pip install -e
'.[sdk]'``), else a virtual environment made once per pin set in a cache outside the repository
(``~/.cache/botemu-tests/python_sdk/<hash>``, ``$XDG_CACHE_HOME`` respected). Tests are skipped,
with the reason, when it cannot be installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import ROOT

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
ECHO_BOT = HERE / "echo_bot" / "app.py"
START_TIMEOUT = 30.0
INSTALL_TIMEOUT = 600.0
TRUST_NAMES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS")
SDK_NAMES = (
    "MicrosoftAppId",
    "MicrosoftAppPassword",
    "ToChannelFromBotLoginUrl",
    "ToChannelFromBotOAuthScope",
    "ToBotFromChannelTokenIssuer",
    "ToBotFromChannelOpenIdMetadataUrl",
    "ToBotFromEmulatorOpenIdMetadataUrl",
)


def cache_root(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "botemu-tests" / name


def tail(text: str, lines: int = 8) -> str:
    """The last lines of an installer's output that say something, on one line."""
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) or "(no output)"


def loopback_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with loopback kept away from any proxy the environment names."""
    out = dict(env)
    for name in ("NO_PROXY", "no_proxy"):
        out[name] = ",".join(filter(None, [out.get(name), "127.0.0.1", "localhost"]))
    return out


# --- the Python SDK -----------------------------------------------------------------------------


def _pins() -> dict[str, str]:
    pins = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def _has_pins() -> bool:
    try:
        return all(metadata.version(name) == version for name, version in _pins().items())
    except metadata.PackageNotFoundError:
        return False


_python_sdk: Path | None = None


def python_sdk() -> Path:
    """A Python interpreter with the pinned SDK installed (see the module docstring)."""
    global _python_sdk
    if _python_sdk is not None:
        return _python_sdk
    if _has_pins():
        _python_sdk = Path(sys.executable)
        return _python_sdk
    key = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    key += f"-py{sys.version_info.major}{sys.version_info.minor}"
    target = cache_root("python_sdk") / key
    python = target / "bin" / "python"
    if not (target / "installed").is_file():
        shutil.rmtree(target, ignore_errors=True)
        _install_venv(target)
    _python_sdk = python
    return python


def _install_venv(target: Path) -> None:
    """A virtual environment with the pins, made whole under a temporary name, then renamed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = target.parent / f"{target.name}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(work)],
        [str(work / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
    ]  # fmt: skip
    for argv in steps:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                                  check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            shutil.rmtree(work, ignore_errors=True)
            pytest.skip(f"installing the Python SDK took over {INSTALL_TIMEOUT:g} s")
        if done.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            pytest.skip(f"the Python SDK ({REQUIREMENTS.name}) cannot be installed: "
                        f"{tail(done.stderr + done.stdout)}")  # fmt: skip
    (work / "installed").write_text(REQUIREMENTS.read_text())
    try:
        work.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)


# --- child processes ----------------------------------------------------------------------------


class Process:
    """A child process whose combined output is read line by line as it comes."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: Path) -> None:
        self.argv = argv
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            argv, env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
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

    def since(self, start: int) -> list[str]:
        with self._changed:
            return list(self.lines[start:])

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
    ) -> None:
        self.state = state
        self.port = port
        self.tls = tls
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{port}"
        state.mkdir(parents=True, exist_ok=True)
        config = {"port": port, "bots": bots}
        (state / "botemu.yaml").write_text(yaml.safe_dump(config))
        argv = [sys.executable, "-m", "emulator", "serve", "--config", "botemu.yaml",
                "--db", "serve.db"]  # fmt: skip
        if tls:
            argv.append("--tls")
        if real_issuers:
            argv.append("--real-issuers")
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
        handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        context = self.ssl_context()
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
            return json.loads(response.read())

    def get(self, path: str) -> Any:
        return self._open(f"{self.url}{path}")

    def post(self, path: str, body: Mapping[str, Any], timeout: float = 30.0) -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        return self._open(request, timeout)

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

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if self.get("/_botemu/health").get("status") == "ok":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"botemu serve did not answer on {self.url}:\n"
                             + "\n".join(self.process.lines[-30:]))  # fmt: skip

    def stop(self) -> None:
        self.process.stop()


# --- the Python SDK's echo bot ------------------------------------------------------------------


class PythonBot:
    """tests/sdk/python/echo_bot (the SDK's echo template) on ``port``, with ``settings`` in its
    environment (nothing else of botemu's: the trust variables are replaced, not added to)."""

    def __init__(self, port: int, settings: Mapping[str, str]) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/api/messages"
        env = loopback_env(os.environ)
        for name in (*SDK_NAMES, *TRUST_NAMES):
            env.pop(name, None)
        env.update(settings)
        env["PORT"] = str(port)
        env["PYTHONUNBUFFERED"] = "1"
        self.process = Process([str(python_sdk()), str(ECHO_BOT)], env, ECHO_BOT.parent)
        try:
            self.process.wait_for(r"^listening: ", START_TIMEOUT)
        except BaseException:
            self.process.stop()
            raise

    def errors(self, start: int = 0) -> list[str]:
        """What the bot wrote about failures (its on_turn_error and tracebacks)."""
        return [line for line in self.process.since(start)
                if "error" in line.lower() or "Traceback" in line]  # fmt: skip

    def stop(self) -> None:
        self.process.stop()
