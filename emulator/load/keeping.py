"""Which calls of a load run the transcript store keeps (``--keep``): every failing call, and a
sample of the rest (``sample:N``: one passing call in N), or all of them, or none. A call's
events are held in memory while it runs (at most ``MAX_EVENTS``), and written to the store only
when it ends and is kept, so the store is never the bottleneck of a load run; a kept call opens
in the log view as usual.

No gevent and no Locust here: the store is a plain ``CallStore``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from emulator.calling.calllog import CallStore
from emulator.jsonutil import JSON

MAX_EVENTS = 2_000
"""Events held per running call; past it the call keeps its first events and a note."""
_SAMPLE = re.compile(r"^sample:(\d+)$")


@dataclass(frozen=True, slots=True)
class KeepPolicy:
    """``failures`` (the default), ``sample:N``, ``all`` or ``none``."""

    failures: bool = True
    every: int | None = None
    """Keep one passing call in ``every`` (1: all of them); None: no passing call."""

    @classmethod
    def parse(cls, text: str) -> KeepPolicy:
        if text == "failures":
            return cls()
        if text == "all":
            return cls(every=1)
        if text == "none":
            return cls(failures=False)
        match = _SAMPLE.match(text)
        if match is None or int(match.group(1)) < 1:
            raise ValueError(f"--keep {text!r}: expected failures, sample:N (N >= 1), all or none")
        return cls(every=int(match.group(1)))


@dataclass
class _Held:
    start: dict[str, Any]
    events: list[tuple[str, dict[str, JSON], float | None, bytes | None]] = field(
        default_factory=list
    )
    workflows: int = 0
    failed: bool = False
    dropped: int = 0


class KeepingStore:
    """A ``CallStore`` that holds each call in memory and writes the kept ones to ``store``."""

    def __init__(self, store: CallStore | None, policy: KeepPolicy) -> None:
        self.store = store
        self.policy = policy
        self.held: dict[str, _Held] = {}
        self.passed = 0
        self.kept = 0
        self.ended = 0

    def start(self, *, bot: str, kind: str = "call", call_id: str | None = None,
              caller: str | None = None, chain_id: str | None = None,
              scenario: str | None = None) -> str:  # fmt: skip
        new_id = call_id or uuid.uuid4().hex
        self.held[new_id] = _Held({"bot": bot, "kind": kind, "call_id": new_id, "caller": caller,
                                   "chain_id": chain_id, "scenario": scenario})  # fmt: skip
        return new_id

    def append(self, call_id: str, kind: str, payload: dict[str, JSON], *,
               vtime: float | None = None, blob: bytes | None = None) -> int:  # fmt: skip
        held = self.held[call_id]
        if kind == "finding" and payload.get("severity") == "error":
            held.failed = True
        if len(held.events) < MAX_EVENTS:
            held.events.append((kind, payload, vtime, blob))
        else:
            held.dropped += 1
        return len(held.events) + held.dropped

    def count_workflow(self, call_id: str) -> None:
        self.held[call_id].workflows += 1

    def finish(self, call_id: str, *, reason: str, passed: bool | None = None) -> None:
        held = self.held.pop(call_id)
        self.ended += 1
        if not self.keeps(held):
            return
        self.kept += 1
        if self.store is not None:
            self.write(held, reason, passed)

    def keeps(self, held: _Held) -> bool:
        if held.failed:
            return self.policy.failures
        self.passed += 1
        every = self.policy.every
        return every is not None and (self.passed - 1) % every == 0

    def write(self, held: _Held, reason: str, passed: bool | None) -> None:
        assert self.store is not None
        call_id = self.store.start(**held.start)
        for kind, payload, vtime, blob in held.events:
            self.store.append(call_id, kind, payload, vtime=vtime, blob=blob)
        if held.dropped:
            self.store.append(call_id, "note", {
                "summary": f"{held.dropped} more events of this call were not kept "
                f"(a load run holds at most {MAX_EVENTS} per call)"})  # fmt: skip
        for _ in range(held.workflows):
            self.store.count_workflow(call_id)
        self.store.finish(call_id, reason=reason, passed=passed)
