#!/usr/bin/env python3
"""A reference IVR calling bot: the way we would tell a bot developer to write one.

Run it::

    python examples/ivr_bot.py --port 8080                  # plain http, for local work
    python examples/ivr_bot.py --port 8443 --tls certs/     # https, platform client certificate required
    python examples/ivr_bot.py --port 8080 --app-id ID      # and the platform's Bearer token too

The platform POSTs a Conversation when a call arrives, and a ConversationResult after each
Workflow the bot returns. This bot serves both on one URL, ``POST /api/calls``, and tells them apart
by the presence of ``participants`` (only a Conversation has it).

The call, as the caller hears it::

    welcome -> main menu (1 sales, 2 support, 3 voicemail; DTMF or speech)
      sales/support -> "enter your account number, then #" -> read it back -> goodbye
      voicemail     -> "leave a message after the tone" -> record -> goodbye

The code has three layers, so each can be read (and tested) on its own:

- ``IvrFlow``: the dialogue. A pure function of (where the call is, the platform's result) to the
  next Workflow, as a plain dict. No I/O, no aiohttp.
- ``CallStore``: per-call state with a clean-up time-out, and the replies already sent, by message
  id, so that a retried callback gets the same bytes and does not advance the call twice.
- ``CallHandler`` and ``make_app``: HTTP. Reading JSON and multipart bodies safely, saving voicemail
  audio, TLS with a required client certificate, and the Bearer token on every request
  (``TokenSettings``; given an app id).

It imports only the standard library, aiohttp and PyJWT (through ``bot_auth.py``, the token checks
it shares with the echo bot).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import ssl
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import BodyPartReader, hdrs, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Handler, Middleware

if str(Path(__file__).resolve().parent) not in sys.path:  # bot_auth.py lives beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bot_auth import AuthError, TokenValidator, connector_validator

log = logging.getLogger("ivr_bot")

JsonObject = dict[str, Any]
Workflow = JsonObject

CALLS_PATH = "/api/calls"
CHAIN_ID_HEADER = "X-Platform-Chain-ID"  # the same for every request of one call: use it in logs
MESSAGE_ID_HEADER = "X-Platform-Message-ID"  # new per callback, unchanged when the platform retries

MAX_JSON_BYTES = 1024 * 1024  # a Conversation or ConversationResult is a few kB; 1 MiB is generous
MAX_AUDIO_BYTES = 16 * 1024 * 1024  # 60 s of 48 kHz 16-bit stereo WAV is 11.5 MB
APPSTATE_MAX = 1024  # spec, Limits: appState is at most 1024 characters
DEFAULT_STATE_TTL = 300.0
DEFAULT_PLATFORM_CN = "platform.botemu.local"
# Where a botemu on its default address publishes the connector's OpenID metadata, and the issuer
# of its tokens (``botemu config`` prints both; set them for any other botemu).
DEFAULT_OPENID_METADATA_URL = "http://127.0.0.1:9070/_identity/v3.1/.well-known/openidconfiguration"
DEFAULT_CONNECTOR_ISSUER = "http://127.0.0.1:9070/_identity/connector-issuer"
REPLY_CACHE_SIZE = 1000
KEY_FETCH_TIMEOUT = aiohttp.ClientTimeout(total=10)

# Outcome types, lowercased: the platform's enum values are read case-insensitively.
VALIDATION_OUTCOMES = frozenset(
    {
        "workflowvalidationoutcome",  # the spec's spelling
        "worfklowvalidationoutcome",  # the real SDKs' (and probably the real platform's) typo
    }
)
CALL_ENDED_OUTCOMES = frozenset({"hangupoutcome", "rejectoutcome"})
# Recognition failures that mean "the caller did not pick a valid option": worth asking again.
MENU_RETRY_REASONS = frozenset({"initialsilencetimeout", "incorrectdtmf", "interdigittimeout"})

# What the caller hears.
WELCOME = "Welcome to the botemu demo line."
MENU = (
    "For sales, press 1 or say sales. For support, press 2 or say support. "
    "To leave a message, press 3 or say voicemail."
)
NOT_UNDERSTOOD = "Sorry, I did not catch that."
ASK_ACCOUNT = "Please enter your account number, then press the pound key."
NO_DIGITS = "Sorry, I did not get any digits."
YOU_ENTERED = "You entered"
RECORD_PROMPT = "Please leave a message after the tone. Press the pound key when you are done."
MESSAGE_SAVED = "Thank you, your message has been recorded."
NO_MESSAGE = "Sorry, I did not hear a message."
SYSTEM_FAILURE = "Sorry, something went wrong on our side."
GOODBYE = "Goodbye."


# --- Reading what the platform sends --------------------------------------------------------------
#
# Be liberal: field names and enum values are matched case-insensitively (the real SDKs do), and
# unknown fields and unknown enum values are ignored, because the platform may add either without
# notice (spec, Versioning 4).


def field_of(obj: object, name: str) -> Any:
    """``obj[name]``, matching the name case-insensitively; None when absent or not an object."""
    if not isinstance(obj, dict):
        return None
    if name in obj:
        return obj[name]
    lowered = name.lower()
    return next((v for k, v in obj.items() if k.lower() == lowered), None)


def enum_of(obj: object, name: str) -> str:
    """An enum value, lowercased ("Success", "success" -> "success"); "" when absent or odd."""
    value = field_of(obj, name)
    return value.lower() if isinstance(value, str) else ""


def completion_reason(outcome: object) -> str:
    """The completionReason of any outcome, lowercased.

    playPrompt and record outcomes carry it at the top; a recognize outcome carries it inside
    choiceOutcome (a menu) or collectDigitsOutcome (digit collection).
    """
    for inner in ("choiceOutcome", "collectDigitsOutcome"):
        reason = enum_of(field_of(outcome, inner), "completionReason")
        if reason:
            return reason
    return enum_of(outcome, "completionReason")


def collected_digits(outcome: object) -> str:
    """The digits of a collectDigitsOutcome: a string ("1234") per the field notes; the spec's
    "array of digits" is accepted too."""
    digits = field_of(field_of(outcome, "collectDigitsOutcome"), "digits")
    if isinstance(digits, list):
        digits = "".join(d for d in digits if isinstance(d, str))
    return digits if isinstance(digits, str) else ""


# --- Where the call is: the appState ------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    """Where the dialogue is, carried in every Workflow's appState as a small JSON document.

    The platform echoes appState in the result of that Workflow, so the bot reads its position from
    the result itself: a late or retried result is judged by the Workflow it answers, not by
    whatever the bot sent last.

    ``step``: what the last Workflow asked ("menu", "account", "record", "goodbye").
    ``retries``: how many times this step has been asked again.
    ``turn``: the Workflow's number in the call (1 answers the Conversation); it makes every
    operationId of the call unique.
    ``topic``: the department chosen in the menu, remembered until the account number is read back.
    """

    step: str
    retries: int = 0
    turn: int = 1
    topic: str | None = None

    def dump(self) -> str:
        doc: JsonObject = {"step": self.step, "retries": self.retries, "turn": self.turn}
        if self.topic is not None:
            doc["topic"] = self.topic
        text = json.dumps(doc, separators=(",", ":"))
        if len(text) > APPSTATE_MAX:  # cannot happen with these fields; guard it anyway
            raise ValueError(f"appState is {len(text)} characters; the limit is {APPSTATE_MAX}")
        return text

    @classmethod
    def load(cls, text: object) -> Position | None:
        """The position in an echoed appState; None when it is missing or not ours."""
        if not isinstance(text, str) or len(text) > APPSTATE_MAX:
            return None
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return None
        step, retries, turn, topic = (
            field_of(doc, "step"),
            field_of(doc, "retries"),
            field_of(doc, "turn"),
            field_of(doc, "topic"),
        )
        if not isinstance(step, str) or not _is_count(retries) or not _is_count(turn):
            return None
        return cls(step, retries, turn, topic if isinstance(topic, str) else None)

    def then(self, step: str, *, retries: int = 0, topic: str | None = None) -> Position:
        """The position of the next Workflow."""
        return Position(step, retries, self.turn + 1, topic)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# --- Building Workflows ---------------------------------------------------------------------------
#
# Written exactly as the platform expects: camelCase names, camelCase enum values, a DTMF key as a
# one-character string ("1", "#"), nulls left out.


def prompt(text: str, **options: Any) -> JsonObject:
    return {"value": text, **options}


def play_prompt(operation_id: str, *prompts: JsonObject) -> JsonObject:
    return {"operationId": operation_id, "action": "playPrompt", "prompts": list(prompts)}


def workflow(at: Position, actions: list[JsonObject], callback: str) -> Workflow:
    """A Workflow at position ``at``.

    A Workflow that ends the call (hangup or reject last) has no callback: the platform runs it,
    hangs up and posts nothing. Every other Workflow names the callback, or the platform would
    hang up after it without telling the bot.
    """
    doc: Workflow = {"actions": actions}
    if actions[-1]["action"] not in ("hangup", "reject"):
        doc["links"] = {"callback": callback}
    doc["appState"] = at.dump()
    doc["notificationSubscriptions"] = ["callStateChange"]  # present in every sample Workflow
    return doc


def ends_call(doc: Workflow) -> bool:
    return "links" not in doc


# --- The dialogue ---------------------------------------------------------------------------------


class IvrFlow:
    """The IVR dialogue as a state machine: (position, ConversationResult) -> next Workflow.

    Pure: it reads dicts and returns dicts. The HTTP layer handles the call's life cycle
    (results with callState ``terminated`` never reach ``next``) and the idempotency of retries.
    """

    def __init__(self, *, menu_retries: int = 2, account_retries: int = 1) -> None:
        self.menu_retries = menu_retries
        self.account_retries = account_retries

    def welcome(self, callback: str) -> Workflow:
        """The reply to a Conversation: answer, greet, offer the menu."""
        at = Position("menu", turn=1)
        answer = {
            "operationId": f"answer-{at.turn}",
            "action": "answer",
            "acceptModalityTypes": ["audio"],
        }
        greeting = play_prompt(f"welcome-{at.turn}", prompt(WELCOME))
        return workflow(at, [answer, greeting, self._menu(at)], callback)

    def next(
        self, result: JsonObject, callback: str, remembered: Position | None = None
    ) -> Workflow | None:
        """The Workflow answering ``result``, or None when the call needs none (it has ended).

        ``remembered`` is the position of the last Workflow sent, used only when the platform
        did not echo a readable appState.
        """
        outcome = field_of(result, "operationOutcome")
        kind = enum_of(outcome, "type")
        at = Position.load(field_of(result, "appState")) or remembered
        # Until the call is answered, a Workflow must start with answer or reject, so every
        # way out of the dialogue below checks whether it was.
        answered = enum_of(result, "callState") not in ("incoming", "idle")

        if kind in CALL_ENDED_OUTCOMES:
            return None
        if kind in VALIDATION_OUTCOMES:
            # Our Workflow was invalid: the platform ran none of it. Log why, and send the
            # smallest Workflow that cannot be wrong, rather than retrying the same mistake.
            log.error("the platform rejected our Workflow: %s", field_of(outcome, "failureReason"))
            return self._goodbye(at, answered, callback)
        if at is None:
            log.warning("result without a readable appState for an unknown call: saying goodbye")
            return self._goodbye(None, answered, callback)
        if completion_reason(outcome) == "temporarysystemfailure":
            return self._goodbye(at, answered, callback, prompt(SYSTEM_FAILURE))

        succeeded = enum_of(outcome, "outcome") == "success"
        if at.step == "menu" and kind == "recognizeoutcome":
            return self._after_menu(at, outcome, succeeded, callback)
        if at.step == "account" and kind == "recognizeoutcome":
            return self._after_account(at, outcome, succeeded, callback)
        if at.step == "record" and kind == "recordoutcome":
            said = MESSAGE_SAVED if succeeded else NO_MESSAGE
            return self._goodbye(at, answered, callback, prompt(said))
        # An outcome type we do not know, or one we did not expect here (for example a failed
        # answer or welcome prompt). Never answer 500: the platform would retry, then hang up.
        log.warning("unexpected %s at step %s: saying goodbye", kind or "outcome", at.step)
        return self._goodbye(at, answered, callback)

    # --- steps

    def _menu(self, at: Position, *before: JsonObject) -> JsonObject:
        return {
            "operationId": f"menu-{at.turn}",
            "action": "recognize",
            "playPrompt": play_prompt(f"menu-prompt-{at.turn}", *before, prompt(MENU)),
            "bargeInAllowed": True,  # a caller who knows the menu may press 1 straight away
            "initialSilenceTimeoutInSeconds": 5,
            "interdigitTimeoutInSeconds": 2,
            "choices": [
                {"name": "sales", "dtmfVariation": "1", "speechVariation": ["sales"]},
                {"name": "support", "dtmfVariation": "2", "speechVariation": ["support"]},
                {
                    "name": "voicemail",
                    "dtmfVariation": "3",
                    "speechVariation": ["voicemail", "message"],
                },
            ],
        }

    def _after_menu(
        self, at: Position, outcome: object, succeeded: bool, callback: str
    ) -> Workflow:
        choice = field_of(field_of(outcome, "choiceOutcome"), "choiceName")
        if succeeded and choice in ("sales", "support"):
            nxt = at.then("account", topic=choice)
            return workflow(nxt, [self._ask_account(nxt)], callback)
        if succeeded and choice == "voicemail":
            nxt = at.then("record")
            return workflow(nxt, [self._record(nxt)], callback)
        # The caller said or pressed nothing we know (a success naming no choice of ours counts
        # too): ask again, a limited number of times. Any other failure ends the call.
        missed = succeeded or completion_reason(outcome) in MENU_RETRY_REASONS
        if missed and at.retries < self.menu_retries:
            nxt = at.then("menu", retries=at.retries + 1)
            return workflow(nxt, [self._menu(nxt, prompt(NOT_UNDERSTOOD))], callback)
        return self._goodbye(at, True, callback)

    def _ask_account(self, at: Position, *before: JsonObject) -> JsonObject:
        return {
            "operationId": f"account-{at.turn}",
            "action": "recognize",
            "playPrompt": play_prompt(f"account-prompt-{at.turn}", *before, prompt(ASK_ACCOUNT)),
            "initialSilenceTimeoutInSeconds": 5,
            "interdigitTimeoutInSeconds": 3,  # people look their account number up as they type
            # Collection ends at "#" (not part of the digits), after 8 digits, or at a pause.
            "collectDigits": {"maxNumberOfDtmfs": 8, "stopTones": ["#"]},
        }

    def _after_account(
        self, at: Position, outcome: object, succeeded: bool, callback: str
    ) -> Workflow:
        # interdigitTimeout is a success: the caller paused, and the digits so far are returned.
        digits = collected_digits(outcome) if succeeded else ""
        if digits:
            log.info("account number entered for %s (%d digits)", at.topic, len(digits))
            read_back = [
                prompt(YOU_ENTERED),
                prompt(digits, sayAs="telephone"),  # "1 2 3 4", not "one thousand two hundred..."
                prompt(f"A {at.topic or 'team'} representative will call you back."),
            ]
            return self._goodbye(at, True, callback, *read_back)
        # No digits (initialSilenceTimeout, or any other failure): ask again, once.
        if at.retries < self.account_retries:
            nxt = at.then("account", retries=at.retries + 1, topic=at.topic)
            return workflow(nxt, [self._ask_account(nxt, prompt(NO_DIGITS))], callback)
        return self._goodbye(at, True, callback)

    def _record(self, at: Position) -> JsonObject:
        return {
            "operationId": f"voicemail-{at.turn}",
            "action": "record",
            "playPrompt": play_prompt(f"voicemail-prompt-{at.turn}", prompt(RECORD_PROMPT)),
            "maxDurationInSeconds": 60,
            "initialSilenceTimeoutInSeconds": 5,
            "maxSilenceTimeoutInSeconds": 5,
            "recordingFormat": "wav",
            "stopTones": ["#"],
            "playBeep": True,
        }

    def _goodbye(
        self, at: Position | None, answered: bool, callback: str, *before: JsonObject
    ) -> Workflow:
        """The last Workflow of the call: play ``before``, say goodbye, then hang up.

        A call that was never answered (our first Workflow failed validation, or answer failed)
        cannot hang up: the only valid way out is reject, alone.
        """
        nxt = at.then("goodbye") if at else Position("goodbye")
        if not answered:
            return workflow(
                nxt, [{"operationId": f"reject-{nxt.turn}", "action": "reject"}], callback
            )
        actions = [
            play_prompt(f"goodbye-{nxt.turn}", *before, prompt(GOODBYE)),
            {"operationId": f"hangup-{nxt.turn}", "action": "hangup"},
        ]
        return workflow(nxt, actions, callback)


# --- Per-call state and the replies already sent --------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A response as sent, kept so that a retry gets exactly the same bytes."""

    status: int
    body: bytes

    def response(self) -> web.Response:
        if not self.body:
            return web.Response(status=self.status)
        return web.Response(status=self.status, body=self.body, content_type="application/json")


EMPTY = Reply(200, b"")


class ReplyCache:
    """The last ``size`` replies by X-Platform-Message-ID, least recently used dropped first."""

    def __init__(self, size: int = REPLY_CACHE_SIZE) -> None:
        self.size = size
        self._replies: OrderedDict[str, Reply] = OrderedDict()

    def get(self, message_id: str) -> Reply | None:
        reply = self._replies.get(message_id)
        if reply is not None:
            self._replies.move_to_end(message_id)
        return reply

    def put(self, message_id: str, reply: Reply) -> None:
        self._replies[message_id] = reply
        self._replies.move_to_end(message_id)
        while len(self._replies) > self.size:
            self._replies.popitem(last=False)

    def __len__(self) -> int:
        return len(self._replies)


@dataclass
class Call:
    """What the bot remembers about one call between callbacks."""

    call_id: str
    chain_id: str
    started: float
    last_seen: float
    workflows: int = 0
    app_state: str | None = None  # of the last Workflow sent: a fallback if it is not echoed
    voicemails: list[Path] = field(default_factory=list)


class CallStore:
    """Per-call state with a clean-up time-out.

    Delivery is not reliable (spec, Events): a call may end without a ``terminated`` result ever
    reaching the bot, so a call not heard from for ``ttl`` seconds is dropped by ``sweep``.
    The clock is injectable so tests can move time forward.
    """

    def __init__(
        self,
        ttl: float = DEFAULT_STATE_TTL,
        clock: Callable[[], float] = time.monotonic,
        cache_size: int = REPLY_CACHE_SIZE,
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self.calls: dict[str, Call] = {}
        self.replies = ReplyCache(cache_size)

    def touch(self, call_id: str, chain_id: str) -> Call:
        """The call's state, created if new, marked as just heard from."""
        now = self.clock()
        call = self.calls.get(call_id)
        if call is None:
            call = self.calls[call_id] = Call(call_id, chain_id, started=now, last_seen=now)
        call.last_seen = now
        return call

    def forget(self, call_id: str, why: str) -> None:
        call = self.calls.pop(call_id, None)
        if call is not None:
            log.info(
                "[%s] call %s: %s after %d Workflows and %.0f s; voicemails: %s",
                call.chain_id,
                call_id,
                why,
                call.workflows,
                self.clock() - call.started,
                [str(p) for p in call.voicemails] or "none",
            )

    def sweep(self) -> list[str]:
        """Drop the calls not heard from for ``ttl`` seconds; their ids."""
        cutoff = self.clock() - self.ttl
        stale = [cid for cid, call in self.calls.items() if call.last_seen < cutoff]
        for call_id in stale:
            self.forget(call_id, f"no callback for {self.ttl:g} s, state dropped")
        return stale


# --- HTTP -----------------------------------------------------------------------------------------


class BadRequest(Exception):
    """The request cannot be read: answered 400 (or 413) with a one-line JSON error."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Audio:
    content_type: str
    data: bytes


# Saved file extension by the audio part's Content-Type (field notes, Calling: HTTP).
AUDIO_EXTENSIONS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/x-ms-wma": "wma",
    "audio/mpeg": "mp3",
}


async def read_message(request: web.Request) -> tuple[JsonObject, Audio | None]:
    """The JSON object of a platform request, and the recorded audio of a multipart one."""
    if request.content_length is not None and request.content_length > MAX_JSON_BYTES + (
        MAX_AUDIO_BYTES if request.content_type == "multipart/form-data" else 0
    ):
        raise BadRequest(f"body of {request.content_length} bytes is too large", 413)
    audio: Audio | None = None
    if request.content_type == "multipart/form-data":
        raw, audio = await _read_multipart(request)
    else:
        # Anything else is read as JSON, whatever its Content-Type says.
        try:
            raw = await request.read()  # bounded by the app's client_max_size
        except web.HTTPRequestEntityTooLarge as exc:
            raise BadRequest(f"body larger than {MAX_JSON_BYTES} bytes", 413) from exc
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[...]]]]" nested too deep
        raise BadRequest(f"body is not JSON: {' '.join(str(exc).split())[:200]}") from exc
    if not isinstance(doc, dict):
        raise BadRequest(f"body is a JSON {type(doc).__name__}, not an object")
    return doc, audio


async def _read_multipart(request: web.Request) -> tuple[bytes, Audio | None]:
    """A record result: part ``conversationResult`` (JSON), part ``recordedAudio`` (audio).

    Parts are found by name, or by Content-Type when unnamed (one real SDK finds the JSON part
    that way). Unknown parts are skipped.
    """
    result: bytes | None = None
    audio: Audio | None = None
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise BadRequest("nested multipart is not expected")
            content_type = part.headers.get(hdrs.CONTENT_TYPE, "").split(";")[0].strip().lower()
            if part.name == "conversationResult" or (
                part.name is None and content_type == "application/json"
            ):
                result = await _read_part(part, MAX_JSON_BYTES)
            elif part.name == "recordedAudio" or content_type.startswith("audio/"):
                audio = Audio(content_type, await _read_part(part, MAX_AUDIO_BYTES))
            else:
                await part.release()
    except (ValueError, HttpProcessingError, AssertionError) as exc:
        # aiohttp's parser raises these for a malformed body (an over-long boundary even trips
        # one of its asserts): the sender's fault, so a 400, never a 500.
        raise BadRequest(f"body is not valid multipart: {exc}") from exc
    if result is None:
        raise BadRequest("multipart body without a conversationResult part")
    return result, audio


async def _read_part(part: BodyPartReader, limit: int) -> bytes:
    data = bytearray()
    while chunk := await part.read_chunk():
        data += chunk
        if len(data) > limit:
            raise BadRequest(f"part '{part.name}' larger than {limit} bytes", 413)
    return bytes(data)


def _safe_name(text: str) -> str:
    """A file-name-safe version of an id the platform chose: never trust it with a path."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text).lstrip(".")[:100] or "_"


def _error(status: int, message: str) -> web.Response:
    one_line = " ".join(message.split())
    return web.json_response({"error": one_line}, status=status, dumps=_dumps_line)


def _dumps_line(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


class CallHandler:
    """``POST /api/calls``: both the Conversation notification and every result callback."""

    def __init__(self, flow: IvrFlow, store: CallStore, voicemail_dir: Path) -> None:
        self.flow = flow
        self.store = store
        self.voicemail_dir = voicemail_dir

    async def handle(self, request: web.Request) -> web.StreamResponse:
        chain_id = request.headers.get(CHAIN_ID_HEADER, "-")
        message_id = request.headers.get(MESSAGE_ID_HEADER)
        # A retry (same message id) is answered from the cache: same bytes, nothing redone.
        if message_id is not None and (cached := self.store.replies.get(message_id)) is not None:
            log.info("[%s] message %s is a retry: sending the same reply", chain_id, message_id)
            return cached.response()
        try:
            doc, audio = await read_message(request)
            call_id = field_of(doc, "id")
            if not isinstance(call_id, str) or not call_id:
                raise BadRequest("the message has no call id")
            is_conversation = field_of(doc, "participants") is not None
            if not is_conversation and not isinstance(field_of(doc, "operationOutcome"), dict):
                raise BadRequest("a ConversationResult needs an operationOutcome object")
        except BadRequest as exc:
            log.warning("[%s] bad request: %s", chain_id, exc)
            return _error(exc.status, str(exc))
        if message_id is None:
            log.warning(
                "[%s] no %s header: a retry cannot be recognised", chain_id, MESSAGE_ID_HEADER
            )
        if audio is not None:
            # Before anything else: a caller who hangs up after speaking still left a message
            # (a recordOutcome with callState terminated and completionReason callTerminated).
            await self._save_voicemail(call_id, chain_id, doc, audio)
        # The platform calls back at links.callback: point it at this very URL, as reached.
        callback = str(request.url.with_query(None))
        return self.reply(message_id, chain_id, call_id, doc, is_conversation, callback).response()

    def reply(
        self,
        message_id: str | None,
        chain_id: str,
        call_id: str,
        doc: JsonObject,
        is_conversation: bool,
        callback: str,
    ) -> Reply:
        """Decide and remember the reply to one message.

        No ``await`` from the cache check to the ``put``: asyncio switches tasks only at an await,
        so two deliveries of the same message cannot both advance the call.
        """
        if message_id is not None and (cached := self.store.replies.get(message_id)) is not None:
            return cached  # the same message, delivered twice at once, finished while we read
        if enum_of(doc, "callState") == "terminated":
            # The call is over (the caller hung up): nothing to run. Clean up, answer 200 empty.
            log.info(
                "[%s] call %s terminated (last outcome: %s)",
                chain_id,
                call_id,
                enum_of(field_of(doc, "operationOutcome"), "type") or "none",
            )
            self.store.forget(call_id, "terminated")
            reply = EMPTY
        else:
            if is_conversation:
                self.store.forget(call_id, "restarted by a new Conversation")
            call = self.store.touch(call_id, chain_id)
            wf: Workflow | None
            if is_conversation:
                log.info("[%s] call %s: incoming, answering", chain_id, call_id)
                wf = self.flow.welcome(callback)
            else:
                outcome = field_of(doc, "operationOutcome")
                log.info(
                    "[%s] call %s: %s %s (%s)",
                    chain_id,
                    call_id,
                    enum_of(outcome, "type"),
                    enum_of(outcome, "outcome"),
                    completion_reason(outcome) or "-",
                )
                wf = self.flow.next(doc, callback, Position.load(call.app_state))
            if wf is None:
                self.store.forget(call_id, "ended")
                reply = EMPTY
            else:
                call.workflows += 1
                call.app_state = wf["appState"]
                reply = Reply(200, _dumps_line(wf).encode("utf-8"))
                if ends_call(wf):  # the platform posts nothing after it
                    self.store.forget(call_id, "ended by the bot")
        if message_id is not None:
            self.store.replies.put(message_id, reply)
        return reply

    async def _save_voicemail(
        self, call_id: str, chain_id: str, doc: JsonObject, audio: Audio
    ) -> None:
        outcome = field_of(doc, "operationOutcome")
        operation_id = field_of(outcome, "id")
        ext = AUDIO_EXTENSIONS.get(audio.content_type) or enum_of(outcome, "format") or "bin"
        name = (
            f"{_safe_name(call_id)}-{_safe_name(str(operation_id or 'record'))}.{_safe_name(ext)}"
        )
        path = self.voicemail_dir / name
        # The name depends only on the message, so saving a retried message again is harmless.
        await asyncio.to_thread(path.write_bytes, audio.data)
        log.info(
            "[%s] call %s: saved voicemail %s (%d bytes, %s s)",
            chain_id,
            call_id,
            path,
            len(audio.data),
            field_of(outcome, "lengthOfRecordingInSecs"),
        )
        call = self.store.calls.get(call_id)
        if call is not None and path not in call.voicemails:
            call.voicemails.append(path)


# --- TLS: the platform's client certificate --------------------------------------------------------


CRL_FILE = "ca.crl.pem"


def tls_context(cert_dir: Path) -> ssl.SSLContext:
    """A server context that requires a client certificate chaining to ``ca.pem``.

    ``bot.pem`` is the bot's certificate chain, ``bot.key`` its key. The TLS handshake checks the
    client certificate's chain and validity dates, and, when ``ca.crl.pem`` (the CA's certificate
    revocation list) is there, that the CRL does not list it (spec: "not revoked"); its common
    name is checked per request by ``require_platform_certificate``.

    With the CRL, ``ssl.VERIFY_CRL_CHECK_LEAF`` makes OpenSSL refuse every client certificate
    when the CRL has expired (its nextUpdate has passed): the CRL is read once, here, so a bot
    that runs for weeks restarts (or builds a new context) after the CRL is renewed.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(cert_dir / "ca.pem"))
    context.load_cert_chain(cert_dir / "bot.pem", cert_dir / "bot.key")
    context.verify_mode = ssl.CERT_REQUIRED
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    crl = cert_dir / CRL_FILE
    if crl.is_file():
        context.load_verify_locations(cafile=str(crl))  # a PEM CRL loads like a CA file
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    return context


def peer_common_names(request: web.Request) -> list[str]:
    """The common names in the subject of the verified client certificate."""
    transport = request.transport
    cert = transport.get_extra_info("peercert") if transport is not None else None
    if not isinstance(cert, dict):
        return []
    return [
        value
        for rdn in cert.get("subject", ())
        for key, value in rdn
        if key == "commonName" and isinstance(value, str)
    ]


# --- The Bearer token on every calling request ---------------------------------------------------


@dataclass(frozen=True)
class TokenSettings:
    """How the bot checks the Bearer token the platform sends on every calling request (field
    notes, Calling: HTTP: the SDKs require it, with the messaging rules): ``iss`` the connector
    issuer, ``aud`` the bot's app id, 5 minutes of skew, RS256 signed by a key of the document
    that ``openid_metadata_url`` names. The checks are those of the echo bot (``bot_auth.py``)."""

    app_id: str
    openid_metadata_url: str = DEFAULT_OPENID_METADATA_URL
    connector_issuer: str = DEFAULT_CONNECTOR_ISSUER


VALIDATOR = web.AppKey("validator", TokenValidator)


def require_bearer_token() -> Middleware:
    """Middleware: 403 unless the request carries a valid platform token (``TokenSettings``)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            await request.app[VALIDATOR].authenticate(request.headers.get(hdrs.AUTHORIZATION))
        except AuthError as exc:
            chain_id = request.headers.get(CHAIN_ID_HEADER, "-")
            log.warning("[%s] rejected (403): %s", chain_id, exc)
            return _error(403, f"not authenticated: {exc}")
        return await handler(request)

    return middleware


def require_platform_certificate(common_name: str) -> Middleware:
    """Middleware: 403 unless the client certificate was issued to the platform (spec,
    Authentication, Calling platform to bot 2)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        names = peer_common_names(request)
        if not any(name.lower() == common_name.lower() for name in names):
            log.warning("rejected a client certificate with common name %s", names or "none")
            return _error(403, "client certificate not issued to the calling platform")
        return await handler(request)

    return middleware


# --- The application -------------------------------------------------------------------------------

STORE = web.AppKey("store", CallStore)


def make_app(
    *,
    voicemail_dir: Path | None = None,
    state_ttl: float = DEFAULT_STATE_TTL,
    clock: Callable[[], float] = time.monotonic,
    platform_cn: str | None = None,
    sweep_interval: float | None = None,
    flow: IvrFlow | None = None,
    tokens: TokenSettings | None = None,
    wall_clock: Callable[[], float] = time.time,
) -> web.Application:
    """The bot as an aiohttp application.

    ``platform_cn``: when set, requests must come with a client certificate of that common name
    (serve the app with ``tls_context``). ``tokens``: when set, requests must carry a valid
    Bearer token (``wall_clock`` is the time its ``exp`` and ``nbf`` are checked against).
    ``sweep_interval``: how often stale calls are dropped; by default a quarter of
    ``state_ttl``, between 1 and 60 seconds.
    """
    store = CallStore(state_ttl, clock)
    folder = voicemail_dir or Path(tempfile.mkdtemp(prefix="ivr-voicemail-"))
    folder.mkdir(parents=True, exist_ok=True)
    middlewares = [require_platform_certificate(platform_cn)] if platform_cn else []
    if tokens is not None:
        middlewares.append(require_bearer_token())
    # client_max_size bounds request.read(); multipart parts are bounded as they are read.
    app = web.Application(middlewares=middlewares, client_max_size=MAX_JSON_BYTES)
    app[STORE] = store
    app.router.add_post(CALLS_PATH, CallHandler(flow or IvrFlow(), store, folder).handle)
    interval = sweep_interval or max(1.0, min(60.0, state_ttl / 4))

    async def sweeper(app: web.Application) -> AsyncIterator[None]:
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                store.sweep()

        task = asyncio.create_task(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(sweeper)
    if tokens is not None:

        async def key_client(app: web.Application) -> AsyncIterator[None]:
            async with aiohttp.ClientSession(timeout=KEY_FETCH_TIMEOUT) as session:

                async def fetch_json(url: str) -> object:
                    async with session.get(url, allow_redirects=False) as response:
                        response.raise_for_status()
                        return await response.json(content_type=None)  # any Content-Type

                app[VALIDATOR] = connector_validator(
                    tokens.app_id, tokens.openid_metadata_url, tokens.connector_issuer,
                    fetch_json, wall_clock,
                )  # fmt: skip
                yield

        app.cleanup_ctx.append(key_client)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A reference IVR calling bot (botemu example).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument(
        "--tls",
        type=Path,
        metavar="DIR",
        help="serve https with DIR/bot.pem and DIR/bot.key; require a client certificate "
        "chaining to DIR/ca.pem and not revoked by DIR/ca.crl.pem (when present)",
    )
    parser.add_argument(
        "--platform-cn",
        default=DEFAULT_PLATFORM_CN,
        help="common name of the platform's client certificate (with --tls; default %(default)s)",
    )
    parser.add_argument(
        "--voicemail-dir", type=Path, help="where recordings are saved (default: a new temp dir)"
    )
    parser.add_argument(
        "--state-ttl",
        type=float,
        default=DEFAULT_STATE_TTL,
        metavar="S",
        help="drop a call's state after S seconds without a callback (default %(default)g)",
    )
    parser.add_argument(
        "--app-id",
        default=os.environ.get("BOT_APP_ID"),
        help="the bot's app id: with it, every request must carry the platform's Bearer token "
        "for this app id ($BOT_APP_ID; without it, only the client certificate authenticates)",
    )
    parser.add_argument(
        "--openid-metadata-url",
        default=os.environ.get("BOTEMU_OPENID_METADATA_URL", DEFAULT_OPENID_METADATA_URL),
        help="where the token's signing keys are published ($BOTEMU_OPENID_METADATA_URL; "
        "default: botemu's on its default address)",
    )
    parser.add_argument(
        "--connector-issuer",
        default=os.environ.get("BOTEMU_CONNECTOR_ISSUER", DEFAULT_CONNECTOR_ISSUER),
        help="the token's issuer ($BOTEMU_CONNECTOR_ISSUER)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    if args.state_ttl <= 0:
        parser.error("--state-ttl must be positive")
    context = None
    if args.tls is not None:
        try:
            context = tls_context(args.tls)
        except (OSError, ssl.SSLError) as exc:
            log.error("cannot load the TLS files in %s: %s", args.tls, exc)
            return 2
        if context.verify_flags & ssl.VERIFY_CRL_CHECK_LEAF:
            log.info("refusing client certificates revoked by %s", args.tls / CRL_FILE)
        else:
            log.warning("no %s in %s: revoked client certificates are accepted", CRL_FILE, args.tls)
    tokens = None
    if args.app_id:
        tokens = TokenSettings(args.app_id, args.openid_metadata_url, args.connector_issuer)
        log.info("requests need a Bearer token for %s, signed by a key of %s", args.app_id,
                 args.openid_metadata_url)  # fmt: skip
    else:
        log.warning("no --app-id: Bearer tokens are not checked")
    voicemail_dir = args.voicemail_dir or Path(tempfile.mkdtemp(prefix="ivr-voicemail-"))
    log.info("voicemails are saved in %s", voicemail_dir)
    app = make_app(
        voicemail_dir=voicemail_dir,
        state_ttl=args.state_ttl,
        platform_cn=args.platform_cn if context else None,
        flow=IvrFlow(),
        tokens=tokens,
    )
    scheme = "https" if context else "http"
    log.info("listening on %s://%s:%d%s", scheme, args.host, args.port, CALLS_PATH)
    web.run_app(app, host=args.host, port=args.port, ssl_context=context, print=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
