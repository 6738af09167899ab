"""Benchmark of the transcript store's appends.

Prints the cost of one append committed by itself, of one append with write-behind (what the
event loop pays, and the time until everything is committed), and the same-process baseline: a
plain ``INSERT`` of the same row into a bare SQLite table in WAL mode, one commit each. Ratios to
the baseline are steadier than absolute figures on a shared machine. The baseline's row has a
call id as long as the store's (32 hex digits: the first column of the primary key); until
2026-11-29 it had a one-character id, whose smaller index made the baseline some 10% cheaper
than the same row.

Asserts nothing about time. Run: ``python benchmarks/transcripts.py [--events 5000]``; with
``--against DIR [--rounds N]`` (a ``git archive`` of another build's ``emulator/``), both builds
in turns, their ratios side by side.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path

from support import against_options

from emulator.jsonutil import JSONObject
from emulator.transcripts.store import EventKind, TranscriptStore

PAYLOAD: JSONObject = {
    "summary": "← 200 in 3 ms",
    "status": 200,
    "headers": {"Content-Type": "application/json", "X-Platform-Chain-ID": "c" * 36},
    "body": '{"actions":[' + "x" * 600 + "]}",
}


def store_appends(path: Path, events: int, *, write_behind: bool) -> tuple[float, float]:
    """(µs per append as the caller sees it, µs per event until all are committed)."""
    with TranscriptStore(path, write_behind=write_behind) as store:
        call_id = store.start(bot="bench")
        started = time.perf_counter()
        for i in range(events):
            store.append(call_id, EventKind.HTTP_RESPONSE, PAYLOAD, vtime=i * 0.01)
        appended = time.perf_counter() - started
        store.flush()
        committed = time.perf_counter() - started
    return appended / events * 1e6, committed / events * 1e6


def baseline(path: Path, events: int) -> float:
    """µs per plain INSERT, one commit each."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE events (call_id TEXT, seq INTEGER, vtime REAL, wall REAL,"
                 " kind TEXT, payload TEXT, PRIMARY KEY (call_id, seq))")  # fmt: skip
    text = json.dumps(PAYLOAD)
    call_id = uuid.uuid4().hex  # as the store's call ids
    started = time.perf_counter()
    for i in range(events):
        conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                     (call_id, i, i * 0.01, time.time(), "http.response", text))  # fmt: skip
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed / events * 1e6


def measure(events: int) -> dict[str, float]:
    """Every figure of one run, in µs."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = baseline(root / "base.db", events)
        sync, _ = store_appends(root / "sync.db", events, write_behind=False)
        queued, committed = store_appends(root / "behind.db", events, write_behind=True)
    return {"base": base, "sync": sync, "queued": queued, "committed": committed}


def compare(args: argparse.Namespace) -> None:
    """This build and ``--against``'s in turns (``support.run_builds``): the ratios side by side."""
    import statistics
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from support import run_builds

    found = run_builds(Path(__file__), ["--events", str(args.events)], args.against, args.rounds)
    print(f"botemu transcript store: {args.rounds} rounds of each build, in turns, "
          f"{args.events} appends each")  # fmt: skip
    for name, runs in found.items():
        ratio = {k: statistics.median(r[k] / r["base"] for r in runs)
                 for k in ("sync", "queued", "committed")}  # fmt: skip
        print(f"  {name:>20}: committed each {ratio['sync']:.2f}x, write-behind caller "
              f"{ratio['queued']:.2f}x, until committed {ratio['committed']:.2f}x the plain "
              "INSERT + commit")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    against_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.events)))
        return
    if args.against:
        compare(args)
        return
    figures = measure(args.events)
    base, sync = figures["base"], figures["sync"]
    queued, committed = figures["queued"], figures["committed"]
    print(
        f"botemu transcript store, {args.events} appends of a {len(json.dumps(PAYLOAD))}-byte event"
    )
    print(f"  baseline, plain INSERT + commit:     {base:7.1f} µs")
    print(f"  append, committed each:              {sync:7.1f} µs  ({sync / base:.2f}x baseline)")
    print(
        f"  append, write-behind (caller's cost): {queued:6.1f} µs  ({queued / base:.2f}x baseline)"
    )
    print(
        f"  write-behind until all committed:    {committed:7.1f} µs  ({committed / base:.2f}x baseline)"
    )


if __name__ == "__main__":
    main()
