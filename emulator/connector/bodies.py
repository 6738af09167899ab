"""Pieces of the connector's request bodies and answers that every resource shares: typed
optional properties, ChannelAccounts, pages with continuation tokens, and deep copies.

Pure: each check raises the domain errors of ``errors.py`` (BadArgument, MissingProperty).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TypeVar

from emulator.connector.errors import bad_argument, missing_property
from emulator.jsonutil import JSON, JSONObject, copy_object, kind_of

T = TypeVar("T")


def optional(params: Mapping[str, JSON], name: str, kind: type[T]) -> T | None:
    """The property ``name`` of a body when it is present and not null; BadArgument when it is
    not a ``kind`` (a boolean or a string)."""
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise bad_argument(f"$.{name} must be {_KINDS[kind]}, got {kind_of(value)}")
    return value


_KINDS: dict[type, str] = {bool: "a boolean", str: "a string"}


def channel_account(value: object, path: str) -> JSONObject:
    """A ChannelAccount: an object with a string ``id``."""
    if not isinstance(value, Mapping):
        raise bad_argument(f"{path} must be an object (a ChannelAccount), got {kind_of(value)}")
    if value.get("id") is None:
        raise missing_property(f"{path}.id")
    if not isinstance(value["id"], str) or not value["id"]:
        raise bad_argument(f"{path}.id must be a non-empty string")
    return copy.deepcopy(dict(value))


def channel_accounts(value: object, path: str, *, skip: str) -> list[JSONObject]:
    """ChannelAccounts, without the one whose id is ``skip`` and without repeats."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_argument(f"{path} must be an array, got {kind_of(value)}")
    out: dict[str, JSONObject] = {}
    for i, item in enumerate(value):
        checked = channel_account(item, f"{path}[{i}]")
        if checked["id"] != skip:
            out.setdefault(str(checked["id"]), checked)
    return list(out.values())


def page_of(items: list[T], token: str | None, size: int) -> tuple[list[T], str | None]:
    """One page from a continuation token (botemu's tokens are offsets, as decimal text)."""
    start = 0
    if token:
        if not token.isdecimal() or int(token) > len(items):
            raise bad_argument(f"continuationToken {token!r} is not one botemu issued")
        start = int(token)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def copies(items: list[JSONObject]) -> list[JSONObject]:
    """Deep copies of JSON objects (what the state hands out is never its own)."""
    return [copy_object(m) for m in items]


def json_copies(items: list[JSONObject]) -> list[JSON]:
    """``copies``, typed as a JSON array."""
    return [copy_object(m) for m in items]
