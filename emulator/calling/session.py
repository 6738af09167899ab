"""A call: the calling platform places one call to a bot over HTTP(S) and runs it to its end.

``place_call`` posts a Conversation to the bot, then loops: judge the bot's answer, validate the
Workflow (``rules``), run it against the scripted caller (``engine``) or answer an invalid one with
the validation outcome, and post the ConversationResult to the Workflow's callback. Every exchange
and decision is appended to the transcript store as it happens; a bot that crashes, hangs, resets
the connection or returns garbage ends the call with a recorded reason and findings, never an
exception. What the platform does in each case is in ``docs/calling-http.md``.
"""

from __future__ import annotations

import asyncio
import random
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from urllib.parse import urlsplit

import aiohttp
from faker import Faker

from emulator.calling import exchange_rules as X
from emulator.calling.caller import CallerScript, describe
from emulator.calling.delivery import Deliverer, Delivery, RetryPolicy, read_limited
from emulator.calling.engine import (
    DEFAULT_MAX_WORKFLOWS,
    CallProgress,
    EngineConfig,
    Media,
    WorkflowRun,
    reject_workflow,
    result_for,
    run_workflow,
)
from emulator.calling.events import (
    ActionCompleted,
    ActionStarted,
    CallEnded,
    CallerHungUp,
    CallerPressed,
    CallerSilent,
    CallerSpoke,
    EndReason,
    Event,
    RecordingMade,
    StateChanged,
)
from emulator.calling.faults import NO_FAULTS, Injector, PlatformFaults
from emulator.calling.media import (
    CONTENT_TYPES,
    MAX_PROMPT_BYTES,
    MediaError,
    encode_recording,
    inspect_prompt_media,
)
from emulator.calling.model import (
    ActionType,
    CallState,
    Conversation,
    ModalityType,
    OperationOutcome,
    Participant,
    PlayPrompt,
    PlayPromptOutcome,
    Recognize,
    RecognizeOutcome,
    Record,
    RecordOutcome,
    Workflow,
)
from emulator.calling.rules import RuleContext, first_operation_id, validate_workflow
from emulator.calling.tokens import TokenSource, TokenUnavailable
from emulator.calling.wire import (
    DEFAULT_OPTIONS,
    WireOptions,
    encode,
    loads,
    read_workflow,
    to_json,
)
from emulator.config import platform_url
from emulator.errors import WireError
from emulator.findings import Finding, Rule, Severity
from emulator.ids import new_id
from emulator.jsonutil import JSON, JSONObject, find_key
from emulator.transcripts.store import EventKind, TranscriptStore

JSON_TYPE = "application/json"
DEFAULT_DEADLINE = 300.0
"""Wall-clock seconds one call may take by default (``CallSettings.deadline``, ``--deadline``)."""
USER_AGENT = "botemu-calling/0.1"

Listener = Callable[[str, JSONObject, float], None]
"""Called with (event kind, payload, virtual time) for every event, as it is recorded."""


@dataclass(frozen=True, slots=True)
class CallSettings:
    """Everything about one call that is not the bot's doing.

    ``allow_http``: accept http callbacks (with a warning); by default, when the bot's own address
    is http (local work). ``pace``: 0 runs in virtual time; 1.0 in real time for a person watching.
    ``faults``: what the platform does wrong on purpose (``faults.py``); none by default.
    ``tokens``: where the Bearer token of every request comes from (``tokens.py``); None sends
    no Authorization header. ``deadline``: wall-clock seconds the whole call may take (every
    request, retry, prompt file and paced wait); when they pass, the platform hangs up
    (``CALL-DEADLINE``). None: no deadline.
    """

    bot_url: str
    caller: CallerScript = field(default_factory=CallerScript)
    seed: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_workflows: int = DEFAULT_MAX_WORKFLOWS
    pace: float = 0.0
    allow_http: bool | None = None
    wire: WireOptions = DEFAULT_OPTIONS
    app_id: str | None = None
    platform_url: str = field(default_factory=platform_url)
    ssl_context: ssl.SSLContext | None = None
    fail_actions: frozenset[ActionType] = frozenset()
    scenario: str | None = None
    media_timeout: float = 10.0
    faults: PlatformFaults = NO_FAULTS
    tokens: TokenSource | None = None
    deadline: float | None = DEFAULT_DEADLINE

    @property
    def http_allowed(self) -> bool:
        if self.allow_http is not None:
            return self.allow_http
        return urlsplit(self.bot_url).scheme.lower() == "http"


@dataclass(frozen=True, slots=True)
class CallReport:
    """How a call went: its ids, why it ended, and every finding."""

    call_id: str
    chain_id: str
    end_reason: EndReason
    findings: tuple[Finding, ...]
    workflows: int
    vtime: float

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)


async def place_call(
    settings: CallSettings,
    store: TranscriptStore,
    *,
    http: aiohttp.ClientSession | None = None,
    listener: Listener | None = None,
    media_cache: dict[str, Media] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> CallReport:
    """Place one call and run it to its end. Never raises for anything the bot does.

    ``media_cache`` shares fetched prompt files across calls; ``sleep`` is how real time passes
    when ``settings.pace`` is above 0 (injectable for tests)."""
    if http is None:
        async with aiohttp.ClientSession() as own:
            return await place_call(
                settings, store, http=own, listener=listener, media_cache=media_cache, sleep=sleep
            )
    cache = {} if media_cache is None else media_cache
    return await _Call(settings, store, http, listener, cache, sleep).run()


@lru_cache(maxsize=1)
def _faker() -> Faker:
    return Faker("en_US")


@lru_cache(maxsize=1024)
def _identity(seed: int) -> tuple[str, str]:
    """The caller's user name and display name for a Faker seed (seeded runs repeat them)."""
    faker = _faker()
    faker.seed_instance(seed)
    return faker.user_name(), faker.name()


class _Call:
    def __init__(
        self,
        settings: CallSettings,
        store: TranscriptStore,
        http: aiohttp.ClientSession,
        listener: Listener | None,
        media_cache: dict[str, Media],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.settings = settings
        self.sleep = sleep
        self.http_allowed = settings.http_allowed
        self.engine_config = EngineConfig(
            max_workflows=settings.max_workflows, fail_actions=settings.fail_actions
        )
        self.faults = settings.faults if settings.faults.any else None
        """None when no fault is set: the hot path then does no fault work at all."""
        self.caller = (
            settings.caller if self.faults is None else self.faults.caller(settings.caller)
        )
        self.store = store
        self.http = http
        self.listener = listener
        self.media_cache = media_cache
        self.rng = random.Random(settings.seed)
        self.call_id = self.uuid()
        self.chain_id = self.uuid()
        self.vtime = 0.0
        self.progress = CallProgress()
        self.findings: list[Finding] = []
        self.workflows = 0
        self.received = 0
        """Workflows the bot sent so far (1 answers the Conversation): ``reject_workflows``."""
        self.deliverer = Deliverer(
            http,
            policy=settings.retry,
            record=self.record,
            wait=self.wait,
            ssl_context=settings.ssl_context,
        )
        self.injector = (
            None if self.faults is None else Injector(self.faults, self.deliverer, self.record)
        )

    def uuid(self) -> str:
        """A fresh id. Ids are never seeded: a bot keys its call state by them, so two calls
        must never share one. The seed reproduces the caller's identity and audio."""
        return new_id()

    # --- the transcript ---

    def record(self, kind: str, payload: JSONObject, blob: bytes | None = None) -> None:
        self.store.append(self.call_id, kind, payload, vtime=self.vtime, blob=blob)
        if self.listener is not None:
            self.listener(kind, payload, self.vtime)

    def finding(self, finding: Finding) -> None:
        """Record a finding. A warning this call already found at the same place (rule and
        where) is not recorded again: its first finding counts it (``Finding.count``), and a
        note at the end of the call says how often it repeated. Errors are never folded."""
        if finding.severity is Severity.WARNING:
            for index, seen in enumerate(self.findings):  # a few distinct findings per call
                if (seen.rule, seen.where, seen.severity) == (finding.rule, finding.where,
                                                              Severity.WARNING):  # fmt: skip
                    self.findings[index] = replace(seen, count=seen.count + 1)
                    return
        self.findings.append(finding)
        self.record(EventKind.FINDING, {"summary": str(finding), **finding.to_json()})

    def found(self, rule: Rule, where: str, message: str) -> None:
        self.finding(Finding(rule.id, rule.severity, where, message))

    async def wait(self, seconds: float) -> None:
        """Let virtual time pass (and real time too, at the chosen pace)."""
        await self.advance(self.vtime + seconds)

    async def advance(self, to: float) -> None:
        if to > self.vtime:
            if self.settings.pace > 0:
                await self.sleep((to - self.vtime) * self.settings.pace)
            self.vtime = to

    # --- the call ---

    def conversation(self) -> Conversation:
        user_name, name = _identity(self.rng.getrandbits(32))
        caller = Participant(
            identity=f"8:{user_name}", display_name=name, language_id="en-US", originator=True
        )
        bot = Participant(identity=f"28:{self.settings.app_id or 'bot'}", originator=False)
        return Conversation(
            id=self.call_id,
            participants=(caller, bot),
            presented_modality_types=(ModalityType.AUDIO,),
            is_multiparty=False,
            call_state=CallState.INCOMING,
        )

    async def run(self) -> CallReport:
        conversation = self.conversation()
        caller = conversation.participants[0]
        self.store.start(
            bot=self.settings.bot_url,
            call_id=self.call_id,
            caller=caller.identity,
            chain_id=self.chain_id,
            scenario=self.settings.scenario,
        )
        self.record(
            EventKind.CALL_START,
            {
                "summary": f"call {self.call_id} from {caller.display_name} ({caller.identity})",
                "bot": self.settings.bot_url,
                "caller": caller.identity,
                "chain_id": self.chain_id,
                "seed": self.settings.seed,
                "script": [describe(s) for s in self.caller.steps],
            },
        )
        if self.faults is not None:
            self.record(EventKind.NOTE, {"summary": f"faults: {self.faults.describe()}",
                                         "faults": self.faults.to_json()})  # fmt: skip
        tokens = self.settings.tokens
        if tokens is not None:
            self.record(EventKind.NOTE, {"summary": f"requests carry a Bearer token for app id "
                                         f"{tokens.app_id} from {tokens.origin}",
                                         "token": {"app_id": tokens.app_id, "origin": tokens.origin}})  # fmt: skip
        try:
            reason = await self.bounded(conversation)
        except asyncio.CancelledError:
            self.end(EndReason.CALLER_HUNG_UP, note="the run was cancelled")
            raise
        self.end(reason)
        return CallReport(
            self.call_id, self.chain_id, reason, tuple(self.findings), self.workflows, self.vtime
        )

    async def bounded(self, conversation: Conversation) -> EndReason:
        """The call's loop, within the deadline: when it passes, whatever is under way (a
        request, a retry's back-off, a prompt file) is abandoned and the platform hangs up."""
        deadline = self.settings.deadline
        if deadline is None:
            return await self.loop(conversation)
        timer = asyncio.timeout(deadline)
        try:
            async with timer:
                return await self.loop(conversation)
        except TimeoutError:
            if not timer.expired():
                raise
        self.found(X.CALL_DEADLINE, "call",
                   f"the call was still running after its deadline of {deadline:g}s wall clock "
                   f"(--deadline), {self.vtime:.1f}s virtual time in: the platform hung up")  # fmt: skip
        return EndReason.DEADLINE

    def end(self, reason: EndReason, note: str | None = None) -> None:
        for f in self.findings:  # the warnings folded by ``finding``, one note each
            if f.count > 1:
                more = f.count - 1
                self.record(EventKind.NOTE, {
                    "summary": f"{f.severity.value} {f.rule} at {f.where} repeated {more} more "
                    f"time{'s' if more > 1 else ''} in this call (recorded once, above)",
                    "repeated": {"rule": f.rule, "severity": f.severity.value, "where": f.where,
                                 "count": f.count},
                })  # fmt: skip
        if self.progress.call_state is not CallState.TERMINATED:
            old = self.progress.call_state
            self.record(EventKind.STATE, {"summary": f"call {old.value} -> terminated",
                                          "old": old.value, "new": "terminated"})  # fmt: skip
        summary = f"call ended: {reason.value}" + (f" ({note})" if note else "")
        self.record(EventKind.CALL_END, {"summary": summary, "reason": reason.value})
        self.store.finish(self.call_id, reason=reason.value)

    async def loop(self, conversation: Conversation) -> EndReason:
        body = (
            encode(conversation)
            if self.faults is None
            else self.faults.encode_conversation(conversation)
        )
        delivery = await self.post(self.settings.bot_url, body, "Conversation")
        while True:
            closed = self.progress.ended
            refused = self.judge(delivery, final=closed is not None)
            if closed is not None:
                return closed
            if refused is not None:
                return refused
            judged = self.document(delivery)
            if isinstance(judged, EndReason):
                return judged
            step = await self.step(judged)
            if isinstance(step, EndReason):
                return step
            delivery = step

    async def step(self, judged: Judged) -> Delivery | EndReason:
        """Run one judged Workflow (or refuse it); post its result. The next delivery, or why
        the call ends."""
        document, findings = judged.document, judged.findings
        self.received += 1
        for f in findings:
            self.finding(f)
        errors = any(f.severity is Severity.ERROR for f in findings)
        config = self.engine_config
        forced = self.forced(judged, errors)
        if forced is not None:
            self.record(EventKind.PLATFORM, {"summary": "platform rejected the Workflow: "
                                             "validation outcome (forced by the scenario)"})  # fmt: skip
            run = reject_workflow([forced], first_operation_id(document), self.progress, config)
            assert judged.workflow is not None
            callback, app_state = judged.workflow.callback, judged.workflow.app_state
        elif errors:
            callback = _usable_callback(document, self.http_allowed)
            if callback is None:
                self.found(X.CALL_INVALID_NO_CALLBACK, "$.links.callback",
                           "the Workflow is invalid and has no usable callback for the validation outcome")  # fmt: skip
                return EndReason.INVALID_WORKFLOW
            self.record(
                EventKind.PLATFORM,
                {"summary": "platform rejected the Workflow: validation outcome"},
            )
            run = reject_workflow(findings, first_operation_id(document), self.progress, config)
            app_state = _raw_app_state(document)
        else:
            workflow = judged.workflow
            if workflow is None:  # rules and reader disagree: a botemu bug, still never a crash
                error = judged.read_error
                where, why = (error.path, error.message) if error else ("$", "unreadable")
                self.found(X.CALL_NOT_JSON, where, f"the Workflow could not be read: {why}")
                return EndReason.BAD_RESPONSE
            media = await self.fetch_media(workflow)
            if media:
                config = replace(config, media=media)
            run = run_workflow(workflow, self.caller, self.progress, config)
            await self.replay(workflow, run)
            callback, app_state = workflow.callback, workflow.app_state
        self.progress = run.progress
        if run.outcome is not None:
            self.workflows += 1
            self.store.count_workflow(self.call_id)
            if self.workflows == X.REAL_WORKFLOW_DROP + 1:
                self.found(X.CALL_WORKFLOWS_OVER_13, "call",
                           f"the call went past {X.REAL_WORKFLOW_DROP} Workflows: the field notes "
                           f"record a real call dropped after about {X.REAL_WORKFLOW_DROP} (botemu's "
                           f"limit here is {self.settings.max_workflows}); --max-workflows "
                           f"{X.REAL_WORKFLOW_DROP} shows what the bot does when the platform "
                           "hangs up there")  # fmt: skip
        if self.progress.ended is EndReason.WORKFLOW_LIMIT:
            self.found(X.CALL_WORKFLOW_LIMIT, "call",
                       f"the call reached {self.settings.max_workflows} workflows; the platform hung up")  # fmt: skip
        if run.outcome is None or not run.post or callback is None:
            return self.progress.ended or EndReason.NO_CALLBACK
        result = result_for(
            self.call_id,
            run,
            app_state=app_state,
            call_link=f"{self.settings.platform_url}/calls/{self.call_id}",
            app_id=self.settings.app_id,
        )
        assert result is not None
        if self.faults is not None:
            result = self.faults.result(result)
        outcome = result.operation_outcome
        label = describe_outcome(outcome)
        json_body = (
            encode(result, self.settings.wire)
            if self.faults is None
            else self.faults.encode_result(result, self.settings.wire)
        )
        meta: JSONObject | None = None
        if self.faults is not None and self.faults.unknown_enums:  # the bytes differ from it
            meta = {"platform_result": to_json(result, self.settings.wire)}
        if isinstance(outcome, RecordOutcome) and outcome.succeeded and run.recording is not None:
            return await self.post_recording(
                callback, json_body, outcome, run.recording, label, meta
            )
        return await self.post(callback, json_body, label, meta)

    def forced(self, judged: Judged, errors: bool) -> Finding | None:
        """The CALL-FORCED-INVALID finding (recorded) when the scenario forces the platform to
        refuse this Workflow (``reject_workflows``); None when it runs as it is. An invalid
        Workflow is refused anyway; one without a callback cannot get the validation outcome, so
        it runs (a note says why the fault was not injected)."""
        number = self.received
        if self.faults is None or number not in self.faults.reject_workflows:
            return None
        workflow = judged.workflow
        if errors or workflow is None:
            self.record(EventKind.NOTE, {"summary": f"fault not needed: Workflow {number} is "
                                         "invalid and refused as usual", "fault": "reject_workflow",
                                         "workflow": number})  # fmt: skip
            return None
        if workflow.callback is None:
            self.record(EventKind.NOTE, {"summary": f"fault not injected: Workflow {number} has "
                                         "no callback for the validation outcome, so it runs",
                                         "fault": "reject_workflow", "workflow": number})  # fmt: skip
            return None
        self.record(EventKind.NOTE, {"summary": f"fault injected: Workflow {number} refused as "
                                     "if it were invalid", "fault": "reject_workflow",
                                     "workflow": number})  # fmt: skip
        finding = Finding(
            X.CALL_FORCED_INVALID.id, X.CALL_FORCED_INVALID.severity, f"Workflow {number}",
            f"Workflow {number} is valid; the scenario forced the platform to answer it with the "
            "validation outcome (reject_workflow), so nothing of it ran",
        )  # fmt: skip
        self.finding(finding)
        return finding

    # --- HTTP ---

    async def headers(self, content_type: str, message_id: str) -> dict[str, str]:
        headers = {
            "Content-Type": content_type,
            "Accept": JSON_TYPE,
            "User-Agent": USER_AGENT,
            "X-Platform-Chain-ID": self.chain_id,
            "X-Platform-Message-ID": message_id,
        }
        tokens = self.settings.tokens
        if tokens is not None:
            try:
                headers["Authorization"] = f"Bearer {await tokens.token(self.http)}"
            except TokenUnavailable as e:
                self.record(EventKind.NOTE, {"summary": f"sent without a token: {e}"})
        return headers

    async def post(
        self, url: str, body: bytes, label: str, meta: JSONObject | None = None
    ) -> Delivery:
        """Deliver one request. ``meta``: more to record with each attempt (the result as the
        platform made it, when a fault changed its bytes)."""
        message_id = self.uuid()
        headers = await self.headers(JSON_TYPE, message_id)
        if self.injector is not None:
            return await self.injector.post(
                url, body, headers, label=label, message_id=message_id, meta=meta
            )
        return await self.deliverer.post(
            url, body, headers, label=label, message_id=message_id, meta=meta
        )

    async def post_recording(
        self,
        url: str,
        json_body: bytes,
        outcome: RecordOutcome,
        recording: RecordingMade,
        label: str,
        meta: JSONObject | None = None,
    ) -> Delivery:
        fmt = recording.format
        audio = await asyncio.to_thread(
            encode_recording, fmt, outcome.length_of_recording_in_secs, recording.speech,
            seed=self.rng.getrandbits(32),
        )  # fmt: skip
        self.record(
            EventKind.PLATFORM,
            {
                "summary": f"recording of {outcome.length_of_recording_in_secs:g}s ({fmt.value}, "
                f"{len(audio)} bytes)",
                "operation_id": outcome.id,
                "format": fmt.value,
                "content_type": CONTENT_TYPES[fmt],
                "seconds": outcome.length_of_recording_in_secs,
                "recording": True,
            },
            audio,
        )
        if len(audio) > X.NODE_SDK_PART_LIMIT:
            seconds = outcome.length_of_recording_in_secs
            kept = seconds * X.NODE_SDK_PART_LIMIT / len(audio)
            smaller = ", or recordingFormat wma or mp3," if fmt.value == "wav" else ""
            self.found(X.CALL_RECORDING_OVER_1MIB, f"recordedAudio ({outcome.id})",
                       f"the {seconds:g}s {fmt.value} recording is {len(audio)} bytes, over 1 MiB: "
                       "the Node calling SDK's multipart parser keeps only the first 1 MiB of a "
                       f"part, so a bot on that SDK gets about the first {kept:.0f}s of it "
                       f"(a shorter maxDurationInSeconds{smaller} keeps it whole)")  # fmt: skip
        message_id = self.uuid()
        boundary = f"botemu-{message_id}"
        body = multipart_body(boundary, json_body, audio, CONTENT_TYPES[fmt])
        parts: JSONObject = {
            "conversationResult": json_body.decode("utf-8"),
            "recordedAudio": {"content_type": CONTENT_TYPES[fmt], "bytes": len(audio)},
        }
        headers = await self.headers(f"multipart/form-data; boundary={boundary}", message_id)
        if self.injector is not None:
            return await self.injector.post(
                url, body, headers, label=label, message_id=message_id, parts=parts, meta=meta
            )
        return await self.deliverer.post(
            url, body, headers, label=label, message_id=message_id, parts=parts, meta=meta
        )

    def judge(self, delivery: Delivery, *, final: bool) -> EndReason | None:
        """Record what the delivery found; the reason to end the call, if it must end."""
        for f in delivery.findings:
            self.finding(f)
        if not delivery.delivered:
            return EndReason.DELIVERY_FAILED
        status = delivery.status
        assert status is not None
        if not 200 <= status < 300:
            self.found(
                X.CALL_HTTP_STATUS,
                "response",
                f"the bot answered HTTP {status}; the platform hangs up{self.refusal_hint(status)}",
            )
            return EndReason.BOT_REFUSED
        if delivery.oversized:
            self.found(X.CALL_BODY_TOO_LARGE, "response",
                       f"the response is over {self.settings.retry.max_body} bytes")  # fmt: skip
            return EndReason.BAD_RESPONSE
        if final and delivery.body.strip():
            self.found(X.CALL_AFTER_END, "response",
                       "the call is over: the bot's answer to the final result is ignored")  # fmt: skip
        return None

    def refusal_hint(self, status: int) -> str:
        """Why a bot may have refused a request with 401 or 403: the token."""
        if status not in (401, 403):
            return ""
        tokens = self.settings.tokens
        if tokens is None and self.settings.app_id is not None:
            return " (no Authorization header was sent: --no-token)"
        if tokens is None:
            return (" (no Authorization header was sent: give the bot's app id with --app-id, "
                    "or register the bot with botemu serve)")  # fmt: skip
        return (f" (a Bearer token for app id {tokens.app_id} from {tokens.origin} was sent: "
                "check the bot's app id, and that its OpenID metadata URL is botemu's)")  # fmt: skip

    def document(self, delivery: Delivery) -> Judged | EndReason:
        if not delivery.body.strip():
            self.found(
                X.CALL_EMPTY_BODY, "response", "the bot sent no Workflow; the platform hangs up"
            )
            return EndReason.NO_WORKFLOW
        content_type = delivery.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != JSON_TYPE:
            self.found(X.CALL_CONTENT_TYPE, "response",
                       f"Content-Type is {content_type or 'missing'}, not application/json")  # fmt: skip
        context = RuleContext(first=not self.progress.answered, allow_http=self.http_allowed)
        judged = judge(delivery.body, context)
        if judged.not_json is not None:
            e = judged.not_json
            where = f"response:{e.line}:{e.column}" if e.line is not None else "response"
            self.found(X.CALL_NOT_JSON, where, e.message)
            return EndReason.BAD_RESPONSE
        return judged

    # --- running a workflow ---

    async def replay(self, workflow: Workflow, run: WorkflowRun) -> None:
        """Append the engine's events in time order, at the chosen pace."""
        kinds = ", ".join(a.kind.value for a in workflow.actions)
        callback = "" if workflow.callback else " (no callback)"
        self.record(EventKind.NOTE, {"summary": f"Workflow [{kinds}]{callback}"})
        started: dict[str, float] = {}
        paced = self.settings.pace > 0
        events = run.events
        index = 0
        kind: str
        while index < len(events):
            event = events[index]
            index += 1
            if isinstance(event, CallEnded):
                continue  # the session records the end, with its final reason
            if isinstance(event, ActionStarted):
                started[event.operation_id] = event.at  # one "action" row, written at its end
                continue
            if isinstance(event, CallerPressed):  # one row per run of keys: "pressed 1234#"
                keys = [event]
                while index < len(events) and isinstance(events[index], CallerPressed):
                    keys.append(events[index])  # type: ignore[arg-type]
                    index += 1
                at, kind, payload = keys[-1].at, EventKind.CALLER, _pressed(keys)
            else:
                at, kind, payload = event.at, _kind_of(event), event.to_json()
                payload["summary"] = event.describe()
                if isinstance(event, ActionCompleted):
                    payload["kind"] = "action"
                    payload["start"] = started.pop(event.operation_id, event.at)
            if paced:
                await self.advance(at)
            elif at > self.vtime:  # no coroutine per event in virtual time
                self.vtime = at
            self.record(kind, payload)
        await self.advance(run.progress.now)

    async def fetch_media(self, workflow: Workflow) -> dict[str, Media]:
        """Fetch each prompt file once (per cache), check it, and learn its duration."""
        for uri in _file_uris(workflow):
            if uri not in self.media_cache:
                self.media_cache[uri] = await self.fetch_one(uri)
        return dict(self.media_cache)

    async def fetch_one(self, uri: str) -> Media:
        timeout = aiohttp.ClientTimeout(total=self.settings.media_timeout)
        try:
            async with self.http.get(
                uri, timeout=timeout, ssl=self.settings.ssl_context or True
            ) as r:
                data, more = await read_limited(r, MAX_PROMPT_BYTES)
                status = r.status
        except TimeoutError:
            return self.media_failed(
                uri, X.CALL_MEDIA_FETCH, f"no answer within {self.settings.media_timeout:g}s"
            )
        except (aiohttp.ClientError, OSError, ValueError) as e:
            return self.media_failed(
                uri, X.CALL_MEDIA_FETCH, f"fetch failed: {str(e) or type(e).__name__}"
            )
        if status != 200:
            return self.media_failed(uri, X.CALL_MEDIA_FETCH, f"fetch answered HTTP {status}")
        if more:
            return self.media_failed(uri, X.CALL_MEDIA_SIZE, "the file is over 512 KB")
        try:
            info = inspect_prompt_media(data)
        except MediaError as e:
            rule = X.CALL_MEDIA_SIZE if "limit" in str(e) else X.CALL_MEDIA_FORMAT
            return self.media_failed(uri, rule, str(e))
        self.record(EventKind.PLATFORM, {"summary": f"fetched {uri}: {info.format}, {info.seconds:.2f}s",
                                         "uri": uri, "format": info.format, "seconds": info.seconds,
                                         "bytes": info.size})  # fmt: skip
        return Media(seconds=info.seconds)

    def media_failed(self, uri: str, rule: Rule, why: str) -> Media:
        self.found(rule, uri, why)
        return Media(failure=why)


@dataclass(frozen=True, slots=True)
class Judged:
    """What the platform makes of a response body: the JSON, the findings, the Workflow."""

    document: JSON
    findings: tuple[Finding, ...]
    workflow: Workflow | None = None
    not_json: WireError | None = None
    read_error: WireError | None = None


JUDGE_CACHE_MAX_BODY = 64 * 1024


def judge(body: bytes, context: RuleContext) -> Judged:
    """Parse, validate and read a Workflow body. A pure function of its arguments, so small
    bodies are memoized: a bot under test sends the same Workflows call after call."""
    if len(body) <= JUDGE_CACHE_MAX_BODY:
        return _judge_cached(body, context)
    return _judge(body, context)


def _judge(body: bytes, context: RuleContext) -> Judged:
    try:
        document = loads(body)
    except WireError as e:
        return Judged(None, (), not_json=e)
    findings = tuple(validate_workflow(document, context))
    if any(f.severity is Severity.ERROR for f in findings):
        return Judged(document, findings)
    try:
        return Judged(document, findings, read_workflow(document))
    except WireError as e:
        return Judged(document, findings, read_error=e)


_judge_cached = lru_cache(maxsize=512)(_judge)


def multipart_body(boundary: str, json_body: bytes, audio: bytes, audio_type: str) -> bytes:
    """A record result as both real SDK parsers accept it (field notes): two form-data parts,
    JSON first, no filename on either."""
    crlf = b"\r\n"
    head = f"--{boundary}".encode()
    return b"".join(
        [
            head, crlf,
            b"Content-Type: application/json; charset=utf-8", crlf,
            b'Content-Disposition: form-data; name="conversationResult"', crlf,
            crlf, json_body, crlf,
            head, crlf,
            f"Content-Type: {audio_type}".encode(), crlf,
            b'Content-Disposition: form-data; name="recordedAudio"', crlf,
            crlf, audio, crlf,
            head, b"--", crlf,
        ]
    )  # fmt: skip


def _pressed(keys: list[CallerPressed]) -> JSONObject:
    """One transcript event for keys pressed one after another."""
    digits = "".join(k.key for k in keys)
    return {
        "kind": "caller pressed",
        "at": round(keys[0].at, 6),
        "keys": digits,
        "times": [round(k.at, 6) for k in keys],
        "summary": f"caller pressed {digits}",
    }


def _kind_of(event: Event) -> str:
    kind = _KINDS.get(type(event))
    if kind is None:
        if isinstance(event, CallerPressed | CallerSpoke | CallerSilent | CallerHungUp):
            kind = EventKind.CALLER
        elif isinstance(event, StateChanged):
            kind = EventKind.STATE
        else:
            kind = EventKind.PLATFORM
        _KINDS[type(event)] = kind
    return kind


_KINDS: dict[type[Event], str] = {}
"""Event class -> transcript kind, learnt on first sight (``_kind_of`` is on the hot path)."""


def describe_outcome(outcome: OperationOutcome) -> str:
    """One line for a posted outcome: ``recognizeOutcome success dtmfOptionMatched choice=sales``."""
    words = [outcome.type.value, outcome.outcome.value]
    if isinstance(outcome, PlayPromptOutcome | RecordOutcome):
        words.append(outcome.completion_reason.value)
    if isinstance(outcome, RecordOutcome):
        words.append(f"length={outcome.length_of_recording_in_secs:g}s")
    if isinstance(outcome, RecognizeOutcome):
        if outcome.choice_outcome is not None:
            words.append(outcome.choice_outcome.completion_reason.value)
            if outcome.choice_outcome.choice_name:
                words.append(f"choice={outcome.choice_outcome.choice_name}")
        if outcome.collect_digits_outcome is not None:
            words.append(outcome.collect_digits_outcome.completion_reason.value)
            if outcome.collect_digits_outcome.digits:
                words.append(f"digits={outcome.collect_digits_outcome.digits}")
    if outcome.failure_reason:
        words.append(f"({outcome.failure_reason[:120]})")
    return " ".join(words)


def _file_uris(workflow: Workflow) -> list[str]:
    uris: list[str] = []
    for action in workflow.actions:
        prompt = action if isinstance(action, PlayPrompt) else None
        if isinstance(action, Record | Recognize):
            prompt = action.play_prompt
        for p in prompt.prompts if prompt is not None else ():
            if p.file_uri and not (p.value or "").strip() and p.file_uri not in uris:
                uris.append(p.file_uri)
    return uris


def _usable_callback(document: JSON, allow_http: bool) -> str | None:
    """The callback of an invalid Workflow, if the validation outcome can be posted to it."""
    if not isinstance(document, dict):
        return None
    links = document.get(find_key(document, "links") or "links")
    if not isinstance(links, dict):
        return None
    callback = links.get(find_key(links, "callback") or "callback")
    if not isinstance(callback, str):
        return None
    parts = urlsplit(callback)
    schemes = ("https", "http") if allow_http else ("https",)
    return callback if parts.scheme.lower() in schemes and parts.hostname else None


def _raw_app_state(document: JSON) -> str | None:
    if isinstance(document, dict):
        value = document.get(find_key(document, "appState") or "appState")
        if isinstance(value, str):
            return value
    return None
