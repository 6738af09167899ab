"""``botemu transcript list|show|export``, through a parser built with ``register``."""

from __future__ import annotations

import argparse
import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from emulator.cli.transcript import register
from emulator.transcripts.store import EventKind, TranscriptStore

T0 = datetime(2024, 5, 1, 12, 0, 0).timestamp()  # local time, as the CLI prints it


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, out)
    return code, out.getvalue(), capsys.readouterr().err


class Clock:
    def __init__(self) -> None:
        self.now = T0 - 1

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database with two calls: an IVR call with findings and a blob, then a running one."""
    path = tmp_path / "t.db"
    with TranscriptStore(path, clock=Clock()) as s:
        ivr = s.start(
            bot="ivr-bot", caller="+15550100", call_id="a1b2c3d4e5f6a7b8c9d0", scenario="menu"
        )
        s.append(ivr, EventKind.CALL_START, {"summary": "incoming call from +15550100"}, vtime=0.0)
        s.append(
            ivr, EventKind.HTTP_REQUEST, {"summary": "POST /api/calls\n(Conversation)"}, vtime=0.0
        )
        s.append(
            ivr, EventKind.CALLER, {"summary": "caller presses 2"}, vtime=3.2, blob=b"\x01\x02"
        )
        s.append(ivr, EventKind.STATE, {"from": "incoming", "to": "established"})
        s.append(ivr, EventKind.FINDING, {"summary": "WF-X bad", "severity": "error"}, vtime=3.2)
        s.append(ivr, EventKind.FINDING, {"summary": "WF-Y odd", "severity": "warning"}, vtime=12.5)
        s.count_workflow(ivr)
        s.count_workflow(ivr)
        s.finish(ivr, reason="caller hung up", passed=False)
        s.start(bot="echo", call_id="ffff0000ffff0000", kind="conversation")
    return path


# --- list --------------------------------------------------------------------------------------


def test_list_newest_first_with_short_ids(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["transcript", "list", "--db", str(db)], capsys)
    assert (code, err) == (0, "")
    header, first, second = out.splitlines()
    assert header.split() == ["ID", "STARTED", "BOT", "CALLER", "END", "WF", "ERR/WARN", "VTIME"]
    assert first.split() == [
        "ffff0000ffff",
        "2024-05-01",
        "12:00:08",
        "echo",
        "-",
        "running",
        "0",
        "0/0",
        "-",
    ]
    assert second.split()[:5] == ["a1b2c3d4e5f6", "2024-05-01", "12:00:00", "ivr-bot", "+15550100"]
    assert "caller hung up" in second
    assert second.split()[-3:] == ["2", "1/1", "12.50s"]


def test_list_limit_says_how_many_are_hidden(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["transcript", "list", "--db", str(db), "--limit", "1"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[1].startswith("ffff0000ffff")
    assert lines[2] == "1 of 2 calls shown (newest first); --limit N for more"


@pytest.mark.parametrize("limit", [pytest.param("0", id="zero"), pytest.param("x", id="word")])
def test_list_limit_must_be_a_positive_number(
    db: Path, limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        run(["transcript", "list", "--db", str(db), "--limit", limit], capsys)
    assert info.value.code == 2


def test_list_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["transcript", "list", "--db", str(db), "--json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["total"] == 2
    assert document["db"] == str(db)
    assert [c["id"] for c in document["calls"]] == ["ffff0000ffff0000", "a1b2c3d4e5f6a7b8c9d0"]
    ivr = document["calls"][1]
    assert (ivr["errors"], ivr["warnings"], ivr["workflows"], ivr["passed"]) == (1, 1, 2, False)


def test_list_empty_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.db"
    TranscriptStore(path).close()
    code, out, err = run(["transcript", "list", "--db", str(path)], capsys)
    assert (code, out, err) == (0, f"no transcripts in {path}\n", "")


def test_list_missing_database_exits_2_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nowhere" / "t.db"
    code, out, err = run(["transcript", "list", "--db", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == f"botemu transcript: {path}: no such transcript database\n"
    assert not path.parent.exists()


@pytest.mark.parametrize(
    "action",
    [
        pytest.param(["list"], id="list"),
        pytest.param(["show", "abc"], id="show"),
        pytest.param(["export", "abc"], id="export"),
    ],
)
def test_a_file_that_is_not_a_database_exits_2_with_one_line(
    tmp_path: Path, action: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"\xde\xad\xbe\xef" * 1000)
    code, out, err = run(["transcript", action[0], "--db", str(path), *action[1:]], capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "not a botemu transcript database" in err


def test_db_defaults_to_env_then_dot_botemu(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOTEMU_DB", str(db))
    code, out, _ = run(["transcript", "list"], capsys)
    assert code == 0
    assert "ivr-bot" in out
    monkeypatch.delenv("BOTEMU_DB")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["transcript", "list"], capsys)
    assert code == 2
    assert "no such transcript database" in err
    (tmp_path / ".botemu").mkdir()
    db.rename(tmp_path / ".botemu" / "transcripts.db")
    code, out, _ = run(["transcript", "list"], capsys)
    assert code == 0
    assert "ivr-bot" in out


def test_transcript_without_an_action_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["transcript"], capsys)
    assert (code, out) == (2, "")
    assert "choose an action" in err


# --- show --------------------------------------------------------------------------------------


def test_show_prints_a_ladder(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["transcript", "show", "--db", str(db), "a1b2"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "call a1b2c3d4e5f6a7b8c9d0  bot ivr-bot  caller +15550100  scenario menu"
    assert lines[1] == "started 2024-05-01 12:00:00"
    assert lines[3:9] == [
        "    0.00s  incoming call from +15550100",
        "    0.00s  POST /api/calls (Conversation)",
        "    3.20s  caller presses 2 [blob]",
        '        -  state {"from":"incoming","to":"established"}',
        "    3.20s  WF-X bad",
        "   12.50s  WF-Y odd",
    ]
    assert lines[-1].startswith("ended at 2024-05-01 12:00:")
    assert lines[-1].endswith(
        ": caller hung up · 2 workflows · 1 error, 1 warning · virtual time 12.50s · failed"
    )


def test_show_a_running_call(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["transcript", "show", "--db", str(db), "ffff0000ffff0000"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "conversation ffff0000ffff0000  bot echo"
    assert out.splitlines()[-1].startswith("still running")


def test_show_cuts_a_long_payload_without_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path) as s:
        call_id = s.start(bot="b", call_id="c1")
        s.append(call_id, EventKind.HTTP_RESPONSE, {"body": "x" * 1000}, vtime=1.0)
    _, out, _ = run(["transcript", "show", "--db", str(path), "c1"], capsys)
    line = out.splitlines()[3]
    assert line.startswith('    1.00s  http.response {"body":"xxx')
    assert line.endswith("…")
    assert len(line) < 200


@pytest.mark.parametrize(
    ("call_id", "message"),
    [
        pytest.param("zzz", "no call matches 'zzz'", id="unknown"),
        pytest.param("", "no call matches ''", id="empty"),
    ],
)
def test_show_unknown_id_exits_2(
    db: Path, call_id: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["transcript", "show", "--db", str(db), call_id], capsys)
    assert (code, out) == (2, "")
    assert err == f"botemu transcript: {db}: {message}\n"


def test_show_ambiguous_prefix_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path) as s:
        s.start(bot="b", call_id="abc1")
        s.start(bot="b", call_id="abc2")
    code, _, err = run(["transcript", "show", "--db", str(path), "abc"], capsys)
    assert code == 2
    assert "ambiguous" in err
    assert err.count("\n") == 1


# --- export ------------------------------------------------------------------------------------


def test_export_json_to_stdout(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["transcript", "export", "--db", str(db), "a1b2c3", "--format", "json"], capsys
    )
    assert (code, err) == (0, "")
    document = json.loads(out)
    with TranscriptStore(db) as s:
        assert document == s.export("a1b2c3d4e5f6a7b8c9d0")
    assert document["events"][2]["blob_base64"] == "AQI="


def test_export_to_a_file(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.json"
    code, out, _ = run(["transcript", "export", "--db", str(db), "ffff", "-o", str(target)], capsys)
    assert (code, out) == (0, "")
    assert json.loads(target.read_text(encoding="utf-8"))["call"]["id"] == "ffff0000ffff0000"


def test_export_to_an_unwritable_place_exits_2(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "dir" / "out.json"
    code, _, err = run(["transcript", "export", "--db", str(db), "ffff", "-o", str(target)], capsys)
    assert code == 2
    assert err.startswith(f"botemu transcript: {target}: cannot write")
    assert err.count("\n") == 1


def test_export_knows_json_and_transcript_only(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        run(["transcript", "export", "--db", str(db), "ffff", "--format", "xml"], capsys)
    assert info.value.code == 2


def test_export_keeps_a_lone_surrogate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.db"
    with TranscriptStore(path) as s:
        s.start(bot="b", call_id="c1")
        s.append("c1", EventKind.NOTE, {"summary": "odd \ud800 text"})
    code, out, _ = run(["transcript", "export", "--db", str(path), "c1"], capsys)
    assert code == 0
    assert "\\ud800" in out
    assert json.loads(out)["events"][0]["payload"]["summary"] == "odd \ud800 text"
    code, out, _ = run(["transcript", "show", "--db", str(path), "c1"], capsys)
    assert code == 0
    assert "odd \\ud800 text" in out


# --- export --format transcript ----------------------------------------------------------------

BOT = "11111111-2222-3333-4444-555555555555"


def conversation(path: Path) -> str:
    """A conversation as the emulator records it: its posts to the bot (each answered by the
    bot's answer, last) and the bot's requests to the connector (each answered by the next
    event), one of them refused by the connector."""
    with TranscriptStore(path) as s:
        cid = s.start(kind="conversation", bot=BOT, call_id="conv-1", caller="user-1")
        s.append(cid, EventKind.NOTE, {"summary": "conversation conv-1"})
        s.append(cid, EventKind.HTTP_REQUEST, {
            "summary": "→ bot: message", "method": "POST", "url": "http://bot/api/messages",
            "body": {"type": "message", "id": "u1", "text": "héllo", "from": {"id": "user-1"}},
        })  # fmt: skip
        base = "/v3/conversations/conv-1/activities"
        for text, status, answer in (("<b>no</b>", 403, "{}"), ("echo: héllo", 200, '{"id":"r1"}')):
            s.append(cid, EventKind.HTTP_REQUEST, {
                "summary": "← bot", "method": "POST", "path": f"{base}/u1", "app_id": BOT,
                "body": json.dumps({"type": "message", "text": text, "replyToId": "u1"}),
            })  # fmt: skip
            s.append(cid, EventKind.HTTP_RESPONSE, {"status": status, "body": answer})
        s.append(cid, EventKind.HTTP_RESPONSE, {"status": 200, "body": ""})  # the bot's answer
    return cid


def test_export_a_conversation_as_a_transcript_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.db"
    cid = conversation(path)
    code, out, err = run(["transcript", "export", "--db", str(path), "conv", "--format",
                          "transcript"], capsys)  # fmt: skip
    assert (code, err) == (0, "")
    activities = json.loads(out)
    assert [(a["type"], a["text"]) for a in activities] == [
        ("message", "héllo"),
        ("message", "echo: héllo"),  # the reply the connector refused is not in it
    ]
    reply = activities[1]
    assert (reply["id"], reply["from"], reply["replyToId"]) == (
        "r1",
        {"id": BOT, "role": "bot"},
        "u1",
    )
    assert "héllo" in out  # UTF-8, not escaped
    # The log view's .transcript of the same conversation, byte for byte (the same code).
    from emulator.logview.activities import carried, transcript

    with TranscriptStore(path) as s:
        expected = transcript(carried(s.events(cid), BOT))
    assert out == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    target = tmp_path / "conv.transcript"
    code, out, _ = run(["transcript", "export", "--db", str(path), cid, "--format", "transcript",
                        "-o", str(target)], capsys)  # fmt: skip
    assert (code, out) == (0, "")
    assert json.loads(target.read_text(encoding="utf-8")) == expected


async def test_the_cli_and_the_log_view_export_the_same_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aiohttp_client: Any
) -> None:
    from emulator.logview import standalone_app

    path = tmp_path / "t.db"
    cid = conversation(path)
    code, out, _ = run(["transcript", "export", "--db", str(path), cid, "--format", "transcript"],
                       capsys)  # fmt: skip
    assert code == 0
    with TranscriptStore(path) as s:
        client = await aiohttp_client(standalone_app(s))
        response = await client.get(f"/_logview/api/calls/{cid}/export?format=transcript")
        assert response.status == 200
        assert await response.read() == out.encode("utf-8")


def test_a_call_has_no_transcript_file(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["transcript", "export", "--db", str(db), "a1b2", "--format", "transcript"], capsys
    )
    assert (code, out) == (2, "")
    assert err == (
        "botemu transcript: a1b2c3d4e5f6a7b8c9d0 is a call, and the .transcript format holds a "
        "conversation's activities: export it with --format json\n"
    )


def test_a_conversation_with_no_activity_is_an_empty_transcript(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["transcript", "export", "--db", str(db), "ffff", "--format", "transcript"], capsys
    )
    assert (code, out) == (0, "[]\n")
