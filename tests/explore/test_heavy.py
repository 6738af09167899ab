"""A bot heavy to explore (``tests/bots/heavy_flow_bots.py``): a prompt of 750 KB heard in every
call is masked once and kept once, so memory does not grow with the calls; ``max_time`` stops
the crawl and says what it cut off."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.calling.session import CallSettings
from emulator.explore.crawler import Crawler, Graph
from emulator.transcripts.store import TranscriptStore
from tests.support import run_measured, served_bot

ROOT = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def heavy_bot() -> Iterator[str]:
    with served_bot("heavy_flow_bots", "long-prompts") as url:
        yield url.replace("/api/messages", "/api/calls")


def test_max_time_stops_the_crawl_and_says_what_it_cut(heavy_bot: str, tmp_path: Path) -> None:
    async def run() -> Graph:
        with TranscriptStore(tmp_path / "t.db") as store:
            crawler = Crawler(CallSettings(bot_url=heavy_bot, seed=1), store, max_time=0.5)
            return await crawler.crawl()

    graph = asyncio.run(run())
    assert any(b.startswith("max time (0.5 s): ") for b in graph.bounds), graph.bounds


def test_fourteen_calls_hearing_750_kb_prompts_stay_small(heavy_bot: str, tmp_path: Path) -> None:
    """Before: 565 MB and 98 s for these 14 calls (each prompt masked and kept per call)."""
    done, peak = run_measured([sys.executable, "-m", "emulator", "explore", "--bot", heavy_bot,
                               "--max-calls", "14", "--no-token", "--db", str(tmp_path / "e.db")],
                              cwd=ROOT, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]  # the prompt is over WF-PROMPT-VALUE-LENGTH
    assert peak < 700 * MiB, f"peak {peak / MiB:.0f} MiB"
