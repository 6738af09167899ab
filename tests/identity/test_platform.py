"""The platform's well-known hosts (identity/wellknown.py) and their listener (identity/platform.py):
the documents and tokens an SDK fetches from the platform's fixed addresses, answered by botemu
with its own keys, reached the ways the SDKs' runtimes allow: a proxy variable (Python's
requests and urllib, unchanged) and a node preload (node's own https, unchanged). Never an open
proxy."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import BotRegistration, ServiceConfig
from emulator.identity.platform import (
    MAX_HEAD,
    PRELOAD,
    PlatformListener,
    trust_bundle,
)
from emulator.identity.routes import IdentityService
from emulator.identity.tokens import Expectation, validate
from emulator.identity.wellknown import PLATFORM_AUDIENCE, PLATFORM_SCOPE, wellknown_app

APP = "3c9a7e52-1f4b-4d8e-9a6c-5b2d7e8f9a10"
SECRET = "s3cret"
ENTRA = "login.microsoftonline.com"


@pytest.fixture
def service(tmp_path: Path) -> IdentityService:
    config = ServiceConfig(certs_dir=tmp_path / "certs",
                           bots=(BotRegistration(APP, SECRET, "http://127.0.0.1:1/api/messages"),))  # fmt: skip
    return IdentityService.from_config(config)


Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client(service: IdentityService) -> AsyncIterator[tuple[Client, list[Any]]]:
    seen: list[Any] = []
    app = wellknown_app(service, lambda request, status, body: seen.append((request.path, status)))
    async with TestClient(TestServer(app)) as c:
        yield c, seen


async def test_the_key_addresses_the_sdks_hard_code_serve_botemus_keys(
    client: tuple[Client, list[Any]], service: IdentityService
) -> None:
    c, seen = client
    kid = service.keys.current().kid
    for host, path in (("login.botframework.com", "/v1/.well-known/keys"),
                       (ENTRA, "/common/discovery/v2.0/keys"),
                       (ENTRA, "/5a1b2c3d-0000-4000-8000-000000000001/discovery/keys")):  # fmt: skip
        response = await c.get(path, headers={"Host": host})
        assert response.status == 200, (host, path)
        assert [k["kid"] for k in (await response.json())["keys"]] == [kid]
    metadata = await (await c.get("/v1/.well-known/openidconfiguration",
                                  headers={"Host": "login.botframework.com"})).json()  # fmt: skip
    assert metadata["jwks_uri"] == "https://login.botframework.com/v1/.well-known/keys"
    assert len(seen) == 4  # every exchange is recorded


async def test_tenant_metadata_and_instance_discovery_as_msal_reads_them(
    client: tuple[Client, list[Any]],
) -> None:
    c, _ = client
    tenant = "botframework.com"
    v2 = await (await c.get(f"/{tenant}/v2.0/.well-known/openid-configuration",
                            headers={"Host": ENTRA})).json()  # fmt: skip
    assert v2["token_endpoint"] == f"https://{ENTRA}/{tenant}/oauth2/v2.0/token"
    assert v2["issuer"] == f"https://{ENTRA}/{tenant}/v2.0"
    found = await c.get("/common/discovery/instance", params={
        "api-version": "1.1", "authorization_endpoint": "https://127.0.0.1:9070/adfs/oauth2/v2.0/authorize"},
        headers={"Host": ENTRA})  # fmt: skip
    body = await found.json()
    assert body["tenant_discovery_endpoint"].startswith("https://127.0.0.1:9070/adfs/")
    assert isinstance(body["metadata"], list)


async def test_the_token_route_answers_the_scope_the_sdks_ask_for(
    client: tuple[Client, list[Any]], service: IdentityService
) -> None:
    c, _ = client
    form = {"grant_type": "client_credentials", "client_id": APP, "client_secret": SECRET,
            "scope": PLATFORM_SCOPE}  # fmt: skip
    response = await c.post("/botframework.com/oauth2/v2.0/token", data=form,
                            headers={"Host": ENTRA})  # fmt: skip
    assert response.status == 200
    token = (await response.json())["access_token"]
    p = service.config.placeholders()
    claims = validate(token, service.keys,
                      Expectation(issuers=(p.emulator_issuer,), audiences=(PLATFORM_AUDIENCE,)),
                      now=service.clock())  # fmt: skip
    assert claims["appid"] == APP
    wrong = await c.post("/botframework.com/oauth2/v2.0/token", data={**form, "client_secret": "x"},
                         headers={"Host": ENTRA})  # fmt: skip
    assert wrong.status == 401 and (await wrong.json())["error"] == "invalid_client"
    other = await c.post("/botframework.com/oauth2/v2.0/token",
                         data={**form, "scope": "https://graph.microsoft.com/.default"},
                         headers={"Host": ENTRA})  # fmt: skip
    assert other.status == 400 and (await other.json())["error"] == "invalid_scope"


async def test_other_hosts_and_paths_are_not_answered(client: tuple[Client, list[Any]]) -> None:
    c, _ = client
    assert (await c.get("/v1/.well-known/keys", headers={"Host": "example.com"})).status == 421
    assert (await c.get("/v1/other", headers={"Host": "login.botframework.com"})).status == 404
    assert (await c.get("/a/b/c/d", headers={"Host": ENTRA})).status == 404


# --- the listener -------------------------------------------------------------------------------


@pytest.fixture
async def listener(service: IdentityService) -> AsyncIterator[PlatformListener]:
    running = PlatformListener(service, service.config.certs_dir)
    await running.start("127.0.0.1", 0)
    try:
        yield running
    finally:
        await running.close()


async def _exchange(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(4096), 5)
    finally:
        writer.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
async def test_a_taken_port_then_a_free_one_leaves_no_socket_behind(
    service: IdentityService,
) -> None:
    """Regression: started again after its port was taken (``start_platform_hosts`` then takes
    any free port), the listener made a second inner TLS server and lost the first one, whose
    listening socket stayed open after ``close`` (a ResourceWarning when collected, in whatever
    test ran then)."""
    gc.collect()
    open_before = len(os.listdir("/proc/self/fd"))
    running = PlatformListener(service, service.config.certs_dir)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            await running.start("127.0.0.1", taken.getsockname()[1])
    assert await running.start("127.0.0.1", 0) > 0
    await running.close()
    assert len(os.listdir("/proc/self/fd")) == open_before


async def test_the_listener_is_no_open_proxy(listener: PlatformListener) -> None:
    refused = await _exchange(listener.port, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403") and b"not an open proxy" in refused
    other_port = await _exchange(listener.port, f"CONNECT {ENTRA}:80 HTTP/1.1\r\n\r\n".encode())
    assert other_port.startswith(b"HTTP/1.1 403")
    plain = await _exchange(listener.port, b"GET http://example.com/ HTTP/1.1\r\n\r\n")
    assert plain.startswith(b"HTTP/1.1 405")
    allowed = await _exchange(listener.port, f"CONNECT {ENTRA}:443 HTTP/1.1\r\n\r\n".encode())
    assert allowed.startswith(b"HTTP/1.1 200")


async def test_an_endless_request_head_is_cut_at_its_bound(listener: PlatformListener) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"CONNECT " + b"a" * (MAX_HEAD * 4))
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, nothing answered
    writer.close()


def _fetch_through_proxy(port: int, bundle: Path) -> tuple[list[str], Any]:
    """Python's own clients, unchanged, with only the environment a bot is given: PyJWT's key
    client (urllib) and a plain urllib request, through HTTPS_PROXY."""
    env = {"HTTPS_PROXY": f"http://127.0.0.1:{port}", "SSL_CERT_FILE": str(bundle),
           "NO_PROXY": "127.0.0.1,localhost"}  # fmt: skip
    script = (
        "import json, jwt, urllib.request\n"
        "c = jwt.PyJWKClient('https://login.botframework.com/v1/.well-known/keys')\n"
        "kids = [k.key_id for k in c.get_signing_keys()]\n"
        "try:\n"
        "    urllib.request.urlopen('https://example.com/', timeout=5)\n"
        "    other = 'reached'\n"
        "except OSError as e:\n"
        "    other = str(e)\n"
        "print(json.dumps([kids, other]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **env}, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    kids, other = json.loads(done.stdout)
    return kids, other


async def test_python_clients_reach_the_keys_through_the_proxy_variable(
    listener: PlatformListener, service: IdentityService
) -> None:
    bundle = trust_bundle(service.config.certs_dir)
    kids, other = await asyncio.to_thread(_fetch_through_proxy, listener.port, bundle)
    assert kids == [service.keys.current().kid]
    assert "403" in other  # the listener refused to tunnel anywhere else


async def test_node_reaches_the_keys_through_the_preload(
    listener: PlatformListener, service: IdentityService
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed to run the preload (not on PATH)")
    script = (
        "const https = require('https');\n"
        "https.get('https://login.microsoftonline.com/common/discovery/v2.0/keys', (r) => {\n"
        "  let body = ''; r.on('data', (d) => body += d);\n"
        "  r.on('end', () => console.log(JSON.stringify(JSON.parse(body).keys.map((k) => k.kid))));\n"
        "}).on('error', (e) => { console.error(e.message); process.exit(3); });\n"
    )
    env = {**os.environ, "NODE_OPTIONS": f"--require {PRELOAD}",
           "BOTEMU_PLATFORM_ADDRESS": f"127.0.0.1:{listener.port}",
           "NODE_EXTRA_CA_CERTS": str(service.config.certs_dir / "ca.pem")}  # fmt: skip
    done = await asyncio.to_thread(subprocess.run, [node, "-e", script], capture_output=True,
                                   text=True, timeout=60, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [service.keys.current().kid]


def test_the_trust_bundle_holds_the_system_cas_and_botemus(service: IdentityService) -> None:
    bundle = trust_bundle(service.config.certs_dir)
    text = bundle.read_text()
    ca = (service.config.certs_dir / "ca.pem").read_text()
    assert text.endswith(ca)
    context = ssl.create_default_context(cafile=str(bundle))
    assert len(context.get_ca_certs()) >= 1


def test_the_python_preload_makes_only_the_platform_hosts_sessions_read_the_proxy(
    tmp_path: Path,
) -> None:
    """aiohttp, unchanged, with the preload on PYTHONPATH: a session for a platform host reads
    HTTPS_PROXY (trust_env), every other session is left alone; without
    BOTEMU_PLATFORM_ADDRESS nothing changes."""
    script = (
        "import asyncio, json, aiohttp\n"
        "async def main():\n"
        "    made = [aiohttp.ClientSession(base_url=u) for u in ('https://api.botframework.com',\n"
        "            'https://example.com')] + [aiohttp.ClientSession()]\n"
        "    print(json.dumps([s.trust_env for s in made]))\n"
        "    for s in made:\n"
        "        await s.close()\n"
        "asyncio.run(main())\n"
    )
    from emulator.identity.python_preload import preload_folder

    folder = preload_folder(str(tmp_path))

    def run(address: str | None) -> list[bool]:
        env = {**os.environ, "PYTHONPATH": folder}
        env.pop("BOTEMU_PLATFORM_ADDRESS", None)
        if address:
            env["BOTEMU_PLATFORM_ADDRESS"] = address
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=60, env=env, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        found: list[bool] = json.loads(done.stdout)
        return found

    assert run("127.0.0.1:1") == [True, False, False]
    assert run(None) == [False, False, False]
