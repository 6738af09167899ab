"""The user side's channels: a conversation's channel id and the shape a bot sees from it.
May import: the connector, and what it may import.

A conversation is opened on one channel (``botemu chat --channel``, the web chat's picker, a
scenario's ``channel:``), and every activity of it carries that ``channelId``. Each channel gives
the conversation and its user the fields a bot reads on that channel:

==============  =====================================================================
``webchat``     the default (docs/decisions.md, "The default channel"): a web page's chat
``directline``  a Direct Line client
``emulator``    the platform's retired desktop emulator
``msteams``     as the Agents Playground sends it: ``conversation.conversationType``
                ``personal`` and ``tenantId``, ``channelData.tenant.id`` on every
                activity, ``from.aadObjectId``
==============  =====================================================================

The SDKs stream replies only on some channels (field notes): all four of these.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from emulator.connector.conversations import DEFAULT_CHANNEL, Conversation
from emulator.connector.models import ConnectorState
from emulator.jsonutil import JSON, JSONObject

__all__ = ["CHANNELS", "DEFAULT_CHANNEL", "TEAMS_TENANT", "Channel", "channel", "open_on", "shaped"]

TEAMS_TENANT = "5f7c1a2e-8b3d-4e6f-9a0b-1c2d3e4f5a6b"
"""The tenant of botemu's msteams conversations."""
_AAD = uuid.UUID("b0e7c0de-0000-4000-8000-000000000000")


@dataclass(frozen=True, slots=True)
class Channel:
    """One channel: its id, whether replies stream on it, and its Teams-like shape."""

    id: str
    streams: bool = True
    teams: bool = False


_ALL = (
    Channel("webchat"),
    Channel("directline"),
    Channel("emulator"),
    Channel("msteams", teams=True),
)
CHANNELS: dict[str, Channel] = {c.id: c for c in _ALL}


def channel(name: str | None) -> Channel:
    """The channel named ``name`` (None: the default); ValueError names the known ones."""
    found = CHANNELS.get(name or DEFAULT_CHANNEL)
    if found is None:
        raise ValueError(f"unknown channel {str(name)[:60]!r}; botemu has {', '.join(CHANNELS)}")
    return found


def _user(chosen: Channel, user: Mapping[str, JSON]) -> JSONObject:
    account: JSONObject = dict(user)
    if chosen.teams:
        account.setdefault("aadObjectId", str(uuid.uuid5(_AAD, str(user.get("id")))))
    return account


def open_on(
    connector: ConnectorState, app_id: str, user: Mapping[str, JSON], name: str | None
) -> Conversation:
    """A new 1:1 conversation between ``user`` and the bot on the channel ``name``."""
    chosen = channel(name)
    if chosen.teams:
        return connector.open_conversation(
            app_id, _user(chosen, user), channel_id=chosen.id, tenant=TEAMS_TENANT,
            conversation_type="personal", channel_data={"tenant": {"id": TEAMS_TENANT}},
        )  # fmt: skip
    return connector.open_conversation(app_id, user, channel_id=chosen.id)


def shaped(conversation: Conversation, activity: JSONObject) -> JSONObject:
    """A user's ``activity`` in ``conversation`` with its channel's fields: ``channelId`` and,
    on a Teams-like channel, ``channelData.tenant`` and the user's ``aadObjectId``."""
    chosen = CHANNELS.get(conversation.channel_id)
    out = dict(activity)
    out["channelId"] = conversation.channel_id
    if chosen is not None and chosen.teams:
        data = out.get("channelData")
        merged: JSONObject = dict(data) if isinstance(data, dict) else {}
        merged.setdefault("tenant", {"id": conversation.tenant_id or TEAMS_TENANT})
        out["channelData"] = merged
        sender = out.get("from")
        if isinstance(sender, dict):
            out["from"] = _user(chosen, sender)
        conv = out.get("conversation")
        if isinstance(conv, dict):
            out["conversation"] = {**conv, **conversation.account()}
    return out
