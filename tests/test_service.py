"""A running botemu: the control API, and the reference echo bot chatting through it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import PLACEHOLDER_NAMES, BotRegistration, Profile, ServiceConfig
from emulator.service import EMULATOR, make_app
from emulator.transcripts.store import TranscriptStore
from tests.support import control_headers, free_port, load_module

ROOT = Path(__file__).resolve().parent.parent
APP_ID = "11111111-2222-3333-4444-555555555555"
OTHER = "99999999-2222-3333-4444-555555555555"


def load_echo_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "echo_bot.py", "echo_bot_svc")


class Running:
    """botemu on a real port, with the echo bot registered and running beside it."""

    def __init__(self, emulator: TestClient, bot_url: str, config: ServiceConfig) -> None:
        self.emulator = emulator
        self.bot_url = bot_url
        self.config = config


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    port, bot_port = free_port(), free_port()
    bot_url = f"http://127.0.0.1:{bot_port}/api/messages"
    config = ServiceConfig(
        port=port,
        certs_dir=tmp_path / "certs",
        bots=(BotRegistration(APP_ID, "s3cret", bot_url), BotRegistration(OTHER, "other", None)),
    )
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    emulator = TestClient(
        TestServer(app, host="127.0.0.1", port=port), headers=control_headers(app)
    )  # the control API's secret
    await emulator.start_server()
    p = config.placeholders()
    echo = load_echo_bot()
    settings = echo.Settings(
        app_id=APP_ID, app_password="s3cret", token_url=p.token_url,
        connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer,
    )  # fmt: skip
    runner = web.AppRunner(echo.make_app(settings))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        yield Running(emulator, bot_url, config)
    finally:
        await runner.cleanup()
        await emulator.close()
        store.close()


async def test_health_and_config(running: Running) -> None:
    health = await running.emulator.get("/_botemu/health")
    assert (await health.json())["status"] == "ok"
    config = await (await running.emulator.get("/_botemu/config")).json()
    assert set(config) == set(PLACEHOLDER_NAMES) | {"bots", "directline"}
    # this client holds the control secret: the passwords and the Direct Line secrets are told
    directline = config.pop("directline")  # its secrets: tests/channels/test_directline.py
    assert directline["domain"] == f"{running.config.base_url}/v3/directline"
    assert config == running.config.placeholders().to_json() | {
        "bots": [
            {"app_id": APP_ID, "endpoint": running.bot_url, "calling_endpoint": None,
             "name": None, "app_password": "s3cret", "anonymous": False},
            {"app_id": OTHER, "endpoint": None, "calling_endpoint": None, "name": None,
             "app_password": "other", "anonymous": False},
        ]
    }


async def test_chat_through_the_connector_with_the_echo_bot(running: Running) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    assert sent["status"] == 200
    page = await (await running.emulator.get(
        f"/_botemu/conversations/{sent['conversation_id']}/activities"
    )).json()  # fmt: skip
    texts = [a.get("text") for a in page["activities"] if a["from"].get("role") != "user"]
    assert texts == ["Welcome, User! Say something and I will echo it.", "echo: hello"]
    again = await (await running.emulator.post(
        "/_botemu/chat",
        json={"app_id": APP_ID, "text": "twice", "conversation_id": sent["conversation_id"]},
    )).json()  # fmt: skip
    assert again["conversation_id"] == sent["conversation_id"]


async def test_emulator_path_tokens_are_accepted_too(running: Running) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hi", "token": "emulator"}
    )).json()  # fmt: skip
    assert sent["status"] == 200


async def test_a_token_of_another_bot_cannot_touch_the_conversation(running: Running) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    token = await (await running.emulator.post("/_botemu/token", json={"app_id": OTHER})).json()
    other = {"Authorization": f"Bearer {token['access_token']}"}
    response = await running.emulator.post(
        f"/v3/conversations/{sent['conversation_id']}/activities",
        json={"type": "message", "text": "not yours"}, headers=other,
    )  # fmt: skip
    assert response.status == 403
    body = await response.json()
    assert set(body["error"]) == {"code", "message"}


async def test_connector_refuses_a_missing_token(running: Running) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    response = await running.emulator.post(
        f"/v3/conversations/{sent['conversation_id']}/activities", json={"type": "message"}
    )
    assert response.status == 401


async def test_tokens_sent_to_the_bot_are_signed_by_the_published_keys(running: Running) -> None:
    emulator = running.emulator.server.app[EMULATOR]
    p = running.config.placeholders()
    token = emulator.tokens.token(APP_ID, service_url=p.base_url)
    jwks = await (await running.emulator.get("/_identity/keys")).json()
    key = jwt.PyJWK(jwks["keys"][0])
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=APP_ID,
                        issuer=p.connector_issuer)  # fmt: skip
    assert claims["serviceurl"] == p.base_url
    assert emulator.tokens.token(APP_ID, service_url=p.base_url) == token  # cached, not re-signed


async def test_key_rotation_keeps_the_old_key_published(running: Running) -> None:
    before = await (await running.emulator.get("/_identity/keys")).json()
    rotated = await (await running.emulator.post("/_botemu/keys/rotate", json={})).json()
    after = await (await running.emulator.get("/_identity/keys")).json()
    assert len(after["keys"]) == len(before["keys"]) + 1
    assert rotated["kid"] in {k["kid"] for k in after["keys"]}


async def test_control_api_bad_input(running: Running) -> None:
    assert (
        await running.emulator.post(
            "/_botemu/chat", data=b"not json", headers={"Content-Type": "application/json"}
        )
    ).status == 400
    assert (await running.emulator.post("/_botemu/chat", json={"text": "x"})).status == 400
    unknown = await running.emulator.post("/_botemu/token", json={"app_id": "nobody"})
    assert unknown.status == 404
    assert (await running.emulator.get("/_botemu/conversations/nope/activities")).status == 404


@pytest.mark.slow
def test_serve_answers_health_within_a_second_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "serve", "--port", str(port), "--certs",
         str(tmp_path / "certs"), "--db", str(tmp_path / "t.db"), "--app-id", APP_ID,
         "--app-password", "pw", "--bot-endpoint", "http://127.0.0.1:1/api/messages"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=os.environ | {"PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        banner = [proc.stdout.readline()]  # printed once the address is bound
        assert banner[0].startswith("botemu v3.1 listening on")
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
            s.sendall(b"GET /_botemu/health HTTP/1.0\r\n\r\n")
            answer = s.recv(4096)
        assert b"200 OK" in answer and time.monotonic() - started < 1.0
        while not banner[-1].startswith("Ctrl-C stops."):
            banner.append(proc.stdout.readline())
            assert banner[-1], "the banner ended early"
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
        out = "".join(banner) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, err
    assert "BOTEMU_TOKEN_URL=" in out and "botemu: stopping" in out
    config = subprocess.run(
        [sys.executable, "-m", "emulator", "config", "--json", "--port", str(port),
         "--emulator", f"http://127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert config.returncode == 0  # no emulator running any more: computed from the options
    assert json.loads(config.stdout)["base_url"] == f"http://127.0.0.1:{port}"


async def test_the_connector_accepts_tokens_of_either_profile(running: Running) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    for profile in ("v3.0", "v3.1"):
        p = running.config.placeholders(Profile(profile))
        form = {"grant_type": "client_credentials", "client_id": APP_ID,
                "client_secret": "s3cret", "scope": p.connector_scope}  # fmt: skip
        path = urlsplit(p.token_url).path
        token = await (await running.emulator.post(path, data=form)).json()
        response = await running.emulator.post(
            f"/v3/conversations/{sent['conversation_id']}/activities",
            json={"type": "message", "text": f"from {profile}"},
            headers={"Authorization": f"Bearer {token['access_token']}"},
        )
        assert response.status in (200, 201), await response.text()


def _forge(header: dict[str, object], claims: dict[str, object], sign: object) -> str:
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    if sign is None:
        signature = b""
    else:
        assert isinstance(sign, bytes)
        signature = hmac.new(sign, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


async def test_the_connector_rejects_forged_tokens(running: Running, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    from emulator.identity.keys import KeyStore
    from emulator.identity.tokens import mint

    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    url = f"/v3/conversations/{sent['conversation_id']}/activities"
    keys = running.emulator.server.app[EMULATOR].identity.keys
    p = running.config.placeholders()
    now = int(time.time())
    good = {"iss": p.emulator_issuer, "aud": p.connector_audience, "appid": APP_ID,
            "ver": "1.0", "iat": now, "nbf": now, "exp": now + 3600}  # fmt: skip
    current = keys.current()
    public_pem = current.public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    stranger = KeyStore(tmp_path / "stranger")
    cases = {
        "valid": mint(keys, good, now=now),
        "alg none": _forge({"alg": "none", "typ": "JWT", "kid": current.kid}, good, None),
        "HS256 with the public key": _forge(
            {"alg": "HS256", "typ": "JWT", "kid": current.kid}, good, public_pem
        ),
        "unknown kid": mint(stranger, good, now=now),
        "nbf in the future": mint(keys, good | {"nbf": now + 3600}, now=now),
        "expired": mint(keys, good | {"exp": now - 400, "nbf": now - 4000}, now=now),
        "wrong issuer": mint(keys, good | {"iss": p.connector_issuer}, now=now),
        "wrong audience": mint(keys, good | {"aud": APP_ID}, now=now),
    }
    statuses = {}
    for name, token in cases.items():
        response = await running.emulator.post(
            url,
            json={"type": "message", "text": name},
            headers={"Authorization": f"Bearer {token}"},
        )
        statuses[name] = response.status
    assert statuses.pop("valid") in (200, 201)
    assert statuses == dict.fromkeys(statuses, 401)


async def test_any_activity_type_reaches_the_bot_and_the_invoke_answer_is_recorded(
    running: Running,
) -> None:
    sent = await (await running.emulator.post(
        "/_botemu/chat", json={"app_id": APP_ID, "text": "hello"}
    )).json()  # fmt: skip
    conversation = sent["conversation_id"]
    for activity in (
        {"type": "event", "name": "tokens/response", "value": {"a": 1}},
        {"type": "invoke", "name": "adaptiveCard/action", "value": {"b": 2}},
        {"type": "typing"},
        {"type": "endOfConversation", "code": "completedSuccessfully"},
    ):
        answer = await (await running.emulator.post("/_botemu/chat", json={
            "app_id": APP_ID, "conversation_id": conversation, "activity": activity,
        })).json()  # fmt: skip
        assert answer["status"] == 200, activity
    store = running.emulator.server.app[EMULATOR].store
    responses = [e for e in store.events(conversation) if e.kind == "http.response"
                 and "← bot" in str(e.payload.get("summary"))]  # fmt: skip
    assert len(responses) >= 6  # conversationUpdate, message, event, invoke, typing, end


@pytest.mark.parametrize("path", ["token", "chat", "probe/auth", "manifest/check"])
async def test_a_deeply_nested_json_body_is_a_bad_request_not_a_crash(
    tmp_path: Path, path: str
) -> None:
    # 10^5 nested arrays: json.loads raises RecursionError in service._body (it answered 500).
    config = ServiceConfig(port=free_port(), certs_dir=tmp_path / "certs")
    app = make_app(config, TranscriptStore(tmp_path / "t.db"))
    client = TestClient(TestServer(app, host="127.0.0.1", port=config.port),
                        headers=control_headers(app))  # fmt: skip
    await client.start_server()
    try:
        body = b"[" * 100_000 + b"]" * 100_000
        response = await client.post(f"/_botemu/{path}", data=body,
                                      headers={"Content-Type": "application/json"})  # fmt: skip
        assert response.status == 400
        assert "nested too deeply" in await response.text()
    finally:
        await client.close()
