"""The writer's group commits: event rows go in as multi-row INSERTs, in order, all or none;
plain rows (no vtime, no blob) with five parameters; several events appended at once."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from emulator.jsonutil import JSON
from emulator.transcripts.connection import EVENT_ROWS, event_row, insert_event_rows
from emulator.transcripts.queries import (
    COUNT_WORKFLOW,
    EVENTS_PER_INSERT,
    FINISH,
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


# --- several events at once, and plain rows ------------------------------------------------------


def stored_rows(path: Path, call_id: str) -> list[tuple[object, ...]]:
    """Every column of a call's events, as SQLite holds them (types included)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT seq, vtime, typeof(vtime), wall, kind, payload, typeof(payload), has_blob,"
            " typeof(has_blob), blob, typeof(blob) FROM events WHERE call_id = ? ORDER BY seq",
            (call_id,),
        ).fetchall()
    finally:
        conn.close()


def test_insert_events_for_plain_rows_has_five_parameters_a_row() -> None:
    assert insert_events(2, plain=True).count("?") == 10
    assert insert_events(2).count("?") == 16
    assert insert_events(1, plain=True).count("CAST(? AS TEXT)") == 1


@pytest.mark.parametrize("write_behind", [False, True])
def test_append_many_appends_in_order_and_stores_what_append_stores(
    tmp_path: Path, write_behind: bool
) -> None:
    """Plain events (no vtime, no blob) go in with five parameters and literals for the rest:
    what SQLite holds is what eight parameters stored, column for column, type for type."""
    events: list[tuple[str, dict[str, JSON], bytes | None]] = [
        (EventKind.HTTP_REQUEST, {"summary": "a", "n": 1}, None),
        (EventKind.HTTP_RESPONSE, {"summary": "b", "n": 2}, b"\x00\x01"),
        (EventKind.NOTE, {"summary": "c", "n": 3}, None),
    ]
    clock = iter(float(n) for n in range(1000, 2000))
    with TranscriptStore(tmp_path / "many.db", write_behind=write_behind,
                         clock=lambda: next(clock)) as store:  # fmt: skip
        many = store.start(bot="b", call_id="c")
        assert store.append(many, EventKind.NOTE, {"summary": "first"}) == 1
        assert store.append_many(many, events) == [2, 3, 4]
        assert store.append_many(many, events, vtime=1.5) == [5, 6, 7]
        assert store.append_many(many, []) == []
        assert [(e.seq, e.kind, e.payload.get("n"), e.vtime, e.has_blob)
                for e in store.events(many)] == [
            (1, "note", None, None, False),
            (2, "http.request", 1, None, False), (3, "http.response", 2, None, True),
            (4, "note", 3, None, False),
            (5, "http.request", 1, 1.5, False), (6, "http.response", 2, 1.5, True),
            (7, "note", 3, 1.5, False),
        ]  # fmt: skip
        assert store.blob(many, 3) == b"\x00\x01"
    clock = iter(float(n) for n in range(1000, 2000))
    with TranscriptStore(tmp_path / "one.db", clock=lambda: next(clock)) as store:
        one = store.start(bot="b", call_id="c")
        store.append(one, EventKind.NOTE, {"summary": "first"})
        for vtime in (None, 1.5):
            for kind, payload, blob in events:
                store.append(one, kind, payload, vtime=vtime, blob=blob)
    by_one = stored_rows(tmp_path / "one.db", "c")
    assert stored_rows(tmp_path / "many.db", "c") == by_one
    assert by_one[1][1:] == (None, "null", 1002.0, "http.request",
                             '{"summary":"a","n":1}', "text", 0, "integer", None, "null")  # fmt: skip


@pytest.mark.parametrize("write_behind", [False, True])
def test_append_many_is_all_or_none(tmp_path: Path, write_behind: bool) -> None:
    with TranscriptStore(tmp_path / "t.db", write_behind=write_behind) as store:
        call_id = store.start(bot="b")
        bad: list[tuple[str, dict[str, JSON], bytes | None]] = [
            (EventKind.NOTE, {"n": 1}, None),
            (EventKind.NOTE, {"x": object()}, None),  # type: ignore[dict-item]
        ]
        with pytest.raises(TranscriptError, match="payload"):
            store.append_many(call_id, bad)
        assert store.append(call_id, EventKind.NOTE, {"n": 2}) == 1
        assert [e.payload for e in store.events(call_id)] == [{"n": 2}]


def test_a_batch_of_both_shapes_is_committed_whole_and_in_order(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        call_id = store.start(bot="b")
        count = 2 * EVENTS_PER_INSERT + 3
        rows = [event_row(call_id, seq, None if seq % 5 else 0.5, 1.0, "note",
                          f'{{"n":{seq}}}'.encode(), b"x" if seq % 7 == 0 else None)
                for seq in range(1, count + 1)]  # fmt: skip
        assert {len(row) for row in rows} == {5, 8}
        store._commit_rows([(EVENT_ROWS, rows[:10]), event(call_id, count + 1),
                            (EVENT_ROWS, rows[10:])])  # fmt: skip
        inserted = store._conn.execute("SELECT seq FROM events ORDER BY rowid").fetchall()
        assert [seq for (seq,) in inserted] == [*range(1, 11), count + 1, *range(11, count + 1)]
        events = store.events(call_id)
        assert [e.vtime for e in events] == [
            None if seq % 5 else 0.5 for seq in range(1, count + 1)
        ] + [None]
        assert [store.blob(call_id, seq) for seq in (6, 7, 14)] == [None, b"x", b"x"]


def test_a_batch_of_both_shapes_that_fails_commits_none_of_its_rows(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        call_id = store.start(bot="b")
        store.append(call_id, EventKind.NOTE, {"n": 1})
        rows = [event_row(call_id, 2, None, 1.0, "note", b'{"n":2}', None),
                event_row(call_id, 3, 0.5, 1.0, "note", b'{"n":3}', None),
                event_row(call_id, 1, None, 1.0, "note", b'{"n":1}', None)]  # fmt: skip
        with pytest.raises(TranscriptError, match="could not commit events"):
            store._commit_rows([(EVENT_ROWS, rows)])
        with pytest.raises(sqlite3.IntegrityError):
            insert_event_rows(store._conn, rows)
        assert [e.seq for e in store.events(call_id)] == [1]
        assert not store._conn.in_transaction


def test_appends_of_two_stores_to_one_call_interleave_without_a_lost_event(tmp_path: Path) -> None:
    """``append``'s one-statement path takes the seq it remembers; when another store (another
    process) appended to the call meanwhile, the insert fails on the key and the seq is looked
    up again: every event is kept, in the order appended, with no gap."""
    first = TranscriptStore(tmp_path / "t.db")
    second = TranscriptStore(tmp_path / "t.db")
    try:
        call = first.start(bot="b")
        seqs = []
        for n in range(6):
            store = first if n % 2 == 0 else second
            seqs.append(store.append(call, "note", {"n": n}))
        assert seqs == [1, 2, 3, 4, 5, 6]
        assert [e.payload["n"] for e in first.events(call)] == list(range(6))
    finally:
        first.close()
        second.close()


# --- a batch of several calls: grouped into a few statements ---------------------------------


def call_row(call_id: str) -> tuple[object, ...]:
    return (call_id, "call", "b", None, None, None, 1.0, None, None)


def finding_row(call_id: str, seq: int, vtime: float, severity: str) -> tuple[object, ...]:
    payload = f'{{"summary":"x","severity":"{severity}"}}'.encode()
    return event_row(call_id, seq, vtime, 2.0, "finding", payload, None)


def note_row(call_id: str, seq: int, vtime: float) -> tuple[object, ...]:
    blob = b"x" if seq == 2 else None
    return event_row(call_id, seq, vtime, 2.0, "note", b'{"summary":"n"}', blob)


def tables(store: TranscriptStore) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    conn = store._conn
    calls = conn.execute("SELECT * FROM calls ORDER BY id").fetchall()
    events = conn.execute("SELECT call_id, seq, vtime, wall, kind, payload, has_blob, blob"
                          " FROM events ORDER BY call_id, seq").fetchall()  # fmt: skip
    return calls, events


def one_by_one(path: Path, batch: list[tuple[object, Sequence[object]]]) -> TranscriptStore:
    """A store that committed ``batch`` an item at a time, in order: what the batch must leave."""
    store = TranscriptStore(path)
    for item in batch:
        store._commit_rows([item])
    return store


def test_a_batch_of_several_calls_goes_in_a_few_statements_and_leaves_what_its_order_does(
    tmp_path: Path,
) -> None:
    batch: list[tuple[object, Sequence[object]]] = [
        (INSERT_CALL, call_row("c1")),
        (EVENT_ROWS, [note_row("c1", 1, 0.5), finding_row("c1", 2, 1.0, "warning")]),
        (COUNT_WORKFLOW, ("c1",)),
        (INSERT_CALL, call_row("c2")),
        (EVENT_ROWS, [finding_row("c2", 1, 0.25, "error")]),
        (COUNT_WORKFLOW, ("c1",)),
        (EVENT_ROWS, [note_row("c1", 3, 2.0)]),
        (FINISH, (9.0, "bot hung up", True, "c1")),
        (COUNT_WORKFLOW, ("c2",)),
        (EVENT_ROWS, [note_row("c2", 2, 3.5), finding_row("c2", 3, 4.0, "warning")]),
        (FINISH, (9.5, "caller hung up", None, "c2")),
    ]
    with TranscriptStore(tmp_path / "grouped.db") as store:
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        store._commit_rows(batch)
        store._conn.set_trace_callback(None)
        with one_by_one(tmp_path / "in-order.db", batch) as expected:
            assert tables(store) == tables(expected)
        calls, _ = tables(store)
        assert len(calls) == 2
        one, two = store.call("c1"), store.call("c2")
        assert one is not None and (one.workflows, one.errors, one.warnings) == (2, 0, 1)
        assert two is not None and (two.workflows, two.errors, two.warnings) == (1, 1, 1)
    # the five runs of events in one INSERT (five before); the trace gives each statement's
    # SQL with its values, as often as SQLite starts it or one of its triggers
    inserts = {s for s in statements if s.startswith("INSERT INTO events")}
    assert len(inserts) == 1
    assert sum(s.startswith("UPDATE calls SET workflows") for s in statements) == 2  # a call each


def test_an_event_after_its_calls_end_keeps_the_batch_in_its_own_order(tmp_path: Path) -> None:
    """Grouped, the end would be counted after the late event (its vtime, its finding): the
    batch is committed in its order instead."""
    batch: list[tuple[object, Sequence[object]]] = [
        (INSERT_CALL, call_row("c1")),
        (EVENT_ROWS, [finding_row("c1", 1, 1.0, "error")]),
        (FINISH, (9.0, "bot hung up", False, "c1")),
        (EVENT_ROWS, [finding_row("c1", 2, 5.0, "warning")]),
        (COUNT_WORKFLOW, ("c1",)),
    ]
    with TranscriptStore(tmp_path / "t.db") as store:
        store._commit_rows(batch)
        with one_by_one(tmp_path / "in-order.db", batch) as expected:
            assert tables(store) == tables(expected)
        summary = store.call("c1")
        assert summary is not None and summary.vtime == 1.0 and summary.workflows == 1


@pytest.mark.parametrize("calls", [1, 3, 250])
def test_the_starts_counts_and_ends_of_many_calls_leave_what_one_at_a_time_does(
    tmp_path: Path, calls: int
) -> None:
    batch: list[tuple[object, Sequence[object]]] = []
    for n in range(calls):
        call = f"c{n:04}"
        batch += [(INSERT_CALL, call_row(call)),
                  (EVENT_ROWS, [finding_row(call, 1, n / 10, ("error", "warning")[n % 2])])]
        batch += [(COUNT_WORKFLOW, (call,))] * (n % 3)
        batch.append((FINISH, (3.0 + n, f"reason {n}", (True, False, None)[n % 3], call)))
    with TranscriptStore(tmp_path / "grouped.db") as store:
        store._commit_rows(batch)
        with one_by_one(tmp_path / "in-order.db", batch) as expected:
            assert tables(store) == tables(expected)


def test_two_ends_of_one_call_in_a_batch_leave_the_last(tmp_path: Path) -> None:
    batch: list[tuple[object, Sequence[object]]] = [
        (INSERT_CALL, call_row("c1")),
        (INSERT_CALL, call_row("c2")),
        (FINISH, (5.0, "interrupted", None, "c1")),
        (FINISH, (6.0, "caller hung up", False, "c2")),
        (FINISH, (7.0, "bot hung up", True, "c1")),
    ]
    with TranscriptStore(tmp_path / "grouped.db") as store:
        store._commit_rows(batch)
        with one_by_one(tmp_path / "in-order.db", batch) as expected:
            assert tables(store) == tables(expected)
        ended = store.call("c1")
        assert ended is not None and ended.end_reason == "bot hung up"


def test_a_grouped_batch_that_fails_commits_none_of_it(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as store:
        store._commit_rows([(INSERT_CALL, call_row("c1"))])
        batch: list[tuple[object, Sequence[object]]] = [
            (INSERT_CALL, call_row("c2")),
            (EVENT_ROWS, [note_row("c2", 1, 0.5)]),
            (COUNT_WORKFLOW, ("c2",)),
            (INSERT_CALL, call_row("c1")),  # a clash: c1 exists
        ]
        with pytest.raises(TranscriptError, match="could not commit events"):
            store._commit_rows(batch)
        assert store.call("c2") is None
        assert not store._conn.in_transaction


def test_a_statement_takes_no_more_rows_once_it_holds_a_mebibyte() -> None:
    """SQLite copies every value a statement binds: a batch of large events (a writer that fell
    behind, 750 KB prompts) goes in as statements of about a mebibyte, not 128 rows at once."""
    from emulator.transcripts.connection import STATEMENT_BYTES, _plan

    big = b"x" * (300 * 1024)
    rows = [event_row("c", seq, 0.5, 1.0, "note", big, b"b" * 10 if seq == 3 else None)
            for seq in range(1, 11)]  # fmt: skip
    plan = _plan(rows)
    per_statement = [len(params) // 8 for _, params in plan]
    assert per_statement == [4, 4, 2]  # 1.2 MB reach the bound; the last two are what is left
    assert [params[1::8] for _, params in plan] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]
    assert 300 * 1024 * 3 < STATEMENT_BYTES <= 300 * 1024 * 4
    small = [event_row("c", seq, None, 1.0, "note", b"{}", None) for seq in range(1, 301)]
    assert [len(params) // 5 for _, params in _plan(small)] == [128, 128, 44]
