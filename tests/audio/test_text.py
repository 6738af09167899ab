"""sayAs as eSpeak reads it (emulator/audio/text.py)."""

from __future__ import annotations

import pytest

from emulator.audio.text import ordinal, spoken_text


@pytest.mark.parametrize(
    ("text", "say_as", "spoken"),
    [
        ("555-0100", "telephone", "5 5 5, 0 1 0 0"),
        ("1234", "telephone", "1 2 3 4"),
        ("ABC", "letters", "A B C"),
        ("2024-03-05", "yearMonthDay", "March 5th, 2024"),
        ("03/05/2024", "monthDayYear", "March 5th, 2024"),
        ("05.03.2024", "dayMonthYear", "March 5th, 2024"),
        ("2024-03", "yearMonth", "March, 2024"),
        ("3/2024", "monthYear", "March, 2024"),
        ("12/25", "monthDay", "December 25th"),
        ("25/12", "dayMonth", "December 25th"),
        ("1", "day", "1st"),
        ("11", "month", "November"),
        ("2024-13-01", "yearMonthDay", "2024-13-01"),  # no 13th month: as written
        ("tomorrow", "monthDay", "tomorrow"),
        ("3 and 22", "ordinal", "3rd and 22nd"),
        ("1234", "cardinal", "1234"),
        ("14:30", "time24", "14:30"),
        ("Hello", None, "Hello"),
        ("---", "telephone", "---"),
    ],
)
def test_say_as(text: str, say_as: str | None, spoken: str) -> None:
    assert spoken_text(text, say_as) == spoken


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd", "111th",
    ]  # fmt: skip
