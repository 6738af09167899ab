"""The verdicts of ``botemu manifest check`` (``check``; its rules, ``RULES``, are in
``check_rules.py``) and how what a
skill did with each declared activity (a ``SentActivity``: the HTTP answer, what it posted back)
is judged against its manifest. The module docstring of ``check`` lists the verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from emulator.connector.sender import BotAnswer
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject, child
from emulator.manifest.samples import validator_for
from emulator.patterns import quiet_patterns

MAX_FINDINGS_PER_VALUE: Final = 20


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The manifest endpoint checked."""

    name: str
    url: str
    app_id: str


@dataclass
class SentActivity:
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


def refused(answer: BotAnswer) -> bool:
    return (answer.failure or "").startswith("connection failed")


def unreachable(endpoint: Endpoint, answer: BotAnswer) -> Finding:
    return Finding(
        "SKILL-REACHABLE",
        Severity.ERROR,
        f"endpoints/{endpoint.name}",
        f"cannot reach the skill at {endpoint.url}: {answer.failure}; is it running there "
        "(endpointUrl must be where it listens)?",
        answer.failure,
    )


def judge_answer(
    record: SentActivity, endpoint: Endpoint, definitions: Mapping[str, JSON], *, first: bool
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


def _invoke_result(record: SentActivity, definitions: Mapping[str, JSON]) -> list[Finding]:
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


def judge_posts(
    record: SentActivity, document: Mapping[str, JSON], definitions: Mapping[str, JSON], wait: float
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
