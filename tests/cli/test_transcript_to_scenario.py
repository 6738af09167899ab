"""``botemu transcript to-scenario``: calls placed with ``botemu call`` against the reference IVR
bot (its own process), written as scenario files, checked with ``botemu scenario check`` and run
with ``botemu test`` against the same bot (they pass) and a changed one (they fail, naming the
expectation's line)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from emulator.cli import main
from emulator.replay import convert
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.support import ivr_bot, served_bot

ROOT = Path(__file__).resolve().parent.parent.parent


def replay_bot(kind: str) -> AbstractContextManager[str]:
    """A bot of ``tests/bots/replay_bots.py`` in its own process; its calling URL."""
    return served_bot("replay_bots", kind)


@pytest.fixture(scope="module")
def bot_url() -> Iterator[str]:
    with ivr_bot() as url:
        yield url


def place(bot_url: str, db: Path, script: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["call", "--bot", bot_url, "--caller", script, "--db", str(db), "--seed", "2"])
    capsys.readouterr()
    assert code == 0
    with TranscriptStore(db) as store:
        return store.calls(limit=1)[0].id


def to_scenario(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["transcript", "to-scenario", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    ["press 1; press 1234#", "press 7; listen; press 3; talk 3s then #", "silence 6s; say support; "
     "press 88; silence 4s", "press 2; hangup during recognize after 1.5s"],
    ids=["menu", "wrong-key-and-voicemail", "reprompt-speech-digits", "hangup-mid-prompt"],
)  # fmt: skip
def test_a_call_becomes_a_scenario_that_checks_and_passes_against_the_same_bot(
    bot_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str
) -> None:
    db, file = tmp_path / "t.db", tmp_path / "replay.yaml"
    call_id = place(bot_url, db, script, capsys)
    code, out, err = to_scenario(capsys, call_id[:10], "--db", str(db), "-o", str(file))
    assert (code, out) == (0, "")
    assert err == f"wrote {file} (replays call {call_id})\n"
    assert main(["scenario", "check", str(file)]) == 0
    assert capsys.readouterr().out == f"{file}: ok\n"
    code = main(["test", "--bot", bot_url, "--db", str(tmp_path / "replay.db"), str(file)])
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()


@pytest.mark.slow
def test_the_replay_fails_against_a_changed_bot_naming_the_line(
    bot_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file = tmp_path / "t.db", tmp_path / "menu.yaml"
    call_id = place(bot_url, db, "press 1; press 1234#", capsys)
    assert to_scenario(capsys, call_id, "--db", str(db), "-o", str(file))[0] == 0
    lines = file.read_text().splitlines()
    prompts = 1 + lines.index("  prompts:")
    outcome = 1 + next(i for i, line in enumerate(lines) if "index: 0}" in line)
    with replay_bot("swapped") as changed:
        code = main(["test", "--bot", changed, "--db", str(tmp_path / "r.db"), str(file)])
    out = capsys.readouterr().out
    assert code == 1
    assert f"{file}:{prompts}" in out and f"{file}:{outcome}" in out
    assert "[EXP-PROMPTS]" in out and "(item 2 of 7, in order) after the ones before it" in out
    assert "[EXP-OUTCOME]" in out
    assert "expected: outcome #0 to be recognizeOutcome success with completion reason " in out
    assert "actual:   recognizeOutcome success dtmfOptionMatched choice=support" in out


def test_loose_is_the_default_and_strict_keeps_prompts_literal(
    bot_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    call_id = place(bot_url, db, "press 2; press 42#", capsys)
    loose = to_scenario(capsys, call_id, "--db", str(db))[1]
    assert to_scenario(capsys, call_id, "--db", str(db), "--loose")[1] == loose
    strict = to_scenario(capsys, call_id, "--db", str(db), "--strict")[1]
    assert '{equals: "42"}' in strict and r'{matches: "^\\+?\\d[\\d,.\\s-]*$"}' in loose
    assert "duration: {min:" in strict and "duration" not in loose
    assert loose.splitlines()[0].startswith("# yaml-language-server: $schema=")
    assert f"# Replay of call {call_id}" in loose


def test_mask_adds_a_pattern(
    bot_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    call_id = place(bot_url, db, "hangup during playPrompt after 1s", capsys)
    out = to_scenario(capsys, call_id, "--db", str(db), "--mask", "demo")[1]
    assert '{matches: "^Welcome to the botemu (?i:demo) line\\\\.$"}' in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["zzz"], "botemu transcript: no call matches 'zzz' in "),
        (["--mask", "(", "x"], "botemu transcript: --mask: mask pattern '(': "),
    ],
    ids=["unknown-id", "bad-mask"],
)
def test_usage_errors_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        store.start(bot="ivr")
    code, out, err = to_scenario(capsys, *argv, "--db", str(db))
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_database_a_running_call_and_strict_with_loose_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = to_scenario(capsys, "x", "--db", str(tmp_path / "none.db"))
    assert (code, err) == (2, f"botemu transcript: {tmp_path / 'none.db'}: no such transcript "
                              "database\n")  # fmt: skip
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        running = store.start(bot="ivr")
    code, _, err = to_scenario(capsys, running, "--db", str(db))
    assert (code, err) == (2, f"botemu transcript: call {running} has not ended: only a call "
                              "that ended can be replayed\n")  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        to_scenario(capsys, running, "--db", str(db), "--strict", "--loose")
    assert exit_.value.code == 2


def test_a_conversation_becomes_a_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        chat = store.start(bot="echo", kind="conversation")
    code, out, _ = to_scenario(capsys, chat[:8], "--db", str(db))
    assert code == 0
    assert f"# Replay of conversation {chat}\n" in out and "\nmessaging: []\n" in out


def test_a_call_with_too_many_events_is_refused(
    bot_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "t.db"
    call_id = place(bot_url, db, "press 1; press 1#", capsys)
    monkeypatch.setattr(convert, "MAX_EVENTS", 10)
    code, out, err = to_scenario(capsys, call_id, "--db", str(db))
    assert (code, out) == (2, "")
    assert err.startswith(f"botemu transcript: call {call_id} has ")
    assert err.endswith(" events: at most 10 can be replayed\n")


def test_notes_go_to_stderr_and_an_unwritable_output_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:  # a key no input action follows: left out, with a note
        call_id = store.start(bot="http://127.0.0.1:1/api/calls")
        store.append(call_id, EventKind.CALLER, {"kind": "caller pressed", "at": 0.5,
                                                 "keys": "5", "times": [0.5]}, vtime=0.5)  # fmt: skip
        store.finish(call_id, reason="caller hung up")
    code, out, err = to_scenario(capsys, call_id, "--db", str(db))
    assert code == 0 and out.startswith("# yaml-language-server: $schema=")
    assert err.startswith(
        "botemu transcript: note: 1 caller acts after the last input action were left out\n"
    )
    code, out, err = to_scenario(
        capsys, call_id, "--db", str(db), "-o", str(tmp_path / "no" / "x.yaml")
    )
    assert (code, out) == (2, "")
    assert f"botemu transcript: {tmp_path / 'no' / 'x.yaml'}: cannot write: " in err
