"""A conversation keeps its last activities in memory (``ActivityOps.activities_kept``; the
transcript keeps every one): the oldest leave memory a quarter at a time, a reader of the
control API's ``since`` is told how many it missed, a reply to a forgotten activity is still
taken, and an update of one is a clear 404."""

from __future__ import annotations

import pytest

from emulator.connector.errors import ConnectorError
from emulator.connector.models import ConnectorState

USER = {"id": "user-1", "name": "User"}


@pytest.fixture
def state() -> ConnectorState:
    connector = ConnectorState(service_url="http://127.0.0.1:9070")
    connector.activities_kept = 8
    return connector


def test_the_oldest_activities_leave_memory_and_readers_are_told(state: ConnectorState) -> None:
    conversation = state.open_conversation("bot", USER)
    ids = [state.post_activity(conversation.id, {"type": "message", "text": str(n)})
           for n in range(30)]  # fmt: skip
    kept = len(conversation.activities)
    assert 8 <= kept <= 10 and conversation.dropped == 30 - kept
    assert [a["text"] for a in conversation.activities] == [str(n) for n in range(30 - kept, 30)]
    page = conversation.since(0)
    assert page["skipped"] == 30 - kept and page["next"] == 30
    assert [a["text"] for a in page["activities"]] == [str(n) for n in range(30 - kept, 30)]
    assert "skipped" not in conversation.since(29) and len(conversation.since(29)["activities"]) == 1
    # a reply to a forgotten activity is taken; an update of one says why it is not found
    reply = state.post_activity(conversation.id, {"type": "message", "text": "r"}, reply_to=ids[0])
    assert conversation.activity(reply)["replyToId"] == ids[0]
    with pytest.raises(ConnectorError, match="among the last"):
        state.update_activity(conversation.id, ids[0], {"type": "message", "text": "x"})
    assert len(conversation.activity_members) == len(conversation.activities)
