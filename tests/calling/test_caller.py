"""Tests of emulator/calling/caller.py: reading caller scripts (YAML list and inline forms)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml

from emulator.calling.caller import (
    DEFAULT_DIGIT_GAP,
    CallerScript,
    HangUp,
    Listen,
    Press,
    Say,
    Silence,
    Step,
    Talk,
    WhenRule,
    describe,
    parse_duration,
    parse_step,
)
from emulator.calling.model import ActionType
from emulator.errors import BotemuError, CallerScriptError

# --- the YAML list form ------------------------------------------------------------------------

DOCSTRING_SCENARIO = """
caller:
  - listen                      # hear the next prompt out before acting
  - press: "2"                  # or {digits: "1234#", gap: 0.5s}
  - press: {digits: "1234#", gap: 0.5s}
  - say: "sales"                # speech, matched against speechVariation / choice names
  - silence: 6s                 # say nothing (drives timeouts)
  - talk: 4s                    # speak into a recording, then fall silent
  - talk: {for: 30s, then: "#"} # speak, then press a stop tone
  - hangup                      # or {hangup: {during: playPrompt, after: 1.5s}}
  - hangup: {during: playPrompt, after: 1.5s}
"""


def test_from_data_reads_every_step_of_the_docstring_one_to_one() -> None:
    data = yaml.safe_load(DOCSTRING_SCENARIO)["caller"]
    script = CallerScript.from_data(data)
    assert script.steps == (
        Listen(),
        Press("2"),
        Press("1234#", 0.5),
        Say("sales"),
        Silence(6.0),
        Talk(4.0),
        Talk(30.0, "#"),
        HangUp(),
        HangUp(ActionType.PLAY_PROMPT, 1.5),
    )
    assert len(script.steps) == len(data)


@pytest.mark.parametrize(
    ("text", "step"),
    [
        pytest.param("- listen", Listen(), id="listen"),
        pytest.param("- listen:", Listen(), id="listen-empty-mapping"),
        pytest.param('- press: "2"', Press("2"), id="press-quoted"),
        pytest.param("- press: 2", Press("2"), id="press-number"),
        pytest.param("- press: 1234", Press("1234"), id="press-number-several"),
        pytest.param('- press: "*#AD"', Press("*#AD"), id="press-symbols"),
        pytest.param('- press: "1 2 3"', Press("123"), id="press-spaces-dropped"),
        pytest.param(
            '- press: {digits: "12"}', Press("12", DEFAULT_DIGIT_GAP), id="press-default-gap"
        ),
        pytest.param('- press: {digits: "1234#", gap: 0.5s}', Press("1234#", 0.5), id="press-gap"),
        pytest.param('- press: {digits: "12", gap: 0}', Press("12", 0.0), id="press-no-gap"),
        pytest.param("- press: {digits: 7, gap: 100ms}", Press("7", 0.1), id="press-gap-ms"),
        pytest.param('- say: "sales"', Say("sales"), id="say"),
        pytest.param("- say: customer support", Say("customer support"), id="say-words"),
        pytest.param("- say: 42", Say("42"), id="say-number"),
        pytest.param("- silence: 6s", Silence(6.0), id="silence"),
        pytest.param("- silence: 500ms", Silence(0.5), id="silence-ms"),
        pytest.param("- silence: 1.5", Silence(1.5), id="silence-number"),
        pytest.param("- talk: 4s", Talk(4.0), id="talk"),
        pytest.param("- talk: 2m", Talk(120.0), id="talk-minutes"),
        pytest.param('- talk: {for: 30s, then: "#"}', Talk(30.0, "#"), id="talk-then"),
        pytest.param("- talk: {for: 3}", Talk(3.0), id="talk-for-only"),
        pytest.param("- talk: {for: 3, then: null}", Talk(3.0), id="talk-then-null"),
        pytest.param('- talk: {for: 3, then: ""}', Talk(3.0), id="talk-then-empty"),
        pytest.param("- hangup", HangUp(), id="hangup"),
        pytest.param("- hangup:", HangUp(), id="hangup-empty-mapping"),
        pytest.param(
            "- hangup: {during: playPrompt, after: 1.5s}",
            HangUp(ActionType.PLAY_PROMPT, 1.5),
            id="hangup-during-play-prompt",
        ),
        pytest.param(
            "- hangup: {during: recognize}", HangUp(ActionType.RECOGNIZE, 0.0), id="hangup-during"
        ),
        pytest.param(
            "- hangup: {during: Record, after: 2}", HangUp(ActionType.RECORD, 2.0), id="any-case"
        ),
        pytest.param("- hangup: {after: 3s}", HangUp(None, 3.0), id="hangup-after"),
    ],
)
def test_from_data_step_forms(text: str, step: Step) -> None:
    assert CallerScript.from_data(yaml.safe_load(text)).steps == (step,)


def test_from_data_empty_list() -> None:
    assert CallerScript.from_data([]) == CallerScript()


def test_from_data_accepts_json_parsed_data_too() -> None:
    data = [{"press": {"digits": "1", "gap": 1}}, {"silence": 2}, "hangup"]
    assert CallerScript.from_data(data).steps == (Press("1", 1.0), Silence(2.0), HangUp())


def test_of_builds_a_script_from_steps() -> None:
    assert CallerScript.of(Listen(), Press("1")) == CallerScript((Listen(), Press("1")))


def test_a_script_is_immutable() -> None:
    script = CallerScript.of(Listen())
    with pytest.raises(AttributeError):
        script.steps = ()  # type: ignore[misc]


# --- the inline form ---------------------------------------------------------------------------


def test_from_inline_reads_the_docstring_example() -> None:
    script = CallerScript.from_inline("press 2; silence 6s; say sales; talk 4s; hangup")
    assert script.steps == (Press("2"), Silence(6.0), Say("sales"), Talk(4.0), HangUp())


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        pytest.param("", (), id="empty"),
        pytest.param(" ; ;", (), id="only-separators"),
        pytest.param("listen", (Listen(),), id="listen"),
        pytest.param("say customer support", (Say("customer support"),), id="several-words"),
        pytest.param("say  spaced   out ", (Say("spaced   out"),), id="inner-spaces-kept"),
        pytest.param("  press 1 ;listen;;hangup;", (Press("1"), Listen(), HangUp()), id="spacing"),
        pytest.param("press 12#", (Press("12#"),), id="press-symbols"),
        pytest.param("silence 500ms; talk 1.5", (Silence(0.5), Talk(1.5)), id="durations"),
    ],
)
def test_from_inline_forms(text: str, steps: tuple[Step, ...]) -> None:
    assert CallerScript.from_inline(text).steps == steps


def test_from_inline_and_from_data_agree() -> None:
    inline = CallerScript.from_inline("listen; press 2; say sales; silence 6s; talk 4s; hangup")
    data = CallerScript.from_data(
        yaml.safe_load(
            """
            - listen
            - press: "2"
            - say: sales
            - silence: 6s
            - talk: 4s
            - hangup
            """
        )
    )
    assert inline == data


# --- durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        pytest.param("6s", 6.0, id="seconds"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("1.5", 1.5, id="decimal-string"),
        pytest.param(2, 2.0, id="int"),
        pytest.param(0.25, 0.25, id="float"),
        pytest.param("2m", 120.0, id="minutes"),
        pytest.param("2min", 120.0, id="min"),
        pytest.param(".5s", 0.5, id="leading-dot"),
        pytest.param(" 3 s ", 3.0, id="spaces"),
        pytest.param("0", 0.0, id="zero"),
        pytest.param("1.5s", 1.5, id="decimal-seconds"),
        pytest.param(24 * 3600, 86400.0, id="24h"),
    ],
)
def test_parse_duration(value: object, seconds: float) -> None:
    assert parse_duration(value, "here") == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("6x", "expected a duration such as 6s or 500ms, got '6x'", id="bad-unit"),
        pytest.param("soon", "expected a duration such as 6s or 500ms, got 'soon'", id="words"),
        pytest.param(
            "-1s", "expected a duration such as 6s or 500ms, got '-1s'", id="negative-text"
        ),
        pytest.param("1e3", "expected a duration such as 6s or 500ms, got '1e3'", id="exponent"),
        pytest.param("", "expected a duration such as 6s or 500ms, got ''", id="empty"),
        pytest.param(None, "expected a duration such as 6s or 500ms, got None", id="none"),
        pytest.param([1], "expected a duration such as 6s or 500ms, got [1]", id="list"),
        pytest.param(True, "expected a duration such as 6s or 500ms, got a boolean", id="bool"),
        pytest.param(-1, "duration -1 is outside 0 to 24h", id="negative-number"),
        pytest.param(86401, "duration 86401 is outside 0 to 24h", id="over-a-day"),
        pytest.param("25h", "expected a duration such as 6s or 500ms, got '25h'", id="hours"),
        pytest.param(math.nan, "duration nan is outside 0 to 24h", id="nan"),
        pytest.param(math.inf, "duration inf is outside 0 to 24h", id="inf"),
    ],
)
def test_parse_duration_errors(value: object, message: str) -> None:
    with pytest.raises(CallerScriptError) as info:
        parse_duration(value, "caller[3].silence")
    assert info.value.where == "caller[3].silence"
    assert info.value.message == message


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        pytest.param(
            ["prees"], "caller[0]", "unknown step 'prees' (did you mean 'press'?)", id="typo-bare"
        ),
        pytest.param(
            [{"prees": "1"}],
            "caller[0]",
            "unknown step 'prees' (did you mean 'press'?)",
            id="typo-key",
        ),
        pytest.param(
            ["listen", {"sya": "hi"}],
            "caller[1]",
            "unknown step 'sya' (did you mean 'say'?)",
            id="sya",
        ),
        pytest.param(
            ["hangpu"], "caller[0]", "unknown step 'hangpu' (did you mean 'hangup'?)", id="hangpu"
        ),
        pytest.param(["xyzzy"], "caller[0]", "unknown step 'xyzzy'", id="unknown-no-hint"),
        pytest.param([{1: "x"}], "caller[0]", "unknown step '1'", id="number-key"),
        pytest.param(
            ["press"], "caller[0]", "'press' needs an argument, e.g. press: \"2\"", id="press-bare"
        ),
        pytest.param(
            ["say"], "caller[0]", "'say' needs an argument, e.g. say: \"sales\"", id="say-bare"
        ),
        pytest.param(
            ["silence"],
            "caller[0]",
            "'silence' needs an argument, e.g. silence: 6s",
            id="silence-bare",
        ),
        pytest.param(
            ["talk"], "caller[0]", "'talk' needs an argument, e.g. talk: 4s", id="talk-bare"
        ),
        pytest.param(
            [{"press": "1", "say": "x"}],
            "caller[0]",
            "a step has exactly one key, got: press, say",
            id="two-keys",
        ),
        pytest.param([{}], "caller[0]", "a step has exactly one key, got: ", id="empty-mapping"),
        pytest.param(
            [42], "caller[0]", "expected a step name or a mapping, got a number (42)", id="number"
        ),
        pytest.param(
            [None], "caller[0]", "expected a step name or a mapping, got nothing", id="null"
        ),
        pytest.param(
            [["press"]], "caller[0]", "expected a step name or a mapping, got a list", id="list"
        ),
        pytest.param(
            "press 1",
            "caller",
            "expected a list of steps, got a string ('press 1')",
            id="not-a-list",
        ),
        pytest.param(
            {"press": "1"},
            "caller",
            "expected a list of steps, got a mapping",
            id="mapping-not-list",
        ),
        pytest.param(
            [{"listen": "x"}], "caller[0].listen", "listen takes no argument", id="listen-arg"
        ),
        pytest.param(
            [{"press": {"digits": "1", "gapp": "1s"}}],
            "caller[0].press",
            "unknown key 'gapp' (did you mean 'gap'?) (expected: digits, gap, after)",
            id="press-bad-key",
        ),
        pytest.param(
            [{"press": {"gap": "1s"}}], "caller[0].press", "expected 'digits'", id="press-no-digits"
        ),
        pytest.param(
            [{"press": {"digits": "1", "gap": "soon"}}],
            "caller[0].press.gap",
            "expected a duration such as 6s or 500ms, got 'soon'",
            id="press-bad-gap",
        ),
        pytest.param(
            [{"press": "12x"}],
            "caller[0].press",
            "'x' is not a key (0-9 * # A B C D)",
            id="bad-digit",
        ),
        pytest.param(
            [{"press": "a"}],
            "caller[0].press",
            "'a' is not a key (0-9 * # A B C D)",
            id="lowercase",
        ),
        pytest.param(
            [{"press": ""}], "caller[0].press", "expected at least one key to press", id="no-keys"
        ),
        pytest.param(
            [{"press": True}],
            "caller[0].press",
            'expected keys such as "1234#", got a boolean',
            id="press-bool",
        ),
        pytest.param(
            [{"press": -1}],
            "caller[0].press",
            'expected keys such as "1234#", got a number (-1)',
            id="press-negative",
        ),
        pytest.param(
            [{"say": ""}],
            "caller[0].say",
            "expected the words to say, got a string ('')",
            id="say-empty",
        ),
        pytest.param(
            [{"say": True}],
            "caller[0].say",
            "expected the words to say, got a boolean",
            id="say-bool",
        ),
        pytest.param(
            [{"say": None}],
            "caller[0].say",
            "expected the words to say, got nothing",
            id="say-null",
        ),
        pytest.param(
            [{"silence": "6x"}],
            "caller[0].silence",
            "expected a duration such as 6s or 500ms, got '6x'",
            id="silence-bad",
        ),
        pytest.param(
            [{"talk": {"for": "x"}}],
            "caller[0].talk.for",
            "expected a duration such as 6s or 500ms, got 'x'",
            id="talk-bad-for",
        ),
        pytest.param(
            [{"talk": {"then": "#"}}],
            "caller[0].talk",
            "expected 'for' (how long to talk)",
            id="talk-no-for",
        ),
        pytest.param(
            [{"talk": {"fro": "3s"}}],
            "caller[0].talk",
            "unknown key 'fro' (did you mean 'for'?) (expected: for, then)",
            id="talk-bad-key",
        ),
        pytest.param(
            [{"talk": {"for": "3s", "then": "#x"}}],
            "caller[0].talk.then",
            "'x' is not a key (0-9 * # A B C D)",
            id="talk-bad-then",
        ),
        pytest.param(
            [{"hangup": "now"}],
            "caller[0].hangup",
            "expected {during: playPrompt, after: 1.5s}, got a string ('now')",
            id="hangup-string",
        ),
        pytest.param(
            [{"hangup": {"durring": "record"}}],
            "caller[0].hangup",
            "unknown key 'durring' (did you mean 'during'?) (expected: during, after)",
            id="hangup-bad-key",
        ),
        pytest.param(
            [{"hangup": {"during": "answer"}}],
            "caller[0].hangup.during",
            "expected one of playPrompt, recognize, record, got 'answer'",
            id="hangup-during-answer",
        ),
        pytest.param(
            [{"hangup": {"during": "dance"}}],
            "caller[0].hangup.during",
            "expected one of playPrompt, recognize, record, got 'dance'",
            id="hangup-during-unknown",
        ),
        pytest.param(
            [{"hangup": {"during": 3}}],
            "caller[0].hangup.during",
            "expected one of playPrompt, recognize, record, got 3",
            id="hangup-during-number",
        ),
        pytest.param(
            [{"hangup": {"during": "record", "after": "later"}}],
            "caller[0].hangup.after",
            "expected a duration such as 6s or 500ms, got 'later'",
            id="hangup-bad-after",
        ),
    ],
)
def test_from_data_errors(data: object, where: str, message: str) -> None:
    with pytest.raises(CallerScriptError) as info:
        CallerScript.from_data(data)
    assert info.value.where == where
    assert info.value.message == message
    assert str(info.value) == f"{where}: {message}"


# --- reactive when rules -----------------------------------------------------------------------

REACTIVE = """
steps:
  - listen
  - press: "1234#"
when:
  - prompt: main menu
    do: [{press: "1"}]
  - prompt: "^goodbye"
    do: [hangup]
    once: true
"""


def test_from_data_reads_steps_and_when_rules() -> None:
    script = CallerScript.from_data(yaml.safe_load(REACTIVE))
    assert script == CallerScript(
        (Listen(), Press("1234#")),
        (WhenRule("main menu", (Press("1"),)), WhenRule("^goodbye", (HangUp(),), once=True)),
    )


@pytest.mark.parametrize(
    ("data", "steps", "rules"),
    [
        pytest.param({"steps": ["listen"]}, (Listen(),), (), id="steps-only"),
        pytest.param({"when": []}, (), (), id="when-only"),
        pytest.param({"when": [{"prompt": "x", "do": []}]}, (), (WhenRule("x"),), id="empty-do"),
    ],
)
def test_from_data_mapping_forms(
    data: object, steps: tuple[Step, ...], rules: tuple[WhenRule, ...]
) -> None:
    assert CallerScript.from_data(data) == CallerScript(steps, rules)


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        pytest.param(
            {"steps": [], "rules": []},
            "caller",
            "unknown key 'rules' (expected: steps, when)",
            id="unknown-key",
        ),
        pytest.param(
            {"when": {"prompt": "x"}},
            "caller.when",
            "expected a list of rules, got a mapping",
            id="when-not-a-list",
        ),
        pytest.param(
            {"when": ["x"]},
            "caller.when[0]",
            "expected a rule {prompt, do, once}, got a string ('x')",
            id="rule-not-a-mapping",
        ),
        pytest.param({"when": [{"do": []}]}, "caller.when[0]", "expected 'prompt'", id="no-prompt"),
        pytest.param({"when": [{"prompt": "x"}]}, "caller.when[0]", "expected 'do'", id="no-do"),
        pytest.param(
            {"when": [{"prompt": "x", "do": [], "onse": True}]},
            "caller.when[0]",
            "unknown key 'onse' (did you mean 'once'?) (expected: prompt, do, once)",
            id="misspelt-once",
        ),
        pytest.param(
            {"when": [{"prompt": "", "do": []}]},
            "caller.when[0].prompt",
            "expected a regular expression, got a string ('')",
            id="empty-prompt",
        ),
        pytest.param(
            {"when": [{"prompt": "a(", "do": []}]},
            "caller.when[0].prompt",
            "not a valid regular expression: missing ), unterminated subpattern at position 1",
            id="bad-regex",
        ),
        pytest.param(
            {"when": [{"prompt": "x", "do": [], "once": "yes"}]},
            "caller.when[0].once",
            "expected true or false, got a string ('yes')",
            id="once-not-a-boolean",
        ),
        pytest.param(
            {"when": [{"prompt": "x", "do": ["prees"]}]},
            "caller.when[0].do[0]",
            "unknown step 'prees' (did you mean 'press'?)",
            id="bad-step-in-do",
        ),
        pytest.param(
            {"steps": "listen"},
            "caller.steps",
            "expected a list of steps, got a string ('listen')",
            id="steps-not-a-list",
        ),
    ],
)
def test_from_data_rule_errors(data: object, where: str, message: str) -> None:
    with pytest.raises(CallerScriptError) as info:
        CallerScript.from_data(data)
    assert (info.value.where, info.value.message) == (where, message)


def test_a_when_rule_refuses_a_bad_regular_expression() -> None:
    with pytest.raises(CallerScriptError, match="not a valid regular expression"):
        WhenRule("[unclosed")


@pytest.mark.parametrize(
    ("heard", "used", "index"),
    [
        pytest.param("Welcome! Main Menu: press 1", frozenset(), 0, id="first-match-any-case"),
        pytest.param("main menu", frozenset({0}), 1, id="a-used-once-rule-is-skipped"),
        pytest.param("goodbye", frozenset(), 2, id="a-later-rule"),
        pytest.param("goodbye", frozenset({2}), 2, id="used-matters-only-for-once-rules"),
        pytest.param("please hold", frozenset(), None, id="no-match"),
        pytest.param("", frozenset(), None, id="nothing-heard"),
    ],
)
def test_rule_for(heard: str, used: frozenset[int], index: int | None) -> None:
    script = CallerScript(
        (),
        (
            WhenRule("main menu", once=True),
            WhenRule("menu|hold on"),
            WhenRule("^goodbye$"),
        ),
    )
    assert script.rule_for(heard, used) == index


def test_from_data_error_names_the_offending_index() -> None:
    data = yaml.safe_load("- listen\n- press: 1\n- say: hi\n- silence: forever\n")
    with pytest.raises(CallerScriptError) as info:
        CallerScript.from_data(data)
    assert info.value.where == "caller[3].silence"


def test_from_data_error_uses_the_given_where() -> None:
    with pytest.raises(CallerScriptError) as info:
        CallerScript.from_data(["prees"], where="scenarios[2].caller")
    assert info.value.where == "scenarios[2].caller[0]"


def test_caller_script_error_is_a_botemu_error() -> None:
    with pytest.raises(BotemuError):
        CallerScript.from_data(["prees"])


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param(
            "press 1; prees 2",
            "step 2 ('prees 2')",
            "unknown step 'prees' (did you mean 'press'?)",
            id="typo",
        ),
        pytest.param(
            "press 1;; silence soon",
            "step 3 ('silence soon').silence",
            "expected a duration such as 6s or 500ms, got 'soon'",
            id="bad-duration-counts-empty-parts",
        ),
        pytest.param(
            "press", "step 1 ('press')", "'press' needs an argument, e.g. press: \"2\"", id="no-arg"
        ),
        pytest.param(
            "listen now",
            "step 1 ('listen now').listen",
            "listen takes no argument",
            id="listen-arg",
        ),
        pytest.param(
            "hangup now",
            "step 1 ('hangup now').hangup",
            "expected 'hangup [during ACTION] [after DURATION]'",
            id="hangup-arg",
        ),
        pytest.param(
            "press 12x",
            "step 1 ('press 12x').press",
            "'x' is not a key (0-9 * # A B C D)",
            id="bad-key",
        ),
    ],
)
def test_from_inline_errors(text: str, where: str, message: str) -> None:
    with pytest.raises(CallerScriptError) as info:
        CallerScript.from_inline(text)
    assert info.value.where == where
    assert info.value.message == message


def test_parse_step_where_is_extended_with_the_step_name() -> None:
    with pytest.raises(CallerScriptError) as info:
        parse_step({"talk": {"for": "1s", "then": "?"}}, "scenario 'x' step 4")
    assert info.value.where == "scenario 'x' step 4.talk.then"


# --- describe ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "text"),
    [
        pytest.param(Listen(), "listen", id="listen"),
        pytest.param(Press("12#"), "press 12#", id="press"),
        pytest.param(Press("12", 0.5), "press 12 gap 0.5s", id="press-gap"),
        pytest.param(Say("customer support"), "say customer support", id="say"),
        pytest.param(Silence(6.0), "silence 6s", id="silence"),
        pytest.param(Silence(0.5), "silence 0.5s", id="silence-fraction"),
        pytest.param(Talk(4.0), "talk 4s", id="talk"),
        pytest.param(Talk(30.0, "#"), "talk 30s then #", id="talk-then"),
        pytest.param(HangUp(), "hangup", id="hangup"),
        pytest.param(
            HangUp(ActionType.PLAY_PROMPT, 1.5),
            "hangup during playPrompt after 1.5s",
            id="hangup-during",
        ),
    ],
)
def test_describe(step: Step, text: str) -> None:
    assert describe(step) == text


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(Listen(), id="listen"),
        pytest.param(Press("12#"), id="press"),
        pytest.param(Say("customer support"), id="say"),
        pytest.param(Silence(0.5), id="silence"),
        pytest.param(Talk(4.0), id="talk"),
        pytest.param(HangUp(), id="hangup"),
    ],
)
def test_describe_is_the_inline_form(step: Step) -> None:
    assert CallerScript.from_inline(describe(step)).steps == (step,)


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(Press("12", 0.5), id="press-gap"),
        pytest.param(Talk(30.0, "#"), id="talk-then"),
        pytest.param(HangUp(ActionType.PLAY_PROMPT, 1.5), id="hangup-during"),
    ],
)
def test_describe_is_the_inline_form_for_steps_with_options(step: Step) -> None:
    assert CallerScript.from_inline(describe(step)).steps == (step,)


def _all_forms() -> list[Any]:
    return list(yaml.safe_load(DOCSTRING_SCENARIO)["caller"])


def test_describe_covers_every_step_of_a_script() -> None:
    script = CallerScript.from_data(_all_forms())
    assert [describe(s) for s in script.steps] == [
        "listen",
        "press 2",
        "press 1234# gap 0.5s",
        "say sales",
        "silence 6s",
        "talk 4s",
        "talk 30s then #",
        "hangup",
        "hangup during playPrompt after 1.5s",
    ]
