"""``botemu test --prompt-timing``: an option of the run (``RunOptions.prompt_timing``), given
to the runner and from it to every call; the process environment (``$BOTEMU_PROMPT_TIMING``,
the default when the option is not given) is left as it was."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from emulator.calling.caller import CallerScript
from emulator.calling.settings import PROMPT_TIMING_ENV, PromptTiming
from emulator.cli import build_parser, main
from emulator.cli.test import run_command
from emulator.runner.suite import Backend, RunnerLike, TargetSettings
from emulator.scenario.model import Scenario
from emulator.transcripts.store import TranscriptStore
from tests.support import ivr_bot

MENU = Scenario(name="menu", caller=CallerScript(), path=Path("menu.yaml"), line=1)


class Passed:
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.passed = True
        self.failures = self.findings = ()
        self.transcript_ids = ()
        self.duration = self.vtime = 0.0
        self.error = None
        self.ladder = ()


class Recorder:
    """A backend whose runner records the timing it was opened with and what the process
    environment says while it runs."""

    def __init__(self) -> None:
        self.opened: list[PromptTiming | None] = []
        self.environment: list[str | None] = []

    def backend(self) -> Backend:
        return Backend(collect=self.collect, open_runner=self.open_runner)

    def collect(self, paths: Sequence[Path]) -> list[Scenario]:
        return [MENU]

    def open_runner(self, target: TargetSettings, store: TranscriptStore, *, seed: int,
                    max_workflows: int | None, timeout: float | None,
                    prompt_timing: PromptTiming | None = None,
                    ) -> AbstractAsyncContextManager[RunnerLike]:  # fmt: skip
        self.opened.append(prompt_timing)
        return self

    async def __aenter__(self) -> Recorder:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:  # fmt: skip
        return None

    async def run(self, scenario: Scenario) -> Any:
        self.environment.append(os.environ.get(PROMPT_TIMING_ENV))
        return Passed(scenario)


@pytest.mark.parametrize("env", [None, "estimate"])
@pytest.mark.parametrize("timing", [None, "speech", "estimate"])
def test_the_option_goes_to_the_runner_and_the_environment_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, timing: str | None, env: str | None
) -> None:
    if env is None:
        monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)
    else:
        monkeypatch.setenv(PROMPT_TIMING_ENV, env)
    argv = ["test", str(tmp_path), "--bot", "http://127.0.0.1:1/api/calls",
            "--db", str(tmp_path / "t.db"), *(["--prompt-timing", timing] if timing else [])]  # fmt: skip
    recorder = Recorder()
    args = build_parser("test").parse_args(argv)
    assert run_command(args, io.StringIO(), io.StringIO(), recorder.backend()) == 0
    assert recorder.opened == [timing]
    assert recorder.environment == [env]  # during the run, as before it
    assert os.environ.get(PROMPT_TIMING_ENV) == env


@pytest.mark.slow
def test_botemu_test_times_every_call_by_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(PROMPT_TIMING_ENV, raising=False)
    (tmp_path / "menu.yaml").write_text('name: menu\ncaller: [listen, press: "1", hangup]\n')
    (tmp_path / "own.yaml").write_text('name: own\ncaller: [listen, press: "1", hangup]\n'
                                       "platform: {prompt_timing: estimate}\n")  # fmt: skip
    db = tmp_path / "t.db"
    with ivr_bot() as url:
        code = main(["test", str(tmp_path), "--bot", url, "--db", str(db),
                     "--prompt-timing", "speech"])  # fmt: skip
    assert code == 0, capsys.readouterr()
    assert PROMPT_TIMING_ENV not in os.environ
    with TranscriptStore(db) as store:
        timings = {}
        for call in store.calls(limit=10):
            start = next(e for e in store.events(call.id) if e.kind == "call.start")
            timings[call.scenario] = start.payload["prompt_timing"]
    assert timings == {"menu": "speech", "own": "estimate"}
