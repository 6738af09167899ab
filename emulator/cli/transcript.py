"""``botemu transcript list|show|export``: read the transcript store.

A thin shell over ``TranscriptStore``. Every subcommand takes ``--db PATH`` (default
``$BOTEMU_DB``, else ``.botemu/transcripts.db``) and never creates a database that is not there.
``export --format transcript`` writes a conversation's ``.transcript`` file with the log view's
code (``emulator.logview.activities``), so both give the same bytes. ``to-scenario`` writes a
scenario that replays a stored call or conversation (``emulator.replay``), checked by the
scenario loader before it is written. ``audio`` writes a stored call as one stereo WAV track
(``emulator.audio``).
Exit codes: 0 done; 1 that check failed (a botemu bug); 2 the database is missing or unreadable,
the id matches no call, a call (not a conversation) is asked for as a ``.transcript``, a call
cannot be made a scenario, or a track cannot be made (a conversation, a call over two hours).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from emulator.jsonutil import JSON
from emulator.transcripts.store import (
    DEFAULT_DB,
    ENV_DB,
    CallSummary,
    StoredEvent,
    TranscriptError,
    TranscriptStore,
    default_db,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
FORMATS = ("json", "transcript")
_PROG = "botemu transcript"
_FALLBACK_WIDTH = 160  # a summary-less event is shown as kind + compact JSON, cut to this

Handler = Callable[[argparse.Namespace, TextIO], int]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``transcript`` and its subcommands to the ``botemu`` parser."""
    transcript = subparsers.add_parser(
        "transcript",
        help="list, show and export recorded calls",
        description="Read the transcript store: every event of every call botemu ran.",
    )
    transcript.set_defaults(handler=_needs_action(transcript))
    actions = transcript.add_subparsers(dest="transcript_action", metavar="ACTION")
    _add_list(actions)
    _add_show(actions)
    _add_export(actions)
    _add_to_scenario(actions)
    _add_audio(actions)


def _add_list(actions: argparse._SubParsersAction[Any]) -> None:
    listing = actions.add_parser(
        "list",
        help="the recorded calls, newest first",
        description="List the recorded calls, newest first.",
    )
    _db_option(listing)
    listing.add_argument(
        "--limit", type=_count_arg, default=50, metavar="N", help="show at most N calls (50)"
    )
    listing.add_argument("--json", action="store_true", help="print the calls as JSON")
    listing.set_defaults(handler=_list)


def _add_show(actions: argparse._SubParsersAction[Any]) -> None:
    show = actions.add_parser(
        "show",
        help="one call as a ladder of events",
        description="Show one call: its header, then one line per event in virtual time.",
    )
    _db_option(show)
    show.add_argument("id", metavar="ID", help="a call id, or a unique prefix of one")
    show.set_defaults(handler=_show)


def _add_export(actions: argparse._SubParsersAction[Any]) -> None:
    export = actions.add_parser(
        "export",
        help="one call with every event, for machines",
        description="Export one call and all its events (blobs as base64), or with --format "
        "transcript a conversation's activities as a .transcript file (a JSON array of "
        "activities, the ecosystem's common format).",
    )
    _db_option(export)
    export.add_argument("id", metavar="ID", help="a call id, or a unique prefix of one")
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="json",
        help="json (the default): the call and every event; transcript: a conversation's "
        "activities, both ways, as the log view's .transcript download",
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not standard output")
    export.set_defaults(handler=_export)


def _add_to_scenario(actions: argparse._SubParsersAction[Any]) -> None:
    to = actions.add_parser(
        "to-scenario",
        help="a scenario that replays a stored call (or conversation)",
        description="Write a scenario that does again what the caller of a stored call did, at "
        "the same virtual times, and expects what the bot did: its prompts (numbers, dates, "
        "times and ids as patterns; --strict: as played), its outcomes, how the call ended and "
        "the recording. A conversation gives its turns and the bot's replies. botemu test runs "
        "it against the bot.",
    )
    _db_option(to)
    to.add_argument("id", metavar="ID", help="a call (or conversation) id, or a unique prefix")
    to.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not standard output")
    mode = to.add_mutually_exclusive_group()
    mode.add_argument("--strict", action="store_true", help="expect every prompt as it was played")
    mode.add_argument("--loose", action="store_true",
                      help="expect prompts with numbers, dates, times and ids as patterns "
                      "(the default)")  # fmt: skip
    to.add_argument("--mask", action="append", default=[], metavar="REGEX",
                    help="a pattern of volatile prompt text, also matched by any text "
                    "(loose; may be repeated)")  # fmt: skip
    to.set_defaults(handler=_to_scenario)


def _add_audio(actions: argparse._SubParsersAction[Any]) -> None:
    audio = actions.add_parser(
        "audio",
        help="a stored call as one stereo WAV track",
        description="Render a stored call on one timeline as a stereo WAV (16 kHz): the "
        "platform's prompts (synthesized speech) and beeps on the left, the caller's keys (DTMF), "
        "speech and talk on the right, silence between, as long as the call's virtual time.",
    )
    _db_option(audio)
    audio.add_argument("id", metavar="ID", help="a call id, or a unique prefix of one")
    audio.add_argument("-o", "--output", metavar="FILE", required=True, help="the WAV to write")
    audio.set_defaults(handler=_audio)


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"the transcript database (default: ${ENV_DB}, else {DEFAULT_DB})",
    )


def _count_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _needs_action(parser: argparse.ArgumentParser) -> Handler:
    def handler(args: argparse.Namespace, out: TextIO) -> int:
        parser.print_usage(sys.stderr)
        print(f"{_PROG}: error: choose an action: list, show, export, to-scenario or audio",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE

    return handler


# --- opening -----------------------------------------------------------------------------------


def db_path(args: argparse.Namespace) -> Path:
    """``--db``, else ``$BOTEMU_DB``, else the default."""
    return Path(args.db) if args.db else default_db()


def _open(args: argparse.Namespace) -> TranscriptStore:
    path = db_path(args)
    if not path.exists():
        raise TranscriptError("no such transcript database", path=str(path))
    if path.is_dir():
        raise TranscriptError("is a directory, not a transcript database", path=str(path))
    return TranscriptStore(path)


def _fail(error: Exception) -> int:
    print(f"{_PROG}: {error}", file=sys.stderr)
    return EXIT_USAGE


def _find(store: TranscriptStore, call_id: str) -> CallSummary:
    summary = store.call(call_id)
    if summary is None:
        raise TranscriptError(f"no call matches {call_id!r}", path=str(store.path))
    return summary


# --- list --------------------------------------------------------------------------------------


def _list(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with _open(args) as store:
            total = store.count()
            calls = store.calls(limit=args.limit)
    except TranscriptError as e:
        return _fail(e)
    if args.json:
        document: dict[str, JSON] = {
            "db": str(db_path(args)),
            "total": total,
            "calls": [c.to_json() for c in calls],
        }
        text = json.dumps(document, indent=2, ensure_ascii=False)
        out.write((text if _safe(text) == text else json.dumps(document, indent=2)) + "\n")
        return EXIT_OK
    if not calls:
        out.write(f"no transcripts in {db_path(args)}\n")
        return EXIT_OK
    header = ("ID", "STARTED", "BOT", "CALLER", "END", "WF", "ERR/WARN", "VTIME")
    rows = [header] + [
        (
            c.id[:12],
            _local(c.started),
            _safe(c.bot),
            _safe(c.caller or "-"),
            _safe(c.end_reason or "running"),
            str(c.workflows),
            f"{c.errors}/{c.warnings}",
            _seconds(c.vtime),
        )
        for c in calls
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=True)]
        out.write("  ".join(cells).rstrip() + "\n")
    if total > len(calls):
        out.write(f"{len(calls)} of {total} calls shown (newest first); --limit N for more\n")
    return EXIT_OK


# --- show --------------------------------------------------------------------------------------


def _show(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with _open(args) as store:
            summary = _find(store, args.id)
            events = store.events(summary.id)
    except TranscriptError as e:
        return _fail(e)
    extras = [
        f"{name} {value}"
        for name, value in (
            ("caller", summary.caller),
            ("scenario", summary.scenario),
            ("chain", summary.chain_id),
        )
        if value
    ]
    head = f"{summary.kind} {summary.id}  bot {summary.bot}" + "".join(f"  {x}" for x in extras)
    out.write(_safe(head))
    out.write(f"\nstarted {_local(summary.started)}\n\n")
    for event in events:
        out.write(f"{_seconds(event.vtime):>9}  {_describe(event)}\n")
    out.write("\n" + _safe(_footer(summary)) + "\n")
    return EXIT_OK


def _describe(event: StoredEvent) -> str:
    summary = event.payload.get("summary")
    if isinstance(summary, str) and summary.strip():
        line = " ".join(summary.split())
    else:
        compact = json.dumps(event.payload, separators=(",", ":"), ensure_ascii=False)
        if len(compact) > _FALLBACK_WIDTH:
            compact = compact[: _FALLBACK_WIDTH - 1] + "…"
        line = f"{event.kind} {compact}"
    return _safe(line) + (" [blob]" if event.has_blob else "")


def _footer(c: CallSummary) -> str:
    if c.end_reason is None:
        head = "still running (or the run was cut short)"
    else:
        ended = f" at {_local(c.ended)}" if c.ended is not None else ""
        head = f"ended{ended}: {c.end_reason}"
    parts = [
        head,
        _plural(c.workflows, "workflow"),
        f"{_plural(c.errors, 'error')}, {_plural(c.warnings, 'warning')}",
        f"virtual time {_seconds(c.vtime)}",
    ]
    if c.passed is not None:
        parts.append("passed" if c.passed else "failed")
    return " · ".join(parts)


# --- export ------------------------------------------------------------------------------------


def _export(args: argparse.Namespace, out: TextIO) -> int:
    document: JSON
    try:
        with _open(args) as store:
            summary = _find(store, args.id)
            if args.format == "json":
                document = store.export(summary.id)
            elif summary.kind != "conversation":
                print(
                    f"{_PROG}: {summary.id} is a {summary.kind}, and the .transcript format holds "
                    "a conversation's activities: export it with --format json",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            else:
                document = _transcript(store, summary)
    except TranscriptError as e:
        return _fail(e)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if _safe(text) != text:  # a lone surrogate (read from a \ud800 escape) cannot be UTF-8
        text = json.dumps(document, indent=2) + "\n"
    if args.output is None:
        out.write(text)
        return EXIT_OK
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as e:
        print(f"{_PROG}: {args.output}: cannot write: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _transcript(store: TranscriptStore, summary: CallSummary) -> JSON:
    """The ``.transcript`` document of a conversation, exactly as the log view exports it."""
    from emulator.logview.activities import carried, transcript  # the log view's aiohttp: lazily

    return transcript(carried(store.events(summary.id), summary.bot))


# --- to-scenario -------------------------------------------------------------------------------


def _to_scenario(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.replay.convert import ReplayError, replay_of  # the engine: lazily
    from emulator.replay.masking import Masker, MaskError
    from emulator.scenario import SCHEMA_PATH, ScenarioError
    from emulator.scenario.loader import load_scenarios_text

    target = Path(args.output) if args.output else None
    where = target.resolve().parent if target else Path.cwd()
    try:
        masker = Masker(extra=tuple(args.mask))
        with _open(args) as store:
            replay = replay_of(store, args.id, strict=args.strict, masker=masker,
                               schema=_schema_ref(Path(SCHEMA_PATH), where))  # fmt: skip
    except (TranscriptError, ReplayError) as e:
        return _fail(e)
    except MaskError as e:
        print(f"{_PROG}: --mask: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        load_scenarios_text(replay.text, name=args.output or "<scenario>")
    except ScenarioError as e:  # a bug: what replay writes must be a valid scenario
        print(f"{_PROG}: the scenario made from {replay.call_id} is not valid, a botemu bug: {e}",
              file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    for note in replay.notes:
        print(f"{_PROG}: note: {note}", file=sys.stderr)
    if target is None:
        out.write(replay.text)
        return EXIT_OK
    try:
        target.write_text(replay.text, encoding="utf-8")
    except OSError as e:
        print(f"{_PROG}: {args.output}: cannot write: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output} (replays {replay.kind} {replay.call_id})", file=sys.stderr)
    return EXIT_OK


def _schema_ref(schema: Path, where: Path) -> str:
    """The schema as the editor line names it: relative to the scenario's directory, or
    absolute when they share no directory but the root."""
    import os

    if os.path.commonpath([schema.resolve(), where]) == where.anchor:
        return schema.resolve().as_posix()
    return Path(os.path.relpath(schema.resolve(), where)).as_posix()


# --- audio -------------------------------------------------------------------------------------


def _audio(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.audio.cache import AudioCache, default_dir  # the synthesizer: lazily
    from emulator.audio.synth import Synthesizer
    from emulator.audio.track import TrackError, render_call

    target = Path(args.output)
    synthesizer = Synthesizer(AudioCache(default_dir()))
    try:
        with _open(args) as store:
            track = render_call(store, _find(store, args.id).id, target, synthesizer)
    except (TranscriptError, TrackError) as e:
        return _fail(e)
    except OSError as e:
        print(f"{_PROG}: {args.output}: cannot write: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output}: call {track.call_id}, {track.seconds:.2f} s, "
          f"{track.segments} sounds, speech by {track.engine}", file=sys.stderr)  # fmt: skip
    return EXIT_OK


# --- formatting --------------------------------------------------------------------------------


def _safe(text: str) -> str:
    """Text any UTF-8 stream can take: a lone surrogate is written as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _local(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
