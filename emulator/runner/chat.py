"""Holding a conversation with a messaging bot through a botemu in this process (``Local``).

``Local`` is also the botemu probes run through when the target names no running one. A running
botemu is driven through its control API instead (``remote.py``); both are a ``Chat``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from emulator.channels import open_on
from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.connector.errors import ConnectorError
from emulator.connector.sender import TokenKind
from emulator.jsonutil import JSONObject
from emulator.runner.common import DEFAULT_APP_ID, DEFAULT_WAIT, POLL, QUIET, CannotRun, Target
from emulator.scenario.model import Scenario, Turn
from emulator.service import EMULATOR, USER, Emulator, make_app
from emulator.service.signin import arm_sign_in
from emulator.transcripts.store import StoredEvent, TranscriptStore


@dataclass(frozen=True, slots=True)
class Conversed:
    """A conversation held: its transcript's id (the conversation's, unless the runner had to
    write its own), the events, and why the bot could not be reached."""

    transcript_id: str
    events: list[StoredEvent]
    unreachable: str | None = None


class Chat:
    """One way of holding a conversation with the bot: ``converse`` sends every turn."""

    async def converse(self, scenario: Scenario) -> Conversed:
        raise NotImplementedError


def activity_of(turn: Turn, app_id: str) -> JSONObject:
    """The activity a turn sends (the emulator adds ids, from, recipient, conversation)."""
    fields: JSONObject = {"type": turn.type}
    if turn.type == "conversationUpdate":
        fields["membersAdded"] = [dict(USER), {"id": app_id, "name": "bot"}]
        if isinstance(turn.value, dict):
            fields.update(turn.value)
        return fields
    if turn.text is not None:
        fields["text"] = turn.text
    if turn.name is not None:
        fields["name"] = turn.name
    if turn.value is not None:
        fields["value"] = turn.value
    return fields


class Quiet:
    """When the bot last sent something to each conversation (monotonic seconds)."""

    def __init__(self) -> None:
        self.last: dict[str, float] = {}

    def heard(self, conversation_id: str) -> None:
        self.last[conversation_id] = time.monotonic()

    async def wait(self, conversation_id: str, since: float, seconds: float) -> None:
        """Until ``seconds`` after ``since`` pass, or QUIET after the bot's last reply since."""
        deadline = since + seconds
        while True:
            last = self.last.get(conversation_id)
            stop = min(deadline, last + QUIET) if last is not None and last >= since else deadline
            left = stop - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(POLL, left))


def unreachable_failure(failure: str | None) -> str | None:
    """Why the bot could not be reached, from a failed delivery's reason; None: it could."""
    if failure and failure.startswith("connection failed"):
        return f"could not be reached: {failure}"
    return None


def turn_wait(turn: Turn) -> float:
    """Seconds a turn waits for the bot's replies."""
    return DEFAULT_WAIT if turn.wait is None else turn.wait


class Local(Chat):
    """A botemu in this process, on a free port, with the target bot registered."""

    def __init__(self, runner: web.AppRunner, emulator: Emulator, config: ServiceConfig) -> None:
        self.runner = runner
        self.emulator = emulator
        self.config = config
        self.url = config.base_url
        self.quiet = Quiet()
        emulator.connector.add_listener(self._on_activity)

    @classmethod
    async def start(cls, target: Target, store: TranscriptStore) -> Local:
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
            config = ServiceConfig(port=port, bots=(_registration(target),),
                                   certs_dir=target.certs or Path("certs"))  # fmt: skip
            app = make_app(config, store)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
        except BaseException:
            sock.close()
            raise
        try:
            await web.SockSite(runner, sock).start()
        except BaseException:
            await runner.cleanup()
            sock.close()
            raise
        return cls(runner, app[EMULATOR], config)

    async def close(self) -> None:
        await self.runner.cleanup()

    def _on_activity(self, conversation_id: str, activity: JSONObject) -> None:
        sender = activity.get("from")
        if not (isinstance(sender, dict) and sender.get("role") == "user"):
            self.quiet.heard(conversation_id)

    async def converse(self, scenario: Scenario) -> Conversed:
        unreachable = None
        app_id = self.config.bots[0].app_id
        turns = scenario.messaging or ()
        conversation_id: str | None = None
        if turns and turns[0].type == "conversationUpdate":
            # The scenario opens the conversation itself: no automatic conversationUpdate.
            conversation_id = open_on(self.emulator.connector, app_id, USER, scenario.channel).id
            self.emulator.opened[conversation_id] = app_id
        armed: str | None = None  # a sign-in before the conversation has begun
        for number, turn in enumerate(turns):
            since = time.monotonic()
            if turn.type == "signIn":
                if conversation_id is None:
                    armed = turn.text
                else:
                    await arm_sign_in(self.runner.app, conversation_id, str(turn.text))
                    await self.quiet.wait(conversation_id, since, turn_wait(turn))
                continue
            try:
                conversation_id, _, answer = await self.emulator.chat(
                    app_id, turn.text, conversation_id, TokenKind.CONNECTOR,
                    activity_of(turn, app_id), channel=scenario.channel, sign_in_as=armed,
                )  # fmt: skip
            except ConnectorError as e:
                raise CannotRun(f"turn {number + 1} is not an activity botemu can send: {e}") from e
            if number == 0 and answer.status is None:
                unreachable = unreachable_failure(answer.failure)
                if unreachable is not None:
                    break
            await self.quiet.wait(conversation_id, since, turn_wait(turn))
        if conversation_id is None:  # no turns at all: an empty conversation
            conversation_id = open_on(self.emulator.connector, app_id, USER, scenario.channel).id
        events = self.emulator.store.events(conversation_id)
        return Conversed(conversation_id, events, unreachable)


def _registration(target: Target) -> BotRegistration:
    """The target's messaging bot as the in-process botemu registers it."""
    if target.app_id is None and not target.app_password:  # a template's default
        return BotRegistration(anonymous_app_id(1), "", target.messaging_bot, anonymous=True)
    return BotRegistration(target.app_id or DEFAULT_APP_ID, target.app_password or "",
                           target.messaging_bot)  # fmt: skip
