"""The transcript store: every event of every call, committed to SQLite as it happens.

One file (default ``.botemu/transcripts.db``) in WAL mode with ``synchronous=NORMAL``: each
``append`` is its own transaction, so a crash or a ``kill -9`` loses nothing that was committed,
and the file opens cleanly afterwards (a power cut may lose the last few commits; nothing more).

Three tables. ``calls`` holds one row per call or conversation, with the counters a list view needs
(workflows, errors, warnings, end reason) so that listing 10,000 calls never reads an event.
``events`` holds ``(call_id, seq)`` → virtual time, wall time, kind, payload (JSON text) and an
optional blob (binary audio). ``explorations`` holds ``botemu explore``'s graphs
(``explorations.py``). ``seq`` is 1, 2, 3... per call, allocated inside the same write
transaction as the insert, so it stays unique across threads and across processes.

Errors: ``TranscriptError`` (a ``BotemuError``) with a one-line message and the ``path`` of the
file. ``call()`` accepts a unique prefix of an id (like git); every other method takes the full id.
"""

from __future__ import annotations

import base64
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from emulator.jsonutil import JSON
from emulator.transcripts.connection import (
    EVENT_ROWS,
    PLAIN_ROW,
    event_row,
    insert_event_rows,
    row_bytes,
)
from emulator.transcripts.explorations import (
    MAX_EXPLORATION_BYTES,
    ExplorationStore,
    ExplorationSummary,
)
from emulator.transcripts.liveness import writer_gone, writer_identity
from emulator.transcripts.queries import (
    CALL_COLUMNS,
    COUNT_WORKFLOW,
    FINISH,
    INSERT_CALL,
    INSERT_EVENT,
    INTERRUPT,
    LAST_SEQ,
    RUNNING_WITH_WRITER,
    filters,
    insert_events,
)
from emulator.transcripts.records import (
    CallSummary,
    EventKind,
    StoredEvent,
    TranscriptError,
    load_payload,
    payload_text,
    reason_of,
    summary_of,
    unknown_call,
)
from emulator.transcripts.schema import APPLICATION_ID, SCHEMA_VERSION

_INSERT_PLAIN = insert_events(1, plain=True)

__all__ = [
    "APPLICATION_ID",
    "DEFAULT_DB",
    "ENV_DB",
    "ENV_WRITE_BEHIND",
    "INTERRUPTED",
    "MAX_EXPLORATION_BYTES",
    "SCHEMA_VERSION",
    "CallSummary",
    "EventKind",
    "ExplorationSummary",
    "StoredEvent",
    "TranscriptError",
    "TranscriptStore",
    "default_db",
    "writer_gone",
    "writer_identity",
]


DEFAULT_DB = Path(".botemu") / "transcripts.db"
ENV_DB = "BOTEMU_DB"
ENV_WRITE_BEHIND = "BOTEMU_WRITE_BEHIND"
"""``BOTEMU_WRITE_BEHIND=0``: every store commits each event before ``append`` returns, even one
opened with ``write_behind=True`` (so ``botemu serve`` commits a connector exchange before it
answers it; docs/transcripts.md, "Durability")."""


def default_db() -> Path:
    """The transcript database every command uses unless told: ``$BOTEMU_DB``, else
    ``.botemu/transcripts.db``."""
    return Path(os.environ.get(ENV_DB) or DEFAULT_DB)


_APPEND_TRIES = 20
INTERRUPTED = "interrupted"
"""The end reason of a call whose writer process ended (killed, crashed) before finishing it."""
NewEvent = tuple[str, dict[str, JSON], bytes | None]
"""An event to append: its kind, payload and blob (or None)."""


class TranscriptStore(ExplorationStore):
    """A transcript database. Thread-safe: one connection guarded by a lock. Its explorations
    (``save_exploration``, ``explorations``, ``exploration``...) are in ``explorations.py``."""

    def __init__(
        self,
        path: str | Path = DEFAULT_DB,
        *,
        clock: Callable[[], float] = time.time,
        write_behind: bool = False,
    ) -> None:
        """``write_behind``: commit appends on a writer thread (``writer.py``): much faster
        for a busy session, at the price of losing the last queued events to a ``kill -9``.
        ``$BOTEMU_WRITE_BEHIND=0`` turns it off for every store of the process."""
        if os.environ.get(ENV_WRITE_BEHIND, "").strip() == "0":
            write_behind = False
        self._clock = clock
        self._seqs: dict[str, int] = {}
        """The last seq of each call this store appended to: each call has one writer."""
        self._seq_lock = threading.Lock()
        super().__init__(path)
        self.interrupted = self._interrupt_orphans()
        """The calls this open found running with their writer gone, now ``interrupted``."""
        if write_behind:
            self._start_writer()

    def _interrupt_orphans(self) -> list[str]:
        """End, as ``interrupted``, every running call whose writer process is gone (see
        ``writer_gone``). A call with no writer recorded (written by an older botemu) is left
        as it is. Best effort: a file this process cannot write (read-only, locked beyond the
        time-out) is left for the next open."""
        try:
            rows = self._conn.execute(RUNNING_WITH_WRITER).fetchall()
            gone = [(i, pid, start) for i, pid, start in rows if writer_gone(pid, start)]
            if not gone:
                return []
            done: list[str] = []
            with self._write(flush=False) as conn:
                for call_id, pid, start in gone:
                    if conn.execute(INTERRUPT, (INTERRUPTED, call_id, pid, start)).rowcount:
                        self._append_interrupted(conn, call_id, pid)
                        done.append(call_id)
            return done
        except (sqlite3.OperationalError, TranscriptError):
            return []

    def _append_interrupted(self, conn: sqlite3.Connection, call_id: str, pid: int) -> None:
        """The ``call.end`` event of a call ``_interrupt_orphans`` just ended."""
        last = self._last_seq(conn, call_id)
        text = payload_text({
            "summary": f"interrupted: its writer (pid {pid}) ended without "
                       "finishing it (killed or crashed)",
            "reason": INTERRUPTED,
            "writer_pid": pid,
        }, EventKind.CALL_END)  # fmt: skip
        row = (call_id, last + 1, None, self._clock(), str(EventKind.CALL_END), text, False, None)
        conn.execute(INSERT_EVENT, row)

    # --- writing -------------------------------------------------------------------------------

    def start(
        self,
        *,
        bot: str,
        kind: str = "call",
        call_id: str | None = None,
        caller: str | None = None,
        chain_id: str | None = None,
        scenario: str | None = None,
    ) -> str:
        """Record a new call (or conversation) and return its id (uuid4 hex unless given)."""
        new_id = call_id if call_id is not None else uuid.uuid4().hex
        if not new_id:
            raise TranscriptError("a call id cannot be empty", path=self._label)
        pid, start = writer_identity()
        row = (new_id, str(kind), bot, caller, chain_id, scenario, self._clock(), pid, start)
        if self._writer is not None:
            with self._seq_lock:
                if new_id in self._seqs:
                    raise TranscriptError(f"call {new_id} already exists", path=self._label)
                self._seqs[new_id] = 0
                self._writer.submit((INSERT_CALL, row))  # a clash with the file surfaces on flush
            return new_id
        try:
            with self._write(flush=False) as conn:
                conn.execute(INSERT_CALL, row)
        except TranscriptError as e:
            if isinstance(e.__cause__, sqlite3.IntegrityError):
                raise TranscriptError(f"call {new_id} already exists", path=self._label) from e
            raise
        with self._lock:
            self._seqs[new_id] = 0
        return new_id

    def append(
        self,
        call_id: str,
        kind: str,
        payload: dict[str, JSON],
        *,
        vtime: float | None = None,
        blob: bytes | None = None,
    ) -> int:
        """Append one event to a call and commit it; returns its seq (1, 2, 3... per call)."""
        if not isinstance(payload, dict):
            raise TranscriptError(f"the payload of a {kind} event must be a JSON object")
        text = payload_text(payload, kind)
        if self._writer is not None and call_id in self._seqs:
            with self._seq_lock:
                seq = self._seqs[call_id] + 1
                self._seqs[call_id] = seq
                row = event_row(call_id, seq, vtime, self._clock(), str(kind), text, blob)
                self._writer.submit((EVENT_ROWS, (row,)), row_bytes(row))
            return seq
        last = self._seqs.get(call_id)
        if last is not None and self._writer is None:  # the common case, committed now: one
            # statement, no plan; ``_read`` written out (it has no queue to wait for here)
            row = event_row(call_id, last + 1, vtime, self._clock(), str(kind), text, blob)
            with self._lock:
                if self._closed:
                    raise TranscriptError("the store is closed", path=self._label)
                try:
                    self._conn.execute(_INSERT_PLAIN if len(row) == PLAIN_ROW else INSERT_EVENT,
                                       row)  # fmt: skip
                except sqlite3.IntegrityError:
                    pass  # another writer appended to this call: ``_insert`` looks again
                except sqlite3.Error as e:
                    raise TranscriptError(reason_of(e), path=self._label) from e
                else:
                    self._seqs[call_id] = last + 1
                    return last + 1
        return self._insert(call_id, [(str(kind), text, blob)], vtime)[0]

    def append_many(
        self, call_id: str, events: Sequence[NewEvent], *, vtime: float | None = None
    ) -> list[int]:
        """Append several events to a call at once, in order, and commit them together (all or
        none): ``events`` are ``(kind, payload, blob)``; returns their seqs. The same as
        ``append`` for each, in one queue item (write-behind) or one transaction: a connector
        exchange's request and response (``ConnectorRecorder``)."""
        encoded: list[tuple[str, bytes, bytes | None]] = []
        for kind, payload, blob in events:
            if not isinstance(payload, dict):
                raise TranscriptError(f"the payload of a {kind} event must be a JSON object")
            encoded.append((str(kind), payload_text(payload, kind), blob))
        if not encoded:
            return []
        if self._writer is not None and call_id in self._seqs:
            rows: list[tuple[object, ...]] = []
            size = 0
            with self._seq_lock:
                first = seq = self._seqs[call_id] + 1
                for kind, text, blob in encoded:  # a loop: cheaper than a generator here
                    rows.append(event_row(call_id, seq, vtime, self._clock(), kind, text, blob))
                    size += row_bytes(rows[-1])
                    seq += 1
                self._seqs[call_id] = seq - 1
                self._writer.submit((EVENT_ROWS, rows), size)
            return list(range(first, seq))
        return self._insert(call_id, encoded, vtime)

    def _insert(
        self, call_id: str, encoded: list[tuple[str, bytes, bytes | None]], vtime: float | None
    ) -> list[int]:
        """Commit event rows now, in one transaction; their seqs. The seq is kept in memory for
        the calls this store writes (each call has a single writer); a call it has not seen is
        looked up once."""
        with self._read() as conn:
            last = self._seqs.get(call_id)
            for _ in range(_APPEND_TRIES):
                if last is None:
                    last = self._last_seq(conn, call_id)
                rows = [event_row(call_id, last + n, vtime, self._clock(), kind, text, blob)
                        for n, (kind, text, blob) in enumerate(encoded, 1)]  # fmt: skip
                try:
                    insert_event_rows(conn, rows)
                except sqlite3.IntegrityError:
                    last = None  # another writer appended to this call: look again
                    continue
                self._seqs[call_id] = last + len(rows)
                return list(range(last + 1, last + len(rows) + 1))
        raise TranscriptError(f"call {call_id}: another writer keeps appending", path=self._label)

    def _last_seq(self, conn: sqlite3.Connection, call_id: str) -> int:
        row = conn.execute(LAST_SEQ, (call_id,)).fetchone()
        if row is None:
            raise unknown_call(call_id, self._label)
        return int(row[0])

    def count_workflow(self, call_id: str) -> None:
        """One more Workflow was run (or refused) on this call."""
        if self._writer is not None and call_id in self._seqs:
            self._writer.submit((COUNT_WORKFLOW, (call_id,)))
            return
        with self._write() as conn:
            cursor = conn.execute(COUNT_WORKFLOW, (call_id,))
            if cursor.rowcount == 0:
                raise unknown_call(call_id, self._label)

    def finish(self, call_id: str, *, reason: str, passed: bool | None = None) -> None:
        """The call ended: set ``ended`` (now), the reason, the verdict, and recount errors and
        warnings from its finding events (``payload["severity"]``)."""
        params = (self._clock(), reason, passed, call_id)
        if self._writer is not None and call_id in self._seqs:
            self._writer.submit((FINISH, params))  # after the call's queued events
            return
        with self._write() as conn:
            if conn.execute(FINISH, params).rowcount == 0:
                raise unknown_call(call_id, self._label)

    # --- reading -------------------------------------------------------------------------------

    def calls(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        text: str | None = None,
        reason: str | None = None,
        has_findings: bool | None = None,
        kind: str | None = None,
    ) -> list[CallSummary]:
        """Calls newest first, filtered, one page. ``text`` matches (case-insensitively, as a
        substring) the id, bot, caller, scenario, chain id or end reason; ``reason`` is an exact
        end reason; ``has_findings`` means at least one error or warning."""
        if limit < 0 or offset < 0:
            raise TranscriptError(f"limit and offset must be >= 0 (got {limit}, {offset})")
        where, params = filters(text, reason, has_findings, kind)
        sql = (
            f"SELECT {CALL_COLUMNS} FROM calls{where}"
            " ORDER BY started DESC, rowid DESC LIMIT ? OFFSET ?"
        )
        with self._read() as conn:
            rows = conn.execute(sql, [*params, limit, offset]).fetchall()
        return [summary_of(row) for row in rows]

    def count(
        self,
        *,
        text: str | None = None,
        reason: str | None = None,
        has_findings: bool | None = None,
        kind: str | None = None,
    ) -> int:
        """How many calls match the filters of ``calls``."""
        where, params = filters(text, reason, has_findings, kind)
        with self._read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM calls{where}", params).fetchone()[0])

    def call(self, call_id: str) -> CallSummary | None:
        """The call with this id, or with this unique id prefix; None if none matches. Raises
        TranscriptError if the prefix matches several calls."""
        if not call_id:
            return None
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {CALL_COLUMNS} FROM calls WHERE id = ?", (call_id,)
            ).fetchone()
            if row is None:
                rows = conn.execute(
                    f"SELECT {CALL_COLUMNS} FROM calls WHERE id > ? AND id < ? LIMIT 2",
                    (call_id, call_id + "\U0010ffff"),
                ).fetchall()
                if len(rows) > 1:
                    raise TranscriptError(
                        f"call id prefix {call_id!r} is ambiguous: give more characters",
                        path=self._label,
                    )
                row = rows[0] if rows else None
        return None if row is None else summary_of(row)

    def events(self, call_id: str, *, after: int = 0) -> list[StoredEvent]:
        """The events of a call with seq > ``after``, in order. Raises for an unknown call."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT call_id, seq, vtime, wall, kind, payload, has_blob FROM events"
                " WHERE call_id = ? AND seq > ? ORDER BY seq",
                (call_id, after),
            ).fetchall()
            if (
                not rows
                and not conn.execute("SELECT 1 FROM calls WHERE id = ?", (call_id,)).fetchone()
            ):
                raise unknown_call(call_id, self._label)
        return [
            StoredEvent(r[0], r[1], r[2], r[3], r[4], load_payload(r[5]), bool(r[6])) for r in rows
        ]

    def blob(self, call_id: str, seq: int) -> bytes | None:
        """The blob of one event, or None if that event has none (or does not exist)."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT blob FROM events WHERE call_id = ? AND seq = ?", (call_id, seq)
            ).fetchone()
        return None if row is None or row[0] is None else bytes(row[0])

    def export(self, call_id: str) -> dict[str, JSON]:
        """``{"call": summary, "events": [...]}``; a blob is base64 under ``"blob_base64"``."""
        with self._read() as conn:
            conn.execute("BEGIN")  # one snapshot for the summary and the events
            try:
                row = conn.execute(
                    f"SELECT {CALL_COLUMNS} FROM calls WHERE id = ?", (call_id,)
                ).fetchone()
                rows = conn.execute(
                    "SELECT seq, vtime, wall, kind, payload, blob FROM events"
                    " WHERE call_id = ? ORDER BY seq",
                    (call_id,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        if row is None:
            raise unknown_call(call_id, self._label)
        events: list[JSON] = []
        for seq, vtime, wall, kind, payload, blob in rows:
            item: dict[str, JSON] = {
                "seq": seq,
                "vtime": vtime,
                "wall": wall,
                "kind": kind,
                "payload": load_payload(payload),
            }
            if blob is not None:
                item["blob_base64"] = base64.b64encode(blob).decode("ascii")
            events.append(item)
        return {"call": summary_of(row).to_json(), "events": events}
