"""Fetching the prompt files of a Workflow: each fileUri once per cache, checked (status, size,
format) and measured, so the engine knows how long it plays or why it fails. Each fetch is a
``Get`` effect that the call's driver carries out.
"""

from __future__ import annotations

from emulator.calling import exchange_rules as X
from emulator.calling.calllog import CallLog
from emulator.calling.effects import Failed, Get, Steps
from emulator.calling.engine import Media
from emulator.calling.media import MAX_PROMPT_BYTES, MediaError, inspect_prompt_media
from emulator.calling.model import PlayPrompt, Recognize, Record, Workflow
from emulator.findings import Rule
from emulator.transcripts.store import EventKind


class PromptFiles:
    """The prompt files of one call, fetched into ``cache`` (which calls may share)."""

    def __init__(
        self,
        log: CallLog,
        cache: dict[str, Media],
        *,
        timeout: float,
    ) -> None:
        self.log = log
        self.cache = cache
        self.timeout = timeout
        self.reported: set[str] = set()

    def fetch(self, workflow: Workflow) -> Steps[dict[str, Media]]:
        """Fetch each prompt file once (per cache), check it, and learn its duration. A file
        that failed in an earlier call sharing the cache fails this call too, with its finding
        (once per call), though it is not fetched again."""
        for uri in file_uris(workflow):
            if uri not in self.cache:
                self.cache[uri] = yield from self.fetch_one(uri)
                self.reported.add(uri)
            elif uri not in self.reported:
                self.reported.add(uri)
                known = self.cache[uri]
                rule = MEDIA_RULES.get(known.rule or "")
                if known.failure is not None and rule is not None:
                    self.log.found(rule, uri, f"{known.failure} (fetched earlier in this run)")
        return dict(self.cache)

    def fetch_one(self, uri: str) -> Steps[Media]:
        answer = yield Get(uri, self.timeout, MAX_PROMPT_BYTES)
        if isinstance(answer, Failed):
            if answer.kind == "timeout":
                return self.failed(uri, X.CALL_MEDIA_FETCH, f"no answer within {self.timeout:g}s")
            return self.failed(uri, X.CALL_MEDIA_FETCH, f"fetch failed: {answer.message}")
        data, more, status = answer.data, answer.oversized, answer.status
        if status != 200:
            return self.failed(uri, X.CALL_MEDIA_FETCH, f"fetch answered HTTP {status}")
        if more:
            return self.failed(uri, X.CALL_MEDIA_SIZE, "the file is over 512 KB")
        try:
            info = inspect_prompt_media(data)
        except MediaError as e:
            rule = X.CALL_MEDIA_SIZE if "limit" in str(e) else X.CALL_MEDIA_FORMAT
            return self.failed(uri, rule, str(e))
        self.log.record(EventKind.PLATFORM, {"summary": f"fetched {uri}: {info.format}, {info.seconds:.2f}s",
                                             "uri": uri, "format": info.format,
                                             "seconds": info.seconds, "bytes": info.size})  # fmt: skip
        return Media(seconds=info.seconds)

    def failed(self, uri: str, rule: Rule, why: str) -> Media:
        self.log.found(rule, uri, why)
        return Media(failure=why, rule=rule.id)


MEDIA_RULES = {r.id: r for r in (X.CALL_MEDIA_FETCH, X.CALL_MEDIA_SIZE, X.CALL_MEDIA_FORMAT)}


def file_uris(workflow: Workflow) -> list[str]:
    """The fileUri of every file prompt of a Workflow (not of a prompt that has text), once."""
    uris: list[str] = []
    for action in workflow.actions:
        prompt = action if isinstance(action, PlayPrompt) else None
        if isinstance(action, Record | Recognize):
            prompt = action.play_prompt
        for p in prompt.prompts if prompt is not None else ():
            if p.file_uri and not (p.value or "").strip() and p.file_uri not in uris:
                uris.append(p.file_uri)
    return uris
