"""``${name}`` variables: finding and substituting them (emulator/scenario/variables.py), and what
the loader makes of them: values everywhere, unknown names at their exact position."""

from __future__ import annotations

import pytest

from emulator.calling.caller import Press, Say, Silence
from emulator.scenario import ScenarioError, load_scenario_text
from emulator.scenario.model import TextMatch, Turn
from emulator.scenario.variables import Reference, expand, references, substitute


def errors(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_text(text, "v.yaml")
    return [f"{e.line}:{e.column}: {e.message}" for e in caught.value.errors]


# --- the module --------------------------------------------------------------------------------


def test_references_in_order_with_their_occurrence() -> None:
    data = {"a": "${x} and ${y} and ${x}", "b": ["$${x}", {"c": "${1x}"}], "d": 5}
    assert list(references(data)) == [
        Reference(("a",), "${x}", "x", 0),
        Reference(("a",), "${y}", "y", 0),
        Reference(("a",), "${x}", "x", 1),
        Reference(("b", 1, "c"), "${1x}", "1x", 0),
    ]
    assert [r.valid for r in references(data)] == [True, True, True, False]


def test_references_skip_subtrees() -> None:
    data = {"variables": {"a": "${b}"}, "name": "${a}"}
    assert [r.name for r in references(data, skip=[("variables",)])] == ["a"]


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        pytest.param("${pin}#", "1234#", id="one"),
        pytest.param("${pin}${pin}", "12341234", id="twice"),
        pytest.param("$${pin}", "${pin}", id="escaped"),
        pytest.param("cost: $5 {not} ${", "cost: $5 {not} ${", id="no-reference"),
        pytest.param("${other}", "${other}", id="unknown-left-as-written"),
        pytest.param("${loop}", "${pin}", id="one-pass"),
    ],
)
def test_expand(text: str, expanded: str) -> None:
    assert expand(text, {"pin": "1234", "loop": "${pin}"}) == expanded


def test_substitute_copies_and_skips() -> None:
    data = {"variables": {"v": "${v}"}, "steps": [{"say": "${v}"}, 3, None, True]}
    out = substitute(data, {"v": "hi"}, skip=[("variables",)])
    assert out == {"variables": {"v": "${v}"}, "steps": [{"say": "hi"}, 3, None, True]}
    assert data["steps"] == [{"say": "${v}"}, 3, None, True]


# --- in scenario files -------------------------------------------------------------------------


def test_variables_are_substituted_in_every_string() -> None:
    text = (
        "name: ${who} calls\n"
        "description: about ${who}\n"
        "tags: ['${tag}']\n"
        "variables:\n"
        "  who: Ann\n"
        "  tag: smoke\n"
        '  pin: "0042"\n'
        "  wait: '3'\n"
        "caller:\n"
        "  steps:\n"
        "    - say: hello, I am ${who}\n"
        '    - press: "${pin}#"\n'
        "    - silence: ${wait}s\n"
        "  when: [{prompt: '${who}', do: [{press: '${pin}'}]}]\n"
        "expect:\n"
        "  prompts: {items: ['Hi ${who}', {matches: '^${who}$'}]}\n"
    )
    scenario = load_scenario_text(text)
    assert (scenario.name, scenario.description, scenario.tags) == (
        "Ann calls",
        "about Ann",
        ("smoke",),
    )
    assert scenario.caller is not None
    assert scenario.caller.steps == (Say("hello, I am Ann"), Press("0042#"), Silence(3.0))
    assert scenario.caller.rules[0].pattern == "Ann"
    assert scenario.caller.rules[0].steps == (Press("0042"),)
    assert scenario.expect[0].items == (TextMatch(contains="Hi Ann"), TextMatch(matches="^Ann$"))  # type: ignore[union-attr]
    assert scenario.variables == ()  # no matrix: the id is the name
    assert scenario.id == "Ann calls"


def test_variables_reach_into_event_values() -> None:
    text = (
        "name: e\n"
        "variables: {lang: fr}\n"
        "messaging:\n"
        "  - event:\n"
        "      name: set-${lang}\n"
        "      value: {lang: '${lang}', list: ['${lang}', 1]}\n"
    )
    (turn,) = load_scenario_text(text).messaging or ()
    assert turn == Turn("event", name="set-fr", value={"lang": "fr", "list": ["fr", 1]}, line=4)


def test_a_dollar_brace_is_written_doubled() -> None:
    scenario = load_scenario_text("name: costs $${price}\ncaller: []\n")
    assert scenario.name == "costs ${price}"


def test_variable_values_are_taken_as_written() -> None:
    text = "name: ${a}\nvariables: {a: '${b}', b: x}\ncaller: []\n"
    assert load_scenario_text(text).name == "${b}"


BAD = [
    pytest.param(
        "name: x\ntags: [${tag}]\ncaller: []\n",
        ["2:8: a ${...} inside [...] or {...} must be quoted: write '...${name}...'"],
        id="unquoted-in-flow-style",
    ),
    pytest.param(
        "name: ${nmae}\nvariables: {name: x}\ncaller: []\n",
        ["1:7: unknown variable 'nmae' (did you mean 'name'?)"],
        id="unknown-with-hint",
    ),
    pytest.param(
        "name: x\ncaller:\n  - say: 'hello ${who}'\n",
        ["3:17: unknown variable 'who': define it under variables"],
        id="unknown-in-a-quoted-string",
    ),
    pytest.param(
        "name: x\nvariables: {a: '1'}\ncaller:\n  - say: ${a} ${a} ${b}\n",
        ["4:20: unknown variable 'b': define it under variables"],
        id="exact-column-after-others",
    ),
    pytest.param(
        "name: x\ncaller:\n  - say: ${b} and ${b}\n",
        [
            "3:10: unknown variable 'b': define it under variables",
            "3:19: unknown variable 'b': define it under variables",
        ],
        id="each-occurrence",
    ),
    pytest.param(
        "name: x\ndescription: >-\n  a long\n  text ${gone}\ncaller: []\n",
        ["4:8: unknown variable 'gone': define it under variables"],
        id="in-a-folded-block",
    ),
    pytest.param(
        "name: ${1st}\ncaller: []\n",
        [
            "1:7: '${1st}' is not a variable: a name is letters, digits and _, "
            "not starting with a digit"
        ],
        id="not-a-name",
    ),
    pytest.param(
        "name: x\nvariables:\n  pin: 1234\ncaller: []\n",
        ['3:8: expected the variable\'s value as text, got a number (1234); quote it: pin: "1234"'],
        id="a-number-value",
    ),
    pytest.param(
        "name: x\nvariables:\n  my-pin: '1'\ncaller: []\n",
        [
            "3:3: expected a variable name: letters, digits and _, not starting with a digit, "
            "got 'my-pin'"
        ],
        id="bad-name",
    ),
    pytest.param(
        "name: x\nvariables: [a]\ncaller: []\n",
        ['2:12: expected a mapping of variable names to values, such as {pin: "1234"}, got a list'],
        id="variables-not-a-mapping",
    ),
    pytest.param(
        "name: x\nvariables: {pin: '12x'}\ncaller:\n  - press: '${pin}'\n",
        ["4:12: expected keys such as \"1234#\" (0-9, *, #, A-D), got a string ('12x')"],
        id="a-value-that-makes-a-step-invalid",
    ),
    pytest.param(
        "name: x\nvariables: {t: soon}\ncaller:\n  - silence: ${t}\n",
        [
            "4:14: expected a duration such as 6s, 500ms, 2m or a number of seconds, "
            "got a string ('soon')"
        ],
        id="a-value-that-is-not-a-duration",
    ),
    pytest.param(
        "name: x\nvariables: {who: bot}\ncaller: []\nexpect:\n  call: {ended_by: '${who}'}\n",
        [
            "5:20: expected bot, caller or platform, or a list of them, got a string ('${who}')",
        ],
        id="not-in-a-field-with-fixed-values",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_variables(text: str, expected: list[str]) -> None:
    assert errors(text) == expected
