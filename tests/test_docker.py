"""Dockerfile, docker-compose.yml and .dockerignore, checked without a Docker engine.

The compose file parses, and everything it names exists: each service's build context and
Dockerfile, the named volumes, the services it depends on. Every command line is a real one:
``botemu`` commands parse with the CLI's own parser, the IVR bot's starts the bot (with
``web.run_app`` replaced) on the certificates ``botemu certs`` writes. The Dockerfile's COPY
sources exist and are not ignored, its health check passes against a running botemu and fails
without one, and docs/ci.md documents every published port and volume.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestServer

from emulator.certs import ensure_certs
from emulator.cli import build_parser
from emulator.cli.options import service_config
from emulator.config import ServiceConfig
from emulator.service import make_app
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
CI_DOC = ROOT / "docs" / "ci.md"
HEALTH_PORT = 9070


# --- reading the files ----------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def services() -> dict[str, dict[str, Any]]:
    found = compose()["services"]
    assert isinstance(found, dict) and found
    return found


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # Docker drops these inside a continued line too
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, rest = whole.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def exec_form(text: str) -> list[str]:
    """A JSON-array command (exec form), which every command here uses."""
    value = json.loads(text)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
    return value


def dockerfile_command(name: str) -> list[str]:
    (args,) = [rest for keyword, rest in instructions() if keyword == name]
    if name == "HEALTHCHECK":
        args = args[args.index("CMD ") + len("CMD ") :]
    return exec_form(args)


def ignored(path: str) -> bool:
    """Whether .dockerignore excludes ``path`` (Go filepath.Match per pattern, as Docker does,
    closely enough for these patterns: ``**/`` matches any leading folders, and a pattern that
    matches a folder excludes what is in it)."""
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not any(p.startswith("!") for p in patterns), "this check knows no exceptions"
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        anywhere = pattern.startswith("**/")
        bare = pattern.removeprefix("**/")
        for prefix in prefixes:
            names = prefix.split("/")
            tails = ["/".join(names[i:]) for i in range(len(names))] if anywhere else [prefix]
            if any(fnmatch.fnmatchcase(tail, bare) and tail.count("/") == bare.count("/")
                   for tail in tails):  # fmt: skip
                return True
    return False


def service_commands() -> list[tuple[str, list[str]]]:
    return [(name, list(s["command"])) for name, s in services().items()] + [
        ("Dockerfile CMD", dockerfile_command("CMD"))
    ]


def botemu_args(command: list[str]) -> argparse.Namespace:
    assert command[0] == "botemu"
    return build_parser().parse_args(command[1:])


# --- docker-compose.yml ---------------------------------------------------------------------------


def test_compose_has_botemu_beside_the_ivr_bot() -> None:
    found = services()
    assert {"botemu", "ivr-bot"} <= set(found)
    serve = found["botemu"]["command"]
    assert serve[:2] == ["botemu", "serve"] and serve[serve.index("--host") + 1] == "0.0.0.0"
    assert found["ivr-bot"]["command"][:2] == ["python", "examples/ivr_bot.py"]


@pytest.mark.parametrize("name", list(services()))
def test_every_build_context_and_dockerfile_exists(name: str) -> None:
    build = services()[name]["build"]
    context, dockerfile = (
        (build, "Dockerfile") if isinstance(build, str)
        else (build["context"], build.get("dockerfile", "Dockerfile"))
    )  # fmt: skip
    assert (COMPOSE.parent / context).is_dir()
    assert (COMPOSE.parent / context / dockerfile).is_file()


def test_every_volume_and_dependency_exists() -> None:
    declared = set(compose().get("volumes") or {})
    used: set[str] = set()
    for name, service in services().items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0] if isinstance(volume, str) else volume["source"]
            if source.startswith((".", "/", "~")):
                assert (COMPOSE.parent / source).exists(), f"{name}: bind mount {source}"
            else:
                assert source in declared, f"{name}: volume {source} is not declared"
                used.add(source)
        for dependency in service.get("depends_on", {}):
            assert dependency in services(), f"{name} depends on an unknown service {dependency}"
    assert used == declared, "a declared volume no service uses"
    assert "certs" in declared


def published_ports() -> list[tuple[str, int, int]]:
    """(service, host port, container port) of every published port."""
    out = []
    for name, service in services().items():
        for mapping in service.get("ports", []):
            *_, host, container = str(mapping).split(":")
            out.append((name, int(host), int(container)))
    return out


def test_ports_are_exposed_and_documented() -> None:
    ports = published_ports()
    assert {(n, c) for n, _, c in ports} == {("botemu", 9070), ("ivr-bot", 8443)}
    exposed = {int(p) for k, rest in instructions() if k == "EXPOSE" for p in rest.split()}
    doc = CI_DOC.read_text(encoding="utf-8")
    for name, host, container in ports:
        assert container in exposed, f"{name}: port {container} is not EXPOSEd"
        assert str(host) in doc, f"docs/ci.md does not document port {host} ({name})"
    for volume in compose()["volumes"]:
        assert f"`{volume}`" in doc, f"docs/ci.md does not document the volume {volume}"


@pytest.mark.parametrize(
    ("name", "command"),
    [pytest.param(n, c, id=n) for n, c in service_commands() if c[0] == "botemu"],
)
def test_botemu_command_lines_parse(name: str, command: list[str]) -> None:
    args = botemu_args(command)
    assert callable(getattr(args, "handler", None)), f"{name}: {shlex.join(command)}"


@pytest.mark.parametrize(
    "command", [c for _, c in service_commands() if c[:3] == ["botemu", "serve", "--host"]]
)
def test_serve_in_a_container_hands_out_host_addresses(command: list[str], tmp_path: Path) -> None:
    """On 0.0.0.0, the placeholders follow the config file the image writes: 127.0.0.1:9070."""
    config = _image_serve_config(tmp_path)
    args = botemu_args([str(config) if a == "/etc/botemu/serve.yaml" else a for a in command])
    service = service_config(args)
    assert (service.host, service.port) == ("0.0.0.0", HEALTH_PORT)
    p = service.placeholders()
    assert p.base_url == f"http://127.0.0.1:{HEALTH_PORT}"
    assert p.token_url.startswith(f"http://127.0.0.1:{HEALTH_PORT}/")


def _image_serve_config(tmp_path: Path) -> Path:
    """The file the Dockerfile writes with printf, written here."""
    (run,) = [rest for k, rest in instructions() if k == "RUN" and "serve.yaml" in rest]
    printf = next(part for part in run.split("&&") if "printf" in part)
    text, target = shlex.split(printf.strip())[1], shlex.split(printf.strip())[-1]
    assert target == "/etc/botemu/serve.yaml"
    path = tmp_path / "serve.yaml"
    path.write_text(text.replace("\\n", "\n"), encoding="utf-8")
    return path


def test_the_ivr_bot_command_starts_the_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run the compose command's bot with its volumes in tmp_path and web.run_app replaced:
    it loads the certificates ``botemu certs --dir /certs`` writes and serves https."""
    command = services()["ivr-bot"]["command"]
    script = ROOT / command[1]
    assert command[0] == "python" and script.is_file()
    certs_command = services()["certs"]["command"]
    volumes = {"/certs": tmp_path / "certs", "/data": tmp_path / "data"}
    ensure_certs(volumes[certs_command[certs_command.index("--dir") + 1]])
    argv = [_in(a, volumes) for a in command[2:]]
    import importlib.util

    spec = importlib.util.spec_from_file_location("ivr_bot_compose", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    served: dict[str, Any] = {}
    monkeypatch.setattr(module.web, "run_app", lambda app, **kw: served.update(kw, app=app))
    try:
        assert module.main(argv) == 0
    finally:
        del sys.modules[spec.name]
    assert (served["host"], served["port"]) == ("0.0.0.0", 8443)
    assert served["ssl_context"] is not None
    assert (tmp_path / "data" / "voicemail").is_dir()


def _in(arg: str, volumes: dict[str, Path]) -> str:
    """A command-line argument with the volumes' mount points moved to their test folders."""
    for mount, path in volumes.items():
        if arg == mount:
            return str(path)
        if arg.startswith(mount + "/"):
            return str(path / arg[len(mount) + 1 :])
    return arg


# --- Dockerfile -----------------------------------------------------------------------------------


def test_dockerfile_base_user_and_install() -> None:
    found = instructions()
    assert found[0] == ("FROM", "python:3.11-slim")
    users = [rest for k, rest in found if k == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert any(k == "RUN" and "pip install ." in rest for k, rest in found)


def test_copy_sources_exist_and_are_not_ignored() -> None:
    copies = [rest.split() for k, rest in instructions() if k == "COPY"]
    assert copies
    sources = [s for parts in copies for s in parts[:-1] if not s.startswith("--")]
    assert {"pyproject.toml", "README.md", "emulator", "examples", "scenarios"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: no such file"
        assert not ignored(source), f"COPY {source}: excluded by .dockerignore"


@pytest.mark.parametrize("path", ["certs/ca.key", ".botemu/transcripts.db", ".git/HEAD",
                                  "transcripts.db", "emulator/__pycache__/cli.cpython-311.pyc",
                                  "examples/bot.key", "examples/ca.pem", "tests/test_cli.py"])  # fmt: skip
def test_secrets_and_caches_stay_out_of_the_image(path: str) -> None:
    assert ignored(path)


@pytest.mark.parametrize("path", ["emulator/cli.py", "emulator/scenario/schema.json",
                                  "examples/ivr_bot.py", "scenarios/examples/main-menu.yaml"])  # fmt: skip
def test_the_package_and_bots_go_into_the_image(path: str) -> None:
    assert not ignored(path)


@pytest.fixture
def emulator_port(tmp_path: Path) -> Iterator[int]:
    """A botemu on a free port, served from a background loop, for the health check."""
    import asyncio
    import threading

    port = free_port()
    loop = asyncio.new_event_loop()
    store = TranscriptStore(tmp_path / "t.db")
    server = TestServer(make_app(ServiceConfig(port=port, certs_dir=tmp_path), store),
                        host="127.0.0.1", port=port)  # fmt: skip
    loop.run_until_complete(server.start_server())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.run_until_complete(server.close())
        loop.close()
        store.close()


def _run_check(command: list[str], port: int, container_port: int) -> int:
    assert command[0] == "python"
    code = command[command.index("-c") + 1]
    assert str(container_port) in code
    return subprocess.run([sys.executable, "-c", code.replace(str(container_port), str(port))],
                          capture_output=True, timeout=30).returncode  # fmt: skip


@pytest.mark.slow
def test_healthcheck_passes_against_botemu_and_fails_without(emulator_port: int) -> None:
    command = dockerfile_command("HEALTHCHECK")
    assert "/_botemu/health" in " ".join(command)
    assert _run_check(command, emulator_port, HEALTH_PORT) == 0
    assert _run_check(command, free_port(), HEALTH_PORT) == 1


@pytest.mark.slow
def test_ivr_bot_healthcheck_connects() -> None:
    check = services()["ivr-bot"]["healthcheck"]["test"]
    assert check[0] == "CMD"
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        assert _run_check(check[1:], listening.getsockname()[1], 8443) == 0
    assert _run_check(check[1:], free_port(), 8443) == 1


def test_ci_doc_shows_a_pipeline_running_botemu_test() -> None:
    doc = CI_DOC.read_text(encoding="utf-8")
    assert "docker compose up" in doc
    commands = [line.strip().removeprefix("- run: ").removeprefix("run: ")
                for line in doc.splitlines() if "botemu test " in line and "--junit" in line]  # fmt: skip
    assert commands, "no botemu test --junit command in docs/ci.md"
    for line in commands:
        words = shlex.split(line[line.index("botemu test") :].split(" #")[0])
        args = botemu_args([w for w in words if w != "\\"])
        assert args.junit is not None and args.paths
