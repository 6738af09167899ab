"""The database of examples: the failing callers of earlier searches, tried first by the next.

It is Hypothesis's directory database (``DirectoryBasedExampleDatabase``), keyed by the bot's
URL, ``--max-steps`` and ``--faults``. Each value is one failing caller, as JSON: ``{"version":
2, "caller": inline steps, "faults": a scenario's faults}``. A value that does not read as one
(a caller saved by an older search) is dropped; a caller that no longer fails is dropped once
tried, so that a fixed bug leaves the database.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase

from emulator.calling.caller import CallerScript, Step, describe
from emulator.calling.faults import PlatformFaults
from emulator.errors import CallerScriptError
from emulator.fuzz.scenarios import faults_data

VERSION = 2
MAX_EXAMPLES = 100
"""At most this many callers are tried from the database (the newest are not lost: a failure
found again is saved again)."""


@dataclass(frozen=True)
class Example:
    value: bytes
    steps: tuple[Step, ...]
    faults: PlatformFaults


class Examples:
    """The saved callers of one bot and one kind of search."""

    def __init__(self, folder: Path, bot: str, max_steps: int, faults: bool) -> None:
        self.database = DirectoryBasedExampleDatabase(str(folder))
        what = f"{bot}\0{max_steps}\0{faults}"
        self.key = hashlib.sha256(what.encode()).digest()

    def saved(self) -> list[Example]:
        """The callers saved, in a fixed order; the unreadable ones are dropped."""
        found: list[Example] = []
        for value in sorted(self.database.fetch(self.key)):
            example = read(value)
            if example is None:
                self.database.delete(self.key, value)
            elif len(found) < MAX_EXAMPLES:
                found.append(example)
        return found

    def save(self, steps: tuple[Step, ...], faults: PlatformFaults) -> None:
        self.database.save(self.key, value(steps, faults))

    def drop(self, example: Example) -> None:
        self.database.delete(self.key, example.value)


def value(steps: tuple[Step, ...], faults: PlatformFaults) -> bytes:
    caller = "; ".join(describe(s) for s in steps)
    data = {"version": VERSION, "caller": caller, "faults": faults_data(faults)}
    return json.dumps(data, sort_keys=True).encode()


def read(raw: bytes) -> Example | None:
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        steps = CallerScript.from_inline(str(data["caller"])).steps
        faults = data.get("faults") or {}
        made = PlatformFaults(
            fail_callbacks=tuple(int(n) for n in faults.get("fail_callback", ())),
            duplicate_callbacks=tuple(int(n) for n in faults.get("duplicate_callback", ())),
            unknown_fields=bool(faults.get("unknown_fields")),
            unknown_enums=bool(faults.get("unknown_enums")),
        )
    except (ValueError, KeyError, TypeError, AttributeError, CallerScriptError):
        return None
    return Example(raw, steps, made)
