"""Tests of emulator/scenario/reports.py: the progress line, the summary, failure details, JUnit
XML (validated against tests/scenario/junit.xsd) and the JSON report, from hand-built results."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from emulator.calling.caller import CallerScript
from emulator.findings import Finding, Rule, RuleRegistry, Severity
from emulator.scenario.model import Scenario, Turn
from emulator.scenario.reports import (
    Entry,
    Paint,
    RunReport,
    SkippedResult,
    excerpt,
    json_report,
    junit_xml,
    progress_line,
    render_failure,
    render_failures,
    status_of,
    summary,
)
from tests.support import junit_schema

RULES = RuleRegistry("expectations")
PROMPTS = RULES.add("EXP-PROMPTS", Severity.ERROR, "the scenario's expect",
                    "the prompts the platform played match the expected ones")  # fmt: skip


def lookup(rule_id: str) -> Rule | None:
    return RULES[rule_id] if rule_id in RULES.ids() else None


@dataclass(frozen=True)
class Result:
    """Shaped like the runner's ScenarioResult."""

    scenario: Scenario
    passed: bool = True
    failures: tuple[Finding, ...] = ()
    findings: tuple[Finding, ...] = ()
    transcript_ids: tuple[str, ...] = ()
    duration: float = 0.04
    vtime: float = 12.5
    error: str | None = None
    ladder: tuple[str, ...] = ()


def scenario(
    name: str, file: str = "scenarios/menu.yaml", line: int = 2, **more: object
) -> Scenario:
    return Scenario(name=name, caller=CallerScript(), path=Path(file), line=line, **more)  # type: ignore[arg-type]


WRONG_PROMPT = Finding(
    "EXP-PROMPTS", Severity.ERROR, "scenarios/menu.yaml:9",
    "expected a prompt that contains 'Welcome', got 'Hello there', 'Goodbye.'",
    evidence="0.02s platform played 'Hello there'\n2.40s platform played 'Goodbye.'",
)  # fmt: skip
LADDER = (
    "call 1 from A Caller (8:caller)",
    "   0.00s  → Conversation",
    "   0.01s  ← 200 Workflow [answer, playPrompt]",
    "   0.02s  platform played 'Hello there'",
    "   2.10s  caller pressed 1",
    "   2.20s  → playPromptOutcome success completedSuccessfully",
    "  ! error: $.actions[0]: a bad thing [WF-ORDER]",
    "   2.30s  ← 200 Workflow [hangup]",
    "call ended: bot hung up",
)


def run_of(*entries: Entry, duration: float = 0.5) -> RunReport:
    return RunReport(entries=entries, seed=1234, started=1_700_000_000.0, duration=duration,
                     db=".botemu/transcripts.db")  # fmt: skip


def passed(name: str = "main menu, sales by keypad", **kw: object) -> Entry:
    return Entry(Result(scenario(name, **kw)), seed=11)


def failed(name: str = "menu greets", **kw: object) -> Entry:
    result = Result(scenario(name, **kw), passed=False, failures=(WRONG_PROMPT,),
                    findings=(WRONG_PROMPT,), transcript_ids=("0123456789abcdef-call",),
                    ladder=LADDER, duration=0.25)  # fmt: skip
    return Entry(result, seed=22)


NO_MESSAGING = "needs a messaging bot: give --messaging-bot URL (or messaging_bot: in --config)"


def skipped(name: str = "echo", **kw: object) -> Entry:
    return Entry(SkippedResult(scenario(name, **kw), NO_MESSAGING), seed=44)


def errored(name: str = "voicemail", **kw: object) -> Entry:
    result = Result(scenario(name, **kw), passed=False, duration=0.01,
                    error="the bot did not answer: connection refused")  # fmt: skip
    return Entry(result, seed=33)


# --- human output ---------------------------------------------------------------------------------


def test_progress_line_names_the_outcome_the_scenario_and_its_wall_time() -> None:
    assert progress_line(passed()) == "PASS  main menu, sales by keypad  (0.04 s)"
    assert progress_line(failed()) == "FAIL  menu greets  (0.25 s)"
    assert progress_line(errored()) == (
        "ERROR voicemail  (0.01 s)  the bot did not answer: connection refused"
    )


@pytest.mark.parametrize(
    ("entry", "status"),
    [
        pytest.param(passed(), "passed", id="passed"),
        pytest.param(failed(), "failed", id="failed"),
        pytest.param(errored(), "error", id="error"),
        pytest.param(Entry(Result(scenario("x"), passed=False), 0), "failed", id="not-passed"),
    ],
)
def test_status(entry: Entry, status: str) -> None:
    assert status_of(entry.result) == status == entry.status


def test_summary_table_per_file_and_total_with_the_seed() -> None:
    report = run_of(passed(), failed(), errored(file="scenarios/voicemail.yaml"), duration=1.5)
    text = summary(report)
    lines = text.splitlines()
    assert lines[0].split() == ["file", "tests", "passed", "failed", "errors", "time"]
    assert lines[1].split() == ["scenarios/menu.yaml", "2", "1", "1", "0", "0.29", "s"]
    assert lines[2].split() == ["scenarios/voicemail.yaml", "1", "0", "0", "1", "0.01", "s"]
    assert set(lines[3]) == {"-"}
    assert lines[4].split() == ["total", "3", "1", "1", "1", "1.50", "s"]
    assert lines[6] == (
        "FAILED: 1 failed, 1 error, 1 passed in 1.50 s · seed 1234 (--seed 1234 repeats this run)"
    )
    assert "transcripts in .botemu/transcripts.db" in lines[7]
    assert summary(run_of(passed())).splitlines()[-2].startswith("PASSED: 1 passed in 0.50 s")


def test_exit_code_is_0_only_when_every_scenario_passed() -> None:
    assert run_of(passed(), passed("b")).exit_code == 0
    assert run_of(passed(), failed()).exit_code == 1
    assert run_of(passed(), errored()).exit_code == 1
    assert run_of().exit_code == 1  # nothing ran: never a pass
    assert run_of(skipped(), skipped("b")).exit_code == 2  # nothing could run


def test_a_failure_shows_expected_actual_rule_source_and_the_transcript_around_it() -> None:
    text = render_failure(failed(), lookup)
    assert text.splitlines()[:11] == [
        "FAIL  menu greets  (scenarios/menu.yaml:2)",
        "  seed 22 · transcript 0123456789ab (botemu transcript show 0123456789ab)",
        "  ✗ scenarios/menu.yaml:9  [EXP-PROMPTS]",
        "      expected: a prompt that contains 'Welcome'",
        "      actual:   'Hello there', 'Goodbye.'",
        "      rule EXP-PROMPTS (error, the scenario's expect): the prompts the platform played "
        "match the expected ones",
        "      evidence:",
        "        0.02s platform played 'Hello there'",
        "        2.40s platform played 'Goodbye.'",
        "  transcript:",
        "      ...",
    ]
    # The expectation is judged after the call: the excerpt is the end of the ladder.
    assert text.splitlines()[-1] == "      call ended: bot hung up"


def test_a_finding_that_is_not_expected_versus_actual_is_shown_whole() -> None:
    finding = Finding("WF-ORDER", Severity.ERROR, "$.actions[0]", "answer must come first")
    entry = Entry(Result(scenario("x"), passed=False, failures=(finding,), ladder=LADDER), 1)
    lines = render_failure(entry, lookup).splitlines()
    assert lines[2:4] == ["  ✗ $.actions[0]  [WF-ORDER]", "      answer must come first"]
    assert "rule" not in lines[4]  # not in this lookup: no source line


def test_an_error_says_why_it_could_not_run() -> None:
    text = render_failure(errored(), lookup)
    assert "  could not run: the bot did not answer: connection refused" in text


def test_render_failures_skips_passes_and_accepts_bare_results() -> None:
    assert render_failures([passed()], lookup) == ""
    text = render_failures([passed().result, failed().result], lookup)
    assert text.startswith("FAIL  menu greets")
    assert "seed 0" in text


def test_excerpt_centres_on_the_line_that_records_the_finding() -> None:
    finding = Finding("WF-ORDER", Severity.ERROR, "$.actions[0]", "a bad thing")
    lines = excerpt(LADDER, finding, context=1)
    assert lines == [
        "  ...",
        "     2.20s  → playPromptOutcome success completedSuccessfully",
        ">   ! error: $.actions[0]: a bad thing [WF-ORDER]",
        "     2.30s  ← 200 Workflow [hangup]",
        "  ...",
    ]
    assert excerpt(LADDER[:2], None) == ["  " + line for line in LADDER[:2]]


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Paint.for_stream(Terminal()).colour
    assert not Paint.for_stream(io.StringIO()).colour
    assert "\x1b[32mPASS \x1b[0m" in progress_line(passed(), Paint.for_stream(Terminal()))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Paint.for_stream(Terminal()).colour


# --- JUnit ----------------------------------------------------------------------------------------


def test_junit_is_valid_and_has_one_suite_per_file_and_one_case_per_scenario() -> None:
    matrix = [
        passed("greeting", line=3, variables=(("lang", "en"),)),
        passed("greeting", line=3, variables=(("lang", "fr"),)),
    ]
    report = run_of(*matrix, failed(), errored(file="scenarios/voicemail.yaml"))
    text = junit_xml(report, lookup)
    junit_schema().validate(text)
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["scenarios/menu.yaml", "scenarios/voicemail.yaml"]
    assert (suites[0].get("tests"), suites[0].get("failures"), suites[0].get("errors")) == (
        "3", "1", "0"
    )  # fmt: skip
    assert suites[0].find("properties/property[@name='seed']").get("value") == "1234"  # type: ignore[union-attr]
    cases = suites[0].findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("scenarios/menu.yaml", "greeting[lang=en]"),
        ("scenarios/menu.yaml", "greeting[lang=fr]"),
        ("scenarios/menu.yaml", "menu greets"),
    ]
    assert cases[2].get("time") == "0.250"
    assert cases[2].get("line") == "2"


def test_junit_failure_error_and_transcript() -> None:
    root = ET.fromstring(junit_xml(run_of(passed(), failed(), errored()), lookup))
    ok, bad, broken = root.findall("testsuite/testcase")
    assert ok.find("failure") is None and ok.find("error") is None
    failure = bad.find("failure")
    assert failure is not None
    assert failure.get("type") == "EXP-PROMPTS"
    assert failure.get("message") == (
        "scenarios/menu.yaml:9: expected a prompt that contains 'Welcome', got 'Hello there', "
        "'Goodbye.'"
    )
    assert "actual:   'Hello there', 'Goodbye.'" in (failure.text or "")
    assert "the scenario's expect" in (failure.text or "")
    out = bad.findtext("system-out") or ""
    assert "seed 22" in out and "0123456789abcdef-call" in out
    assert "\n".join(LADDER) in out
    error = broken.find("error")
    assert error is not None
    assert error.get("message") == "the bot did not answer: connection refused"
    assert broken.find("failure") is None


def test_junit_survives_text_xml_cannot_carry() -> None:
    nasty = Result(scenario("odd \x00name <&>\"'"), passed=False,
                   failures=(Finding("X", Severity.ERROR, "$", "bell \x07 and \ud800"),),
                   ladder=("body: \x1b[31m\x00",))  # fmt: skip
    text = junit_xml(run_of(Entry(nasty, 1)), lookup)
    junit_schema().validate(text)
    case = ET.fromstring(text).find("testsuite/testcase")
    assert case is not None and case.get("name") == "odd \ufffdname <&>\"'"


def test_the_schema_has_teeth() -> None:
    good = junit_xml(run_of(passed()), lookup)
    assert junit_schema().is_valid(good)
    for bad in (
        good.replace('tests="1"', 'tests="one"', 1),
        good.replace('classname="scenarios/menu.yaml" ', "", 1),
        good.replace("<testsuites", "<testsuite", 1).replace("</testsuites>", "</testsuite>"),
        good.replace('time="0.040"', 'time="-1"', 1),
    ):
        assert bad != good
        assert not junit_schema().is_valid(bad)


# --- JSON -----------------------------------------------------------------------------------------


def test_json_report_structure() -> None:
    conversation = Scenario(name="echo", messaging=(Turn(text="hi"),), path=Path("chat.yaml"),
                            tags=("smoke",), variables=(("lang", "en"),))  # fmt: skip
    report = RunReport(
        entries=(passed(), failed(), errored(), Entry(Result(conversation), 44)),
        seed=1234, started=1_700_000_000.0, duration=0.5, deselected=2, jobs=4,
    )  # fmt: skip
    document = json_report(report, lookup)
    assert json.loads(json.dumps(document)) == document
    assert {k: document[k] for k in ("version", "seed", "started", "jobs", "exit_code")} == {
        "version": 1, "seed": 1234, "started": "2023-11-14T22:13:20Z", "jobs": 4, "exit_code": 1,
    }  # fmt: skip
    assert document["summary"] == {
        "tests": 4, "passed": 2, "failed": 1, "errors": 1, "skipped": 0, "deselected": 2
    }  # fmt: skip
    scenarios = document["scenarios"]
    assert isinstance(scenarios, list)
    assert [s["status"] for s in scenarios] == ["passed", "failed", "error", "passed"]  # type: ignore[index, call-overload]
    bad = scenarios[1]
    assert bad == {
        "id": "menu greets",
        "name": "menu greets",
        "file": "scenarios/menu.yaml",
        "line": 2,
        "kind": "call",
        "tags": [],
        "variables": {},
        "seed": 22,
        "status": "failed",
        "duration": 0.25,
        "vtime": 12.5,
        "error": None,
        "skipped": None,
        "failures": [WRONG_PROMPT.to_json() | {"source": "the scenario's expect"}],
        "findings": [WRONG_PROMPT.to_json() | {"source": "the scenario's expect"}],
        "transcripts": ["0123456789abcdef-call"],
        "ladder": list(LADDER),
    }
    chat = scenarios[3]
    assert isinstance(chat, dict)
    assert (chat["id"], chat["kind"], chat["tags"], chat["variables"]) == (
        "echo[lang=en]", "conversation", ["smoke"], {"lang": "en"}
    )  # fmt: skip


# --- skipped scenarios ---------------------------------------------------------------------------


def test_a_skipped_scenario_is_reported_with_its_reason_and_counts_neither_way() -> None:
    """A scenario the run has no target for: SKIP with the reason as it finishes, a skipped
    column and one line per reason in the summary, ``<skipped message=...>`` in JUnit (valid
    against the schema), ``skipped`` in JSON; the exit code is the verdict on what ran."""
    chat = skipped(file="scenarios/chat.yaml")
    report = run_of(passed(), chat, skipped("echo 2", file="scenarios/chat.yaml"))
    assert status_of(chat.result) == "skipped" == chat.status
    assert progress_line(chat) == f"SKIP  echo  (0.00 s)  {NO_MESSAGING}"
    assert report.exit_code == 0
    assert run_of(failed(), chat).exit_code == 1
    text = summary(report)
    lines = text.splitlines()
    assert lines[0].split() == ["file", "tests", "passed", "failed", "errors", "skipped", "time"]
    assert lines[-5].split()[:6] == ["total", "3", "1", "0", "0", "2"]
    assert f"skipped 2 scenarios: {NO_MESSAGING}" in lines
    assert "PASSED: 1 passed, 2 skipped in 0.50 s" in text
    assert "skipped" not in summary(run_of(passed())).splitlines()[0]  # no column without skips
    assert render_failures([chat.result, passed().result], lookup) == ""

    xml = junit_xml(report, lookup)
    junit_schema().validate(ET.fromstring(xml))
    root = ET.fromstring(xml)
    assert root.get("skipped") == "2"
    suite = root.findall("testsuite")[1]
    assert (suite.get("name"), suite.get("tests"), suite.get("skipped")) == (
        "scenarios/chat.yaml", "2", "2"
    )  # fmt: skip
    marks = [case.find("skipped") for case in suite.iter("testcase")]
    assert [m.get("message") for m in marks if m is not None] == [NO_MESSAGING] * 2

    document = json_report(report, lookup)
    assert document["exit_code"] == 0
    assert document["summary"]["skipped"] == 2  # type: ignore[index, call-overload]
    entry = document["scenarios"][1]  # type: ignore[index]
    assert (entry["status"], entry["skipped"], entry["error"]) == (  # type: ignore[index, call-overload]
        "skipped", NO_MESSAGING, None
    )  # fmt: skip
