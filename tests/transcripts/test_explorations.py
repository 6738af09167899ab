"""Explorations in the transcript store (``emulator/transcripts/explorations.py``): a real crawl of
the reference IVR bot saved and read back, the list, prefixes, the size bound, refusals, and the
migration of schema-1 files (as botemu wrote them before explorations) to schema 2."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from emulator.calling.session import CallSettings
from emulator.explore.crawler import Crawler
from emulator.explore.report import to_json
from emulator.explore.verdicts import judge
from emulator.transcripts.store import (
    MAX_EXPLORATION_BYTES,
    SCHEMA_VERSION,
    EventKind,
    ExplorationSummary,
    TranscriptError,
    TranscriptStore,
)
from tests.support import ivr_bot

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """Wall clock for tests: 1000.0, 1001.0, ... one step per reading."""

    def __init__(self) -> None:
        self.now = 999.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The reference IVR bot, crawled for real (menus judged long above 2 choices, so that the
    document has findings); the document and the store its calls went to."""
    db = tmp_path_factory.mktemp("explored") / "t.db"

    async def run() -> dict[str, Any]:
        with TranscriptStore(db, write_behind=True) as store:
            graph = await Crawler(CallSettings(bot_url=url, seed=1), store).crawl()
        return to_json(graph, url, judge(graph, max_choices=2))

    with ivr_bot() as url:
        document = asyncio.run(run())
    return document, db


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    with TranscriptStore(tmp_path / "t.db", clock=Clock()) as s:
        yield s


def small(bot: str = "http://bot/api/calls", **more: Any) -> dict[str, Any]:
    return {"version": 1, "bot": bot, "calls": 1, "bounds": [], "states": [],
            "edges": [], "findings": [], **more}  # fmt: skip


# --- saving and reading -------------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_exploration_is_kept_whole_with_its_counts(
    explored: tuple[dict[str, Any], Path],
) -> None:
    document, db = explored
    with TranscriptStore(db, write_behind=True) as store:
        saved = store.save_exploration(document, started=1234.5)
        summary = store.exploration_summary(saved)
        assert store.exploration(saved) == document
        calls = {c.id for c in store.calls(limit=500)}
    assert len(saved) == 32 and all(c in "0123456789abcdef" for c in saved)
    long_menus = [f for f in document["findings"] if f["rule"] == "EXPLORE-LONG-MENU"]
    assert len(long_menus) == 2  # the two menus, judged long above 2 choices
    assert all(f["severity"] != "error" for f in document["findings"])
    assert len(document["states"]) >= 5 and document["calls"] >= len(document["edges"]) >= 31
    assert summary == ExplorationSummary(
        id=saved, started=1234.5, bot=document["bot"], version=2,
        states=len(document["states"]), edges=len(document["edges"]),
        findings=len(document["findings"]), errors=0, warnings=2, calls=document["calls"],
        size=len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()),
    )  # fmt: skip
    assert {e["call_id"] for e in document["edges"]} <= calls  # each edge's call is in the store
    with TranscriptStore(db) as again:  # another open, another process's view of the file
        assert again.exploration(saved) == document


def test_the_list_is_newest_first_one_page_at_a_time(store: TranscriptStore) -> None:
    first = store.save_exploration(small("a"))  # started 1000.0 by the store's clock
    second = store.save_exploration(small("b"), started=5000.0)
    third = store.save_exploration(small("c"))  # 1001.0
    assert [e.id for e in store.explorations()] == [second, third, first]
    assert [e.id for e in store.explorations(limit=1, offset=1)] == [third]
    assert store.explorations(limit=0) == []
    assert store.count_explorations() == 3
    assert store.exploration_summary(first) == store.explorations()[2]
    assert store.explorations()[2].started == 1000.0
    with pytest.raises(TranscriptError, match="limit and offset"):
        store.explorations(limit=-1)


def test_an_id_prefix_finds_one_exploration_and_an_ambiguous_one_says_so(
    store: TranscriptStore,
) -> None:
    ids = [store.save_exploration(small()) for _ in range(40)]
    one = ids[0]
    assert store.exploration(one[:12]) == small()
    summary = store.exploration_summary(one[:12])
    assert summary is not None and summary.id == one
    assert store.exploration("f" * 32 + "x") is None and store.exploration("") is None
    assert store.exploration_summary("nope") is None
    with pytest.raises(TranscriptError, match="ambiguous"):
        store.exploration(_shared_prefix(ids))
    with pytest.raises(TranscriptError, match="ambiguous"):
        store.exploration_summary(_shared_prefix(ids))


def _shared_prefix(ids: list[str]) -> str:
    """A one-character prefix that at least two of ``ids`` share (40 ids, 16 first digits)."""
    firsts = [i[0] for i in ids]
    return next(c for c in firsts if firsts.count(c) > 1)


def test_unknown_members_and_a_later_format_are_kept_exactly(store: TranscriptStore) -> None:
    later = small(version=2, layout={"hint": "lr"}, findings=[
        {"rule": "EXPLORE-DEAD-END", "severity": "error", "where": "abc", "message": "m",
         "new": [1, 2.5, None, True]},
    ], text="<img src=x onerror=alert(1)> \u00e9\U0001f600")  # fmt: skip
    saved = store.save_exploration(later)
    assert store.exploration(saved) == later
    summary = store.exploration_summary(saved)
    assert summary is not None and (summary.version, summary.errors, summary.findings) == (2, 1, 1)
    no_counts = small()
    del no_counts["calls"], no_counts["version"], no_counts["states"]
    summary = store.exploration_summary(store.save_exploration(no_counts))
    assert summary is not None and (summary.calls, summary.version, summary.states) == (
        None,
        None,
        0,
    )


# --- refusals -----------------------------------------------------------------------------------


def test_a_document_over_the_bound_is_refused_with_its_size_and_not_kept(
    store: TranscriptStore,
) -> None:
    prompt = "x" * 1000
    states = [
        {"id": f"{i:012x}", "prompts": [prompt]} for i in range(MAX_EXPLORATION_BYTES // 1000)
    ]
    with pytest.raises(TranscriptError) as info:
        store.save_exploration(small(states=states))
    message = str(info.value)
    assert "\n" not in message
    assert "more than the store keeps" in message and "8 MiB" in message
    assert f"{MAX_EXPLORATION_BYTES:,}" in message
    assert store.count_explorations() == 0
    fits = small(states=states[: len(states) // 2])
    assert store.exploration(store.save_exploration(fits)) == fits  # well under: kept


@pytest.mark.parametrize(
    ("document", "why"),
    [
        pytest.param(["not", "an", "object"], "a JSON object", id="a-list"),
        pytest.param({"states": []}, "names its bot", id="no-bot"),
        pytest.param({"bot": 7}, "names its bot", id="bot-not-a-string"),
        pytest.param({"bot": "b", "edges": {}}, "'edges' is a list", id="edges-not-a-list"),
        pytest.param({"bot": "b", "findings": "none"}, "'findings' is a list", id="findings"),
        pytest.param({"bot": "b", "extra": b"bytes"}, "not JSON", id="bytes"),
        pytest.param({"bot": "b", "extra": {1, 2}}, "not JSON", id="a-set"),
    ],
)
def test_what_is_not_an_exploration_is_refused(
    store: TranscriptStore, document: Any, why: str
) -> None:
    with pytest.raises(TranscriptError, match=why):
        store.save_exploration(document)
    assert store.count_explorations() == 0


def test_a_closed_store_refuses(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path / "t.db")
    store.close()
    with pytest.raises(TranscriptError, match="closed"):
        store.save_exploration(small())
    with pytest.raises(TranscriptError, match="closed"):
        store.explorations()


# --- beside the calls: write-behind, threads, other connections ----------------------------------


def test_saving_with_write_behind_commits_the_queued_events_first_and_is_seen_by_others(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path, write_behind=True) as store:
        call = store.start(bot="http://bot/api/calls")
        store.append(call, EventKind.NOTE, {"summary": "queued"})
        saved = store.save_exploration(small(edges=[{"call_id": call}]))
        other = sqlite3.connect(path)  # no flush asked: the save committed, and the call first
        try:
            assert other.execute("SELECT count(*) FROM events").fetchone() == (1,)
            assert other.execute("SELECT id FROM explorations").fetchall() == [(saved,)]
            assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        finally:
            other.close()


def test_threads_save_at_once_and_every_exploration_is_kept(tmp_path: Path) -> None:
    saved: list[str] = []
    lock = threading.Lock()
    with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:

        def work(n: int) -> None:
            for i in range(10):
                new = store.save_exploration(small(f"bot-{n}-{i}"))
                with lock:
                    saved.append(new)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert sorted(e.id for e in store.explorations(limit=100)) == sorted(saved)
        assert len(set(saved)) == 40


# --- migration ------------------------------------------------------------------------------------

SCHEMA_1 = """
CREATE TABLE calls (id TEXT PRIMARY KEY, kind TEXT NOT NULL, bot TEXT NOT NULL, caller TEXT,
    chain_id TEXT, scenario TEXT, started REAL NOT NULL, ended REAL, vtime REAL, end_reason TEXT,
    workflows INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0, passed INTEGER, last_seq INTEGER NOT NULL DEFAULT 0,
    writer_pid INTEGER, writer_start TEXT);
CREATE INDEX calls_by_started ON calls (started);
CREATE INDEX calls_by_reason ON calls (end_reason, started);
CREATE INDEX calls_by_kind ON calls (kind, started);
CREATE INDEX calls_with_findings ON calls (started) WHERE errors + warnings > 0;
CREATE INDEX calls_running ON calls (started) WHERE ended IS NULL;
CREATE TABLE events (call_id TEXT NOT NULL, seq INTEGER NOT NULL, vtime REAL, wall REAL NOT NULL,
    kind TEXT NOT NULL, payload TEXT NOT NULL, has_blob INTEGER NOT NULL DEFAULT 0, blob BLOB,
    PRIMARY KEY (call_id, seq));
CREATE TRIGGER findings_count AFTER INSERT ON events WHEN NEW.kind = 'finding' BEGIN
    UPDATE calls SET
        errors = errors + (json_extract(NEW.payload, '$.severity') = 'error'),
        warnings = warnings + (json_extract(NEW.payload, '$.severity') = 'warning')
    WHERE id = NEW.call_id;
END;
INSERT INTO calls (id, kind, bot, started, ended, end_reason, errors)
    VALUES ('call-of-schema-1', 'call', 'http://bot/api/calls', 1000.0, 1001.0, 'bot hung up', 0);
INSERT INTO events (call_id, seq, vtime, wall, kind, payload) VALUES
    ('call-of-schema-1', 1, 0.0, 1000.0, 'call.start', '{"summary":"start"}'),
    ('call-of-schema-1', 2, 0.5, 1000.5, 'finding', '{"rule":"R","severity":"error"}');
PRAGMA application_id=1651471461;
PRAGMA user_version=1;
PRAGMA journal_mode=WAL;
"""
"""A file as the botemu of schema 1 wrote it (the one before explorations), with a call."""


def _schema_1_file(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_1)
    conn.close()


def test_a_schema_1_file_is_migrated_to_2_and_keeps_its_calls(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    _schema_1_file(path)
    assert SCHEMA_VERSION == 2
    with TranscriptStore(path) as store:
        old = store.call("call-of-schema-1")
        assert old is not None and (old.end_reason, old.errors) == ("bot hung up", 1)
        assert [e.seq for e in store.events("call-of-schema-1")] == [1, 2]
        assert store.explorations() == []
        saved = store.save_exploration(small())
        new = store.start(bot="http://bot/api/calls")  # the trigger still counts findings
        store.append(new, EventKind.FINDING, {"rule": "R", "severity": "warning"})
        assert store.calls(text=new)[0].warnings == 1
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (2,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "explorations_by_started" in indexes and "calls_running" in indexes
    finally:
        conn.close()
    with TranscriptStore(path) as again:  # opened again: nothing more to do, nothing lost
        assert again.exploration(saved) == small()


OPENER = """
import sys, time
from pathlib import Path
from emulator.transcripts.store import TranscriptStore
start = float(sys.argv[2])
while time.time() < start:
    pass
with TranscriptStore(Path(sys.argv[1]), write_behind=True) as store:
    call = store.start(bot="http://bot/api/calls")
    store.append(call, "note", {"summary": "opened"})
    store.save_exploration({"bot": "http://bot/api/calls", "edges": [{"call_id": call}]})
print("ok")
"""


@pytest.mark.slow
def test_processes_that_open_a_schema_1_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    for attempt in range(3):  # the race is a matter of timing: try it a few times
        path = tmp_path / f"v1-{attempt}.db"
        _schema_1_file(path)
        start = time.time() + 1.0  # every process past its imports, then all at once
        openers = [
            subprocess.Popen([sys.executable, "-c", OPENER, str(path), str(start)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(4)
        ]  # fmt: skip
        for opener in openers:
            out, err = opener.communicate(timeout=60)
            assert opener.returncode == 0 and out.strip() == "ok", err[-2000:]
        with TranscriptStore(path) as store:
            assert store.count_explorations() == 4
            assert len(store.calls()) == 5  # the schema-1 call, and one per process


def test_a_schema_2_file_opened_read_only_needs_no_write(tmp_path: Path) -> None:
    """A reader of an up-to-date file takes no write lock: another connection holding the write
    lock does not keep it from opening and reading the explorations."""
    path = tmp_path / "t.db"
    with TranscriptStore(path) as store:
        saved = store.save_exploration(small())
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with TranscriptStore(path) as reader:
            assert [e.id for e in reader.explorations()] == [saved]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_migrated_copy_and_a_new_file_have_the_same_schema(tmp_path: Path) -> None:
    migrated, fresh = tmp_path / "v1.db", tmp_path / "new.db"
    _schema_1_file(migrated)
    TranscriptStore(migrated).close()
    TranscriptStore(fresh).close()

    def tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
        conn = sqlite3.connect(path)
        try:
            names = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            return {n: conn.execute(f"PRAGMA table_info({n})").fetchall() for n in sorted(names)}
        finally:
            conn.close()

    assert tables(migrated) == tables(fresh)
    assert "explorations" in tables(fresh)


def test_the_document_is_a_copy_not_the_callers_object(store: TranscriptStore) -> None:
    document = small(states=[{"id": "a", "prompts": ["hello"]}])
    kept = copy.deepcopy(document)
    saved = store.save_exploration(document)
    document["states"][0]["prompts"].append("changed later")
    assert store.exploration(saved) == kept
