"""Fetching the prompt files of a Workflow: each fileUri once per cache, checked (status, size,
format) and measured, so the engine knows how long it plays or why it fails. Each fetch is a
``Get`` effect that the call's driver carries out.

``PromptSpeech`` measures the text prompts of a Workflow by their synthesized audio (prompt
timing ``speech``): each utterance is synthesized once per process (``emulator.audio.shared``),
in a ``Compute`` effect when it is not known yet, so the engine is given the lengths before it
runs (``EngineConfig.spoken``) and stays pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from emulator.audio.recognize import MAX_PHRASES, MAX_SECONDS, Transcript
from emulator.audio.shared import known_seconds, shared_recognizer, spoken_lengths
from emulator.audio.synth import Speech
from emulator.calling import exchange_rules as X
from emulator.calling.calllog import CallLog
from emulator.calling.effects import Compute, Failed, Get, Steps
from emulator.calling.engine import Media
from emulator.calling.media import (
    MAX_PROMPT_BYTES,
    MediaError,
    decode_samples,
    inspect_prompt_media,
)
from emulator.calling.model import PlayPrompt, Prompt, Recognize, Record, Workflow
from emulator.calling.speech import SpokenKey, spoken_key
from emulator.findings import Rule
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import EventKind

MAX_KEPT = 8
"""Prompt files whose bytes a live call's transcript keeps (each at most 512 KB)."""


class PromptFiles:
    """The prompt files of one call, fetched into ``cache`` (which calls may share)."""

    def __init__(
        self,
        log: CallLog,
        cache: dict[str, Media],
        *,
        timeout: float,
        phrases: tuple[str, ...] = (),
        keep: bool = False,
    ) -> None:
        """``phrases``: what recognition listens for in the files (``listen_phrases``);
        ``keep``: the transcript keeps the bytes of the call's first ``MAX_KEPT`` files (a live
        call, whose page plays them)."""
        self.log = log
        self.cache = cache
        self.timeout = timeout
        self.phrases = phrases
        self.keep = keep
        self.kept = 0
        self.reported: set[str] = set()

    def fetch(self, workflow: Workflow) -> Steps[dict[str, Media]]:
        """Fetch each prompt file once (per cache), check it, and learn its duration. A file
        that failed in an earlier call sharing the cache fails this call too, with its finding
        (once per call), though it is not fetched again."""
        for uri in file_uris(workflow):
            known = self.cache.get(uri)
            if known is None or known.listened not in (None, self.phrases):  # other phrases
                self.cache[uri] = yield from self.fetch_one(uri)
                self.reported.add(uri)
            elif uri not in self.reported:
                self.reported.add(uri)
                known = self.cache[uri]
                rule = MEDIA_RULES.get(known.rule or "")
                if known.failure is not None and rule is not None:
                    self.log.found(rule, uri, f"{known.failure} (fetched earlier in this run)")
        return dict(self.cache)

    def fetch_one(self, uri: str) -> Steps[Media]:
        answer = yield Get(uri, self.timeout, MAX_PROMPT_BYTES)
        if isinstance(answer, Failed):
            if answer.kind == "timeout":
                return self.failed(uri, X.CALL_MEDIA_FETCH, f"no answer within {self.timeout:g}s")
            return self.failed(uri, X.CALL_MEDIA_FETCH, f"fetch failed: {answer.message}")
        data, more, status = answer.data, answer.oversized, answer.status
        if status != 200:
            return self.failed(uri, X.CALL_MEDIA_FETCH, f"fetch answered HTTP {status}")
        if more:
            return self.failed(uri, X.CALL_MEDIA_SIZE, "the file is over 512 KB")
        try:
            info = inspect_prompt_media(data)
        except MediaError as e:
            rule = X.CALL_MEDIA_SIZE if "limit" in str(e) else X.CALL_MEDIA_FORMAT
            return self.failed(uri, rule, str(e))
        heard: Transcript | None = yield Compute(transcribe_prompt, (data, self.phrases))
        summary = f"fetched {uri}: {info.format}, {info.seconds:.2f}s"
        payload: JSONObject = {"uri": uri, "format": info.format, "seconds": info.seconds,
                               "bytes": info.size}  # fmt: skip
        if heard is not None:
            summary += f", recognised {heard.text!r}" if heard.text else ", no words recognised"
            payload["recognized_text"] = heard.text
            payload["recognition"] = {"engine": shared_recognizer().engine, "mode": heard.mode,
                                      "phrases": list(heard.phrases), "seconds": heard.seconds,
                                      "cut": heard.cut}  # fmt: skip
        kept = self.keep and self.kept < MAX_KEPT
        self.kept += kept
        self.log.record(EventKind.PLATFORM, {"summary": summary, **payload},
                        data if kept else None)  # fmt: skip
        if heard is None:
            return Media(seconds=info.seconds)
        return Media(seconds=info.seconds, text=heard.text, listened=self.phrases)

    def failed(self, uri: str, rule: Rule, why: str) -> Media:
        self.log.found(rule, uri, why)
        return Media(failure=why, rule=rule.id)


MEDIA_RULES = {r.id: r for r in (X.CALL_MEDIA_FETCH, X.CALL_MEDIA_SIZE, X.CALL_MEDIA_FORMAT)}


def transcribe_prompt(data: bytes, phrases: tuple[str, ...]) -> Transcript | None:
    """What PocketSphinx hears in a prompt file (at most ``MAX_SECONDS`` of it, time-bounded),
    listening for ``phrases`` when there are any; None when it cannot (CPU work)."""
    try:
        samples = decode_samples(data, MAX_SECONDS)
    except MediaError:
        return None
    return shared_recognizer().transcribe(samples, phrases)


_REGEX_NOISE = re.compile(r"\\[bBAZ]|\(\?[:i]*\)?|[()^$]|\.\*|\\s[+*]?|\.")


def listen_phrases(patterns: Sequence[str]) -> tuple[str, ...]:
    """The phrases a caller listens for, read from its ``when`` patterns: each alternative
    (``a|b``) that is plain words once anchors, groups, ``.*`` and ``\\s`` are taken out;
    an alternative with other regular-expression syntax is left out. At most 32."""
    phrases: list[str] = []
    for pattern in patterns[:MAX_PHRASES]:
        for alternative in pattern.split("|"):
            plain = " ".join(_REGEX_NOISE.sub(" ", alternative).split())
            if plain and re.fullmatch(r"[A-Za-z' ]+", plain) and plain.lower() not in phrases:
                phrases.append(plain.lower())
    return tuple(phrases[:MAX_PHRASES])


def prompts_of(workflow: Workflow) -> list[Prompt]:
    """Every Prompt of a Workflow, in order (of playPrompt actions and of input turns)."""
    found: list[Prompt] = []
    for action in workflow.actions:
        prompt = action if isinstance(action, PlayPrompt) else None
        if isinstance(action, Record | Recognize):
            prompt = action.play_prompt
        found.extend(prompt.prompts if prompt is not None else ())
    return found


def file_uris(workflow: Workflow) -> list[str]:
    """The fileUri of every file prompt of a Workflow (not of a prompt that has text), once."""
    uris: list[str] = []
    for p in prompts_of(workflow):
        if p.file_uri and not (p.value or "").strip() and p.file_uri not in uris:
            uris.append(p.file_uri)
    return uris


class PromptSpeech:
    """The lengths of a call's text prompts as synthesized (prompt timing ``speech``)."""

    def __init__(self, log: CallLog) -> None:
        self.log = log
        self.noted = False

    def measure(self, workflow: Workflow) -> Steps[dict[SpokenKey, float]]:
        """The synthesized length of each text prompt of ``workflow``: looked up when known,
        else synthesized off the event loop (one ``Compute`` for all that are not)."""
        timed: dict[SpokenKey, float] = {}
        missing: dict[SpokenKey, Speech] = {}
        for prompt in prompts_of(workflow):
            key = spoken_key(prompt)
            if key is None or key in timed or key in missing:
                continue
            speech = Speech(*key)
            seconds = known_seconds(speech)
            if seconds is None:
                missing[key] = speech
            else:
                timed[key] = seconds
        if missing or not self.noted:
            engine, lengths = yield Compute(spoken_lengths, (tuple(missing.values()),))
            timed.update(zip(missing, lengths, strict=True))
            self.note(engine)
        return timed

    def note(self, engine: str) -> None:
        """Say once in the call's transcript what times its prompts."""
        if not self.noted:
            self.noted = True
            self.log.record(EventKind.NOTE, {"summary": f"prompt timing: speech, each text "
                                             f"prompt as long as {engine} speaks it",
                                             "prompt_timing": "speech", "engine": engine})  # fmt: skip
