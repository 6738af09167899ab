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
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

import aiohttp
from faker import Faker
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from emulator.connector.sender import ActivitySender, BotAnswer, BotTokens, TokenKind
from emulator.errors import BotemuError
from emulator.findings import Finding, RuleRegistry, Severity
from emulator.jsonutil import JSON, JSONObject, child
from emulator.manifest.samples import SampleError, sample, validator_for
from emulator.patterns import quiet_patterns

if TYPE_CHECKING:
    from emulator.service import Emulator

RULES = RuleRegistry("Skill check (manifest against a running skill)")
_M = "spec A. Skill manifest"
_r = RULES.add
_r("SKILL-ACTIVITIES", Severity.ERROR, f"{_M} (activities)",
   "The manifest declares at least one activity in activities, and botemu can send at least one "
   "(a check that sends nothing passes nothing).")  # fmt: skip
_r("SKILL-REACHABLE", Severity.ERROR, f"{_M} (endpoint: endpointUrl)",
   "The skill answers at the endpointUrl of the checked endpoint.")  # fmt: skip
_r("SKILL-ACCEPTS", Severity.ERROR, f"{_M} (activities); spec Authentication",
   "The skill accepts (2xx) each declared activity, sent with a valid sample value and a skill "
   "consumer's token (aud its platformAppId, appid the consumer).")  # fmt: skip
_r("SKILL-INVOKE-RESULT", Severity.ERROR, f"{_M} (invokeActivity: resultValue)",
   "An invoke's response body is valid against the activity's resultValue.")  # fmt: skip
_r("SKILL-EOC-RESULT", Severity.ERROR, f"{_M} (activity definitions: resultValue)",
   "The value of the endOfConversation the skill sends back is valid against the resultValue of "
   "the activity it answers.")  # fmt: skip
_r("SKILL-SENT-DECLARED", Severity.ERROR, f"{_M} (activitiesSent)",
   "Every activity the skill sends is declared in activitiesSent, by type and (when declared) "
   "name.")  # fmt: skip
_r("SKILL-SENT-VALUE", Severity.ERROR, f"{_M} (activitiesSent: value)",
   "The value of an activity the skill sends is valid against the value schema activitiesSent "
   "declares for it.")  # fmt: skip
_r("SKILL-SAMPLE", Severity.WARNING, f"{_M} (activity definitions: value)",
   "botemu can make a sample value for each declared value schema; when it cannot, the activity "
   "is not sent (and not checked).")  # fmt: skip

DEFAULT_CONSUMER: Final = "b07e0000-c0de-4000-8000-000000000001"
"""The app id botemu presents as the skill consumer (``appid``) unless told another."""
CHECK_USER: Final[JSONObject] = {"id": "botemu-manifest-check", "name": "botemu manifest check",
                                 "role": "user"}  # fmt: skip
QUIET: Final = 0.3
"""Seconds without a new post after which the skill is taken to be done (within ``wait``)."""
MAX_FINDINGS_PER_VALUE: Final = 20


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


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The manifest endpoint checked."""

    name: str
    url: str
    app_id: str


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


@dataclass
class _Sent:
    """One declared activity as sent: its conversation, the HTTP answer, what came back."""

    key: str
    definition: JSONObject
    conversation_id: str
    answer: BotAnswer
    posts: list[JSONObject] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return str(self.definition.get("type", "message"))

    @property
    def wants_end(self) -> bool:
        """Whether its result comes back in an endOfConversation (not in an invoke response)."""
        return "resultValue" in self.definition and self.kind != "invoke" and self.accepted

    @property
    def ended(self) -> bool:
        return any(p.get("type") == "endOfConversation" for p in self.posts)

    @property
    def accepted(self) -> bool:
        return self.answer.status is not None and 200 <= self.answer.status < 300


async def check_skill(
    manifest_document: Mapping[str, JSON],
    endpoint_name: str | None,
    emulator: Emulator,
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
    skill = replace(bot, endpoint=endpoint.url)
    findings: list[Finding] = []
    sent: dict[str, _Sent] = {}

    def listen(conversation_id: str, activity: JSONObject) -> None:
        if conversation_id in sent:  # only once botemu's own activity is stored
            sent[conversation_id].posts.append(activity)

    emulator.connector.add_listener(listen)
    try:
        for key, definition in declared:
            try:
                activity = _sample_activity(key, definition, defs, seed)
            except SampleError as e:
                findings.append(Finding("SKILL-SAMPLE", Severity.WARNING, f"activities/{key}/value",
                                        f"no sample value: {e}; not sent", e.where))  # fmt: skip
                continue
            conversation = emulator.connector.open_conversation(endpoint.app_id, CHECK_USER)
            activity_id = emulator.connector.post_activity(
                conversation.id, activity, from_bot=False
            )
            outgoing = dict(conversation.activity(activity_id))
            record = _Sent(key, definition, conversation.id, BotAnswer(None))
            sent[conversation.id] = record
            record.answer = await sender.send(skill, conversation.id, outgoing,
                                              kind=TokenKind.EMULATOR)  # fmt: skip
            if record.answer.status is None and len(sent) == 1 and _refused(record.answer):
                return [*findings, _unreachable(endpoint, record.answer)]
            findings += _judge_answer(record, endpoint, defs, first=len(sent) == 1)
        if not sent:
            findings.append(Finding("SKILL-ACTIVITIES", Severity.ERROR, "activities",
                                    "no declared activity could be sent"))  # fmt: skip
            return findings
        await _settle(list(sent.values()), wait)
    finally:
        emulator.connector.remove_listener(listen)
    for record in sent.values():
        findings += _judge_posts(record, manifest_document, defs, wait)
    return findings


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
        fake = Faker()
        fake.seed_instance(own_seed)
        activity["text"] = fake.sentence()
    if kind in ("event", "invoke", "message") and "value" in definition:
        activity["value"] = sample(definition["value"], seed=own_seed, definitions=definitions)
    return activity


# --- waiting and judging -------------------------------------------------------------------------


async def _settle(records: list[_Sent], wait: float) -> None:
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


def _refused(answer: BotAnswer) -> bool:
    return (answer.failure or "").startswith("connection failed")


def _unreachable(endpoint: Endpoint, answer: BotAnswer) -> Finding:
    return Finding(
        "SKILL-REACHABLE",
        Severity.ERROR,
        f"endpoints/{endpoint.name}",
        f"cannot reach the skill at {endpoint.url}: {answer.failure}; is it running there "
        "(endpointUrl must be where it listens)?",
        answer.failure,
    )


def _judge_answer(
    record: _Sent, endpoint: Endpoint, definitions: Mapping[str, JSON], *, first: bool
) -> list[Finding]:
    where = f"activities/{record.key}"
    answer = record.answer
    out: list[Finding] = []
    if answer.status is None:
        return [Finding("SKILL-REACHABLE", Severity.ERROR, where,
                        f"no answer to the {record.kind}: {answer.failure}", answer.failure)]  # fmt: skip
    if first:
        out.append(Finding("SKILL-REACHABLE", Severity.INFO, f"endpoints/{endpoint.name}",
                           f"the skill answers at {endpoint.url}"))  # fmt: skip
    if not record.accepted:
        body = answer.body.decode("utf-8", "replace").strip()[:200]
        return [*out, Finding("SKILL-ACCEPTS", Severity.ERROR, where,
                              f"the skill refused the {record.kind} with HTTP {answer.status}",
                              f"HTTP {answer.status}" + (f": {body}" if body else ""))]  # fmt: skip
    out.append(Finding("SKILL-ACCEPTS", Severity.INFO, where,
                       f"accepted the {record.kind} (HTTP {answer.status})"))  # fmt: skip
    if record.kind == "invoke" and "resultValue" in record.definition:
        out += _invoke_result(record, definitions)
    return out


def _invoke_result(record: _Sent, definitions: Mapping[str, JSON]) -> list[Finding]:
    where = f"activities/{record.key}/resultValue"
    text = record.answer.body.decode("utf-8", "replace")
    if not text.strip():
        return [Finding("SKILL-INVOKE-RESULT", Severity.ERROR, f"{where}: $",
                        "the invoke response has no body; resultValue declares one")]  # fmt: skip
    try:
        body: JSON = json.loads(text)
    except ValueError:
        return [Finding("SKILL-INVOKE-RESULT", Severity.ERROR, f"{where}: $",
                        "the invoke response body is not JSON", text[:200])]  # fmt: skip
    return _validate("SKILL-INVOKE-RESULT", where, record.definition["resultValue"], definitions,
                     body, "the invoke response body")  # fmt: skip


def _judge_posts(
    record: _Sent, document: Mapping[str, JSON], definitions: Mapping[str, JSON], wait: float
) -> list[Finding]:
    out: list[Finding] = []
    where = f"activities/{record.key}"
    for post in record.posts:
        if post.get("type") == "endOfConversation" and "resultValue" in record.definition:
            if "value" in post:
                out += _validate("SKILL-EOC-RESULT", f"{where}/resultValue",
                                 record.definition["resultValue"], definitions, post["value"],
                                 "the endOfConversation value")  # fmt: skip
            else:
                code = post.get("code")
                out.append(Finding("SKILL-EOC-RESULT", Severity.WARNING, f"{where}/resultValue",
                                   "the skill ended the conversation without a value"
                                   + (f" (code {code})" if code else "")))  # fmt: skip
        out += _declared(post, where, document, definitions)
    if record.wants_end and not record.ended:
        out.append(Finding("SKILL-EOC-RESULT", Severity.WARNING, f"{where}/resultValue",
                           f"no endOfConversation within {wait:g} s: the resultValue was not "
                           "checked"))  # fmt: skip
    return out


def _declared(
    post: JSONObject, where: str, document: Mapping[str, JSON], definitions: Mapping[str, JSON]
) -> list[Finding]:
    kind, name = post.get("type"), post.get("name")
    shown = f"{kind}" + (f" {name!r}" if isinstance(name, str) else "")
    sent = document.get("activitiesSent")
    entries = sent if isinstance(sent, dict) else {}
    for key, entry in entries.items():
        if not isinstance(entry, dict) or not _matches(entry, kind, name):
            continue
        out = [Finding("SKILL-SENT-DECLARED", Severity.INFO, where,
                       f"sent {shown}, declared as activitiesSent/{key}")]  # fmt: skip
        schema = entry.get("value")
        if schema is not None and "value" in post:
            out += _validate("SKILL-SENT-VALUE", f"{where}/activitiesSent/{key}/value", schema,
                             definitions, post["value"], f"the value of the {shown} it sent")  # fmt: skip
        return out
    why = (
        "the manifest has no activitiesSent"
        if not entries
        else "activitiesSent does not declare it"
    )
    evidence = json.dumps(post.get("text") or post.get("value") or kind, ensure_ascii=False)
    return [Finding("SKILL-SENT-DECLARED", Severity.ERROR, where, f"the skill sent {shown}: {why}",
                    evidence[:200])]  # fmt: skip


def _matches(entry: Mapping[str, JSON], kind: JSON, name: JSON) -> bool:
    declared = entry.get("type", "message")
    if not isinstance(declared, str) or not isinstance(kind, str):
        return False
    if declared.lower() != kind.lower():
        return False
    return "name" not in entry or entry.get("name") == name


def _validate(
    rule: str,
    where: str,
    schema: JSON,
    definitions: Mapping[str, JSON],
    value: JSON,
    what: str,
) -> list[Finding]:
    """One finding per mismatch (``where: $.path``), or one info finding when ``value`` is valid."""
    try:
        validator = validator_for(schema, definitions)
    except SchemaError as e:
        why = f"not checked: the declared schema is not a draft-07 schema ({e.message})"
        return [Finding(rule, Severity.WARNING, where, why)]
    try:
        with quiet_patterns():
            found = list(validator.iter_errors(value))
    except Unresolvable as e:
        return [
            Finding(rule, Severity.WARNING, where, f"not checked: a $ref does not resolve ({e})")
        ]
    out: list[Finding] = []
    for error in sorted(found, key=lambda e: list(map(str, e.absolute_path))):
        for path in _paths(error):
            shown = (
                json.dumps(error.instance, ensure_ascii=False)[:200]
                if error.validator != "required"
                else None
            )
            out.append(Finding(rule, Severity.ERROR, f"{where}: {path}",
                               f"{what} does not match: {error.message}", shown))  # fmt: skip
        if len(out) >= MAX_FINDINGS_PER_VALUE:
            break
    if not out:
        return [Finding(rule, Severity.INFO, where, f"{what} is valid against it")]
    return out


def _paths(error: object) -> list[str]:
    """The JSON paths of a jsonschema error: the value's own, or each missing property's."""
    path = "$"
    for key in getattr(error, "absolute_path", ()):
        path = child(path, key)
    instance = getattr(error, "instance", None)
    if getattr(error, "validator", None) == "required" and isinstance(instance, dict):
        wanted = getattr(error, "validator_value", None) or []
        message = str(getattr(error, "message", ""))
        missing = [n for n in wanted if isinstance(n, str) and n not in instance
                   and repr(n) in message]  # fmt: skip
        return [child(path, n) for n in missing] or [path]
    return [path]
