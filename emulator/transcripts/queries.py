"""The SQL the transcript store runs on the tables of ``schema.py``, and its list filters."""

from __future__ import annotations

from functools import lru_cache

INSERT_CALL = (
    "INSERT INTO calls (id, kind, bot, caller, chain_id, scenario, started, writer_pid,"
    " writer_start) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RUNNING_WITH_WRITER = (
    "SELECT id, writer_pid, writer_start FROM calls"
    " WHERE ended IS NULL AND writer_pid IS NOT NULL AND writer_start IS NOT NULL"
)
INTERRUPT = """
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
COUNT_WORKFLOW = "UPDATE calls SET workflows = workflows + 1 WHERE id = ?"
COUNT_WORKFLOWS = "UPDATE calls SET workflows = workflows + ? WHERE id = ?"
"""``COUNT_WORKFLOW`` for several Workflows of one call at once (a group commit's)."""
FINISH = """
UPDATE calls SET ended = ?1, end_reason = ?2, passed = ?3,
    errors = (SELECT count(*) FROM events WHERE call_id = ?4 AND kind = 'finding'
              AND lower(json_extract(payload, '$.severity')) = 'error'),
    warnings = (SELECT count(*) FROM events WHERE call_id = ?4 AND kind = 'finding'
                AND lower(json_extract(payload, '$.severity')) = 'warning'),
    vtime = (SELECT max(vtime) FROM events WHERE call_id = ?4)
WHERE id = ?4
"""
_EVENT_COLUMNS = (
    "INSERT INTO events (call_id, seq, vtime, wall, kind, payload, has_blob, blob) VALUES "
)
_EVENT_VALUES = "(?, ?, ?, ?, ?, CAST(? AS TEXT), ?, ?)"
INSERT_EVENT = _EVENT_COLUMNS + _EVENT_VALUES
"""The payload is bound as UTF-8 bytes and made TEXT by SQLite (no decoding in Python)."""
EVENTS_PER_INSERT = 128
"""The most rows ``insert_events`` puts in one statement (8 parameters each: far below SQLite's
limit of 32,766). A group commit of more takes a transaction of several statements, each
taking the GIL twice more: 128 holds 5 ms of a session appending 25,000 events a second
(``writer.GATHER``, 100 ms, takes twenty)."""


_PLAIN_VALUES = "(?, ?, NULL, ?, ?, CAST(? AS TEXT), 0, NULL)"
"""The values of a plain event (no virtual time, no blob): its row is ``(call_id, seq, wall,
kind, payload)``, and the three others are written as literals (a None or a bool parameter
costs the ``sqlite3`` module an adaptation lookup, with the GIL held)."""


@lru_cache(maxsize=2 * EVENTS_PER_INSERT)
def insert_events(count: int, *, plain: bool = False) -> str:
    """``INSERT_EVENT`` for ``count`` rows at once (1 to ``EVENTS_PER_INSERT``): one statement,
    so SQLite is entered once (and the GIL released once) for all of them, not once a row.
    ``plain``: for plain rows (``_PLAIN_VALUES``), five parameters each instead of eight."""
    if not 0 < count <= EVENTS_PER_INSERT:
        raise ValueError(f"insert_events: {count} rows (1 to {EVENTS_PER_INSERT})")
    return _EVENT_COLUMNS + ", ".join([_PLAIN_VALUES if plain else _EVENT_VALUES] * count)


CALL_COLUMNS = (
    "id, kind, bot, caller, chain_id, scenario, started, ended, "
    "coalesce(vtime, (SELECT max(e.vtime) FROM events e WHERE e.call_id = calls.id)), "
    "end_reason, workflows, errors, warnings, passed"
)
"""A finished call keeps its virtual duration; a running one's is read from its events."""
LAST_SEQ = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM events WHERE call_id = ?1) FROM calls WHERE id = ?1"
)
"""The last seq of a call (0 before its first event); no row for an unknown call."""


def filters(
    text: str | None, reason: str | None, has_findings: bool | None, kind: str | None
) -> tuple[str, list[object]]:
    """The WHERE clause (empty, or with a leading space) and its parameters for the filters of
    ``TranscriptStore.calls``."""
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
