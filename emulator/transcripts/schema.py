"""The transcript database's schema: its tables, the migrations of older files, and opening one.

``connect`` opens a file (creating its directory), checks that it is a botemu transcript database
(``application_id`` and ``user_version``), switches it to WAL and creates or migrates the schema
under the write lock. A reader of an up-to-date file takes no write lock at all.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from emulator.transcripts.records import TranscriptError, reason_of

SCHEMA_VERSION = 2
"""1: calls and events; 2: and ``explorations`` (``botemu explore``'s graphs)."""
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
_EXPLORATIONS = (
    """CREATE TABLE IF NOT EXISTS explorations (
    id          TEXT PRIMARY KEY,
    started     REAL NOT NULL,
    bot         TEXT NOT NULL,
    version     INTEGER,
    states      INTEGER NOT NULL,
    edges       INTEGER NOT NULL,
    findings    INTEGER NOT NULL,
    errors      INTEGER NOT NULL,
    warnings    INTEGER NOT NULL,
    calls       INTEGER,
    size        INTEGER NOT NULL,
    document    TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS explorations_by_started ON explorations (started)",
)
"""Schema 2: one row per exploration (``botemu explore``'s graph as JSON, with the counts a list
shows). The document is the last column, so that a list never reads its pages."""
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
"""Part of the migration of a schema-1 file written before calls recorded their writer (its
calls have no writer)."""


def connect(path: str | Path, label: str) -> sqlite3.Connection:
    """A connection to the transcript database at ``path`` (``":memory:"`` for none), its schema
    created or migrated; ``TranscriptError`` (``path=label``) when it cannot be opened or is not
    a botemu transcript database."""
    try:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), timeout=10.0, isolation_level=None, check_same_thread=False
        )
    except (OSError, sqlite3.Error) as e:
        raise TranscriptError(f"cannot open: {reason_of(e)}", path=label) from e
    try:
        prepare(conn, label)
    except sqlite3.Error as e:
        conn.close()
        if isinstance(e, sqlite3.DatabaseError) and "not a database" in str(e):
            raise TranscriptError(
                "not a botemu transcript database (not SQLite)", path=label
            ) from e
        raise TranscriptError(f"cannot open: {reason_of(e)}", path=label) from e
    except TranscriptError:
        conn.close()
        raise
    return conn


OPEN_PATIENCE = 10.0
"""Seconds an opening waits while another process creates or migrates the same file (switching
a new file to WAL takes a lock that SQLite's busy timeout does not wait for)."""


def prepare(conn: sqlite3.Connection, label: str) -> None:
    """``prepare_once``, tried again while another process holds the file's lock (two load
    workers, two commands, opening a new file at the same moment)."""
    deadline = time.monotonic() + OPEN_PATIENCE
    while True:
        try:
            prepare_once(conn, label)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            time.sleep(0.02)


def prepare_once(conn: sqlite3.Connection, label: str) -> None:
    """Check the file is ours, switch it to WAL, and create or migrate its schema."""
    version = check_identity(conn, label)  # before anything writes to a file that may not be ours
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    if version == SCHEMA_VERSION:
        return  # nothing to create: a reader needs no write lock
    conn.execute("BEGIN IMMEDIATE")
    try:
        migrate(conn, check_identity(conn, label))  # again, under the write lock
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a file of schema ``version`` (0: empty) up to date, inside the caller's
    transaction. Schema 1 (with or without the writer columns) gains them and the
    ``explorations`` table, and becomes schema 2."""
    if version == 0:
        # not executescript: it would COMMIT
        for statement in [*_SCHEMA.split(";"), *_EXPLORATIONS]:
            if statement.strip():
                conn.execute(statement)
        conn.execute(_TRIGGER)
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    elif version == 1:
        if not has_writer_columns(conn):  # a file from before writers were recorded
            for statement in _WRITER_COLUMNS:
                conn.execute(statement)
        for statement in _EXPLORATIONS:
            conn.execute(statement)
    else:
        return  # up to date (another process migrated it first)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def has_writer_columns(conn: sqlite3.Connection) -> bool:
    """Whether the ``calls`` table records each call's writer (``writer_pid``)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    return "writer_pid" in columns


def check_identity(conn: sqlite3.Connection, label: str) -> int:
    """The schema version of the file: 0 for an empty file; raises if it is not ours. One
    statement, so one snapshot: another process creating the file at the same moment is seen
    before or after its commit, never half-way (its tables without its application id)."""
    app_id, version, tables = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id),"
        " (SELECT user_version FROM pragma_user_version),"
        " (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    if app_id == 0 and version == 0 and tables == 0:
        return 0
    if app_id != APPLICATION_ID:
        raise TranscriptError(
            "not a botemu transcript database (another SQLite database)", path=label
        )
    if version > SCHEMA_VERSION:
        raise TranscriptError(
            f"written by a newer botemu (schema {version}; this one reads {SCHEMA_VERSION})",
            path=label,
        )
    return int(version)
