"""A stored call (or conversation) as a scenario: ``scenario_of(store, call_id)`` gives the
YAML text, and ``replay_of`` the same with what it found on the way (``Replay``). A
conversation's turns and replies are ``chat.py``'s; the rest of this module is about calls.

The scenario has the caller's steps (``steps.py``: what the caller did, at the same virtual
times, checked by running the engine over the call's Workflows, ``verify.py``) and expectations of
what the bot did: every prompt in order (loose: volatile parts as patterns, ``masking.py``;
strict: literal), every outcome posted, by index, how the call ended, the recording, and the
error findings the call had (so a call that broke a rule replays as one that must break it).

Bounds: a call (or conversation) of more than ``MAX_EVENTS`` events is refused; a prompt longer than
``MAX_PROMPT_CHARS`` is expected by its first ``MAX_PROMPT_CHARS`` characters (a pattern anchored
at the start only); a scenario over ``MAX_SCENARIO_BYTES`` (what ``botemu scenario check``
reads) is refused. Every refusal is a ``ReplayError`` with one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from emulator.errors import BotemuError
from emulator.replay import verify
from emulator.replay.chat import messaging_lines, read_conversation, replies_lines
from emulator.replay.masking import DEFAULT_MASKER, Masker
from emulator.replay.reading import Heard, Recorded, read_call
from emulator.replay.steps import Placed, reconstruct
from emulator.replay.texts import MAX_TEXT_CHARS as MAX_PROMPT_CHARS
from emulator.replay.texts import text_match
from emulator.replay.writing import (
    commented,
    duration,
    flow,
    outcome_line,
    platform_lines,
    quote,
    recording_line,
    step_line,
)
from emulator.transcripts.store import (
    CallSummary,
    EventKind,
    StoredEvent,
    TranscriptError,
    TranscriptStore,
)

MAX_EVENTS = 20_000
MAX_SCENARIO_BYTES = 1024 * 1024
SCHEMA = str(Path(__file__).resolve().parent.parent / "scenario" / "schema.json")
"""The scenario schema in the installed package: the default of the editor line."""


class ReplayError(BotemuError):
    """A call that cannot be made a scenario: unknown, not a call, not ended, too large."""


@dataclass(frozen=True, slots=True)
class Replay:
    """A scenario made from a stored call: its YAML ``text``, the call's full id, and ``notes``
    (what the scenario cannot reproduce exactly; also comments at the top of ``text``).
    ``verified``: the steps were run over the call's Workflows and did what the caller did (a
    conversation, which has no steps to check, is always verified)."""

    text: str
    call_id: str
    notes: tuple[str, ...]
    verified: bool
    kind: str = "call"
    """``call`` or ``conversation``."""


def scenario_of(
    store: TranscriptStore,
    call_id: str,
    *,
    strict: bool = False,
    masker: Masker | None = None,
    schema: str = SCHEMA,
) -> str:
    """The YAML text of a scenario that replays the stored call ``call_id`` (a full id or a
    unique prefix); see ``replay_of``."""
    return replay_of(store, call_id, strict=strict, masker=masker, schema=schema).text


def replay_of(
    store: TranscriptStore,
    call_id: str,
    *,
    strict: bool = False,
    masker: Masker | None = None,
    schema: str = SCHEMA,
) -> Replay:
    """A scenario that replays the stored call (or conversation) ``call_id``. ``strict``: texts
    are expected literally (default: volatile parts as patterns, by ``masker``). ``schema``: the
    path the editor line names (relative to where the file will be). Raises ``ReplayError``."""
    summary, events = _read(store, call_id)
    masker = masker or DEFAULT_MASKER
    if summary.kind == "conversation":
        sent = read_conversation(events)
        body, notes = messaging_lines(sent)
        expect = [*replies_lines(sent, strict=strict, masker=masker), *_findings(events)]
        lines = [*_header(summary, schema, strict, notes), *_identity(summary), *body]
        return _done(summary, [*lines, *(["expect:", *expect] if expect else [])], notes, True)
    call = read_call(summary, events)
    rebuilt = reconstruct(call)
    notes = list(rebuilt.notes)
    why_not = verify.unchecked(call)
    steps, difference = rebuilt.steps, verify.check(call, [p.step for p in rebuilt.steps])
    for candidate in rebuilt.candidates[:-1] if difference is not None else ():
        if verify.check(call, [p.step for p in candidate]) is None:
            steps, difference = candidate, None
            break
    if why_not is not None:
        notes.append(f"not checked: {why_not}")
    if difference is not None:
        notes.append(f"the steps may not reproduce the call: {difference}")
    if len(call.recordings) > 1:
        notes.append(f"{len(call.recordings)} recordings: the first is expected")
    lines = [
        *_header(summary, schema, strict, notes),
        *_identity(summary),
        *_caller(steps),
        *platform_lines(call),
        *_expect(call, strict, masker),
    ]
    return _done(summary, lines, notes, why_not is None and difference is None)


def _done(summary: CallSummary, lines: list[str], notes: list[str], verified: bool) -> Replay:
    text = "\n".join(lines) + "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_SCENARIO_BYTES:
        raise ReplayError(
            f"{summary.kind} {summary.id}: the scenario would be {size:,} bytes, over the "
            f"{MAX_SCENARIO_BYTES:,} a scenario file may have"
        )
    return Replay(text, summary.id, tuple(notes), verified, summary.kind)


def _read(store: TranscriptStore, call_id: str) -> tuple[CallSummary, list[StoredEvent]]:
    try:
        summary = store.call(call_id)
    except TranscriptError as e:
        raise ReplayError(e.message) from None
    if summary is None:
        raise ReplayError(f"no call matches {call_id!r} in {store.path}")
    if summary.kind not in ("call", "conversation"):
        raise ReplayError(f"{summary.id} is a {summary.kind}: only calls and conversations "
                          "can be replayed")  # fmt: skip
    if summary.kind == "call" and summary.end_reason in (None, "interrupted"):
        state = "was interrupted" if summary.end_reason else "has not ended"
        raise ReplayError(f"call {summary.id} {state}: only a call that ended can be replayed")
    events = store.events(summary.id)
    if len(events) > MAX_EVENTS:
        raise ReplayError(f"{summary.kind} {summary.id} has {len(events):,} events: at most "
                          f"{MAX_EVENTS:,} can be replayed")  # fmt: skip
    return summary, events


def _findings(events: Sequence[StoredEvent]) -> list[str]:
    """``findings: [RULE, ...]``: the error findings of a conversation, each rule once."""
    rules: list[str] = []
    for event in events:
        rule, p = event.payload.get("rule"), event.payload
        if event.kind == EventKind.FINDING and p.get("severity") == "error":
            if isinstance(rule, str) and rule not in rules:
                rules.append(rule)
    return [f"  findings: [{', '.join(rules)}]"] if rules else []


def _header(s: CallSummary, schema: str, strict: bool, notes: list[str]) -> list[str]:
    when = datetime.fromtimestamp(s.started, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    mode = (
        "strict: texts as they were" if strict else "loose: numbers, dates, times, ids as patterns"
    )
    guide = (
        "Each comment says when it happened in the call (virtual time) and in which action."
        if s.kind == "call"
        else "Each comment names the turn or the reply."
    )
    lines = [
        f"# yaml-language-server: $schema={schema}",
        _comment(f"Replay of {s.kind} {s.id}"),
        _comment(f"{'to' if s.kind == 'call' else 'with'} {s.bot}, started {when}."),
        _comment(f"Made by botemu transcript to-scenario ({mode})."),
        _comment(guide),
    ]
    lines += [_comment(f"note: {note}") for note in notes]
    return lines


def _comment(text: str) -> str:
    return "# " + " ".join(text.encode("utf-8", "backslashreplace").decode("utf-8").split())


def _identity(s: CallSummary) -> list[str]:
    name = f"replay of {s.kind} {s.id[:12]}" + (f" ({s.scenario})" if s.scenario else "")
    again = (
        "the same caller, expecting the same prompts, outcomes and ending"
        if s.kind == "call"
        else "the same turns, expecting the same replies"
    )
    return [
        f"name: {quote(name)}",
        f"description: {quote(f'What {s.kind} {s.id} did with {s.bot}: {again}.')}",
        "tags: [replay]",
    ]


def _caller(steps: tuple[Placed, ...]) -> list[str]:
    if not steps:
        return ["caller: []"]
    return ["caller:", *(step_line(placed) for placed in steps)]


def _expect(call: Recorded, strict: bool, masker: Masker) -> list[str]:
    lines = ["expect:", f"  call: {flow(_ending(call, strict))}"]
    items = [item for item in (_prompt(p, strict, masker) for p in call.prompts) if item]
    if items:
        lines += ["  prompts:", "    items:"]
        lines += [
            commented(f"      - {item}", f"item {n}: {note}")
            for n, (item, note) in enumerate(items, 1)
        ]
    if call.outcomes:
        lines.append("  outcomes:")
        lines += [
            outcome_line(i, o, "" if at is None else f"{at:.2f}s")
            for i, (at, o) in enumerate(call.outcomes)
        ]
    if call.recordings:
        line = recording_line(*call.recordings[0], strict=strict)
        if line is not None:
            lines.append(line)
    if call.error_rules:
        lines.append(f"  findings: [{', '.join(call.error_rules)}]")
    return lines


def _ending(call: Recorded, strict: bool) -> list[tuple[str, str]]:
    reason = call.end_reason or ""
    pairs = [("rejected", "true")] if reason == "bot rejected" else []
    pairs.append(("answered", "true" if call.answered else "false"))
    who = reason.split(" ", 1)[0]
    if who in ("bot", "caller", "platform"):
        pairs.append(("ended_by", who))
    vtime = call.summary.vtime
    if strict and vtime is not None:
        span = flow([("min", duration(vtime - 0.001)), ("max", duration(vtime + 0.001))])
        pairs.append(("duration", span))
    return pairs


def _prompt(heard: Heard, strict: bool, masker: Masker) -> tuple[str, str] | None:
    """A prompts item (YAML) and its note, or None for a silence."""
    note = f"{heard.at:.2f}s {heard.operation_id}".rstrip()
    text = heard.text
    if text is None or not text.strip():
        if not heard.file_uri:
            return None
        name = urlsplit(heard.file_uri).path.rsplit("/", 1)[-1] or heard.file_uri
        return flow([("file", quote(name))]), note
    item, cut = text_match(text, strict=strict, masker=masker)
    return item, f"{note} (its first {MAX_PROMPT_CHARS:,} characters)" if cut else note
