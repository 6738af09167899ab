"""What a caller can observe when a bot waits for input, and the state key that names it.

A state is a waiting point of a call: the prompts just played before it (text, or a file by its
name), and what the bot waits for: a recognize's choices (names with their DTMF key and speech
variations) or its collectDigits settings, or a record. The key is a normalised form of these,
so that one menu heard twice is one state:

- prompt text is case-folded, its runs of white space made one space, and its volatile parts
  masked: numbers (``3``, ``1,250.00``, ``+1 425 555 0100``) become ``#``; times (``10:30``)
  and dates (``2026-11-25``, ``25/11/2026``) become ``<time>`` and ``<date>``; ids (a UUID, or a
  hexadecimal run of 8 or more) become ``<id>``. "You have 3 messages" and "you have 4
  messages" are one state. Users add their own patterns (``Masker(extra=...)``), each a regular
  expression whose matches become ``<masked>``;
- a file prompt is its URI's last path segment (a bot may sign its URLs); a silence is
  ``<silence>``;
- choices are kept in the bot's order, each with its DTMF key and speech variations as given;
- the key is canonical JSON of the above; ``State.id`` is the first 12 hex digits of its SHA-256.

The masking itself is ``emulator.replay.masking``'s, which a replayed scenario's patterns share.
Pure: no I/O, and it imports only the calling model and the masking.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from urllib.parse import urlsplit

from emulator.calling.model import PlayPrompt, Prompt, Recognize, Record
from emulator.calling.speech import speech_seconds
from emulator.replay.masking import (
    DEFAULT_MASKS,
    MAX_PATTERN_LENGTH,
    MAX_PATTERNS,
    Masker,
    MaskError,
)

__all__ = [
    "DEFAULT_MASKER", "DEFAULT_MASKS", "MAX_PATTERNS", "MAX_PATTERN_LENGTH", "Choice", "MaskError",
    "Masker", "State", "distinct", "observe", "prompt_text", "said_text", "spoken",
]  # fmt: skip

DEFAULT_MASKER = Masker()
"""The masks of ``emulator.replay.masking`` (shared with ``botemu transcript to-scenario``)."""


@dataclass(frozen=True, slots=True)
class Choice:
    """A choice as the caller can take it: its name, DTMF key and speech variations."""

    name: str
    dtmf: str | None
    speech: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class State:
    """One waiting point: what was heard, and what the bot waits for (``kind``: ``recognize``,
    ``digits`` for a collectDigits, ``record``)."""

    kind: str
    prompts: tuple[str, ...]
    choices: tuple[Choice, ...] = ()
    max_digits: int | None = None
    stop_tones: tuple[str, ...] = ()
    silence_timeout: float | None = None
    heard_seconds: float = 0.0
    """How long the prompts last (text by its estimated speech, silences; files not counted).
    Not part of the key."""
    said: tuple[str, ...] = field(default=(), compare=False)
    """The prompts as the bot said them (``said_text``), as first heard: what a person reads.
    Not part of the key, nor of equality: the same state heard again with other numbers is the
    same state."""

    @property
    def key(self) -> str:
        """The canonical JSON of the state: equal keys, one state."""
        return json.dumps(
            {
                "kind": self.kind,
                "prompts": list(self.prompts),
                "choices": [[c.name, c.dtmf, list(c.speech)] for c in self.choices],
                "max_digits": self.max_digits,
                "stop_tones": list(self.stop_tones),
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @property
    def id(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:12]


def prompt_text(prompt: Prompt, masker: Masker = DEFAULT_MASKER) -> str:
    """A prompt as a state holds it: masked text, a file's name, or ``<silence>``."""
    if prompt.value and prompt.value.strip():
        return masker.text(prompt.value)
    if prompt.file_uri:
        name = urlsplit(prompt.file_uri).path.rsplit("/", 1)[-1]
        return f"<file {name.casefold()}>"
    return "<silence>"


def said_text(prompt: Prompt, masker: Masker = DEFAULT_MASKER) -> str:
    """A prompt as the bot said it: its text as written (white space made one space, remembered
    by ``masker`` with its masked form: a long prompt heard in every call is made once), a
    file's name as given, or ``<silence>``."""
    if prompt.value and prompt.value.strip():
        return masker.said(prompt.value)
    if prompt.file_uri:
        return f"<file {urlsplit(prompt.file_uri).path.rsplit('/', 1)[-1]}>"
    return "<silence>"


def observe(
    action: Recognize | Record,
    heard: Sequence[PlayPrompt] = (),
    masker: Masker = DEFAULT_MASKER,
) -> State:
    """The state of a waiting ``action``, after the prompts ``heard`` since the last input
    (its own prompt included)."""
    prompts = [p for play in (*heard, action.play_prompt) if play for p in play.prompts]
    texts = tuple(prompt_text(p, masker) for p in prompts)
    said = tuple(said_text(p, masker) for p in prompts)
    seconds = sum(_seconds(p) for p in prompts)
    if isinstance(action, Record):
        return State("record", texts, stop_tones=tuple(action.stop_tones or ()),
                     silence_timeout=action.initial_silence_timeout_in_seconds,
                     heard_seconds=seconds, said=said)  # fmt: skip
    timeout = action.initial_silence_timeout_in_seconds
    if action.collect_digits is not None:
        digits = action.collect_digits
        return State("digits", texts, max_digits=digits.max_number_of_dtmfs,
                     stop_tones=tuple(digits.stop_tones or ()), silence_timeout=timeout,
                     heard_seconds=seconds, said=said)  # fmt: skip
    choices = tuple(
        Choice(c.name, c.dtmf_variation, tuple(c.speech_variation or ()))
        for c in action.choices or ()
    )
    return State("recognize", texts, choices=choices, silence_timeout=timeout,
                 heard_seconds=seconds, said=said)  # fmt: skip


def _seconds(prompt: Prompt) -> float:
    if prompt.value and prompt.value.strip():
        return speech_seconds(prompt.value, prompt.say_as)
    return (prompt.silence_length_in_milliseconds or 0) / 1000


def spoken(prompts: Sequence[str], total: int | None = None, width: int = 240) -> str:
    """``prompts`` in one line as a person reads them: each quoted, a run of the same one said
    once with how many times (``'Please hold.' ×12``), cut at about ``width`` characters;
    ``total``: how many there were when ``prompts`` is the first of them."""
    runs = ((prompt, len(list(same))) for prompt, same in groupby(prompts))
    parts = [f"{prompt!r}" + (f" ×{n}" if n > 1 else "") for prompt, n in runs]
    line = ", ".join(parts) or "nothing"
    more = (total or 0) - len(prompts)
    if more > 0:
        line += f" and {more} more"
    return line if len(line) <= width else line[: width - 1] + "…"


def distinct(states: Iterable[State]) -> list[State]:
    """``states`` with each key once, in first-seen order."""
    seen: dict[str, State] = {}
    for state in states:
        seen.setdefault(state.key, state)
    return list(seen.values())
