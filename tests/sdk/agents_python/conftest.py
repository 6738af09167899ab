"""The fixtures of the Agents SDK's Python quickstart against botemu (``agents.py``): one botemu
and one agent per module and kind of bot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sdk.agents_python.agents import Pair, agent_pair


@pytest.fixture(scope="module")
def anonymous_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """botemu over http with an anonymous bot, and the quickstart given ``botemu env``'s output."""
    yield from agent_pair(tmp_path_factory.mktemp("agents-python-anon"))
