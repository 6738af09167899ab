"""An agent on the Microsoft 365 Agents SDK for JavaScript (1.8.1), written as its Node quickstart
writes it (tests/sdk/agents_js/index.js), against botemu with nothing but what ``botemu env
agents-js --format json`` prints as its environment (``agents.py``, ``conftest.py``).

Anonymous: botemu over http with a bot registered without an app id; the agent is anonymous when
it has no client id and ``NODE_ENV`` is not production (``botemu env`` prints ``NODE_ENV``).
Conversations go through ``botemu chat --send``, the control API and ``botemu test``; the replies
reach botemu's connector. Skipped when node or npm is missing or the install fails.
"""

from __future__ import annotations

import pytest

from tests.sdk.agents_js.agents import GREETING, SCENARIO, Pair
from tests.sdk.harness import botemu_env, chat, probe_auth, run_scenario

pytestmark = pytest.mark.slow


def test_botemu_env_gives_node_env_and_the_port(anonymous_agent: Pair) -> None:
    emulator, agent = anonymous_agent
    port = agent.url.split(":")[2].split("/")[0]
    assert botemu_env(emulator, "agents-js") == {"NODE_ENV": "development", "PORT": port}


def test_the_agent_greets_and_echoes_through_botemu_chat(
    anonymous_agent: Pair, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, agent = anonymous_agent
    mark = agent.mark()
    code, out = chat(emulator, agent, capsys, monkeypatch)
    assert code == 0, out
    assert GREETING in out and "[1] You said: hello" in out, out
    assert not agent.errors(mark), agent.process.since(mark)


def test_the_agent_echoes_through_the_control_api_and_replies_through_the_connector(
    anonymous_agent: Pair,
) -> None:
    emulator, _agent = anonymous_agent
    app_id = emulator.config["bots"][0]["app_id"]
    sent = emulator.send(app_id, "echo me")
    conversation = sent["conversation_id"]
    replies = emulator.replies(conversation, 2)
    assert [r.get("text") for r in replies] == [GREETING, "[1] You said: echo me"], replies
    posted = [p for p in emulator.request_paths(conversation)
              if p.startswith(f"/v3/conversations/{conversation}/activities")]  # fmt: skip
    assert len(posted) == 2, emulator.request_paths(conversation)


def test_botemu_test_runs_the_quickstart_scenario(anonymous_agent: Pair) -> None:
    done = run_scenario(*anonymous_agent, SCENARIO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_probe_auth_says_the_agent_runs_anonymously_and_passes(anonymous_agent: Pair) -> None:
    code, report = probe_auth(*anonymous_agent)
    assert code == 0, report
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [
        ("AUTH-ANONYMOUS", "warning")
    ]
