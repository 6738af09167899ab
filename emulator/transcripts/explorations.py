"""Explorations in the transcript store: ``botemu explore``'s graphs, kept beside their calls.

One row per exploration in the ``explorations`` table (schema 2, ``schema.py``): the document
``emulator.explore.report.to_json`` makes (format ``version`` 1 today; any later format is kept as
it is), as compact JSON text, with the counts a list shows (states, edges, findings by severity,
calls) and when it started. The store reads only what it counts (``bot``, ``version``, the lengths
of ``states``, ``edges`` and ``findings``, each finding's ``severity``, ``calls``) and keeps every
other member, known or not, exactly. A document is at most ``MAX_EXPLORATION_BYTES`` of JSON.

``ExplorationStore`` adds the operations to ``TranscriptStore`` (``store.py``): each is one
transaction on the store's one locked connection, like the calls' (WAL, write-behind flushed
first).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from emulator.jsonutil import JSON, dumps
from emulator.transcripts.connection import StoreConnection
from emulator.transcripts.records import TranscriptError

MAX_EXPLORATION_BYTES = 8 * 1024 * 1024
"""The largest document the store keeps, in bytes of compact UTF-8 JSON (8 MiB: about 20,000
states with their prompts; ``botemu explore``'s default bounds make far less)."""

_COLUMNS = "id, started, bot, version, states, edges, findings, errors, warnings, calls, size"
_INSERT = (
    f"INSERT INTO explorations ({_COLUMNS}, document)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS TEXT))"
)
"""The document is bound as UTF-8 bytes and made TEXT by SQLite, as an event's payload is."""


@dataclass(frozen=True, slots=True)
class ExplorationSummary:
    """One stored exploration, as a list shows it. ``started`` is wall clock (``time.time()``);
    ``version`` the document's format (None when it gave none); ``errors`` and ``warnings`` count
    its findings by severity; ``calls`` the calls it placed (None when it did not say); ``size``
    the bytes of its document."""

    id: str
    started: float
    bot: str
    version: int | None
    states: int
    edges: int
    findings: int
    errors: int
    warnings: int
    calls: int | None
    size: int

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "started": self.started,
            "bot": self.bot,
            "version": self.version,
            "states": self.states,
            "edges": self.edges,
            "findings": self.findings,
            "errors": self.errors,
            "warnings": self.warnings,
            "calls": self.calls,
            "size": self.size,
        }


def _summary(row: tuple[Any, ...]) -> ExplorationSummary:
    return ExplorationSummary(*row)


def _items(document: Mapping[str, Any], name: str) -> list[Any]:
    value = document.get(name, [])
    if not isinstance(value, list):
        raise TranscriptError(f"an exploration's {name!r} is a list, not {type(value).__name__}")
    return value


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def exploration_row(document: Mapping[str, Any], new_id: str, started: float) -> tuple[object, ...]:
    """The row of ``_INSERT`` for ``document``; ``TranscriptError`` when it is not an
    exploration (no ``bot``, a ``states``, ``edges`` or ``findings`` that is not a list), is not
    JSON, or is larger than ``MAX_EXPLORATION_BYTES``."""
    if not isinstance(document, Mapping):
        raise TranscriptError(f"an exploration is a JSON object, not {type(document).__name__}")
    bot = document.get("bot")
    if not isinstance(bot, str):
        raise TranscriptError("an exploration names its bot (a string under 'bot')")
    states, edges, findings = (_items(document, n) for n in ("states", "edges", "findings"))
    severities = [f.get("severity") if isinstance(f, dict) else None for f in findings]
    try:
        text = dumps(cast(JSON, dict(document)))
    except (TypeError, ValueError) as e:
        raise TranscriptError(f"an exploration is not JSON: {e}") from e
    if len(text) > MAX_EXPLORATION_BYTES:
        raise TranscriptError(
            f"the exploration is {len(text):,} bytes of JSON, more than the store keeps "
            f"({MAX_EXPLORATION_BYTES:,} bytes, 8 MiB): explore with a lower --max-calls"
        )
    return (new_id, started, bot, _count(document.get("version")), len(states), len(edges),
            len(findings), severities.count("error"), severities.count("warning"),
            _count(document.get("calls")), len(text), text)  # fmt: skip


class ExplorationStore(StoreConnection):
    """The exploration operations of ``TranscriptStore``."""

    _clock: Callable[[], float]

    def save_exploration(self, document: Mapping[str, Any], *, started: float | None = None) -> str:
        """Keep ``document`` (``to_json``'s graph) and return its new id (uuid4 hex).
        ``started``: when the exploration began (wall clock), now by default."""
        new_id = uuid.uuid4().hex
        when = self._clock() if started is None else float(started)
        row = exploration_row(document, new_id, when)
        with self._write() as conn:
            conn.execute(_INSERT, row)
        return new_id

    def explorations(self, *, limit: int = 50, offset: int = 0) -> list[ExplorationSummary]:
        """The explorations newest first, one page (never reading a document)."""
        if limit < 0 or offset < 0:
            raise TranscriptError(f"limit and offset must be >= 0 (got {limit}, {offset})")
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM explorations ORDER BY started DESC, rowid DESC"
                " LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        return [_summary(row) for row in rows]

    def count_explorations(self) -> int:
        with self._read() as conn:
            return int(conn.execute("SELECT count(*) FROM explorations").fetchone()[0])

    def exploration_summary(self, exploration_id: str) -> ExplorationSummary | None:
        """The exploration with this id or unique id prefix; None if none matches;
        ``TranscriptError`` if the prefix matches several."""
        found = self._find_exploration(exploration_id, _COLUMNS)
        return None if found is None else _summary(found)

    def exploration(self, exploration_id: str) -> dict[str, Any] | None:
        """The document of the exploration with this id (or unique id prefix), as it was
        saved; None if none matches; ``TranscriptError`` if the prefix matches several."""
        found = self._find_exploration(exploration_id, "document")
        return None if found is None else cast(dict[str, Any], json.loads(found[0]))

    def _find_exploration(self, exploration_id: str, columns: str) -> tuple[Any, ...] | None:
        if not exploration_id:
            return None
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {columns} FROM explorations WHERE id = ?", (exploration_id,)
            ).fetchone()
            if row is not None:
                return tuple(row)
            rows = conn.execute(
                f"SELECT {columns} FROM explorations WHERE id > ? AND id < ? LIMIT 2",
                (exploration_id, exploration_id + "\U0010ffff"),
            ).fetchall()
        if len(rows) > 1:
            raise TranscriptError(
                f"exploration id prefix {exploration_id!r} is ambiguous: give more characters",
                path=self._label,
            )
        return tuple(rows[0]) if rows else None
