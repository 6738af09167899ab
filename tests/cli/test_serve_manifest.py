"""``botemu serve --manifest FILE``: the skill manifest every web chat page starts with, read
and validated at start. A file the web chat cannot use stops the command before it serves
(exit 2, the file and line named as ``botemu manifest validate`` names them, no traceback); a
good one reaches every page, in the ``manifest`` frame after ``ready``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from emulator.cli import main
from tests.support import ROOT, free_port

EXAMPLE = ROOT / "examples" / "skill" / "manifest.json"


def example(**changes: Any) -> str:
    document = json.loads(EXAMPLE.read_text())
    for name, value in changes.items():
        if value is None:
            del document[name]
        else:
            document[name] = value
    return json.dumps(document, indent=2)


INVALID = example(version=None, activities={"a": {"type": "teleport"}})
TELEPORT = next(f"{n}:{line.index(chr(34) + 'type') + 1}"
                for n, line in enumerate(INVALID.splitlines(), 1)
                if "teleport" in line)  # fmt: skip
"""Where the bad type is: its line, and the column of its key."""
BAD = {
    "not-json": ('{\n  "name": "x",\n  "activities": {\n    "a": [1,\n}\n',
                 ["botemu serve: --manifest {file}:4:12: not valid JSON: "]),
    "invalid": (INVALID,
                ["{file}:1:1: error: (root): a skill manifest needs 'version' [required]",
                 "{file}:" + TELEPORT + ": error: /activities/a/type: unknown activity type",
                 "botemu serve: --manifest {file}: not a valid skill manifest (2 errors, above): "
                 "the web chat starts pages with a valid one only"]),
    "no-activities": (example(activities={}),
                      ["botemu serve: --manifest {file}: declares no activities: the web chat "
                       "has none to offer"]),
    "too-large": ('{"name": "' + "x" * 210_000 + '"}',
                  ["botemu serve: --manifest {file}: larger than "]),
}  # fmt: skip


@pytest.mark.parametrize(("text", "wanted"), BAD.values(), ids=BAD.keys())
def test_a_manifest_the_web_chat_cannot_use_is_exit_2_naming_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, wanted: list[str]
) -> None:
    file = tmp_path / "skill.json"
    file.write_text(text)
    code = main(["serve", "--manifest", str(file), "--db", str(tmp_path / "t.db"),
                 "--port", str(free_port())])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == len(wanted), err
    for line, start in zip(lines, wanted, strict=True):
        assert line.startswith(start.format(file=file)), err
    assert "Traceback" not in err and not (tmp_path / "t.db").exists()  # nothing was served


def test_a_missing_manifest_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert main(["serve", "--manifest", str(missing), "--db", str(tmp_path / "t.db")]) == 2
    assert capsys.readouterr().err == f"botemu serve: --manifest {missing}: no such file\n"


@pytest.mark.slow
def test_every_chat_page_starts_with_the_manifest_given(tmp_path: Path) -> None:
    port, file = free_port(), tmp_path / "travel.json"
    file.write_text(EXAMPLE.read_text())
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "serve", "--port", str(port), "--certs",
         str(tmp_path / "certs"), "--db", str(tmp_path / "t.db"), "--manifest", str(file),
         "--bot-endpoint", "http://127.0.0.1:1/api/messages"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=os.environ | {"PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith("botemu v3.1 listening on")  # bound
        said = proc.stderr.readline()
        secret = (tmp_path / "certs" / "control-secret").read_text().strip()
        frames = asyncio.run(first_frames(f"http://127.0.0.1:{port}", secret))
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert said == (f"botemu serve: the web chat starts every page with the skill manifest {file} "
                    "(3 declared activities; 1 warning, listed in the page)\n")  # fmt: skip
    assert [f["op"] for f in frames] == ["ready", "manifest"]
    manifest = frames[1]
    assert manifest["name"] == str(file) and manifest["ref"] is None
    assert {a["key"] for a in manifest["activities"]} == {"bookFlight", "getWeather", "message"}
    assert [f["rule"] for f in manifest["findings"]] == ["MF-ENDPOINT-HTTPS"]


async def first_frames(base: str, secret: str) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as http, http.ws_connect(
        f"{base}/_botemu/live/chat", protocols=("botemu.live.v1", "botemu.secret." + secret)
    ) as ws:
        return [await ws.receive_json(timeout=10) for _ in range(2)]
