"""Write-behind: appends committed on a writer thread, in order, and visible to every read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from emulator.transcripts.store import EventKind, TranscriptError, TranscriptStore
from emulator.transcripts.writer import WriteBehind


def test_reads_see_every_append_in_order(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db", write_behind=True) as store:
        call_id = store.start(bot="b")
        seqs = [store.append(call_id, EventKind.NOTE, {"n": i}) for i in range(500)]
        assert seqs == list(range(1, 501))
        events = store.events(call_id)
        assert [e.payload["n"] for e in events] == list(range(500))
        assert store.call(call_id) is not None


def test_flush_commits_for_other_readers(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path, write_behind=True) as store:
        call_id = store.start(bot="b")
        for i in range(50):
            store.append(call_id, EventKind.NOTE, {"n": i}, blob=b"x" if i % 5 == 0 else None)
        store.flush()
        with TranscriptStore(path) as other:
            assert len(other.events(call_id)) == 50
            assert other.blob(call_id, 1) == b"x"


def test_close_commits_what_is_queued(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = TranscriptStore(path, write_behind=True)
    call_id = store.start(bot="b")
    for i in range(100):
        store.append(call_id, EventKind.NOTE, {"n": i})
    store.finish(call_id, reason="done")
    store.close()
    with TranscriptStore(path) as again:
        assert len(again.events(call_id)) == 100
        summary = again.call(call_id)
        assert summary is not None and summary.end_reason == "done"


def test_a_failed_commit_is_reported_not_swallowed(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = TranscriptStore(path, write_behind=True)
    try:
        call_id = store.start(bot="b")
        store.flush()
        saboteur = sqlite3.connect(path)
        saboteur.execute("DROP TABLE events")
        saboteur.commit()
        saboteur.close()
        store.append(call_id, EventKind.NOTE, {"n": 1})
        with pytest.raises(TranscriptError, match="could not commit events"):
            store.flush()
    finally:
        store._writer = None  # the database is broken on purpose; close only the connection
        store.close()


def test_writer_thread_commits_in_submission_order() -> None:
    committed: list[int] = []
    writer = WriteBehind(lambda rows: committed.extend(r[0] for r in rows), name="test")
    for i in range(1000):
        writer.submit((i,))
    writer.flush()
    assert committed == list(range(1000))
    writer.close()


def test_writer_error_surfaces_once() -> None:
    def fail(rows: object) -> None:
        raise TranscriptError("disk full")

    writer = WriteBehind(fail, name="test")
    writer.submit((1,))
    with pytest.raises(TranscriptError, match="disk full"):
        writer.flush()
    writer.flush()  # reported once, then the writer carries on
    writer.close()


def test_no_row_is_lost_or_reordered_while_the_writer_commits() -> None:
    """Rows submitted from several threads while commits run (submit takes no lock then):
    every row is committed once, each thread's in its order, and flush waits for all."""
    import threading
    import time

    committed: list[tuple[int, int]] = []

    def commit(rows: object) -> None:
        time.sleep(0.0005)  # the GIL is released here, as SQLite releases it
        committed.extend(rows)  # type: ignore[call-overload]

    writer = WriteBehind(commit, name="test")

    def submit(thread: int) -> None:
        for i in range(3000):
            writer.submit((thread, i))
            if i % 500 == 0:
                time.sleep(0.001)  # let the writer go idle now and then

    threads = [threading.Thread(target=submit, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.flush()
    assert len(committed) == 4 * 3000
    for thread in range(4):
        assert [i for t, i in committed if t == thread] == list(range(3000))
    writer.submit((9, 9))  # after an idle spell, a single row still wakes the writer
    writer.flush()
    assert committed[-1] == (9, 9)
    writer.close()


def test_a_row_is_committed_within_the_gather_time_without_a_flush() -> None:
    import time

    committed: list[int] = []
    writer = WriteBehind(lambda rows: committed.extend(r[0] for r in rows), name="test")
    time.sleep(0.01)  # the writer has gone idle
    writer.submit((1,))
    deadline = time.monotonic() + 5.0
    while not committed and time.monotonic() < deadline:
        time.sleep(0.001)
    assert committed == [1]
    writer.close()


def test_flush_and_close_cut_the_gathering_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads flush: they must not wait out the writer's gathering (an hour here)."""
    import threading

    from emulator.transcripts import writer as module

    monkeypatch.setattr(module, "GATHER", 3600.0)
    committed: list[int] = []
    writer = WriteBehind(lambda rows: committed.extend(r[0] for r in rows), name="test")
    done = threading.Event()

    def use() -> None:
        for i in range(20):
            writer.submit((i,))
            writer.flush()
        writer.submit((20,))
        writer.close()
        done.set()

    threading.Thread(target=use, daemon=True).start()
    assert done.wait(10.0), "flush or close waited for the gathering"
    assert committed == list(range(21))


def test_bytes_past_the_bound_end_the_gathering(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the queue holds while the writer gathers is bounded in bytes (``GATHER_BYTES``), not
    only in time: rows that reach the bound are committed at once (the gathering is an hour
    here)."""
    import time

    from emulator.transcripts import writer as module

    monkeypatch.setattr(module, "GATHER", 3600.0)
    monkeypatch.setattr(module, "GATHER_BYTES", 1000)
    committed: list[int] = []
    writer = WriteBehind(lambda rows: committed.extend(r[0] for r in rows), name="test")
    writer.submit((1,), 10)  # the writer gathers, for an hour
    writer.submit((2,), 500)
    time.sleep(0.05)
    assert committed == []  # 510 bytes: still gathering
    writer.submit((3,), 600)  # 1,110 bytes: past the bound
    deadline = time.monotonic() + 5.0
    while len(committed) < 3 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert committed == [1, 2, 3]
    writer.submit((4,), 10)  # counted from 0 again: it gathers
    time.sleep(0.05)
    assert committed == [1, 2, 3]
    writer.close()
    assert committed == [1, 2, 3, 4]


def test_a_producer_that_outruns_the_writer_waits_and_the_queue_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Security (bounded memory): rows submitted faster than the writer commits them wait for
    room (``QUEUE_BYTES``) instead of growing the queue without end. 64 rows of 256 KiB (16 MiB)
    against a writer that takes 20 ms a commit and a bound of 1 MiB: the queue and the batch
    under way hold at most about twice the bound; measured with tracemalloc."""
    import time
    import tracemalloc

    from emulator.transcripts import writer as module

    monkeypatch.setattr(module, "QUEUE_BYTES", 1024 * 1024)
    committed: list[int] = []

    def slow(rows: object) -> None:
        time.sleep(0.02)
        committed.extend(r[0] for r in rows)  # type: ignore[attr-defined]

    writer = WriteBehind(slow, name="test")
    tracemalloc.start()
    try:
        for n in range(64):
            writer.submit((n, bytes(256 * 1024)), 256 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    writer.close()
    assert committed == list(range(64))  # nothing lost, nothing reordered
    assert writer.waits > 0
    assert peak < 3 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"


def test_a_producer_past_the_bound_hears_of_a_failed_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Producers past the bound (``QUEUE_ROWS``) wait for the writer, so a writer that fails
    is heard of by the next submit, not after the whole burst was queued behind it."""
    from emulator.transcripts import writer as module

    monkeypatch.setattr(module, "QUEUE_ROWS", 4)

    def fail(rows: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    writer = WriteBehind(fail, name="test")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        for n in range(100):
            writer.submit((n,), 10)
    writer.close()


def test_a_row_the_writer_took_before_its_bytes_were_counted_leaves_no_producer_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: ``submit`` appends a row, then counts its bytes, without the lock. A writer
    that took the row in between (committed it and reset the count) left the count at the
    row's size: past ``QUEUE_BYTES``, the producer waited for room in an empty queue, beside
    an idle writer, for ever (holding the store's ``_seq_lock``). Replayed here: the writer
    takes the queue right after the append."""
    import collections
    import threading

    from emulator.transcripts import writer as module

    taken = threading.Event()
    hooked = [True]

    class Deque(collections.deque):  # type: ignore[type-arg]
        def append(self, row: object) -> None:
            super().append(row)
            if hooked[0]:  # the GIL goes to the writer here: it takes the row
                hooked[0] = False
                taken.wait(5.0)

    monkeypatch.setattr(module, "deque", Deque)
    monkeypatch.setattr(module, "QUEUE_BYTES", 1000)
    committed: list[object] = []

    def commit(rows: object) -> None:
        committed.extend(r[0] for r in rows)  # type: ignore[attr-defined]
        taken.set()

    writer = WriteBehind(commit, name="test")
    done = threading.Event()
    threading.Thread(target=lambda: (writer.submit(("big",), 1000), done.set()),
                     daemon=True).start()  # fmt: skip
    assert done.wait(5.0), "the producer still waits for room in an empty queue"
    assert committed == ["big"]
    writer.close()
