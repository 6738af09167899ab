"""Channels: a conversation opened on a channel, and the shape of each user activity on it."""

from __future__ import annotations

import pytest

from emulator.channels import CHANNELS, DEFAULT_CHANNEL, TEAMS_TENANT, channel, open_on, shaped
from emulator.connector.models import ConnectorState

USER = {"id": "user-1", "name": "User", "role": "user"}


@pytest.fixture
def connector() -> ConnectorState:
    return ConnectorState(service_url="http://127.0.0.1:9070")


def test_the_default_channel_is_webchat_and_every_known_channel_streams() -> None:
    assert DEFAULT_CHANNEL == "webchat" == channel(None).id
    assert set(CHANNELS) == {"webchat", "directline", "emulator", "msteams"}
    assert all(c.streams for c in CHANNELS.values())
    with pytest.raises(ValueError, match="unknown channel 'skype'; botemu has webchat"):
        channel("skype")


@pytest.mark.parametrize("name", ["webchat", "directline", "emulator"])
def test_a_plain_channel_sets_only_the_channel_id(connector: ConnectorState, name: str) -> None:
    conversation = open_on(connector, "bot", USER, name)
    activity = shaped(conversation, {"type": "message", "from": dict(USER),
                                     "conversation": {"id": conversation.id}})  # fmt: skip
    assert activity["channelId"] == name
    assert "channelData" not in activity and "aadObjectId" not in activity["from"]
    stored = connector.post_activity(conversation.id, activity, from_bot=False)
    assert conversation.activity(stored)["channelId"] == name
    assert conversation.account() == {"id": conversation.id, "isGroup": False}


def test_msteams_has_the_shape_the_agents_playground_sends(connector: ConnectorState) -> None:
    conversation = open_on(connector, "bot", USER, "msteams")
    activity = shaped(conversation, {"type": "message", "from": dict(USER),
                                     "conversation": {"id": conversation.id}})  # fmt: skip
    assert activity["channelId"] == "msteams"
    assert activity["channelData"] == {"tenant": {"id": TEAMS_TENANT}}
    assert activity["conversation"] == {"id": conversation.id, "isGroup": False,
                                        "conversationType": "personal", "tenantId": TEAMS_TENANT}  # fmt: skip
    aad = activity["from"]["aadObjectId"]
    assert len(aad) == 36 and conversation.users[0]["aadObjectId"] == aad
    # the bot's reply carries the same envelope
    reply = connector.post_activity(conversation.id, {"type": "message", "text": "hi"})
    stored = conversation.activity(reply)
    assert stored["channelId"] == "msteams"
    assert stored["conversation"]["tenantId"] == TEAMS_TENANT
