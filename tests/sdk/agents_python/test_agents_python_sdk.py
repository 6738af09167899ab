"""An agent on the Microsoft 365 Agents SDK for Python (1.9.0), written as its quickstart writes it
(tests/sdk/agents_python/quickstart, unchanged), against botemu with nothing but what ``botemu env
agents-python --format json`` prints as its environment (``agents.py``, ``conftest.py``).

Anonymous: botemu over http with a bot registered without an app id; the agent is anonymous only
with ``CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED=true``, which ``botemu env``
prints. Without any connection setting it stops at start; with the setting false it refuses a
request that carries no token. Conversations go through ``botemu chat --send``, the control API
and ``botemu test``; the replies reach botemu's connector.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.sdk.agents_python.agents import (
    GREETING,
    QUICKSTART,
    READY,
    SCENARIO,
    Pair,
    agent_argv,
    agent_env,
)
from tests.sdk.harness import (
    Process,
    botemu_env,
    chat,
    loopback_opener,
    probe_auth,
    run_scenario,
)
from tests.support import free_port

pytestmark = pytest.mark.slow

ANONYMOUS_ALLOWED = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED"


def _app_id(pair: Pair) -> str:
    emulator, _agent = pair
    app_id: str = emulator.config["bots"][0]["app_id"]
    return app_id


def test_botemu_env_gives_the_anonymous_setting_and_the_port(anonymous_agent: Pair) -> None:
    emulator, agent = anonymous_agent
    port = agent.url.split(":")[2].split("/")[0]
    assert botemu_env(emulator, "agents-python") == {ANONYMOUS_ALLOWED: "true", "PORT": port}


def test_the_agent_greets_and_answers_through_botemu_chat(
    anonymous_agent: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, agent = anonymous_agent
    mark = agent.mark()
    code, out = chat(emulator, agent, capsys, monkeypatch)
    assert code == 0, out
    assert GREETING in out and "Hello!" in out, out
    assert not agent.errors(mark), agent.process.since(mark)


def test_the_agent_echoes_through_the_control_api_and_replies_through_the_connector(
    anonymous_agent: Pair,
) -> None:
    emulator, _agent = anonymous_agent
    sent = emulator.send(_app_id(anonymous_agent), "echo me")
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == [GREETING, "you said: echo me"], replies
    posted = [p for p in emulator.request_paths(conversation)
              if p.startswith(f"/v3/conversations/{conversation}/activities")]  # fmt: skip
    assert len(posted) == 2, emulator.request_paths(conversation)


def test_botemu_test_runs_the_quickstart_scenario(anonymous_agent: Pair) -> None:
    done = run_scenario(*anonymous_agent, SCENARIO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_the_anonymous_setting_the_agent_stops_at_start(anonymous_agent: Pair) -> None:
    """No connection setting at all: the SDK has no SERVICE_CONNECTION and the quickstart stops."""
    emulator, _agent = anonymous_agent
    env = botemu_env(emulator, "agents-python")
    del env[ANONYMOUS_ALLOWED]
    env["PORT"] = str(free_port())
    process = Process(agent_argv(), agent_env(env), QUICKSTART)
    try:
        assert process.proc.wait(timeout=60) != 0
        process.wait_for(r"No service connection configuration provided", 5)
    finally:
        process.stop()


def test_with_the_anonymous_setting_false_a_request_without_a_token_is_refused(
    anonymous_agent: Pair,
) -> None:
    emulator, _agent = anonymous_agent
    env = botemu_env(emulator, "agents-python") | {ANONYMOUS_ALLOWED: "false"}
    env["PORT"] = str(free_port())
    process = Process(agent_argv(), agent_env(env), QUICKSTART)
    try:
        process.wait_for(READY, 30)
        activity = {"type": "message", "text": "x", "serviceUrl": emulator.url,
                    "channelId": "webchat", "conversation": {"id": "c"}, "from": {"id": "u"},
                    "recipient": {"id": "a"}}  # fmt: skip
        request = urllib.request.Request(
            f"http://127.0.0.1:{env['PORT']}/api/messages", data=json.dumps(activity).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            loopback_opener().open(request, timeout=10)
        assert refused.value.code == 401
        assert json.loads(refused.value.read()) == {"error": "Authorization header not found"}
    finally:
        process.stop()


def test_probe_auth_says_the_agent_runs_anonymously_and_passes(anonymous_agent: Pair) -> None:
    code, report = probe_auth(*anonymous_agent)
    assert code == 0, report
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [
        ("AUTH-ANONYMOUS", "warning")
    ]
