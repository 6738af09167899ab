"""The live phone's calls: a person calls a calling bot from the log view (``#/phone``), in real
time, and acts as the caller (``emulator.calling.live``). The call is placed by the platform
code every call uses (``place_call``: the same engine, rules, retries, findings and transcript),
into the running botemu's transcript store, so the log view lists it and its ladder grows live.

``LivePhone`` holds every live call of one running botemu: at most ``max_live`` at once. A call
is to a registered bot (its ``calling_endpoint``, with a Bearer token signed by this botemu for
its app id; none for a bot registered with no app id, ``--calling-bot`` alone) or to a typed URL
(no token unless the URL is a registered bot's). What the call
does is pushed to its page as it happens (``push``: one message per transcript event, and
``live.playing`` when a prompt begins). A page that goes away leaves its call for ``grace``
seconds; back within them, it takes the call up again; after them, the caller hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from emulator.audio.timeline import Segment
from emulator.calling.live import MAX_TALK, LiveCaller, LiveInputError
from emulator.calling.outgoing import CallerIdentity, CallerIdentityError
from emulator.calling.session import CallSettings, place_call
from emulator.calling.settings import CallReport
from emulator.calling.tokens import LocalTokens
from emulator.jsonutil import JSON, JSONObject
from emulator.service.phone_audio import MAX_RENDERING, PromptAudio
from emulator.service.state import Emulator

log = logging.getLogger(__name__)

Sent = JSONObject
Push = Callable[[Sent], None]
PushAudio = Callable[[bytes], None]
DEFAULT_MAX_LIVE = 20
GRACE = 30.0
"""Seconds a live call outlives its page before the caller hangs up."""
MAX_CALL_SECONDS = 3600.0
MAX_WORKFLOW_BYTES = 64 * 1024
"""A Workflow larger than this is not sent to the page (the log view has it)."""
PASSED = ("kind", "summary", "at", "end", "text", "file_uri", "operation_id", "interrupted",
          "index", "rule", "severity", "message", "where", "reason", "from", "to", "deadline",
          "limit", "recognized_text")  # fmt: skip
"""The members of an event's payload the page is sent (bodies and headers stay in the store)."""


class PhoneRefused(Exception):
    """A call or an act the phone does not make: the message says why."""


@dataclass(eq=False)
class LiveCall:
    """One live call: its caller, the task that runs it, and the page it reports to."""

    bot: str
    speaker: PromptAudio
    caller: LiveCaller = field(default_factory=LiveCaller)
    push: Push | None = None
    push_audio: PushAudio | None = None
    call_id: str | None = None
    task: asyncio.Task[CallReport] | None = None
    orphaned: asyncio.TimerHandle | None = None
    speaking: set[asyncio.Task[None]] = field(default_factory=set)
    pace: float = 1.0
    holding: asyncio.TimerHandle | None = None
    """Lets go of a hold that lasts ``MAX_TALK`` seconds of the call (``let_go``)."""

    def act(self, op: str, frame: JSONObject) -> None:
        """The person's act (``press``, ``say``, ``talk``, ``hold``, ``release``, ``hangup``);
        PhoneRefused says why not."""
        try:
            if op == "press":
                self.caller.press(_text(frame, "keys"))
            elif op == "say":
                self.caller.say(_text(frame, "text"))
            elif op == "talk":
                seconds = frame.get("seconds", 2)
                if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                    raise PhoneRefused("seconds is a number")
                self.caller.talk(float(seconds))
            elif op == "hold":
                self.caller.hold()
                loop = asyncio.get_running_loop()
                self.holding = loop.call_later(MAX_TALK * self.pace, self.let_go,
                                               f"held for {MAX_TALK:g} s, the longest talk")  # fmt: skip
            elif op == "release":
                self.stop_holding()
                self.caller.release()
            elif op == "hangup":
                self.stop_holding()
                self.caller.hang_up()
            else:
                raise PhoneRefused(f"op is press, say, talk, hold, release or hangup, not {op[:40]!r}")
        except LiveInputError as e:
            raise PhoneRefused(str(e)) from None

    def stop_holding(self) -> None:
        if self.holding is not None:
            self.holding.cancel()
            self.holding = None

    def let_go(self, why: str) -> None:
        """Let go of the hold for the person (too long, or the page went away): the talk ends
        now, and the page is told why."""
        self.stop_holding()
        if self.caller.held is not None:
            with contextlib.suppress(LiveInputError):
                self.caller.release()
            self.tell({"op": "released", "reason": why})

    def audio(self, chunk: bytes) -> None:
        """The microphone's audio while the person holds to talk."""
        try:
            self.caller.audio(chunk)
        except LiveInputError as e:
            raise PhoneRefused(str(e)) from None

    def tell(self, message: Sent) -> None:
        if self.push is not None:
            self.push(message)

    def heard(self, kind: str, payload: JSONObject, vtime: float) -> None:
        """The listener of the call: each event, as it is recorded, to the page."""
        if kind == "call.start" and self.call_id is None:
            words = str(payload.get("summary", "")).split()  # "call <id> from <caller>"
            self.call_id = words[1] if len(words) > 1 else None
            self.tell({"op": "started", "call_id": self.call_id, "bot": self.bot})
        self.listen(kind, payload)
        shown: JSONObject = {k: payload[k] for k in PASSED if k in payload}
        message: Sent = {"op": "event", "kind": kind, "vtime": round(vtime, 3), "payload": shown}
        workflow = _workflow(payload) if kind == "http.response" else None
        if workflow is not None:
            message["workflow"] = workflow
        self.tell(message)


    def listen(self, kind: str, payload: JSONObject) -> None:
        """What the loudspeaker needs of an event: the Workflows' prompts, the prompt files
        fetched, and each prompt as it begins (its audio rendered and sent to the page)."""
        if kind == "http.response":
            self.speaker.workflow(payload.get("body"))
        elif kind == "platform" and isinstance(uri := payload.get("uri"), str) and self.call_id:
            self.speaker.fetched(self.call_id, uri)
        elif kind == "live.playing" and self.push_audio is not None:
            segment = self.speaker.segment(payload)
            if segment is not None and self.speaker.rendering < MAX_RENDERING:
                self.speaker.rendering += 1
                task = asyncio.get_running_loop().create_task(self.speak(payload, segment))
                self.speaking.add(task)
                task.add_done_callback(self.speaking.discard)

    async def speak(self, payload: JSONObject, segment: Segment) -> None:
        """Render a prompt's audio off the event loop and send it to the page."""
        try:
            frame = await asyncio.to_thread(self.speaker.frame, payload, segment)
        except Exception:  # the prompt's text still shows; the log says why it is silent
            log.exception("live phone: cannot render the audio of a prompt")
            return
        finally:
            self.speaker.rendering -= 1
        if self.push_audio is not None:
            self.push_audio(frame)


class LivePhone:
    """Every live call of one running botemu."""

    def __init__(
        self, emulator: Emulator, *, max_live: int = DEFAULT_MAX_LIVE, grace: float = GRACE
    ) -> None:
        self.emulator = emulator
        self.max_live = max_live
        self.grace = grace
        self.calls: set[LiveCall] = set()

    def bots(self) -> list[JSON]:
        """The registered bots with a calling endpoint."""
        return [{"app_id": b.app_id, "name": b.name or b.app_id, "url": b.calling_endpoint}
                for b in self.emulator.config.bots if b.calling_endpoint]  # fmt: skip

    def call(
        self,
        push: Push,
        url: JSON,
        pace: float = 1.0,
        caller: JSON = None,
        push_audio: PushAudio | None = None,
    ) -> LiveCall:
        """Place a live call to ``url`` (a registered bot's calling endpoint, or any http(s)
        URL), reporting to ``push`` (and the prompts' audio to ``push_audio``); ``caller``
        chooses who calls (``caller_identity``)."""
        if not isinstance(url, str) or len(url) > 2048:
            raise PhoneRefused("bot is the calling URL of a bot (at most 2,048 characters)")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PhoneRefused(f"bot {url[:100]!r} is not an http(s) URL")
        if len(self.calls) >= self.max_live:
            raise PhoneRefused(f"too many live calls ({len(self.calls)} of {self.max_live}): "
                               "hang one up, or botemu serve --max-live N")  # fmt: skip
        live = LiveCall(url, PromptAudio(self.emulator.store), push=push, push_audio=push_audio,
                        pace=pace)  # fmt: skip
        settings = replace(self.settings(url, pace), caller_id=caller_identity(caller))
        live.task = asyncio.create_task(self.run(live, settings))
        self.calls.add(live)
        return live

    def settings(self, url: str, pace: float) -> CallSettings:
        bot = next((b for b in self.emulator.config.bots if b.calling_endpoint == url), None)
        signed = bot is not None and not bot.anonymous
        tokens = LocalTokens(self.emulator.tokens, bot.app_id) if bot and signed else None
        return CallSettings(bot_url=url, pace=pace, live=True, tokens=tokens,
                            app_id=bot.app_id if bot and signed else None,
                            deadline=MAX_CALL_SECONDS)  # fmt: skip

    async def run(self, live: LiveCall, settings: CallSettings) -> CallReport:
        try:
            report = await place_call(settings, self.emulator.store, listener=live.heard,
                                      live=live.caller)  # fmt: skip
        except Exception:  # a bug here must not leave the page waiting
            log.exception("live phone: the call to %s failed", live.bot)
            live.tell({"op": "ended", "reason": "botemu failed on this call (its log has why)"})
            raise
        finally:
            self.calls.discard(live)
            if live.orphaned is not None:
                live.orphaned.cancel()
        live.tell({"op": "ended", "call_id": report.call_id, "reason": report.end_reason.value,
                   "errors": report.errors, "warnings": report.warnings})  # fmt: skip
        return report

    def detach(self, live: LiveCall) -> None:
        """The page went away: the caller hangs up unless a page takes the call up within the
        grace period."""
        live.push = live.push_audio = None
        live.let_go("the page went away")
        if live.task is None or live.task.done() or live.orphaned is not None:
            return
        loop = asyncio.get_running_loop()
        live.orphaned = loop.call_later(self.grace, _hang_up, live)

    def attach(self, call_id: JSON, push: Push, push_audio: PushAudio | None = None) -> LiveCall:
        """A page takes up the live call ``call_id`` again."""
        live = next((c for c in self.calls if c.call_id == call_id), None)
        if live is None:
            raise PhoneRefused(f"no live call {str(call_id)[:40]!r}: it has ended")
        if live.orphaned is not None:
            live.orphaned.cancel()
            live.orphaned = None
        live.push, live.push_audio = push, push_audio
        return live

    async def close(self) -> None:
        """Hang every live call up and wait for them (botemu is stopping)."""
        for live in list(self.calls):
            _hang_up(live)
        tasks = [c.task for c in self.calls if c.task is not None]
        for task in tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 10)


def caller_identity(value: JSON) -> CallerIdentity | None:
    """Who calls, from the page's ``caller`` (``identity``, ``display_name``, ``multiparty``;
    an empty or missing field is made up as for any call); PhoneRefused says what is wrong."""
    if value is None:
        return None
    if not isinstance(value, dict) or not set(value) <= {"identity", "display_name", "multiparty"}:
        raise PhoneRefused("caller is an object of identity, display_name and multiparty")
    identity, name, multiparty = (value.get(k) for k in ("identity", "display_name", "multiparty"))
    if not isinstance(identity, str | None) or not isinstance(name, str | None):
        raise PhoneRefused("the caller's identity and display_name are strings")
    if not isinstance(multiparty, bool | None):
        raise PhoneRefused("the caller's multiparty is true or false")
    try:
        return CallerIdentity(identity.strip() or None if identity else None,
                              name.strip() or None if name else None, bool(multiparty))  # fmt: skip
    except CallerIdentityError as e:
        raise PhoneRefused(str(e)) from None


def _hang_up(live: LiveCall) -> None:
    live.orphaned = None
    with contextlib.suppress(LiveInputError):
        live.caller.hang_up()


def _text(frame: JSONObject, name: str) -> str:
    value = frame.get(name)
    if not isinstance(value, str):
        raise PhoneRefused(f"{name} is a string")
    return value


def _workflow(payload: JSONObject) -> JSON:
    """The Workflow of a 2xx JSON answer, when small enough to show."""
    status, body = payload.get("status"), payload.get("body")
    if not isinstance(status, int) or not 200 <= status < 300 or not isinstance(body, str):
        return None
    if len(body) > MAX_WORKFLOW_BYTES:
        return None
    try:
        document: JSON = json.loads(body)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
