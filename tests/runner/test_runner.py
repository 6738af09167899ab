"""The runner against real bots: the reference IVR and echo bots, and small broken ones.

Scenarios are built as ``model.Scenario`` values (not read from YAML), so these tests pin the
runner and the expectations, whatever the loader does. Calls go over loopback HTTP in virtual
time; conversations go through an in-process botemu (or one the test serves) to the echo bot.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.certs import PLATFORM_CN, ensure_certs
from emulator.config import BotRegistration, ServiceConfig
from emulator.runner.runner import Runner, ScenarioResult, Target, platform_faults
from emulator.scenario.model import (
    CallExpect,
    ChoicesExpect,
    Expectation,
    Faults,
    FindingsExpect,
    LatencyExpect,
    OutcomeExpect,
    PromptExpect,
    RecordingExpect,
    ReplyExpect,
    Scenario,
    TextMatch,
    Turn,
)
from emulator.service.hosting import serving
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import make_bot
from tests.support import free_port, load_module

ROOT = Path(__file__).resolve().parents[2]
ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
APP_ID = "5e7a1c2b-0000-4000-8000-00000000e0b0"
PASSWORD = "runner-s3cret"


def _load(name: str, file: str) -> ModuleType:
    return load_module(ROOT / "examples" / file, name)


ivr = _load("ivr_bot_for_runner", "ivr_bot.py")
echo = _load("echo_bot_for_runner", "echo_bot.py")


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


def call(caller: str, *expect: Expectation, faults: Faults | None = None) -> Scenario:
    return Scenario(
        name="call",
        caller=CallerScript.from_inline(caller),
        expect=expect,
        faults=faults or Faults(),
        path=Path("call.yaml"),
        line=1,
    )


def chat(*turns: Turn, expect: tuple[Expectation, ...] = ()) -> Scenario:
    return Scenario(name="chat", messaging=turns, expect=expect, path=Path("chat.yaml"), line=1)


def rules(result: ScenarioResult) -> list[str]:
    return [f.rule for f in result.failures]


async def bot_url(aiohttp_server: ServerFactory, app: web.Application) -> str:
    server = await aiohttp_server(app)
    return str(server.make_url("/api/calls"))


async def run_call(url: str, store: TranscriptStore, scenario: Scenario) -> ScenarioResult:
    async with Runner(Target(bot_url=url), store, seed=3) as runner:
        return await runner.run(scenario)


@pytest.fixture
async def ivr_url(aiohttp_server: ServerFactory, tmp_path: Path) -> str:
    return await bot_url(aiohttp_server, ivr.make_app(voicemail_dir=tmp_path / "voicemail"))


def counting_bot() -> web.Application:
    """Not idempotent: every request advances it, and its prompt says how far."""
    count = [0]

    async def handle(request: web.Request) -> web.Response:
        doc = json.loads(await request.read())
        count[0] += 1
        if str(doc.get("callState", "")).lower() == "terminated":
            return web.Response(status=200)
        callback = f"http://{request.host}/api/calls"
        if "participants" in doc:
            return web.json_response(
                {
                    "actions": [
                        {"operationId": "a", "action": "answer"},
                        {
                            "operationId": "p",
                            "action": "playPrompt",
                            "prompts": [{"value": "Hello"}],
                        },
                    ],
                    "links": {"callback": callback},
                    "appState": "1",
                }
            )
        return web.json_response(
            {
                "actions": [
                    {
                        "operationId": "r",
                        "action": "playPrompt",
                        "prompts": [{"value": f"Reply {count[0]}"}],
                    },
                    {"operationId": "h", "action": "hangup"},
                ],
                "links": {"callback": callback},
                "appState": str(count[0]),
            }
        )

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


def strict_bot() -> web.Application:
    """Answers 500 to any field or modality it does not know."""

    async def handle(request: web.Request) -> web.Response:
        doc = json.loads(await request.read())
        if "botemuProbe" in doc or "botemuFutureModality" in doc.get("presentedModalityTypes", []):
            return web.Response(status=500, text="unexpected field")
        return web.json_response({"actions": [{"operationId": "r", "action": "reject"}]})

    app = web.Application()
    app.router.add_post("/api/calls", handle)
    return app


# --- calls: every expectation kind against the IVR bot -------------------------------------------

ACCOUNT = "listen; press 1; press 1234#; listen; hangup"
HAPPY: tuple[Expectation, ...] = (
    CallExpect(
        answered=True,
        rejected=False,
        ended_by="bot",
        final_state="terminated",
        max_workflows=3,
        min_duration=5,
        max_duration=120,
    ),
    PromptExpect(
        (
            TextMatch(contains="Welcome"),
            TextMatch(matches=r"press 1 or say sales"),
            TextMatch(contains="account number"),
            TextMatch(equals="You entered"),
            TextMatch(equals="1234"),
            TextMatch(equals="Goodbye."),
        )
    ),
    ChoicesExpect(("voicemail", "sales", "support"), index=0),
    OutcomeExpect(type="recognizeOutcome", outcome="success", choice="sales", index=0),
    OutcomeExpect(completion_reason="completedStopToneDetected", digits="1234", index=1),
    LatencyExpect(p95_ms=2000),
)


async def test_a_passing_call_with_every_kind_of_expectation(
    ivr_url: str, store: TranscriptStore
) -> None:
    result = await run_call(ivr_url, store, call(ACCOUNT, *HAPPY))
    assert result.failures == () and result.passed and result.error is None
    assert [(f.rule, f.count) for f in result.findings] == [("WF-CALLBACK-HTTPS", 2)]  # a warning
    (call_id,) = result.transcript_ids
    summary = store.call(call_id)
    assert summary is not None and summary.passed is True and summary.scenario == "call"
    assert result.vtime is not None and result.vtime > 5
    assert result.ladder[0].startswith("call ") and result.ladder[-1] == "call ended: bot hung up"
    assert any("platform played 'Goodbye.'" in line for line in result.ladder)


@pytest.mark.parametrize(
    ("expect", "rule"),
    [
        pytest.param(CallExpect(ended_by="caller"), "EXP-CALL", id="call"),
        pytest.param(CallExpect(max_workflows=2), "EXP-CALL", id="workflows"),
        pytest.param(PromptExpect((TextMatch(contains="press 9"),)), "EXP-PROMPTS", id="prompts"),
        pytest.param(ChoicesExpect(("sales", "support")), "EXP-CHOICES", id="choices"),
        pytest.param(OutcomeExpect(choice="support"), "EXP-OUTCOME", id="outcome"),
        pytest.param(RecordingExpect(), "EXP-RECORDING", id="recording"),
        pytest.param(LatencyExpect(p95_ms=0.0001), "EXP-LATENCY", id="latency"),
        pytest.param(
            FindingsExpect(none=False, rules=("CALL-TIMEOUT",)), "EXP-FINDINGS", id="findings"
        ),
    ],
)
async def test_each_kind_of_expectation_fails(
    ivr_url: str, store: TranscriptStore, expect: Expectation, rule: str
) -> None:
    result = await run_call(ivr_url, store, call(ACCOUNT, expect))
    assert not result.passed and result.error is None
    assert rules(result) == [rule]
    (failure,) = result.failures
    assert failure.where == "call.yaml:1" and failure.message.startswith("expected ")
    (call_id,) = result.transcript_ids
    summary = store.call(call_id)
    assert summary is not None and summary.passed is False


async def test_a_voicemail_recording(ivr_url: str, store: TranscriptStore) -> None:
    voicemail = "listen; press 3; talk 8s then #; listen; hangup"
    good = await run_call(
        ivr_url,
        store,
        call(
            voicemail,
            RecordingExpect(format="wav", min_length=7.5, max_length=8.5),
            OutcomeExpect(type="recordOutcome", completion_reason="completedStopToneDetected"),
            PromptExpect((TextMatch(contains="message has been recorded"),), in_order=False),
        ),
    )
    assert good.failures == ()
    bad = await run_call(ivr_url, store, call(voicemail, RecordingExpect(format="wma")))
    assert rules(bad) == ["EXP-RECORDING"]
    assert bad.failures[0].message == "expected a recording in wma, got wav, 8s"


async def test_the_caller_hangs_up(ivr_url: str, store: TranscriptStore) -> None:
    result = await run_call(
        ivr_url,
        store,
        call(
            "hangup during recognize after 1s",
            CallExpect(answered=True, ended_by="caller", final_state="terminated", max_duration=5),
        ),
    )
    assert result.failures == ()


async def test_findings_default_and_explicit(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    url = await bot_url(aiohttp_server, make_bot("invalid"))
    default = await run_call(url, store, call("press 1"))
    assert rules(default) == ["EXP-FINDINGS"]
    assert "WF-RECOGNIZE-ONE-OF" in default.failures[0].message
    expected = await run_call(
        url,
        store,
        call(
            "press 1",
            FindingsExpect(none=False, rules=("WF-RECOGNIZE-ONE-OF",)),
            OutcomeExpect(type="workflowValidationOutcome", outcome="failure", index=0),
            OutcomeExpect(choice="sales", index=1),
        ),
    )
    assert expected.failures == ()
    assert "WF-RECOGNIZE-ONE-OF" in [f.rule for f in expected.findings]


async def test_a_rejected_call(aiohttp_server: ServerFactory, store: TranscriptStore) -> None:
    url = await bot_url(aiohttp_server, strict_bot())
    result = await run_call(
        url, store, call("", CallExpect(answered=False, rejected=True, ended_by="bot"))
    )
    assert result.failures == ()


async def test_an_https_bot_over_mutual_tls(tmp_path: Path, store: TranscriptStore) -> None:
    certs = ensure_certs(tmp_path / "certs")
    app = ivr.make_app(platform_cn=PLATFORM_CN, voicemail_dir=tmp_path / "voicemail")
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ivr.tls_context(certs.dir))
    await site.start()
    url = f"https://127.0.0.1:{runner.addresses[0][1]}/api/calls"
    try:
        async with Runner(Target(bot_url=url, certs=certs.dir), store) as scenarios:
            result = await scenarios.run(call(ACCOUNT, *HAPPY))
    finally:
        await runner.cleanup()
    assert result.failures == () and result.findings == ()  # https: not even the http warning


# --- calls: faults -------------------------------------------------------------------------------


def test_faults_map_onto_the_platform() -> None:
    faults = Faults((1,), (2,), (3,), True, True, 1.5)
    assert platform_faults(faults).describe() == (
        "fail callback 1; duplicate callback 2; drop callback 3; unknown fields; "
        "unknown enum values; caller waits 1.5s before each input"
    )


@pytest.mark.parametrize(
    "faults",
    [
        pytest.param(Faults(fail_callbacks=(1, 2)), id="fail"),
        pytest.param(Faults(duplicate_callbacks=(1, 2)), id="duplicate"),
        pytest.param(Faults(unknown_fields=True, unknown_enums=True), id="unknown"),
    ],
)
async def test_the_ivr_bot_copes_with_faults(
    ivr_url: str, store: TranscriptStore, faults: Faults
) -> None:
    result = await run_call(ivr_url, store, call(ACCOUNT, *HAPPY, faults=faults))
    assert result.failures == ()


async def test_fail_callback_catches_a_bot_that_advances_twice(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    expect = PromptExpect((TextMatch(equals="Reply 2"),))
    url = await bot_url(aiohttp_server, counting_bot())
    assert (await run_call(url, store, call("", expect))).failures == ()
    url = await bot_url(aiohttp_server, counting_bot())
    failed = await run_call(url, store, call("", expect, faults=Faults(fail_callbacks=(1,))))
    assert rules(failed) == ["EXP-PROMPTS"]
    assert "'Reply 3'" in failed.failures[0].message


async def test_duplicate_callback_catches_a_bot_that_is_not_idempotent(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    url = await bot_url(aiohttp_server, counting_bot())
    result = await run_call(url, store, call("", faults=Faults(duplicate_callbacks=(1,))))
    assert rules(result) == ["EXP-FINDINGS"]
    assert "CALL-DUPLICATE-DIFFERS" in result.failures[0].message
    assert "CALL-DUPLICATE-DIFFERS" in [f.rule for f in result.findings]


async def test_drop_callback_ends_the_call_on_the_platform(
    ivr_url: str, store: TranscriptStore
) -> None:
    dropped = Faults(drop_callbacks=(1,))
    result = await run_call(
        ivr_url,
        store,
        call(
            ACCOUNT,
            CallExpect(answered=True, ended_by="platform", max_workflows=1),
            faults=dropped,
        ),
    )
    assert result.failures == ()
    expecting_more = await run_call(ivr_url, store, call(ACCOUNT, *HAPPY, faults=dropped))
    assert set(rules(expecting_more)) == {"EXP-CALL", "EXP-PROMPTS", "EXP-OUTCOME"}


async def test_unknown_fields_and_values_fail_a_strict_bot(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    url = await bot_url(aiohttp_server, strict_bot())
    assert (await run_call(url, store, call(""))).failures == ()
    for faults in (Faults(unknown_fields=True), Faults(unknown_enums=True)):
        result = await run_call(url, store, call("", faults=faults))
        assert rules(result) == ["EXP-FINDINGS"]
        assert "CALL-HTTP-5XX" in result.failures[0].message


async def test_caller_delay_makes_the_menu_time_out(ivr_url: str, store: TranscriptStore) -> None:
    first_try = OutcomeExpect(choice="sales", index=0)
    slow = await run_call(
        ivr_url,
        store,
        call(
            ACCOUNT,
            first_try,
            PromptExpect((TextMatch(contains="did not catch that"),)),
            faults=Faults(caller_delay=6.0),
        ),
    )
    assert rules(slow) == ["EXP-OUTCOME"]
    assert "initialSilenceTimeout" in slow.failures[0].message
    patient = await run_call(
        ivr_url, store, call(ACCOUNT, *HAPPY, first_try, faults=Faults(caller_delay=1.0))
    )
    assert patient.failures == ()


# --- calls: when a scenario cannot run -----------------------------------------------------------


async def test_an_unreachable_calling_bot(store: TranscriptStore) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/calls"
    async with Runner(Target(bot_url=url), store, timeout=1.0) as runner:
        result = await runner.run(call("press 1"))
    assert not result.passed and result.error is not None
    assert result.error.startswith(f"the bot at {url} could not be reached: connection failed")
    assert rules(result) == ["EXP-RUN"] and result.failures[0].where == "call.yaml:1"
    assert len(result.transcript_ids) == 1 and result.ladder


@pytest.mark.parametrize(
    ("target", "scenario", "error"),
    [
        pytest.param(
            Target(), call("press 1"), "no calling bot was given (--bot URL)", id="no-calling-bot"
        ),
        pytest.param(Target(bot_url="ftp://x"), call(""), "is not an http(s) URL", id="bad-url"),
        pytest.param(
            Target(bot_url="http://x"),
            chat(Turn(text="hi")),
            "no messaging bot was given (--messaging-bot URL)",
            id="no-messaging-bot",
        ),
        pytest.param(
            Target(messaging_bot="http://127.0.0.1:1/api/messages", emulator="http://127.0.0.1:1"),
            Scenario(name="f", messaging=(Turn(text="hi"),), faults=Faults(unknown_fields=True)),
            "faults apply to calls",
            id="faults-on-a-conversation",
        ),
        pytest.param(
            Target(messaging_bot="http://127.0.0.1:1/api/messages", emulator="http://127.0.0.1:1"),
            chat(Turn(text="hi")),
            "no botemu answers at http://127.0.0.1:1",
            id="no-emulator",
        ),
    ],
)
async def test_scenarios_that_cannot_run(
    store: TranscriptStore, target: Target, scenario: Scenario, error: str
) -> None:
    async with Runner(target, store) as runner:
        result = await runner.run(scenario)
    assert not result.passed and result.error is not None and error in result.error
    assert rules(result) == ["EXP-RUN"]


async def test_the_runner_must_be_entered(store: TranscriptStore) -> None:
    with pytest.raises(RuntimeError, match="async with"):
        await Runner(Target(), store).run(call(""))


# --- conversations with the echo bot -------------------------------------------------------------


def echo_settings(config: ServiceConfig) -> object:
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


@pytest.fixture
async def echo_runner(store: TranscriptStore, tmp_path: Path) -> AsyncIterator[Runner]:
    """A runner with its in-process botemu, and the echo bot configured against it."""
    port = free_port()
    target = Target(
        messaging_bot=f"http://127.0.0.1:{port}/api/messages",
        app_id=APP_ID,
        app_password=PASSWORD,
        certs=tmp_path / "certs",
    )
    async with Runner(target, store) as runner:
        assert runner.emulator_config is not None and runner.emulator_url is not None
        bot = web.AppRunner(echo.make_app(echo_settings(runner.emulator_config)))
        await bot.setup()
        await web.TCPSite(bot, "127.0.0.1", port).start()
        try:
            yield runner
        finally:
            await bot.cleanup()


HELLO = Turn(text="hello", wait=2.0)


async def test_a_conversation_with_the_echo_bot(echo_runner: Runner) -> None:
    scenario = chat(
        HELLO,
        Turn(type="event", name="ping", value={"n": 1}, wait=0.2),
        Turn(type="invoke", name="task/fetch", value={}, wait=0.2),
        Turn(text="again", wait=2.0),
        expect=(
            ReplyExpect(text=TextMatch(matches=r"^Welcome, User!"), index=0),
            ReplyExpect(text=TextMatch(equals="echo: hello"), type="message", index=1),
            ReplyExpect(text=TextMatch(equals="echo: again")),
            LatencyExpect(p95_ms=5000),
        ),
    )
    started = time.monotonic()
    result = await echo_runner.run(scenario)
    assert result.failures == () and result.passed
    assert time.monotonic() - started < 3.0  # replies end each turn's wait early
    assert result.vtime is None and len(result.transcript_ids) == 1
    assert any("echo: again" in line for line in result.ladder)


@pytest.mark.parametrize("channel", [None, "msteams", "directline"])
async def test_a_conversation_on_a_channel(
    echo_runner: Runner, store: TranscriptStore, channel: str | None
) -> None:
    scenario = replace(chat(HELLO, expect=(ReplyExpect(text=TextMatch(equals="echo: hello")),)),
                       channel=channel)  # fmt: skip
    result = await echo_runner.run(scenario)
    assert result.passed, result.failures
    sent = [e.payload["body"] for e in store.events(result.transcript_ids[0])
            if e.kind == "http.request" and isinstance(e.payload.get("body"), dict)]  # fmt: skip
    to_bot = [b for b in sent if (b.get("from") or {}).get("role") == "user"]
    assert to_bot and {b["channelId"] for b in sent} == {channel or "webchat"}
    teams = [b for b in to_bot if "channelData" in b]
    if channel == "msteams":
        assert len(teams) == len(to_bot)
        assert all(b["conversation"]["conversationType"] == "personal" for b in to_bot)
        assert all(b["from"]["aadObjectId"] for b in to_bot)
    else:
        assert teams == []


@pytest.mark.parametrize(
    "expect",
    [
        pytest.param(ReplyExpect(text=TextMatch(contains="bye")), id="text"),
        pytest.param(ReplyExpect(type="typing"), id="type"),
        pytest.param(ReplyExpect(attachments=1), id="attachments"),
        pytest.param(ReplyExpect(suggested_actions=("Yes",)), id="suggested-actions"),
        pytest.param(ReplyExpect(index=2), id="index"),
    ],
)
async def test_reply_expectations_fail(echo_runner: Runner, expect: ReplyExpect) -> None:
    result = await echo_runner.run(chat(HELLO, expect=(expect,)))
    assert rules(result) == ["EXP-REPLY"]


async def test_a_conversation_opened_by_the_scenario(echo_runner: Runner) -> None:
    # A leading conversationUpdate turn is the opening one: the bot welcomes once, not twice.
    result = await echo_runner.run(
        chat(
            Turn(type="conversationUpdate", wait=2.0),
            expect=(ReplyExpect(text=TextMatch(contains="Welcome"), index=0), ReplyExpect(index=1)),
        )
    )
    assert rules(result) == ["EXP-REPLY"]
    assert result.failures[0].message.endswith("got only 1 reply")


async def test_an_unreachable_messaging_bot(store: TranscriptStore, tmp_path: Path) -> None:
    target = Target(
        messaging_bot=f"http://127.0.0.1:{free_port()}/api/messages",
        app_id=APP_ID,
        certs=tmp_path / "certs",
    )
    async with Runner(target, store) as runner:
        result = await runner.run(chat(HELLO))
    assert result.error is not None and "could not be reached: connection failed" in result.error
    assert rules(result) == ["EXP-RUN"]


async def test_call_and_conversation_scenarios_in_one_run(
    ivr_url: str, store: TranscriptStore, tmp_path: Path
) -> None:
    port = free_port()
    target = Target(
        bot_url=ivr_url,
        messaging_bot=f"http://127.0.0.1:{port}/api/messages",
        app_id=APP_ID,
        app_password=PASSWORD,
        certs=tmp_path / "certs",
    )
    async with Runner(target, store) as runner:
        assert runner.emulator_config is not None
        bot = web.AppRunner(echo.make_app(echo_settings(runner.emulator_config)))
        await bot.setup()
        await web.TCPSite(bot, "127.0.0.1", port).start()
        try:
            results = [
                await runner.run(call(ACCOUNT, *HAPPY)),
                await runner.run(
                    chat(HELLO, expect=(ReplyExpect(text=TextMatch(equals="echo: hello")),))
                ),
            ]
        finally:
            await bot.cleanup()
    assert [r.passed for r in results] == [True, True]


async def test_scenarios_run_concurrently(
    ivr_url: str, store: TranscriptStore, tmp_path: Path
) -> None:
    port = free_port()
    target = Target(
        bot_url=ivr_url,
        messaging_bot=f"http://127.0.0.1:{port}/api/messages",
        app_id=APP_ID,
        app_password=PASSWORD,
        certs=tmp_path / "certs",
    )
    echo_hello = chat(HELLO, expect=(ReplyExpect(text=TextMatch(equals="echo: hello")),))
    async with Runner(target, store, seed=5) as runner:
        assert runner.emulator_config is not None
        bot = web.AppRunner(echo.make_app(echo_settings(runner.emulator_config)))
        await bot.setup()
        await web.TCPSite(bot, "127.0.0.1", port).start()
        try:
            results = await asyncio.gather(
                *(runner.run(call(ACCOUNT, *HAPPY)) for _ in range(3)),
                *(runner.run(echo_hello) for _ in range(3)),
            )
        finally:
            await bot.cleanup()
    assert [r.failures for r in results] == [()] * 6
    ids = [r.transcript_ids[0] for r in results]
    assert len(set(ids)) == 6
    chains = {store.call(i).chain_id for i in ids[:3]}  # type: ignore[union-attr]
    assert len(chains) == 3


# --- conversations through a running botemu ------------------------------------------------------


@pytest.mark.parametrize("shared", [True, False], ids=["shared-database", "own-database"])
async def test_a_conversation_through_a_running_botemu(tmp_path: Path, shared: bool) -> None:
    port, bot_port = free_port(), free_port()
    bot = f"http://127.0.0.1:{bot_port}/api/messages"
    config = ServiceConfig(
        port=port, certs_dir=tmp_path / "certs", bots=(BotRegistration(APP_ID, PASSWORD, bot),)
    )
    served = TranscriptStore(tmp_path / "served.db")
    mine = served if shared else TranscriptStore(tmp_path / "mine.db")
    echo_app = web.AppRunner(echo.make_app(echo_settings(config)))
    await echo_app.setup()
    await web.TCPSite(echo_app, "127.0.0.1", bot_port).start()
    try:
        async with serving(config, served):
            target = Target(
                messaging_bot=bot,
                emulator=config.base_url,  # app id looked up
                control_certs=config.certs_dir,
            )
            async with Runner(target, mine) as runner:
                result = await runner.run(
                    chat(
                        HELLO,
                        Turn(text="bye", wait=2.0),
                        expect=(
                            ReplyExpect(text=TextMatch(contains="Welcome"), index=0),
                            ReplyExpect(text=TextMatch(equals="echo: hello"), index=1),
                            ReplyExpect(text=TextMatch(equals="echo: bye"), index=2),
                            LatencyExpect(p95_ms=5000),
                        ),
                    )
                )
    finally:
        await echo_app.cleanup()
    assert result.failures == ()
    (conversation_id,) = result.transcript_ids
    assert mine.call(conversation_id) is not None
    served.close()
    mine.close()


async def test_a_running_botemu_registers_an_unknown_bot_as_anonymous(tmp_path: Path) -> None:
    config = ServiceConfig(port=free_port(), certs_dir=tmp_path / "certs")
    with TranscriptStore(tmp_path / "t.db") as store:
        async with serving(config, store):
            target = Target(
                messaging_bot="http://127.0.0.1:1/api/messages",
                emulator=config.base_url,
                control_certs=config.certs_dir,
            )
            async with Runner(target, store) as runner:
                result = await runner.run(chat(HELLO))
    assert result.error is not None and "could not be reached" in result.error  # nothing there
    assert [f.rule for f in result.findings] == ["CONN-ANONYMOUS-BOT"]
