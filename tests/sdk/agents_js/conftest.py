"""The fixtures of the Agents SDK's Node quickstart against botemu (``agents.py``): its packages,
and one botemu and one agent per module and kind of bot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sdk.agents_js.agents import HERE, Pair, agent_pair
from tests.sdk.harness import npm_install


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed node_modules of tests/sdk/agents_js (skipped without node and npm)."""
    return npm_install(HERE, "@microsoft/agents-hosting-express", "the Agents SDK's quickstart",
                       tmp_path_factory)  # fmt: skip


@pytest.fixture(scope="module")
def anonymous_agent(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """botemu over http with an anonymous bot, and the quickstart given ``botemu env``'s output."""
    yield from agent_pair(node_modules, tmp_path_factory.mktemp("agents-js-anon"))
