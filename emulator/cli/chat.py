"""``botemu chat``: a chat with a messaging bot through a running botemu's connector (or one
started in-process when none runs), the bot's replies printed as they reach the connector."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import time
from typing import Any, TextIO
from urllib.parse import urlsplit

from emulator.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    BotRegistration,
    ServiceConfig,
    anonymous_app_id,
)
from emulator.errors import BotemuError
from emulator.transcripts.store import EventKind, TranscriptStore, default_db

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def chat_handler(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return asyncio.run(_chat_async(args, out))
    except BotemuError as e:
        print(f"botemu chat: {e}", file=sys.stderr)
        return EXIT_USAGE


async def _chat_async(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.client import running
    from emulator.service.hosting import serving

    if args.token_version and not args.emulator_token:
        raise BotemuError("--token-version needs --emulator-token")
    emulator = args.emulator.rstrip("/")
    if await running(emulator):
        return await _converse(emulator, args, out)
    if args.app_id:
        bot = BotRegistration(args.app_id, args.app_password or "", args.bot)
    elif args.app_password:
        raise BotemuError("--app-password needs --app-id")
    else:  # a template bot with no credentials
        bot = BotRegistration(anonymous_app_id(1), "", args.bot, anonymous=True)
    parts = urlsplit(emulator)
    config = ServiceConfig(
        host=parts.hostname or DEFAULT_HOST, port=parts.port or DEFAULT_PORT, bots=(bot,),
        tls=parts.scheme == "https", certs_dir=args.certs,
    )  # fmt: skip
    with TranscriptStore(default_db(), write_behind=True) as store:
        async with serving(config, store):
            return await _converse(emulator, args, out)


async def _converse(emulator: str, args: argparse.Namespace, out: TextIO) -> int:
    from emulator.client import post_json

    # Without --app-id, the bot registered at the endpoint, or else an anonymous bot that the
    # running botemu registers now (an SDK template with no credentials).
    certs = args.certs
    app_id = args.app_id
    if not app_id:
        bot = await post_json(f"{emulator}/_botemu/bots", {"endpoint": args.bot}, certs=certs)
        app_id = bot["app_id"]
    token: dict[str, Any] = {
        "token": "emulator" if args.emulator_token else "connector",
        "app_id": app_id,
    }
    if args.token_version:
        token["version"] = args.token_version
    if getattr(args, "channel", None):
        token["channel"] = args.channel
    if getattr(args, "refuse_sign_in", False):
        token["sign_in_as"] = "refuse:"
    elif getattr(args, "sign_in_as", None):
        token["sign_in_as"] = args.sign_in_as
    printer = ChatPrinter(out, signs_in="sign_in_as" in token and token["sign_in_as"] != "refuse:")
    if args.send is not None:
        sent = await post_json(
            f"{emulator}/_botemu/chat", {"text": args.send, **token}, certs=certs
        )
        await _follow(emulator, sent["conversation_id"], printer, args.wait)
        return EXIT_OK if printer.replies else EXIT_FAILED
    out.write(f"chatting with {app_id} at {args.bot} through {emulator}; Ctrl-D ends\n")
    conversation: str | None = None
    loop = asyncio.get_running_loop()
    while True:
        out.write("you> ")
        out.flush()
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return EXIT_OK
        if not line.strip():
            continue
        body: dict[str, Any] = {"text": line.strip(), **token}
        if conversation:
            body["conversation_id"] = conversation
        sent = await post_json(f"{emulator}/_botemu/chat", body, certs=certs)
        conversation = str(sent["conversation_id"])
        await _follow(emulator, conversation, printer, args.wait)


QUIET = 0.3
"""Seconds with nothing new after which a turn is over (a reply may come in parts, or be
updated or deleted right after it)."""


async def _follow(emulator: str, conversation: str, printer: ChatPrinter, wait: float) -> None:
    """Print what crosses the wire in ``conversation`` as it happens, both ways. A turn ends
    ``QUIET`` seconds after the last event once the bot has replied or refused the message, or
    when ``wait`` passes."""
    from emulator.client import get_json

    deadline = time.monotonic() + wait
    printer.refused = False
    while time.monotonic() < deadline:
        after = printer.seen(conversation)
        page = await get_json(
            f"{emulator}/_botemu/conversations/{conversation}/events?after={after}"
        )
        events = page.get("events") or []
        for event in events:
            printer.show(conversation, event)
        if events and (printer.replies or printer.refused) and not printer.signing_in:
            deadline = time.monotonic() + QUIET  # none comes to a refusal
        await asyncio.sleep(0.05)


class ChatPrinter:
    """``botemu chat``'s view of a conversation: every delivery to the bot that went wrong,
    every request the bot makes to the connector (what it sent, replied, updated or deleted, and
    any refusal), and every finding, one line each as they happen. ``replies`` counts the
    messages the connector took from the bot (a reply deleted later still counts). A streamed
    reply is printed once, its final text; on a terminal its line is updated in place as the
    chunks come. The replies in the bot's answer to ``deliveryMode: expectReplies`` are printed
    as its replies. With ``signs_in`` (``--sign-in-as``), a turn whose reply asks for a sign-in
    goes on until the bot has answered what the channel gave it (the code, the token exchange):
    the sign-in is part of the turn."""

    def __init__(self, out: TextIO, *, signs_in: bool = False) -> None:
        self.out = out
        self.signs_in = signs_in
        self.signing_in = False
        """Whether the bot asked for a sign-in that the person has not yet completed."""
        self.live = bool(getattr(out, "isatty", lambda: False)())
        """Whether the output is a terminal: a stream's line is updated in place."""
        self._streaming = False
        """Whether a stream's line is on the terminal, not yet ended."""
        self.replies = 0
        self.refused = False
        """Whether the bot refused the user's last message (an error status, or no answer)."""
        self._seen: dict[str, int] = {}
        self._delivering: dict[str, str] = {}
        self._asked: dict[str, tuple[str, str] | None] = {}
        self._answering: str | None = None

    def seen(self, conversation: str) -> int:
        return self._seen.get(conversation, 0)

    def show(self, conversation: str, event: dict[str, Any]) -> None:
        self._seen[conversation] = max(self.seen(conversation), int(event.get("seq") or 0))
        payload = event.get("payload")
        line = self._line(
            conversation, str(event.get("kind")), payload if isinstance(payload, dict) else {}
        )
        if line is not None:
            if self._streaming:  # a stream's line is ended, or replaced by the final text
                self._streaming = False
                self.out.write("\r\x1b[2K" if line.startswith("bot> ") else "\n")
            self.out.write(line + "\n")
            self.out.flush()

    def _chunk(self, text: str) -> None:
        """A stream's chunk, accepted: on a terminal, its text in place of the last one's."""
        if not self.live:
            return
        width = max(20, shutil.get_terminal_size().columns - 1)
        shown = ("bot> " + " ".join(text.split()))[-width:]
        self.out.write("\r\x1b[2K" + shown)
        self.out.flush()
        self._streaming = True

    def _line(self, conversation: str, kind: str, p: dict[str, Any]) -> str | None:
        if kind == EventKind.FINDING:
            return f"  ! {p.get('summary') or kind}"
        reply = p.get("expected_reply") if kind == EventKind.NOTE else None
        if isinstance(reply, dict):  # a reply in the bot's answer to expectReplies
            self.replies += 1
            return f"bot> {reply.get('text') or '(' + str(reply.get('type')) + ')'}"
        if kind == EventKind.HTTP_REQUEST and "url" in p:  # botemu delivering to the bot
            body = p.get("body")
            self._delivering[conversation] = str(
                body.get("type") if isinstance(body, dict) else "activity"
            )
            self._answering = str(body.get("name") or body.get("type")) if isinstance(
                body, dict) else None  # fmt: skip
            return None
        if kind == EventKind.HTTP_REQUEST and "path" in p:  # the bot calling the connector
            self._asked[conversation] = _bot_request(p)
            if self.signs_in and _asks_sign_in(p):  # answered by what is delivered from now on
                self.signing_in, self._answering = True, None
            return None
        if kind == "http.error" and conversation in self._delivering:
            label = self._delivering.pop(conversation)
            self.refused = label != "conversationUpdate"
            return f"  ! {label} not delivered to the bot: {p.get('error')}"
        if kind != EventKind.HTTP_RESPONSE:
            return None
        status = p.get("status")
        failed = not isinstance(status, int) or status >= 300
        if conversation in self._asked:
            asked = self._asked.pop(conversation)
            if failed or (status == 202 and asked is not None and asked[0] == "chunk"):
                return f"  ! the connector refused the bot (HTTP {status}): {_short(p.get('body'))}"
            if asked is None:
                return None
            verb, text = asked
            if verb == "chunk":
                self._chunk(text)
                return None
            if verb in ("sends", "replies"):
                self.replies += 1
                return f"bot> {text}"
            return f"bot {verb}> {text}" if text else f"bot {verb}"
        if conversation in self._delivering:
            label = self._delivering.pop(conversation)
            self.refused = failed and label != "conversationUpdate"
            if self._answering in ("message", "signin/verifyState") or (
                    self._answering == "signin/tokenExchange" and not failed):  # fmt: skip
                self.signing_in = False  # the bot has answered the sign-in
            if failed:
                return f"  ! the bot answered {label} with HTTP {status}: {_short(p.get('body'))}"
        return None


_ACTIVITY_PATH = re.compile(r"/v3/conversations/[^/]+/activities(?:/(?P<id>[^/?]+))?(?:\?|$)")


def _bot_request(p: dict[str, Any]) -> tuple[str, str] | None:
    """(what the bot did, the activity's text) for its send, reply, update and delete requests;
    None for its other requests (members, attachments, history, ...)."""
    found = _ACTIVITY_PATH.search(str(p.get("path") or ""))
    if found is None or found.group("id") == "history":
        return None
    method, activity_id = str(p.get("method")), found.group("id")
    if method == "DELETE" and activity_id:
        return f"deletes {activity_id}", ""
    try:
        activity = json.loads(str(p.get("body") or "null"))
    except ValueError:
        activity = None
    text = ""
    if isinstance(activity, dict):
        text = str(activity.get("text") or f"({activity.get('type')})")
        if method == "POST" and _stream_type(activity) in ("informative", "streaming"):
            return "chunk", text
    if method == "PUT" and activity_id:
        return f"updates {activity_id}", text
    if method == "POST":
        return ("replies" if activity_id else "sends"), text
    return None


SIGN_IN_CARDS = ("application/vnd.microsoft.card.oauth", "application/vnd.microsoft.card.signin")


def _asks_sign_in(p: dict[str, Any]) -> bool:
    """Whether the bot's request to the connector sends an OAuth or sign-in card."""
    try:
        activity = json.loads(str(p.get("body") or "null"))
    except ValueError:
        return False
    attachments = activity.get("attachments") if isinstance(activity, dict) else None
    return any(isinstance(a, dict) and a.get("contentType") in SIGN_IN_CARDS
               for a in attachments or ())  # fmt: skip


def _stream_type(activity: dict[str, Any]) -> str | None:
    """The ``streamType`` of a chunk of a streamed reply (its streaminfo entity's, or the older
    Teams shape's ``channelData``), None when the activity is no part of a stream."""
    entities = activity.get("entities")
    for entity in entities if isinstance(entities, list) else ():
        if isinstance(entity, dict) and str(entity.get("type")).lower() == "streaminfo":
            return str(entity.get("streamType"))
    data = activity.get("channelData")
    return str(data["streamType"]) if isinstance(data, dict) and "streamType" in data else None


def _short(body: object, limit: int = 160) -> str:
    text = " ".join(str(body or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
