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
    yamldoc,
)
from emulator.scenario.loader import discover, load_scenarios, load_scenarios_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("[!_]*.yaml"))
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
        line=2,
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
    for scenario in load_scenarios(path):
        assert scenario.path == path
        if scenario.messaging is not None:  # echo.yaml, for the echo bot
            assert scenario.name and scenario.messaging
            continue
        assert scenario.caller is not None
        assert scenario.name and (scenario.caller.steps or scenario.caller.rules)


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
        "3:1: unknown key 'author' (expected: name, description, channel, tags, spec, variables, matrix, include, caller, messaging, probe, expect, faults, platform)",
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
    pytest.param(
        "name: x\n",
        "1:1: missing required key 'caller' (or 'messaging' or 'probe')",
        id="missing-caller",
    ),
    pytest.param(
        "description: d\n",
        "1:1: missing required keys 'name' and 'caller' (or 'messaging' or 'probe')",
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
        "",
        "1:1: empty file: expected a scenario with the keys name and caller (or messaging, or probe)",
        id="empty",
    ),
    pytest.param(
        HEADER,
        "1:1: empty file: expected a scenario with the keys name and caller (or messaging, or probe)",
        id="only-comments",
    ),
    pytest.param(
        "- listen\n- hangup\n",
        "1:1: expected a scenario: a mapping with the keys name and caller (or messaging, or probe), got a list",
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
        "bad.yaml:5:1: unknown key 'extra' (expected: name, description, channel, tags, spec, variables, matrix, include, caller, messaging, probe, expect, faults, platform)",
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


@pytest.mark.parametrize("brackets", [65, 100, 2000, 200_000])
def test_brackets_nested_too_deep_are_refused_at_the_first_one_too_deep(brackets: int) -> None:
    # Deep nesting is an error, not a crash, and refused as the text is scanned: 2,000 brackets
    # were scanned whole first (2 s of CPU), then said "nested too deeply" with no position.
    error = error_of("name: " + "[" * brackets + "]" * brackets + "\n")
    assert (error.line, error.column) == (1, 6 + 65)  # the 65th bracket: 65 levels below the root
    assert error.message == "nested more than 64 levels deep"


def test_flow_nesting_inside_block_nesting_counts_both() -> None:
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(10))
    error = error_of(f"name: n\nvariables:\n{block}{'  ' * 10}v: " + "[" * 60 + "]" * 60 + "\n")
    # "v" is 10 mappings below the root: its 55th bracket is the 65th level
    assert (error.line, error.column) == (13, len("  " * 10 + "v: ") + 55)
    assert error.message == "nested more than 64 levels deep"
    deepest = "v: " + "[" * 63 + "x" + "]" * 63 + "\n"  # x: 64 levels below the root
    expected: object = "x"
    for _ in range(63):
        expected = [expected]
    node = yamldoc.compose(deepest)
    assert node is not None and yamldoc.Reader(deepest).data(node) == {"v": expected}


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


# --- Matrix ----------------------------------------------------------------------------------------

MATRIX = (
    "name: menu ${lang}\n"
    "variables:\n"
    "  lang: en\n"
    '  key: "1"\n'
    "matrix:\n"
    "  - {lang: fr}\n"
    '  - {lang: de, key: "2"}\n'
    "  - lang: en\n"
    "caller:\n"
    '  - press: "${key}"\n'
)


def test_a_matrix_makes_one_scenario_per_entry() -> None:
    scenarios = load_scenarios_text(MATRIX, "m.yaml")
    assert [s.id for s in scenarios] == [
        "menu fr[lang=fr]",
        "menu de[lang=de,key=2]",
        "menu en[lang=en]",
    ]
    assert [s.variables for s in scenarios] == [
        (("lang", "fr"),),
        (("lang", "de"), ("key", "2")),
        (("lang", "en"),),
    ]
    assert [s.line for s in scenarios] == [6, 7, 8]  # each entry's line
    assert [s.caller.steps for s in scenarios if s.caller] == [
        (Press("1"),),
        (Press("2"),),
        (Press("1"),),
    ]


def test_a_matrix_of_one_entry_is_one_scenario_with_its_entry_in_the_id() -> None:
    scenario = load_scenario_text("name: m\nmatrix: [{a: x}]\ncaller: []\n")
    assert (scenario.id, scenario.variables) == ("m[a=x]", (("a", "x"),))


def test_load_scenario_refuses_a_file_that_makes_several(tmp_path: Path) -> None:
    file = tmp_path / "m.yaml"
    file.write_text(MATRIX, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    assert str(caught.value) == (
        f"{file}:6: the matrix makes 3 scenarios where one is expected (botemu test runs them all)"
    )
    assert len(load_scenarios(file)) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: m\nmatrix: []\ncaller: []\n",
            [
                "2:9: expected a list of variable sets, such as [{lang: en}, {lang: fr}], "
                "got an empty list"
            ],
            id="empty",
        ),
        pytest.param(
            "name: m\nmatrix: [{}]\ncaller: []\n",
            [
                "2:10: expected a mapping of variable names to values, such as {lang: en}, "
                "got an empty mapping"
            ],
            id="empty-entry",
        ),
        pytest.param(
            "name: m\nmatrix: [{a: x}, {a: x}]\ncaller: []\n",
            ['2:18: {"a": "x"} is listed twice'],
            id="same-entry-twice",
        ),
        pytest.param(
            "name: m\nmatrix: [{a: 1}]\ncaller: []\n",
            ['2:14: expected the variable\'s value as text, got a number (1); quote it: a: "1"'],
            id="a-number",
        ),
        pytest.param(
            "name: m\nmatrix: {a: x}\ncaller: []\n",
            [
                "2:9: expected a list of variable sets, such as [{lang: en}, {lang: fr}], "
                "got a mapping"
            ],
            id="not-a-list",
        ),
        pytest.param(
            "name: m\nmatrix: [{a: '1,b=2'}, {a: '1', b: '2'}]\ncaller: []\n",
            ["2:24: this entry gives the same test id as entry 1: m[a=1,b=2]"],
            id="two-entries-one-id",
        ),
        pytest.param(
            "name: m ${b}\nmatrix: [{a: x}, {a: y, b: z}, {a: w}]\ncaller: []\n",
            [
                "1:9: variable 'b' is not set in this matrix entry, nor under variables "
                "(matrix entry 1)",
                "1:9: variable 'b' is not set in this matrix entry, nor under variables "
                "(matrix entry 3)",
            ],
            id="a-variable-some-entries-lack",
        ),
        pytest.param(
            "name: m\nmatrix: [{k: '1'}, {k: x}]\ncaller:\n  - press: '${k}'\n  - prees: '1'\n",
            ["5:5: unknown step 'prees' (did you mean 'press'?)"],
            id="a-mistake-of-the-file-is-reported-once",
        ),
        pytest.param(
            "name: m\nmatrix: [{k: '1'}, {k: x}, {k: y}]\ncaller:\n  - press: '${k}'\n",
            [
                "4:12: expected keys such as \"1234#\" (0-9, *, #, A-D), got a string ('x') "
                "(matrix entry 2)",
                "4:12: expected keys such as \"1234#\" (0-9, *, #, A-D), got a string ('y') "
                "(matrix entry 3)",
            ],
            id="a-mistake-of-some-entries-names-them",
        ),
        pytest.param(
            "name: m\nmatrix: [{r: '('}, {r: '(('}]\ncaller: {when: [{prompt: '${r}', do: []}]}\n",
            [
                "3:26: not a valid regular expression: missing ), unterminated subpattern at "
                "position 0 (matrix entry 1)",
                "3:26: not a valid regular expression: missing ), unterminated subpattern at "
                "position 1 (matrix entry 2)",
            ],
            id="model-errors-per-entry",
        ),
    ],
)
def test_bad_matrices(text: str, expected: list[str]) -> None:
    assert [f"{e.line}:{e.column}: {e.message}" for e in error_of(text).errors] == expected


# --- Includes --------------------------------------------------------------------------------------


def files(tmp_path: Path, **texts: str) -> Path:
    """Write ``name_yaml="..."`` as ``name.yaml`` (``__`` for a directory separator)."""
    for name, text in texts.items():
        path = tmp_path / (name.replace("__", "/").removesuffix("_yaml") + ".yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def include_errors(tmp_path: Path, main: str) -> list[str]:
    (tmp_path / "main.yaml").write_text(main, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(tmp_path / "main.yaml")
    return [str(e).replace(f"{tmp_path}/", "") for e in caught.value.errors]


def test_include_splices_steps_where_it_stands(tmp_path: Path) -> None:
    files(tmp_path, _login_yaml="- listen\n- say: hello ${who}\n- include: shared/_pin.yaml\n",
          shared___pin_yaml='- press: "1234#"\n')  # fmt: skip
    main = files(tmp_path, main_yaml=(
        "name: m\nvariables: {who: Ann}\ninclude: [_login.yaml]\n"
        "caller:\n  steps:\n    - say: first\n    - include: _login.yaml\n    - hangup\n"
        "  when:\n    - prompt: x\n      do: [include: _login.yaml]\n"
    )) / "main.yaml"  # fmt: skip
    scenario = load_scenario(main)
    assert scenario.caller is not None
    login = (Listen(), Say("hello Ann"), Press("1234#"))
    assert scenario.caller.steps == (Say("first"), *login, HangUp())
    assert scenario.caller.rules[0].steps == login


def test_include_splices_turns(tmp_path: Path) -> None:
    files(tmp_path, _hello_yaml="- hi\n- event: {name: start}\n")
    main = files(tmp_path, main_yaml=(
        "name: m\ninclude: [_hello.yaml]\nmessaging:\n  - include: _hello.yaml\n  - bye\n"
    )) / "main.yaml"  # fmt: skip
    turns = load_scenario(main).messaging
    assert turns is not None
    assert [(t.type, t.text, t.name) for t in turns] == [
        ("message", "hi", None),
        ("event", None, "start"),
        ("message", "bye", None),
    ]
    # turns from an included file carry the line of the include in the scenario file
    assert [t.line for t in turns] == [4, 4, 5]


def test_included_files_take_each_matrix_entrys_values(tmp_path: Path) -> None:
    files(tmp_path, _key_yaml='- press: "${key}"\n')
    main = files(tmp_path, main_yaml=(
        "name: m\nmatrix: [{key: '1'}, {key: '2'}]\ninclude: [_key.yaml]\n"
        "caller: [include: _key.yaml]\n"
    )) / "main.yaml"  # fmt: skip
    steps = [s.caller.steps for s in load_scenarios(main) if s.caller]
    assert steps == [(Press("1"),), (Press("2"),)]


def test_text_includes_relative_to_base(tmp_path: Path) -> None:
    files(tmp_path, _a_yaml="- listen\n")
    text = "name: t\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n"
    assert load_scenario_text(text, base=tmp_path).caller == CallerScript.of(Listen())
    error = error_of(text)
    assert str(error) == (
        "bad.yaml:2:11: cannot include '_a.yaml': the scenario has no directory "
        "(read it from a file, or pass base)"
    )


BAD_INCLUDES = [
    pytest.param(
        {},
        "name: m\ninclude: [_gone.yaml]\ncaller: [include: _gone.yaml]\n",
        ["main.yaml:2:11: cannot include '_gone.yaml': no such file"],
        id="missing-file",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _b.yaml]\n",
        ["main.yaml:3:19: '_b.yaml' is not listed under include (did you mean '_a.yaml'?)"],
        id="not-listed",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n"},
        "name: m\ncaller: [include: _a.yaml]\n",
        ["main.yaml:2:19: '_a.yaml' is not listed under include: add it there"],
        id="no-include-list",
    ),
    pytest.param(
        {},
        "name: m\ninclude: [/etc/steps.yaml]\ncaller: []\n",
        [
            "main.yaml:2:11: '/etc/steps.yaml' is an absolute path: include a path relative to "
            "this file"
        ],
        id="absolute",
    ),
    pytest.param(
        {},
        "name: m\ninclude: [steps.txt]\ncaller: []\n",
        ["main.yaml:2:11: expected the relative path of a .yaml file, got a string ('steps.txt')"],
        id="not-yaml",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n- prees: '1'\n- silence: forever\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        [
            "_a.yaml:2:3: unknown step 'prees' (did you mean 'press'?) "
            "(included from main.yaml:2:11)",
            "_a.yaml:3:12: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
            "got a string ('forever') (included from main.yaml:2:11)",
        ],
        id="errors-inside-the-included-file",
    ),
    pytest.param(
        {"_a_yaml": "- silence: 100000s\n"},
        "name: m\ninclude: [_a.yaml]\ncaller:\n  - listen\n  - include: _a.yaml\n",
        ["_a.yaml:1:12: duration '100000s' is outside 0 to 24h (included from main.yaml:5:14)"],
        id="caller-model-error-inside",
    ),
    pytest.param(
        {"_a_yaml": "- say: ${who}\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        [
            "_a.yaml:1:8: unknown variable 'who': define it under variables "
            "(included from main.yaml:2:11)"
        ],
        id="unknown-variable-inside",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n- say: 'unclosed\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        ["_a.yaml:2:8: this quoted text is never closed (included from main.yaml:2:11)"],
        id="yaml-syntax-inside",
    ),
    pytest.param(
        {"_a_yaml": "steps: [listen]\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        ["_a.yaml:1:1: expected a list of steps, got a mapping (included from main.yaml:2:11)"],
        id="not-a-list",
    ),
    pytest.param(
        {"_a_yaml": "# nothing\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        ["_a.yaml:1:1: empty file: expected a list of steps (included from main.yaml:2:11)"],
        id="empty",
    ),
    pytest.param(
        {"_a_yaml": "- hello\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        [
            "_a.yaml:1:3: unknown step 'hello'; expected a step: listen, press, say, silence, talk "
            "or hangup (included from main.yaml:2:11)"
        ],
        id="turns-where-steps-are-expected",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n- include: _a.yaml\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        ["_a.yaml:2:12: include cycle: _a.yaml -> _a.yaml (included from main.yaml:3:19)"],
        id="includes-itself",
    ),
    pytest.param(
        {"_a_yaml": "- include: sub/_b.yaml\n", "sub___b_yaml": "- include: ../_a.yaml\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        [
            "sub/_b.yaml:1:12: include cycle: _a.yaml -> sub/_b.yaml -> _a.yaml "
            "(included from _a.yaml:1:12)"
        ],
        id="a-longer-cycle",
    ),
    pytest.param(
        {"_a_yaml": "- listen\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: main.yaml]\n",
        ["main.yaml:3:19: 'main.yaml' is not listed under include (did you mean '_a.yaml'?)"],
        id="the-scenario-itself",
    ),
    pytest.param(
        {"_a_yaml": "- include: main.yaml\n"},
        "name: m\ninclude: [_a.yaml]\ncaller: [include: _a.yaml]\n",
        ["main.yaml:1:1: expected a list of steps, got a mapping (included from _a.yaml:1:12)"],
        id="a-fragment-including-the-scenario",
    ),
]


@pytest.mark.parametrize(("texts", "main", "expected"), BAD_INCLUDES)
def test_bad_includes(
    tmp_path: Path, texts: dict[str, str], main: str, expected: list[str]
) -> None:
    files(tmp_path, **texts)
    assert include_errors(tmp_path, main) == expected


def test_an_include_step_is_refused_in_a_file_read_as_a_scenario() -> None:
    assert str(error_of("name: m\ncaller:\n  - include: 5\n")) == (
        "bad.yaml:3:14: expected the relative path of a .yaml file, got a number (5)"
    )


# --- Finding scenario files ------------------------------------------------------------------------


def test_discover(tmp_path: Path) -> None:
    files(tmp_path, b_yaml="", a__z_yaml="", a___shared_yaml="", _frag_yaml="")
    (tmp_path / "c.yml").write_text("")
    (tmp_path / "notes.txt").write_text("")
    single = tmp_path / "elsewhere" / "_explicit.yaml"
    found = discover([tmp_path, single, tmp_path / "b.yaml"])
    assert found == [
        tmp_path / "a" / "z.yaml",
        tmp_path / "b.yaml",
        tmp_path / "c.yml",
        single,  # a file named explicitly is kept, whatever its name
    ]
    assert discover([tmp_path / "nothing-here"]) == [tmp_path / "nothing-here"]
    assert discover([]) == []


def test_discover_finds_the_examples_but_not_fragments() -> None:
    found = discover([ROOT / "scenarios"])
    assert set(EXAMPLES) <= set(found)
    assert not [p for p in found if p.name.startswith("_")]


RICH = HEADER + (
    "name: rich ${lang}\n"
    "spec: Recognize\n"
    "variables: {pin: '1234', wait: '2'}\n"
    "matrix:\n"
    "  - {lang: en}\n"
    "  - {lang: fr, pin: '99'}\n"
    "caller:\n"
    "  steps:\n"
    "    - press: '${pin}#'\n"
    "    - silence: ${wait}s\n"
    "  when:\n"
    "    - prompt: main (menu|list)\n"
    "      do: [listen, {press: '1'}]\n"
    "      once: true\n"
    "expect:\n"
    "  call: {answered: true, ended_by: caller, duration: {max: 1m}}\n"
    "  prompts: {items: [Welcome, {matches: '^Main'}, {file: a.wav}]}\n"
    "  outcomes: [{type: recognizeOutcome, digits: '${pin}', index: 1}]\n"
    "  findings: [WF-ORDER]\n"
    "faults: {fail_callback: [1, 2], slow_caller: 500ms}\n"
)
RICHISH = st.sampled_from([*":-[]{},#&*!|>'\"%@`?~ \n$019abcxyz_", "${", "${lang}", "\ufeff"])


def test_the_rich_text_that_is_mutated_is_valid() -> None:
    assert [s.id for s in load_scenarios_text(RICH)] == [
        "rich en[lang=en]",
        "rich fr[lang=fr,pin=99]",
    ]


@st.composite
def mutated_rich(draw: st.DrawFn) -> str:
    text = RICH
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        end = draw(st.integers(at, min(len(text), at + 8)))
        text = text[:at] + "".join(draw(st.lists(RICHISH, max_size=4))) + text[end:]
    return text


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_rich())
def test_mutated_rich_scenarios_only_raise_scenario_error(text: str) -> None:
    try:
        scenarios = load_scenarios_text(text, "fuzz.yaml")
    except ScenarioError as e:
        assert str(e).startswith("fuzz.yaml")
        assert all("\n" not in problem.message for problem in e.errors)
    else:
        assert scenarios and len({s.id for s in scenarios}) == len(scenarios)


def test_a_pattern_python_warns_about_loads_or_fails_cleanly() -> None:
    """Regression (found by the mutation property test): ``[[`` in a pattern makes Python warn
    "possible nested set"; with warnings as errors that escaped as a traceback. A pattern Python
    accepts loads, in an expectation and in a caller's ``when`` rule alike; a broken one is a
    ScenarioError with its position."""
    text = (
        "name: nested set\n"
        "caller:\n"
        "  steps: [hangup]\n"
        "  when:\n"
        "    - prompt: '[[menu]'\n"
        "      do: [listen]\n"
        "expect:\n"
        "  prompts: {items: [{matches: 'PATTERN'}]}\n"
    )
    (scenario,) = load_scenarios_text(text.replace("PATTERN", "[[]Main]"))
    assert scenario.name == "nested set"
    with pytest.raises(ScenarioError, match=r"<string>:8:\d+: not a valid regular expression"):
        load_scenarios_text(text.replace("PATTERN", "^:[[Main"))
