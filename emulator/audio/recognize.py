"""Speech to text, offline: PocketSphinx 5 (the ``pocketsphinx`` wheel, which ships a US English
acoustic model, language model and dictionary), for the prompt files a bot plays.

``Recognizer.transcribe(samples, phrases)`` gives a ``Transcript`` of 16 kHz mono samples. With
``phrases`` (what the caller listens for: the scenario's ``when`` patterns) the search is a JSGF
grammar of those phrases and a few common short words (``FILLERS``) that absorb the speech
between them, and the text is the phrases heard, in order: far more reliable than free dictation
on synthetic or telephone speech, and empty when none of them is said. Without phrases it is
dictation with the wheel's language model. A phrase with a word the dictionary does not know is
left out of the grammar.

Bounds: at most ``max_seconds`` of audio are decoded (30 s by default), in segments of 10 s
(each one utterance: a phrase across a boundary may be missed), and decoding stops between
segments once ``time_limit`` wall-clock seconds have passed (the transcript then says so). The
decoder keeps state, so one decoder per ``Recognizer`` works under a lock; decoding is CPU work
(about a tenth of real time with a grammar): call it off an event loop. When PocketSphinx cannot be used the
recognizer says so once to its ``notice`` and every transcript is None.
"""

from __future__ import annotations

import array
import importlib
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from emulator.audio.pcm import SAMPLE_RATE, to_le_bytes

MAX_SECONDS: Final = 30.0
"""Audio decoded per file at most; the rest is not heard."""
TIME_LIMIT: Final = 10.0
"""Wall-clock seconds one transcription may take."""
MAX_PHRASES: Final = 32
MAX_PHRASE_WORDS: Final = 10
SEGMENT_SECONDS: Final = 10.0
"""Audio decoded as one utterance; the time limit is checked between segments."""
FILLERS: Final = tuple("a the to and of is you your for in on it".split())
"""Common short words the grammar may hear between the phrases: without them every sound must be
one of the phrases, and speech that holds none is heard as one anyway."""
_SEGMENT: Final = round(SEGMENT_SECONDS * SAMPLE_RATE)
_WORD: Final = re.compile(r"[a-z']+")


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was recognised: ``text`` (lower case; empty when nothing was), ``mode`` (``grammar``
    or ``dictation``), the ``phrases`` of the grammar, the seconds heard, and whether the time
    limit cut it short."""

    text: str
    mode: str
    phrases: tuple[str, ...]
    seconds: float
    cut: bool = False


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _phrases_in(words: list[str], phrases: tuple[str, ...]) -> list[str]:
    """The phrases found in ``words``, in order (the longest first where two start together);
    the fillers between them are dropped."""
    found: list[str] = []
    by_length = sorted(phrases, key=lambda p: -len(p.split()))
    at = 0
    while at < len(words):
        hit = next((p for p in by_length if words[at : at + len(p.split())] == p.split()), None)
        if hit is None:
            at += 1
        else:
            found.append(hit)
            at += len(hit.split())
    return found


def phrase_words(phrase: str) -> tuple[str, ...]:
    """A phrase as the words a grammar holds: lower case letters and apostrophes."""
    return tuple(_WORD.findall(phrase.lower()))[:MAX_PHRASE_WORDS]


class Recognizer:
    """PocketSphinx, loaded on first use, one decoder under a lock."""

    def __init__(self, *, notice: Callable[[str], None] = _stderr) -> None:
        self.notice = notice
        self.engine = "pocketsphinx"
        self._decoder: Any = None
        self._unavailable: str | None = None
        self._grammars: dict[tuple[str, ...], str] = {}
        self._lock = threading.Lock()

    def transcribe(
        self,
        samples: array.array[int],
        phrases: Sequence[str] = (),
        *,
        max_seconds: float = MAX_SECONDS,
        time_limit: float = TIME_LIMIT,
    ) -> Transcript | None:
        """The text of ``samples`` (16 kHz mono), listening for ``phrases`` when any are
        usable; None when PocketSphinx is not available."""
        heard = samples[: max(0, round(max_seconds * SAMPLE_RATE))]
        with self._lock:
            decoder = self._load()
            if decoder is None:
                return None
            usable = self._usable(decoder, phrases)
            mode = "grammar" if usable else "dictation"
            decoder.activate_search(self._grammar(decoder, usable) if usable else "_lm")
            words, cut = self._decode(decoder, heard, time.monotonic() + time_limit)
        text = " ".join(_phrases_in(words, usable) if usable else words)
        return Transcript(text, mode, usable, len(heard) / SAMPLE_RATE, cut)

    @staticmethod
    def _decode(decoder: Any, samples: array.array[int], deadline: float) -> tuple[list[str], bool]:
        """The words heard in ``samples``, decoded in segments of ``SEGMENT_SECONDS``, each a
        whole utterance (its own normalization, so that what came before does not change it);
        and True when the deadline stopped it before the end."""
        words: list[str] = []
        for at in range(0, len(samples), _SEGMENT):
            if time.monotonic() > deadline:
                return words, True
            decoder.start_utt()
            try:
                decoder.process_raw(to_le_bytes(samples[at : at + _SEGMENT]), False, True)
            finally:
                decoder.end_utt()
            hypothesis = decoder.hyp()
            words.extend(hypothesis.hypstr.split() if hypothesis is not None else ())
        return words, False

    def _usable(self, decoder: Any, phrases: Sequence[str]) -> tuple[str, ...]:
        """The phrases (as words, deduplicated, at most ``MAX_PHRASES``) whose every word the
        dictionary knows."""
        usable: list[str] = []
        for phrase in phrases:
            words = phrase_words(phrase)
            text = " ".join(words)
            if words and text not in usable and all(decoder.lookup_word(w) for w in words):
                usable.append(text)
            if len(usable) == MAX_PHRASES:
                break
        return tuple(usable)

    def _grammar(self, decoder: Any, phrases: tuple[str, ...]) -> str:
        """The search of a JSGF grammar of ``phrases`` (made once per set of phrases)."""
        name = self._grammars.get(phrases)
        if name is None:
            name = f"_g{len(self._grammars)}"
            fillers = [w for w in FILLERS if w not in phrases and decoder.lookup_word(w)]
            alternatives = " | ".join([f"( {p} )" for p in phrases] + fillers)
            decoder.add_jsgf_string(
                name,
                f"#JSGF V1.0;\ngrammar listen;\npublic <heard> = <phrase>+ ;\n"
                f"<phrase> = {alternatives} ;\n",
            )
            self._grammars[phrases] = name
        return name

    def _load(self) -> Any:
        if self._decoder is None and self._unavailable is None:
            try:
                pocketsphinx: Any = importlib.import_module("pocketsphinx")  # no type hints
                self._decoder = pocketsphinx.Decoder(  # beams narrower than the defaults:
                    samprate=SAMPLE_RATE,
                    loglevel="FATAL",
                    beam=1e-30,
                    wbeam=1e-20,  # 5x faster
                )
                self._decoder.add_lm_file("_lm", pocketsphinx.get_model_path("en-us/en-us.lm.bin"))
                self.engine = f"pocketsphinx {_version()}"
            except Exception as e:  # an import error, a missing model, a C library failure
                self._unavailable = f"{type(e).__name__}: {e}"
                self.notice(
                    f"botemu: no speech recognition, so prompt files stay without text: "
                    f"{self._unavailable} (pip install pocketsphinx)"
                )
        return self._decoder


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pocketsphinx")
    except PackageNotFoundError:
        return "5"
