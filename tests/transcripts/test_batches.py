"""The writer's group commits: event rows go in as multi-row INSERTs, in order, all or none."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from emulator.transcripts.queries import (
    EVENTS_PER_INSERT,
    INSERT_CALL,
    INSERT_EVENT,
    insert_events,
)
from emulator.transcripts.store import EventKind, TranscriptError, TranscriptStore


def event(call_id: str, seq: int, blob: bytes | None = None) -> tuple[str, tuple[object, ...]]:
    payload = f'{{"n":{seq}}}'.encode()
    return INSERT_EVENT, (call_id, seq, None, 1.0, "note", payload, blob is not None, blob)


def rows(store: TranscriptStore, call_id: str) -> list[tuple[int, str, bytes | None]]:
    return [(e.seq, str(e.payload["n"]), store.blob(call_id, e.seq)) for e in store.events(call_id)]


def test_insert_events_is_insert_event_for_one_row_and_refuses_what_it_cannot_hold() -> None:
    assert insert_events(1) == INSERT_EVENT
    assert insert_events(3).count("CAST(? AS TEXT)") == 3
    for count in (0, EVENTS_PER_INSERT + 1):
        with pytest.raises(ValueError):
            insert_events(count)


@pytest.mark.parametrize("count", [1, 2, EVENTS_PER_INSERT, EVENTS_PER_INSERT + 1, 300])
def test_a_batch_of_any_size_is_committed_whole_and_in_order(tmp_path: Path, count: int) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        call_id = store.start(bot="b")
        batch = [event(call_id, seq, b"\x00\xff" if seq % 7 == 0 else None)
                 for seq in range(1, count + 1)]  # fmt: skip
        store._commit_rows(batch)
        assert rows(store, call_id) == [
            (seq, str(seq), b"\x00\xff" if seq % 7 == 0 else None) for seq in range(1, count + 1)
        ]
        assert [e.kind for e in store.events(call_id)] == ["note"] * count


def test_other_statements_keep_their_place_among_the_event_rows(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        new = ("c2", "call", "b", None, None, None, 1.0, None, None)
        batch: list[tuple[str, Sequence[object]]] = [
            (INSERT_CALL, new),
            event("c2", 1),
            event("c2", 2),
            ("UPDATE calls SET workflows = workflows + 1 WHERE id = ?", ("c2",)),
            event("c2", 3),
        ]
        store._commit_rows(batch)
        assert [seq for seq, _, _ in rows(store, "c2")] == [1, 2, 3]
        summary = store.call("c2")
        assert summary is not None and summary.workflows == 1


@pytest.mark.parametrize("count", [3, EVENTS_PER_INSERT + 5])
def test_a_batch_that_fails_commits_none_of_its_rows(tmp_path: Path, count: int) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        call_id = store.start(bot="b")
        store.append(call_id, EventKind.NOTE, {"n": 1})
        batch = [event(call_id, seq) for seq in range(2, count + 1)] + [event(call_id, 1)]
        with pytest.raises(TranscriptError, match="could not commit events") as caught:
            store._commit_rows(batch)
        assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
        assert [seq for seq, _, _ in rows(store, call_id)] == [1]
        assert not store._conn.in_transaction


def test_write_behind_commits_a_long_queue_in_order(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path, write_behind=True) as store:
        call_id = store.start(bot="b")
        for n in range(3 * EVENTS_PER_INSERT + 1):
            store.append(call_id, EventKind.NOTE, {"n": n}, blob=b"b" if n == 5 else None)
    with TranscriptStore(path) as reader:
        events = reader.events(call_id)
        assert [e.payload["n"] for e in events] == list(range(3 * EVENTS_PER_INSERT + 1))
        assert [e.seq for e in events] == list(range(1, 3 * EVENTS_PER_INSERT + 2))
        assert reader.blob(call_id, 6) == b"b"
