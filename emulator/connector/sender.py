"""Delivering activities to a bot's messaging endpoint, the way the connector does.

Each activity carries ``serviceUrl`` pointing at botemu and goes out with a signed Bearer token
(spec, Authentication, "Connector to bot"), made and cached by ``emulator.identity.bearer``: a
connector-path token by default, an emulator-path token on request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import aiohttp

from emulator.config import BotRegistration
from emulator.connector.conversations import DEFAULT_CHANNEL
from emulator.connector.errors import ConnectorError
from emulator.connector.models import ConnectorState
from emulator.httpio import read_limited, redact_authorization
from emulator.identity.bearer import REFRESH_BEFORE, BotTokens, TokenKind
from emulator.jsonutil import JSON, JSONObject, dumps

__all__ = ["CHANNEL_ID", "REFRESH_BEFORE", "ActivitySender", "BotAnswer", "BotTokens", "TokenKind"]

CHANNEL_ID = DEFAULT_CHANNEL


@dataclass(frozen=True, slots=True)
class BotAnswer:
    """What the bot answered an activity with (or why it did not)."""

    status: int | None
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    failure: str | None = None
    latency_ms: float = 0.0

    @property
    def json(self) -> JSON:
        try:
            value: JSON = json.loads(self.body) if self.body.strip() else None
        except (ValueError, UnicodeDecodeError):
            return None
        return value


Recorder = Callable[[str, str, JSONObject], None]
"""(conversation id, event kind, payload): appends an event to the conversation's transcript."""

EXPECT_REPLIES = "expectReplies"
MAX_EXPECTED_REPLIES = 100
"""The most activities taken from one ExpectedReplies answer (the rest are left, with a note)."""


class ActivitySender:
    """Posts activities to bots over a shared aiohttp session."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        tokens: BotTokens,
        *,
        timeout: float = 15.0,
        max_body: int = 1024 * 1024,
        record: Recorder | None = None,
        connector: ConnectorState | None = None,
    ) -> None:
        """``connector``: where the replies a bot gives in its answer to an activity sent with
        ``deliveryMode: expectReplies`` are stored, as the bot's replies."""
        self.http = http
        self.tokens = tokens
        self.timeout = timeout
        self.max_body = max_body
        self.record = record
        self.connector = connector

    def prepare(self, activity: Mapping[str, JSON]) -> JSONObject:
        """The activity as the connector sends it: serviceUrl and channelId filled in."""
        out: JSONObject = dict(activity)
        out["serviceUrl"] = self.tokens.placeholders.base_url
        out.setdefault("channelId", CHANNEL_ID)
        return out

    async def send(
        self,
        bot: BotRegistration,
        conversation_id: str,
        activity: Mapping[str, JSON],
        *,
        kind: TokenKind = TokenKind.CONNECTOR,
        version: str = "1.0",
    ) -> BotAnswer:
        """POST one activity to the bot's messaging endpoint; never raises for the bot's doing."""
        if not bot.endpoint:
            return BotAnswer(None, failure=f"bot {bot.app_id} has no messaging endpoint")
        body = self.prepare(activity)
        headers, shown = self._headers(bot, str(body["serviceUrl"]), kind, version)
        label = f"{body.get('type', 'activity')}"
        self._record(conversation_id, "http.request", {
            "summary": f"→ bot: {label}" + _text_of(body),
            "method": "POST",
            "url": bot.endpoint,
            "headers": shown,
            "body": body,
            "token": "none (anonymous bot)" if bot.anonymous else kind.value,
        })  # fmt: skip
        answer = await self._post(bot.endpoint, body, headers)
        self._record_answer(conversation_id, answer)
        if body.get("deliveryMode") == EXPECT_REPLIES and answer.status is not None:
            self._expected_replies(conversation_id, answer)
        return answer

    def _expected_replies(self, conversation_id: str, answer: BotAnswer) -> None:
        """Store the activities of the bot's ExpectedReplies answer (``{"activities": [...]}``)
        as its replies, each noted in the transcript (``expected_reply``: the stored activity)."""
        value = answer.json
        items = value.get("activities") if isinstance(value, dict) else None
        if not isinstance(items, list) or self.connector is None:
            if 200 <= (answer.status or 0) < 300 and answer.status != 202:
                self._record(conversation_id, "note", {"summary": "← bot (expectReplies): its "
                             "answer holds no activities array"})  # fmt: skip
            return
        if len(items) > MAX_EXPECTED_REPLIES:
            self._record(conversation_id, "note", {"summary": f"← bot (expectReplies): "
                         f"{len(items)} activities, only the first {MAX_EXPECTED_REPLIES} taken"})  # fmt: skip
        for i, item in enumerate(items[:MAX_EXPECTED_REPLIES]):
            try:
                if not isinstance(item, dict):
                    raise ConnectorError(f"an activity is a JSON object, got {type(item).__name__}")
                stored_id = self.connector.post_activity(conversation_id, item)
                stored = self.connector.conversation(conversation_id).activity(stored_id)
            except ConnectorError as e:
                self._record(conversation_id, "note", {"summary": f"← bot (expectReplies): "
                             f"activities[{i}] not stored: {e.message}"})  # fmt: skip
                continue
            self._record(conversation_id, "note", {"summary": "← bot (expectReplies): "
                         f"{stored.get('type')}{_text_of(stored)}", "expected_reply": stored})  # fmt: skip

    def _headers(
        self, bot: BotRegistration, service_url: str, kind: TokenKind, version: str
    ) -> tuple[dict[str, str], JSONObject]:
        """The request headers, and the same as the transcript shows them (the token redacted).
        An anonymous bot gets no token, as from the platform's emulator."""
        headers = {"Content-Type": "application/json"}
        shown: JSONObject = dict(headers)
        if not bot.anonymous:
            token = self.tokens.token(bot.app_id, service_url=service_url, kind=kind,
                                      version=version)  # fmt: skip
            headers["Authorization"] = f"Bearer {token}"
            shown["Authorization"] = redact_authorization(headers["Authorization"])
        return headers, shown

    async def _post(self, endpoint: str, body: JSONObject, headers: dict[str, str]) -> BotAnswer:
        """POST the body; what the bot answered, or why it did not."""
        started = time.perf_counter()
        try:
            async with self.http.post(
                endpoint,
                data=dumps(body),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                allow_redirects=False,
            ) as response:
                data, oversized = await read_limited(response, self.max_body)
                return BotAnswer(
                    response.status,
                    data,
                    {str(k): v for k, v in response.headers.items()},  # istr: see recorder.py
                    "body over the size limit" if oversized else None,
                    (time.perf_counter() - started) * 1000,
                )
        except TimeoutError:
            return BotAnswer(None, failure=f"no answer within {self.timeout:g}s")
        except (aiohttp.ClientError, OSError) as e:
            return BotAnswer(None, failure=f"connection failed: {str(e) or type(e).__name__}")

    def _record_answer(self, conversation_id: str, answer: BotAnswer) -> None:
        if answer.status is None:
            self._record(conversation_id, "http.error", {
                "summary": f"✗ bot: {answer.failure}", "error": answer.failure or "",
            })  # fmt: skip
        else:
            self._record(conversation_id, "http.response", {
                "summary": f"← bot {answer.status} in {answer.latency_ms:.0f} ms",
                "status": answer.status,
                "headers": {k: v for k, v in answer.headers.items()},
                "body": answer.body.decode("utf-8", "replace"),
                "latency_ms": round(answer.latency_ms, 3),
            })  # fmt: skip

    def _record(self, conversation_id: str, kind: str, payload: JSONObject) -> None:
        if self.record is not None:
            self.record(conversation_id, kind, payload)


def _text_of(activity: Mapping[str, JSON]) -> str:
    text = activity.get("text")
    return f" {str(text)[:60]!r}" if isinstance(text, str) and text else ""
