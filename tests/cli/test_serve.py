"""``botemu serve``/``config``/``token``/``chat`` through main(argv), in process."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from emulator.cli import main
from emulator.cli.options import service_config
from emulator.config import Profile
from emulator.service.hosting import banner
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
        # Regression: a RecursionError's traceback; now refused at the 501st bracket, as scanned.
        pytest.param(
            "port: " + "[" * 100_000, ":1:507: not YAML: nested more than 500 levels deep", id="deep"
        ),
        pytest.param(
            "port: " + "[" * 497 + "]" * 497, "not YAML: nested too deeply", id="too-deep-to-compose"
        ),
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


def test_chat_without_a_botemu_or_an_app_id_starts_one_with_an_anonymous_bot(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["chat", "--bot", "http://127.0.0.1:1/api/messages", "--send", "x", "--wait",
                 "1", "--emulator", f"http://127.0.0.1:{free_port()}"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1  # nothing answers at the bot's address
    assert "[CONN-ANONYMOUS-BOT]" in out
    assert "  ! conversationUpdate not delivered to the bot: connection failed" in out
    assert "  ! message not delivered to the bot: connection failed" in out


class EditingBot:
    """Replies, then edits its reply, then deletes it; answers 500 to the conversationUpdate
    (a template bot whose greeting crashed)."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.app.router.add_post("/api/messages", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        activity = await request.json()
        if activity["type"] == "conversationUpdate":
            return web.Response(status=500, text="greeting failed")
        base = f"{activity['serviceUrl']}/v3/conversations/{activity['conversation']['id']}"
        async with aiohttp.ClientSession() as http:
            sent = await http.post(f"{base}/activities", json={"type": "message", "text": "one"})
            reply_id = (await sent.json())["id"]
            await http.put(f"{base}/activities/{reply_id}", json={"type": "message", "text": "two"})
            await http.delete(f"{base}/activities/{reply_id}")
            await http.post(f"{base}/activities/nope", json={"type": "message", "text": "x"})
        return web.Response(status=200)


async def test_chat_shows_every_activity_both_ways_as_it_happens(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Regression: botemu chat showed only the message's status and the stored activities after
    the turn: a 500 on the greeting never showed, an updated reply showed only its last text, and
    a deleted one made chat say there was no reply (exit 1) although the bot had replied."""
    bot_port, emulator_port = free_port(), free_port()
    runner = web.AppRunner(EditingBot().app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        code = await asyncio.to_thread(main, [
            "chat", "--bot", f"http://127.0.0.1:{bot_port}/api/messages", "--send", "hi",
            "--wait", "3", "--emulator", f"http://127.0.0.1:{emulator_port}",
        ])  # fmt: skip
    finally:
        await runner.cleanup()
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert "  ! the bot answered conversationUpdate with HTTP 500: greeting failed" in lines
    assert "bot> one" in lines
    assert any(line.startswith("bot updates ") and line.endswith("> two") for line in lines)
    assert any(line.startswith("bot deletes ") for line in lines)
    assert any(line.startswith("  ! the connector refused the bot (HTTP 404)") for line in lines)


def test_serve_endorsements_from_the_flag_or_the_file(tmp_path: Path) -> None:
    import argparse

    def options(**values: object) -> argparse.Namespace:
        defaults = {"config": None, "host": None, "port": None, "profile": None, "certs": None,
                    "bot_endpoint": None, "bot_app_id": None, "bot_app_password": None}  # fmt: skip
        return argparse.Namespace(**(defaults | values))

    assert service_config(options(endorse=["botemu", "msteams"])).endorsements == (
        "botemu", "msteams",
    )  # fmt: skip
    file = tmp_path / "botemu.yaml"
    file.write_text("endorsements: [botemu]\n", encoding="utf-8")
    assert service_config(options(config=file)).endorsements == ("botemu",)
    assert service_config(options(config=file, endorse=["x"])).endorsements == ("x",)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--endorse", "not a channel!"], "endorse"),
        (["chat", "--bot", "http://127.0.0.1:1/x", "--token-version", "2.0"],
         "--token-version needs --emulator-token"),
    ],
)  # fmt: skip
def test_bad_endorsements_and_token_versions_are_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err.lower() or message in err
    assert len(err.strip().splitlines()) == 1


# --- serve --tls and --real-issuers ---------------------------------------------------------------


def _serve_options(**values: object) -> argparse.Namespace:
    defaults = {"config": None, "host": None, "port": None, "profile": None, "certs": None,
                "bot_endpoint": None, "bot_app_id": None, "bot_app_password": None}  # fmt: skip
    return argparse.Namespace(**(defaults | values))


def test_tls_and_real_issuers_from_the_flags_or_the_file(tmp_path: Path) -> None:
    from emulator.config import REAL_ISSUERS

    config = service_config(_serve_options(tls=True, real_issuers=True))
    assert config.base_url == "https://127.0.0.1:9070"
    p = config.placeholders()
    assert p.base_url == "https://127.0.0.1:9070"
    assert p.token_url.startswith("https://127.0.0.1:9070/_identity/")
    assert (p.connector_issuer, p.emulator_issuer) == (
        REAL_ISSUERS["connector_issuer"], REAL_ISSUERS["emulator_issuer"],
    )  # fmt: skip
    file = tmp_path / "botemu.yaml"
    file.write_text("tls: true\nreal_issuers: false\n", encoding="utf-8")
    config = service_config(_serve_options(config=file))
    assert config.tls and not config.real_issuers
    assert config.placeholders().connector_issuer.startswith("https://127.0.0.1:9070/_identity/")
    plain = service_config(_serve_options())
    assert plain.base_url == "http://127.0.0.1:9070" and not plain.tls


def test_an_override_wins_over_the_real_issuers() -> None:
    from emulator.config import ServiceConfig

    config = ServiceConfig(real_issuers=True, overrides={"connector_issuer": "urn:mine"})
    assert config.placeholders().connector_issuer == "urn:mine"
    assert config.placeholders().emulator_issuer.startswith("https://sts.windows.net/")


def test_tls_that_is_not_a_boolean_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "botemu.yaml"
    path.write_text("tls: maybe\n", encoding="utf-8")
    code = main(["config", "--config", str(path), "--emulator", f"http://127.0.0.1:{free_port()}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tls is true or false" in err and len(err.strip().splitlines()) == 1


def test_banner_prints_the_service_url_that_works_and_the_sdk_settings(tmp_path: Path) -> None:
    from emulator.config import BotRegistration, ServiceConfig

    bot = BotRegistration(APP_ID, "pw", "http://127.0.0.1:3978/api/messages")
    text = banner(ServiceConfig(port=9443, bots=(bot,), tls=True, certs_dir=tmp_path / "c"))
    lines = text.splitlines()
    assert lines[0] == "botemu v3.1 listening on https://127.0.0.1:9443"
    service = next(line for line in lines if "serviceUrl" in line).split()
    assert service[:3] == ["serviceUrl", "(connector)", "https://127.0.0.1:9443"]  # no /v3
    ca = (tmp_path / "c" / "ca.pem").resolve()
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS"):
        assert f"{name}={ca}" in lines
    assert f"MicrosoftAppId={APP_ID}" in lines and "MicrosoftAppPassword=pw" in lines
    assert "ToChannelFromBotLoginUrl=https://127.0.0.1:9443/adfs" in lines
    assert "ToChannelFromBotOAuthScope=api://botemu-connector" in lines
    assert ("ToBotFromChannelTokenIssuer=https://127.0.0.1:9443/_identity/connector-issuer"
            in lines)  # fmt: skip
    plain = banner(ServiceConfig(port=9443, bots=(bot,))).splitlines()
    assert not [line for line in plain if line.startswith(("SSL_CERT_FILE=", "ToChannel"))]
    assert any("botemu serve --tls" in line for line in plain)
    anonymous = BotRegistration("anonymous-bot", "", "http://127.0.0.1:3979/api/messages",
                                anonymous=True)  # fmt: skip
    lines = banner(ServiceConfig(bots=(anonymous,), tls=True)).splitlines()
    assert not [line for line in lines if line.startswith(("BOT_APP_ID=", "MicrosoftAppId="))]
    assert any(line.startswith("# http://127.0.0.1:3979/api/messages: anonymous") for line in lines)


async def test_serve_tls_serves_everything_over_https_and_its_clients_trust_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One botemu with --tls: health, the identity service's MSAL discovery document and token
    endpoint, and the control clients of emulator.client and calling.tokens, which trust
    ``certs/ca.pem`` of the working directory (and only then)."""
    import ssl

    from emulator.calling.tokens import _config_of
    from emulator.client import post_control, running
    from emulator.config import BotRegistration, ServiceConfig
    from emulator.errors import BotemuError
    from emulator.service.hosting import serving
    from emulator.transcripts.store import TranscriptStore

    port = free_port()
    bot = BotRegistration(APP_ID, "pw", "http://127.0.0.1:1/api/messages")
    config = ServiceConfig(port=port, bots=(bot,), tls=True, certs_dir=tmp_path / "certs")
    url = f"https://127.0.0.1:{port}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with TranscriptStore(tmp_path / "t.db") as store:
        async with serving(config, store):
            trusted = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.pem"))
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{url}/_botemu/health", ssl=trusted) as response:
                    assert (await response.json())["status"] == "ok"
                async with http.get(f"{url}/adfs/.well-known/openid-configuration",
                                    ssl=trusted) as response:  # fmt: skip
                    document = await response.json()
                p = config.placeholders()
                assert document["token_endpoint"] == p.token_url.replace("http:", "https:")
                assert document["token_endpoint"].startswith(f"{url}/_identity/")
                form = {"grant_type": "client_credentials", "client_id": APP_ID,
                        "client_secret": "pw", "scope": p.connector_scope}  # fmt: skip
                async with http.post(document["token_endpoint"], data=form,
                                     ssl=trusted) as response:  # fmt: skip
                    assert response.status == 200
                    assert (await response.json())["token_type"] == "Bearer"
                monkeypatch.chdir(tmp_path)  # certs/ca.pem is here
                assert await running(url)
                assert (await _config_of(http, url) or {}).get("base_url") == url
                answer = await post_control(url, "/_botemu/token", {"app_id": APP_ID}, 5.0)
                assert answer["token_type"] == "Bearer"
                monkeypatch.chdir(elsewhere)  # nothing to trust botemu's CA by
                with pytest.raises(BotemuError, match=r"TLS with .* failed"):
                    await running(url)


def test_config_port_shows_the_botemu_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``botemu config --port N`` silently showed the settings of a botemu running on
    the default port. It shows the botemu at the address asked for, or what the options give,
    and says which on stderr."""
    from emulator.config import ServiceConfig
    from emulator.pytest_plugin import BotemuServer

    server = BotemuServer(ServiceConfig(port=0, certs_dir=tmp_path), tmp_path / "s.db")
    server.start()
    try:
        running_port, other = server.config.port, free_port()
        assert main(["config", "--json", "--port", str(running_port)]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["base_url"] == f"http://127.0.0.1:{running_port}"
        assert err == f"botemu config: the settings of the running botemu at {server.url}\n"
        assert main(["config", "--json", "--port", str(other)]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["base_url"] == f"http://127.0.0.1:{other}"
        assert f"(none runs at http://127.0.0.1:{other})" in err
        assert main(["config", "--port", str(running_port), "--profile", "v3.0"]) == 0
        out, err = capsys.readouterr()
        assert "BOTEMU_CONNECTOR_SCOPE=api://botemu-graph/.default" in out  # not the running v3.1
        assert err == "botemu config: the settings of botemu serve --profile\n"
    finally:
        server.stop()
