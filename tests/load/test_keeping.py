"""Which calls a load run keeps: every failing call, a sample of the rest, all or none; a call
is held in memory until it ends, bounded in events."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.load import keeping
from emulator.load.keeping import KeepingStore, KeepPolicy
from emulator.transcripts.store import TranscriptStore


def call(store: KeepingStore, *, failed: bool, events: int = 3) -> str:
    call_id = store.start(bot="http://bot/api/calls", caller="8:+1")
    for n in range(events):
        store.append(call_id, "note", {"summary": f"event {n}"}, vtime=float(n))
    if failed:
        store.append(call_id, "finding", {"summary": "x", "rule": "WF-ORDER", "severity": "error"})
    store.count_workflow(call_id)
    store.finish(call_id, reason="bot hung up")
    return call_id


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("failures", KeepPolicy()),
        ("all", KeepPolicy(every=1)),
        ("none", KeepPolicy(failures=False)),
        ("sample:10", KeepPolicy(every=10)),
    ],
)
def test_policies_parse(text: str, policy: KeepPolicy) -> None:
    assert KeepPolicy.parse(text) == policy


@pytest.mark.parametrize("text", ["sample:0", "sample:", "some", "sample:x", ""])
def test_a_bad_policy_says_what_it_expected(text: str) -> None:
    with pytest.raises(ValueError, match="expected failures, sample:N"):
        KeepPolicy.parse(text)


def test_failures_are_kept_with_every_event_and_passing_calls_are_not(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as db:
        store = KeepingStore(db, KeepPolicy.parse("failures"))
        kept = call(store, failed=True)
        call(store, failed=False)
        calls = db.calls()
        assert [c.id for c in calls] == [kept]
        assert calls[0].workflows == 1 and calls[0].errors == 1
        assert [e.payload["summary"] for e in db.events(kept)][:3] == ["event 0", "event 1",
                                                                       "event 2"]  # fmt: skip
        assert store.held == {}  # nothing stays in memory once a call ends


def test_a_sample_keeps_one_passing_call_in_n(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.db") as db:
        store = KeepingStore(db, KeepPolicy.parse("sample:4"))
        for _ in range(12):
            call(store, failed=False)
        assert len(db.calls()) == 3 and store.kept == 3 and store.ended == 12


def test_none_keeps_nothing_and_needs_no_database() -> None:
    store = KeepingStore(None, KeepPolicy.parse("none"))
    call(store, failed=True)
    assert store.kept == 0 and store.ended == 1


def test_a_call_is_held_to_a_bound_and_says_what_it_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keeping, "MAX_EVENTS", 5)
    with TranscriptStore(tmp_path / "t.db") as db:
        store = KeepingStore(db, KeepPolicy.parse("all"))
        kept = call(store, failed=False, events=9)
        summaries = [e.payload["summary"] for e in db.events(kept)]
        assert len(summaries) == 6
        assert (
            summaries[-1]
            == "4 more events of this call were not kept (a load run holds at most 5 per call)"
        )
