"""The live phone's transport: the log view's phone (``#/phone``) over one WebSocket.

``GET /_botemu/live/phone`` upgrades to a WebSocket of subprotocol ``botemu.live.v1``, admitted
exactly as the web chat's socket is (``livechat.LiveChat.refusal``: botemu's own Origin, the
page's token as a second subprotocol, a bounded number of live sockets; the guard's Host check
first). The page learns the path from the bootstrap (``<meta name="botemu-live-phone">``).

Frames are JSON text, one object each. From the page (``ref`` as in the web chat):

===========================================  =====================================================
``{"op": "call", "bot": URL, "pace"?,``      place a live call (``phone.LivePhone.call``), in
``"caller"?}``                               real time (``pace`` 1) or faster (down to 0.05);
                                             ``caller``: ``identity``, ``display_name``,
                                             ``multiparty`` (``phone.caller_identity``)
``{"op": "resume", "call_id"}``              take up a live call this page held (a reconnect)
``{"op": "press", "keys"}``                  the caller presses keys (``0-9*#``)
``{"op": "say", "text"}``                    the caller says words
``{"op": "talk", "seconds"?}``               the caller makes non-speech sound (2 s)
``{"op": "hold"}``, binary frames,           the caller talks into the microphone from ``hold``
``{"op": "release"}``                        to ``release``; each binary frame between them is
                                             its audio: 16-bit little-endian mono PCM at
                                             16 kHz (``live.MIC_RATE``), at most 2 minutes kept
``{"op": "hangup"}``                         the caller hangs up
``{"op": "bots"}``                           the registered calling bots again
===========================================  =====================================================

To the page: ``ready`` (``bots``) once; ``bots``; ``started`` (``call_id``, ``bot``); ``event``
(``kind``, ``vtime``, ``payload``: the event's summary and its plain members, and ``workflow``
for a Workflow the bot answered) for every transcript event as it is recorded, and
``live.playing`` when a prompt begins; ``released`` (``reason``: botemu let go of a hold for the
person: it lasted two minutes of the call, or the page went away); ``ended`` (``reason``,
``errors``, ``warnings``);
``refused`` (``error``; the call goes on); and binary frames: each prompt's audio as it begins
(``phone_audio``). A page that closes its socket leaves its call for the
grace period (``phone.GRACE``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from aiohttp import WSMsgType, web

from emulator.jsonutil import JSON, JSONObject
from emulator.logview.bootstrap import bootstrap_middleware
from emulator.service.livechat import LIVECHAT, Session
from emulator.service.livesocket import MAX_FRAME, PROTOCOL
from emulator.service.phone import LiveCall, LivePhone, PhoneRefused
from emulator.service.state import CONTROL, EMULATOR

LIVE_PHONE_PATH = f"{CONTROL}/live/phone"
META_PHONE = "botemu-live-phone"
MIN_PACE = 0.05
"""The fastest a live call runs: twenty virtual seconds in one real second (for tests)."""
OPS = ("call", "resume", "press", "say", "talk", "hold", "release", "hangup", "bots")
LIVEPHONE = web.AppKey("livephone", LivePhone)


class Line:
    """One page's socket and the live call it holds."""

    def __init__(self, phone: LivePhone, session: Session) -> None:
        self.phone = phone
        self.session = session
        self.call: LiveCall | None = None

    def receive(self, data: str) -> None:
        frame = _frame(data)
        if isinstance(frame, str):
            self.session.refuse(None, frame)
            return
        ref = frame.get("ref")
        try:
            self.act(str(frame.get("op")), frame)
        except PhoneRefused as e:
            self.session.refuse(ref, str(e))

    def act(self, op: str, frame: JSONObject) -> None:
        held = self.call if self.call is not None and not _over(self.call) else None
        if op == "bots":
            self.session.push({"op": "bots", "ref": frame.get("ref"), "bots": self.phone.bots()})
        elif op == "call":
            if held is not None:
                raise PhoneRefused("this page is in a call: hang up first")
            self.call = self.phone.call(self.session.push, frame.get("bot"), _pace(frame),
                                        frame.get("caller"), self.session.push_bytes)  # fmt: skip
        elif op == "resume":
            self.call = self.phone.attach(frame.get("call_id"), self.session.push,
                                          self.session.push_bytes)  # fmt: skip
        elif op in OPS:
            if held is None:
                raise PhoneRefused("no call: place one first (Call)")
            held.act(op, frame)
        else:
            raise PhoneRefused(f"op is one of {', '.join(OPS)}, not {op[:40]!r}")

    def audio(self, chunk: bytes) -> None:
        """A binary frame: the microphone's audio while the person holds to talk."""
        held = self.call if self.call is not None and not _over(self.call) else None
        try:
            if held is None:
                raise PhoneRefused("no call: audio comes while holding to talk in a call")
            held.audio(chunk)
        except PhoneRefused as e:
            self.session.refuse(None, str(e))

    def gone(self) -> None:
        if self.call is not None and not _over(self.call):
            self.phone.detach(self.call)


def _pace(frame: JSONObject) -> float:
    """The call's pace: 1.0 (real time) unless the page asks for faster, down to MIN_PACE."""
    pace = frame.get("pace", 1.0)
    if not isinstance(pace, int | float) or isinstance(pace, bool) or not MIN_PACE <= pace <= 1:
        raise PhoneRefused(f"pace is a number from {MIN_PACE} to 1 (real time)")
    return float(pace)


def _over(call: LiveCall) -> bool:
    return call.task is None or call.task.done()


def _frame(data: str) -> JSONObject | str:
    """The frame as an object, or why it is refused."""
    try:
        frame: JSON = json.loads(data)
    except RecursionError:
        return "the frame is nested too deeply"
    except ValueError:
        return "the frame is not JSON"
    if not isinstance(frame, dict):
        return "a frame is a JSON object with an op"
    ref = frame.get("ref")
    if not (
        ref is None or isinstance(ref, int | float) or (isinstance(ref, str) and len(ref) <= 64)
    ):
        return "ref is a number or a string of at most 64 characters"
    return frame


async def _socket(request: web.Request) -> web.StreamResponse:
    chat, phone = request.app[LIVECHAT], request.app[LIVEPHONE]
    refused = chat.refusal(request)
    if refused is not None:
        return refused
    ws = web.WebSocketResponse(protocols=(PROTOCOL,), heartbeat=30.0, max_msg_size=MAX_FRAME)
    await ws.prepare(request)
    session = chat.session(ws, request)
    chat.sessions.add(session)  # counts among the live sockets
    line = Line(phone, session)
    writer = asyncio.create_task(session.write())
    session.push({"op": "ready", "bots": phone.bots(), "live": phone.max_live})
    try:
        async for message in ws:
            if message.type is WSMsgType.TEXT:
                line.receive(message.data)
            elif message.type is WSMsgType.BINARY:
                line.audio(message.data)
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writer
        line.gone()
        chat.sessions.discard(session)
    return ws


async def _close(app: web.Application) -> None:
    await app[LIVEPHONE].close()


def setup_livephone(app: web.Application, *, max_live: int = 20) -> LivePhone:
    """Serve the phone on ``app`` (after ``setup_livechat``, whose admission it shares): its
    socket, its path in the page's bootstrap, and hanging every live call up at shutdown."""
    phone = LivePhone(app[EMULATOR], max_live=max_live)
    app[LIVEPHONE] = phone
    app.router.add_get(LIVE_PHONE_PATH, _socket)
    app.middlewares.append(bootstrap_middleware(lambda request: {META_PHONE: LIVE_PHONE_PATH}))
    app.on_cleanup.append(_close)
    return phone
