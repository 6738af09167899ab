"""Holding a conversation through a running botemu (``Target.emulator``), driven through its
control API: each turn is ``POST /_botemu/chat``, and the bot's replies are polled from the
conversation's activities.

The conversation's own transcript is the botemu's; when that botemu does not share this run's
store, the runner writes one of its own from what the control API showed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from emulator.jsonutil import JSONObject, dumps
from emulator.runner.chat import Chat, Conversed, Quiet, activity_of, turn_wait, unreachable_failure
from emulator.runner.common import (
    POLL,
    QUIET,
    TRANSCRIPT_SETTLE,
    CannotRun,
    control_headers,
    get_json,
    post_json,
)
from emulator.runner.context import RunContext
from emulator.scenario.model import Scenario, Turn
from emulator.service import USER
from emulator.transcripts.store import EventKind, StoredEvent


class Remote(Chat):
    """A running botemu, driven through its control API (``/_botemu/chat``)."""

    def __init__(self, base: str, bot: str, app_id: str, runner: RunContext) -> None:
        self.base = base
        self.bot = bot
        self.app_id = app_id
        self.runner = runner
        self.http = runner.session
        self.quiet = Quiet()
        self.synthetic: list[tuple[str, JSONObject]] = []
        self.scenario: str | None = None
        self.channel: str | None = None
        self.armed: str | None = None
        """A sign-in turn before the conversation began: sent with the first activity."""

    @classmethod
    async def open(cls, emulator: str, bot: str, app_id: str | None, runner: RunContext) -> Remote:
        base = emulator.rstrip("/")
        http = runner.session
        try:
            health = await get_json(http, f"{base}/_botemu/health")
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as e:
            raise CannotRun(f"no botemu answers at {base}: {e or type(e).__name__}") from e
        if not isinstance(health, dict) or health.get("status") != "ok":
            raise CannotRun(f"no botemu answers at {base}")
        if app_id is None:  # the bot registered there, or else an anonymous one, made now
            found = await post_json(http, f"{base}/_botemu/bots", {"endpoint": bot},
                                    control_headers(runner.control_certs))  # fmt: skip
            if not isinstance(found, dict) or not isinstance(found.get("app_id"), str):
                raise CannotRun(f"the botemu at {base} did not say which bot is at {bot}")
            app_id = found["app_id"]
        return cls(base, bot, app_id, runner)

    def note(self, kind: str, payload: JSONObject) -> None:
        self.synthetic.append((kind, payload))

    async def converse(self, scenario: Scenario) -> Conversed:
        self.scenario = scenario.id
        self.channel = scenario.channel
        conversation_id: str | None = None
        unreachable = None
        seen = 0
        replies = 0
        for number, turn in enumerate(scenario.messaging or ()):
            if turn.type == "signIn":
                if conversation_id is None:
                    self.armed = turn.text
                else:
                    since = time.monotonic()
                    await self._post(f"{self.base}/_botemu/signin",
                                     {"conversation_id": conversation_id, "as": turn.text})  # fmt: skip
                    seen, heard = await self._replies(conversation_id, seen,
                                                      since + turn_wait(turn), since)  # fmt: skip
                    replies += heard
                continue
            conversation_id, failure, since = await self._send(turn, conversation_id)
            if failure is not None and number == 0:
                unreachable = unreachable_failure(failure)
                if unreachable is not None:
                    break
            seen, heard = await self._replies(conversation_id, seen, since + turn_wait(turn), since)
            replies += heard
        if conversation_id is None:
            raise CannotRun("a conversation needs at least one turn against a running botemu")
        transcript, events = await self._transcript(conversation_id, replies)
        return Conversed(transcript, events, unreachable)

    async def _send(self, turn: Turn, conversation_id: str | None) -> tuple[str, str | None, float]:
        """Send one turn: (the conversation's id, why the bot did not answer it or None, when
        it was sent: monotonic seconds)."""
        activity = activity_of(turn, self.app_id)
        body: dict[str, Any] = {"app_id": self.app_id, "activity": activity}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        elif self.channel is not None:
            body["channel"] = self.channel
        if self.armed is not None:
            body["sign_in_as"], self.armed = self.armed, None
        self.note(EventKind.HTTP_REQUEST, {"summary": f"→ bot: {turn.type}", "method": "POST",
                                           "url": self.bot, "body": activity})  # fmt: skip
        since = time.monotonic()
        sent = await self._post(f"{self.base}/_botemu/chat", body)
        took = (time.monotonic() - since) * 1000
        status, failure = sent.get("status"), sent.get("failure")
        if isinstance(status, int):
            self.note(EventKind.HTTP_RESPONSE, {"summary": f"← bot {status} in {took:.0f} ms",
                                                "status": status,
                                                "latency_ms": round(took, 3)})  # fmt: skip
            return str(sent["conversation_id"]), None, since
        self.note(EventKind.HTTP_ERROR, {"summary": f"✗ bot: {failure}", "error": str(failure)})
        return str(sent["conversation_id"]), str(failure), since

    async def _replies(
        self, conversation_id: str, seen: int, deadline: float, since: float
    ) -> tuple[int, int]:
        """Poll the bot's replies after activity ``seen`` until ``deadline``, or QUIET after the
        last one: (the activities seen now, how many of them were the bot's)."""
        replies = 0
        while True:
            page = await get_json(self.http, f"{self.base}/_botemu/conversations/"
                                  f"{conversation_id}/activities?after={seen}")  # fmt: skip
            seen = int(page["next"])
            for item in page["activities"]:
                if (item.get("from") or {}).get("role") != "user":
                    replies += 1
                    self.quiet.heard(conversation_id)
                    self._note_reply(conversation_id, item)
            last = self.quiet.last.get(conversation_id)
            stop = min(deadline, last + QUIET) if last is not None and last >= since else deadline
            if time.monotonic() >= stop:
                return seen, replies
            await asyncio.sleep(POLL)

    def _note_reply(self, conversation_id: str, item: dict[str, Any]) -> None:
        self.note(EventKind.HTTP_REQUEST, {
            "summary": f"← bot sends {item.get('type')}", "method": "POST",
            "path": f"/v3/conversations/{conversation_id}/activities",
            "body": dumps(item).decode("utf-8"),
        })  # fmt: skip
        self.note(EventKind.HTTP_RESPONSE, {"summary": "→ 200", "status": 200})

    async def _transcript(
        self, conversation_id: str, replies: int
    ) -> tuple[str, list[StoredEvent]]:
        """The conversation's own transcript when the botemu shares this store's file (it
        commits from its own process: wait for it); otherwise the one built here."""
        deadline = time.monotonic() + TRANSCRIPT_SETTLE
        while self.runner.store.call(conversation_id) is not None:
            events = self.runner.store.events(conversation_id)
            got = sum(1 for e in events if e.kind == EventKind.HTTP_REQUEST and "path" in e.payload)
            if got >= replies or time.monotonic() >= deadline:
                return conversation_id, events
            await asyncio.sleep(POLL)
        store = self.runner.store
        # A new id, never the conversation's: the other botemu may yet write that one here.
        transcript = store.start(kind="conversation", bot=self.app_id, caller=str(USER["id"]),
                                 scenario=self.scenario)  # fmt: skip
        store.append(transcript, EventKind.NOTE, {
            "summary": f"conversation {conversation_id} through the botemu at {self.base} "
            "(as seen through its control API; its own transcript is in its database)",
            "conversation_id": conversation_id,
        })  # fmt: skip
        for kind, payload in self.synthetic:
            store.append(transcript, kind, payload)
        return transcript, store.events(transcript)

    async def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        timeout = aiohttp.ClientTimeout(total=(self.runner.timeout or 15.0) + 5.0)
        headers = control_headers(self.runner.control_certs)
        async with self.http.post(url, json=body, headers=headers, timeout=timeout) as response:
            if response.status >= 400:
                text = (await response.text())[:200]
                raise CannotRun(f"the botemu at {self.base} refused the turn: HTTP "
                                f"{response.status}: {text}")  # fmt: skip
            answer: dict[str, Any] = await response.json()
            return answer
