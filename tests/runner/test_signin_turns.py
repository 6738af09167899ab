"""A conversation scenario's ``sign_in`` turn (docs/oauth.md): the person signs in as a test user
when the bot asks, or refuses; before the bot asks, at the first card, and after it asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from emulator.runner.common import Target
from emulator.runner.runner import Runner
from emulator.scenario.loader import ScenarioError, load_scenario
from emulator.transcripts.store import TranscriptStore
from tests.bots.oauth_bot import make_bot
from tests.support import free_port

SCENARIOS = {
    "before.yaml": """
name: signed in before the bot asks
messaging:
  - sign_in: {as: ada}
  - say: login
    wait: 3s
expect:
  replies: [{text: {contains: signed in as ada}}]
""",
    "after.yaml": """
name: signed in after the bot asked
messaging:
  - login
  - sign_in: {as: grace}
    wait: 3s
expect:
  replies: [{text: {contains: signed in as grace}}]
""",
    "refused.yaml": """
name: refused
messaging:
  - login
  - sign_in: refuse
  - say: who
    wait: 3s
expect:
  replies: [{text: {equals: nobody}}]
""",
}


@pytest.fixture
async def bot() -> AsyncIterator[str]:
    port = free_port()
    runner = web.AppRunner(make_bot())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/api/messages"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_a_sign_in_turn(bot: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(SCENARIOS[name])
    scenario = load_scenario(path)
    target = Target(messaging_bot=bot, certs=tmp_path / "certs")
    with TranscriptStore(tmp_path / "t.db") as store:
        async with Runner(target, store) as runner:
            result = await runner.run(scenario)
    assert result.passed, [str(f) for f in result.failures]


def test_a_bad_sign_in_turn_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nmessaging:\n  - sign_in: {who: ada}\n")
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert "bad.yaml:3" in str(error.value)
