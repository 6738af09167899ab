"""``press: {digits, after}``: a key pressed a while into the turn (into a prompt that allows
barge-in), with no silence of the caller's before it: the moment a live caller pressed, written
as a step of the scenario language."""

from __future__ import annotations

import pytest

from emulator.calling.caller import CallerScript, Press, describe
from emulator.calling.events import CallerPressed, CallerSilent, PromptPlayed
from tests.calling.test_engine import events, menu, run


def test_a_press_after_a_pause_barges_in_that_far_into_the_prompt() -> None:
    long_menu = menu(bargeInAllowed=True,
                     playPrompt={"prompts": [{"value": " ".join(["word"] * 20)}]})  # fmt: skip
    result = run([long_menu], [{"press": {"digits": "1", "after": "3s"}}])
    (key,) = events(result, CallerPressed)
    (prompt,) = events(result, PromptPlayed)
    assert key.at == pytest.approx(3.0)
    assert prompt.interrupted and prompt.end == pytest.approx(3.0)  # cut where the key came
    assert events(result, CallerSilent) == []  # a pause, not a silence of the caller's


def test_press_after_reads_and_writes_back_in_both_forms() -> None:
    inline = CallerScript.from_inline("press 12 gap 0.5s after 3s; press 3 after 1.5s")
    data = CallerScript.from_data([{"press": {"digits": "12", "gap": "500ms", "after": "3s"}},
                                   {"press": {"digits": "3", "after": "1.5s"}}])  # fmt: skip
    assert inline.steps == data.steps == (Press("12", 0.5, 3.0), Press("3", after=1.5))
    assert [describe(s) for s in inline.steps] == ["press 12 gap 0.5s after 3s", "press 3 after 1.5s"]
    assert CallerScript.from_inline("; ".join(describe(s) for s in inline.steps)) == inline
