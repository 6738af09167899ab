"""Running scenarios against bots: ``Runner(target, store).run(scenario) -> ScenarioResult``.

One ``Runner`` serves a whole test run (``botemu test``, the pytest plugin, ``botemu demo``). It
holds the transcript store it was given (and leaves it open), one aiohttp session, the prompt
files fetched so far, and, for conversations, a botemu: the one at ``Target.emulator``, or one it
starts in-process on a free port of 127.0.0.1 the first time it is needed (at once on entering
when the target has a messaging bot, so ``emulator_url`` can be given to that bot)::

    async with Runner(Target(bot_url="http://127.0.0.1:8080/api/calls"), store) as runner:
        result = await runner.run(scenario)

- A **call** is placed with ``place_call``: the scenario's caller script, its faults as
  ``PlatformFaults``, the run's seed, workflow limit and time-out.
- A **conversation** goes through the emulator's connector: each turn is sent as the control API's
  chat sends it (``Emulator.chat``), then the runner waits for the bot's replies: up to the turn's
  ``wait`` (default 2 s), stopping 0.3 s after the last reply.
- A **probe** (``probe: auth``) is run by the emulator's control route
  (``POST /_botemu/probe/auth``) against the messaging bot; its findings, recorded in the probe
  conversation's transcript, are what is judged.

Then ``expectations.evaluate`` judges the transcript, and the store gets the verdict (``passed``).
``run`` never raises for anything a bot does or a scenario asks: a scenario that cannot run (no
target for its kind, the bot cannot be reached, faults on a conversation, ...) comes back failed
with ``error`` set and one ``EXP-RUN`` finding. docs/scenarios-running.md has the details.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import socket
import ssl
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from emulator.calling import exchange_rules as X
from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.engine import DEFAULT_MAX_WORKFLOWS, Media
from emulator.calling.events import EndReason
from emulator.calling.faults import PlatformFaults
from emulator.calling.session import CallReport, CallSettings, place_call
from emulator.calling.tokens import Resolved, resolve
from emulator.calling.wire import WireOptions
from emulator.config import BotRegistration, ServiceConfig, anonymous_app_id
from emulator.conformance.auth import CASES, PROBE_USER
from emulator.conformance.auth_calling import PROBE_CALLER, REQUESTS
from emulator.connector.errors import ConnectorError
from emulator.connector.sender import TokenKind
from emulator.errors import BotemuError
from emulator.findings import Finding, Severity
from emulator.guard import control_headers as _control_headers
from emulator.jsonutil import JSON, JSONObject, dumps
from emulator.scenario.expectations import EXP_RUN, evaluate, where
from emulator.scenario.model import Faults, Scenario, Turn
from emulator.service import EMULATOR, USER, Emulator, make_app
from emulator.transcripts.store import EventKind, StoredEvent, TranscriptError, TranscriptStore

log = logging.getLogger(__name__)

DEFAULT_WAIT = 2.0
"""Seconds a conversation turn waits for the bot's replies, unless the turn says."""
QUIET = 0.3
"""A turn stops waiting this long after the bot's last reply."""
POLL = 0.05
DEFAULT_APP_ID = "botemu-test-bot"
"""The app id registered with an in-process emulator when the target gives none."""
TRANSCRIPT_SETTLE = 1.0
"""Seconds to wait for another process's botemu to commit a conversation's events."""
PROBE_TIMEOUT = 10.0
"""Seconds the bot has to answer each case of a probe, unless the runner has a time-out."""
PROBE_CASES = len(CASES)


@dataclass(frozen=True)
class Target:
    """What the scenarios run against."""

    bot_url: str | None = None
    """The calling bot's address (http or https)."""
    messaging_bot: str | None = None
    """The messaging bot's endpoint."""
    app_id: str | None = None
    app_password: str | None = None
    """The messaging bot's registration (also the calling bot's app id in the Conversation)."""
    certs: Path | None = None
    ca: Path | None = None
    """For an https calling bot: the certificates directory (default ``certs``) and the CA the
    bot's certificate chains to (default its ``ca.pem``). ``certs`` also keeps an in-process
    emulator's signing keys."""
    emulator: str | None = None
    """A running botemu (for conversations and probes); None: the runner starts one in-process.
    Calls take their Bearer token from it too (``emulator.calling.tokens.resolve``)."""
    control_certs: Path | None = None
    """The running botemu's certificates directory, which holds its control secret
    (emulator/guard.py); None: ``certs``, else ``certs/``."""
    no_token: bool = False
    """Calls carry no Authorization header (a bot that relies on the client certificate)."""
    legacy_validation_outcome: bool = False
    """Write the validation outcome type as ``worfklowValidationOutcome`` in every call."""


@dataclass(frozen=True)
class ScenarioResult:
    """How one scenario went."""

    scenario: Scenario
    passed: bool
    failures: tuple[Finding, ...]
    """Failed expectations (EXP-*), plus an EXP-RUN error when it could not run."""
    findings: tuple[Finding, ...]
    """Every protocol finding of the run."""
    transcript_ids: tuple[str, ...]
    duration: float
    """Wall-clock seconds."""
    vtime: float | None
    """Virtual seconds of a call; None for a conversation."""
    error: str | None = None
    """Why it could not run (no target for its kind, bot unreachable, ...)."""
    ladder: tuple[str, ...] = ()
    """The run's summary lines, one per transcript event (for reports' system-out)."""


class CannotRun(BotemuError):
    """A scenario cannot run: the message says why (it becomes ``ScenarioResult.error``)."""


def platform_faults(faults: Faults) -> PlatformFaults:
    """The scenario's fault settings as the calling session understands them."""
    return faults.platform_faults()


class Runner:
    """Runs scenarios against one target. Use it as ``async with``; ``run`` may be awaited
    concurrently (``-j N``): every call and conversation has its own ids."""

    def __init__(
        self,
        target: Target,
        store: TranscriptStore,
        *,
        seed: int | None = None,
        max_workflows: int | None = None,
        timeout: float | None = None,
    ) -> None:
        """``timeout``: seconds the bot has to answer each request (calls: 15 by default)."""
        self.target = target
        self.store = store
        self.seed = seed
        self.max_workflows = max_workflows or DEFAULT_MAX_WORKFLOWS
        self.timeout = timeout
        self._http: aiohttp.ClientSession | None = None
        self._media: dict[str, Media] = {}
        self._ssl: ssl.SSLContext | None = None
        self._local: _Local | None = None
        self._lock = asyncio.Lock()
        self._tokens: dict[str | None, Resolved] = {}

    async def __aenter__(self) -> Runner:
        self._http = aiohttp.ClientSession()
        if self.target.messaging_bot and self.target.emulator is None:
            try:
                await self._local_emulator()
            except BaseException:
                await self.__aexit__(None, None, None)
                raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        local, self._local = self._local, None
        if local is not None:
            await local.close()
        http, self._http = self._http, None
        if http is not None:
            await http.close()

    @property
    def emulator_url(self) -> str | None:
        """The botemu conversations go through: ``Target.emulator``, or the in-process one."""
        if self.target.emulator is not None:
            return self.target.emulator.rstrip("/")
        return self._local.url if self._local is not None else None

    @property
    def emulator_config(self) -> ServiceConfig | None:
        """The in-process emulator's configuration (placeholders for a bot), once started."""
        return self._local.config if self._local is not None else None

    # --- running ---

    async def run(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario and judge it. Never raises for anything a bot does or a scenario
        asks."""
        if self._http is None:
            raise RuntimeError("use the Runner as `async with Runner(...) as runner`")
        started = time.perf_counter()
        try:
            if scenario.kind == "call":
                return await self._call(scenario, started)
            if scenario.kind == "probe":
                return await self._probe(scenario, started)
            return await self._conversation(scenario, started)
        except CannotRun as e:
            return self._not_run(scenario, str(e), started)
        except (BotemuError, aiohttp.ClientError, OSError) as e:
            return self._not_run(scenario, f"{type(e).__name__}: {e}", started)
        except Exception as e:  # a botemu bug: reported as the scenario's error, never raised
            log.exception("scenario %s failed inside botemu", scenario.id)
            return self._not_run(scenario, f"botemu failed: {type(e).__name__}: {e}", started)

    def _not_run(
        self, scenario: Scenario, error: str, started: float, ids: tuple[str, ...] = ()
    ) -> ScenarioResult:
        failure = Finding(EXP_RUN.id, Severity.ERROR, where(scenario, scenario.line), error)
        return ScenarioResult(scenario, False, (failure,), (), ids,
                              time.perf_counter() - started, None, error)  # fmt: skip

    # --- calls ---

    async def _call(self, scenario: Scenario, started: float) -> ScenarioResult:
        url = self.target.bot_url
        if not url:
            raise CannotRun("this scenario is a call, and no calling bot was given (--bot URL)")
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise CannotRun(f"the calling bot {url!r} is not an http(s) URL")
        retry = RetryPolicy() if self.timeout is None else RetryPolicy(timeout=self.timeout)
        resolved = await self._call_tokens(url, scenario.platform.app_id or self.target.app_id)
        legacy = (
            self.target.legacy_validation_outcome or scenario.platform.legacy_validation_outcome
        )
        settings = CallSettings(
            bot_url=url,
            caller=scenario.caller or CallerScript(),
            seed=None if self.seed is None else derive_seed(self.seed, scenario.id),
            retry=retry,
            max_workflows=self.max_workflows,
            wire=WireOptions(legacy_validation_outcome_type=legacy),
            app_id=resolved.app_id,
            ssl_context=self._ssl_context() if parts.scheme.lower() == "https" else None,
            scenario=scenario.id,
            faults=platform_faults(scenario.faults),
            tokens=resolved.tokens,
        )
        assert self._http is not None
        report = await place_call(settings, self.store, http=self._http, media_cache=self._media)
        ids = (report.call_id,)
        events = self.store.events(report.call_id)
        ladder = _ladder(events)
        unreachable = _unreachable(report)
        if unreachable is not None:
            self._verdict(report.call_id, report.end_reason.value, False)
            result = self._not_run(scenario, f"the bot at {url} {unreachable}", started, ids)
            return _with(result, findings=report.findings, vtime=report.vtime, ladder=ladder)
        failures = evaluate(scenario, events, self.store.call(report.call_id) or report)
        self._verdict(report.call_id, report.end_reason.value, not failures)
        return ScenarioResult(scenario, not failures, tuple(failures), report.findings, ids,
                              time.perf_counter() - started, report.vtime, None, ladder)  # fmt: skip

    async def _call_tokens(self, url: str, app_id: str | None) -> Resolved:
        """The Bearer token source of calls for ``app_id`` (found once per runner)."""
        async with self._lock:
            found = self._tokens.get(app_id)
            if found is None:
                found = self._tokens[app_id] = await resolve(
                    bot_url=url, app_id=app_id, emulator=self.target.emulator,
                    certs=self.target.certs, no_token=self.target.no_token,
                    control_certs=self.target.control_certs,
                )  # fmt: skip
            return found

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            from emulator.certs import client_ssl_context, ensure_certs

            paths = ensure_certs(self.target.certs or Path("certs"))
            self._ssl = client_ssl_context(paths, ca_file=self.target.ca)
        return self._ssl

    def _verdict(self, transcript_id: str, reason: str, passed: bool) -> None:
        try:
            self.store.finish(transcript_id, reason=reason, passed=passed)
        except TranscriptError:
            pass  # a transcript another botemu keeps: its verdict is not ours to write

    # --- conversations ---

    async def _conversation(self, scenario: Scenario, started: float) -> ScenarioResult:
        bot = self.target.messaging_bot
        if not bot:
            raise CannotRun(
                "this scenario is a conversation, and no messaging bot was given "
                "(--messaging-bot URL)"
            )
        if scenario.faults.any:
            raise CannotRun("faults apply to calls; this conversation sets some")
        if self.target.emulator is not None:
            chat: _Chat = await _Remote.open(self.target.emulator, bot, self.target.app_id, self)
        else:
            chat = await self._local_emulator()
        conversed = await chat.converse(scenario)
        conversation_id, events = conversed.transcript_id, conversed.events
        ids = (conversation_id,)
        ladder = _ladder(events)
        findings = tuple(_finding(e) for e in events if e.kind == EventKind.FINDING)
        if conversed.unreachable is not None:
            self._verdict(conversation_id, "the bot could not be reached", False)
            why = f"the bot at {bot} {conversed.unreachable}"
            result = self._not_run(scenario, why, started, ids)
            return _with(result, findings=findings, vtime=None, ladder=ladder)
        failures = evaluate(scenario, events, None)
        self._verdict(conversation_id, "scenario finished", not failures)
        return ScenarioResult(scenario, not failures, tuple(failures), findings, ids,
                              time.perf_counter() - started, None, None, ladder)  # fmt: skip

    # --- probes ---

    async def _probe(self, scenario: Scenario, started: float) -> ScenarioResult:
        """``probe: auth``: the auth probe through the botemu's control route (the in-process
        one, or ``Target.emulator``), which runs it with that botemu's keys and records each
        finding in the probe conversation's transcript; that transcript is judged.
        ``probe: auth-calling``: the calling auth probe through the same route (``"calling":
        true``) against the calling bot (an https one with the client certificate of
        ``Target.certs``), recorded in a call transcript."""
        calling = scenario.probe == "auth-calling"
        bot = self.target.bot_url if calling else self.target.messaging_bot
        if not bot:
            which = "calling bot" if calling else "messaging bot"
            flag = "--bot" if calling else "--messaging-bot"
            raise CannotRun(f"this scenario is a probe ({scenario.probe}), and no {which} was "
                            f"given ({flag} URL)")  # fmt: skip
        if scenario.faults.any:
            raise CannotRun("faults apply to calls; this probe sets some")
        if self.target.emulator is None:
            await self._local_emulator()
        base = self.emulator_url
        assert base is not None and self._http is not None
        body: dict[str, Any] = {"bot": bot, "timeout": self.timeout or PROBE_TIMEOUT}
        if calling:  # without an app id, the running botemu's registered calling bot
            app_id = self.target.app_id or (None if self.target.emulator else DEFAULT_APP_ID)
            body.update({"calling": True, "app_id": app_id} if app_id else {"calling": True})
            if urlsplit(bot).scheme.lower() == "https":
                body["certs"] = str((self.target.certs or Path("certs")).resolve())
                if self.target.ca is not None:
                    body["ca"] = str(self.target.ca.resolve())
        elif self.target.emulator is not None:  # it answers, and knows the bot: its app id
            app_id = (await _Remote.open(base, bot, self.target.app_id, self)).app_id
            body["app_id"] = app_id
        else:
            app_id = body["app_id"] = self.target.app_id or DEFAULT_APP_ID
        report = await self._post_probe(f"{base}/_botemu/probe/auth", body)
        if isinstance(report, str):  # the bot could not be reached
            return self._not_run(scenario, f"the bot at {bot} {report}", started)
        transcript_id = str(report.get("call_id" if calling else "conversation_id"))
        raw = report.get("findings")
        items = raw if isinstance(raw, list) else []
        findings = tuple(_finding_of(f) for f in items if isinstance(f, dict))
        transcript, events = await self._probe_transcript(
            scenario, transcript_id, findings, str(report.get("app_id") or app_id), calling
        )
        failures = evaluate(scenario, events, None)
        self._verdict(transcript, "probe finished", not failures)
        return ScenarioResult(scenario, not failures, tuple(failures), findings, (transcript,),
                              time.perf_counter() - started, None, None, _ladder(events))  # fmt: skip

    async def _post_probe(self, url: str, body: dict[str, Any]) -> JSONObject | str:
        """The control route's report; a string: why the bot could not be reached (502)."""
        assert self._http is not None
        seconds = float(body["timeout"])
        requests = REQUESTS if body.get("calling") else PROBE_CASES
        timeout = aiohttp.ClientTimeout(total=seconds * requests + 30.0)
        headers = control_headers(self.target.control_certs or self.target.certs)
        async with self._http.post(url, json=body, headers=headers, timeout=timeout) as response:
            text = await response.text()
            if response.status == 502:
                return f"could not be reached: {text.strip()[:300]}"
            if response.status != 200:
                raise CannotRun(f"the botemu at {url.split('/_botemu/')[0]} refused the probe: "
                                f"HTTP {response.status}: {text.strip()[:300]}")  # fmt: skip
        try:
            report = json.loads(text)
        except ValueError:
            report = None
        if not isinstance(report, dict):
            raise CannotRun(f"the botemu answered the probe with something other than its report: "
                            f"{text.strip()[:120]!r}")  # fmt: skip
        return report

    async def _probe_transcript(
        self,
        scenario: Scenario,
        conversation_id: str,
        findings: tuple[Finding, ...],
        app_id: str,
        calling: bool = False,
    ) -> tuple[str, list[StoredEvent]]:
        """The probe conversation's (or ``calling``: call's) transcript, when this store has it
        (an in-process botemu, or a running one sharing the file); otherwise one written here
        from the route's report."""
        store = self.store
        deadline = time.monotonic() + TRANSCRIPT_SETTLE
        while store.call(conversation_id) is not None:
            events = store.events(conversation_id)
            got = sum(1 for e in events if e.kind == EventKind.FINDING)
            if got >= len(findings) or time.monotonic() >= deadline:
                return conversation_id, events
            await asyncio.sleep(POLL)
        kind, caller = ("call", PROBE_CALLER) if calling else ("conversation", PROBE_USER["id"])
        transcript = store.start(kind=kind, bot=app_id, caller=str(caller), scenario=scenario.id)
        store.append(transcript, EventKind.NOTE, {
            "summary": f"{scenario.probe} probe in {kind} {conversation_id} through the "
            f"botemu at {self.emulator_url} (its own transcript is in its database)",
            "conversation_id": conversation_id,
        })  # fmt: skip
        for finding in findings:
            store.append(transcript, EventKind.FINDING,
                         {"summary": str(finding), **finding.to_json()})  # fmt: skip
        return transcript, store.events(transcript)

    async def _local_emulator(self) -> _Local:
        async with self._lock:
            if self._local is None:
                self._local = await _Local.start(self.target, self.store)
            return self._local


# --- talking to a bot through a botemu -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Conversed:
    """A conversation held: its transcript's id (the conversation's, unless the runner had to
    write its own), the events, and why the bot could not be reached."""

    transcript_id: str
    events: list[StoredEvent]
    unreachable: str | None = None


class _Chat:
    """One way of holding a conversation with the bot: ``converse`` sends every turn."""

    async def converse(self, scenario: Scenario) -> _Conversed:
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


class _Quiet:
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


def _unreachable_failure(failure: str | None) -> str | None:
    if failure and failure.startswith("connection failed"):
        return f"could not be reached: {failure}"
    return None


class _Local(_Chat):
    """A botemu in this process, on a free port, with the target bot registered."""

    def __init__(self, runner: web.AppRunner, emulator: Emulator, config: ServiceConfig) -> None:
        self.runner = runner
        self.emulator = emulator
        self.config = config
        self.url = config.base_url
        self.quiet = _Quiet()
        emulator.connector.add_listener(self._on_activity)

    @classmethod
    async def start(cls, target: Target, store: TranscriptStore) -> _Local:
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
            if target.app_id is None and not target.app_password:  # a template's default
                bot = BotRegistration(anonymous_app_id(1), "", target.messaging_bot,
                                      anonymous=True)  # fmt: skip
            else:
                bot = BotRegistration(target.app_id or DEFAULT_APP_ID, target.app_password or "",
                                      target.messaging_bot)  # fmt: skip
            config = ServiceConfig(port=port, bots=(bot,), certs_dir=target.certs or Path("certs"))
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

    async def converse(self, scenario: Scenario) -> _Conversed:
        unreachable = None
        app_id = self.config.bots[0].app_id
        turns = scenario.messaging or ()
        conversation_id: str | None = None
        if turns and turns[0].type == "conversationUpdate":
            # The scenario opens the conversation itself: no automatic conversationUpdate.
            conversation_id = self.emulator.connector.open_conversation(app_id, USER).id
            self.emulator.opened[conversation_id] = app_id
        for number, turn in enumerate(turns):
            since = time.monotonic()
            try:
                conversation_id, _, answer = await self.emulator.chat(
                    app_id, turn.text, conversation_id, TokenKind.CONNECTOR,
                    activity_of(turn, app_id),
                )  # fmt: skip
            except ConnectorError as e:
                raise CannotRun(f"turn {number + 1} is not an activity botemu can send: {e}") from e
            if number == 0 and answer.status is None:
                unreachable = _unreachable_failure(answer.failure)
                if unreachable is not None:
                    break
            await self.quiet.wait(conversation_id, since, _wait(turn))
        if conversation_id is None:  # no turns at all: an empty conversation
            conversation_id = self.emulator.connector.open_conversation(app_id, USER).id
        events = self.emulator.store.events(conversation_id)
        return _Conversed(conversation_id, events, unreachable)


class _Remote(_Chat):
    """A running botemu, driven through its control API (``/_botemu/chat``)."""

    def __init__(self, base: str, bot: str, app_id: str, runner: Runner) -> None:
        self.base = base
        self.bot = bot
        self.app_id = app_id
        self.runner = runner
        assert runner._http is not None
        self.http = runner._http
        self.quiet = _Quiet()
        self.synthetic: list[tuple[str, JSONObject]] = []
        self.scenario: str | None = None

    @classmethod
    async def open(cls, emulator: str, bot: str, app_id: str | None, runner: Runner) -> _Remote:
        base = emulator.rstrip("/")
        http = runner._http
        assert http is not None
        try:
            health = await _get(http, f"{base}/_botemu/health")
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as e:
            raise CannotRun(f"no botemu answers at {base}: {e or type(e).__name__}") from e
        if not isinstance(health, dict) or health.get("status") != "ok":
            raise CannotRun(f"no botemu answers at {base}")
        if app_id is None:  # the bot registered there, or else an anonymous one, made now
            found = await _post_json(http, f"{base}/_botemu/bots", {"endpoint": bot},
                                     control_headers(runner.target.control_certs
                                                     or runner.target.certs))  # fmt: skip
            if not isinstance(found, dict) or not isinstance(found.get("app_id"), str):
                raise CannotRun(f"the botemu at {base} did not say which bot is at {bot}")
            app_id = found["app_id"]
        return cls(base, bot, app_id, runner)

    def note(self, kind: str, payload: JSONObject) -> None:
        self.synthetic.append((kind, payload))

    async def converse(self, scenario: Scenario) -> _Conversed:
        self.scenario = scenario.id
        conversation_id: str | None = None
        unreachable = None
        seen = 0
        replies = 0
        for number, turn in enumerate(scenario.messaging or ()):
            activity = activity_of(turn, self.app_id)
            body: dict[str, Any] = {"app_id": self.app_id, "activity": activity}
            if conversation_id is not None:
                body["conversation_id"] = conversation_id
            self.note(EventKind.HTTP_REQUEST, {"summary": f"→ bot: {turn.type}", "method": "POST",
                                               "url": self.bot, "body": activity})  # fmt: skip
            since = time.monotonic()
            sent = await self._post(f"{self.base}/_botemu/chat", body)
            took = (time.monotonic() - since) * 1000
            conversation_id = str(sent["conversation_id"])
            status, failure = sent.get("status"), sent.get("failure")
            if isinstance(status, int):
                self.note(EventKind.HTTP_RESPONSE, {"summary": f"← bot {status} in {took:.0f} ms",
                                                    "status": status,
                                                    "latency_ms": round(took, 3)})  # fmt: skip
            else:
                self.note(EventKind.HTTP_ERROR, {"summary": f"✗ bot: {failure}",
                                                 "error": str(failure)})  # fmt: skip
                if number == 0:
                    unreachable = _unreachable_failure(str(failure))
                    if unreachable is not None:
                        break
            deadline = since + _wait(turn)
            while True:
                page = await _get(self.http, f"{self.base}/_botemu/conversations/"
                                  f"{conversation_id}/activities?after={seen}")  # fmt: skip
                seen = int(page["next"])
                for item in page["activities"]:
                    if (item.get("from") or {}).get("role") != "user":
                        replies += 1
                        self.quiet.heard(conversation_id)
                        self.note(EventKind.HTTP_REQUEST, {
                            "summary": f"← bot sends {item.get('type')}", "method": "POST",
                            "path": f"/v3/conversations/{conversation_id}/activities",
                            "body": dumps(item).decode("utf-8"),
                        })  # fmt: skip
                        self.note(EventKind.HTTP_RESPONSE, {"summary": "→ 200", "status": 200})
                last = self.quiet.last.get(conversation_id)
                stop = (
                    min(deadline, last + QUIET) if last is not None and last >= since else deadline
                )
                if time.monotonic() >= stop:
                    break
                await asyncio.sleep(POLL)
        if conversation_id is None:
            raise CannotRun("a conversation needs at least one turn against a running botemu")
        transcript, events = await self._transcript(conversation_id, replies)
        return _Conversed(transcript, events, unreachable)

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
        headers = control_headers(self.runner.target.control_certs or self.runner.target.certs)
        async with self.http.post(url, json=body, headers=headers, timeout=timeout) as response:
            if response.status >= 400:
                text = (await response.text())[:200]
                raise CannotRun(f"the botemu at {self.base} refused the turn: HTTP "
                                f"{response.status}: {text}")  # fmt: skip
            answer: dict[str, Any] = await response.json()
            return answer


async def _get(http: aiohttp.ClientSession, url: str) -> Any:
    async with http.get(url, timeout=aiohttp.ClientTimeout(total=5)) as response:
        response.raise_for_status()
        return await response.json()


async def _post_json(
    http: aiohttp.ClientSession, url: str, body: JSONObject, headers: dict[str, str]
) -> Any:
    async with http.post(url, json=body, headers=headers,
                         timeout=aiohttp.ClientTimeout(total=5)) as response:  # fmt: skip
        if response.status != 200:
            raise CannotRun(f"POST {url}: HTTP {response.status}: {(await response.text())[:200]}")
        return await response.json()


def control_headers(certs: Path | None) -> dict[str, str]:
    """The control secret of the botemu whose certificates directory is ``certs``."""
    try:
        return _control_headers(certs)
    except BotemuError as e:
        raise CannotRun(str(e)) from None


def _wait(turn: Turn) -> float:
    return DEFAULT_WAIT if turn.wait is None else turn.wait


# --- results -----------------------------------------------------------------------------------


def _unreachable(report: CallReport) -> str | None:
    """Why the bot could not be reached at all, or None: the Conversation was never delivered
    and every attempt failed to connect."""
    if report.end_reason is not EndReason.DELIVERY_FAILED or report.workflows:
        return None
    rules = {f.rule for f in report.findings}
    if X.CALL_CONNECTION.id not in rules or rules - {
        X.CALL_CONNECTION.id,
        X.CALL_DELIVERY_FAILED.id,
    }:
        return None
    last = [f for f in report.findings if f.rule == X.CALL_CONNECTION.id][-1]
    return f"could not be reached: {last.message}"


def _with(
    result: ScenarioResult,
    *,
    findings: tuple[Finding, ...],
    vtime: float | None,
    ladder: tuple[str, ...],
) -> ScenarioResult:
    return ScenarioResult(result.scenario, result.passed, result.failures, findings,
                          result.transcript_ids, result.duration, vtime, result.error, ladder)  # fmt: skip


def _finding(event: StoredEvent) -> Finding:
    return _finding_of(event.payload)


def _finding_of(p: dict[str, Any]) -> Finding:
    """A finding from its JSON form (``Finding.to_json``: a transcript event, a route's report)."""
    try:
        severity = Severity(str(p.get("severity")).lower())
    except ValueError:
        severity = Severity.INFO
    evidence = p.get("evidence")
    return Finding(str(p.get("rule")), severity, str(p.get("where", "")),
                   str(p.get("message", "")), evidence if isinstance(evidence, str) else None)  # fmt: skip


def _ladder(events: list[StoredEvent]) -> tuple[str, ...]:
    """One line per event, as ``botemu call`` prints them."""
    lines: list[str] = []
    for event in events:
        summary = event.payload.get("summary")
        text = summary if isinstance(summary, str) else f"{event.kind} {_compact(event.payload)}"
        if event.kind == EventKind.FINDING:
            lines.append(f"  ! {text}")
        elif event.kind in (EventKind.CALL_START, EventKind.CALL_END):
            lines.append(text)
        elif event.vtime is not None:
            lines.append(f"{event.vtime:7.2f}s  {text}")
        else:
            lines.append(f"          {text}")
    return tuple(lines)


def _compact(payload: dict[str, JSON]) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 160 else text[:159] + "\u2026"


def derive_seed(seed: int, scenario_id: str) -> int:
    """A scenario's seed: a 32-bit number from the run's seed and the scenario's id, so the same
    ``--seed`` reproduces every scenario and scenarios do not share one caller."""
    digest = hashlib.sha256(f"{seed}\x00{scenario_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
