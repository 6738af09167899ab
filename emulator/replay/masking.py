"""The volatile parts of prompt text (numbers, dates, times, ids), found once and used two ways:
masked into a key (``Masker.text``: what ``botemu explore`` names states by) or turned into a
regular expression that matches the same text with other values (``Masker.pattern``: what a
replayed scenario expects in loose mode).

The parts, in the order they are looked for (an earlier kind claims its text first):

============  =========================================================  ==========
kind          found by (ignoring case)                                   key
============  =========================================================  ==========
extra         each of the user's patterns (``Masker(extra=...)``)       ``<masked>``
id            a UUID; a hexadecimal run of 8 or more with a digit and    ``<id>``
              a letter
date          ``2026-11-25``, ``25/11/2026``                             ``<date>``
time          ``10:30``, ``10:30:15``                                    ``<time>``
number        ``3``, ``1,250.00``, ``+1 425 555 0100``                   ``#``
============  =========================================================  ==========

``Masker.text`` gives exactly the key of ``emulator.explore.states.Masker.text`` (case-folded,
white space made one space, each part replaced by its key), so explore can move to this module
without changing a state id. ``Masker.pattern`` keeps the text as written and replaces each part
by a pattern of its kind (a number: ``\\+?\\d[\\d,.\\s-]*``; a user's own pattern as
itself, ignoring case); the result is anchored (``^...$``) and is a Python regular expression, as
the scenario language's ``matches`` takes it (case-sensitive ``re.search``).

Pure: it imports only the standard library and ``emulator.patterns``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from emulator.patterns import compile_pattern

MAX_PATTERNS = 50
MAX_PATTERN_LENGTH = 500

ID = (
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"
)
DATE = r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
TIME = r"\b\d{1,2}:\d{2}(?::\d{2})?\b"
NUMBER = r"\+?\d[\d,.\s-]*\d|\d"


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of volatile part: how it is found, its key, and the pattern a scenario uses."""

    name: str
    finds: str
    key: str
    pattern: str


DEFAULT_KINDS: tuple[Kind, ...] = (
    Kind("id", ID, "<id>", r"[0-9A-Fa-f][0-9A-Fa-f-]{7,}"),
    Kind("date", DATE, "<date>", r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})"),
    Kind("time", TIME, "<time>", r"\d{1,2}:\d{2}(?::\d{2})?"),
    Kind("number", NUMBER, "#", r"\+?\d[\d,.\s-]*"),
)
DEFAULT_MASKS: tuple[tuple[str, str], ...] = tuple((k.finds, k.key) for k in DEFAULT_KINDS)
"""(pattern, key), as ``emulator.explore.states.DEFAULT_MASKS`` has them."""

MAX_MASKED = 1024
"""Distinct texts a ``Masker`` remembers the masked form of."""
MAX_MASKED_CHARS = 16 * 1024 * 1024
"""The characters a ``Masker`` remembers at most: each text with its masked and its said form
(about seven prompts of 750 KB; a longer text is not remembered)."""
_SPECIAL = frozenset("\\.^$*+?{}[]|()")


class MaskError(ValueError):
    """A user's mask pattern that is not a usable regular expression."""


Segment = tuple[str, Kind | None]
"""A piece of text, and the kind of volatile part it is (None: text kept as written)."""


@dataclass(frozen=True)
class Masker:
    """Finds the volatile parts of prompt text; ``extra``: the user's patterns, tried first."""

    extra: tuple[str, ...] = ()
    _kinds: tuple[tuple[re.Pattern[str], Kind], ...] = field(init=False, repr=False)
    _masked: dict[str, tuple[str, str]] = field(init=False, repr=False, compare=False)
    """``text``'s and ``said``'s answers: a prompt heard in many calls is masked once, and kept
    once (at most ``MAX_MASKED`` texts and ``MAX_MASKED_CHARS`` characters)."""
    _chars: list[int] = field(init=False, repr=False, compare=False)
    """The characters ``_masked`` holds."""

    def __post_init__(self) -> None:
        if len(self.extra) > MAX_PATTERNS:
            raise MaskError(f"at most {MAX_PATTERNS} mask patterns, got {len(self.extra)}")
        kinds = []
        for pattern in self.extra:
            if len(pattern) > MAX_PATTERN_LENGTH:
                raise MaskError(f"a mask pattern is longer than {MAX_PATTERN_LENGTH} characters")
            try:
                compiled = compile_pattern(pattern, re.IGNORECASE)
            except (re.error, RecursionError, OverflowError) as e:
                raise MaskError(f"mask pattern {pattern[:60]!r}: {e}") from None
            kinds.append((compiled, Kind("extra", pattern, "<masked>", f"(?i:{pattern})")))
        kinds += [(compile_pattern(k.finds, re.IGNORECASE), k) for k in DEFAULT_KINDS]
        object.__setattr__(self, "_kinds", tuple(kinds))
        object.__setattr__(self, "_masked", {})
        object.__setattr__(self, "_chars", [0])

    def segments(self, text: str) -> list[Segment]:
        """``text`` cut into plain pieces and volatile parts, in order; joined, they are
        ``text``. An empty match of a user's pattern masks nothing."""
        pieces: list[Segment] = [(text, None)]
        for compiled, kind in self._kinds:
            pieces = [part for piece in pieces for part in _split(piece, compiled, kind)]
        return [p for p in pieces if p[0]]

    def text(self, value: str) -> str:
        """The masked key of ``value``: case-folded, white space made one space, each volatile
        part replaced by its key (``<id>``, ``<date>``, ``<time>``, ``#``, ``<masked>``). The
        same text gives the same object (the texts last seen are remembered: ``_masked``)."""
        return self._forms(value)[0]

    def said(self, value: str) -> str:
        """``value`` as said: as written, its white space made one space (remembered with
        ``text``)."""
        return self._forms(value)[1]

    def _forms(self, value: str) -> tuple[str, str]:
        known = self._masked.get(value)
        if known is not None:
            return known
        said = " ".join(value.split())
        masked = "".join(
            kind.key if kind else piece for piece, kind in self.segments(said.casefold())
        )
        forms = (masked, said)
        size = len(value) + len(said) + len(masked)
        if size > MAX_MASKED_CHARS:
            return forms  # too long to keep: what is kept stays
        if len(self._masked) >= MAX_MASKED or self._chars[0] + size > MAX_MASKED_CHARS:
            self._masked.clear()
            self._chars[0] = 0
        self._masked[value] = forms
        self._chars[0] += size
        return forms

    def volatile(self, value: str) -> bool:
        """Whether ``value`` has a volatile part."""
        return any(kind is not None for _, kind in self.segments(value))

    def pattern(self, value: str, *, whole: bool = True) -> str:
        """A regular expression that matches ``value`` with any values in its volatile parts:
        the plain pieces escaped, the parts as their kind's pattern; ``^...$`` (``^...`` when
        not ``whole``: a prefix)."""
        body = "".join(
            kind.pattern if kind else escape(piece) for piece, kind in self.segments(value)
        )
        return f"^{body}$" if whole else f"^{body}"


def _split(piece: Segment, compiled: re.Pattern[str], kind: Kind) -> Sequence[Segment]:
    text, claimed = piece
    if claimed is not None:
        return (piece,)
    out: list[Segment] = []
    at = 0
    for match in compiled.finditer(text):
        if match.end() == match.start():
            continue
        out += [(text[at : match.start()], None), (match.group(), kind)]
        at = match.end()
    out.append((text[at:], None))
    return out


def escape(text: str) -> str:
    """``text`` as a regular expression that matches it literally; unlike ``re.escape`` only
    the characters that need it are escaped, so the pattern stays readable."""
    return "".join(f"\\{c}" if c in _SPECIAL else c for c in text)


DEFAULT_MASKER = Masker()
