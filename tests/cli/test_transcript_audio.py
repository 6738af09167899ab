"""``botemu transcript audio ID -o FILE``: a stored call as one stereo WAV track."""

from __future__ import annotations

import argparse
import asyncio
import io
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.audio.cache import ENV_DIR
from emulator.audio.espeak import ENV_SWITCH, Espeak
from emulator.calling.caller import CallerScript
from emulator.calling.session import place_call
from emulator.calling.settings import CallSettings
from emulator.cli.transcript import register
from emulator.transcripts.store import TranscriptStore
from tests.support import ivr_bot


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "audio-cache"
    monkeypatch.setenv(ENV_DIR, str(path))
    return path


@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, float]]:
    """A real call to the reference IVR bot: (database, call id, virtual duration)."""
    db = tmp_path_factory.mktemp("audio") / "t.db"
    with ivr_bot() as url, TranscriptStore(db) as store:
        settings = CallSettings(
            bot_url=url, caller=CallerScript.from_inline("press 1; press 1234#")
        )
        call_id = asyncio.run(place_call(settings, store)).call_id
        summary = store.call(call_id)
    assert summary is not None and summary.vtime is not None
    yield db, call_id, summary.vtime


@pytest.mark.slow
def test_a_call_becomes_a_stereo_wav_as_long_as_the_call(
    placed: tuple[Path, str, float],
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, call_id, vtime = placed
    out = tmp_path / "call.wav"
    code, _, err = run(
        ["transcript", "audio", call_id[:8], "-o", str(out), "--db", str(db)], capsys
    )
    assert code == 0, err
    assert err.startswith(f"wrote {out}: call {call_id}") and "eSpeak NG" in err
    with wave.open(str(out), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 16000)
        assert abs(w.getnframes() / w.getframerate() - vtime) < 0.05
    assert any(cache_dir.iterdir())  # the prompts were cached on disk


@pytest.mark.slow
def test_the_fallback_still_writes_a_track_with_one_message(
    placed: tuple[Path, str, float],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(Espeak, "_instance", None)
    monkeypatch.setenv(ENV_SWITCH, "off")
    db, call_id, vtime = placed
    out = tmp_path / "call.wav"
    code, _, err = run(["transcript", "audio", call_id, "-o", str(out), "--db", str(db)], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == 2 and "no speech synthesis" in lines[0] and "fallback tones" in lines[1]
    with wave.open(str(out), "rb") as w:
        assert abs(w.getnframes() / w.getframerate() - vtime) < 0.05


def test_a_call_over_two_hours_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        long = store.start(bot="b")
        store.append(long, "call.end", {"summary": "call ended"}, vtime=3 * 3600.0)
        store.finish(long, reason="bot hung up")
    out = tmp_path / "long.wav"
    code, _, err = run(["transcript", "audio", long, "-o", str(out), "--db", str(db)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "10800.0 s of virtual time, more than the 7200 s" in err
    assert not out.exists()


def test_unknown_ids_conversations_and_missing_databases_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        chat = store.start(bot="echo", kind="conversation")
    out = str(tmp_path / "x.wav")
    for argv, message in [
        (["nope", "--db", str(db)], "no call matches 'nope'"),
        ([chat, "--db", str(db)], "is a conversation: only a call has audio"),
        (["abc", "--db", str(tmp_path / "none.db")], "no such transcript database"),
    ]:
        code, _, err = run(["transcript", "audio", *argv, "-o", out], capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_an_output_that_cannot_be_written_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with TranscriptStore(db) as store:
        call = store.start(bot="b")
        store.append(call, "call.end", {}, vtime=1.0)
        store.finish(call, reason="bot hung up")
    target = tmp_path / "missing" / "call.wav"
    code, _, err = run(["transcript", "audio", call, "-o", str(target), "--db", str(db)], capsys)
    assert code == 2 and "cannot write" in err
