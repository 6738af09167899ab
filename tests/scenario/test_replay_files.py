"""Recordings read as conversation scenarios: ``.transcript`` and ``.chat`` files
(``emulator/scenario/replay_files.py``, ``transcript_file.py``, ``chatdown.py``), the judging of
their replies (``expect_in_order.py``), and malformed files as errors at file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emulator.scenario.expect_in_order import compare
from emulator.scenario.expectations import evaluate
from emulator.scenario.loader import ScenarioError, ScenarioFileError, discover, load_scenario
from emulator.scenario.model import ExpectedReply, RepliesInOrder, Scenario
from emulator.scenario.replay_files import MAX_ACTIVITIES, MAX_REPLAY_BYTES, QUIET_WAIT
from emulator.transcripts.store import EventKind, StoredEvent

USER = {"id": "user-1", "name": "User", "role": "user"}
BOT = {"id": "bot-1", "name": "Bot", "role": "bot"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def transcript(*activities: object) -> str:
    return json.dumps(list(activities), indent=2)


def expected(scenario: Scenario) -> RepliesInOrder:
    (only,) = scenario.expect
    assert isinstance(only, RepliesInOrder)
    return only


# --- .transcript ---------------------------------------------------------------------------------


def test_a_transcript_makes_turns_and_expected_replies(tmp_path: Path) -> None:
    path = write(tmp_path, "t.transcript", transcript(
        {"type": "conversationUpdate", "from": USER, "membersAdded": [USER, BOT],
         "channelId": "msteams"},
        {"type": "message", "from": BOT, "text": "Welcome", "id": "a1",
         "timestamp": "2025-01-01T00:00:00Z", "serviceUrl": "http://127.0.0.1:1"},
        {"type": "message", "from": USER, "text": "hello"},
        {"type": "typing", "from": BOT},
        {"type": "message", "from": BOT, "text": "echo: hello",
         "attachments": [{"contentType": "image/png"}],
         "suggestedActions": {"actions": [{"type": "imBack", "title": "Yes", "value": "y"},
                                          {"type": "imBack", "value": "no"}]}},
        {"type": "event", "from": USER, "name": "ping", "value": {"n": 1}},
    ))  # fmt: skip
    scenario = load_scenario(path)
    assert scenario.kind == "conversation" and scenario.channel == "msteams"
    assert scenario.name == "t.transcript" and scenario.tags == ("replay", "transcript")
    turns = scenario.messaging or ()
    assert [(t.type, t.text, t.name, t.value, t.wait) for t in turns] == [
        ("message", "hello", None, None, None),
        ("event", None, "ping", {"n": 1}, QUIET_WAIT),  # nothing answers it: a short wait
    ]
    assert [t.line for t in turns] == [35, 79]  # where each activity starts
    replies = expected(scenario).replies
    assert [(r.activity, r.line, r.text, r.after) for r in replies] == [
        (1, 23, "Welcome", None),
        (4, 52, "echo: hello", "user activity #2 'hello'"),
    ]
    assert replies[1].attachments == ("image/png",)
    assert replies[1].suggested_actions == ("Yes", "no")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param('[{"type": "message",}]', "1:21", "not JSON: Expecting property name",
                     id="not-json"),
        pytest.param('{"type": "message"}', "1:1", "expected a JSON array of activities (a "
                     ".transcript file), got an object", id="not-an-array"),
        pytest.param('[\n  "hello"\n]', "2:3", "activity #0: expected an activity (a JSON "
                     "object), got a string", id="not-an-object"),
        pytest.param('[\n  {"from": {"role": "user"}}\n]', "2:3", "activity #0: expected "
                     "'type' (message, event, ...), got none", id="no-type"),
        pytest.param('[\n  {"type": "message", "from": {"role": "skill"}}\n]', "2:3",
                     "activity #0: expected 'from.role' user or bot (who sent it), got 'skill'",
                     id="a-role"),
        pytest.param('[\n  {"type": "messageReaction", "from": {"role": "user"}}\n]', "2:3",
                     "activity #0: a user's messageReaction activity cannot be sent",
                     id="an-unsendable-type"),
        pytest.param('[\n  {"type": "message", "from": {"role": "user"}, "attachments": [{}]}\n]',
                     "2:3", "activity #0: a user's attachments cannot be sent", id="attachments"),
        pytest.param("[" * 100_000 + "]" * 100_000, None, "nested too deeply", id="deep"),
    ],
)  # fmt: skip
def test_a_malformed_transcript_is_an_error_at_its_line(
    tmp_path: Path, text: str, where: str | None, message: str
) -> None:
    path = write(tmp_path, "bad.transcript", text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    assert not isinstance(e.value, ScenarioFileError)
    assert str(e.value).startswith(f"{path}:{where}: " if where else f"{path}: ")
    assert message in e.value.message


def test_what_is_read_is_bounded(tmp_path: Path) -> None:
    big = write(tmp_path, "big.transcript", " " * (MAX_REPLAY_BYTES + 1))
    with pytest.raises(ScenarioFileError, match="larger than 4 MiB"):
        load_scenario(big)
    many = transcript(*([{"type": "message", "from": USER, "text": "x"}] * (MAX_ACTIVITIES + 1)))
    with pytest.raises(ScenarioError, match="more than 10000 activities"):
        load_scenario(write(tmp_path, "many.transcript", many))
    (tmp_path / "bin.chat").write_bytes(b"user: \xff")
    with pytest.raises(ScenarioFileError, match=r"bin.chat:1:7: not UTF-8 text \(byte 0xff\)"):
        load_scenario(tmp_path / "bin.chat")
    (tmp_path / "dir.transcript").mkdir()
    with pytest.raises(ScenarioFileError, match="is a directory"):
        load_scenario(tmp_path / "dir.transcript")


def test_directories_hold_recordings_too(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.transcript", "c.chat", "_d.chat", "e.txt"):
        (tmp_path / name).write_text("")
    found = [p.name for p in discover([tmp_path])]
    assert found == ["a.yaml", "b.transcript", "c.chat"]


# --- .chat ---------------------------------------------------------------------------------------

CHAT = """\
\ufeffusers=Joe,Fred,Sam
bot=LulaBot
channelId=emulator

LulaBot: Hi!
joe: yo!
bot: [Typing][Delay=3000]
Greetings!
What would you like to do?
* update - You can update your account
Fred: I need the logo.
bot->Fred:
Here you go.
[Attachment=bot-framework.png]
[Attachment=http://example.com/card.json "adaptivecard"]
[AttachmentLayout=carousel]
[Suggestions=Yes | No]
user: cards [1]
bot: [HeroCard
    title=Cheese
    buttons=Option 1| Option 2]
[ThumbnailCard=
    title=Small]
[AdaptiveCard=card.json]
[ConversationUpdate=
    MembersAdded=Sam]
bot->Sam: Hi Sam!
"""


def test_a_chat_file_reads_as_chatdown_reads_it(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, "joe.chat", CHAT))
    assert scenario.channel == "emulator" and scenario.tags == ("replay", "chat")
    turns = scenario.messaging or ()
    assert [(t.type, t.text, t.value, t.line) for t in turns] == [
        ("message", "yo!", None, 6),
        ("message", "I need the logo.", None, 11),
        ("message", "cards [1]", None, 18),
        ("conversationUpdate", None, {"membersAdded": [{"id": "Sam", "name": "Sam"}],
                                      "membersRemoved": []}, 19),
    ]  # fmt: skip
    replies = expected(scenario).replies
    shown = [(r.activity, r.line, r.text, r.attachments, r.layout, r.suggested_actions)
             for r in replies]  # fmt: skip
    card = "application/vnd.microsoft.card."
    assert shown == [
        (1, 5, "Hi!", (), None, ()),
        (4, 7, "Greetings!\nWhat would you like to do?\n* update - You can update your account",
         (), None, ()),
        (6, 12, "Here you go.", ("image/png", card + "adaptive"), "carousel", ("Yes", "No")),
        # chatdown sends the conversationUpdate (#8) before the cards it follows (#9)
        (9, 19, "", (card + "hero", card + "thumbnail", card + "adaptive"), None, ()),
        (10, 27, "Hi Sam!", (), None, ()),
    ]  # fmt: skip
    assert replies[1].after == "user activity #2 'yo!'"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param("user=a=b\nuser: hi\n", "1:1", "malformed header option 'user=a=b': write "
                     "name=value", id="header"),
        pytest.param("channelId=skype\nuser: hi\n", "1:11", "channelId 'skype': botemu's "
                     "channels are webchat, directline, emulator, msteams", id="channel"),
        pytest.param("user=Joe\n\nhello there\nJoe: hi\n", "3:1", "expected 'user:' or 'bot:' "
                     "(or a name the header gives) to start the conversation", id="no-speaker"),
        pytest.param("user: hi\nbot: look\n[HeroCard\n  title=x\n", "3:1", "[HeroCard is never "
                     "closed: end it with ]", id="unclosed"),
        pytest.param("user: hi\nbot: x\n\n[AttachmentLayout=grid]\n", "4:1", "AttachmentLayout "
                     "'grid' is not carousel or list", id="layout"),
        pytest.param("user: hi\nbot: [Delay=soon] x\n", "2:1", "[Delay=soon]: a delay is a "
                     "number of milliseconds", id="delay"),
        pytest.param("user: hi\nbot: [Attachment=]\n", "2:1", "an attachment needs a path or "
                     "URL", id="attachment-path"),
        pytest.param("user: hi\nbot: [Attachment=https://example.com/page]\n", "2:1",
                     "the content type of 'https://example.com/page' cannot be told from its "
                     "name: give it", id="attachment-type"),
        pytest.param("user: hi\n[ConversationUpdate=\n  Joined=Sam]\n", "2:1", "unknown "
                     "ConversationUpdate property 'Joined'", id="update"),
        pytest.param("user=Joe\nbot=Lula\n", "1:1", "no conversation: expected lines that "
                     "start with 'user:' or 'bot:'", id="empty"),
    ],
)  # fmt: skip
def test_a_malformed_chat_is_an_error_at_its_line(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = write(tmp_path, "bad.chat", text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    assert str(e.value).startswith(f"{path}:{where}: {message}")


def test_a_chat_of_the_bot_alone_opens_the_conversation_as_its_turn(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, "hi.chat", "bot: Welcome!\n"))
    assert [t.type for t in scenario.messaging or ()] == ["conversationUpdate"]
    assert [r.text for r in expected(scenario).replies] == ["Welcome!"]


# --- judging -------------------------------------------------------------------------------------


def test_only_the_compared_fields_count() -> None:
    e = ExpectedReply(type="message", text="hi", attachments=("image/png",),
                      suggested_actions=("Yes",), layout="carousel")  # fmt: skip
    same = {"type": "Message", "text": " hi\r\n", "id": "x", "timestamp": "now",
            "serviceUrl": "https://elsewhere", "conversation": {"id": "c"}, "channelId": "test",
            "from": {"id": "other"}, "recipient": {"id": "r"}, "attachmentLayout": "carousel",
            "attachments": [{"contentType": "image/png", "contentUrl": "data:..."}],
            "suggestedActions": {"actions": [{"title": "Yes", "value": "y"}]}}  # fmt: skip
    assert compare(e, same) == []
    other = {"type": "event", "text": "ho", "attachmentLayout": "list"}
    assert compare(e, other) == [
        "type: expected 'message', got 'event'",
        "text: expected 'hi', got 'ho'",
        "attachments: expected [image/png], got none",
        "attachmentLayout: expected 'carousel', got 'list'",
        "suggestedActions: expected [Yes], got none",
    ]


def _reply(seq: int, activity: dict[str, object]) -> list[StoredEvent]:
    path = "/v3/conversations/c1/activities"
    request = StoredEvent("c1", seq, None, 0.0, EventKind.HTTP_REQUEST,
                          {"method": "POST", "path": path, "body": json.dumps(activity)}, False)  # fmt: skip
    answer = StoredEvent("c1", seq + 1, None, 0.0, EventKind.HTTP_RESPONSE,
                         {"status": 200, "body": '{"id": "r"}'}, False)  # fmt: skip
    return [request, answer]


def test_an_extra_reply_fails_and_typing_does_not_count() -> None:
    scenario = Scenario(name="r", messaging=(), path=Path("r.chat"), line=1, expect=(
        RepliesInOrder((ExpectedReply(type="message", text="one", activity=1, line=3),), line=1),
    ))  # fmt: skip
    events = [*_reply(1, {"type": "typing"}), *_reply(3, {"type": "message", "text": "one"})]
    assert evaluate(scenario, events) == []
    events += _reply(5, {"type": "message", "text": "two"})
    (failure,) = evaluate(scenario, events)
    assert failure.where == "r.chat:3"
    assert failure.message == ("expected 1 reply and no more, got 2: reply #1 message 'two' is "
                               "not in the recording")  # fmt: skip
    assert failure.evidence == ("  #0 expected message 'one'; got message 'one'\n"
                                "✗ #1 expected (nothing); got message 'two'")  # fmt: skip
