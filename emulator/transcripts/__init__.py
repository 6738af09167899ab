"""The transcript store: one event log of every call, in SQLite (see ``store.py``).

Reports, exports and the log view all read it; ``botemu transcript`` (``cli.py``) lists, shows and
exports what it holds.
"""

from __future__ import annotations

from emulator.transcripts.store import (
    DEFAULT_DB,
    CallSummary,
    EventKind,
    StoredEvent,
    TranscriptError,
    TranscriptStore,
)

__all__ = [
    "DEFAULT_DB",
    "CallSummary",
    "EventKind",
    "StoredEvent",
    "TranscriptError",
    "TranscriptStore",
]
