"""The web chat's live socket: a person talks to a registered messaging bot from the log view
(``#/chat``). The conversation itself is a **Direct Line** conversation of botemu's own
(``channels/directline``): the page is a Direct Line client, which starts it, reads the bot's
activities from its stream and posts the person's (one user side, for Web Chat, the client
library, Botium and this page alike). This socket carries what Direct Line has no word for:
the registered bots, a token for the conversation the person starts, the bot's HTTP answer to
each activity (an invoke's body), a skill manifest's findings, a sign-in card's link.

``GET /_botemu/live/chat`` upgrades to a WebSocket of subprotocol ``botemu.live.v1``. The page
offers a second subprotocol, ``botemu.secret.<token>``: the page token the log view's page was
given (``bootstrap``, a ``<meta>`` tag), or the control secret. Refused before the upgrade: an
``Origin`` that is not botemu's own (403), no or a wrong token (403), too many sockets (429).
The guard's Host check comes first, as for every request (docs/security.md). The Direct Line
token the page is given is bound to its conversation, its user and the page's own origin: a
page of another origin gets nothing without a token botemu gave it.

Frames are JSON text, one object each. From the page (``ref``: any short string or number, sent
back with what answers it):

==============================================  ==================================================
``{"op": "start", "app_id", "channel"?}``        a new conversation with the bot (``Restart``
                                                 too: the socket's previous one ends): ``started``
                                                 answers with its Direct Line token
``{"op": "bots", "ref"?}``                       the registered messaging bots again
``{"op": "manifest", "text", "name"?}``          a skill manifest (``livechat_skill``): its
                                                 activities for the menu; null text forgets it
``{"op": "signin", "connection"}``               a sign-in card's link (a card with none)
==============================================  ==================================================

To the page: ``ready`` (``bots``, ``types``, ``limits``) once; ``bots``; ``started``
(``conversation_id``, ``app_id``, ``bot``, ``channel``, ``user``, and ``directline``:
``domain``, ``token``); ``answer`` (the bot's HTTP answer to each activity of the conversation
the user's side sent: ``activity_id``, ``type``, ``status``, ``failure``, and ``body``, an
invoke's response); ``manifest`` (``activities``, ``findings``; once after ``ready`` too, with
``botemu serve --manifest``); ``findings`` (an endOfConversation checked against the manifest's
resultValue; an invoke's are in its ``answer``); ``signin`` (``link``); ``refused`` (``error``:
why a frame was not acted on; the conversation goes on).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

from emulator.channels import CHANNELS, channel
from emulator.channels.directline import DIRECTLINE, PREFIX, DirectLine
from emulator.channels.directline.errors import DirectLineError
from emulator.connector.errors import ConnectorError
from emulator.connector.sender import BotAnswer
from emulator.findings import Finding
from emulator.guard import GUARD, Guard
from emulator.jsonutil import JSON, JSONObject
from emulator.logview.bootstrap import bootstrap_middleware
from emulator.service.livechat_skill import Declared, Given, SkillManifest, picked
from emulator.service.livesocket import MAX_FRAME, PROTOCOL, LiveSocket, Sent
from emulator.service.signin import sign_in_link
from emulator.service.state import CONTROL, EMULATOR, USER, Emulator
from emulator.transcripts.store import TranscriptError

log = logging.getLogger(__name__)

LIVE_CHAT_PATH = f"{CONTROL}/live/chat"
SECRET_PROTOCOL = "botemu.secret."
META_TOKEN, META_URL = "botemu-live-token", "botemu-live-chat"
DEFAULT_MAX_LIVE = 20
TYPES = ("message", "event", "invoke", "endOfConversation", "typing", "messageReaction",
         "conversationUpdate", "deleteUserData")  # fmt: skip
"""The activity types the page's menu offers."""
MAX_TEXT = 16_384
"""Characters of a message the page sends (the page holds to it; Direct Line bounds bytes)."""
MAX_VALUE = 32 * 1024
"""Characters of an invoke's answer body shown to the page."""
MAX_PENDING = 16
"""Frames waiting to be acted on."""
SOCKETS_PER_LIVE = 2
"""Open sockets per allowed live conversation (pages that have not started one yet count too)."""
CLOSED_REASON = "web chat closed"


@dataclass(eq=False)
class Session(LiveSocket):
    """One socket of a page (``LiveSocket``), its inbox of frames to act on (the worker task),
    and its conversation."""

    inbox: asyncio.Queue[JSONObject] = field(default_factory=lambda: asyncio.Queue(MAX_PENDING))
    conversation_id: str | None = None
    app_id: str | None = None
    origin: str = ""
    """The page's origin: its Direct Line tokens are bound to it."""
    skill: SkillManifest | None = None
    expecting: Declared | None = None
    """The declared activity whose resultValue the bot's next endOfConversation answers."""


class LiveChat:
    """Every live web chat of one running botemu (``LIVECHAT`` on its app)."""

    def __init__(
        self, emulator: Emulator, directline: DirectLine, *, max_live: int = DEFAULT_MAX_LIVE
    ) -> None:
        self.emulator = emulator
        self.directline = directline
        self.max_live = max_live
        self.page_token = secrets.token_urlsafe(32)
        """Handed to the log view's page only (``bootstrap``); opens live chats, nothing else."""
        self.sessions: set[Session] = set()
        self.live: dict[str, Session] = {}
        """Conversation id -> the socket holding it."""
        self.given: Given | None = None
        """The manifest every page starts with, as if picked (``botemu serve --manifest``)."""
        emulator.connector.add_listener(self._heard, wants=self.live.__contains__)
        directline.delivering.append(self._delivering)
        directline.answered.append(self._answered)

    # --- the connector's and Direct Line's side -------------------------------------------------

    def _heard(self, conversation_id: str, activity: JSONObject) -> None:
        """The bot's endOfConversation, checked against the page's skill manifest."""
        session = self.live.get(conversation_id)
        if session is not None and activity.get("type") == "endOfConversation":
            sender = activity.get("from")
            if not (isinstance(sender, dict) and sender.get("role") == "user"):
                self._ended(session, conversation_id, activity)

    def _delivering(self, conversation_id: str, activity: JSONObject) -> None:
        """A user activity of a live conversation goes to the bot: the declared activity whose
        resultValue the bot's coming endOfConversation answers (an invoke's: its answer)."""
        session = self.live.get(conversation_id)
        if session is None or session.skill is None:
            return
        declared = session.skill.expecting(activity)
        if declared is not None and activity.get("type") != "invoke":
            session.expecting = declared

    def _answered(self, conversation_id: str, activity: JSONObject, answer: BotAnswer) -> None:
        """The bot's answer to a user activity of a live conversation, to its page (an
        invoke's body checked against the manifest's resultValue when it declares one)."""
        session = self.live.get(conversation_id)
        if session is None:
            return
        kind = str(activity.get("type"))
        message = answer_message(str(activity.get("id")), kind, answer)
        skill = session.skill
        declared = skill.expecting(activity) if skill is not None else None
        if skill and declared and kind == "invoke" and answer.status is not None:
            found = skill.check(declared, "SKILL-INVOKE-RESULT", message["body"],
                                "the invoke response body")  # fmt: skip
            message["findings"] = self._note(conversation_id, found)
        session.push(message)

    def session(self, ws: web.WebSocketResponse, request: web.Request) -> Session:
        """A new socket's session, its outbox bounded by ``MemoryLimits.outbox_bytes``."""
        limit = self.emulator.config.limits.outbox_bytes
        return Session(ws, request.transport, max(limit, 2 * MAX_FRAME))

    def bots(self) -> list[JSON]:
        """The registered bots with a messaging endpoint."""
        return [{"app_id": b.app_id, "name": b.name or b.app_id, "endpoint": b.endpoint,
                 "anonymous": b.anonymous}
                for b in self.emulator.config.bots if b.endpoint]  # fmt: skip

    def ready(self) -> Sent:
        limits: JSONObject = {"text": MAX_TEXT, "value": MAX_VALUE, "frame": MAX_FRAME,
                              "live": self.max_live}  # fmt: skip
        return {"op": "ready", "bots": self.bots(), "types": list(TYPES), "limits": limits}

    # --- admission ------------------------------------------------------------------------------

    def refusal(self, request: web.Request) -> web.Response | None:
        """Why this upgrade is refused (before any socket is opened), or None."""
        guard = request.app[GUARD]
        origin = request.headers.get("Origin")
        if origin is not None and not origin_allowed(guard, origin, request):
            return _refuse(403, f"Origin {origin[:100]!r} is not allowed: the web chat is "
                           "botemu's own page")  # fmt: skip
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
        if PROTOCOL not in offered:
            return _refuse(400, f"the web chat speaks the WebSocket subprotocol {PROTOCOL}")
        tokens = [p[len(SECRET_PROTOCOL) :] for p in offered if p.startswith(SECRET_PROTOCOL)]
        if not any(self.token_ok(guard, t) for t in tokens[:1]):
            return _refuse(403, f"the web chat needs the subprotocol {SECRET_PROTOCOL}<token>: "
                           "the page's token, or this botemu's control secret")  # fmt: skip
        if len(self.sessions) >= SOCKETS_PER_LIVE * self.max_live:
            return _refuse(429, f"too many web chat sockets ({len(self.sessions)}): close a tab")
        return None

    def token_ok(self, guard: Guard, token: str) -> bool:
        if hmac.compare_digest(token.encode("utf-8", "replace"), self.page_token.encode()):
            return True
        return guard.secret_ok(token)

    # --- the page's frames ----------------------------------------------------------------------

    def receive(self, session: Session, data: str) -> None:
        """Read one frame; queue it for the worker, or refuse it."""
        try:
            frame = json.loads(data)
        except RecursionError:
            session.refuse(None, "the frame is nested too deeply")
            return
        except ValueError:
            session.refuse(None, "the frame is not JSON")
            return
        if not isinstance(frame, dict):
            session.refuse(None, "a frame is a JSON object with an op")
            return
        ref = frame.get("ref")
        if not (
            ref is None or isinstance(ref, int | float) or (isinstance(ref, str) and len(ref) <= 64)
        ):
            session.refuse(None, "ref is a number or a string of at most 64 characters")
            return
        op = frame.get("op")
        if op == "send":
            session.refuse(ref, "the page sends activities through Direct Line: POST "
                           f"{PREFIX}/conversations/{{id}}/activities with the token of started")
            return
        if op not in ("start", "bots", "manifest", "signin"):
            session.refuse(ref, f"op is start, bots, manifest or signin, not {str(op)[:40]!r}")
            return
        try:
            session.inbox.put_nowait(frame)
        except asyncio.QueueFull:
            session.refuse(ref, f"{MAX_PENDING} frames are already waiting: slow down")

    async def work(self, session: Session) -> None:
        """Act on the session's frames, one after the other (a channel delivers in order)."""
        while True:
            frame = await session.inbox.get()
            ref = frame.get("ref")
            try:
                if frame["op"] == "bots":
                    session.push({"op": "bots", "ref": ref, "bots": self.bots()})
                elif frame["op"] == "start":
                    await self.start(session, ref, frame.get("app_id"), frame.get("channel"))
                elif frame["op"] == "manifest":
                    self.manifest(session, ref, frame)
                else:
                    self.sign_in_link(session, ref, frame.get("connection"))
            except Refused as e:
                session.refuse(ref, str(e))
            except (ConnectorError, DirectLineError) as e:
                session.refuse(ref, f"the conversation was not opened: {e}")
            except Exception:  # a bug here must not leave the page waiting
                log.exception("web chat: %s failed", frame.get("op"))
                session.refuse(ref, "botemu failed on this frame (its log has why)")

    async def start(
        self, session: Session, ref: JSON, app_id: JSON, channel_id: JSON = None
    ) -> None:
        """A new Direct Line conversation between the person and the bot ``app_id`` on the
        channel ``channel_id`` (the default when None): the page starts it with the token of
        ``started`` (``POST /conversations``), and the bot hears the conversationUpdate that
        adds both first."""
        emulator = self.emulator
        bot = next((b for b in emulator.config.bots if b.app_id == app_id and b.endpoint), None)
        if not isinstance(app_id, str) or bot is None:
            raise Refused(f"no messaging bot is registered with app id {str(app_id)[:100]!r}")
        if session.conversation_id is None and len(self.live) >= self.max_live:
            raise Refused(f"too many live conversations ({len(self.live)} of {self.max_live}): "
                          "close a chat, or botemu serve --max-live N")  # fmt: skip
        if channel_id is not None and channel_id not in CHANNELS:
            raise Refused(f"channel is one of {', '.join(CHANNELS)}, not {str(channel_id)[:40]!r}")
        channel_id = channel(channel_id if isinstance(channel_id, str) else None).id
        self.end(session)
        opened = self.directline.open_for(bot, dict(USER), channel_id, session.origin)
        conversation_id = str(opened["conversationId"])
        emulator.opened[conversation_id] = bot.app_id
        session.conversation_id, session.app_id = conversation_id, bot.app_id
        self.live[conversation_id] = session
        emulator.record(conversation_id, "note", {"summary": "web chat: opened from the log view"})
        session.push({"op": "started", "ref": ref, "conversation_id": conversation_id,
                      "app_id": bot.app_id, "bot": bot.name or bot.app_id,
                      "channel": channel_id, "user": dict(USER),
                      "directline": {"domain": PREFIX, "token": opened["token"],
                                     "expires_in": opened["expires_in"]}})  # fmt: skip

    def sign_in_link(self, session: Session, ref: JSON, connection: JSON) -> None:
        """The sign-in page's link for a card with none: the channel makes the card's state
        for this conversation, as a channel fetches the link itself (docs/oauth.md)."""
        if session.conversation_id is None or not isinstance(connection, str) or not connection:
            raise Refused("a sign-in needs a conversation and the card's connectionName")
        link = sign_in_link(self.emulator, session.conversation_id, connection[:200])
        session.push({"op": "signin", "ref": ref, "link": link})

    def manifest(self, session: Session, ref: JSON, frame: JSONObject) -> None:
        """Load (or, with no text, forget) the page's skill manifest: this page's only."""
        try:
            session.skill, message = picked(frame.get("text"), frame.get("name"), ref)
        except ValueError as e:
            raise Refused(str(e)) from None
        session.expecting = None
        session.push(message)

    def _ended(self, session: Session, conversation_id: str, activity: JSONObject) -> None:
        """The bot's endOfConversation, checked against the resultValue it answers."""
        declared, session.expecting = session.expecting, None
        if declared is None or session.skill is None:
            return
        found = session.skill.check(declared, "SKILL-EOC-RESULT", activity.get("value"),
                                    "the endOfConversation value")  # fmt: skip
        session.push({"op": "findings", "activity_id": activity.get("id"),
                      "findings": self._note(conversation_id, found)})  # fmt: skip

    def _note(self, conversation_id: str, findings: list[Finding]) -> list[JSON]:
        """Record ``findings`` in the conversation's transcript; their JSON for the page."""
        for finding in findings:
            self.emulator.record(conversation_id, "finding",
                                 {"summary": str(finding), **finding.to_json()})  # fmt: skip
        return [dict(f.to_json()) for f in findings]

    def end(self, session: Session) -> None:
        """The session's conversation is over (Restart, or the page went away)."""
        conversation_id, session.conversation_id = session.conversation_id, None
        if conversation_id is None:
            return
        self.live.pop(conversation_id, None)
        self.emulator.opened.pop(conversation_id, None)
        self.directline.close(conversation_id, CLOSED_REASON)
        with contextlib.suppress(TranscriptError):
            self.emulator.store.finish(conversation_id, reason=CLOSED_REASON)


class Refused(Exception):
    """A frame the web chat does not act on: the message says why."""


def answer_message(activity_id: str, kind: str, answer: BotAnswer) -> Sent:
    """What the page is told of the bot's HTTP answer to an activity (an invoke's response in
    ``body``: JSON when it is, else text, cut to MAX_VALUE characters)."""
    body: JSON = None
    if answer.body:
        body = answer.json
        if body is None:
            body = answer.body[:MAX_VALUE].decode("utf-8", "replace")
    return {"op": "answer", "activity_id": activity_id, "type": kind,
            "status": answer.status, "failure": answer.failure, "body": body}  # fmt: skip


def origin_allowed(guard: Guard, origin: str, request: web.Request) -> bool:
    """Whether ``origin`` is botemu's own: the scheme it serves, and a host the guard accepts
    (the guard's rule for state-changing requests, applied to the upgrade, which is a GET)."""
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme.lower() != request.scheme or "/" in rest:
        return False
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    local = (str(sockname[0]), int(sockname[1])) if isinstance(sockname, tuple) else None
    return guard.host_allowed(rest, local, request.scheme)


def _refuse(status: int, text: str) -> web.Response:
    return web.Response(
        status=status, text=text + "\n", headers={"X-Content-Type-Options": "nosniff"}
    )


# --- wiring --------------------------------------------------------------------------------------


LIVECHAT = web.AppKey("livechat", LiveChat)


async def _socket(request: web.Request) -> web.StreamResponse:
    live = request.app[LIVECHAT]
    refused = live.refusal(request)
    if refused is not None:
        return refused
    ws = web.WebSocketResponse(protocols=(PROTOCOL,), heartbeat=30.0, max_msg_size=MAX_FRAME)
    await ws.prepare(request)
    session = live.session(ws, request)
    session.origin = request.headers.get("Origin") or f"{request.scheme}://{request.host}"
    live.sessions.add(session)
    tasks = [asyncio.create_task(session.write()), asyncio.create_task(live.work(session))]
    session.push(live.ready())
    if live.given is not None:  # botemu serve --manifest: as if the page had picked it
        session.skill = live.given.skill
        session.push(live.given.frame)
    try:
        async for message in ws:
            if message.type is WSMsgType.TEXT:
                live.receive(session, message.data)
            elif message.type is WSMsgType.BINARY:
                session.refuse(None, "frames are JSON text")
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await task
        live.end(session)
        live.sessions.discard(session)
    return ws


def setup_livechat(app: web.Application, *, max_live: int = DEFAULT_MAX_LIVE) -> LiveChat:
    """Serve the web chat on ``app`` (a ``make_app`` app, before it starts, with Direct Line
    mounted): the socket, and the bootstrap that hands the log view's page its token."""
    live = LiveChat(app[EMULATOR], app[DIRECTLINE], max_live=max_live)
    app[LIVECHAT] = live
    app.router.add_get(LIVE_CHAT_PATH, _socket)
    app.middlewares.append(bootstrap_middleware(
        lambda request: {META_TOKEN: live.page_token, META_URL: LIVE_CHAT_PATH}
    ))  # fmt: skip
    return live
