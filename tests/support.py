"""Helpers shared by the tests: free loopback ports and the example bots loaded by path."""

from __future__ import annotations

import functools
import importlib.util
import os
import random
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from aiohttp import web

from emulator.config import ServiceConfig
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore

if TYPE_CHECKING:
    import xmlschema

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_issued: set[int] = set()
_pick = random.Random()


def _worker() -> tuple[int, int]:
    """This pytest-xdist worker's number and the number of workers ((0, 1) without xdist)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if name.startswith("gw") and name[2:].isdigit() and count.isdigit() and int(count) > 0:
        # a worker started again after one crashed is numbered on (gw4 of 4): it shares the
        # ports of the one its number falls on
        return int(name[2:]) % int(count), int(count)
    return 0, 1


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel hands out for binds to port 0 and for outgoing connections."""
    try:
        low, high = (int(part) for part in _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    return low, high


def free_port() -> int:
    """A loopback port nothing listens on right now, for a server a test starts later.

    The port comes from outside the kernel's ephemeral range and is never handed out twice in
    a run: a port freshly freed by a bind to port 0 could be taken by any outgoing connection
    (the suite opens thousands) or port-0 server before the test binds it again, which made
    binds fail with "address already in use" now and then. Each pytest-xdist worker has ports
    of its own (the port's remainder by the number of workers is the worker's number): two
    workers once drew the same port, the other's bot (``replay_bots.py``'s ``swapped``, sales
    on 2) took it first, and a live call of ``tests/calling/test_live.py`` went to it, since
    ``bot_process`` waits for the port to take connections, whoever listens.
    """
    low, high = ephemeral_range()
    whole = range(20000, low) if low > 21000 else range(high + 1, 65536)
    worker, workers = _worker()
    pool = range(whole.start + (worker - whole.start) % workers, whole.stop, workers)
    for _ in range(500):
        port = _pick.choice(pool)
        if port in _issued:
            continue
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _issued.add(port)
        return port
    raise RuntimeError(f"no free loopback port in {whole.start}-{whole.stop - 1}")


def control_headers(app: web.Application) -> dict[str, str]:
    """The header botemu's control API needs (emulator/guard.py), for a test client of
    ``app`` (a ``make_app`` app): this run's secret. (Control POSTs are JSON too: ``json=``
    sets that; a session default Content-Type would override form posts.)"""
    from emulator.guard import GUARD, SECRET_HEADER

    secret = app[GUARD].secret
    assert secret is not None
    return {SECRET_HEADER: secret}


async def post_control(config: ServiceConfig, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST ``body`` to the control route ``path`` of the running botemu of ``config``, with its
    secret: (status, the JSON answer on 200, else the text)."""
    import json

    import aiohttp

    from emulator.guard import control_headers as secret_headers

    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{config.base_url}{path}", json=body,
                  headers=secret_headers(config.certs_dir)) as response,
    ):  # fmt: skip
        text = await response.text()
        return response.status, json.loads(text) if response.status == 200 else text


def load_module(path: Path, name: str) -> ModuleType:
    """A Python file imported by path under ``name`` (the example bots are scripts, not
    modules of the package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


class LoopbackServers:
    """Apps served on real loopback ports for one test, stopped (in reverse order) after it.
    Test modules add the servers they need (a botemu with their bots, a skill...)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self._runners: list[web.AppRunner] = []
        self._stores: list[TranscriptStore] = []

    async def serve(self, app: web.Application, port: int) -> str:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return f"http://127.0.0.1:{port}"

    async def serve_emulator(self, config: ServiceConfig) -> ServiceConfig:
        """A botemu with ``config``, its transcripts in a store of its own."""
        store = TranscriptStore(self.tmp_path / f"t-{config.port}.db")
        self._stores.append(store)
        await self.serve(make_app(config, store), config.port)
        return config

    async def close(self) -> None:
        for runner in reversed(self._runners):
            await runner.cleanup()
        for store in self._stores:
            store.close()


@asynccontextmanager
async def cookie_bot(
    path: str, answer: Callable[[web.Request, Any], web.Response]
) -> AsyncIterator[tuple[int, list[str | None]]]:
    """A bot serving ``POST path`` on ``localhost`` (a host name: aiohttp's cookie jar takes no
    cookie from an IP address), a free port: each answer (``answer(request, parsed JSON)``) sets a
    cookie, and the ``Cookie`` header of each request is kept. (The port, those headers.)"""
    cookies: list[str | None] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        cookies.append(request.headers.get("Cookie"))
        response = answer(request, body)
        response.set_cookie("session", "abc123")
        return response

    app = web.Application()
    app.router.add_post(path, handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()  # one port for every address localhost has (port 0: one each)
    await web.TCPSite(runner, "localhost", port).start()
    try:
        yield port, cookies
    finally:
        await runner.cleanup()


@contextmanager
def bot_process(command: list[str], port: int, what: str) -> Iterator[str]:
    """``command`` (a bot listening on ``port``) in its own process, from the project's root,
    until the context ends; its calling URL once the port takes connections (30 s at most)."""
    import subprocess
    import time

    root = Path(__file__).resolve().parent.parent
    try:  # something else answers there already: its answers would be taken for the bot's
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        pass
    else:
        raise RuntimeError(f"port {port} for {what} is taken")
    proc = subprocess.Popen([sys.executable, *command], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:  # it could not listen (the port taken since): never
                raise RuntimeError(f"{what} exited ({proc.returncode}) before it listened")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{what} did not start")
        yield f"http://127.0.0.1:{port}/api/calls"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def ivr_bot(*args: str, port: int | None = None) -> Iterator[str]:
    """The reference IVR bot (``examples/ivr_bot.py``) in its own process on ``port`` (a free
    one by default), with ``args``; its calling URL."""
    port = port or free_port()
    command = ["examples/ivr_bot.py", "--port", str(port), *args]
    with bot_process(command, port, "the reference bot") as url:
        yield url


@contextmanager
def served_bot(module: str, kind: str) -> Iterator[str]:
    """A bot of ``tests/bots/`` (``module``: ``replay_bots``, ``fuzz_bots``...) of ``kind`` in its
    own process; its calling URL."""
    port = free_port()
    command = ["-m", f"tests.bots.{module}", kind, "--port", str(port)]
    with bot_process(command, port, f"the {kind} bot of tests/bots/{module}.py") as url:
        yield url


MEASURE = """
import json, resource, subprocess, sys
limit = int(sys.argv[1])
def bounded():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
done = subprocess.run(sys.argv[3:], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                      preexec_fn=bounded, timeout=float(sys.argv[2]), errors="replace")
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
json.dump({"code": done.returncode, "out": done.stdout, "err": done.stderr, "peak": peak},
          sys.stdout)
"""
"""Run a command from a small fresh interpreter and report its peak resident size: the only
child that interpreter ever waits for (forked from it, not from the large test process)."""


def run_python(code: str, timeout: float = 60) -> str:
    """What ``code`` prints, run by a fresh interpreter with this repository on its path (a
    module's import-time state, or Locust's monkey-patching, kept out of the test process);
    fails the test when the code does."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def run_measured(
    command: list[str], *, cwd: Path, timeout: float, address_space: int = 0
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``command`` (stdin closed; at most ``address_space`` bytes of address space when not
    0): its result, and the peak resident size of that process alone, in bytes. (Measured from
    the test process, ``RUSAGE_CHILDREN`` is the largest child it ever waited for, a mypy run of
    another test on the same worker, and a child forked from it starts with its size.)"""
    import json

    wrapper = [sys.executable, "-c", MEASURE, str(address_space), str(timeout), *command]
    done = subprocess.run(wrapper, cwd=cwd, capture_output=True, text=True, timeout=timeout + 30)
    if done.returncode != 0:
        raise RuntimeError(f"the measuring process failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    result = subprocess.CompletedProcess(command, report["code"], report["out"], report["err"])
    return result, int(report["peak"])


@functools.cache
def junit_schema() -> xmlschema.XMLSchema:
    """The JUnit XML schema of ``tests/scenario/junit.xsd``, built once a process when a test
    first needs it (building it takes about a quarter of a second: not at collection, in every
    worker)."""
    import xmlschema

    return xmlschema.XMLSchema(Path(__file__).parent / "scenario" / "junit.xsd")
