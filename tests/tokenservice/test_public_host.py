"""The token service's public host (api.botframework.com, where the SDKs' token clients call by
default) is answered by botemu's own token service, through the listener of the platform's
hosts: Python's urllib, unchanged, given only HTTPS_PROXY and the trust bundle."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

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


async def test_the_sdks_default_token_service_address_reaches_botemu(tmp_path: Path) -> None:
    port = free_port()
    bot = BotRegistration(anonymous_app_id(1), "", "http://127.0.0.1:1/api/messages",
                          anonymous=True)  # fmt: skip
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(bot,), platform_port=0)
    with TranscriptStore(tmp_path / "t.db") as store:
        async with serving(config, store) as runner:
            platform = runner.app[EMULATOR].platform
            assert platform is not None
            env = {**os.environ, "HTTPS_PROXY": platform["proxy"], "NO_PROXY": "127.0.0.1",
                   "SSL_CERT_FILE": platform["trust_bundle"]}  # fmt: skip
            done = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                timeout=60, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    status, statuses = json.loads(done.stdout)
    assert status == 200
    assert statuses[0]["serviceProviderDisplayName"] == "botemu test identity provider"
