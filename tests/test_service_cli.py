"""``botemu serve``/``config``/``token``/``chat`` through main(argv), in process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from emulator.cli import main
from emulator.config import Profile
from emulator.service_cli import banner, service_config
from tests.support import free_port

APP_ID = "11111111-2222-3333-4444-555555555555"


def test_config_file_and_options(tmp_path: Path) -> None:
    path = tmp_path / "botemu.yaml"
    path.write_text(
        "port: 9999\nprofile: v3.0\nbots:\n"
        f"  - app_id: {APP_ID}\n    app_password: pw\n    endpoint: http://127.0.0.1:3978/api/messages\n"
        "overrides:\n  v3.0.token_url: http://127.0.0.1:9999/custom/token\n"
    )
    import argparse

    args = argparse.Namespace(config=path, host=None, port=None, profile=None, certs=None,
                              bot_app_id=None, bot_app_password=None, bot_endpoint=None)  # fmt: skip
    config = service_config(args)
    assert (config.port, config.profile) == (9999, Profile.V30)
    assert config.bots[0].endpoint == "http://127.0.0.1:3978/api/messages"
    assert config.placeholders().token_url == "http://127.0.0.1:9999/custom/token"
    text = banner(config)
    assert "BOTEMU_TOKEN_URL=http://127.0.0.1:9999/custom/token" in text
    assert f"BOT_APP_ID={APP_ID}" in text and "BOTEMU_PROFILE=v3.0" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("port: [\n", "not YAML", id="yaml"),
        pytest.param("- a\n", "expected a mapping", id="list"),
        pytest.param("prot: 1\n", "unknown setting 'prot'", id="unknown"),
        pytest.param("bots: [{name: x}]\n", "bots[0]: a bot is a mapping", id="bot"),
        pytest.param("profile: v9\n", "bad configuration", id="profile"),
    ],
)
def test_bad_config_files_are_one_line_exit_2(
    content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "botemu.yaml"
    path.write_text(content)
    code = main(["config", "--config", str(path), "--emulator", f"http://127.0.0.1:{free_port()}"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_config_without_a_running_emulator_prints_what_the_options_give(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()
    code = main(["config", "--json", "--port", str(port), "--profile", "v3.0",
                 "--emulator", f"http://127.0.0.1:{port}"])  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["base_url"] == f"http://127.0.0.1:{port}"
    assert document["connector_scope"] == "api://botemu-graph/.default"


def test_token_needs_a_running_emulator(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["token", "--app-id", APP_ID, "--emulator", f"http://127.0.0.1:{free_port()}"])
    assert code == 2
    assert "no botemu answers" in capsys.readouterr().err


async def test_chat_send_starts_an_emulator_and_exits_1_when_no_reply_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    received: list[dict[str, object]] = []

    async def silent(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(status=200)  # takes the message, never replies

    app = web.Application()
    app.router.add_post("/api/messages", silent)
    runner = web.AppRunner(app)
    await runner.setup()
    bot_port, port = free_port(), free_port()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        code = await asyncio.to_thread(main, [
            "chat", "--bot", f"http://127.0.0.1:{bot_port}/api/messages", "--app-id", APP_ID,
            "--app-password", "pw", "--emulator", f"http://127.0.0.1:{port}", "--send", "hi",
            "--wait", "0.5",
        ])  # fmt: skip
    finally:
        await runner.cleanup()
    assert code == 1
    assert [a["type"] for a in received] == ["conversationUpdate", "message"]
    assert received[1]["text"] == "hi"
    assert received[1]["serviceUrl"] == f"http://127.0.0.1:{port}"


def test_chat_with_an_unregistered_bot_at_a_running_emulator_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["chat", "--bot", "http://127.0.0.1:1/api/messages", "--send", "x",
                 "--emulator", f"http://127.0.0.1:{free_port()}"])  # fmt: skip
    assert code == 2
    assert "give --app-id" in capsys.readouterr().err
