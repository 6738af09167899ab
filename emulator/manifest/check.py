"""``botemu manifest check``: does a running skill do what its manifest declares?

For each activity of the manifest's ``activities``, botemu sends the skill a sample at the
``endpointUrl`` of one endpoint: an ``event`` or ``invoke`` with the declared ``name`` and a
``value`` made from its ``value`` schema (``samples.sample``, seeded), a ``message`` with a sample
``text`` (and a ``value`` when it declares one), any other kind as a bare activity of its type.
Each goes in a conversation of its own in botemu's connector (``serviceUrl`` is botemu's), so
whatever the skill posts there answers that activity.

Authentication is a skill consumer's: an RS256 token from botemu's identity service with ``iss``
the emulator (identity provider) issuer, ``aud`` the skill's ``platformAppId``, ``appid`` the
consumer's app id and ``ver`` 1.0. It is the emulator-path shape, but ``appid`` names another bot,
which is how skills are called (docs/manifest-check.md). The skill's replies authenticate at the
connector with the skill's own credentials, so its ``platformAppId`` must be registered with the
botemu (``UnregisteredSkill`` otherwise).

Verdicts (``RULES``; ``where`` is ``activities/<name>``, plus ``/resultValue: <path>`` for a
mismatch inside a value):

- the HTTP answer: 2xx passes; another status fails ``SKILL-ACCEPTS``; no connection at all
  fails ``SKILL-REACHABLE`` and ends the check;
- an ``invoke``'s response body must be valid against its ``resultValue``;
- the ``value`` of an ``endOfConversation`` the skill posts must be valid against the
  ``resultValue`` of the activity it answers (a declared ``resultValue`` with no
  ``endOfConversation`` within ``wait`` seconds is a warning: nothing was checked);
- each activity the skill posts must be declared in ``activitiesSent`` (same ``type``, and the same
  ``name`` when the declaration has one), and its ``value`` valid against the declared ``value``.

Pass findings are ``info``, so a report lists every activity. The check never raises for the
skill's doing; ``SkillCheckError`` is for input it cannot use (no such endpoint, no activities
object), ``UnregisteredSkill`` for a skill botemu cannot authenticate.

The rules and the verdicts are in ``check_verdicts``. The check runs inside a botemu, but
``manifest`` sits below the service: it takes any ``SkillCheckHost`` (the service's ``Emulator``
is one).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final, Protocol

import aiohttp

from emulator.connector.sender import ActivitySender, BotAnswer, BotTokens, TokenKind
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject
from emulator.manifest.check_rules import RULES
from emulator.manifest.check_verdicts import (
    MAX_FINDINGS_PER_VALUE,
    Endpoint,
    SentActivity,
    judge_answer,
    judge_posts,
    refused,
    unreachable,
)
from emulator.manifest.samples import SampleError, sample

if TYPE_CHECKING:
    from emulator.config import BotRegistration, ServiceConfig
    from emulator.connector.models import ConnectorState
    from emulator.identity.routes import IdentityService

__all__ = [
    "CHECK_USER",
    "DEFAULT_CONSUMER",
    "MAX_FINDINGS_PER_VALUE",
    "QUIET",
    "RULES",
    "Endpoint",
    "SkillCheckError",
    "SkillCheckHost",
    "SkillTokens",
    "UnregisteredSkill",
    "check_skill",
    "pick_endpoint",
]

DEFAULT_CONSUMER: Final = "b07e0000-c0de-4000-8000-000000000001"
"""The app id botemu presents as the skill consumer (``appid``) unless told another."""
CHECK_USER: Final[JSONObject] = {"id": "botemu-manifest-check", "name": "botemu manifest check",
                                 "role": "user"}  # fmt: skip
QUIET: Final = 0.3
"""Seconds without a new post after which the skill is taken to be done (within ``wait``)."""


class SkillCheckHost(Protocol):
    """What the check needs of the botemu it runs in (``emulator.service``'s ``Emulator`` is one):
    its configuration (the registered skill), keys, placeholders and clock for the tokens, its
    connector (the conversations) and its transcript recorder."""

    @property
    def config(self) -> ServiceConfig: ...

    @property
    def identity(self) -> IdentityService: ...

    @property
    def tokens(self) -> BotTokens: ...

    @property
    def connector(self) -> ConnectorState: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    def record(self, conversation_id: str, kind: str, payload: JSONObject) -> None: ...


class SkillCheckError(BotemuError):
    """The check cannot run on this input (``message`` says why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnregisteredSkill(SkillCheckError):
    """The skill's ``platformAppId`` is not registered with the botemu, so the skill's replies
    could not authenticate at its connector."""

    def __init__(self, app_id: str) -> None:
        super().__init__(
            f"the skill's platformAppId {app_id} is not registered with this botemu; the check "
            "needs it (the skill's replies authenticate at the connector with its password): "
            f"botemu serve --bot-endpoint URL --app-id {app_id} --app-password PW, or let "
            "botemu manifest check start one (give --app-password)"
        )
        self.app_id = app_id


def pick_endpoint(document: Mapping[str, JSON], name: str | None = None) -> Endpoint:
    """The endpoint called ``name`` (default: the first) of a manifest document."""
    endpoints = document.get("endpoints")
    if not isinstance(endpoints, list) or not endpoints:
        raise SkillCheckError("the manifest has no endpoints")
    named = [e for e in endpoints if isinstance(e, dict)]
    if name is None:
        found = named[0] if named else None
    else:
        found = next((e for e in named if e.get("name") == name), None)
    if found is None:
        known = ", ".join(str(e.get("name")) for e in named)
        raise SkillCheckError(f"the manifest has no endpoint named {name!r} (it has: {known})")
    url, app_id = found.get("endpointUrl"), found.get("platformAppId")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise SkillCheckError(f"endpoint {found.get('name')!r}: endpointUrl is not an http(s) URL")
    if not isinstance(app_id, str) or not app_id:
        raise SkillCheckError(f"endpoint {found.get('name')!r} has no platformAppId")
    return Endpoint(str(found.get("name", "default")), url, app_id)


@dataclass
class SkillTokens(BotTokens):
    """Tokens a skill consumer presents: the emulator-path shape with ``appid`` the consumer's."""

    consumer: str = DEFAULT_CONSUMER

    def claims(
        self, app_id: str, *, service_url: str = "", kind: TokenKind, version: str = "1.0"
    ) -> JSONObject:
        return {"iss": self.placeholders.emulator_issuer, "aud": app_id, "ver": "1.0",
                "appid": self.consumer}  # fmt: skip


async def check_skill(
    manifest_document: Mapping[str, JSON],
    endpoint_name: str | None,
    emulator: SkillCheckHost,
    *,
    http: aiohttp.ClientSession,
    consumer_app_id: str = DEFAULT_CONSUMER,
    seed: int = 0,
    wait: float = 5.0,
    timeout: float = 10.0,
) -> list[Finding]:
    """Send each declared activity to the skill and judge what comes back (module docstring).

    ``wait`` bounds how long botemu waits for the skill's posts after the last answer;
    ``timeout`` bounds each HTTP exchange."""
    endpoint = pick_endpoint(manifest_document, endpoint_name)
    activities = manifest_document.get("activities")
    if activities is not None and not isinstance(activities, dict):
        raise SkillCheckError("activities is not an object")
    bot = emulator.config.bot(endpoint.app_id)
    if bot is None:
        raise UnregisteredSkill(endpoint.app_id)
    definitions = manifest_document.get("definitions")
    defs = definitions if isinstance(definitions, dict) else {}
    declared = [(k, v) for k, v in (activities or {}).items() if isinstance(v, dict)]
    if not declared:
        return [Finding("SKILL-ACTIVITIES", Severity.ERROR, "activities",
                        "the manifest declares no activities: nothing to check")]  # fmt: skip
    tokens = SkillTokens(emulator.identity.keys, emulator.tokens.placeholders,
                         emulator.config.profile, emulator.clock, consumer=consumer_app_id)  # fmt: skip
    sender = ActivitySender(http, tokens, timeout=timeout, record=emulator.record)
    run = _SkillRun(emulator, endpoint, replace(bot, endpoint=endpoint.url), sender, defs, seed)
    return await run.check(declared, manifest_document, wait)


@dataclass
class _SkillRun:
    """One check: sends the declared activities, each in a conversation of its own, and collects
    what the skill posts to those conversations."""

    emulator: SkillCheckHost
    endpoint: Endpoint
    skill: BotRegistration
    sender: ActivitySender
    definitions: Mapping[str, JSON]
    seed: int
    sent: dict[str, SentActivity] = field(default_factory=dict)
    """Conversation id -> the activity sent in it."""

    def listen(self, conversation_id: str, activity: JSONObject) -> None:
        if conversation_id in self.sent:  # only once botemu's own activity is stored
            self.sent[conversation_id].posts.append(activity)

    async def check(
        self, declared: list[tuple[str, JSONObject]], document: Mapping[str, JSON], wait: float
    ) -> list[Finding]:
        findings: list[Finding] = []
        self.emulator.connector.add_listener(self.listen)
        try:
            for key, definition in declared:
                found, reached = await self.send(key, definition)
                findings += found
                if not reached:
                    return findings
            if not self.sent:
                findings.append(Finding("SKILL-ACTIVITIES", Severity.ERROR, "activities",
                                        "no declared activity could be sent"))  # fmt: skip
                return findings
            await _settle(list(self.sent.values()), wait)
        finally:
            self.emulator.connector.remove_listener(self.listen)
        for record in self.sent.values():
            findings += judge_posts(record, document, self.definitions, wait)
        return findings

    async def send(self, key: str, definition: JSONObject) -> tuple[list[Finding], bool]:
        """Send one declared activity and judge the answer: (the findings, False when the skill
        cannot be reached at all, which ends the check)."""
        try:
            activity = _sample_activity(key, definition, self.definitions, self.seed)
        except SampleError as e:
            return [Finding("SKILL-SAMPLE", Severity.WARNING, f"activities/{key}/value",
                            f"no sample value: {e}; not sent", e.where)], True  # fmt: skip
        connector = self.emulator.connector
        conversation = connector.open_conversation(self.endpoint.app_id, CHECK_USER)
        activity_id = connector.post_activity(conversation.id, activity, from_bot=False)
        outgoing = dict(conversation.activity(activity_id))
        record = SentActivity(key, definition, conversation.id, BotAnswer(None))
        self.sent[conversation.id] = record
        record.answer = await self.sender.send(self.skill, conversation.id, outgoing,
                                               kind=TokenKind.EMULATOR)  # fmt: skip
        first = len(self.sent) == 1
        if record.answer.status is None and first and refused(record.answer):
            return [unreachable(self.endpoint, record.answer)], False
        return judge_answer(record, self.endpoint, self.definitions, first=first), True


# --- the samples ---------------------------------------------------------------------------------

_EXTRA: Final[dict[str, JSONObject]] = {
    "conversationUpdate": {"membersAdded": [dict(CHECK_USER)]},
    "messageReaction": {"reactionsAdded": [{"type": "like"}]},
    "endOfConversation": {"code": "completedSuccessfully"},
}


def _sample_activity(
    key: str, definition: Mapping[str, JSON], definitions: Mapping[str, JSON], seed: int
) -> JSONObject:
    """The activity sent for one declaration; ``SampleError`` when no value can be made."""
    kind = str(definition.get("type", "message"))
    own_seed = zlib.crc32(f"{seed}:{key}".encode())  # one activity's sample ignores the others
    activity: JSONObject = {"type": kind, **_EXTRA.get(kind, {})}
    if kind in ("event", "invoke"):
        activity["name"] = definition.get("name", key)
    if kind == "message":
        from faker import Faker  # imported when first used: 100 ms a process that never does

        fake = Faker()
        fake.seed_instance(own_seed)
        activity["text"] = fake.sentence()
    if kind in ("event", "invoke", "message") and "value" in definition:
        activity["value"] = sample(definition["value"], seed=own_seed, definitions=definitions)
    return activity


# --- waiting and judging -------------------------------------------------------------------------


async def _settle(records: list[SentActivity], wait: float) -> None:
    """Wait until every activity whose result comes in an endOfConversation has one and the
    skill has been quiet for ``QUIET`` seconds, or until ``wait`` seconds have passed."""
    deadline = time.monotonic() + wait
    counts = [len(r.posts) for r in records]
    quiet_since = time.monotonic()
    while (now := time.monotonic()) < deadline:
        latest = [len(r.posts) for r in records]
        if latest != counts:
            counts, quiet_since = latest, now
        done = all(r.ended for r in records if r.wants_end)
        if done and now - quiet_since >= min(QUIET, wait):
            return
        await asyncio.sleep(0.02)
