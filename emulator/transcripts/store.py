"""The transcript store: every event of every call, committed to SQLite as it happens.

One file (default ``.botemu/transcripts.db``) in WAL mode with ``synchronous=NORMAL``: each
``append`` is its own transaction, so a crash or a ``kill -9`` loses nothing that was committed,
and the file opens cleanly afterwards (a power cut may lose the last few commits; nothing more).

Two tables. ``calls`` holds one row per call or conversation, with the counters a list view needs
(workflows, errors, warnings, end reason) so that listing 10,000 calls never reads an event.
``events`` holds ``(call_id, seq)`` → virtual time, wall time, kind, payload (JSON text) and an
optional blob (binary audio). ``seq`` is 1, 2, 3... per call, allocated inside the same write
transaction as the insert, so it stays unique across threads and across processes.

Errors: ``TranscriptError`` (a ``BotemuError``) with a one-line message and the ``path`` of the
file. ``call()`` accepts a unique prefix of an id (like git); every other method takes the full id.
"""

from __future__ import annotations

import base64
import enum
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from emulator.errors import BotemuError
from emulator.jsonutil import JSON, dumps
from emulator.transcripts.writer import WriteBehind

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


SCHEMA_VERSION = 1
APPLICATION_ID = 0x626F7465  # "bote": marks the file as a botemu transcript database

_SCHEMA = """
CREATE TABLE calls (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    bot         TEXT NOT NULL,
    caller      TEXT,
    chain_id    TEXT,
    scenario    TEXT,
    started     REAL NOT NULL,
    ended       REAL,
    vtime       REAL,
    end_reason  TEXT,
    workflows   INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    warnings    INTEGER NOT NULL DEFAULT 0,
    passed      INTEGER,
    last_seq    INTEGER NOT NULL DEFAULT 0,
    writer_pid  INTEGER,
    writer_start TEXT
);
CREATE INDEX calls_by_started ON calls (started);
CREATE INDEX calls_by_reason ON calls (end_reason, started);
CREATE INDEX calls_by_kind ON calls (kind, started);
CREATE INDEX calls_with_findings ON calls (started) WHERE errors + warnings > 0;
CREATE INDEX calls_running ON calls (started) WHERE ended IS NULL;
CREATE TABLE events (
    call_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    vtime       REAL,
    wall        REAL NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    has_blob    INTEGER NOT NULL DEFAULT 0,
    blob        BLOB,
    PRIMARY KEY (call_id, seq)
);
"""
_TRIGGER = """
CREATE TRIGGER findings_count AFTER INSERT ON events WHEN NEW.kind = 'finding' BEGIN
    UPDATE calls SET
        errors = errors + (json_extract(NEW.payload, '$.severity') = 'error'),
        warnings = warnings + (json_extract(NEW.payload, '$.severity') = 'warning')
    WHERE id = NEW.call_id;
END"""
"""Keeps a running call's finding counts current, inside the statement that appends one."""
_WRITER_COLUMNS = (
    "ALTER TABLE calls ADD COLUMN writer_pid INTEGER",
    "ALTER TABLE calls ADD COLUMN writer_start TEXT",
    "CREATE INDEX IF NOT EXISTS calls_running ON calls (started) WHERE ended IS NULL",
)
"""The migration of a schema-1 file written before calls recorded their writer (additive: an
older botemu still reads and writes the file, and its calls have no writer)."""
_APPEND_TRIES = 20
_INSERT_CALL = (
    "INSERT INTO calls (id, kind, bot, caller, chain_id, scenario, started, writer_pid,"
    " writer_start) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INTERRUPTED = "interrupted"
"""The end reason of a call whose writer process ended (killed, crashed) before finishing it."""
_RUNNING_WITH_WRITER = (
    "SELECT id, writer_pid, writer_start FROM calls"
    " WHERE ended IS NULL AND writer_pid IS NOT NULL AND writer_start IS NOT NULL"
)
_INTERRUPT = """
UPDATE calls SET end_reason = ?1,
    ended = coalesce((SELECT max(wall) FROM events WHERE call_id = ?2), started),
    errors = (SELECT count(*) FROM events WHERE call_id = ?2 AND kind = 'finding'
              AND lower(json_extract(payload, '$.severity')) = 'error'),
    warnings = (SELECT count(*) FROM events WHERE call_id = ?2 AND kind = 'finding'
                AND lower(json_extract(payload, '$.severity')) = 'warning'),
    vtime = (SELECT max(vtime) FROM events WHERE call_id = ?2)
WHERE id = ?2 AND ended IS NULL AND writer_pid = ?3 AND writer_start = ?4
"""
"""A call whose writer is gone ends at its last event (its last sign of life), with no verdict."""
_COUNT_WORKFLOW = "UPDATE calls SET workflows = workflows + 1 WHERE id = ?"
_FINISH = """
UPDATE calls SET ended = ?1, end_reason = ?2, passed = ?3,
    errors = (SELECT count(*) FROM events WHERE call_id = ?4 AND kind = 'finding'
              AND lower(json_extract(payload, '$.severity')) = 'error'),
    warnings = (SELECT count(*) FROM events WHERE call_id = ?4 AND kind = 'finding'
                AND lower(json_extract(payload, '$.severity')) = 'warning'),
    vtime = (SELECT max(vtime) FROM events WHERE call_id = ?4)
WHERE id = ?4
"""
_INSERT_EVENT = (
    "INSERT INTO events (call_id, seq, vtime, wall, kind, payload, has_blob, blob)"
    " VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT), ?, ?)"
)
"""The payload is bound as UTF-8 bytes and made TEXT by SQLite (no decoding in Python)."""
_CALL_COLUMNS = (
    "id, kind, bot, caller, chain_id, scenario, started, ended, "
    "coalesce(vtime, (SELECT max(e.vtime) FROM events e WHERE e.call_id = calls.id)), "
    "end_reason, workflows, errors, warnings, passed"
)
"""A finished call keeps its virtual duration; a running one's is read from its events."""


class EventKind(enum.StrEnum):
    """The kinds of event the calling session writes (the store accepts any string)."""

    CALL_START = "call.start"
    HTTP_REQUEST = "http.request"
    HTTP_RESPONSE = "http.response"
    HTTP_ERROR = "http.error"
    RETRY = "retry"
    CALLER = "caller"
    PLATFORM = "platform"
    STATE = "state"
    FINDING = "finding"
    CALL_END = "call.end"
    NOTE = "note"


class TranscriptError(BotemuError):
    """The store cannot do what was asked: the file is not a botemu database or cannot be
    opened, a call id is unknown or ambiguous, a payload is not JSON. ``path`` is the file."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of a call. ``payload`` is a JSON object; by convention ``payload["summary"]``
    is one human line. ``vtime`` is seconds of virtual time, ``wall`` is ``time.time()``."""

    call_id: str
    seq: int
    vtime: float | None
    wall: float
    kind: str
    payload: dict[str, JSON]
    has_blob: bool

    def to_json(self) -> dict[str, JSON]:
        return {
            "seq": self.seq,
            "vtime": self.vtime,
            "wall": self.wall,
            "kind": self.kind,
            "payload": self.payload,
            "has_blob": self.has_blob,
        }


@dataclass(frozen=True, slots=True)
class CallSummary:
    """One call (``kind="call"``) or conversation, as a list shows it. ``started``/``ended`` are
    wall clock; ``vtime`` is the virtual duration (the latest event vtime); ``ended`` and
    ``end_reason`` are None while it runs. ``errors``/``warnings`` count its finding events."""

    id: str
    kind: str
    bot: str
    caller: str | None
    chain_id: str | None
    scenario: str | None
    started: float
    ended: float | None
    vtime: float | None
    end_reason: str | None
    workflows: int
    errors: int
    warnings: int
    passed: bool | None

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "kind": self.kind,
            "bot": self.bot,
            "caller": self.caller,
            "chain_id": self.chain_id,
            "scenario": self.scenario,
            "started": self.started,
            "ended": self.ended,
            "vtime": self.vtime,
            "end_reason": self.end_reason,
            "workflows": self.workflows,
            "errors": self.errors,
            "warnings": self.warnings,
            "passed": self.passed,
        }


class TranscriptStore:
    """A transcript database. Thread-safe: one connection guarded by a lock."""

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
        self.path = Path(path)
        self._label = str(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._seqs: dict[str, int] = {}
        """The last seq of each call this store appended to: each call has one writer."""
        self._seq_lock = threading.Lock()
        self._writer: WriteBehind | None = None
        self._closed = False
        memory = str(path) == ":memory:"
        try:
            if not memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as e:
            raise TranscriptError(f"cannot open: {_reason(e)}", path=self._label) from e
        try:
            self._open()
        except sqlite3.Error as e:
            self._conn.close()
            if isinstance(e, sqlite3.DatabaseError) and "not a database" in str(e):
                raise TranscriptError(
                    "not a botemu transcript database (not SQLite)", path=self._label
                ) from e
            raise TranscriptError(f"cannot open: {_reason(e)}", path=self._label) from e
        except TranscriptError:
            self._conn.close()
            raise
        self.interrupted = self._interrupt_orphans()
        """The calls this open found running with their writer gone, now ``interrupted``."""
        if write_behind:
            self._writer = WriteBehind(self._commit_rows, name=f"transcripts {self._label}")

    def _open(self) -> None:
        conn = self._conn
        version = self._check_identity()  # before anything writes to a file that may not be ours
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if version == SCHEMA_VERSION and self._has_writer_columns():
            return  # nothing to create: a reader needs no write lock
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = self._check_identity()  # again, under the write lock
            if version == SCHEMA_VERSION and not self._has_writer_columns():
                for statement in _WRITER_COLUMNS:  # a file from before writers were recorded
                    conn.execute(statement)
            elif version == 0:
                for statement in _SCHEMA.split(";"):  # not executescript: it would COMMIT
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(_TRIGGER)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _has_writer_columns(self) -> bool:
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(calls)")}
        return "writer_pid" in columns

    def _interrupt_orphans(self) -> list[str]:
        """End, as ``interrupted``, every running call whose writer process is gone (see
        ``writer_gone``). A call with no writer recorded (written by an older botemu) is left
        as it is. Best effort: a file this process cannot write (read-only, locked beyond the
        time-out) is left for the next open."""
        try:
            rows = self._conn.execute(_RUNNING_WITH_WRITER).fetchall()
            gone = [(i, pid, start) for i, pid, start in rows if writer_gone(pid, start)]
            if not gone:
                return []
            done: list[str] = []
            with self._write(flush=False) as conn:
                for call_id, pid, start in gone:
                    if conn.execute(_INTERRUPT, (INTERRUPTED, call_id, pid, start)).rowcount:
                        last = self._last_seq(conn, call_id)
                        text = _payload_text({
                            "summary": f"interrupted: its writer (pid {pid}) ended without "
                                       "finishing it (killed or crashed)",
                            "reason": INTERRUPTED,
                            "writer_pid": pid,
                        }, EventKind.CALL_END)  # fmt: skip
                        conn.execute(_INSERT_EVENT, (call_id, last + 1, None, self._clock(),
                                                     str(EventKind.CALL_END), text, False, None))  # fmt: skip
                        done.append(call_id)
            return done
        except (sqlite3.OperationalError, TranscriptError):
            return []

    def _check_identity(self) -> int:
        """The schema version of the file: 0 for an empty file; raises if it is not ours."""
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        tables = self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id == 0 and version == 0 and tables == 0:
            return 0
        if app_id != APPLICATION_ID:
            raise TranscriptError(
                "not a botemu transcript database (another SQLite database)", path=self._label
            )
        if version > SCHEMA_VERSION:
            raise TranscriptError(
                f"written by a newer botemu (schema {version}; this one reads {SCHEMA_VERSION})",
                path=self._label,
            )
        return int(version)

    # --- plumbing ------------------------------------------------------------------------------

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
                raise TranscriptError(_reason(e), path=self._label) from e

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
            raise TranscriptError(_reason(e), path=self._label) from e

    def _commit_rows(self, items: Sequence[tuple[object, ...]]) -> None:
        """The writer thread's group commit: every queued statement, in order, in one
        transaction (runs of event inserts go through ``executemany``)."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                run: list[tuple[object, ...]] = []
                for sql, params in items:
                    if sql is _INSERT_EVENT:
                        run.append(params)  # type: ignore[arg-type]
                        continue
                    if run:
                        conn.executemany(_INSERT_EVENT, run)
                        run = []
                    conn.execute(sql, params)  # type: ignore[arg-type]
                if run:
                    conn.executemany(_INSERT_EVENT, run)
                conn.execute("COMMIT")
            except sqlite3.Error as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise TranscriptError(
                    f"could not commit events: {_reason(e)}", path=self._label
                ) from e

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()  # commits what is queued first
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

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
                self._writer.submit((_INSERT_CALL, row))  # a clash with the file surfaces on flush
            return new_id
        try:
            with self._write(flush=False) as conn:
                conn.execute(_INSERT_CALL, row)
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
        text = _payload_text(payload, kind)
        if self._writer is not None and call_id in self._seqs:
            with self._seq_lock:
                seq = self._seqs[call_id] + 1
                self._seqs[call_id] = seq
                row = (call_id, seq, vtime, self._clock(), str(kind), text, blob is not None, blob)
                self._writer.submit((_INSERT_EVENT, row))
            return seq
        # One INSERT, so one commit: the seq is kept in memory for the calls this store writes
        # (each call has a single writer); a call it has not seen is looked up once.
        with self._read() as conn:
            last = self._seqs.get(call_id)
            for _ in range(_APPEND_TRIES):
                if last is None:
                    last = self._last_seq(conn, call_id)
                row = (call_id, last + 1, vtime, self._clock(), str(kind), text,
                       blob is not None, blob)  # fmt: skip
                try:
                    conn.execute(_INSERT_EVENT, row)
                except sqlite3.IntegrityError:
                    last = None  # another writer appended to this call: look again
                    continue
                self._seqs[call_id] = last + 1
                return last + 1
        raise TranscriptError(f"call {call_id}: another writer keeps appending", path=self._label)

    def _last_seq(self, conn: sqlite3.Connection, call_id: str) -> int:
        row = conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM events WHERE call_id = ?1)"
            " FROM calls WHERE id = ?1",
            (call_id,),
        ).fetchone()
        if row is None:
            raise _unknown(call_id, self._label)
        return int(row[0])

    def count_workflow(self, call_id: str) -> None:
        """One more Workflow was run (or refused) on this call."""
        if self._writer is not None and call_id in self._seqs:
            self._writer.submit((_COUNT_WORKFLOW, (call_id,)))
            return
        with self._write() as conn:
            cursor = conn.execute(_COUNT_WORKFLOW, (call_id,))
            if cursor.rowcount == 0:
                raise _unknown(call_id, self._label)

    def finish(self, call_id: str, *, reason: str, passed: bool | None = None) -> None:
        """The call ended: set ``ended`` (now), the reason, the verdict, and recount errors and
        warnings from its finding events (``payload["severity"]``)."""
        params = (self._clock(), reason, passed, call_id)
        if self._writer is not None and call_id in self._seqs:
            self._writer.submit((_FINISH, params))  # after the call's queued events
            return
        with self._write() as conn:
            if conn.execute(_FINISH, params).rowcount == 0:
                raise _unknown(call_id, self._label)

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
        where, params = _filters(text, reason, has_findings, kind)
        sql = (
            f"SELECT {_CALL_COLUMNS} FROM calls{where}"
            " ORDER BY started DESC, rowid DESC LIMIT ? OFFSET ?"
        )
        with self._read() as conn:
            rows = conn.execute(sql, [*params, limit, offset]).fetchall()
        return [_summary(row) for row in rows]

    def count(
        self,
        *,
        text: str | None = None,
        reason: str | None = None,
        has_findings: bool | None = None,
        kind: str | None = None,
    ) -> int:
        """How many calls match the filters of ``calls``."""
        where, params = _filters(text, reason, has_findings, kind)
        with self._read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM calls{where}", params).fetchone()[0])

    def call(self, call_id: str) -> CallSummary | None:
        """The call with this id, or with this unique id prefix; None if none matches. Raises
        TranscriptError if the prefix matches several calls."""
        if not call_id:
            return None
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_CALL_COLUMNS} FROM calls WHERE id = ?", (call_id,)
            ).fetchone()
            if row is None:
                rows = conn.execute(
                    f"SELECT {_CALL_COLUMNS} FROM calls WHERE id > ? AND id < ? LIMIT 2",
                    (call_id, call_id + "\U0010ffff"),
                ).fetchall()
                if len(rows) > 1:
                    raise TranscriptError(
                        f"call id prefix {call_id!r} is ambiguous: give more characters",
                        path=self._label,
                    )
                row = rows[0] if rows else None
        return None if row is None else _summary(row)

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
                raise _unknown(call_id, self._label)
        return [StoredEvent(r[0], r[1], r[2], r[3], r[4], _load(r[5]), bool(r[6])) for r in rows]

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
                    f"SELECT {_CALL_COLUMNS} FROM calls WHERE id = ?", (call_id,)
                ).fetchone()
                rows = conn.execute(
                    "SELECT seq, vtime, wall, kind, payload, blob FROM events"
                    " WHERE call_id = ? ORDER BY seq",
                    (call_id,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        if row is None:
            raise _unknown(call_id, self._label)
        events: list[JSON] = []
        for seq, vtime, wall, kind, payload, blob in rows:
            item: dict[str, JSON] = {
                "seq": seq,
                "vtime": vtime,
                "wall": wall,
                "kind": kind,
                "payload": _load(payload),
            }
            if blob is not None:
                item["blob_base64"] = base64.b64encode(blob).decode("ascii")
            events.append(item)
        return {"call": _summary(row).to_json(), "events": events}


# --- who writes a call ---------------------------------------------------------------------------

_PROC = Path("/proc")
_identities: dict[int, tuple[int, str]] = {}


def writer_identity() -> tuple[int, str]:
    """This process as a call's writer: its pid and a start id that a recycled pid does not
    repeat. On Linux ``linux/BOOT_ID/PID_NAMESPACE/START_TIME`` (the start time in clock ticks
    since boot, field 22 of ``/proc/PID/stat``), which another process can check; elsewhere
    ``host/HOSTNAME/RUN_ID`` (a random run id), checked by the pid alone."""
    pid = os.getpid()  # per pid: a forked child is another writer
    known = _identities.get(pid)
    if known is None:
        host = _linux_host()
        started = _start_time(pid)
        if host is not None and started is not None:
            start = f"linux/{host[0]}/{host[1]}/{started}"
        else:
            start = f"host/{socket.gethostname()}/{uuid.uuid4().hex}"
        known = _identities[pid] = (pid, start)
    return known


def writer_gone(pid: int, start: str) -> bool:
    """True only when the writer ``(pid, start)`` has certainly ended:

    - Linux, same boot and pid namespace: no process ``pid``, a zombie, or one that started at
      another time (the pid was recycled);
    - Linux, another boot id: that boot is over (SQLite's WAL works on one host only, so the
      writer was on this machine);
    - elsewhere, same host name: no process ``pid``.

    Anything else (another pid namespace, such as a container sharing the file; another host
    name; a start id this botemu does not know) cannot be told, and counts as alive."""
    kind, _, rest = start.partition("/")
    if kind == "linux":
        boot, _, rest = rest.partition("/")
        namespace, _, started = rest.rpartition("/")
        host = _linux_host()
        if host is None:
            return False
        if boot != host[0]:
            return True
        if namespace != host[1]:
            return False
        stat = _stat(pid)
        return stat is None or stat[0] in ("Z", "X") or stat[19] != started
    if kind == "host":
        name = rest.partition("/")[0]
        if name != socket.gethostname():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # it exists (another user's)
            return False
    return False


def _linux_host() -> tuple[str, str] | None:
    """(boot id, pid namespace) of this process, or None off Linux."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self/ns/pid")
    except OSError:
        return None
    return (boot, namespace) if boot and "/" not in boot + namespace else None


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3, the state, first)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text[text.rfind(")") + 1 :].split()
    return fields if len(fields) > 19 else None


def _start_time(pid: int) -> str | None:
    stat = _stat(pid)
    return None if stat is None else stat[19]


# --- helpers -----------------------------------------------------------------------------------


def _filters(
    text: str | None, reason: str | None, has_findings: bool | None, kind: str | None
) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        columns = ("id", "bot", "caller", "scenario", "chain_id", "end_reason")
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
        params += [pattern] * len(columns)
    if reason is not None:
        clauses.append("end_reason = ?")
        params.append(reason)
    if has_findings is not None:
        clauses.append("errors + warnings > 0" if has_findings else "errors + warnings = 0")
    if kind is not None:
        clauses.append("kind = ?")
        params.append(kind)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _summary(row: tuple[Any, ...]) -> CallSummary:
    passed = row[13]
    return CallSummary(
        id=row[0],
        kind=row[1],
        bot=row[2],
        caller=row[3],
        chain_id=row[4],
        scenario=row[5],
        started=row[6],
        ended=row[7],
        vtime=row[8],
        end_reason=row[9],
        workflows=row[10],
        errors=row[11],
        warnings=row[12],
        passed=None if passed is None else bool(passed),
    )


def _load(text: str) -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(text))


def _payload_text(payload: dict[str, JSON], kind: str) -> bytes:
    """A payload as JSON text in UTF-8 bytes, for ``_INSERT_EVENT``. orjson does the common
    case (``dumps``: it is ten times faster than the standard encoder, and payloads are on every
    call's hot path); a non-finite number is stored as null, as JSON.stringify does. What orjson
    refuses (a lone surrogate, an integer beyond 64 bits) goes through the standard encoder,
    which keeps it exactly."""
    try:
        return dumps(payload)
    except (TypeError, ValueError) as e:
        raise TranscriptError(f"the payload of a {kind} event is not JSON: {e}") from e


def _unknown(call_id: str, path: str) -> TranscriptError:
    return TranscriptError(f"no call with id {call_id!r}", path=path)


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__
