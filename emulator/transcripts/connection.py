"""The transcript store's connection: one SQLite connection behind a lock, and write-behind.

``StoreConnection`` opens the file (``schema.connect``), hands the connection out for one read
or one write transaction at a time (``_read``, ``_write``), and, once ``_start_writer`` ran,
commits queued statements on a writer thread (``writer.py``) in group commits. Every read waits
for that queue to drain first. ``TranscriptStore`` (``store.py``) builds its operations on it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain, groupby
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from emulator.transcripts.queries import (
    COUNT_WORKFLOW,
    COUNT_WORKFLOWS,
    EVENTS_PER_INSERT,
    FINISH,
    INSERT_CALL,
    INSERT_EVENT,
    insert_events,
)
from emulator.transcripts.records import TranscriptError, reason_of
from emulator.transcripts.schema import connect
from emulator.transcripts.writer import WriteBehind

EVENT_ROWS = "event rows"
"""The statement of a queue item whose parameters are event rows (a sequence of them, each
made by ``event_row``): what ``append`` and ``append_many`` queue. An item of ``INSERT_EVENT``
and its one row is taken too."""


def event_row(call_id: str, seq: int, vtime: float | None, wall: float, kind: str,
              payload: bytes, blob: bytes | None) -> tuple[object, ...]:  # fmt: skip
    """An event's row: the parameters of ``INSERT_EVENT``, or for a plain event (no virtual
    time, no blob: every connector exchange) the five of ``insert_events(plain=True)``."""
    if vtime is None and blob is None:
        return (call_id, seq, wall, kind, payload)
    return (call_id, seq, vtime, wall, kind, payload, 0 if blob is None else 1, blob)


Statement = tuple[str, list[object]]

PLAIN_ROW = 5
"""The length of a plain event's row (``event_row``)."""


STATEMENT_BYTES = 1024 * 1024
"""Bytes of payload and blob past which a statement takes no more rows. SQLite copies every
value a statement binds, so a statement of 128 rows of 750 KB (a batch the writer took after
falling behind, a prompt of that size in every event) held 96 MB twice over."""


def _plan(rows: Sequence[tuple[object, ...]]) -> list[Statement]:
    """The multi-row INSERTs of ``rows``, in order: one for each run of rows of one shape (plain
    or not), ``EVENTS_PER_INSERT`` rows at most to a statement, and no more rows once the
    statement holds ``STATEMENT_BYTES``."""
    plan: list[Statement] = []
    for length, run in groupby(rows, len):
        plain = length == PLAIN_ROW
        chunk: list[tuple[object, ...]] = []
        size = 0
        for row in run:
            chunk.append(row)
            size += row_bytes(row)
            if len(chunk) == EVENTS_PER_INSERT or size >= STATEMENT_BYTES:
                plan.append((insert_events(len(chunk), plain=plain),
                             list(chain.from_iterable(chunk))))  # fmt: skip
                chunk, size = [], 0
        if chunk:
            plan.append((insert_events(len(chunk), plain=plain), list(chain.from_iterable(chunk))))
    return plan


def row_bytes(row: tuple[object, ...]) -> int:
    """The bytes of an event row's payload and blob (``event_row``): what the writer gathers
    (``WriteBehind.submit``) and a statement binds are bounded by them."""
    if len(row) == PLAIN_ROW:
        return len(row[4])  # type: ignore[arg-type]
    blob = row[7]
    return len(row[5]) + (len(blob) if blob is not None else 0)  # type: ignore[arg-type]


def _run(conn: sqlite3.Connection, plan: list[Statement]) -> None:
    for sql, params in plan:
        conn.execute(sql, params)


def insert_event_rows(conn: sqlite3.Connection, rows: Sequence[tuple[object, ...]]) -> None:
    """Insert event rows in order. Outside a transaction, rows that take more than one
    statement get a transaction of their own (all or none)."""
    plan = _plan(rows)
    if len(plan) <= 1 or conn.in_transaction:
        _run(conn, plan)
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        _run(conn, plan)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _segments(items: Sequence[tuple[object, ...]]) -> list[tuple[object, list[Any]]]:
    """A batch in order, as runs of event rows (``None``, the rows) and the other statements
    (``sql``, its parameters)."""
    out: list[tuple[object, list[Any]]] = []
    for sql, params in items:
        if sql is EVENT_ROWS or sql is INSERT_EVENT:
            rows = list(params) if sql is EVENT_ROWS else [params]  # type: ignore[call-overload]
            if out and out[-1][0] is None:
                out[-1][1].extend(rows)
            else:
                out.append((None, rows))
        else:
            out.append((sql, params))  # type: ignore[arg-type]
    return out


def _grouped(items: Sequence[tuple[object, ...]]) -> list[tuple[object, list[Any]]] | None:
    """A batch as four runs of statements: the calls started, every event row (in order), the
    Workflows counted (one update a call), the calls finished; None when that order would not
    leave the tables as the batch's own order does (an item of another kind, or an event of a
    call after its end). Each call's start comes before its events and its end after them, as
    in the queue; a Workflow's count touches only its own column. So a commit runs a few
    statements, not one for each run of events between other statements (some ten a call):
    each statement takes the GIL back from the event loop after SQLite ran it."""
    started: list[Any] = []
    rows: list[Any] = []
    counted: dict[object, int] = {}
    finished: list[Any] = []
    ended: set[object] = set()
    for sql, params in items:
        if sql is EVENT_ROWS:
            if ended and params[0][0] in ended:  # type: ignore[index]
                return None
            rows.extend(params)  # type: ignore[arg-type]
        elif sql is INSERT_CALL:
            started.append(params)
        elif sql is COUNT_WORKFLOW:
            call = params[0]  # type: ignore[index]
            counted[call] = counted.get(call, 0) + 1
        elif sql is FINISH:
            finished.append(params)
            ended.add(params[3])  # type: ignore[index]
        else:
            return None
    out: list[tuple[object, list[Any]]] = []
    if started:
        out.append((INSERT_CALL, started))
    if rows:
        out.append((None, rows))
    if counted:
        out.append((COUNT_WORKFLOWS, [(n, call) for call, n in counted.items()]))
    if finished:
        out.append((FINISH, finished))
    return out


class StoreConnection:
    """A transcript database's connection. Thread-safe: one connection guarded by a lock."""

    def __init__(self, path: str | Path) -> None:
        """Open (create, migrate) the database at ``path``; ``TranscriptError`` if it cannot."""
        self.path = Path(path)
        self._label = str(path)
        self._lock = threading.Lock()
        self._writer: WriteBehind | None = None
        self._closed = False
        self._conn = connect(path, self._label)

    def _start_writer(self) -> None:
        """From now on ``_writer`` takes the statements to commit (see ``writer.py``)."""
        self._writer = WriteBehind(self._commit_rows, name=f"transcripts {self._label}")

    @contextmanager
    def _read(self, *, flush: bool = True) -> Iterator[sqlite3.Connection]:
        if self._writer is not None and flush:
            self._flush()  # readers see every event appended before the read
        with self._lock:
            if self._closed:
                raise TranscriptError("the store is closed", path=self._label)
            try:
                yield self._conn
            except sqlite3.Error as e:
                raise TranscriptError(reason_of(e), path=self._label) from e

    @contextmanager
    def _write(self, *, flush: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: the write lock is taken up front, so a
        read-then-write such as allocating a seq is atomic across connections)."""
        with self._read(flush=flush) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def flush(self) -> None:
        """Wait until every event appended so far is committed (a no-op without write-behind)."""
        if self._writer is not None:
            self._flush()

    def _flush(self) -> None:
        assert self._writer is not None
        try:
            self._writer.flush()
        except TranscriptError:
            raise
        except Exception as e:  # pragma: no cover - the commit wraps SQLite errors already
            raise TranscriptError(reason_of(e), path=self._label) from e

    def _commit_rows(self, items: Sequence[tuple[object, ...]]) -> None:
        """The writer thread's group commit: every queued statement in one transaction, as
        ``_grouped`` orders them (or else in the queue's order). Event rows go in as multi-row
        INSERTs (``_plan``); a batch of at most one such INSERT is its own transaction, without
        BEGIN and COMMIT."""
        with self._lock:
            conn = self._conn
            try:
                grouped = _grouped(items)
                segments = grouped if grouped is not None else _segments(items)
                if len(segments) == 1 and segments[0][0] is None:
                    plan = _plan(segments[0][1])
                    if len(plan) <= 1:
                        _run(conn, plan)
                        return
                conn.execute("BEGIN IMMEDIATE")
                for sql, params in segments:
                    if sql is None:
                        _run(conn, _plan(params))
                    elif grouped is not None:
                        conn.executemany(sql, params)  # type: ignore[arg-type]
                    else:
                        conn.execute(sql, params)  # type: ignore[arg-type]
                conn.execute("COMMIT")
            except sqlite3.Error as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise TranscriptError(
                    f"could not commit events: {reason_of(e)}", path=self._label
                ) from e

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()  # commits what is queued first
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
