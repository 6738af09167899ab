"""Tests of emulator/pytest_plugin.py.

Most run the plugin the way a bot project does: a ``pytester`` session in a subprocess, with the
plugin loaded by its ``pytest11`` entry point and warnings as errors. One of those runs the
example of docs/pytest-plugin.md exactly as it is written, against the reference IVR bot. The
rest use the plugin's own fixtures in this session (it is installed here too).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import socket
from pathlib import Path

import pytest

from emulator.calling.caller import CallerScript, Listen, Press
from emulator.config import ServiceConfig
from emulator.errors import CallerScriptError
from emulator.pytest_plugin import Botemu, BotemuServer, Message, caller_script, message_of

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
ECHO_BOT = ROOT / "examples" / "echo_bot.py"
INI = """
[pytest]
asyncio_default_fixture_loop_scope = function
{more}
"""


def doc_example() -> str:
    text = (ROOT / "docs" / "pytest-plugin.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(# test_ivr\.py.*?)```", text, re.DOTALL)
    assert found is not None, "docs/pytest-plugin.md lost its test_ivr.py example"
    return found.group(1)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # "-p no:benchmark": pytest-benchmark, where it is installed, turns its xdist warning into an
    # error under "-W error" in the inner run.
    return pytester.runpytest_subprocess(
        "-W", "error", "-p", "no:cacheprovider", "-p", "no:benchmark", *args
    )


@pytest.mark.slow
def test_the_documented_example_runs_against_the_reference_ivr_bot(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI.format(more=""))  # pytest-asyncio in its default, strict mode
    (pytester.path / "examples").mkdir()
    for name in ("ivr_bot.py", "bot_auth.py"):
        shutil.copy(ROOT / "examples" / name, pytester.path / "examples" / name)
    shutil.copytree(ROOT / "scenarios" / "examples", pytester.path / "scenarios" / "examples")
    pytester.makepyfile(test_ivr=doc_example())
    result = run(pytester)
    result.assert_outcomes(passed=5)


CHAT_CONFTEST = f"""
import importlib.util
import sys

import pytest
from aiohttp import web

from emulator.config import Profile, ServiceConfig

APP_ID = "11111111-2222-3333-4444-555555555555"
PASSWORD = "s3cret"


def load_echo_bot():
    spec = importlib.util.spec_from_file_location("echo_bot", {str(ECHO_BOT)!r})
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def botemu_config(tmp_path_factory):
    return ServiceConfig(port=0, profile=Profile.V30, certs_dir=tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="session")
def botemu_store_path(tmp_path_factory):
    return tmp_path_factory.mktemp("kept") / "transcripts.db"


@pytest.fixture
async def echo_url(botemu):
    echo = load_echo_bot()
    env = botemu.env | {{"BOT_APP_ID": APP_ID, "BOT_APP_PASSWORD": PASSWORD}}
    settings, _, _ = echo.parse_command_line([], env)
    runner = web.AppRunner(echo.make_app(settings))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{{port}}/api/messages"
    await runner.cleanup()
"""

CHAT_TESTS = """
import aiohttp

from conftest import APP_ID, PASSWORD

SEEN = []


async def test_chat_with_the_echo_bot(botemu, echo_url):
    messages = await botemu.chat(echo_url, "hello", app_id=APP_ID, app_password=PASSWORD)
    assert [(m.type, m.text) for m in messages] == [
        ("message", "Welcome, User! Say something and I will echo it."),
        ("message", "echo: hello"),
    ]
    again = await botemu.chat(echo_url, "again")
    assert [m.text for m in again] == ["echo: again"]
    assert again[0].conversation_id == messages[0].conversation_id
    fresh = await botemu.chat(echo_url, "anew", new_conversation=True)
    assert fresh[-1].text == "echo: anew"
    assert fresh[0].conversation_id != messages[0].conversation_id
    SEEN.append(messages[0].conversation_id)


async def test_each_test_starts_from_a_reset_emulator(botemu):
    url = f"{botemu.url}/_botemu/conversations/{SEEN[0]}/activities"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 404


async def test_a_conversation_scenario_through_the_session_emulator(botemu, echo_url, tmp_path):
    scenario = tmp_path / "echo.yaml"
    scenario.write_text(
        "name: echo\\n"
        "messaging: [hello]\\n"
        "expect:\\n"
        "  replies: [{text: 'echo: hello'}]\\n"
    )
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("name: wrong\\nmessaging: [hello]\\nexpect:\\n  replies: [{text: bonjour}]\\n")
    results = await botemu.run_scenario(
        tmp_path, messaging_bot=echo_url, app_id=APP_ID, app_password=PASSWORD
    )
    assert [(r.scenario.id, r.passed) for r in results] == [("echo", True), ("wrong", False)]
    explained = botemu.explain(results)
    assert explained.startswith("FAIL  wrong")
    assert "[EXP-REPLY]" in explained and "echo: hello" in explained


def test_the_overridden_config_and_store_are_used(botemu, botemu_server, botemu_store_path):
    assert botemu.server is botemu_server
    port = botemu_server.config.port
    assert port != 0 and botemu.url == f"http://127.0.0.1:{port}"
    assert botemu.placeholders.token_url.startswith(f"http://127.0.0.1:{port}/_identity/common/")
    assert botemu.env["BOTEMU_PROFILE"] == "v3.0"
    assert botemu.store.path == botemu_store_path
"""


@pytest.mark.slow
def test_chat_reset_and_overridden_config_fixtures_in_auto_mode(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI.format(more="asyncio_mode = auto"))
    pytester.makeconftest(CHAT_CONFTEST)
    pytester.makepyfile(test_chat=CHAT_TESTS)
    result = run(pytester, "-p", "no:aiohttp")
    result.assert_outcomes(passed=4)


@pytest.mark.slow
def test_fixtures_work_without_any_asyncio_plugin(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        test_sync="""
        import asyncio

        from emulator.calling.delivery import RetryPolicy


        def test_a_plain_test_can_place_a_call(botemu):
            nobody = "http://127.0.0.1:9/api/calls"  # the discard port: nothing listens
            call = asyncio.run(botemu.call(nobody, "hangup", retry=RetryPolicy(attempts=1, timeout=2)))
            assert call.ended_by == "platform"
            assert call.end_reason.value == "platform hung up: callback delivery failed"
            assert call.errors and call.prompts == () and call.outcomes == ()
            assert call.transcript[0].kind == "call.start"
        """
    )
    result = run(pytester, "-p", "no:asyncio", "-p", "no:aiohttp")
    result.assert_outcomes(passed=1)


def test_the_fixtures_are_listed_with_their_scopes(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI.format(more=""))
    result = pytester.runpytest_inprocess("--fixtures", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert "botemu-0.1.0" in result.stdout.str()  # loaded through the pytest11 entry point
    result.stdout.re_match_lines_random(
        [
            r"botemu_config \[session scope\] -- .*emulator/pytest_plugin.py:\d+",
            r"botemu_store_path \[session scope\] -- .*",
            r"botemu_server \[session scope\] -- .*",
            r"botemu -- .*emulator/pytest_plugin.py:\d+",
        ]
    )


# --- the plugin's parts, in this session ----------------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "steps"),
    [
        pytest.param("listen; press 1", (Listen(), Press("1")), id="inline"),
        pytest.param(["listen", "press 1"], (Listen(), Press("1")), id="list-of-inline"),
        pytest.param(["listen", {"press": "1"}], (Listen(), Press("1")), id="scenario-items"),
        pytest.param(CallerScript.of(Listen()), (Listen(),), id="script"),
        pytest.param((), (), id="silent"),
    ],
)
def test_caller_forms(caller: object, steps: tuple[object, ...]) -> None:
    assert caller_script(caller).steps == steps  # type: ignore[arg-type]


def test_a_bad_caller_step_names_itself() -> None:
    with pytest.raises(CallerScriptError, match=r"caller\[1\]"):
        caller_script(["listen", {"press": "Z"}])


async def test_call_refuses_unknown_options(botemu: Botemu) -> None:
    with pytest.raises(TypeError, match="unknown call option 'colour'"):
        await botemu.call("http://127.0.0.1:9/api/calls", colour="red")


async def test_chat_with_an_unknown_endpoint_registers_an_anonymous_bot(botemu: Botemu) -> None:
    with pytest.raises(ValueError, match="app_password needs app_id"):
        await botemu.chat("http://127.0.0.1:9/api", "hello", app_password="pw")
    assert await botemu.chat("http://127.0.0.1:9/api", "hello", wait=0.3) == []  # unreachable
    assert botemu.server.config.live["anonymous-bot"].endpoint == "http://127.0.0.1:9/api"


def test_the_server_reports_that_it_cannot_listen(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = BotemuServer(ServiceConfig(port=port, certs_dir=tmp_path / "k"), tmp_path / "t.db")
        with pytest.raises(OSError):
            server.start()
    server.stop()  # nothing to stop: harmless


def test_message_of_lifts_the_typed_fields() -> None:
    activity = {
        "type": "message",
        "text": "pick one",
        "from": {"id": "bot", "role": "bot"},
        "attachments": [{"contentType": "image/png", "contentUrl": "http://x/a.png"}, "junk"],
        "suggestedActions": {"actions": [{"title": "Yes", "value": "y"}, {"value": "no"}]},
    }
    message = message_of(activity, "conv-1")  # type: ignore[arg-type]
    assert message == Message(
        type="message",
        text="pick one",
        attachments=(message.attachments[0],),
        suggested_actions=("Yes", "no"),
        conversation_id="conv-1",
        activity=activity,  # type: ignore[arg-type]
    )
    assert message.attachments[0].content_type == "image/png"
    assert message.attachments[0].content_url == "http://x/a.png"


async def test_the_session_server_is_shared_and_reset(
    botemu: Botemu, botemu_server: BotemuServer
) -> None:
    assert botemu.server is botemu_server
    assert botemu.url == botemu_server.url != "http://127.0.0.1:0"
    await asyncio.sleep(0)
    botemu_server.reset()  # idempotent


async def test_run_scenario_skips_scenarios_whose_bot_is_missing(
    botemu: Botemu, tmp_path: Path
) -> None:
    """With a calling bot only, a conversation is skipped with the reason (and passes nothing
    off as run: ``skipped`` is set, ``explain`` leaves it out) while the call runs; a file of
    which nothing can run raises ``ConfigError``."""
    from emulator.runner.suite import ConfigError
    from emulator.scenario.reports import SkippedResult
    from tests.support import free_port

    (tmp_path / "a-call.yaml").write_text("name: a call\ncaller: [hangup]\n")
    (tmp_path / "b-chat.yaml").write_text("name: a chat\nmessaging: [hello]\n")
    nobody = f"http://127.0.0.1:{free_port()}/api/calls"  # refuses: the call runs and errors
    results = await botemu.run_scenario(tmp_path, bot=nobody, timeout=2)
    assert [r.scenario.id for r in results] == ["a call", "a chat"]
    call, chat = results
    assert not isinstance(call, SkippedResult) and call.error is not None
    assert isinstance(chat, SkippedResult) and chat.passed and chat.error is None
    assert chat.skipped == "needs a messaging bot: pass messaging_bot=URL to run_scenario"
    explained = botemu.explain(results)
    assert "a call" in explained and "a chat" not in explained
    with pytest.raises(ConfigError, match="nothing to run: every scenario needs a messaging bot"):
        await botemu.run_scenario(tmp_path / "b-chat.yaml", bot=nobody)
