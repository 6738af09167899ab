"""The token service's public host (api.botframework.com, where the SDKs' token clients call by
default) is answered by botemu's own token service, through the listener of the platform's
hosts: Python's urllib, unchanged, given only HTTPS_PROXY and the trust bundle; node's https,
unchanged, given only the node preload (NODE_OPTIONS) and the trust bundle."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.service.hosting import serving
from emulator.service.state import EMULATOR
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port

SCRIPT = (
    "import json, sys, urllib.request\n"
    "url = 'https://api.botframework.com/api/usertoken/GetTokenStatus?userId=u&channelId=webchat'\n"
    "with urllib.request.urlopen(url, timeout=20) as r:\n"
    "    print(json.dumps([r.status, json.loads(r.read())]))\n"
)


NODE_SCRIPT = (
    "const https = require('https');\n"
    "https.get('https://api.botframework.com/api/usertoken/GetTokenStatus?userId=u"
    "&channelId=webchat', (r) => {\n"
    "  let body = ''; r.on('data', (d) => body += d);\n"
    "  r.on('end', () => console.log(JSON.stringify([r.statusCode, JSON.parse(body)])));\n"
    "}).on('error', (e) => { console.error(e.message); process.exit(3); });\n"
)


async def test_the_sdks_default_token_service_address_reaches_botemu(tmp_path: Path) -> None:
    done = await _run(tmp_path, lambda platform: (
        [sys.executable, "-c", SCRIPT],
        {"HTTPS_PROXY": platform["proxy"], "NO_PROXY": "127.0.0.1",
         "SSL_CERT_FILE": platform["trust_bundle"]}))  # fmt: skip
    _answered_by_botemu(done)


async def test_node_reaches_the_token_service_address_through_the_preload(tmp_path: Path) -> None:
    """The JavaScript SDK's token client (botframework-connector) calls api.botframework.com:
    the preload sends it to botemu's listener as it does the identity hosts."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed to run the preload (not on PATH)")
    done = await _run(tmp_path, lambda platform: (
        [node, "-e", NODE_SCRIPT],
        {"NODE_OPTIONS": f"--require {platform['node_preload']}",
         "BOTEMU_PLATFORM_ADDRESS": platform["address"],
         "NODE_EXTRA_CA_CERTS": platform["trust_bundle"]}))  # fmt: skip
    _answered_by_botemu(done)


def _answered_by_botemu(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    status, statuses = json.loads(done.stdout)
    assert status == 200
    assert statuses[0]["serviceProviderDisplayName"] == "botemu test identity provider"


async def _run(
    tmp_path: Path, client: Callable[[dict[str, Any]], tuple[list[str], dict[str, str]]]
) -> subprocess.CompletedProcess[str]:
    """``client(platform)`` (its argv and environment) run beside a botemu with an anonymous
    bot and the listener of the platform's hosts."""
    port = free_port()
    bot = BotRegistration(anonymous_app_id(1), "", "http://127.0.0.1:1/api/messages",
                          anonymous=True)  # fmt: skip
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(bot,), platform_port=0)
    with TranscriptStore(tmp_path / "t.db") as store:
        async with serving(config, store) as runner:
            platform = runner.app[EMULATOR].platform
            assert platform is not None
            argv, settings = client(platform)
            return await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, text=True, timeout=60,
                env={**os.environ, **settings}, check=False)  # fmt: skip
