"""How a replay expects a text the bot produced (a prompt, a reply): literally with ``equals``,
or, in loose mode when it has volatile parts, with a ``matches`` pattern from ``masking.py``. A
text longer than ``MAX_TEXT_CHARS`` is expected by its start: a pattern anchored at the start
only."""

from __future__ import annotations

import re

from emulator.patterns import compile_pattern
from emulator.replay.masking import Masker, escape
from emulator.replay.writing import flow, quote

MAX_TEXT_CHARS = 1_000


def text_match(text: str, *, strict: bool, masker: Masker) -> tuple[str, bool]:
    """The YAML flow mapping that expects ``text`` (``{equals: ...}`` or ``{matches: ...}``),
    and whether only its start is expected."""
    if len(text) > MAX_TEXT_CHARS:
        head = text[:MAX_TEXT_CHARS]
        pattern = "^" + escape(head) if strict else masker.pattern(head, whole=False)
        return flow([("matches", quote(_valid(pattern, head, whole=False)))]), True
    if strict or not masker.volatile(text):
        return flow([("equals", quote(text))]), False
    return flow([("matches", quote(_valid(masker.pattern(text), text)))]), False


def _valid(pattern: str, text: str, *, whole: bool = True) -> str:
    """``pattern`` if it compiles and matches ``text``, else ``text`` literally (a user's mask
    pattern can make a pattern that does neither)."""
    try:
        if compile_pattern(pattern).search(text) is not None:
            return pattern
    except (re.error, RecursionError, OverflowError):
        pass
    return "^" + escape(text) + ("$" if whole else "")
