"""Tests of emulator/runner/suite.py, ``botemu test``: selection, exit codes, parallel runs,
seeds, target configuration and the report files. The loader and runner are replaced by a fake
``Backend`` (hand-built scenarios, scripted results); the end-to-end run against the reference
IVR bot is at the end."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from emulator.calling.caller import CallerScript
from emulator.calling.settings import PromptTiming
from emulator.cli.test import register, run_command
from emulator.findings import Finding, Severity
from emulator.runner.suite import (
    Backend,
    KeywordError,
    RunnerLike,
    TargetSettings,
    collect_scenarios,
    compile_keyword,
    derive_seed,
    rule_lookup,
    select,
)
from emulator.scenario.loader import ScenarioError
from emulator.scenario.model import Scenario, Turn
from emulator.transcripts.store import TranscriptStore
from tests.support import free_port, junit_schema

MISSED = Finding("EXP-PROMPTS", Severity.ERROR, "menu.yaml:9",
                 "expected a prompt that contains 'Welcome', got 'Hello'")  # fmt: skip


def call(name: str, file: str = "menu.yaml", tags: Sequence[str] = (), **more: Any) -> Scenario:
    return Scenario(name=name, caller=CallerScript(), tags=tuple(tags), path=Path(file), line=2,
                    **more)  # fmt: skip


def chat(name: str, file: str = "chat.yaml") -> Scenario:
    return Scenario(name=name, messaging=(Turn(text="hi"),), path=Path(file), line=2)


MENU = call("main menu", tags=["menu", "smoke"])
SALES = call("sales by keypad", tags=["menu"])
VOICEMAIL = call("voicemail", file="voicemail.yaml", tags=["recording"])
GREETING_EN = call("greeting", file="greeting.yaml", variables=(("lang", "en"),))
GREETING_FR = call("greeting", file="greeting.yaml", variables=(("lang", "fr"),))
ALL = [MENU, SALES, VOICEMAIL, GREETING_EN, GREETING_FR]


@dataclass(frozen=True)
class Result:
    scenario: Scenario
    passed: bool = True
    failures: tuple[Finding, ...] = ()
    findings: tuple[Finding, ...] = ()
    transcript_ids: tuple[str, ...] = ()
    duration: float = 0.01
    vtime: float = 3.0
    error: str | None = None
    ladder: tuple[str, ...] = ("call ended: caller hung up",)


@dataclass
class Fake:
    """A fake loader and runner: ``outcomes`` maps a scenario id to pass, fail, error or crash;
    ``after`` makes a scenario wait until another has finished."""

    scenarios: list[Scenario] = field(default_factory=lambda: list(ALL))
    outcomes: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    problem: ScenarioError | None = None
    opened: list[dict[str, Any]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    running: int = 0
    most: int = 0
    done: dict[str, asyncio.Event] = field(default_factory=dict)

    def backend(self) -> Backend:
        return Backend(collect=self.collect, open_runner=self.open_runner)

    def collect(self, paths: Sequence[Path]) -> list[Scenario]:
        if self.problem is not None:
            raise self.problem
        return list(self.scenarios)

    def open_runner(
        self,
        target: TargetSettings,
        store: TranscriptStore,
        *,
        seed: int,
        max_workflows: int | None,
        timeout: float | None,
        prompt_timing: PromptTiming | None = None,
    ) -> AbstractAsyncContextManager[RunnerLike]:
        self.opened.append({"target": target, "seed": seed, "max_workflows": max_workflows,
                            "timeout": timeout, "prompt_timing": prompt_timing})  # fmt: skip
        return FakeRunner(self)


class FakeRunner:
    def __init__(self, fake: Fake) -> None:
        self.fake = fake

    async def __aenter__(self) -> FakeRunner:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    async def run(self, scenario: Scenario) -> Result:
        fake = self.fake
        done = fake.done.setdefault(scenario.id, asyncio.Event())
        fake.started.append(scenario.id)
        fake.running += 1
        fake.most = max(fake.most, fake.running)
        try:
            waited = fake.after.get(scenario.id)
            if waited is not None:
                await fake.done.setdefault(waited, asyncio.Event()).wait()
            await asyncio.sleep(0.001)
            outcome = fake.outcomes.get(scenario.id, "pass")
            if outcome == "crash":
                raise RuntimeError("boom")
            if outcome == "fail":
                return Result(scenario, passed=False, failures=(MISSED,), findings=(MISSED,))
            if outcome == "error":
                return Result(scenario, passed=False, error="the bot did not answer")
            return Result(scenario)
        finally:
            fake.running -= 1
            done.set()


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def progress(self) -> list[str]:
        return [ln for ln in self.lines if re.match(r"(PASS |FAIL |ERROR) ", ln) and "(" in ln
                and ln.endswith(" s)")]  # fmt: skip


@pytest.fixture
def botemu_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``botemu_test(fake, *argv)``: the command in process, against ``fake``."""
    monkeypatch.delenv("BOT_APP_PASSWORD", raising=False)
    monkeypatch.chdir(tmp_path)

    def run(fake: Fake, *argv: str) -> Ran:
        parser = argparse.ArgumentParser(prog="botemu")
        register(parser.add_subparsers())
        args = parser.parse_args(["test", "scenarios", "--db", str(tmp_path / "t.db"), *argv])
        out, err = io.StringIO(), io.StringIO()
        code = run_command(args, out, err, fake.backend())
        return Ran(code, out.getvalue(), err.getvalue())

    return run


BOT = ("--bot", "http://127.0.0.1:8080/api/calls")


# --- exit codes -----------------------------------------------------------------------------------


def test_everything_passes_exit_0(botemu_test: Any) -> None:
    fake = Fake()
    ran = botemu_test(fake, *BOT, "--seed", "7")
    assert ran.code == 0, ran.err
    assert ran.lines[0] == "botemu test: 5 scenarios from 3 files · seed 7 · -j 1"
    assert ran.progress() == [
        "PASS  main menu  (0.01 s)",
        "PASS  sales by keypad  (0.01 s)",
        "PASS  voicemail  (0.01 s)",
        "PASS  greeting[lang=en]  (0.01 s)",
        "PASS  greeting[lang=fr]  (0.01 s)",
    ]
    assert "PASSED: 5 passed in" in ran.out
    assert "FAIL" not in ran.out and ran.err == ""
    assert fake.opened[0]["target"] == TargetSettings(bot="http://127.0.0.1:8080/api/calls")


def test_a_failure_exits_1_and_is_explained(botemu_test: Any) -> None:
    ran = botemu_test(Fake(outcomes={"sales by keypad": "fail"}), *BOT)
    assert ran.code == 1
    assert "FAIL  sales by keypad  (0.01 s)" in ran.progress()
    assert "FAIL  sales by keypad  (menu.yaml:2)" in ran.lines
    assert "      expected: a prompt that contains 'Welcome'" in ran.lines
    assert "      actual:   'Hello'" in ran.lines
    # The rule's source comes from the registries (here: the expectations' own).
    assert any(ln.startswith("      rule EXP-PROMPTS (error, ") for ln in ran.lines)
    assert "FAILED: 1 failed, 4 passed" in ran.out


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        pytest.param("error", "could not run: the bot did not answer", id="could-not-run"),
        pytest.param("crash", "could not run: botemu crashed: RuntimeError: boom", id="crash"),
    ],
)
def test_a_scenario_that_could_not_run_exits_1(
    botemu_test: Any, outcome: str, message: str
) -> None:
    ran = botemu_test(Fake(outcomes={"voicemail": outcome}), *BOT)
    assert ran.code == 1
    assert f"  {message}" in ran.lines
    assert "FAILED: 1 error, 4 passed" in ran.out
    assert sum(ln.startswith("PASS ") for ln in ran.progress()) == 4  # the others still ran


def test_zero_selected_is_exit_2_and_nothing_runs(botemu_test: Any) -> None:
    fake = Fake()
    ran = botemu_test(fake, *BOT, "-k", "nothing-like-this", "--tag", "menu")
    assert ran.code == 2
    assert ran.err == (
        "botemu test: no scenarios selected: 5 scenarios found, none matches "
        "-k 'nothing-like-this' --tag menu\n"
    )
    assert fake.opened == [] and ran.out == ""


def test_no_scenario_files_is_exit_2(botemu_test: Any) -> None:
    ran = botemu_test(Fake(scenarios=[]), *BOT)
    assert (ran.code, ran.err) == (
        2,
        "botemu test: no scenarios under scenarios: nothing to test\n",
    )


def test_a_scenario_file_error_is_exit_2_with_file_line_col_and_nothing_runs(
    botemu_test: Any,
) -> None:
    second = ScenarioError("b.yaml", 1, 1, "not YAML: found a tab")
    fake = Fake(problem=ScenarioError("a.yaml", 3, 5, "unknown key 'expct'", more=[second]))
    ran = botemu_test(fake, *BOT)
    assert ran.code == 2
    assert ran.err == "a.yaml:3:5: unknown key 'expct'\nb.yaml:1:1: not YAML: found a tab\n"
    assert fake.opened == [] and ran.out == ""


def test_a_path_that_does_not_exist_is_exit_2(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["test", str(tmp_path / "nope"), *BOT, "--db", str(tmp_path / "t.db")])
    err = io.StringIO()
    assert run_command(args, io.StringIO(), err) == 2
    assert err.getvalue() == f"botemu test: {tmp_path / 'nope'}: no such file or directory\n"
    with pytest.raises(Exception, match="no such file or directory"):
        collect_scenarios([tmp_path / "nope"])


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["-j", "0"], id="jobs-0"),
        pytest.param(["--timeout", "-1"], id="negative-timeout"),
        pytest.param(["--max-workflows", "x"], id="max-workflows-not-a-number"),
        pytest.param(["--seed", "x"], id="seed-not-a-number"),
    ],
)
def test_bad_numbers_are_usage_errors(botemu_test: Any, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        botemu_test(Fake(), *BOT, *argv)
    assert exited.value.code == 2


# --- selection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "selected"),
    [
        pytest.param(
            "",
            ["main menu", "sales by keypad", "voicemail", "greeting[lang=en]", "greeting[lang=fr]"],
            id="empty-selects-all",
        ),
        pytest.param("main", ["main menu"], id="substring-of-id"),
        pytest.param("menu", ["main menu", "sales by keypad"], id="substring-of-id-or-file"),
        pytest.param("MAIN", ["main menu"], id="ignores-case"),
        pytest.param("keypad", ["sales by keypad"], id="substring"),
        pytest.param("menu.yaml", ["main menu", "sales by keypad"], id="file"),
        pytest.param("greeting and not fr", ["greeting[lang=en]"], id="and-not"),
        pytest.param("voicemail or keypad", ["sales by keypad", "voicemail"], id="or"),
        pytest.param("not (menu.yaml or greeting)", ["voicemail"], id="parentheses"),
        pytest.param("'sales by'", ["sales by keypad"], id="quoted-phrase"),
        pytest.param('"lang=fr"', ["greeting[lang=fr]"], id="matrix-entry"),
        pytest.param("not not voicemail", ["voicemail"], id="double-not"),
        pytest.param("voicemail or keypad and nothing", ["voicemail"], id="and-binds-tighter"),
    ],
)
def test_keyword_expressions(expression: str, selected: list[str]) -> None:
    assert [s.id for s in select(ALL, expression)] == selected


@pytest.mark.parametrize(
    ("expression", "column", "message"),
    [
        pytest.param("menu and", 9, "expected a word or '('", id="dangling-and"),
        pytest.param("(menu", 6, "expected ')'", id="unclosed-paren"),
        pytest.param("menu)", 5, "unexpected ')'", id="stray-paren"),
        pytest.param("menu voicemail", 6, "unexpected 'voicemail'", id="two-words"),
        pytest.param("or menu", 1, "expected a word or '(', got 'or'", id="leading-or"),
        pytest.param("'menu", 1, "unclosed quote", id="unclosed-quote"),
    ],
)
def test_keyword_syntax_errors_name_the_column(expression: str, column: int, message: str) -> None:
    with pytest.raises(KeywordError) as raised:
        compile_keyword(expression)
    assert raised.value.column == column
    assert message in str(raised.value)


def test_a_bad_keyword_is_exit_2_before_anything_is_read(botemu_test: Any) -> None:
    fake = Fake(problem=ScenarioError("a.yaml", 1, 1, "never read"))
    ran = botemu_test(fake, *BOT, "-k", "menu and")
    assert ran.code == 2
    assert ran.err.startswith("botemu test: -k 'menu and': expected a word or '('")


def test_tags_select_any_and_combine_with_k(botemu_test: Any) -> None:
    assert [s.id for s in select(ALL, tags=["recording", "smoke"])] == ["main menu", "voicemail"]
    assert [s.id for s in select(ALL, "sales", tags=["menu"])] == ["sales by keypad"]
    fake = Fake()
    ran = botemu_test(fake, *BOT, "--tag", "menu", "--tag", "recording", "-k", "not main")
    assert ran.code == 0
    assert fake.started == ["sales by keypad", "voicemail"]
    assert ran.lines[0].startswith("botemu test: 2 scenarios from 2 files, 3 deselected")


# --- parallel runs and seeds ----------------------------------------------------------------------


def test_j_prints_each_scenario_as_it_finishes_and_reports_in_file_order(
    botemu_test: Any, tmp_path: Path
) -> None:
    fake = Fake(scenarios=[MENU, SALES, VOICEMAIL],
                after={"main menu": "voicemail", "voicemail": "sales by keypad"})  # fmt: skip
    ran = botemu_test(fake, *BOT, "-j", "3", "--json", str(tmp_path / "r.json"))
    assert ran.code == 0
    assert [ln.split("  ")[1] for ln in ran.progress()] == [
        "sales by keypad", "voicemail", "main menu"
    ]  # fmt: skip
    document = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in document["scenarios"]] == ["main menu", "sales by keypad", "voicemail"]
    assert document["jobs"] == 3


def test_j_bounds_how_many_run_at_once(botemu_test: Any) -> None:
    many = [call(f"scenario {i}") for i in range(7)]
    fake = Fake(scenarios=many)
    assert botemu_test(fake, *BOT, "-j", "2").code == 0
    assert fake.most == 2
    one = Fake(scenarios=many)
    assert botemu_test(one, *BOT).code == 0
    assert one.most == 1 and one.started == [s.id for s in many]


def seeds_of(path: Path) -> dict[str, int]:
    return {s["id"]: s["seed"] for s in json.loads(path.read_text())["scenarios"]}


def test_seeds_come_from_the_run_seed_and_the_scenario_id(botemu_test: Any, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    fake = Fake()
    assert botemu_test(fake, *BOT, "--seed", "42", "--json", str(report)).code == 0
    assert fake.opened[0]["seed"] == 42
    seeds = seeds_of(report)
    assert seeds == {s.id: derive_seed(42, s.id) for s in ALL}
    assert len(set(seeds.values())) == len(ALL)
    # The same seed, another selection and -j: each scenario keeps its seed.
    assert botemu_test(Fake(), *BOT, "--seed", "42", "-k", "greeting", "-j", "4",
                       "--json", str(report)).code == 0  # fmt: skip
    assert seeds_of(report) == {k: v for k, v in seeds.items() if k.startswith("greeting")}
    # Another run seed, other scenario seeds.
    botemu_test(Fake(), *BOT, "--seed", "43", "--json", str(report))
    assert not set(seeds_of(report).values()) & set(seeds.values())


def test_without_seed_a_random_one_is_printed_and_repeats_the_run(
    botemu_test: Any, tmp_path: Path
) -> None:
    report = tmp_path / "r.json"
    first = Fake()
    ran = botemu_test(first, *BOT, "--json", str(report))
    seed = first.opened[0]["seed"]
    assert f"seed {seed} (--seed {seed} repeats this run)" in ran.out
    seeds = seeds_of(report)
    again = Fake()
    botemu_test(again, *BOT, "--seed", str(seed), "--json", str(report))
    assert again.opened[0]["seed"] == seed
    assert seeds_of(report) == seeds


def test_derive_seed_is_stable() -> None:
    # Pinned: changing the derivation changes every recorded seed.
    assert derive_seed(0, "main menu") == 641705709
    assert derive_seed(1, "main menu") != 641705709
    assert 0 <= derive_seed(2**64, "x" * 1000) < 2**32


# --- target -----------------------------------------------------------------------------------------


def test_config_file_gives_the_target_and_flags_win(botemu_test: Any, tmp_path: Path) -> None:
    config = tmp_path / "botemu.yaml"
    config.write_text(
        "bot: http://127.0.0.1:1/api/calls\n"
        "messaging_bot: http://127.0.0.1:2/api/messages\n"
        "app_id: from-file\n"
        "app_password: 1234\n"
        "emulator: http://127.0.0.1:9070\n"
        "certs: certs\n"
        "ca: certs/ca.pem\n"
    )
    fake = Fake(scenarios=[MENU, chat("echo")])
    ran = botemu_test(fake, "--config", str(config), "--app-id", "from-flag",
                      "--timeout", "2.5", "--max-workflows", "9")  # fmt: skip
    assert ran.code == 0, ran.err
    assert fake.opened == [{
        "target": TargetSettings(
            bot="http://127.0.0.1:1/api/calls", messaging_bot="http://127.0.0.1:2/api/messages",
            app_id="from-flag", app_password="1234", emulator="http://127.0.0.1:9070",
            certs=Path("certs"), ca=Path("certs/ca.pem"),
        ),
        "seed": fake.opened[0]["seed"], "max_workflows": 9, "timeout": 2.5, "prompt_timing": None,
    }]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param(
            "bot: http://x\nbots: []\n", "botemu.yaml:2:1: unknown setting 'bots'", id="unknown-key"
        ),
        pytest.param("bot: [a]\n", "botemu.yaml:1:6: bot is a string", id="not-a-string"),
        pytest.param(
            "bot: http://x\nbot: http://y\n", "botemu.yaml:2:1: bot is given twice", id="twice"
        ),
        pytest.param("bot: 'http://x\n", "botemu.yaml:2:1: not YAML", id="syntax"),
        pytest.param("- bot\n", "botemu.yaml:1:1: expected a mapping", id="not-a-mapping"),
        pytest.param("bot: ftp://x\n", "--bot 'ftp://x' is not an http(s) URL", id="bad-url"),
        # Regression: a RecursionError's traceback; now refused at the 501st bracket, as scanned.
        pytest.param(
            "bot: " + "[" * 100_000, "botemu.yaml:1:506: not YAML: nested more than 500", id="deep"
        ),
        pytest.param(
            "bot: " + "[" * 497 + "]" * 497,
            "botemu.yaml: not YAML: nested too deeply",
            id="too-deep-to-compose",
        ),
    ],
)
def test_config_file_errors_are_exit_2_with_the_place(
    botemu_test: Any, tmp_path: Path, text: str, error: str
) -> None:
    (tmp_path / "botemu.yaml").write_text(text)
    ran = botemu_test(Fake(), "--config", "botemu.yaml")
    assert ran.code == 2
    assert ran.err.startswith(f"botemu test: {error}")


def test_a_missing_config_file_is_exit_2(botemu_test: Any) -> None:
    ran = botemu_test(Fake(), "--config", "missing.yaml")
    assert (ran.code, ran.err) == (2, "botemu test: missing.yaml: no such file\n")


def test_calls_need_a_bot_and_conversations_a_messaging_bot(botemu_test: Any) -> None:
    ran = botemu_test(Fake())
    assert (ran.code, ran.err) == (
        2, "botemu test: 5 selected scenarios are calls: give --bot URL (or bot: in --config)\n"
    )  # fmt: skip
    ran = botemu_test(Fake(scenarios=[chat("echo")]))
    assert ran.code == 2
    assert ran.err.startswith(
        "botemu test: 1 selected scenario is a conversation: give --messaging-bot URL, with "
        "--app-id ID"
    )
    # Without --app-id the messaging bot is an anonymous one (an SDK template's default).
    assert botemu_test(Fake(scenarios=[chat("echo")]), "--messaging-bot", "http://h:1").code == 0
    # Only what the selection needs: the conversation is deselected, no messaging bot needed.
    assert botemu_test(Fake(scenarios=[MENU, chat("echo")]), *BOT, "-k", "menu").code == 0


def test_the_password_may_come_from_the_environment(
    botemu_test: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Fake(scenarios=[chat("echo")])
    monkeypatch.setenv("BOT_APP_PASSWORD", "from-env")
    ran = botemu_test(fake, "--messaging-bot", "http://127.0.0.1:3978/api/messages",
                      "--app-id", "app")  # fmt: skip
    assert ran.code == 0, ran.err
    assert fake.opened[0]["target"].app_password == "from-env"


# --- reports ------------------------------------------------------------------------------------------


def test_junit_and_json_files(botemu_test: Any, tmp_path: Path) -> None:
    fake = Fake(outcomes={"sales by keypad": "fail", "voicemail": "error"})
    junit, report = tmp_path / "out" / "junit.xml", tmp_path / "out" / "report.json"
    ran = botemu_test(fake, *BOT, "--junit", str(junit), "--json", str(report), "--seed", "1")
    assert ran.code == 1
    junit_schema().validate(str(junit))
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert [(s.get("name"), s.get("tests")) for s in suites] == [
        ("menu.yaml", "2"), ("voicemail.yaml", "1"), ("greeting.yaml", "2")
    ]  # fmt: skip
    names = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert names == ["main menu", "sales by keypad", "voicemail", "greeting[lang=en]",
                     "greeting[lang=fr]"]  # fmt: skip
    document = json.loads(report.read_text())
    assert document["summary"] == {"tests": 5, "passed": 3, "failed": 1, "errors": 1,
                                   "skipped": 0, "deselected": 0}  # fmt: skip
    assert document["exit_code"] == 1 and document["seed"] == 1


def test_json_to_stdout_sends_the_human_output_to_stderr(botemu_test: Any) -> None:
    ran = botemu_test(Fake(), *BOT, "--json", "-")
    assert ran.code == 0
    assert json.loads(ran.out)["summary"]["passed"] == 5
    assert "PASS  main menu" in ran.err


def test_a_report_that_cannot_be_written_is_exit_2(botemu_test: Any, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    ran = botemu_test(Fake(), *BOT, "--junit", str(tmp_path / "taken"))
    assert ran.code == 2
    assert "cannot write a report" in ran.err


def test_a_runner_that_cannot_start_is_exit_2(botemu_test: Any) -> None:
    class Refuses(FakeRunner):
        async def __aenter__(self) -> FakeRunner:
            raise OSError(98, "Address already in use")

    fake = Fake()
    fake.open_runner = lambda *a, **k: Refuses(fake)  # type: ignore[method-assign]
    ran = botemu_test(fake, *BOT)
    assert ran.code == 2
    assert ran.err == "botemu test: cannot run: Address already in use\n"


def test_rule_lookup_knows_every_registry() -> None:
    rules = rule_lookup()
    assert rules("EXP-PROMPTS") is not None
    wf = rules("WF-REQUIRED")
    assert wf is not None and wf.source
    assert rules("NO-SUCH-RULE") is None


# --- end to end: the real loader and runner against the reference IVR bot --------------------------

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ivr_bot() -> Iterator[str]:
    """examples/ivr_bot.py in its own process, on a free port."""
    port = free_port()
    bot = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "ivr_bot.py"), "--port", str(port)],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if bot.poll() is not None or time.monotonic() > deadline:
                bot.kill()
                bot.wait()
                raise RuntimeError("the IVR bot did not start") from None
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/api/calls"
    finally:
        bot.terminate()
        bot.wait()


def real(tmp_path: Path, *argv: str) -> Ran:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    args = parser.parse_args(["test", *argv, "--db", str(tmp_path / "t.db")])
    out, err = io.StringIO(), io.StringIO()
    code = run_command(args, out, err)
    return Ran(code, out.getvalue(), err.getvalue())


def callers(tmp_path: Path, report: Path) -> dict[str, str | None]:
    """Scenario id -> the caller identity of its call, from the transcript store."""
    scenarios = json.loads(report.read_text())["scenarios"]
    with TranscriptStore(tmp_path / "t.db") as store:
        out = {}
        for s in scenarios:
            summary = store.call(s["transcripts"][0])
            out[s["id"]] = summary.caller if summary else None
        return out


@pytest.mark.slow
def test_end_to_end_the_example_scenarios_pass_and_a_seed_repeats_them(
    ivr_bot: str, tmp_path: Path
) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    examples = str(ROOT / "scenarios" / "examples")
    ivr = ("--tag", "ivr")  # the IVR bot's examples (echo.yaml is the echo bot's)
    ran = real(tmp_path, examples, *ivr, "--bot", ivr_bot, "-j", "2", "--seed", "5",
               "--junit", str(junit), "--json", str(report))  # fmt: skip
    assert ran.code == 0, ran.out + ran.err
    expected = [s for s in collect_scenarios([Path(examples)]) if "ivr" in s.tags]
    assert len(expected) >= 4
    assert sorted(ln.split("  ")[1] for ln in ran.progress()) == sorted(s.id for s in expected)
    assert all(ln.startswith("PASS ") for ln in ran.progress())
    junit_schema().validate(str(junit))
    cases = ET.parse(junit).getroot().findall("testsuite/testcase")
    assert "main menu, sales by keypad" in [c.get("name") for c in cases]
    assert all("call ended:" in (c.findtext("system-out") or "") for c in cases)
    document = json.loads(report.read_text())
    assert document["summary"]["passed"] == len(expected) and document["exit_code"] == 0
    first = callers(tmp_path, report)
    assert None not in first.values()

    again = real(tmp_path, examples, *ivr, "--bot", ivr_bot, "--seed", "5", "--json", str(report))
    assert again.code == 0
    assert callers(tmp_path, report) == first
    other = real(tmp_path, examples, *ivr, "--bot", ivr_bot, "--seed", "6", "--json", str(report))
    assert other.code == 0
    assert callers(tmp_path, report) != first


WRONG = """\
name: menu greets in french
matrix:
  - {key: "1"}
  - {key: "2"}
caller:
  - press: "${key}"
  - hangup
expect:
  prompts:
    items: [Bienvenue]
"""


@pytest.mark.slow
def test_end_to_end_a_failing_scenario_exits_1_with_its_details(
    ivr_bot: str, tmp_path: Path
) -> None:
    (tmp_path / "wrong.yaml").write_text(WRONG)
    junit = tmp_path / "junit.xml"
    ran = real(tmp_path, str(tmp_path / "wrong.yaml"), "--bot", ivr_bot, "--junit", str(junit))
    assert ran.code == 1, ran.err
    assert [ln.split("  ")[0:2] for ln in ran.progress()] == [
        ["FAIL", "menu greets in french[key=1]"],
        ["FAIL", "menu greets in french[key=2]"],
    ]
    assert "      expected: a prompt that contains 'Bienvenue' (item 1 of 1, in order)" in ran.lines
    assert any(
        ln.startswith("      actual:   'Welcome to the botemu demo line.'") for ln in ran.lines
    )
    assert any(ln.startswith("      rule EXP-PROMPTS (error, ") for ln in ran.lines)
    assert "  transcript:" in ran.lines
    junit_schema().validate(str(junit))
    failures = ET.parse(junit).getroot().findall("testsuite/testcase/failure")
    assert [f.get("type") for f in failures] == ["EXP-PROMPTS", "EXP-PROMPTS"]


def test_end_to_end_an_invalid_file_exits_2_with_file_line_col(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "ok.yaml").write_text("name: fine\ncaller: [hangup]\n")
    (tmp_path / "scenarios" / "_steps.yaml").write_text("- not a scenario: an include\n")
    bad = tmp_path / "scenarios" / "broken.yaml"
    bad.write_text("name: broken\ncaller:\n  - press: 0123\n  - sing: loud\n")
    ran = real(tmp_path, str(tmp_path / "scenarios"), "--bot", "http://127.0.0.1:9/api/calls")
    assert ran.code == 2
    lines = ran.err.splitlines()
    assert [ln.split(": ")[0] for ln in lines] == [f"{bad}:3:12", f"{bad}:4:5"]
    assert "quote the keys" in lines[0] and "unknown step 'sing'" in lines[1]
    assert ran.out == ""


def registered() -> bool:
    from emulator.cli import build_parser

    parser = build_parser()
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return any("test" in a.choices for a in commands)


@pytest.mark.slow
def test_as_a_process_zero_selected_is_exit_2_with_one_line(tmp_path: Path) -> None:
    if not registered():
        pytest.skip("botemu test is not registered in emulator/cli.py yet")
    (tmp_path / "one.yaml").write_text("name: one\ncaller: [hangup]\n")
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "test", str(tmp_path), "-k", "two",
         "--bot", "http://127.0.0.1:9/api/calls", "--db", str(tmp_path / "t.db")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "botemu test: no scenarios selected: 1 scenario found, none matches -k 'two'\n"
    )
    assert done.stdout == ""


# --- a run with one kind of bot -----------------------------------------------------------------


def probe(name: str, which: str, file: str = "probes.yaml") -> Scenario:
    return Scenario(name=name, probe=which, path=Path(file), line=2)  # type: ignore[arg-type]


MIXED = [MENU, chat("echo"), probe("tokens", "auth"), probe("calling tokens", "auth-calling"),
         VOICEMAIL]  # fmt: skip
NO_MESSAGING = "needs a messaging bot: give --messaging-bot URL (or messaging_bot: in --config)"
NO_CALLING = "needs a calling bot: give --bot URL (or bot: in --config)"


def test_scenarios_whose_bot_is_missing_are_skipped_and_the_rest_run(
    botemu_test: Any, tmp_path: Path
) -> None:
    """A calling bot alone: the conversation and ``probe: auth`` are skipped with the reason
    (progress, summary, JUnit ``<skipped message=...>``, JSON), the calls and ``probe:
    auth-calling`` run, and the exit code counts only what ran."""
    fake = Fake(scenarios=list(MIXED))
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    ran = botemu_test(fake, *BOT, "--junit", str(junit), "--json", str(report))
    assert ran.code == 0, ran.err + ran.out
    assert fake.started == ["main menu", "calling tokens", "voicemail"]
    skips = [ln for ln in ran.lines if ln.startswith("SKIP ")]
    assert skips == [f"SKIP  echo  (0.00 s)  {NO_MESSAGING}",
                     f"SKIP  tokens  (0.00 s)  {NO_MESSAGING}"]  # fmt: skip
    assert f"skipped 2 scenarios: {NO_MESSAGING}" in ran.lines
    assert any(ln.startswith("PASSED: 3 passed, 2 skipped") for ln in ran.lines)
    junit_schema().validate(str(junit))
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("skipped")) == ("5", "2")
    skipped = {c.get("name"): c.find("skipped") for c in root.iter("testcase")}
    assert {n: s.get("message") for n, s in skipped.items() if s is not None} == {
        "echo": NO_MESSAGING, "tokens": NO_MESSAGING
    }  # fmt: skip
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["exit_code"] == 0 and document["summary"]["skipped"] == 2
    assert [(s["id"], s["status"], s["skipped"]) for s in document["scenarios"]] == [
        ("main menu", "passed", None),
        ("echo", "skipped", NO_MESSAGING),
        ("tokens", "skipped", NO_MESSAGING),
        ("calling tokens", "passed", None),
        ("voicemail", "passed", None),
    ]

    # What ran decides: a failing call fails the run, skips or not.
    failing = Fake(scenarios=list(MIXED), outcomes={"voicemail": "fail"})
    assert botemu_test(failing, *BOT).code == 1
    # A messaging bot alone: the calls and probe: auth-calling are skipped.
    chatty = Fake(scenarios=list(MIXED))
    ran = botemu_test(chatty, "--messaging-bot", "http://h:1")
    assert ran.code == 0, ran.err
    assert chatty.started == ["echo", "tokens"]
    reasons = [ln.rsplit("  ", 1)[-1] for ln in ran.lines if ln.startswith("SKIP ")]
    assert reasons == [NO_CALLING] * 3


def test_scenarios_whose_bot_is_missing_leave_nothing_to_run_is_exit_2(botemu_test: Any) -> None:
    """When no selected scenario has its bot, nothing runs and it is a usage error, as before."""
    fake = Fake(scenarios=[chat("echo"), probe("tokens", "auth")])
    ran = botemu_test(fake, *BOT)
    assert ran.code == 2 and fake.started == []
    assert ran.err.startswith("botemu test: 2 selected scenarios are conversations: give "
                              "--messaging-bot URL")  # fmt: skip
    calls = Fake(scenarios=[MENU, probe("calling tokens", "auth-calling")])
    ran = botemu_test(calls, "--messaging-bot", "http://h:1")
    assert (ran.code, ran.err) == (
        2, "botemu test: 2 selected scenarios are calls: give --bot URL (or bot: in --config)\n"
    )  # fmt: skip
    assert botemu_test(Fake(scenarios=[chat("echo")])).code == 2


@pytest.mark.slow
def test_end_to_end_the_conformance_suite_runs_for_a_calling_only_bot(
    ivr_bot: str, tmp_path: Path
) -> None:
    """``botemu test scenarios/conformance --bot URL``: the messaging scenarios are skipped,
    every call runs (the calling auth probe is deselected: this IVR bot runs without the keys
    to check tokens), and the run passes."""
    report = tmp_path / "report.json"
    suite = str(ROOT / "scenarios" / "conformance")
    ran = real(tmp_path, suite, "--bot", ivr_bot, "-k", "not (calling and probe)",
               "--json", str(report))  # fmt: skip
    assert ran.code == 0, ran.out + ran.err
    document = json.loads(report.read_text())
    by_status: dict[str, set[str]] = {}
    for s in document["scenarios"]:
        by_status.setdefault(s["status"], set()).add(s["id"])
    assert by_status["skipped"] == {"auth probe", "reply through the connector"}
    assert len(by_status["passed"]) >= 10 and set(by_status) == {"passed", "skipped"}
