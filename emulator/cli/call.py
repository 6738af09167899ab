"""``botemu call``: place one call to a bot and print a readable ladder of it."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from emulator.errors import BotemuError
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import EventKind, TranscriptStore, default_db

if TYPE_CHECKING:
    from emulator.calling.caller import CallerScript
    from emulator.calling.faults import PlatformFaults
    from emulator.calling.session import CallReport, CallSettings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
HIDDEN = {"action"}
"""Engine events the ladder leaves out (they stay in the transcript)."""


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    call = subparsers.add_parser(
        "call",
        help="place one call to a calling bot and print its ladder",
        description="Place one call to a calling bot over HTTP(S), run it to its end in virtual "
        "time, and print a ladder of what happened. Exit 0 when the call ran with no "
        "error finding, 1 otherwise, 2 for a usage error.",
    )
    _call_options(call)
    token_options(call)
    _limit_options(call)
    call.set_defaults(handler=_call)


def _call_options(call: argparse.ArgumentParser) -> None:
    """The bot, what the caller does, and where the call is recorded."""
    call.add_argument("--bot", required=True, metavar="URL", help="the bot's calling address")
    script = call.add_mutually_exclusive_group()
    script.add_argument("--scenario", metavar="FILE", help="a scenario file (its caller: steps)")
    script.add_argument(
        "--caller",
        metavar="STEPS",
        help="inline caller steps, e.g. 'press 2; silence 6s; say sales; talk 4s; hangup'",
    )
    call.add_argument(
        "--seed", type=int, help="seed for ids and caller identity (reproducible runs)"
    )
    call.add_argument("--json", action="store_true", help="print the whole transcript as JSON")
    call.add_argument("--pace", type=float, default=0.0,
                      help="0 runs in virtual time (default); 1.0 in real time")  # fmt: skip
    call.add_argument("--db", type=Path, default=default_db(), help="transcript database")


def token_options(call: argparse.ArgumentParser) -> None:
    """Certificates and the Bearer token."""
    call.add_argument("--certs", type=Path, default=Path("certs"),
                      help="certificates directory for an https bot (botemu certs)")  # fmt: skip
    call.add_argument("--ca", type=Path, help="CA that signed the bot's certificate")
    call.add_argument("--app-id", help="the bot's app id: the audience of the Bearer token and "
                      "appId of results (default: the scenario's, or the bot registered with "
                      "the running botemu)")  # fmt: skip
    call.add_argument("--emulator", metavar="URL", help="the running botemu whose keys sign "
                      "the Bearer token (default: the one at http://127.0.0.1:9070 if it "
                      "answers, else the keys in --certs)")  # fmt: skip
    call.add_argument("--no-token", action="store_true",
                      help="send no Authorization header (a bot that relies on the client "
                      "certificate alone)")  # fmt: skip


def _limit_options(call: argparse.ArgumentParser) -> None:
    """Retries, limits and the wire's leniencies."""
    from emulator.calling.delivery import RetryPolicy
    from emulator.calling.engine import DEFAULT_MAX_WORKFLOWS
    from emulator.calling.session import DEFAULT_DEADLINE

    defaults = RetryPolicy()
    call.add_argument("--max-workflows", type=int, default=DEFAULT_MAX_WORKFLOWS)
    call.add_argument("--timeout", type=float, default=defaults.timeout,
                      help="seconds the bot has to answer each request")  # fmt: skip
    call.add_argument("--attempts", type=int, default=defaults.attempts,
                      help="attempts per message, the first included")  # fmt: skip
    call.add_argument("--deadline", type=float, default=DEFAULT_DEADLINE, metavar="S",
                      help="wall-clock seconds the whole call may take; then the platform "
                      f"hangs up (default {DEFAULT_DEADLINE:g}; 0: none)")  # fmt: skip
    call.add_argument("--allow-http", action="store_true",
                      help="accept http callbacks (default only for an http bot)")  # fmt: skip
    call.add_argument("--legacy-validation-outcome", action="store_true",
                      help="write the validation outcome type as worfklowValidationOutcome")  # fmt: skip
    call.add_argument("--prompt-timing", choices=("estimate", "speech"), default=None,
                      help="how long a text prompt plays: estimate, 0.4 s a word (default; "
                      "$BOTEMU_PROMPT_TIMING), or speech, as long as its synthesized audio")  # fmt: skip


def _call(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.calling.session import place_call

    try:
        settings = _settings(args)
        settings = asyncio.run(_with_tokens(settings, args))
        store = TranscriptStore(args.db, write_behind=True)
    except BotemuError as e:
        print(f"botemu call: {e}", file=sys.stderr)
        return EXIT_USAGE
    with store:
        printer = None if args.json else Ladder(out)
        report = asyncio.run(place_call(settings, store, listener=printer))
        if args.json:
            json.dump(store.export(report.call_id), out, indent=2)
            out.write("\n")
        else:
            out.write(_summary(report, args.db) + "\n")
    return EXIT_FAILED if report.errors else EXIT_OK


async def _with_tokens(settings: CallSettings, args: argparse.Namespace) -> CallSettings:
    """The settings with the Bearer token's source and the app id (``tokens.resolve``)."""
    from emulator.calling.tokens import resolve

    resolved = await resolve(bot_url=settings.bot_url, app_id=settings.app_id,
                             emulator=args.emulator, certs=args.certs, no_token=args.no_token)  # fmt: skip
    if not args.json:
        print(f"botemu call: {resolved.note}", file=sys.stderr)
    return replace(settings, tokens=resolved.tokens, app_id=resolved.app_id)


class _Script:
    """What the caller does, from ``--scenario`` or ``--caller``, with what the scenario sets."""

    def __init__(self, args: argparse.Namespace) -> None:
        from emulator.calling.caller import CallerScript
        from emulator.calling.faults import NO_FAULTS

        self.name: str | None = None
        self.faults: PlatformFaults = NO_FAULTS
        self.app_id: str | None = args.app_id
        self.legacy: bool = args.legacy_validation_outcome
        if not args.scenario:
            self.caller: CallerScript = CallerScript.from_inline(args.caller or "")
            return
        from emulator.scenario.loader import load_scenario

        scenario = load_scenario(Path(args.scenario))
        if scenario.caller is None:
            raise BotemuError(
                f"{args.scenario}: a {scenario.kind} scenario, not a call: use botemu test"
            )
        self.caller, self.name = scenario.caller, scenario.name
        self.faults = scenario.faults.platform_faults()
        self.app_id = self.app_id or scenario.platform.app_id
        self.legacy = self.legacy or scenario.platform.legacy_validation_outcome


def _settings(args: argparse.Namespace) -> CallSettings:
    from emulator.calling.delivery import RetryPolicy
    from emulator.calling.session import CallSettings
    from emulator.calling.wire import WireOptions

    parts = urlsplit(args.bot)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BotemuError(f"--bot {args.bot!r} is not an http(s) URL")
    script = _Script(args)
    ssl_context = None
    if parts.scheme == "https":
        from emulator.certs import client_ssl_context, ensure_certs

        ssl_context = client_ssl_context(ensure_certs(args.certs), ca_file=args.ca)
    if args.attempts < 1 or args.timeout <= 0 or args.max_workflows < 1:
        raise BotemuError("--attempts, --timeout and --max-workflows must be positive")
    if not args.deadline >= 0:  # NaN too
        raise BotemuError("--deadline is a number of seconds, 0 for none")
    return CallSettings(
        bot_url=args.bot,
        caller=script.caller,
        seed=args.seed,
        retry=RetryPolicy(attempts=args.attempts, timeout=args.timeout),
        max_workflows=args.max_workflows,
        pace=args.pace,
        allow_http=True if args.allow_http else None,
        wire=WireOptions(legacy_validation_outcome_type=script.legacy),
        app_id=script.app_id,
        ssl_context=ssl_context,
        scenario=script.name,
        faults=script.faults,
        deadline=args.deadline or None,
        **({"prompt_timing": args.prompt_timing} if args.prompt_timing else {}),
    )


class Ladder:
    """Prints each event of a call as one line, as it is recorded."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, kind: str, payload: JSONObject, vtime: float) -> None:
        if payload.get("kind") in HIDDEN:
            return
        summary = str(payload.get("summary", kind))
        if kind == EventKind.FINDING:
            line = f"  ! {summary}"
        elif kind in (EventKind.CALL_START, EventKind.CALL_END):
            line = summary
        else:
            line = f"{vtime:7.2f}s  {summary}"
        self.out.write(line + "\n")
        self.out.flush()


def _summary(report: CallReport, db: Path) -> str:
    errors = f"{report.errors} error" + ("" if report.errors == 1 else "s")
    warnings = f"{report.warnings} warning" + ("" if report.warnings == 1 else "s")
    short = report.call_id[:12]
    return (
        f"{report.end_reason.value} · {report.workflows} workflows · {report.vtime:.1f}s · "
        f"{errors}, {warnings} · transcript {short} in {db} (botemu transcript show {short})"
    )


async def bot_settings(args: argparse.Namespace, command: str) -> CallSettings:
    """The settings of ``command``'s calls to ``--bot``: TLS for an https bot, the Bearer token
    (``token_options``). A note on the token goes to stderr; a bad URL is a ``BotemuError``."""
    from dataclasses import replace

    from emulator.calling.session import CallSettings
    from emulator.calling.tokens import resolve

    parts = urlsplit(args.bot)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BotemuError(f"--bot {args.bot!r} is not an http(s) URL")
    ssl_context = None
    if parts.scheme == "https":
        from emulator.certs import client_ssl_context, ensure_certs

        ssl_context = client_ssl_context(ensure_certs(args.certs), ca_file=args.ca)
    settings = CallSettings(bot_url=args.bot, seed=args.seed, ssl_context=ssl_context)
    resolved = await resolve(bot_url=args.bot, app_id=args.app_id, emulator=args.emulator,
                             certs=args.certs, no_token=args.no_token)  # fmt: skip
    print(f"botemu {command}: {resolved.note}", file=sys.stderr)
    return replace(settings, tokens=resolved.tokens, app_id=resolved.app_id)
