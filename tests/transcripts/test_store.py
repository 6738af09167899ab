"""The transcript store, through its public API; one test kills a real writer process."""

from __future__ import annotations

import argparse
import base64
import io
import os
import queue
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from emulator.errors import BotemuError
from emulator.jsonutil import JSON
from emulator.transcripts.store import (
    DEFAULT_DB,
    CallSummary,
    EventKind,
    TranscriptError,
    TranscriptStore,
    writer_gone,
    writer_identity,
)

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).resolve().parent / "writer_process.py"


class Clock:
    """Wall clock for tests: 1000.0, 1001.0, 1002.0, ... one step per reading."""

    def __init__(self) -> None:
        self.now = 999.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    with TranscriptStore(tmp_path / "t.db", clock=Clock()) as s:
        yield s


# --- opening -----------------------------------------------------------------------------------


def test_creates_parent_dirs_and_a_wal_database(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "t.db"
    with TranscriptStore(path):
        pass
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    finally:
        conn.close()


def test_default_path_is_under_dot_botemu() -> None:
    assert DEFAULT_DB == Path(".botemu") / "transcripts.db"


def test_transcript_error_is_a_botemu_error() -> None:
    assert issubclass(TranscriptError, BotemuError)


def test_reopening_keeps_calls_and_continues_seqs(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path) as first:
        call_id = first.start(bot="b")
        first.append(call_id, EventKind.NOTE, {"summary": "one"})
    with TranscriptStore(path) as second:
        assert second.append(call_id, EventKind.NOTE, {"summary": "two"}) == 2
        assert [e.payload["summary"] for e in second.events(call_id)] == ["one", "two"]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\x00\xffgarbage" * 512, id="garbage-bytes"),
        pytest.param(b"SQLite format 3\x00" + b"\x01" * 200, id="truncated-header"),
        pytest.param(b"hello, I am text\n" * 100, id="text-file"),
    ],
)
def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "not.db"
    path.write_bytes(content)
    with pytest.raises(TranscriptError) as info:
        TranscriptStore(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert "not a botemu transcript database" in message
    assert path.read_bytes() == content  # untouched


def test_another_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(TranscriptError, match="another SQLite database"):
        TranscriptStore(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        conn.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    TranscriptStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    with pytest.raises(TranscriptError, match="newer botemu"):
        TranscriptStore(path)


def test_a_directory_cannot_be_opened(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="cannot open"):
        TranscriptStore(tmp_path)


def test_in_memory_store_works() -> None:
    with TranscriptStore(":memory:") as s:
        call_id = s.start(bot="b")
        assert s.append(call_id, EventKind.NOTE, {}) == 1


def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    s = TranscriptStore(tmp_path / "t.db")
    s.close()
    s.close()  # twice is fine
    with pytest.raises(TranscriptError, match="closed"):
        s.calls()


def test_a_closed_store_refuses_an_event_for_a_call_it_started(tmp_path: Path) -> None:
    """The append committed at once takes the lock itself (not ``_read``): still refused."""
    s = TranscriptStore(tmp_path / "t.db")
    call_id = s.start(bot="b")
    assert s.append(call_id, EventKind.NOTE, {}) == 1
    s.close()
    with pytest.raises(TranscriptError, match="closed"):
        s.append(call_id, EventKind.NOTE, {})


# --- writing -----------------------------------------------------------------------------------


def test_start_returns_a_uuid_hex_or_the_given_id(store: TranscriptStore) -> None:
    generated = store.start(bot="b")
    assert len(generated) == 32
    int(generated, 16)
    assert store.start(bot="b", call_id="mine") == "mine"


def test_start_with_an_existing_id_fails(store: TranscriptStore) -> None:
    store.start(bot="b", call_id="dup")
    with pytest.raises(TranscriptError, match="already exists"):
        store.start(bot="b", call_id="dup")


def test_seq_counts_per_call(store: TranscriptStore) -> None:
    a = store.start(bot="b")
    b = store.start(bot="b")
    seqs = [
        store.append(a, EventKind.NOTE, {"n": 1}),
        store.append(a, EventKind.NOTE, {"n": 2}),
        store.append(b, EventKind.NOTE, {"n": 1}),
        store.append(a, EventKind.NOTE, {"n": 3}),
    ]
    assert seqs == [1, 2, 1, 3]
    assert [(e.seq, e.payload["n"]) for e in store.events(a)] == [(1, 1), (2, 2), (3, 3)]
    assert [e.seq for e in store.events(b)] == [1]


def test_events_keep_every_field_and_follow_after(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    headers: dict[str, JSON] = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Odd": "  spaced  ",
    }
    body = '{"a": 1,  "b": "é"}'
    store.append(call_id, EventKind.HTTP_REQUEST, {"headers": headers, "body": body}, vtime=0.5)
    store.append(call_id, "custom.kind", {"summary": "x"})
    first, second = store.events(call_id)
    assert first.call_id == call_id
    assert first.kind == "http.request"
    assert first.vtime == 0.5
    assert first.wall > 0
    assert first.payload == {"headers": headers, "body": body}
    assert first.has_blob is False
    assert second.kind == "custom.kind"
    assert second.vtime is None
    assert [e.seq for e in store.events(call_id, after=1)] == [2]
    assert store.events(call_id, after=2) == []


def test_payload_with_a_lone_surrogate_round_trips(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    store.append(call_id, EventKind.NOTE, {"text": "a\ud800b"})
    assert store.events(call_id)[0].payload == {"text": "a\ud800b"}


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({"x": object()}, id="object"),
        pytest.param(["not", "an", "object"], id="array"),
    ],
)
def test_a_payload_that_is_not_a_json_object_is_refused(
    store: TranscriptStore, payload: object
) -> None:
    call_id = store.start(bot="b")
    with pytest.raises(TranscriptError, match="payload"):
        store.append(call_id, EventKind.NOTE, payload)  # type: ignore[arg-type]


def test_a_non_finite_number_is_stored_as_null(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    store.append(call_id, EventKind.NOTE, {"x": float("nan"), "y": float("inf")})
    assert store.events(call_id)[0].payload == {"x": None, "y": None}


def test_an_integer_beyond_64_bits_is_kept_exactly(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    store.append(call_id, EventKind.NOTE, {"n": 10**30})
    assert store.events(call_id)[0].payload == {"n": 10**30}


def test_blobs_are_kept_as_bytes(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    audio = bytes(range(256)) * 40
    store.append(call_id, EventKind.NOTE, {"summary": "no audio"})
    seq = store.append(call_id, EventKind.CALLER, {"summary": "talks"}, blob=audio)
    store.append(call_id, EventKind.CALLER, {"summary": "empty"}, blob=b"")
    assert store.blob(call_id, seq) == audio
    assert store.blob(call_id, 1) is None
    assert store.blob(call_id, 3) == b""
    assert store.blob(call_id, 99) is None
    assert store.blob("unknown", 1) is None
    assert [e.has_blob for e in store.events(call_id)] == [False, True, True]


def test_vtime_of_a_call_is_its_latest_event_vtime(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    assert _get(store, call_id).vtime is None
    store.append(call_id, EventKind.NOTE, {}, vtime=1.25)
    store.append(call_id, EventKind.NOTE, {})  # no vtime: unchanged
    assert _get(store, call_id).vtime == 1.25
    store.append(call_id, EventKind.NOTE, {}, vtime=7.5)
    assert _get(store, call_id).vtime == 7.5


def test_finish_counts_findings_by_severity(store: TranscriptStore) -> None:
    call_id = store.start(bot="b", caller="+1555", scenario="menu", chain_id="chain-1")
    for severity in ["error", "warning", "warning", "info", "error"]:
        store.append(call_id, EventKind.FINDING, {"rule": "R", "severity": severity})
    store.append(call_id, EventKind.NOTE, {"severity": "error"})  # not a finding
    store.count_workflow(call_id)
    store.count_workflow(call_id)
    running = _get(store, call_id)
    assert running.ended is None
    assert running.end_reason is None
    assert running.passed is None
    store.finish(call_id, reason="caller hung up", passed=False)
    done = _get(store, call_id)
    assert (done.errors, done.warnings, done.workflows) == (2, 2, 2)
    assert done.end_reason == "caller hung up"
    assert done.passed is False
    assert done.ended is not None
    assert done.ended > done.started
    assert (done.caller, done.scenario, done.chain_id, done.kind) == (
        "+1555",
        "menu",
        "chain-1",
        "call",
    )


def test_finish_with_passed_true_and_no_verdict(store: TranscriptStore) -> None:
    a = store.start(bot="b")
    b = store.start(bot="b")
    store.finish(a, reason="bot hung up", passed=True)
    store.finish(b, reason="bot hung up")
    assert _get(store, a).passed is True
    assert _get(store, b).passed is None


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda s: s.append("nope", EventKind.NOTE, {}), id="append"),
        pytest.param(lambda s: s.count_workflow("nope"), id="count_workflow"),
        pytest.param(lambda s: s.finish("nope", reason="x"), id="finish"),
        pytest.param(lambda s: s.events("nope"), id="events"),
        pytest.param(lambda s: s.export("nope"), id="export"),
    ],
)
def test_an_unknown_call_id_is_an_error(
    store: TranscriptStore, operation: Callable[[TranscriptStore], object]
) -> None:
    store.start(bot="b", call_id="nopeX")  # a longer id does not make "nope" known
    with pytest.raises(TranscriptError, match="no call with id 'nope'"):
        operation(store)


def test_an_unknown_id_leaves_no_event_behind(store: TranscriptStore) -> None:
    with pytest.raises(TranscriptError):
        store.append("ghost", EventKind.NOTE, {})
    call_id = store.start(bot="b", call_id="ghost")
    assert store.events(call_id) == []


def test_concurrent_appends_from_two_threads_keep_seqs_unique(store: TranscriptStore) -> None:
    call_id = store.start(bot="b")
    results: list[list[int]] = [[], []]
    barrier = threading.Barrier(2, timeout=10)

    def work(index: int) -> None:
        barrier.wait()
        for i in range(300):
            results[index].append(store.append(call_id, EventKind.NOTE, {"t": index, "i": i}))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert sorted(results[0] + results[1]) == list(range(1, 601))
    assert all(r == sorted(r) for r in results)
    assert [e.seq for e in store.events(call_id)] == list(range(1, 601))


def test_two_stores_on_one_file_keep_seqs_unique(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path) as one, TranscriptStore(path) as two:
        call_id = one.start(bot="b")
        seqs: list[int] = []
        for i in range(20):
            seqs.append((one if i % 2 else two).append(call_id, EventKind.NOTE, {}))
        assert seqs == list(range(1, 21))


# --- reading -----------------------------------------------------------------------------------


def _get(store: TranscriptStore, call_id: str) -> CallSummary:
    summary = store.call(call_id)
    assert summary is not None
    return summary


def _fill(store: TranscriptStore) -> list[str]:
    """Ten calls, oldest first: bots alpha/beta alternate; every third has an error finding;
    even ones ended by the caller, odd ones by the bot; the last is a conversation."""
    ids = []
    for i in range(10):
        kind = "conversation" if i == 9 else "call"
        call_id = store.start(
            bot="alpha" if i % 2 == 0 else "beta",
            caller=f"+1555000{i}",
            kind=kind,
            call_id=f"{i:02d}-call",
        )
        if i % 3 == 0:
            store.append(call_id, EventKind.FINDING, {"severity": "error"})
        store.finish(call_id, reason="caller hung up" if i % 2 == 0 else "bot hung up")
        ids.append(call_id)
    return ids


def test_calls_are_newest_first(store: TranscriptStore) -> None:
    ids = _fill(store)
    assert [c.id for c in store.calls()] == ids[::-1]


def test_calls_started_at_the_same_instant_are_in_reverse_insertion_order(
    tmp_path: Path,
) -> None:
    with TranscriptStore(tmp_path / "t.db", clock=lambda: 5.0) as s:
        ids = [s.start(bot="b", call_id=name) for name in ["zz", "aa", "mm"]]
        assert [c.id for c in s.calls()] == ids[::-1]


def test_pages_cover_every_call_once(store: TranscriptStore) -> None:
    ids = _fill(store)
    pages = [store.calls(limit=3, offset=o) for o in range(0, 12, 3)]
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [c.id for page in pages for c in page] == ids[::-1]
    assert store.calls(limit=3, offset=100) == []
    assert store.calls(limit=0) == []


def test_negative_limit_or_offset_is_an_error(store: TranscriptStore) -> None:
    with pytest.raises(TranscriptError, match="limit and offset"):
        store.calls(limit=-1)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        pytest.param({}, list(range(10)), id="none"),
        pytest.param({"text": "BETA"}, [1, 3, 5, 7, 9], id="text-bot-any-case"),
        pytest.param({"text": "5550007"}, [7], id="text-caller"),
        pytest.param({"text": "04-c"}, [4], id="text-id"),
        pytest.param({"text": "bot hung"}, [1, 3, 5, 7, 9], id="text-reason"),
        pytest.param({"text": "%"}, [], id="text-percent-is-literal"),
        pytest.param({"text": "_"}, [], id="text-underscore-is-literal"),
        pytest.param({"reason": "caller hung up"}, [0, 2, 4, 6, 8], id="reason"),
        pytest.param({"reason": "caller"}, [], id="reason-is-exact"),
        pytest.param({"has_findings": True}, [0, 3, 6, 9], id="has-findings"),
        pytest.param({"has_findings": False}, [1, 2, 4, 5, 7, 8], id="no-findings"),
        pytest.param({"kind": "conversation"}, [9], id="kind"),
        pytest.param(
            {"text": "alpha", "has_findings": True, "reason": "caller hung up"},
            [0, 6],
            id="combined",
        ),
    ],
)
def test_filters(store: TranscriptStore, filters: dict[str, object], expected: list[int]) -> None:
    ids = _fill(store)
    want = [ids[i] for i in reversed(expected)]
    assert [c.id for c in store.calls(**filters)] == want  # type: ignore[arg-type]
    assert store.count(**filters) == len(want)  # type: ignore[arg-type]


def test_a_warning_counts_as_a_finding_and_info_does_not(store: TranscriptStore) -> None:
    warned = store.start(bot="b")
    informed = store.start(bot="b")
    store.append(warned, EventKind.FINDING, {"severity": "warning"})
    store.append(informed, EventKind.FINDING, {"severity": "info"})
    assert [c.id for c in store.calls(has_findings=True)] == [warned]
    # counted as they are appended, so a running call shows them too
    assert (_get(store, warned).errors, _get(store, warned).warnings) == (0, 1)


def test_call_accepts_a_unique_prefix(store: TranscriptStore) -> None:
    for name in ["abc123", "abd456", "ab"]:
        store.start(bot="b", call_id=name)
    assert _get(store, "abc").id == "abc123"
    assert _get(store, "abd4").id == "abd456"
    assert _get(store, "ab").id == "ab"  # an exact id wins over being a prefix
    assert store.call("abe") is None
    assert store.call("") is None
    assert store.call("abc1234") is None


def test_an_ambiguous_prefix_is_an_error(store: TranscriptStore) -> None:
    store.start(bot="b", call_id="abc1")
    store.start(bot="b", call_id="abc2")
    with pytest.raises(TranscriptError, match="ambiguous"):
        store.call("abc")


def test_export_holds_the_call_and_every_event(store: TranscriptStore) -> None:
    call_id = store.start(bot="b", caller="+1555")
    store.append(call_id, EventKind.CALL_START, {"summary": "incoming call"}, vtime=0.0)
    store.append(call_id, EventKind.CALLER, {"summary": "says hi"}, vtime=1.0, blob=b"\x00\x01\xff")
    store.finish(call_id, reason="bot hung up", passed=True)
    document = store.export(call_id)
    summary = document["call"]
    assert isinstance(summary, dict)
    assert summary == _get(store, call_id).to_json()
    assert summary["end_reason"] == "bot hung up"
    events = document["events"]
    assert isinstance(events, list)
    assert [e["seq"] for e in events if isinstance(e, dict)] == [1, 2]
    first, second = events
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["payload"] == {"summary": "incoming call"}
    assert "blob_base64" not in first
    assert isinstance(second["blob_base64"], str)
    assert base64.b64decode(second["blob_base64"]) == b"\x00\x01\xff"
    assert set(first) == {"seq", "vtime", "wall", "kind", "payload"}


# --- a real kill -9 ----------------------------------------------------------------------------


def _reader(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [pytest.param([], id="commit-per-append"), pytest.param(["--write-behind"], id="write-behind")],
)
def test_kill_9_loses_nothing_that_was_committed(tmp_path: Path, mode: list[str]) -> None:
    path = tmp_path / "killed.db"
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), *mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        call_id = ""
        printed: list[int] = []
        while len(printed) < 200:
            line = lines.get(timeout=30)
            assert line is not None, "the writer stopped early"
            if line.startswith("call "):
                call_id = line.split()[1]
            else:
                printed.append(int(line))
        proc.kill()  # SIGKILL, somewhere in the middle of an append
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -9
    assert call_id

    with TranscriptStore(path) as s:
        stored = [e.seq for e in s.events(call_id)]
        assert set(printed) <= set(stored)
        assert stored == list(range(1, len(stored) + 1))  # no holes, nothing half-written
        next_seq = s.append(call_id, EventKind.NOTE, {"summary": "after the kill"})
        assert next_seq == len(stored) + 1
        assert s.events(call_id, after=len(stored))[0].payload == {"summary": "after the kill"}
        assert s.blob(call_id, 1) == bytes(range(256)) * 64
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


# --- a call whose writer is gone ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [pytest.param([], id="commit-per-append"), pytest.param(["--write-behind"], id="write-behind")],
)
def test_a_call_killed_midway_is_marked_interrupted(
    tmp_path: Path, mode: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A real writer process, killed with SIGKILL in the middle of a call: while it lives, a
    store opened beside it leaves its call running; once it is gone, the next open ends the call
    as ``interrupted`` (at its last event, with a ``call.end`` event saying why), and
    ``botemu transcript list`` shows it. A finished call is left alone."""
    path = tmp_path / "killed.db"
    with TranscriptStore(path) as s:
        done = s.start(bot="earlier")
        s.finish(done, reason="caller hung up", passed=True)
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), *mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        call_id, printed = "", 0
        while printed < 50:
            line = lines.get(timeout=30)
            assert line is not None, "the writer stopped early"
            if line.startswith("call "):
                call_id = line.split()[1]
            else:
                printed += 1
        with TranscriptStore(path) as beside:  # the writer is alive: its call runs
            assert beside.interrupted == []
            running = beside.call(call_id)
            assert running is not None and running.end_reason is None and running.ended is None
        proc.kill()  # SIGKILL, in the middle of the call
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -9

    with TranscriptStore(path) as s:
        assert s.interrupted == [call_id]
        call = s.call(call_id)
        assert call is not None and call.end_reason == "interrupted" and call.passed is None
        events = s.events(call_id)
        last = events[-1]
        assert last.kind == EventKind.CALL_END and last.payload["reason"] == "interrupted"
        assert f"pid {proc.pid}" in str(last.payload["summary"])
        assert call.ended == events[-2].wall  # its last sign of life
        assert call.vtime == max(e.vtime for e in events if e.vtime is not None)
        earlier = s.call(done)
        assert earlier is not None and earlier.end_reason == "caller hung up"
    with TranscriptStore(path) as again:  # marked once
        assert again.interrupted == []
        assert len(again.events(call_id)) == len(events)

    from emulator.cli.transcript import register

    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["transcript", "list", "--db", str(path)])
    out = io.StringIO()
    assert args.handler(args, out) == 0
    row = next(line for line in out.getvalue().splitlines() if line.startswith(call_id[:12]))
    assert "interrupted" in row


def _running_call(path: Path, call_id: str, pid: int | None, start: str | None) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "INSERT INTO calls (id, kind, bot, started, writer_pid, writer_start)"
            " VALUES (?, 'call', 'bot', 1000.0, ?, ?)",
            (call_id, pid, start),
        )
        conn.commit()
    finally:
        conn.close()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_recycled_pid_is_not_taken_for_the_writer(tmp_path: Path) -> None:
    """The writer is its pid and its start time: this very process, recorded with another
    start time (a writer whose pid was given to this process since), is gone; recorded as
    itself, it is alive. A call with no writer recorded (an older botemu) is left running."""
    path = tmp_path / "t.db"
    TranscriptStore(path).close()
    pid, start = writer_identity()
    assert start.startswith("linux/") and not writer_gone(pid, start)
    other_start = start.rsplit("/", 1)[0] + "/1"
    _running_call(path, "recycled", pid, other_start)
    _running_call(path, "alive", pid, start)
    _running_call(path, "old", None, None)
    _running_call(path, "unknown", pid, "someday/a format of a newer botemu")
    with TranscriptStore(path) as s:
        assert s.interrupted == ["recycled"]
        assert {c.id: c.end_reason for c in s.calls()} == {
            "recycled": "interrupted",
            "alive": None,
            "old": None,
            "unknown": None,
        }
        recycled = s.call("recycled")
        assert recycled is not None and recycled.ended == 1000.0  # no event: when it started


def test_a_dead_writer_is_gone_and_an_unknowable_one_is_not(tmp_path: Path) -> None:
    """A pid with no process (on this host) is gone, in both forms of start id; another host,
    another boot's container namespace or an unknown form cannot be told, so they stay."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=30)
    host = socket.gethostname()
    assert writer_gone(dead.pid, f"host/{host}/run")
    assert not writer_gone(dead.pid, f"host/not-{host}/run")
    assert not writer_gone(os.getpid(), f"host/{host}/run")
    assert not writer_gone(dead.pid, "later/anything")
    if Path("/proc/self/stat").exists():
        pid, start = writer_identity()
        _, boot, namespace, started = start.split("/")
        assert writer_gone(dead.pid, start)
        assert writer_gone(pid, f"linux/another-boot/{namespace}/{started}")
        assert not writer_gone(dead.pid, f"linux/{boot}/pid:[1]/{started}")


OLD_SCHEMA = """
CREATE TABLE calls (id TEXT PRIMARY KEY, kind TEXT NOT NULL, bot TEXT NOT NULL, caller TEXT,
    chain_id TEXT, scenario TEXT, started REAL NOT NULL, ended REAL, vtime REAL, end_reason TEXT,
    workflows INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0, passed INTEGER, last_seq INTEGER NOT NULL DEFAULT 0);
CREATE TABLE events (call_id TEXT NOT NULL, seq INTEGER NOT NULL, vtime REAL, wall REAL NOT NULL,
    kind TEXT NOT NULL, payload TEXT NOT NULL, has_blob INTEGER NOT NULL DEFAULT 0, blob BLOB,
    PRIMARY KEY (call_id, seq));
INSERT INTO calls (id, kind, bot, started) VALUES ('old-running', 'call', 'bot', 1000.0);
PRAGMA application_id=1651471461;
PRAGMA user_version=1;
"""


def test_a_database_from_before_writers_gains_the_columns_and_keeps_its_calls(
    tmp_path: Path,
) -> None:
    """A schema-1 file written before calls recorded their writer is migrated on open (the two
    columns and the index are added, with the explorations table of schema 2); its running call
    has no writer to check, and is left running."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    conn.close()
    with TranscriptStore(path) as s:
        assert s.interrupted == []
        old = s.call("old-running")
        assert old is not None and old.end_reason is None
        new = s.start(bot="new")
        s.append(new, EventKind.NOTE, {"summary": "hello"})
    conn = sqlite3.connect(path)
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
        assert {"writer_pid", "writer_start"} <= columns
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        pid, start = conn.execute(
            "SELECT writer_pid, writer_start FROM calls WHERE id = ?", (new,)
        ).fetchone()
        assert (pid, start) == writer_identity()
    finally:
        conn.close()


def test_botemu_write_behind_0_commits_each_event_before_append_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BOTEMU_WRITE_BEHIND=0`` turns write-behind off for every store (what ``botemu serve``
    needs to commit a connector exchange before it answers): another connection sees each event
    as soon as ``append`` returns, with no flush."""
    monkeypatch.setenv("BOTEMU_WRITE_BEHIND", "0")
    path = tmp_path / "t.db"
    with TranscriptStore(path, write_behind=True) as s:
        assert s._writer is None  # no writer thread: nothing is queued
        call_id = s.start(bot="bot")
        s.append(call_id, EventKind.NOTE, {"summary": "committed"})
        other = sqlite3.connect(path)
        try:
            assert other.execute("SELECT count(*) FROM events").fetchone() == (1,)
        finally:
            other.close()
