"""``botemu call`` and ``botemu test`` against a calling bot that checks the Bearer token the way
the SDKs do: the reference IVR bot started with an app id, validating with PyJWT against the JWKS
that a running botemu's OpenID metadata names (field notes, Calling: HTTP, last point)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from emulator.cli import main
from emulator.config import BotRegistration, ServiceConfig
from emulator.pytest_plugin import BotemuServer
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, ivr_bot

ROOT = Path(__file__).resolve().parent.parent.parent
BOT = ROOT / "examples" / "ivr_bot.py"
SCENARIOS = ROOT / "scenarios" / "examples"
APP_ID = "5a1d8c2e-3f4b-4e6a-9c7d-1b2e3f4a5b6c"


@dataclass(frozen=True)
class Setup:
    emulator: str
    bot_url: str
    certs: str
    """The botemu's certificates directory: its control secret (``--certs``)."""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """A botemu (with the bot registered by its calling endpoint) and the IVR bot checking
    tokens against it."""
    tmp = tmp_path_factory.mktemp("tokens")
    bot_port = free_port()
    bot_url = f"http://127.0.0.1:{bot_port}/api/calls"
    config = ServiceConfig(port=0, certs_dir=tmp / "certs",
                           bots=(BotRegistration(APP_ID, "pw", calling_endpoint=bot_url),))  # fmt: skip
    server = BotemuServer(config, tmp / "server.db")
    server.start()
    settings = server.placeholders
    try:
        with ivr_bot("--app-id", APP_ID, "--openid-metadata-url", settings.openid_metadata_url,
                     "--connector-issuer", settings.connector_issuer, port=bot_port):  # fmt: skip
            yield Setup(server.url, bot_url, str(config.certs_dir))
    finally:
        server.stop()


def test_call_with_no_app_id_takes_the_registered_bots(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    code = main(["call", "--bot", setup.bot_url, "--emulator", setup.emulator, "--certs", setup.certs,
                 "--caller", "press 1; press 1234#", "--db", str(db)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert f"Bearer tokens from botemu at {setup.emulator}" in captured.err
    assert f"requests carry a Bearer token for app id {APP_ID}" in captured.out
    assert captured.out.splitlines()[-1].startswith("bot hung up · 3 workflows")
    with TranscriptStore(db) as store:
        [call] = store.calls()
        requests = [e for e in store.events(call.id) if e.kind == "http.request"]
    assert len(requests) == 3  # the Conversation and two results (the third Workflow hangs up)
    assert all(str(e.payload["headers"]["Authorization"]).startswith("Bearer ey")  # type: ignore[index]
               for e in requests)  # fmt: skip


def test_a_call_without_a_token_is_refused_and_says_why(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["call", "--bot", setup.bot_url, "--no-token", "--caller", "hangup",
                 "--db", str(tmp_path / "t.db")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "the bot answered HTTP 403" in out and "no Authorization header was sent" in out


def test_a_token_for_another_app_id_is_refused(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["call", "--bot", setup.bot_url, "--emulator", setup.emulator, "--certs", setup.certs, "--app-id",
                 "someone-else", "--caller", "hangup", "--db", str(tmp_path / "t.db")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "a Bearer token for app id someone-else" in out


def test_a_scenarios_faults_and_platform_settings_apply_to_botemu_call(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "retry.yaml"
    scenario.write_text(
        "name: a retried result, still authenticated\n"
        "caller: [{press: '1'}, hangup]\n"
        f"platform: {{app_id: {APP_ID}, legacy_validation_outcome: true}}\n"
        "faults: {fail_callback: 1}\n",
        encoding="utf-8",
    )
    db = tmp_path / "t.db"
    code = main(["call", "--bot", setup.bot_url, "--emulator", setup.emulator, "--certs", setup.certs,
                 "--scenario", str(scenario), "--db", str(db), "--json"])  # fmt: skip
    transcript = json.loads(capsys.readouterr().out)
    assert code == 0
    summaries = [str(e["payload"].get("summary", "")) for e in transcript["events"]]
    assert any(s.startswith("faults: ") for s in summaries)
    retried = [e for e in transcript["events"] if e["kind"] == "http.request"
               and e["payload"].get("attempt") == 2]  # fmt: skip
    assert retried and "Authorization" in retried[0]["payload"]["headers"]


def test_botemu_test_sends_the_token(
    setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["test", str(SCENARIOS / "main-menu.yaml"), str(SCENARIOS / "voicemail.yaml"),
                 "--bot", setup.bot_url, "--emulator", setup.emulator, "--certs", setup.certs, "--app-id", APP_ID,
                 "--db", str(tmp_path / "t.db")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    refused = main(["test", str(SCENARIOS / "main-menu.yaml"), "--bot", setup.bot_url,
                    "--no-token", "--db", str(tmp_path / "t.db")])  # fmt: skip
    assert refused == 1
    capsys.readouterr()


def load(
    setup: Setup, tmp_path: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "load", "--bot", setup.bot_url, "--app-id", APP_ID,
         "--users", "2", "--duration", "1s", "--pace", "0", "--caller", "press 1; press 1234#",
         "--no-progress", "--db", str(tmp_path / "t.db"), "--json", str(summary), *extra],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    return done, json.loads(summary.read_text()) if summary.exists() else {}


@pytest.mark.slow
def test_load_calls_carry_the_running_botemus_token_and_the_bot_accepts_them(
    setup: Setup, tmp_path: Path
) -> None:
    done, summary = load(setup, tmp_path, "--emulator", setup.emulator, "--certs", setup.certs,
                         "--keep", "all", "--fail-on", "errors<0.1%")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary["total"]["count"] > 10 and summary["total"]["failures"] == 0
    with TranscriptStore(tmp_path / "t.db") as store:
        call = store.calls()[0]
        requests = [e for e in store.events(call.id) if e.kind == "http.request"]
    assert requests and all(
        str(e.payload["headers"]["Authorization"]).startswith("Bearer ey")  # type: ignore[index]
        for e in requests
    )


@pytest.mark.slow
def test_load_calls_signed_with_other_keys_are_refused_and_fail_the_run(
    setup: Setup, tmp_path: Path
) -> None:
    done, summary = load(setup, tmp_path, "--certs", str(tmp_path / "other-keys"),
                         "--fail-on", "errors<0.1%")  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert summary["errors_by_rule"] and summary["total"]["failures"] > 0
    assert summary["calls"]["failed"] > 0
