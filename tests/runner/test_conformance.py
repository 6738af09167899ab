"""The bundled conformance suite (``scenarios/conformance``) and the reference bots' scenarios
(``scenarios/examples``), through the real runner.

- The suite passes against the reference bots: every calling scenario against
  ``examples/ivr_bot.py``, every messaging one (the auth probe as a scenario, a reply through the
  connector, ``examples/echo.yaml``) against ``examples/echo_bot.py`` behind an in-process botemu.
- It fails against the broken bots of ``tests/bots``, each on exactly the scenarios of the tables
  below (``BROKEN_CALLING_BOTS``, ``WEAK_MESSAGING_BOTS``).
- The two additions it needed: the ``reject_workflow`` fault (the platform refuses Workflow N as
  if it were invalid) and the ``probe: auth`` scenario kind; and ``ended_by`` as a list.

Calls run in virtual time over loopback HTTP, concurrently (``-j``), so the whole file stays
within a few seconds of wall time; the slowest rows are the bots that are slow on purpose.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.exchange_rules import CALL_FORCED_INVALID
from emulator.calling.faults import PlatformFaults
from emulator.calling.session import CallSettings, place_call
from emulator.config import BotRegistration, ServiceConfig
from emulator.conformance.auth import CASES
from emulator.findings import Finding, Severity
from emulator.runner.runner import Runner, ScenarioResult, Target, platform_faults
from emulator.scenario import ScenarioError, load_scenario_text
from emulator.scenario.expectations import evaluate
from emulator.scenario.loader import discover, load_scenarios
from emulator.scenario.model import CallExpect, Faults, ReplyExpect, Scenario
from emulator.service.hosting import serving
from emulator.transcripts.store import EventKind, StoredEvent, TranscriptStore
from tests.bots.calling_bots import CONFORMANCE_KINDS, STATE, make_bot
from tests.bots.weak_bots import FLAWS, PROBE_ERRORS, WeakSettings, make_weak_bot
from tests.support import free_port, load_module

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "scenarios" / "conformance"
EXAMPLES = ROOT / "scenarios" / "examples"
ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
APP_ID = "5e7a1c2b-0000-4000-8000-00000000c0f0"
PASSWORD = "conformance-s3cret"


def _load_example(name: str, file: str) -> ModuleType:
    return load_module(ROOT / "examples" / file, name)


ivr = _load_example("ivr_bot_for_conformance", "ivr_bot.py")
echo = _load_example("echo_bot_for_conformance", "echo_bot.py")


def scenarios_in(directory: Path) -> list[Scenario]:
    return [s for path in discover([directory]) for s in load_scenarios(path)]


SUITE = scenarios_in(CONFORMANCE)
EXAMPLE_SCENARIOS = scenarios_in(EXAMPLES)
SUITE_CALLS = [s for s in SUITE if s.kind == "call"]
SUITE_MESSAGING = [s for s in SUITE if s.kind != "call" and s.probe != "auth-calling"]
"""The calling auth probe runs against the calling bot; tests/conformance/test_auth_calling.py
runs it against bots that check tokens (the broken bots here check none)."""

# The scenario names, as the tables below use them.
FIRST = "first workflow answers or rejects"
HANGUP = "caller hangs up during the first prompt"
SILENCE = "silence times out, and the bot recovers"
WRONG_DTMF = "wrong key gives incorrectDtmf, and the bot recovers"
INVALID_FIRST = "invalid first workflow, the bot recovers before answering"
INVALID = "invalid workflow mid-call, the bot recovers"
APP_STATE = "appState over several workflows"
DUPLICATE = "duplicate delivery gets an equivalent workflow"
UNKNOWN_FIELDS = "unknown fields are ignored"
UNKNOWN_ENUMS = "unknown enum values are ignored"
RESPONSE_TIME = "every response comes within the time-out"
AUTH_PROBE = "auth probe"
REPLY = "reply through the connector"
CALLING = {
    FIRST,
    HANGUP,
    SILENCE,
    WRONG_DTMF,
    INVALID_FIRST,
    INVALID,
    APP_STATE,
    DUPLICATE,
    UNKNOWN_FIELDS,
    UNKNOWN_ENUMS,
    RESPONSE_TIME,
}
MESSAGING = {AUTH_PROBE, REPLY}
CALLER_HANGS_UP_MID_WORKFLOW = CALLING - {INVALID_FIRST, INVALID}
"""The scenarios in which the caller hangs up while a Workflow with a callback runs (so the bot
gets a terminated result), against the conformant menu bot."""


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


async def serve_calls(aiohttp_server: ServerFactory, app: web.Application) -> str:
    server = await aiohttp_server(app)
    return str(server.make_url("/api/calls"))


async def run_all(runner: Runner, scenarios: Sequence[Scenario]) -> dict[str, ScenarioResult]:
    """Every scenario at once (as ``botemu test -j N`` does), by id."""
    results = await asyncio.gather(*(runner.run(s) for s in scenarios))
    return {r.scenario.id: r for r in results}


async def latency_again(
    runner: Runner, results: dict[str, ScenarioResult], failing: set[str]
) -> None:
    """The latency scenario, failed by a bot not expected to fail it, run again alone (twice at
    most; its result replaced): the whole suite's calls at once, on a machine the rest of the
    test suite loads, once put a response of a sound bot past its p95 bound of 1 s. A slow bot
    fails it each time."""
    first = results.get(RESPONSE_TIME)
    if first is None or first.passed or RESPONSE_TIME in failing:
        return
    for _ in range(2):
        results[RESPONSE_TIME] = await runner.run(first.scenario)
        if results[RESPONSE_TIME].passed:
            return


def failed(results: dict[str, ScenarioResult]) -> dict[str, list[str]]:
    """Scenario id -> its failures (rule: message), for the scenarios that failed."""
    return {
        sid: [f"{f.rule}: {f.message}" for f in r.failures]
        for sid, r in results.items()
        if not r.passed
    }


# --- the suite itself ----------------------------------------------------------------------------


def test_the_suite_has_the_scenarios_the_tables_name() -> None:
    assert {s.name for s in SUITE_CALLS} == CALLING
    assert {s.name for s in SUITE_MESSAGING} == MESSAGING
    assert len({s.id for s in SUITE}) == len(SUITE)  # one test id each


@pytest.mark.parametrize("scenario", SUITE, ids=[s.id for s in SUITE])
def test_every_conformance_scenario_names_its_spec_section(scenario: Scenario) -> None:
    assert scenario.spec and scenario.description
    assert "conformance" in scenario.tags
    assert ("calling" in scenario.tags) == (scenario.kind == "call")


def test_the_examples_hold_a_scenario_for_each_reference_bot() -> None:
    names = {s.path.name for s in EXAMPLE_SCENARIOS if s.path is not None}
    assert {"main-menu.yaml", "account-number.yaml", "voicemail.yaml", "echo.yaml"} <= names
    (echo_scenario,) = [s for s in EXAMPLE_SCENARIOS if s.kind == "conversation"]
    assert echo_scenario.path is not None and echo_scenario.path.name == "echo.yaml"


# --- against the reference bots ------------------------------------------------------------------


async def test_the_ivr_bot_passes_every_calling_scenario(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    url = await serve_calls(aiohttp_server, ivr.make_app(voicemail_dir=tmp_path / "voicemail"))
    calls = [*SUITE_CALLS, *(s for s in EXAMPLE_SCENARIOS if s.kind == "call")]
    async with Runner(Target(bot_url=url), store, seed=11, timeout=5.0) as runner:
        results = await run_all(runner, calls)
    assert failed(results) == {}
    assert len(results) == len(calls)
    # The forced rejections were injected and the IVR bot recovered from each.
    for name, recovery in (
        (INVALID_FIRST, "call ended: bot rejected"),
        (INVALID, "call ended: caller hung up"),
    ):
        result = results[name]
        assert [f.rule for f in result.findings if f.severity is Severity.INFO] == [
            CALL_FORCED_INVALID.id
        ]
        assert result.ladder[-1] == recovery


def echo_settings(config: ServiceConfig) -> Any:
    p = config.placeholders()
    return echo.Settings(
        app_id=APP_ID,
        app_password=PASSWORD,
        token_url=p.token_url,
        connector_scope=p.connector_scope,
        openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer,
        idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer,
    )


def weak_settings(config: ServiceConfig, *, replies: bool = True) -> WeakSettings:
    p = config.placeholders()
    return WeakSettings(
        APP_ID,
        p.openid_metadata_url,
        p.connector_issuer,
        p.idp_openid_url,
        p.emulator_issuer,
        app_password=PASSWORD if replies else None,
        token_url=p.token_url,
        connector_scope=p.connector_scope,
    )


MessagingBot = Callable[[ServiceConfig], web.Application]


async def run_messaging(
    make: MessagingBot, store: TranscriptStore, tmp_path: Path, scenarios: Sequence[Scenario]
) -> dict[str, ScenarioResult]:
    """The scenarios against a messaging bot behind the runner's in-process botemu (the bot is
    configured with that botemu's settings, so it starts after the runner)."""
    port = free_port()
    target = Target(
        messaging_bot=f"http://127.0.0.1:{port}/api/messages",
        app_id=APP_ID,
        app_password=PASSWORD,
        certs=tmp_path / "certs",
    )
    async with Runner(target, store, timeout=5.0) as runner:
        assert runner.emulator_config is not None
        bot = web.AppRunner(make(runner.emulator_config), access_log=None)
        await bot.setup()
        await web.TCPSite(bot, "127.0.0.1", port).start()
        try:
            return await run_all(runner, scenarios)
        finally:
            await bot.cleanup()


async def test_the_echo_bot_passes_every_messaging_scenario(
    store: TranscriptStore, tmp_path: Path
) -> None:
    talks = [*SUITE_MESSAGING, *(s for s in EXAMPLE_SCENARIOS if s.kind == "conversation")]
    results = await run_messaging(
        lambda config: echo.make_app(echo_settings(config)), store, tmp_path, talks
    )
    assert failed(results) == {}
    probe = results[AUTH_PROBE]
    assert [f.where for f in probe.findings] == [case.name for case in CASES]
    assert {f.severity for f in probe.findings} == {Severity.INFO}
    (conversation_id,) = probe.transcript_ids
    summary = store.call(conversation_id)
    assert summary is not None and summary.passed is True
    assert sum(line.startswith("  ! ") for line in probe.ladder) == len(CASES)
    assert probe.vtime is None


# --- against broken bots -------------------------------------------------------------------------

BROKEN_CALLING_BOTS = [
    pytest.param("conformant", set(), "", id="conformant"),
    pytest.param("not-idempotent", {DUPLICATE}, "CALL-DUPLICATE-DIFFERS", id="not-idempotent"),
    pytest.param("strict-fields", {UNKNOWN_FIELDS}, "CALL-HTTP-5XX", id="strict-fields"),
    pytest.param("strict-enums", {UNKNOWN_ENUMS}, "CALL-HTTP-5XX", id="strict-enums"),
    pytest.param(
        "crash-on-terminated",
        CALLER_HANGS_UP_MID_WORKFLOW,
        "CALL-HTTP-5XX",
        id="crash-on-terminated",
    ),
    pytest.param(
        "no-recovery",
        {INVALID_FIRST, INVALID},
        "expected the call to be ended by the bot or caller, got ended by the platform "
        "(platform hung up: bot sent no workflow)",
        id="no-recovery",
    ),
    pytest.param("goodbye-unanswered", {INVALID_FIRST}, "WF-FIRST-ACTION", id="goodbye-unanswered"),
    pytest.param("appstate-overflow", {APP_STATE}, "WF-APPSTATE-LENGTH", id="appstate-overflow"),
    pytest.param(
        "sluggish",
        {RESPONSE_TIME},
        "EXP-LATENCY: expected the bot's answers within 1000 ms (p95)",
        id="sluggish",
    ),
    pytest.param("slow", CALLING, "CALL-TIMEOUT", id="slow"),
]
"""Calling bot kind -> the scenarios of the suite it fails, and a text the failures of each of
them show. A time-out is an error wherever it happens, so ``slow``
(past a 0.3 s time-out) fails every calling scenario; a bot that crashes on the terminated result
fails every scenario in which the caller hangs up while a Workflow with a callback runs."""


@pytest.mark.parametrize(("kind", "failing", "shows"), BROKEN_CALLING_BOTS)
async def test_a_broken_calling_bot_fails_the_scenarios_that_target_its_fault(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    kind: str,
    failing: set[str],
    shows: str,
) -> None:
    url = await serve_calls(aiohttp_server, make_bot(kind))
    timeout = 0.3 if kind == "slow" else 5.0
    async with Runner(Target(bot_url=url), store, seed=5, timeout=timeout) as runner:
        results = await run_all(runner, SUITE_CALLS)
        await latency_again(runner, results, failing)
    failures = failed(results)
    assert set(failures) == failing
    assert all(r.error is None for r in results.values())  # each ran: the bot failed it
    for name, lines in failures.items():
        assert any(shows in line for line in lines), (name, lines)


def test_every_conformance_kind_is_in_the_table() -> None:
    kinds = {p.values[0] for p in BROKEN_CALLING_BOTS}
    assert set(CONFORMANCE_KINDS) <= kinds


AUTH_FLAWS = PROBE_ERRORS
"""Weak messaging bot flaw -> the probe's error rules, listed in the auth probe's failure."""


def test_every_weak_bot_flaw_is_in_the_table() -> None:
    assert set(AUTH_FLAWS) == {None, *FLAWS}


@pytest.mark.slow
async def test_weak_bots_fail_the_auth_probe_scenario_and_only_it(
    store: TranscriptStore, tmp_path: Path
) -> None:
    """Each weak bot (tests/bots/weak_bots.py, replying through the connector like the echo bot)
    against the messaging scenarios of the suite, all at once: each flaw fails the auth probe on
    exactly its rules, and nothing else; the correct bot and the one answering 401 pass."""

    async def one(flaw: str | None) -> dict[str, ScenarioResult]:
        directory = tmp_path / (flaw or "none")
        with TranscriptStore(directory / "t.db") as own:
            return await run_messaging(
                lambda config: make_weak_bot(weak_settings(config), flaw),
                own,
                directory,
                SUITE_MESSAGING,
            )

    flaws = list(AUTH_FLAWS)
    runs = await asyncio.gather(*(one(flaw) for flaw in flaws))
    for flaw, results in zip(flaws, runs, strict=True):
        rules = AUTH_FLAWS[flaw]
        assert set(failed(results)) == ({AUTH_PROBE} if rules else set()), flaw
        probe = results[AUTH_PROBE]
        errors = {f.rule for f in probe.findings if f.severity is Severity.ERROR}
        assert errors == rules, flaw
        if rules:
            (failure,) = probe.failures
            assert failure.rule == "EXP-FINDINGS"
            assert failure.message.startswith("expected no error finding, got ")
            assert set(failure.message.partition(": ")[2].split(", ")) == rules, flaw
            assert failure.where.endswith("auth-probe.yaml:2")


async def test_a_bot_that_never_replies_fails_the_reply_scenario(
    store: TranscriptStore, tmp_path: Path
) -> None:
    results = await run_messaging(
        lambda config: make_weak_bot(weak_settings(config, replies=False), None),
        store,
        tmp_path,
        SUITE_MESSAGING,
    )
    assert set(failed(results)) == {REPLY}
    assert failed(results)[REPLY] == [
        "EXP-REPLY: expected a reply to be a message, got no reply at all"
    ]


# --- the probe scenario kind ---------------------------------------------------------------------

PROBE = "name: p\nprobe: auth\n"


def errors(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_text(text, "s.yaml")
    return [f"{e.line}:{e.column}: {e.message}" for e in caught.value.errors]


def test_a_probe_scenario() -> None:
    scenario = load_scenario_text(PROBE + "tags: [auth]\nexpect:\n  findings: [AUTH-SCHEME]\n")
    assert scenario.kind == "probe" and scenario.probe == "auth"
    assert scenario.caller is None and scenario.messaging is None
    assert [type(e).__name__ for e in scenario.expect] == ["FindingsExpect"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: p\nprobe: oauth\n",
            "2:8: expected a probe: auth or auth-calling, got a string ('oauth') (did you mean 'auth'?)",
            id="unknown-probe",
        ),
        pytest.param(
            PROBE + "caller: []\n",
            "2:1: give either 'caller' or 'probe', not both",
            id="probe-and-caller",
        ),
        pytest.param(
            PROBE + "expect:\n  replies: [{text: hi}]\n",
            "4:3: 'replies' is expected of a conversation (messaging:), not a probe: a "
            "probe is judged by its findings",
            id="replies",
        ),
        pytest.param(
            PROBE + "expect:\n  call: {answered: true}\n",
            "4:3: 'call' is expected of a call (caller:), not a probe: a probe is judged "
            "by its findings",
            id="call",
        ),
        pytest.param(
            PROBE + "expect:\n  latency: {p95_ms: 5}\n",
            "4:3: 'latency' is expected of a call or a conversation, not a probe: a probe "
            "is judged by its findings",
            id="latency",
        ),
        pytest.param(
            PROBE + "faults: {unknown_fields: true}\n",
            "3:10: 'unknown_fields' is a fault of a call (caller:), not of a probe: a "
            "probe runs as it is",
            id="faults",
        ),
        pytest.param(
            "name: x\n",
            "1:1: missing required key 'caller' (or 'messaging' or 'probe')",
            id="none-of-the-three",
        ),
    ],
)
def test_bad_probe_scenarios(text: str, expected: str) -> None:
    assert errors(text) == [expected]


def test_a_probe_judged_with_call_expectations_says_it_is_a_probe() -> None:
    scenario = Scenario(
        name="p", probe="auth", expect=(CallExpect(answered=True), ReplyExpect(type="message"))
    )
    messages = [f.message for f in evaluate(scenario, [])]
    assert messages == [
        "expected a call, but this scenario is a probe: call-level expectations belong to calls",
        "expected a bot reply, but this scenario is a probe: replies belong to conversations",
    ]


@pytest.mark.parametrize(
    ("target", "error"),
    [
        pytest.param(
            Target(bot_url="http://127.0.0.1:1/api/calls"),
            "this scenario is a probe (auth), and no messaging bot was given (--messaging-bot URL)",
            id="no-messaging-bot",
        ),
        pytest.param(
            Target(messaging_bot="http://127.0.0.1:1/api/messages", emulator="http://127.0.0.1:1"),
            "no botemu answers at http://127.0.0.1:1",
            id="no-emulator",
        ),
    ],
)
async def test_probes_that_cannot_run(store: TranscriptStore, target: Target, error: str) -> None:
    async with Runner(target, store) as runner:
        result = await runner.run(Scenario(name="p", probe="auth", path=Path("p.yaml"), line=1))
    assert not result.passed and result.error is not None and error in result.error
    assert [f.rule for f in result.failures] == ["EXP-RUN"]


async def test_a_probe_of_an_unreachable_bot(store: TranscriptStore, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/messages"
    target = Target(messaging_bot=url, app_id=APP_ID, certs=tmp_path / "certs")
    async with Runner(target, store, timeout=2.0) as runner:
        result = await runner.run(Scenario(name="p", probe="auth", path=Path("p.yaml"), line=1))
    assert result.error is not None
    assert result.error.startswith(f"the bot at {url} could not be reached: ")
    assert [f.rule for f in result.failures] == ["EXP-RUN"]


@pytest.mark.parametrize("shared", [True, False], ids=["shared-database", "own-database"])
async def test_a_probe_through_a_running_botemu(tmp_path: Path, shared: bool) -> None:
    port, bot_port = free_port(), free_port()
    bot = f"http://127.0.0.1:{bot_port}/api/messages"
    config = ServiceConfig(
        port=port, certs_dir=tmp_path / "certs", bots=(BotRegistration(APP_ID, PASSWORD, bot),)
    )
    served = TranscriptStore(tmp_path / "served.db")
    mine = served if shared else TranscriptStore(tmp_path / "mine.db")
    weak = web.AppRunner(make_weak_bot(weak_settings(config), "skip-audience"), access_log=None)
    await weak.setup()
    await web.TCPSite(weak, "127.0.0.1", bot_port).start()
    (probe,) = [s for s in SUITE if s.probe == "auth"]
    try:
        async with serving(config, served):
            target = Target(
                messaging_bot=bot,
                emulator=config.base_url,  # app id looked up
                control_certs=config.certs_dir,
            )
            async with Runner(target, mine) as runner:
                result = await runner.run(probe)
    finally:
        await weak.cleanup()
    assert [f.rule for f in result.failures] == ["EXP-FINDINGS"]
    assert "AUTH-AUDIENCE" in result.failures[0].message
    (transcript_id,) = result.transcript_ids
    events = mine.events(transcript_id)
    assert sum(e.kind == EventKind.FINDING for e in events) == len(CASES)
    summary = mine.call(transcript_id)
    assert summary is not None and summary.passed is False
    served.close()
    mine.close()


# --- the reject_workflow fault -------------------------------------------------------------------


def test_reject_workflow_in_a_scenario_file() -> None:
    text = "name: x\ncaller: []\nfaults:\n  reject_workflow: [1, 3]\n"
    scenario = load_scenario_text(text)
    assert scenario.faults == Faults(reject_workflows=(1, 3))
    assert platform_faults(scenario.faults) == PlatformFaults(reject_workflows=(1, 3))
    assert load_scenario_text("name: x\ncaller: []\nfaults: {reject_workflow: 2}\n").faults == (
        Faults(reject_workflows=(2,))
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: x\ncaller: []\nfaults: {reject_workflow: 0}\n",
            "3:27: expected a Workflow number (1 is the first), or a list of them, got a "
            "number (0)",
            id="zero",
        ),
        pytest.param(
            "name: x\nmessaging: [hi]\nfaults: {reject_workflow: 1}\n",
            "3:10: 'reject_workflow' is a fault of a call (caller:), not of a conversation",
            id="conversation",
        ),
    ],
)
def test_bad_reject_workflow(text: str, expected: str) -> None:
    assert errors(text) == [expected]


def test_reject_workflow_is_described() -> None:
    faults = PlatformFaults(duplicate_callbacks=(1,), reject_workflows=(2,))
    assert faults.describe() == "duplicate callback 1; reject workflow 2"
    assert faults.to_json()["reject_workflows"] == [2]


FAST = RetryPolicy(attempts=2, backoff=0.01, timeout=5.0)


async def forced_call(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    app: web.Application,
    rejected: tuple[int, ...],
    caller: str,
) -> tuple[list[StoredEvent], Any]:
    url = await serve_calls(aiohttp_server, app)
    settings = CallSettings(
        bot_url=url,
        caller=CallerScript.from_inline(caller),
        retry=FAST,
        faults=PlatformFaults(reject_workflows=rejected),
    )
    report = await place_call(settings, store)
    return store.events(report.call_id), report


def notes(events: list[StoredEvent]) -> list[str]:
    return [
        str(e.payload["summary"])
        for e in events
        if e.kind == EventKind.NOTE and e.payload.get("fault") == "reject_workflow"
    ]


async def test_a_forced_rejection_runs_nothing_and_posts_the_validation_outcome(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("conformant")
    events, report = await forced_call(aiohttp_server, store, app, (2,), "silence 20s; hangup")
    assert notes(events) == ["fault injected: Workflow 2 refused as if it were invalid"]
    forced = [f for f in report.findings if f.rule == CALL_FORCED_INVALID.id]
    assert len(forced) == 1 and forced[0].severity is Severity.INFO
    assert forced[0].where == "Workflow 2"
    received = [json.loads(r.body) for r in app[STATE].received]
    outcome = received[2]["operationOutcome"]
    assert outcome["type"] == "workflowValidationOutcome" and outcome["outcome"] == "failure"
    assert outcome["id"] == "menu-1"  # the refused Workflow's first operationId
    assert outcome["failureReason"].startswith("CALL-FORCED-INVALID at Workflow 2: ")
    assert received[2]["appState"] == '{"tries":1}'  # the refused Workflow's, echoed
    assert received[2]["callState"] == "established"
    # Nothing of Workflow 2 ran: its menu prompt was never played; the goodbye was.
    played = [e.payload.get("text") for e in events if e.payload.get("kind") == "prompt played"]
    assert "Sorry, I did not get that." not in played
    assert played[-1] == "Sorry, something went wrong. Goodbye."
    assert report.workflows == 3  # the refused one counts, as a validation outcome does


async def test_a_workflow_without_callback_is_not_forced(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    # The ok bot's second Workflow is goodbye and hangup: no callback for a validation outcome.
    events, report = await forced_call(aiohttp_server, store, make_bot("ok"), (2,), "press 1")
    assert notes(events) == [
        "fault not injected: Workflow 2 has no callback for the validation outcome, so it runs"
    ]
    assert CALL_FORCED_INVALID.id not in {f.rule for f in report.findings}
    assert report.end_reason.value == "bot hung up"


async def test_an_invalid_workflow_is_refused_as_usual(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    events, report = await forced_call(aiohttp_server, store, make_bot("invalid"), (1,), "press 1")
    assert notes(events) == ["fault not needed: Workflow 1 is invalid and refused as usual"]
    rules = {f.rule for f in report.findings}
    assert "WF-RECOGNIZE-ONE-OF" in rules and CALL_FORCED_INVALID.id not in rules


# --- ended_by as a list --------------------------------------------------------------------------


def test_ended_by_takes_a_list() -> None:
    text = "name: x\ncaller: []\nexpect:\n  call: {ended_by: [bot, caller]}\n"
    (expectation,) = load_scenario_text(text).expect
    assert expectation == CallExpect(ended_by=("bot", "caller"), line=4)
    bad = "name: x\ncaller: []\nexpect:\n  call: {ended_by: [bot, bot]}\n"
    assert errors(bad) == ["4:26: 'bot' is listed twice"]
    typo = "name: x\ncaller: []\nexpect:\n  call: {ended_by: [bot, callr]}\n"
    assert errors(typo) == [
        "4:26: expected bot, caller or platform, got a string ('callr') (did you mean 'caller'?)"
    ]


async def test_ended_by_a_list_passes_any_of_them(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    url = await serve_calls(aiohttp_server, make_bot("conformant"))

    def scenario(*who: str) -> Scenario:
        expect = CallExpect(ended_by=who)  # type: ignore[arg-type]
        return Scenario(
            name="-".join(who),
            caller=CallerScript.from_inline("hangup"),
            expect=(expect,),
            path=Path("e.yaml"),
            line=1,
        )

    async with Runner(Target(bot_url=url), store) as runner:
        results = await run_all(runner, [scenario("bot", "caller"), scenario("bot", "platform")])
    assert failed(results) == {
        "bot-platform": [
            "EXP-CALL: expected the call to be ended by the bot or platform, got ended by the "
            "caller (caller hung up)"
        ]
    }


async def test_a_calling_probes_verdict_waits_for_the_end_its_botemu_writes(tmp_path: Path) -> None:
    """A running botemu sharing the file ends the probe's call after its findings, from its
    own writer; the verdict is written only once that end is in the file, or the end would
    overwrite it (regression: ``probe finished`` became ``auth probe finished``)."""
    from types import SimpleNamespace

    from emulator.runner.probes import _probe_transcript

    served = TranscriptStore(tmp_path / "t.db")
    call_id = served.start(bot=APP_ID)
    finding = Finding("AUTH-AUDIENCE", Severity.ERROR, "$", "accepted")
    served.append(call_id, EventKind.FINDING, {"summary": str(finding), **finding.to_json()})

    async def end_later() -> None:
        await asyncio.sleep(0.3)
        served.finish(call_id, reason="auth probe finished", passed=False)

    runner = SimpleNamespace(store=served, emulator_url="http://127.0.0.1:1")
    ending = asyncio.create_task(end_later())
    found, _ = await _probe_transcript(runner, Scenario(name="p", path=Path("p.yaml"), line=1),  # type: ignore[arg-type]
                                       call_id, (finding,), APP_ID, calling=True)  # fmt: skip
    summary = served.call(found)
    assert found == call_id and summary is not None and summary.ended is not None
    await ending
    served.close()
