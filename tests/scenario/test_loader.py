"""Scenario files to Scenario values: every step form, the examples, precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.calling.caller import CallerScript, HangUp, Listen, Press, Say, Silence, Step, Talk
from emulator.calling.model import ActionType
from emulator.errors import BotemuError
from emulator.scenario import (
    Scenario,
    ScenarioError,
    ScenarioFileError,
    load_scenario,
    load_scenario_text,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("*.yaml"))
HEADER = "# yaml-language-server: $schema=../../emulator/scenario/schema.json\n"


def steps_of(*lines: str) -> tuple[Step, ...]:
    text = "name: steps\ncaller:\n" + "".join(f"  - {line}\n" for line in lines)
    return load_scenario_text(text).caller.steps


def error_of(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_text(text, "bad.yaml")
    return caught.value


# --- Steps -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "step"),
    [
        pytest.param("listen", Listen(), id="listen"),
        pytest.param("listen:", Listen(), id="listen-empty-mapping"),
        pytest.param('press: "1"', Press("1"), id="press"),
        pytest.param('press: "0123*#ABCD"', Press("0123*#ABCD"), id="press-every-key-kind"),
        pytest.param("press: 42", Press("42"), id="press-integer"),
        pytest.param("press: 0", Press("0"), id="press-zero"),
        pytest.param('press: {digits: "12#", gap: 0.5s}', Press("12#", 0.5), id="press-gap"),
        pytest.param('press: {digits: "9", gap: 100ms}', Press("9", 0.1), id="press-gap-ms"),
        pytest.param("press: {digits: 7}", Press("7"), id="press-digits-integer"),
        pytest.param("say: sales", Say("sales"), id="say"),
        pytest.param('say: "yes"', Say("yes"), id="say-quoted-yes"),
        pytest.param("say: 42", Say("42"), id="say-number"),
        pytest.param("say: talk to a person", Say("talk to a person"), id="say-words"),
        pytest.param("silence: 6s", Silence(6.0), id="silence-s"),
        pytest.param("silence: 500ms", Silence(0.5), id="silence-ms"),
        pytest.param("silence: 2m", Silence(120.0), id="silence-m"),
        pytest.param("silence: 1.5min", Silence(90.0), id="silence-min"),
        pytest.param("silence: 3", Silence(3.0), id="silence-number"),
        pytest.param("silence: 2.5", Silence(2.5), id="silence-decimal"),
        pytest.param('silence: "7"', Silence(7.0), id="silence-quoted-number"),
        pytest.param("silence: 0", Silence(0.0), id="silence-zero"),
        pytest.param("talk: 4s", Talk(4.0), id="talk"),
        pytest.param('talk: {for: 30s, then: "#"}', Talk(30.0, "#"), id="talk-then"),
        pytest.param("talk: {for: 2s}", Talk(2.0), id="talk-for"),
        pytest.param("talk: {for: 2s, then: null}", Talk(2.0), id="talk-then-null"),
        pytest.param("hangup", HangUp(), id="hangup"),
        pytest.param("hangup:", HangUp(), id="hangup-empty"),
        pytest.param("hangup: {}", HangUp(), id="hangup-empty-mapping"),
        pytest.param(
            "hangup: {during: playPrompt, after: 1.5s}",
            HangUp(ActionType.PLAY_PROMPT, 1.5),
            id="hangup-during-prompt",
        ),
        pytest.param(
            "hangup: {during: recognize}", HangUp(ActionType.RECOGNIZE), id="hangup-recognize"
        ),
        pytest.param(
            "hangup: {during: record, after: 2}", HangUp(ActionType.RECORD, 2.0), id="hangup-record"
        ),
        pytest.param("hangup: {after: 3s}", HangUp(None, 3.0), id="hangup-after"),
    ],
)
def test_every_step_form_loads_into_its_caller_step(line: str, step: Step) -> None:
    assert steps_of(line) == (step,)


def test_block_style_step_arguments() -> None:
    text = (
        "name: block\n"
        "caller:\n"
        "  - press:\n"
        '      digits: "1234#"\n'
        "      gap: 1s\n"
        "  - hangup:\n"
        "      during: record\n"
        "      after: 500ms\n"
    )
    assert load_scenario_text(text).caller.steps == (
        Press("1234#", 1.0),
        HangUp(ActionType.RECORD, 0.5),
    )


def test_a_scenario_reads_every_field() -> None:
    text = HEADER + (
        "name: main menu\n"
        "description: presses 1\n"
        "tags: [menu, smoke]\n"
        "caller:\n"
        "  - listen\n"
        '  - press: "1"\n'
    )
    assert load_scenario_text(text) == Scenario(
        name="main menu",
        description="presses 1",
        tags=("menu", "smoke"),
        caller=CallerScript.of(Listen(), Press("1")),
        path=None,
    )


def test_optional_fields_default_and_an_empty_caller_is_allowed() -> None:
    scenario = load_scenario_text("name: quiet\ncaller: []\n")
    assert (scenario.description, scenario.tags, scenario.caller) == (None, (), CallerScript())


def test_the_same_steps_as_the_inline_form() -> None:
    yaml_steps = steps_of(
        "listen", 'press: {digits: "1234#", gap: 0.5s}', "say: sales", "silence: 6s",
        'talk: {for: 30s, then: "#"}', "hangup: {during: playPrompt, after: 1.5s}",
    )  # fmt: skip
    inline = CallerScript.from_inline(
        "listen; press 1234# gap 0.5s; say sales; silence 6s; talk 30s then #; "
        "hangup during playPrompt after 1.5s"
    )
    assert yaml_steps == inline.steps


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_scenarios_load(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.path == path
    assert scenario.name and scenario.caller.steps


def test_there_are_example_scenarios() -> None:
    assert {p.name for p in EXAMPLES} >= {"main-menu.yaml", "account-number.yaml", "voicemail.yaml"}


def test_load_scenario_accepts_a_string_path_and_a_bom(tmp_path: Path) -> None:
    file = tmp_path / "bom.yaml"
    file.write_bytes(b"\xef\xbb\xbfname: bom\ncaller: [listen]\n")
    assert load_scenario(str(file)).caller.steps == (Listen(),)


# --- Errors ----------------------------------------------------------------------------------------


BAD = [
    pytest.param(
        "name: x\ncalller:\n  - listen\n",
        "2:1: unknown key 'calller' (did you mean 'caller'?)",
        id="unknown-top-level-key-with-hint",
    ),
    pytest.param(
        "name: x\ncaller: []\nauthor: me\n",
        "3:1: unknown key 'author' (expected: name, description, tags, caller)",
        id="unknown-top-level-key-without-hint",
    ),
    pytest.param(
        'name: x\ncaller:\n  - listen\n  - prees: "1"\n',
        "4:5: unknown step 'prees' (did you mean 'press'?)",
        id="unknown-step-with-hint",
    ),
    pytest.param(
        "name: x\ncaller:\n  - lisen\n",
        "3:5: unknown step 'lisen' (did you mean 'listen'?)",
        id="unknown-bare-step-with-hint",
    ),
    pytest.param(
        "name: x\ncaller:\n  - dance\n",
        "3:5: unknown step 'dance'; expected a step: listen, press, say, silence, talk or hangup",
        id="unknown-step-without-hint",
    ),
    pytest.param(
        "name: x\ncaller:\n  - 5\n",
        "3:5: expected a step: listen, press, say, silence, talk or hangup, got a number (5)",
        id="step-not-a-step",
    ),
    pytest.param(
        "name: x\ncaller:\n  - press\n",
        "3:5: 'press' needs an argument, e.g. press: \"2\"",
        id="step-without-argument",
    ),
    pytest.param(
        HEADER + "caller:\n  - listen\n",
        "2:1: missing required key 'name'",
        id="missing-name",
    ),
    pytest.param("name: x\n", "1:1: missing required key 'caller'", id="missing-caller"),
    pytest.param(
        "description: d\n",
        "1:1: missing required keys 'name' and 'caller'",
        id="missing-both",
    ),
    pytest.param(
        "name: x\ncaller: listen\n",
        "2:9: expected a list of steps, got a string ('listen')",
        id="caller-not-a-list",
    ),
    pytest.param(
        "name: x\ncaller:\n  - silence: 6 seconds\n",
        "3:14: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('6 seconds')",
        id="bad-duration",
    ),
    pytest.param(
        "name: x\ncaller:\n  - silence: -1\n",
        "3:14: expected a number of seconds from 0 to 86400 (24h), got a number (-1)",
        id="negative-duration",
    ),
    pytest.param(
        "name: x\ncaller:\n  - silence: 25h\n",
        "3:14: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('25h')",
        id="unknown-duration-unit",
    ),
    pytest.param(
        "name: x\ncaller:\n  - silence: 100000s\n",
        "3:14: duration '100000s' is outside 0 to 24h",
        id="duration-too-long-caught-by-the-caller-model",
    ),
    pytest.param(
        'name: x\ncaller:\n  - press: "12x"\n',
        "3:12: expected keys such as \"1234#\" (0-9, *, #, A-D), got a string ('12x')",
        id="bad-digits",
    ),
    pytest.param(
        'name: x\ncaller:\n  - talk: {for: 3s, then: "e"}\n',
        "3:27: expected keys such as \"1234#\" (0-9, *, #, A-D), got a string ('e')",
        id="bad-stop-tone",
    ),
    pytest.param(
        'name: x\ncaller:\n  - press: {digits: "1", gapp: 1s}\n',
        "3:26: unknown key 'gapp' (did you mean 'gap'?)",
        id="extra-key-in-a-step-mapping",
    ),
    pytest.param(
        "name: x\ncaller:\n  - press: {gap: 1s}\n",
        "3:12: missing required key 'digits'",
        id="press-without-digits",
    ),
    pytest.param(
        'name: x\ncaller:\n  - press: "1"\n    gap: 1s\n',
        "4:5: unexpected key 'gap' beside 'press': a step has one key "
        "(write press: {digits: ..., gap: ...})",
        id="argument-key-beside-the-step",
    ),
    pytest.param(
        'name: x\ncaller:\n  - {press: "1", say: hi}\n',
        "3:5: a step has one key, got press, say: make each its own list item",
        id="two-steps-in-one-item",
    ),
    pytest.param(
        "name: x\ncaller:\n  - hangup: {during: dialing}\n",
        "3:22: expected playPrompt, recognize or record, got a string ('dialing')",
        id="hangup-during-an-unknown-action",
    ),
    pytest.param(
        "name: x\ncaller:\n  - hangup: {during: playprompt}\n",
        "3:22: expected playPrompt, recognize or record, got a string ('playprompt') "
        "(did you mean 'playPrompt'?)",
        id="hangup-during-wrong-case",
    ),
    pytest.param(
        "name: x\ncaller:\n  - hangup: soon\n",
        "3:13: expected nothing, or {during: playPrompt, after: 1.5s}, got a string ('soon')",
        id="hangup-bad-argument",
    ),
    pytest.param(
        "name: x\ncaller:\n  - listen: 5\n",
        "3:13: listen takes no argument, got a number (5)",
        id="listen-with-argument",
    ),
    pytest.param(
        "name: x\ncaller:\n\t- listen\n",
        "3:1: a tab character: indent YAML with spaces, not tabs",
        id="tabs",
    ),
    pytest.param(
        "name: x\ncaller:\n  - press: 0123\n",
        '3:12: YAML reads 0123 as the number 83; quote the keys: press: "0123"',
        id="octal-looking-keys",
    ),
    pytest.param(
        "name: x\ncaller:\n  - press: {digits: 1_000}\n",
        '3:21: YAML reads 1_000 as the number 1000; quote the keys: digits: "1_000"',
        id="underscore-number-keys",
    ),
    pytest.param(
        "name: x\ncaller:\n  - silence: 1:30\n",
        '3:14: YAML reads 1:30 as the number 90; write silence: 90, or quote it: silence: "1:30"',
        id="sexagesimal-duration",
    ),
    pytest.param(
        "name: x\ncaller:\n  - say: yes\n",
        "3:10: expected the words to say, got a boolean (true); YAML reads yes as true; "
        'quote it: say: "yes"',
        id="yes-read-as-true",
    ),
    pytest.param(
        "name: 12\ncaller: []\n",
        '1:7: expected a name (a non-empty string), got a number (12); quote it: name: "12"',
        id="name-a-number",
    ),
    pytest.param(
        "", "1:1: empty file: expected a scenario with the keys name and caller", id="empty"
    ),
    pytest.param(
        HEADER,
        "1:1: empty file: expected a scenario with the keys name and caller",
        id="only-comments",
    ),
    pytest.param(
        "- listen\n- hangup\n",
        "1:1: expected a scenario: a mapping with the keys name and caller, got a list",
        id="a-list-not-a-mapping",
    ),
    pytest.param(
        'name: "main menu\ncaller: []\n',
        "1:7: this quoted text is never closed",
        id="unclosed-quote",
    ),
    pytest.param(
        'name: x\ncaller:\n  - press: "1"\n   - hangup\n',
        "4:4: bad indentation: this line does not line up with the list at line 3, column 3",
        id="bad-indentation",
    ),
    pytest.param(
        "name: x: y\ncaller: []\n",
        "1:8: unexpected ':' here: check the indentation, or quote text with ': '",
        id="colon-in-plain-text",
    ),
    pytest.param(
        "name: x\ncaller:\n  - listen\n  -hangup\n",
        "4:3: expected 'key: value' (is a ':' missing, or the space after a '-'?)",
        id="no-space-after-dash",
    ),
    pytest.param(
        "name: x\ncaller:\n  - say: @home\n",
        "3:10: '@' cannot start a value in YAML: quote the text",
        id="reserved-character",
    ),
    pytest.param(
        "name: a\n---\nname: b\n",
        "2:1: a scenario file holds one YAML document, found a second (---)",
        id="two-documents",
    ),
    pytest.param(
        "name: a\nname: b\ncaller: []\n",
        "2:1: duplicate key 'name' (first at line 1)",
        id="duplicate-key",
    ),
    pytest.param(
        "name: a\ntags: [menu, smoke, menu]\ncaller: []\n",
        "2:21: 'menu' is listed twice",
        id="duplicate-tag",
    ),
    pytest.param(
        "name: a\ntags: menu\ncaller: []\n",
        "2:7: expected a list of tags, such as [menu, smoke], got a string ('menu')",
        id="tags-not-a-list",
    ),
    pytest.param(
        'name: "  "\ncaller: []\n',
        "1:7: expected a name (a non-empty string), got an empty string",
        id="blank-name",
    ),
    pytest.param(
        "name: !!binary aGk=\ncaller: []\n",
        "1:7: unsupported YAML tag !!binary: a scenario holds text, numbers, lists and mappings",
        id="unsupported-tag",
    ),
    pytest.param(
        "base: &b {name: a}\n<<: *b\ncaller: []\n",
        "1:1: missing required key 'name'",
        id="merge-keys-are-not-supported",
    ),
    pytest.param(
        "a: &a [*a]\n", "1:4: an alias refers to a node that contains it", id="alias-loop"
    ),
    pytest.param(
        "name: a\ncaller: []\nx: \x00\n", "3:4: character U+0000 is not allowed in YAML", id="nul"
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_scenarios_name_the_line_column_and_what_was_expected(text: str, expected: str) -> None:
    error = error_of(text)
    assert str(error) == f"bad.yaml:{expected}"
    assert isinstance(error, BotemuError)
    assert error.file == "bad.yaml"
    assert f"{error.line}:{error.column}: {error.message}" == expected


def test_every_problem_is_listed_in_file_order() -> None:
    text = "nme: x\ncaller:\n  - prees: 1\n  - silence: 6x\nextra: 1\n"
    error = error_of(text)
    assert [str(e) for e in error.errors] == [
        "bad.yaml:1:1: unknown key 'nme' (did you mean 'name'?)",
        "bad.yaml:3:5: unknown step 'prees' (did you mean 'press'?)",
        "bad.yaml:4:14: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
        "got a string ('6x')",
        "bad.yaml:5:1: unknown key 'extra' (expected: name, description, tags, caller)",
    ]
    assert error.errors[0] is error


def test_a_merge_key_is_reported_beside_what_it_hides() -> None:
    messages = [e.message for e in error_of("base: &b {name: a}\n<<: *b\ncaller: []\n").errors]
    assert "merge keys (<<) are not supported: write the keys out" in messages


def test_aliases_that_expand_without_end_are_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    error = error_of("\n".join(lines) + "\n")
    assert "more than 100000 values" in error.message


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    assert "nested" in error_of("name: " + "[" * 2000 + "]" * 2000 + "\n").message
    assert "nested" in error_of("name: " + "[" * 100 + "]" * 100 + "\n").message


# --- Files -----------------------------------------------------------------------------------------


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError) as caught:
        load_scenario(tmp_path / "nope.yaml")
    assert str(caught.value) == f"{tmp_path / 'nope.yaml'}: no such file"
    assert (caught.value.line, caught.value.column) == (None, None)


def test_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError, match="is a directory, not a file"):
        load_scenario(tmp_path)


def test_non_utf8_bytes_are_located(tmp_path: Path) -> None:
    file = tmp_path / "latin1.yaml"
    file.write_bytes(b"name: caf\xc3\xa9\ncaller:\n  - say: caf\xe9\n")
    with pytest.raises(ScenarioFileError) as caught:
        load_scenario(file)
    assert str(caught.value) == f"{file}:3:13: not UTF-8 text (byte 0xe9)"


def test_a_file_too_large(tmp_path: Path) -> None:
    file = tmp_path / "big.yaml"
    file.write_bytes(b"#" * (1024 * 1024 + 1))
    with pytest.raises(ScenarioFileError, match="larger than 1024 KiB"):
        load_scenario(file)


def test_errors_in_a_file_name_the_file(tmp_path: Path) -> None:
    file = tmp_path / "typo.yaml"
    file.write_text("name: x\ncaller:\n  - prees: '1'\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    assert str(caught.value) == f"{file}:3:5: unknown step 'prees' (did you mean 'press'?)"


# --- Only ScenarioError, whatever the text ---------------------------------------------------------

VALID = HEADER + (
    "name: every step\n"
    "description: one of each\n"
    "tags: [a, b]\n"
    "caller:\n"
    "  - listen\n"
    '  - press: "1"\n'
    '  - press: {digits: "12#", gap: 1s}\n'
    "  - say: sales\n"
    "  - silence: 500ms\n"
    "  - talk: 4s\n"
    '  - talk:\n      for: 3s\n      then: "#"\n'
    "  - hangup: {during: record, after: 2s}\n"
    "  - hangup\n"
)
YAMLISH = st.sampled_from([*":-[]{},#&*!|>'\"%@`?~ \t\n0123456789abcsxyz", "\x00", "\ufeff"])


def test_the_text_that_is_mutated_is_valid() -> None:
    assert len(load_scenario_text(VALID).caller.steps) == 9


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        end = draw(st.integers(at, min(len(text), at + 8)))
        insert = "".join(draw(st.lists(YAMLISH, max_size=6)))
        text = text[:at] + insert + text[end:]
    return text


def loads_or_scenario_error(text: str) -> None:
    try:
        scenario = load_scenario_text(text, "fuzz.yaml")
    except ScenarioError as e:
        assert str(e).startswith("fuzz.yaml")
        assert "\n" not in e.message
    else:
        assert isinstance(scenario.caller, CallerScript)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_only_raises_scenario_error(text: str) -> None:
    loads_or_scenario_error(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_valid_yaml_only_raises_scenario_error(text: str) -> None:
    loads_or_scenario_error(text)
