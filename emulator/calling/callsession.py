"""A call as the calling platform places it, with no I/O (sans-I/O, the way h11 splits HTTP from
sockets): ``CallSession.run()`` posts a Conversation, then loops: judge the bot's answer,
validate the Workflow (``rules``), run it against the scripted caller (``engine``) or answer an
invalid one with the validation outcome, and post the ConversationResult to the Workflow's
callback. Each request, prompt file, wait, token and encoding is an effect (``effects``) that a
driver carries out: ``session.place_call`` (asyncio and aiohttp) or ``emulator.load.driver``
(gevent, for Locust). Every exchange and decision is appended to the transcript as it happens;
a bot that crashes, hangs, resets the connection or returns garbage ends the call with a
recorded reason and findings, never an exception (docs/calling-http.md).

What it sends is made by ``outgoing`` and judged by ``judging``; ``posting`` and
``prompt_files`` say what to send and fetch; ``calllog`` keeps the transcript and findings.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

from emulator.calling import exchange_rules as X
from emulator.calling.caller import describe
from emulator.calling.calllog import CallLog, CallStore, Listener, transcript_rows
from emulator.calling.delivery import Deliverer, Delivery
from emulator.calling.effects import Steps, Wait
from emulator.calling.engine import (
    CallProgress,
    EngineConfig,
    Media,
    WorkflowRun,
    reject_workflow,
    run_workflow,
)
from emulator.calling.events import EndReason
from emulator.calling.faults import Injector
from emulator.calling.judging import (
    Judged,
    forced_refusal,
    judge_answer,
    judge_delivery,
    raw_app_state,
    usable_callback,
)
from emulator.calling.liveplay import Holding, play_live
from emulator.calling.model import CallState, Conversation, RecordOutcome, Workflow
from emulator.calling.outgoing import (
    conversation,
    result_message,
)
from emulator.calling.posting import Poster
from emulator.calling.prompt_files import PromptFiles, PromptSpeech, listen_phrases
from emulator.calling.rules import RuleContext, first_operation_id
from emulator.calling.settings import CallReport, CallSettings
from emulator.calling.wire import encode
from emulator.findings import Finding, Severity
from emulator.ids import new_id
from emulator.jsonutil import JSONObject
from emulator.transcripts.store import EventKind

__all__ = ["CallSession"]

_Planned = tuple[WorkflowRun, str | None, str | None]
"""What the platform does with one Workflow: the run (or refusal), its callback and appState."""


class CallSession(CallLog):
    """One call as the platform places it, with no I/O: ``run()`` is a generator of effects
    (``effects``) that a driver carries out, returning the ``CallReport``. Every exchange and
    decision goes to the transcript as it happens."""

    def __init__(
        self,
        settings: CallSettings,
        store: CallStore,
        listener: Listener | None = None,
        media_cache: dict[str, Media] | None = None,
    ) -> None:
        super().__init__(store, self.uuid(), listener)
        self.settings = settings
        self.http_allowed = settings.http_allowed
        self.engine_config = EngineConfig(
            max_workflows=settings.max_workflows, fail_actions=settings.fail_actions
        )
        self.faults = settings.faults if settings.faults.any else None
        """None when no fault is set: the hot path then does no fault work at all."""
        self.caller = (
            settings.caller if self.faults is None else self.faults.caller(settings.caller)
        )
        self.rng = random.Random(settings.seed)
        self.holding: Holding | None = None
        """A live caller's hold to talk, while its audio is followed (``liveplay``)."""
        self.chain_id = self.uuid()
        self.progress = CallProgress()
        self.workflows = 0
        self.received = 0
        """Workflows the bot sent so far (1 answers the Conversation): ``reject_workflows``."""
        deliverer = Deliverer(policy=settings.retry, record=self.record, wait=self.wait)
        injector = None if self.faults is None else Injector(self.faults, deliverer, self.record)
        self.poster = Poster(self, deliverer, injector, tokens=settings.tokens is not None,
                             chain_id=self.chain_id, rng=self.rng)  # fmt: skip
        cache = {} if media_cache is None else media_cache
        patterns = [*(rule.pattern for rule in self.caller.rules), *settings.listen_for]
        phrases = listen_phrases(patterns)
        self.prompt_files = PromptFiles(self, cache, timeout=settings.media_timeout,
                                        phrases=phrases, keep=settings.live)  # fmt: skip
        self.prompt_speech = PromptSpeech(self)

    def uuid(self) -> str:
        """A fresh id. Ids are never seeded: a bot keys its call state by them, so two calls
        must never share one. The seed reproduces the caller's identity and audio."""
        return new_id()

    def wait(self, seconds: float) -> Steps[None]:
        """Let virtual time pass (and real time too, at the chosen pace)."""
        yield from self.advance(self.vtime + seconds)

    def advance(self, to: float) -> Steps[None]:
        if to > self.vtime:
            if self.settings.pace > 0:
                yield Wait((to - self.vtime) * self.settings.pace)
            self.vtime = to

    # --- the call ---

    def run(self) -> Steps[CallReport]:
        """The whole call: place it, then loop until it ends. The driver keeps the wall-clock
        deadline (``deadline_passed``) and says when the run is abandoned (``cancelled``)."""
        placed = conversation(self.call_id, self.rng.getrandbits(32), self.settings.app_id,
                              self.settings.caller_id)
        self.start(placed)
        reason = yield from self.loop(placed)
        return self.finish(reason)

    def finish(self, reason: EndReason, note: str | None = None) -> CallReport:
        """End the call for ``reason``; its report."""
        self.end(reason, note)
        return CallReport(
            self.call_id, self.chain_id, reason, tuple(self.findings), self.workflows, self.vtime
        )

    def deadline_passed(self) -> CallReport:
        """The call's deadline passed (wall clock) with the call still running: whatever was
        under way (a request, a retry's back-off, a prompt file) is abandoned and the platform
        hangs up."""
        deadline = self.settings.deadline
        self.found(X.CALL_DEADLINE, "call",
                   f"the call was still running after its deadline of {deadline:g}s wall clock "
                   f"(--deadline), {self.vtime:.1f}s virtual time in: the platform hung up")  # fmt: skip
        return self.finish(EndReason.DEADLINE)

    def cancelled(self, why: str = "the run was cancelled") -> None:
        """The run was cancelled (Ctrl-C, a test's time-out) or ran out of time (``why``): the
        call ends as a hang-up."""
        self.end(EndReason.CALLER_HUNG_UP, note=why)

    def start(self, placed: Conversation) -> None:
        """Open the call in the store and record what it is: caller, script, faults, token."""
        caller = placed.participants[0]
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
                "prompt_timing": self.settings.prompt_timing,
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

    def end(self, reason: EndReason, note: str | None = None) -> None:
        self.note_repeats()
        if self.progress.call_state is not CallState.TERMINATED:
            old = self.progress.call_state
            self.record(EventKind.STATE, {"summary": f"call {old.value} -> terminated",
                                          "old": old.value, "new": "terminated"})  # fmt: skip
        summary = f"call ended: {reason.value}" + (f" ({note})" if note else "")
        self.record(EventKind.CALL_END, {"summary": summary, "reason": reason.value})
        self.store.finish(self.call_id, reason=reason.value)

    def loop(self, placed: Conversation) -> Steps[EndReason]:
        body = encode(placed) if self.faults is None else self.faults.encode_conversation(placed)
        delivery = yield from self.poster.post(self.settings.bot_url, body, "Conversation")
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
            step = yield from self.step(judged)
            if isinstance(step, EndReason):
                return step
            delivery = step

    # --- judging an answer ---

    def judge(self, delivery: Delivery, *, final: bool) -> EndReason | None:
        """Record what the delivery found; the reason to end the call, if it must end."""
        findings, reason = judge_delivery(
            delivery,
            final=final,
            max_body=self.settings.retry.max_body,
            tokens=self.settings.tokens,
            app_id=self.settings.app_id,
        )
        for f in findings:
            self.finding(f)
        return reason

    def document(self, delivery: Delivery) -> Judged | EndReason:
        """The judged Workflow of an accepted answer, its findings about the answer recorded;
        or why the call ends."""
        context = RuleContext(first=not self.progress.answered, allow_http=self.http_allowed)
        findings, judged = judge_answer(delivery, context)
        for f in findings:
            self.finding(f)
        return judged

    # --- running a workflow ---

    def step(self, judged: Judged) -> Steps[Delivery | EndReason]:
        """Run one judged Workflow (or refuse it); post its result. The next delivery, or why
        the call ends."""
        self.received += 1
        for f in judged.findings:
            self.finding(f)
        planned = yield from self.plan(judged)
        if isinstance(planned, EndReason):
            return planned
        run, callback, app_state = planned
        self.progress = run.progress
        self.count(run)
        if run.outcome is None or not run.post or callback is None:
            return self.progress.ended or EndReason.NO_CALLBACK
        out = result_message(self.call_id, run, app_state=app_state,
                             platform_url=self.settings.platform_url, app_id=self.settings.app_id,
                             wire=self.settings.wire, faults=self.faults)  # fmt: skip
        outcome = out.outcome
        if isinstance(outcome, RecordOutcome) and outcome.succeeded and run.recording is not None:
            return (yield from self.poster.post_recording(
                callback, out.body, outcome, run.recording, out.label, out.meta
            ))  # fmt: skip
        return (yield from self.poster.post(callback, out.body, out.label, out.meta))

    def plan(self, judged: Judged) -> Steps[_Planned | EndReason]:
        """Refuse the Workflow with the validation outcome (invalid, or forced by the scenario)
        or run it; or why the call ends."""
        errors = any(f.severity is Severity.ERROR for f in judged.findings)
        forced = self.forced(judged, errors)
        if forced is not None:
            self.record(EventKind.PLATFORM, {"summary": "platform rejected the Workflow: "
                                             "validation outcome (forced by the scenario)"})  # fmt: skip
            operation_id = first_operation_id(judged.document)
            run = reject_workflow([forced], operation_id, self.progress, self.engine_config)
            assert judged.workflow is not None
            return run, judged.workflow.callback, judged.workflow.app_state
        if errors:
            return self.refuse(judged)
        workflow = judged.workflow
        if workflow is None:  # rules and reader disagree: a botemu bug, still never a crash
            error = judged.read_error
            where, why = (error.path, error.message) if error else ("$", "unreadable")
            self.found(X.CALL_NOT_JSON, where, f"the Workflow could not be read: {why}")
            return EndReason.BAD_RESPONSE
        return (yield from self.execute(workflow))

    def refuse(self, judged: Judged) -> _Planned | EndReason:
        """Answer an invalid Workflow with the validation outcome, if it has a callback."""
        document = judged.document
        callback = usable_callback(document, self.http_allowed)
        if callback is None:
            self.found(X.CALL_INVALID_NO_CALLBACK, "$.links.callback",
                       "the Workflow is invalid and has no usable callback for the validation outcome")  # fmt: skip
            return EndReason.INVALID_WORKFLOW
        self.record(
            EventKind.PLATFORM, {"summary": "platform rejected the Workflow: validation outcome"}
        )
        operation_id = first_operation_id(document)
        run = reject_workflow(judged.findings, operation_id, self.progress, self.engine_config)
        return run, callback, raw_app_state(document)

    def execute(self, workflow: Workflow) -> Steps[_Planned]:
        """Run a valid Workflow against the caller, its prompt files fetched first."""
        config = self.engine_config
        media = yield from self.prompt_files.fetch(workflow)
        if media:
            config = replace(config, media=media)
        if self.settings.prompt_timing == "speech":
            config = replace(config, spoken=(yield from self.prompt_speech.measure(workflow)))
        run = run_workflow(workflow, self.caller, self.progress, config)
        if self.settings.live:
            run = yield from play_live(self, workflow, run, config)
        else:
            yield from self.replay(workflow, run)
        return run, workflow.callback, workflow.app_state

    def count(self, run: WorkflowRun) -> None:
        """Count a Workflow that ran or was refused; note the limits it reaches."""
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

    def forced(self, judged: Judged, errors: bool) -> Finding | None:
        """The CALL-FORCED-INVALID finding (recorded) when the scenario forces the platform to
        refuse this Workflow (``reject_workflows``); None when it runs as it is."""
        note, finding = forced_refusal(self.faults, self.received, judged, errors=errors)
        if note is not None:
            self.record(EventKind.NOTE, note)
        if finding is not None:
            self.finding(finding)
        return finding

    def replay(self, workflow: Workflow, run: WorkflowRun) -> Steps[None]:
        """Append the engine's events in time order, at the chosen pace."""
        self.note_workflow(workflow)
        paced = self.settings.pace > 0
        for at, kind, payload in self.rows(run):
            if paced:
                yield from self.advance(at)
            elif at > self.vtime:  # no coroutine per event in virtual time
                self.vtime = at
            self.record(kind, payload)
        yield from self.advance(run.progress.now)

    def rows(self, run: WorkflowRun) -> Iterator[tuple[float, str, JSONObject]]:
        """The run's transcript rows; a file prompt's carries what recognition heard in it."""
        for at, kind, payload in transcript_rows(run.events, timers=self.settings.live):
            uri = payload.get("file_uri") if payload.get("kind") == "prompt played" else None
            known = self.prompt_files.cache.get(uri) if isinstance(uri, str) else None
            if known is not None and known.text is not None:
                payload = {**payload, "recognized_text": known.text}
            yield at, kind, payload

    def note_workflow(self, workflow: Workflow) -> None:
        kinds = ", ".join(a.kind.value for a in workflow.actions)
        callback = "" if workflow.callback else " (no callback)"
        self.record(EventKind.NOTE, {"summary": f"Workflow [{kinds}]{callback}"})
