"""Masking volatile prompt text: the key is explore's, and the pattern matches the text with
other values in its volatile parts, and nothing else."""

from __future__ import annotations

import re

import pytest

from emulator.explore.states import Masker as ExploreMasker
from emulator.replay import masking
from emulator.replay.masking import DEFAULT_MASKER, Masker, MaskError, escape

TEXTS = [
    "You have 3 new messages.",
    "Your balance is 1,250.00 dollars, call +1 425 555 0100.",
    "Today is 2026-11-25 at 10:30, or 25/11/2026 10:30:15.",
    "Reference 3f2a9b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c and a1b2c3d4e5.",
    "For sales, press 1 or say sales.",
    "  Spaced   OUT\ttext 12  ",
    "No volatile part at all.",
    "deadbeef is a word, cafe1234 an id, 12:345 no time",
    "(1+2)*3 = [9] {ok} | ^$ \\ ?",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_key_is_the_key_explore_gives(text: str) -> None:
    assert DEFAULT_MASKER.text(text) == ExploreMasker().text(text)
    extra = ("sales", r"\bok\b")
    assert Masker(extra=extra).text(text) == ExploreMasker(extra=extra).text(text)


@pytest.mark.parametrize("text", TEXTS)
def test_the_pattern_matches_the_text_and_the_segments_make_it(text: str) -> None:
    assert re.search(DEFAULT_MASKER.pattern(text), text)
    assert "".join(piece for piece, _ in DEFAULT_MASKER.segments(text)) == text


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("You have 3 new messages.", "You have 12 new messages."),
        ("Your balance is 1,250.00 dollars.", "Your balance is 7.5 dollars."),
        ("Call +1 425 555 0100 now.", "Call 555-0199 now."),
        ("Today is 2026-11-25.", "Today is 3/1/27."),
        ("At 10:30 sharp.", "At 9:05:59 sharp."),
        ("Ref 3f2a9b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c.", "Ref 0000aaaa-1111-bbbb-2222-cccc3333dddd."),
    ],
)
def test_a_pattern_matches_other_values(text: str, other: str) -> None:
    pattern = DEFAULT_MASKER.pattern(text)
    assert re.search(pattern, other), pattern


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("You have 3 new messages.", "You have three new messages."),
        ("You have 3 new messages.", "You have 3 new messages. Goodbye."),
        ("You have 3 new messages.", "you have 3 new messages."),
        ("Press 1.", "Press 1!"),
    ],
)
def test_a_pattern_matches_nothing_else(text: str, other: str) -> None:
    assert not re.search(DEFAULT_MASKER.pattern(text), other)


def test_volatile_prefix_patterns_and_a_users_mask() -> None:
    assert not DEFAULT_MASKER.volatile("Goodbye.") and DEFAULT_MASKER.volatile("Room 5")
    assert DEFAULT_MASKER.pattern("Room 5, floor", whole=False) == r"^Room \+?\d[\d,.\s-]*, floor"
    masker = Masker(extra=("agent \\w+",))
    pattern = masker.pattern("Hello, agent Smith.")
    assert pattern == r"^Hello, (?i:agent \w+)\.$"
    assert re.search(pattern, "Hello, AGENT Jones.")


def test_escape_keeps_text_readable_and_exact() -> None:
    text = "a b, c. (1+2)*[3] {x} ^$ | \\ ? #"
    assert escape("a b, c.") == r"a b, c\."
    assert re.fullmatch(escape(text), text)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("(",), "mask pattern '(':"),
        (("x" * 501,), "longer than 500"),
        (("a",) * 51, "at most 50"),
    ],
)
def test_bad_masks_are_refused(extra: tuple[str, ...], message: str) -> None:
    with pytest.raises(MaskError, match=re.escape(message)):
        Masker(extra=extra)


def test_a_text_is_masked_and_said_once_and_what_is_kept_is_bounded_in_characters() -> None:
    """A prompt heard in every call is made once (the same objects again), as said and as its
    key; what a masker keeps is bounded in characters as well as texts (``MAX_MASKED_CHARS``:
    prompts of 750 KB, each with a number of its own, could keep 1.4 GB at 1,024 texts)."""
    masker = Masker()
    said = masker.said("You  owe\n 12 dollars.")
    assert (
        said == "You owe 12 dollars."
        and masker.text("You  owe\n 12 dollars.") == "you owe # dollars."
    )
    assert masker.said("You  owe\n 12 dollars.") is said
    long = "x" * 750_000
    for n in range(12):  # seven fit
        assert masker.said(f"{long}  {n}") == f"{long} {n}"
        kept = sum(len(k) + len(a) + len(b) for k, (a, b) in masker._masked.items())
        assert kept <= masking.MAX_MASKED_CHARS
    kept = dict(masker._masked)
    huge = "y" * (masking.MAX_MASKED_CHARS + 1)
    assert masker.text(huge) == huge and huge not in masker._masked  # too long to keep
    assert masker._masked == kept  # and what was kept stays
