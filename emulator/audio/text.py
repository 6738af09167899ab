"""What eSpeak is given for a prompt's text and ``sayAs``: plain text rewritten so that it is
read the way the hint asks (eSpeak NG reads plain text; its SSML ``say-as`` knows characters and
digits but no dates, so every hint is rendered here the same way).

- ``telephone`` and ``letters``: character by character (``555-0100`` is "5 5 5, 0 1 0 0");
- ``ordinal``: each whole number with its suffix (``3`` is "3rd", read "third");
- the dates (``yearMonthDay``, ``monthDayYear``, ``dayMonthYear``, ``yearMonth``, ``monthYear``,
  ``monthDay``, ``dayMonth``, ``day``, ``month``): the numbers of the text taken in the hint's
  order, as "March 5th, 2024"; text that does not read as that date is left as it is;
- ``cardinal``, ``year``, ``time12``, ``time24``, ``name``, ``phoneticName``, none: as written
  (eSpeak reads numbers, years and clock times itself).
"""

from __future__ import annotations

import re
from typing import Final

MONTHS: Final = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

_DATE_ORDERS: Final = {
    "yearMonthDay": "ymd",
    "monthDayYear": "mdy",
    "dayMonthYear": "dmy",
    "yearMonth": "ym",
    "monthYear": "my",
    "monthDay": "md",
    "dayMonth": "dm",
    "day": "d",
    "month": "m",
}
_NUMBER = re.compile(r"\d+")
_GROUPS = re.compile(r"[^\W_]+")


def spoken_text(text: str, say_as: str | None) -> str:
    """``text`` as eSpeak should read it under the ``say_as`` hint (its wire value)."""
    if say_as in ("telephone", "letters"):
        return ", ".join(" ".join(group) for group in _GROUPS.findall(text)) or text
    if say_as == "ordinal":
        return _NUMBER.sub(lambda m: ordinal(int(m.group())), text)
    order = _DATE_ORDERS.get(say_as or "")
    if order is not None:
        return _date(text, order) or text
    return text


def ordinal(n: int) -> str:
    """``n`` with its English suffix: 1st, 2nd, 3rd, 4th, 11th, 22nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _date(text: str, order: str) -> str | None:
    numbers = [int(n) for n in _NUMBER.findall(text)]
    if len(numbers) != len(order):
        return None
    parts = dict(zip(order, numbers, strict=True))
    year, month, day = parts.get("y"), parts.get("m"), parts.get("d")
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    words = [MONTHS[month - 1]] if month is not None else []
    if day is not None:
        words.append(ordinal(day))
    spoken = " ".join(words)
    if year is not None:
        spoken = f"{spoken}, {year}" if spoken else str(year)
    return spoken if month is not None or day is not None else None
