"""The transcript store: one event log of every call, in SQLite (see ``store.py``).
May import: only the infrastructure (config, errors, findings, jsonutil, ids, inputs, patterns).

Reports, exports and the log view all read it; ``botemu transcript``
(``emulator/cli/transcript.py``) lists, shows and exports what it holds.

``store.py`` is the face (``TranscriptStore``) over ``connection.py`` (the locked connection and
write-behind, ``writer.py``); ``schema.py`` holds the tables and their migrations, ``queries.py``
the SQL run on them, ``records.py`` the event kinds, stored events, call summaries and
``TranscriptError``, ``liveness.py`` who writes a call and whether that writer has ended,
``explorations.py`` the explorations kept beside the calls (``botemu explore``'s graphs).

The names below are loaded on first use, so importing one submodule loads no other.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.transcripts.store import (
        DEFAULT_DB,
        CallSummary,
        EventKind,
        ExplorationSummary,
        StoredEvent,
        TranscriptError,
        TranscriptStore,
    )

__all__ = [
    "DEFAULT_DB",
    "CallSummary",
    "EventKind",
    "ExplorationSummary",
    "StoredEvent",
    "TranscriptError",
    "TranscriptStore",
]


def __getattr__(name: str) -> object:
    """The names of ``__all__``, imported from ``store.py`` when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("emulator.transcripts.store"), name)
    globals()[name] = value
    return value
