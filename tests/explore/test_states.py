"""States of a call flow: what a caller observes at a waiting point, normalised so that one
menu heard twice is one state, and the moves from each, every one a valid caller script."""

from __future__ import annotations

import pytest

from emulator.calling.caller import CallerScript
from emulator.calling.model import (
    CollectDigits,
    PlayPrompt,
    Prompt,
    RecognitionOption,
    Recognize,
    Record,
)
from emulator.explore.edges import moves
from emulator.explore.states import Masker, MaskError, State, distinct, observe


def play(*texts: str) -> PlayPrompt:
    return PlayPrompt(operation_id="p", prompts=tuple(Prompt(value=t) for t in texts))


def menu(text: str, *choices: tuple[str, str | None, tuple[str, ...]]) -> Recognize:
    return Recognize(
        operation_id="m",
        play_prompt=play(text),
        choices=tuple(
            RecognitionOption(name=n, dtmf_variation=d, speech_variation=s) for n, d, s in choices
        ),
    )


SALES = ("sales", "1", ("sales", "buy"))
SUPPORT = ("support", "2", ("support",))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("You have 3 messages.", "you  have 14 messages."),
        ("Your balance is $1,250.00 today.", "Your balance is $7.5 today."),
        (
            "Call ref 3f2a9c1e-0b4d-4e6a-9c7d-1b2e3f4a5b6c.",
            "Call ref 9a8b7c6d-0b4d-4e6a-9c7d-1b2e3f4a5b6c.",
        ),
        ("Opened at 10:30 on 2026-11-25.", "Opened at 9:05 on 2027-01-02."),
        ("Your code is deadbeef42.", "Your code is 0a1b2c3d4e5f."),
    ],
)
def test_volatile_parts_of_a_prompt_make_one_state(a: str, b: str) -> None:
    assert observe(menu(a, SALES)).key == observe(menu(b, SALES)).key


def test_different_words_or_choices_are_different_states() -> None:
    one = observe(menu("Main menu.", SALES, SUPPORT))
    assert one.key != observe(menu("Billing menu.", SALES, SUPPORT)).key
    assert one.key != observe(menu("Main menu.", SALES)).key
    assert one.id == observe(menu("main   MENU.", SALES, SUPPORT)).id and len(one.id) == 12


def test_the_users_masks_come_first_and_are_bounded() -> None:
    masker = Masker(extra=(r"\b(?:alice|bob)\b",))
    assert masker.text("Hello Alice, you have 2 calls") == "hello <masked>, you have # calls"
    with pytest.raises(MaskError, match="mask pattern '\\(unclosed'"):
        Masker(extra=("(unclosed",))
    with pytest.raises(MaskError, match="at most 50"):
        Masker(extra=tuple(f"x{i}" for i in range(51)))


def test_prompts_heard_before_the_wait_are_part_of_the_state() -> None:
    greeting = play("Welcome to Contoso.")
    alone, after = (
        observe(menu("Main menu.", SALES)),
        observe(menu("Main menu.", SALES), [greeting]),
    )
    assert after.prompts == ("welcome to contoso.", "main menu.") and alone.key != after.key


def test_a_file_prompt_is_its_name_and_a_silence_is_a_silence() -> None:
    action = Recognize(operation_id="m", play_prompt=PlayPrompt(operation_id="p", prompts=(
        Prompt(file_uri="https://cdn.example/audio/Menu.wav?sig=abc123"),
        Prompt(silence_length_in_milliseconds=500),
    )), choices=(RecognitionOption(name="x", dtmf_variation="1"),))  # fmt: skip
    assert observe(action).prompts == ("<file menu.wav>", "<silence>")


def test_the_moves_of_a_menu() -> None:
    state = observe(menu("Main menu.", SALES, SUPPORT))
    labels = [m.label for m in moves(state)]
    assert labels == ["press 1", "say sales", "press 2", "say support", "wrong key 0",
                      "silence 6s", "hang up"]  # fmt: skip


def test_the_moves_of_digits_and_of_a_record() -> None:
    digits = observe(Recognize(operation_id="d", play_prompt=play("Your account number?"),
                               collect_digits=CollectDigits(max_number_of_dtmfs=8, stop_tones=("#",)),
                               initial_silence_timeout_in_seconds=4))  # fmt: skip
    assert digits.kind == "digits"
    assert [m.script for m in moves(digits)] == [
        "press 12345678#",
        "press #",
        "silence 5s",
        "hangup",
    ]
    record = observe(Record(operation_id="r", play_prompt=play("Leave a message."),
                            stop_tones=("#",), initial_silence_timeout_in_seconds=3))  # fmt: skip
    assert [m.script for m in moves(record)] == [
        "talk 3s; silence 4s",
        "talk 3s; press #",
        "silence 4s",
        "hangup",
    ]


@pytest.mark.parametrize(
    "state",
    [
        observe(menu("m", SALES, SUPPORT)),
        observe(Recognize(operation_id="d", collect_digits=CollectDigits())),
        observe(Record(operation_id="r")),
    ],
)
def test_every_move_is_a_caller_script(state: State) -> None:
    for move in moves(state):
        assert CallerScript.from_inline(move.script).steps


def test_distinct_keeps_the_first_of_each_state() -> None:
    a, b = observe(menu("You have 2 messages", SALES)), observe(menu("You have 3 messages", SALES))
    assert distinct([a, b, observe(menu("Other", SALES))]) == [a, observe(menu("Other", SALES))]
