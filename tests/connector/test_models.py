"""Tests of emulator/connector/models.py: the connector's state, without HTTP."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable

import pytest

from emulator.connector.errors import (
    BadArgument,
    ConnectorError,
    Forbidden,
    MessageSizeTooBig,
    MissingProperty,
    NotFound,
    ServiceError,
    Unauthorized,
    bad_argument,
    bad_syntax,
    forbidden,
    missing_property,
    not_found,
    too_big,
    unauthorized,
)
from emulator.connector.models import ConnectorState, check_activity, conversation_warnings
from emulator.errors import BotemuError
from emulator.jsonutil import JSONObject

SERVICE_URL = "http://127.0.0.1:9070"
NOW = 1_700_000_000.25
USER: JSONObject = {"id": "user-1", "name": "Ada"}


def counter(prefix: str = "id") -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{prefix}{next(numbers)}"


@pytest.fixture
def state() -> ConnectorState:
    return ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW, ids=counter())


def one_to_one(state: ConnectorState, bot: str = "botA", **extra: object) -> str:
    params: JSONObject = {"members": [dict(USER)], **extra}  # type: ignore[dict-item]
    return str(state.create_conversation(bot, params)["id"])


# --- conversations -----------------------------------------------------------------------------


def test_create_returns_id_and_service_url_and_puts_bot_first_in_members(
    state: ConnectorState,
) -> None:
    created = state.create_conversation("botA", {"members": [USER]})
    assert created == {"id": "id1", "serviceUrl": SERVICE_URL}
    conversation = state.conversation("id1")
    assert conversation.bot_app_id == "botA"
    assert conversation.members == [{"id": "botA", "role": "bot"}, USER]
    assert conversation.is_group is False
    assert conversation.created == NOW


def test_create_with_activity_stores_it_with_the_envelope(state: ConnectorState) -> None:
    created = state.create_conversation(
        "botA", {"members": [USER], "activity": {"type": "message", "text": "hi"}}
    )
    assert created == {"id": "id1", "serviceUrl": SERVICE_URL, "activityId": "id2"}
    assert state.conversation("id1").activities == [
        {
            "type": "message",
            "text": "hi",
            "id": "id2",
            "timestamp": "2023-11-14T22:13:20.250Z",
            "serviceUrl": SERVICE_URL,
            "channelId": "webchat",
            "conversation": {"id": "id1", "isGroup": False},
            "from": {"id": "botA", "role": "bot"},
            "recipient": USER,
        }
    ]


def test_create_group_with_topic_tenant_and_an_explicit_bot(state: ConnectorState) -> None:
    params: JSONObject = {
        "bot": {"id": "28:botA", "name": "Bot A"},
        "members": [{"id": "u1"}, {"id": "u2"}, {"id": "u1"}, {"id": "28:botA"}],
        "isGroup": True,
        "topicName": "standup",
        "tenantId": "t-1",
        "channelData": {"x": [1]},
    }
    conversation = state.conversation(str(state.create_conversation("botA", params)["id"]))
    assert [m["id"] for m in conversation.members] == ["28:botA", "u1", "u2"]
    assert conversation.bot == {"id": "28:botA", "name": "Bot A", "role": "bot"}
    assert conversation.account() == {
        "id": "id1",
        "isGroup": True,
        "name": "standup",
        "tenantId": "t-1",
    }
    assert conversation.channel_data == {"x": [1]}


@pytest.mark.parametrize(
    ("params", "error"),
    [
        pytest.param({"members": []}, BadArgument, id="1:1 without member"),
        pytest.param({"members": [{"id": "a"}, {"id": "b"}]}, BadArgument, id="1:1 with two"),
        pytest.param({}, BadArgument, id="no members"),
        pytest.param({"members": {"id": "a"}}, BadArgument, id="members not an array"),
        pytest.param({"members": [{"name": "a"}]}, MissingProperty, id="member without id"),
        pytest.param({"members": [{"id": 5}]}, BadArgument, id="member id not a string"),
        pytest.param({"members": ["a"]}, BadArgument, id="member not an object"),
        pytest.param({"members": [USER], "isGroup": "yes"}, BadArgument, id="isGroup"),
        pytest.param({"members": [USER], "topicName": 3}, BadArgument, id="topicName"),
        pytest.param({"members": [USER], "bot": "botA"}, BadArgument, id="bot not an object"),
        pytest.param({"members": [USER], "activity": {}}, MissingProperty, id="activity no type"),
        pytest.param({"members": [USER], "activity": []}, BadArgument, id="activity array"),
    ],
)
def test_create_refuses_bad_parameters_and_creates_nothing(
    state: ConnectorState, params: JSONObject, error: type[ConnectorError]
) -> None:
    with pytest.raises(error):
        state.create_conversation("botA", params)
    assert state.conversations("botA") == {"conversations": [], "continuationToken": None}


def test_open_conversation_is_one_to_one_with_the_user(state: ConnectorState) -> None:
    conversation = state.open_conversation("botA", USER)
    assert conversation.users == [USER]
    assert conversation.bot_app_id == "botA"
    with pytest.raises(MissingProperty) as caught:
        state.open_conversation("botA", {"name": "nobody"})
    assert caught.value.property == "$.user.id"


def test_unknown_conversation_is_not_found_and_another_bot_is_forbidden(
    state: ConnectorState,
) -> None:
    conversation_id = one_to_one(state)
    with pytest.raises(NotFound):
        state.conversation("nope", bot="botA")
    with pytest.raises(Forbidden):
        state.conversation(conversation_id, bot="botB")
    assert state.conversation(conversation_id, bot="botA").id == conversation_id


def test_conversations_lists_only_the_bots_own_in_pages_of_100(state: ConnectorState) -> None:
    for _ in range(250):
        one_to_one(state)
    one_to_one(state, bot="botB")
    first = state.conversations("botA")
    assert len(first["conversations"]) == 100  # type: ignore[arg-type]
    assert first["continuationToken"] == "100"
    second = state.conversations("botA", "100")
    assert second["continuationToken"] == "200"
    third = state.conversations("botA", "200")
    assert len(third["conversations"]) == 50  # type: ignore[arg-type]
    assert third["continuationToken"] is None
    assert state.conversations("botB")["conversations"] == [
        {"id": "id251", "members": [{"id": "botB", "role": "bot"}, USER]}
    ]


@pytest.mark.parametrize("token", ["x", "-1", "999"])
def test_a_continuation_token_botemu_did_not_issue_is_a_bad_argument(
    state: ConnectorState, token: str
) -> None:
    one_to_one(state)
    with pytest.raises(BadArgument):
        state.conversations("botA", token)


# --- activities --------------------------------------------------------------------------------


def test_post_assigns_its_own_id_and_keeps_a_given_from(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(
        conversation_id, {"type": "message", "text": "x", "id": "mine", "from": {"id": "b"}}
    )
    assert activity_id == "id2"
    stored = state.conversation(conversation_id).activity("id2")
    assert stored["from"] == {"id": "b"}
    assert stored["recipient"] == USER


def test_reply_sets_reply_to_id_and_needs_an_existing_activity(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    first = state.post_activity(conversation_id, {"type": "message", "text": "a"})
    reply = state.post_activity(conversation_id, {"type": "message", "text": "b"}, reply_to=first)
    assert state.conversation(conversation_id).activity(reply)["replyToId"] == first
    with pytest.raises(NotFound):
        state.post_activity(conversation_id, {"type": "message", "text": "c"}, reply_to="zzz")


def test_a_user_activity_comes_from_the_user_to_the_bot(state: ConnectorState) -> None:
    conversation = state.open_conversation("botA", USER)
    activity_id = state.post_activity(
        conversation.id, {"type": "message", "text": "hello"}, from_bot=False
    )
    stored = conversation.activity(activity_id)
    assert stored["from"] == USER
    assert stored["recipient"] == {"id": "botA", "role": "bot"}


def test_post_by_another_bot_is_forbidden(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    with pytest.raises(Forbidden):
        state.post_activity(conversation_id, {"type": "message", "text": "x"}, bot="botB")
    assert state.conversation(conversation_id).activities == []


@pytest.mark.parametrize(
    ("activity", "error", "where"),
    [
        pytest.param([], BadArgument, "an activity must be a JSON object", id="array"),
        pytest.param({}, MissingProperty, "$.type", id="no type"),
        pytest.param({"type": None}, MissingProperty, "$.type", id="null type"),
        pytest.param({"type": 1}, BadArgument, "$.type must be a string", id="numeric type"),
        pytest.param({"type": " "}, BadArgument, "$.type must not be empty", id="blank type"),
        pytest.param({"type": "message", "text": 5}, BadArgument, "$.text", id="text"),
        pytest.param({"type": "message", "from": "me"}, BadArgument, "$.from", id="from"),
        pytest.param({"type": "message", "from": {"id": 1}}, BadArgument, "$.from.id", id="id"),
        pytest.param(
            {"type": "message", "attachments": {}},
            BadArgument,
            "$.attachments",
            id="attachments not an array",
        ),
        pytest.param(
            {"type": "message", "attachments": [{"content": 1}]},
            MissingProperty,
            "$.attachments[0].contentType",
            id="attachment without contentType",
        ),
        pytest.param(
            {"type": "message", "attachments": [3]},
            BadArgument,
            "$.attachments[0] must be an object",
            id="attachment not an object",
        ),
        pytest.param(
            {"type": "message", "entities": [{"x": 1}]},
            MissingProperty,
            "$.entities[0].type",
            id="entity without type",
        ),
    ],
)
def test_malformed_activities_are_refused(
    state: ConnectorState, activity: object, error: type[ConnectorError], where: str
) -> None:
    conversation_id = one_to_one(state)
    with pytest.raises(error) as caught:
        state.post_activity(conversation_id, activity)  # type: ignore[arg-type]
    assert where in caught.value.message
    assert caught.value.status == 400
    assert state.conversation(conversation_id).activities == []


@pytest.mark.parametrize(
    ("activity", "warning"),
    [
        pytest.param({"type": "reaction2"}, "unknown activity type 'reaction2'", id="unknown"),
        pytest.param({"type": "message"}, "an empty message", id="empty message"),
        pytest.param({"type": "message", "text": ""}, "an empty message", id="empty text"),
        pytest.param({"type": "Message", "text": "x"}, "is written 'message'", id="case"),
        pytest.param({"type": "event"}, "an event without a name", id="event without name"),
        pytest.param({"type": "invoke", "name": ""}, "an invoke without a name", id="invoke"),
    ],
)
def test_questionable_activities_are_stored_with_a_warning(
    state: ConnectorState, activity: JSONObject, warning: str
) -> None:
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(conversation_id, activity)
    conversation = state.conversation(conversation_id)
    assert conversation.activity(activity_id)["type"] == activity["type"]
    assert len(conversation.warnings) == 1
    assert conversation.warnings[0].startswith(f"activity {activity_id}: ")
    assert warning in conversation.warnings[0]


@pytest.mark.parametrize(
    "activity",
    [
        pytest.param({"type": "message", "text": "x"}, id="text"),
        pytest.param({"type": "message", "attachments": [{"contentType": "image/png"}]}, id="att"),
        pytest.param({"type": "message", "value": {"a": 1}}, id="value"),
        pytest.param({"type": "typing"}, id="typing"),
        pytest.param({"type": "event", "name": "go"}, id="named event"),
    ],
)
def test_ordinary_activities_have_no_warning(activity: JSONObject) -> None:
    assert check_activity(activity)[1] == []


def test_check_activity_returns_a_deep_copy() -> None:
    original: JSONObject = {"type": "message", "entities": [{"type": "mention"}]}
    copied, _ = check_activity(original)
    copied["entities"][0]["type"] = "changed"  # type: ignore[index,call-overload]
    assert original["entities"] == [{"type": "mention"}]


def test_update_replaces_the_activity_but_keeps_id_timestamp_and_parties() -> None:
    clock = iter([1.0, 2.0, 3.0, 4.0])
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: next(clock), ids=counter())
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(conversation_id, {"type": "message", "text": "old"})
    assert (
        state.update_activity(
            conversation_id, activity_id, {"type": "message", "text": "new", "id": "x"}
        )
        == activity_id
    )
    stored = state.conversation(conversation_id).activity(activity_id)
    assert stored["text"] == "new"
    assert stored["id"] == activity_id
    assert stored["timestamp"] == "1970-01-01T00:00:02.000Z"
    assert stored["from"] == {"id": "botA", "role": "bot"}
    assert stored["recipient"] == USER
    with pytest.raises(NotFound):
        state.update_activity(conversation_id, "zzz", {"type": "message", "text": "x"})
    with pytest.raises(Forbidden):
        state.update_activity(conversation_id, activity_id, {"type": "message"}, bot="botB")


def test_delete_removes_the_activity(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(conversation_id, {"type": "message", "text": "x"})
    state.delete_activity(conversation_id, activity_id)
    assert state.conversation(conversation_id).activities == []
    with pytest.raises(NotFound):
        state.delete_activity(conversation_id, activity_id)


def test_listeners_hear_posts_updates_and_deletes_as_copies(state: ConnectorState) -> None:
    heard: list[tuple[str, JSONObject]] = []
    state.add_listener(lambda cid, activity: heard.append((cid, activity)))
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(conversation_id, {"type": "message", "text": "a"})
    state.update_activity(conversation_id, activity_id, {"type": "message", "text": "b"})
    state.delete_activity(conversation_id, activity_id)
    assert [(cid, a["type"], a["id"]) for cid, a in heard] == [
        (conversation_id, "message", activity_id),
        (conversation_id, "messageUpdate", activity_id),
        (conversation_id, "messageDelete", activity_id),
    ]
    heard[0][1]["text"] = "mutated"
    assert heard[1][1]["text"] == "b"


def test_a_failing_listener_breaks_nothing(
    state: ConnectorState, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(conversation_id: str, activity: JSONObject) -> None:
        raise RuntimeError("listener bug")

    heard: list[str] = []
    state.add_listener(boom)
    state.add_listener(lambda cid, activity: heard.append(str(activity["id"])))
    conversation_id = one_to_one(state)
    activity_id = state.post_activity(conversation_id, {"type": "typing"})
    assert heard == [activity_id]
    assert "listener bug" in caplog.text
    state.remove_listener(boom)
    state.post_activity(conversation_id, {"type": "typing"})
    assert len(heard) == 2


def test_conversation_listeners_hear_every_new_conversation(state: ConnectorState) -> None:
    seen: list[str] = []
    state.add_conversation_listener(lambda conversation: seen.append(conversation.id))
    first = one_to_one(state)
    second = state.open_conversation("botA", USER).id
    assert seen == [first, second]


def test_history_keeps_given_ids_and_timestamps_all_or_nothing(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    upload_id = state.history(
        conversation_id,
        {
            "activities": [
                {"type": "message", "text": "old", "id": "h1", "timestamp": "2020-01-01T00:00:00Z"},
                {"type": "message", "text": "older"},
            ]
        },
    )
    activities = state.conversation(conversation_id).activities
    assert [a["id"] for a in activities] == ["h1", "id2"]
    assert activities[0]["timestamp"] == "2020-01-01T00:00:00Z"
    assert activities[1]["conversation"] == {"id": conversation_id, "isGroup": False}
    assert upload_id == "id3"
    with pytest.raises(BadArgument, match=r"\$\.activities\[1\]\.id 'h1' is already used"):
        state.history(
            conversation_id,
            {"activities": [{"type": "typing", "id": "new"}, {"type": "typing", "id": "h1"}]},
        )
    assert len(state.conversation(conversation_id).activities) == 2
    with pytest.raises(MissingProperty):
        state.history(conversation_id, {})
    with pytest.raises(BadArgument):
        state.history(conversation_id, {"activities": {}})
    with pytest.raises(MissingProperty, match=r"\$\.activities\[0\]\.type"):
        state.history(conversation_id, {"activities": [{"text": "x"}]})


# --- members -----------------------------------------------------------------------------------


def group(state: ConnectorState, users: int) -> str:
    members: list[object] = [{"id": f"u{i}"} for i in range(1, users + 1)]
    return str(state.create_conversation("botA", {"members": members, "isGroup": True})["id"])  # type: ignore[dict-item]


def test_members_member_and_remove_member(state: ConnectorState) -> None:
    conversation_id = group(state, 2)
    assert [m["id"] for m in state.members(conversation_id)] == ["botA", "u1", "u2"]
    assert state.member(conversation_id, "u2") == {"id": "u2"}
    state.remove_member(conversation_id, "u1")
    assert [m["id"] for m in state.members(conversation_id)] == ["botA", "u2"]
    with pytest.raises(NotFound):
        state.member(conversation_id, "u1")
    with pytest.raises(NotFound):
        state.remove_member(conversation_id, "u1")
    with pytest.raises(BadArgument, match="cannot remove itself"):
        state.remove_member(conversation_id, "botA")
    with pytest.raises(Forbidden):
        state.members(conversation_id, bot="botB")


def test_members_are_copies(state: ConnectorState) -> None:
    conversation_id = group(state, 1)
    state.members(conversation_id)[1]["id"] = "changed"
    state.member(conversation_id, "u1")["name"] = "changed"
    assert state.conversation(conversation_id).members[1] == {"id": "u1"}


def test_paged_members(state: ConnectorState) -> None:
    conversation_id = group(state, 4)
    first = state.paged_members(conversation_id, 2)
    assert first == {
        "members": [{"id": "botA", "role": "bot"}, {"id": "u1"}],
        "continuationToken": "2",
    }
    second = state.paged_members(conversation_id, 2, "2")
    assert second["members"] == [{"id": "u2"}, {"id": "u3"}]
    last = state.paged_members(conversation_id, 2, "4")
    assert last == {"members": [{"id": "u4"}], "continuationToken": None}
    assert state.paged_members(conversation_id)["continuationToken"] is None
    with pytest.raises(BadArgument):
        state.paged_members(conversation_id, 0)
    with pytest.raises(BadArgument):
        state.paged_members(conversation_id, 2, "bogus")


def test_paged_members_caps_the_page_at_500(state: ConnectorState) -> None:
    conversation_id = group(state, 600)
    page = state.paged_members(conversation_id, 10_000)
    assert len(page["members"]) == 500  # type: ignore[arg-type]
    assert page["continuationToken"] == "500"


def test_activity_members_are_the_members_when_the_activity_was_sent(
    state: ConnectorState,
) -> None:
    conversation_id = group(state, 2)
    activity_id = state.post_activity(conversation_id, {"type": "message", "text": "x"})
    state.remove_member(conversation_id, "u2")
    assert [m["id"] for m in state.activity_members(conversation_id, activity_id)] == [
        "botA",
        "u1",
        "u2",
    ]
    with pytest.raises(NotFound):
        state.activity_members(conversation_id, "zzz")


# --- attachments -------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_attachment_round_trip(state: ConnectorState) -> None:
    conversation_id = one_to_one(state)
    attachment_id = state.upload_attachment(
        conversation_id,
        {
            "type": "image/png",
            "name": "dot.png",
            "originalBase64": b64(PNG),
            "thumbnailBase64": b64(b"thumb"),
        },
    )
    assert attachment_id == "id2"
    assert state.attachment_info(attachment_id) == {
        "name": "dot.png",
        "type": "image/png",
        "views": [{"viewId": "original", "size": len(PNG)}, {"viewId": "thumbnail", "size": 5}],
    }
    assert state.attachment_view(attachment_id, "original") == (PNG, "image/png")
    assert state.attachment_view(attachment_id, "thumbnail") == (b"thumb", "image/png")
    assert state.attachment_conversation(attachment_id) == conversation_id
    with pytest.raises(NotFound):
        state.attachment_view(attachment_id, "large")
    with pytest.raises(NotFound):
        state.attachment_info("zzz")
    with pytest.raises(Forbidden):
        state.attachment_info(attachment_id, bot="botB")
    with pytest.raises(Forbidden):
        state.attachment_view(attachment_id, "original", bot="botB")
    assert state.attachment_conversation("zzz") is None


@pytest.mark.parametrize(
    ("data", "error"),
    [
        pytest.param([], BadArgument, id="not an object"),
        pytest.param({"type": 3, "originalBase64": "AA=="}, BadArgument, id="type not a string"),
        pytest.param({"type": "a/b\r\nX: y", "originalBase64": "AA=="}, BadArgument, id="crlf"),
        pytest.param({"type": "image/png"}, MissingProperty, id="no view"),
        pytest.param({"type": "image/png", "originalBase64": "%%%"}, BadArgument, id="not b64"),
        pytest.param({"type": "image/png", "originalBase64": 12}, BadArgument, id="b64 number"),
        pytest.param(
            {"type": "image/png", "originalBase64": "AA==", "name": 1}, BadArgument, id="name"
        ),
    ],
)
def test_bad_attachment_data_is_refused(
    state: ConnectorState, data: object, error: type[ConnectorError]
) -> None:
    conversation_id = one_to_one(state)
    with pytest.raises(error):
        state.upload_attachment(conversation_id, data)  # type: ignore[arg-type]


def test_an_attachment_upload_without_type_is_accepted(state: ConnectorState) -> None:
    """Regression: an upload without ``type`` was refused (400 MissingProperty); the real
    service answers it with 200 and an id (the SDK's own recordings)."""
    conversation_id = one_to_one(state)
    attachment_id = state.upload_attachment(conversation_id, {"originalBase64": "AAE="})
    assert state.attachment_view(attachment_id, "original", bot="botA") == (
        b"\x00\x01",
        "application/octet-stream",
    )


def test_tenant_id_in_the_python_sdks_spelling_is_read_with_a_note(state: ConnectorState) -> None:
    """Regression: ConversationParameters.tenant_id, serialized ``tenantID`` by the Python SDK,
    was silently dropped."""
    params = {"members": [{"id": "u1"}], "tenantID": "tenant-7"}
    created = state.create_conversation("botA", params)
    assert state.conversation(str(created["id"])).tenant_id == "tenant-7"
    assert conversation_warnings(params) == [
        "$.tenantID read as tenantId: the Python SDK's spelling; the connector's is tenantId"
    ]
    assert conversation_warnings({"tenantId": "t", "tenantID": "u"}) == []


# --- ids, reset, errors ------------------------------------------------------------------------


def test_ids_already_in_use_are_skipped_and_a_stuck_source_is_a_service_error() -> None:
    ids = iter(["c1", "c1", "c2", "a1", "a1", "a2"])
    state = ConnectorState(service_url=SERVICE_URL, ids=lambda: next(ids))
    assert one_to_one(state) == "c1"
    assert one_to_one(state) == "c2"
    state.post_activity("c1", {"type": "typing"})  # a1 in c1
    assert state.post_activity("c2", {"type": "typing"}) == "a1"  # ids are per conversation
    stuck = ConnectorState(service_url=SERVICE_URL, ids=lambda: "same")
    one_to_one(stuck)
    with pytest.raises(ServiceError):
        one_to_one(stuck)


def test_default_ids_are_uuid4_hex() -> None:
    state = ConnectorState(service_url=SERVICE_URL)
    conversation_id = one_to_one(state)
    assert len(conversation_id) == 32 and int(conversation_id, 16) >= 0


def test_reset_forgets_everything_but_keeps_listeners(state: ConnectorState) -> None:
    heard: list[str] = []
    state.add_listener(lambda cid, activity: heard.append(cid))
    conversation_id = one_to_one(state)
    attachment_id = state.upload_attachment(conversation_id, {"type": "a/b", "originalBase64": ""})
    state.reset()
    with pytest.raises(NotFound):
        state.conversation(conversation_id)
    with pytest.raises(NotFound):
        state.attachment_info(attachment_id)
    assert state.conversations("botA")["conversations"] == []
    state.post_activity(one_to_one(state), {"type": "typing"})
    assert len(heard) == 1


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        pytest.param(bad_argument("m"), 400, "BadArgument", id="BadArgument"),
        pytest.param(bad_syntax("m"), 400, "BadSyntax", id="BadSyntax"),
        pytest.param(missing_property("$.type", "m"), 400, "MissingProperty", id="Missing"),
        pytest.param(unauthorized("m"), 401, "Unauthorized", id="Unauthorized"),
        pytest.param(forbidden("m"), 403, "Forbidden", id="Forbidden"),
        pytest.param(not_found("m"), 404, "NotFound", id="NotFound"),
        pytest.param(too_big("activity", 10, 5), 413, "MessageSizeTooBig", id="TooBig"),
        pytest.param(ServiceError("m"), 500, "ServiceError", id="ServiceError"),
    ],
)
def test_errors_carry_status_code_and_their_wire_body(
    error: ConnectorError, status: int, code: str
) -> None:
    assert isinstance(error, BotemuError)
    assert (error.status, error.code) == (status, code)
    assert error.to_json() == {"error": {"code": code, "message": error.message}}
    assert str(error) == f"{code}: {error.message}"


def test_error_fields() -> None:
    assert missing_property("$.x").message == "$.x is required"
    assert isinstance(unauthorized("m", reason="expired"), Unauthorized)
    assert unauthorized("m", reason="expired").reason == "expired"
    big = too_big("attachment", None, 4)
    assert isinstance(big, MessageSizeTooBig)
    assert big.limit == 4
    assert big.message == "the body is over the limit of 4 bytes for attachment"
