"""``botemu demo``: botemu and the reference bots, with the bundled scenarios run against them.

In process through ``main(argv)`` (on a thread, so that a hang fails the test instead of the
session), then once as a subprocess, and once serving until SIGINT with the printed commands
run against it.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.cli import main
from emulator.demo import DemoError, DemoOptions, find_root, run_demo
from emulator.runner.suite import collect_scenarios
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port

ROOT = Path(__file__).resolve().parent.parent
SUITES = [ROOT / "scenarios" / name for name in ("examples", "conformance")]
DEADLINE = 60.0


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh current directory, with the default transcript database."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOTEMU_DB", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def in_thread(argv: list[str]) -> int:
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    thread.start()
    thread.join(DEADLINE)
    assert not thread.is_alive(), f"botemu {shlex.join(argv)} did not end in {DEADLINE:g} s"
    return codes[0]


def bundled() -> list[Path]:
    return [p for p in SUITES if p.is_dir()]


def test_demo_once_runs_every_bundled_scenario(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert in_thread(["demo", "--once", "--port", str(free_port())]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # the bots' warnings (the auth probe's forged tokens, ...) go to their log
    log = (workdir / ".botemu" / "demo" / "bots.log").read_text(encoding="utf-8")
    assert " ivr_bot INFO " in log
    scenarios = collect_scenarios(bundled())
    assert scenarios
    assert f"botemu test: {len(scenarios)} scenario" in out
    assert re.search(r"  IVR bot    https://127\.0\.0\.1:\d+/api/calls  \(mutual TLS", out)
    for scenario in scenarios:
        assert f"PASS  {scenario.id}  (" in out
    for suite in bundled():
        assert str(suite) in out  # the suites run from the source tree
    assert f"PASSED: {len(scenarios)} passed" in out
    assert "botemu transcript list" in out and "botemu transcript show ID" in out
    assert "Ctrl-C" not in out  # --once does not serve
    # Everything it made is under .botemu: certificates, signing keys, transcripts.
    assert sorted(p.name for p in workdir.iterdir()) == [".botemu"]
    assert (workdir / ".botemu" / "demo" / "certs" / "platform.pem").is_file()
    assert (workdir / ".botemu" / "demo" / "certs" / "signing-keys").is_dir()
    with TranscriptStore(workdir / ".botemu" / "transcripts.db") as store:
        assert store.count() >= len(scenarios)


def fake_tree(root: Path, scenarios: dict[str, str]) -> Path:
    """A source tree with the real reference bots and the given scenario files."""
    (root / "examples").mkdir(parents=True)
    for bot in ("ivr_bot.py", "echo_bot.py", "bot_auth.py"):
        shutil.copy(ROOT / "examples" / bot, root / "examples" / bot)
    for name, text in scenarios.items():
        path = root / "scenarios" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


MENU = """\
name: menu by keypad
caller: [listen, {press: "1"}, hangup]
expect:
  call: {answered: true, ended_by: caller}
  prompts: {items: [Welcome to the botemu demo line]}
  findings: none
"""
ECHO = """\
name: echo through the connector
messaging: [hello]
expect:
  replies: [{text: "echo: hello"}]
  findings: none
"""
WRONG = """\
name: a prompt the bot never plays
caller: [listen, hangup]
expect:
  prompts: {items: [Bienvenue]}
"""


def demo(root: Path) -> tuple[int, str, str]:
    """``botemu demo --once`` on a source tree, in the current directory (``workdir``)."""
    out, err = io.StringIO(), io.StringIO()
    options = DemoOptions(once=True, port=0, root=root, seed=7)
    code = run_demo(options, out, err)
    return code, out.getvalue(), err.getvalue()


def test_calls_over_mtls_and_conversations_through_botemu(workdir: Path, tmp_path: Path) -> None:
    root = fake_tree(tmp_path / "src", {"examples/menu.yaml": MENU,
                                        "conformance/echo.yaml": ECHO})  # fmt: skip
    code, out, err = demo(root)
    assert (code, err) == (0, "")
    assert "PASS  menu by keypad" in out and "PASS  echo through the connector" in out
    assert "src/scenarios/examples, src/scenarios/conformance" in out  # under the cwd: relative
    with TranscriptStore(workdir / ".botemu" / "transcripts.db") as store:
        (call,) = store.calls(kind="call")
        (conversation,) = store.calls(kind="conversation")
        urls = [e.payload.get("url") for e in store.events(call.id)]
    assert call.scenario == "menu by keypad" and call.passed
    assert any(str(url).startswith("https://127.0.0.1:") for url in urls)  # over mutual TLS
    assert conversation.passed and conversation.errors == 0


def test_a_failing_scenario_is_reported_and_exits_1(workdir: Path, tmp_path: Path) -> None:
    root = fake_tree(tmp_path / "src", {"examples/wrong.yaml": WRONG})
    code, out, _ = demo(root)
    assert code == 1
    assert "FAIL  a prompt the bot never plays" in out
    assert "expected: a prompt that contains 'Bienvenue'" in out
    assert "FAILED" in out and "botemu transcript list" in out
    assert "(src/scenarios/conformance is not there: skipped)" in out


def test_an_invalid_scenario_file_is_exit_2(workdir: Path, tmp_path: Path) -> None:
    root = fake_tree(tmp_path / "src", {"examples/bad.yaml": "name: x\ncaller: [{sing: la}]\n"})
    code, out, err = demo(root)
    assert code == 2
    assert "bad.yaml:2:" in err and "unknown step 'sing'" in err
    assert "botemu transcript" not in out


def test_no_source_tree_is_exit_2(tmp_path: Path) -> None:
    with pytest.raises(DemoError, match="run botemu demo in a clone of botemu"):
        find_root([tmp_path])
    assert find_root([tmp_path, ROOT]) == ROOT
    root = fake_tree(tmp_path / "empty", {})
    (root / "scenarios").mkdir()
    err = io.StringIO()
    assert run_demo(DemoOptions(once=True, port=0, root=root), io.StringIO(), err) == 2
    assert err.getvalue().startswith("botemu demo: no bundled scenarios under ")


def test_a_taken_port_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert in_thread(["demo", "--once", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"botemu demo: cannot listen on 127.0.0.1:{port}: " in err
    assert "give --port N" in err


def test_serving_until_stopped(workdir: Path, tmp_path: Path) -> None:
    root = fake_tree(tmp_path / "src", {"examples/menu.yaml": MENU})
    out, stop = _Lines(), threading.Event()
    codes: list[int] = []
    thread = threading.Thread(
        target=lambda: codes.append(run_demo(DemoOptions(port=0, root=root), out, io.StringIO(),
                                             stop)), daemon=True)  # fmt: skip
    thread.start()
    try:
        text = out.wait_for("Serving until Ctrl-C")
        assert "Serving until Ctrl-C" in text
    finally:
        stop.set()
        thread.join(DEADLINE)
    assert codes == [0]
    assert out.getvalue().endswith("botemu demo: stopping\n")


class _Lines(io.StringIO):
    def wait_for(self, needle: str, timeout: float = DEADLINE) -> str:
        deadline = time.monotonic() + timeout
        while needle not in self.getvalue():
            assert time.monotonic() < deadline, f"no {needle!r} in:\n{self.getvalue()}"
            time.sleep(0.05)
        return self.getvalue()


# --- as a command -------------------------------------------------------------------------------


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "emulator", "demo", *args]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BOTEMU_DB"}
    return env | {"NO_COLOR": "1", "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
def test_python_m_emulator_demo_once(workdir: Path) -> None:
    done = subprocess.run(command("--once", "--port", str(free_port())), cwd=workdir,
                          env=environment(), capture_output=True, text=True, timeout=DEADLINE)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED: " in done.stdout and "botemu transcript list" in done.stdout


@pytest.fixture
def serving(workdir: Path) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``botemu demo`` serving, and the lines it printed up to its commands."""
    process = subprocess.Popen(command("--port", str(free_port())), cwd=workdir,
                               env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + DEADLINE
        while not any(line.startswith("  botemu test ") for line in lines):
            line = process.stdout.readline()
            assert line and time.monotonic() < deadline, "".join(lines)
            lines.append(line)
        yield process, lines
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(DEADLINE)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
def test_serves_the_printed_commands_until_ctrl_c(
    serving: tuple[subprocess.Popen[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    process, lines = serving
    hints = {
        line.split()[1]: shlex.split(line)[1:] for line in lines if line.startswith("  botemu ")
    }
    assert set(hints) >= {"call", "chat", "test"}
    assert "Serving until Ctrl-C. From another terminal in this directory:\n" in lines
    # The printed commands reach the running bots, exactly as printed.
    assert main(hints["call"]) == 0
    assert main([*hints["chat"], "--send", "hello", "--wait", "5"]) == 0
    assert "bot> echo: hello" in capsys.readouterr().out
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, err
    assert out.endswith("botemu demo: stopping\n")
    assert "Traceback" not in err
    port = int(re.findall(r"127\.0\.0\.1:(\d+)", hints["call"][2])[0])
    with socket.socket() as probe, pytest.raises(OSError):
        probe.connect(("127.0.0.1", port))  # the IVR bot is gone with it
