"""Helper for the kill test: append events to a transcript store until killed.

``python tests/transcripts/writer_process.py DB [--write-behind]`` prints ``call ID`` once, then
the seq of every event as soon as its commit returns (one per line, flushed). With
``--write-behind`` it appends in batches of 25 and prints a batch's seqs once ``flush()`` says they
are committed. It stops by itself after
``MAX_EVENTS`` events or ``MAX_SECONDS``, so an orphan never runs for long.
"""

from __future__ import annotations

import sys
import time

from emulator.jsonutil import JSON
from emulator.transcripts.store import EventKind, TranscriptStore

MAX_EVENTS = 200_000
MAX_SECONDS = 60.0
AUDIO = bytes(range(256)) * 64  # 16 KiB, so some commits are large


def main(path: str, write_behind: bool = False) -> int:
    deadline = time.monotonic() + MAX_SECONDS
    store = TranscriptStore(path, write_behind=write_behind)
    pending: list[int] = []
    call_id = store.start(bot="writer", caller="+15550100")
    print(f"call {call_id}", flush=True)
    for i in range(MAX_EVENTS):
        if time.monotonic() > deadline:
            break
        if i % 10 == 0:
            store.count_workflow(call_id)
        blob = AUDIO if i % 7 == 0 else None
        payload: dict[str, JSON] = {
            "summary": f"event {i}",
            "headers": {"Content-Type": "application/json"},
            "body": "x" * (i % 500),
        }
        seq = store.append(call_id, EventKind.NOTE, payload, vtime=i * 0.01, blob=blob)
        if not write_behind:
            print(seq, flush=True)
            continue
        pending.append(seq)
        if len(pending) == 25:
            store.flush()
            print("\n".join(str(p) for p in pending), flush=True)
            pending.clear()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--write-behind" in sys.argv[2:]))
