"""What the connector's hot path does faster keeps doing the same: the verified-token cache's
refusals, ids that stay unique, copies that equal deep copies, the transcript's warnings and
headers (docs/connector.md, "Throughput")."""

from __future__ import annotations

import copy
import itertools
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.config import Profile, default_placeholders
from emulator.connector.activities import activity_warnings, check_activity
from emulator.connector.auth import identity_verifier
from emulator.connector.errors import ConnectorError
from emulator.connector.models import ConnectorState, _Uuid4Hex
from emulator.connector.routes import make_connector_app
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import VerifiedTokens, mint
from emulator.jsonutil import JSON, JSONObject, copy_json, copy_object
from emulator.transcripts.store import TranscriptStore

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[[web.Application], Awaitable[Client]]

SERVICE_URL = "http://127.0.0.1:9070"
NOW = 1_750_000_000.0
PLACEHOLDERS = default_placeholders(SERVICE_URL, Profile.V31)
CLAIMS: JSONObject = {
    "aud": PLACEHOLDERS.connector_audience,
    "iss": PLACEHOLDERS.emulator_issuer,
    "appid": "botA",
    "ver": "1.0",
}


# --- the verified-token cache, through the connector's verifier --------------------------------


@pytest.fixture
def keys(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys", clock=lambda: NOW)


def verifier_at(keys: KeyStore, clock: list[float]) -> Callable[[str | None], str]:
    return identity_verifier(
        keys, PLACEHOLDERS, registered=lambda a: a == "botA", clock=lambda: clock[0]
    )


def refusal(verify: Callable[[str | None], str], authorization: str) -> str | None:
    """The reason of the 401 ``verify`` answers, or None when it accepts."""
    try:
        verify(authorization)
    except ConnectorError as e:
        assert e.status == 401
        return str(getattr(e, "reason", None))
    return None


def test_a_token_accepted_while_valid_is_refused_once_expired(keys: KeyStore) -> None:
    clock = [NOW]
    verify = verifier_at(keys, clock)
    token = mint(keys, CLAIMS, now=NOW, lifetime=100)
    for _ in range(3):  # accepted, then from the cache
        assert verify(f"Bearer {token}") == "botA"
    clock[0] = NOW + 100 + 299  # within the 5 minutes of skew
    assert verify(f"Bearer {token}") == "botA"
    clock[0] = NOW + 100 + 300
    assert refusal(verify, f"Bearer {token}") == "expired"
    clock[0] = NOW  # the cache never turned the refusal into an acceptance, nor the reverse
    assert verify(f"Bearer {token}") == "botA"


def tampered(token: str) -> list[str]:
    """The token with its signature, its claims or its header changed."""
    header, payload, signature = token.split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    claims = json.loads(jwt_part(payload))
    forged = jwt_encode({**claims, "appid": "botB"})
    head = json.loads(jwt_part(header))
    other_kid = jwt_encode({**head, "kid": "not-a-kid"})
    return [
        f"{header}.{payload}.{flipped}",
        f"{header}.{forged}.{signature}",
        f"{other_kid}.{payload}.{signature}",
        f"{header}.{payload}.",
    ]


def jwt_part(part: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def jwt_encode(value: JSONObject) -> str:
    import base64

    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def test_a_tampered_token_never_hits_the_cache_and_no_refusal_is_remembered(
    keys: KeyStore,
) -> None:
    from emulator.identity import tokens

    remembered: list[VerifiedTokens] = []
    original = tokens.VerifiedTokens.__init__

    def spy(self: VerifiedTokens, size: int = 4096) -> None:
        original(self, size)
        remembered.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens.VerifiedTokens, "__init__", spy)
        verify = identity_verifier(keys, PLACEHOLDERS, registered=lambda a: a == "botA",
                                   clock=lambda: NOW)  # fmt: skip
    (cache,) = remembered
    token = mint(keys, CLAIMS, now=NOW)
    assert verify(f"Bearer {token}") == "botA"
    assert cache.get(token) is not None
    for bad in tampered(token):
        for _ in range(2):  # refused the same way the second time: nothing was remembered
            assert refusal(verify, f"Bearer {bad}") in ("signature", "unknown-kid", "malformed")
        assert cache.get(bad) is None
    assert verify(f"Bearer {token}") == "botA"


def test_the_cache_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache = VerifiedTokens(size=3)
    for n in range(10):
        cache.put(f"t{n}", "kid", {"n": n})
        assert len(cache._tokens) <= 3
    assert [t for t in ("t6", "t7", "t8", "t9") if cache.get(t) is not None] == ["t7", "t8", "t9"]
    cache.get("t7")  # used: kept over t8
    cache.put("t10", "kid", {})
    assert cache.get("t8") is None and cache.get("t7") is not None


# --- ids ---------------------------------------------------------------------------------------


def test_ids_stay_unique_when_the_id_source_repeats_itself() -> None:
    numbers = itertools.cycle(["a", "b", "a", "b", "c", "d", "e", "f", "g", "h"])
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW, ids=lambda: next(numbers))
    conversation = state.create_conversation("botA", {"members": [{"id": "u"}]})["id"]
    assert conversation == "a"
    first = state.post_activity(conversation, {"type": "message", "text": "1"})
    second = state.post_activity(conversation, {"type": "message", "text": "2"})
    assert (first, second) == ("b", "a")  # unique among the activities: "b" is not reused
    state.delete_activity(conversation, first)
    ids = [state.post_activity(conversation, {"type": "typing"}) for _ in range(4)]
    assert ids == ["b", "c", "d", "e"]  # "b" is free again once its activity is deleted
    stored = [a["id"] for a in state.conversation(conversation).activities]
    assert len(stored) == len(set(stored)) == 5


def test_ids_are_uuid4_hex_as_uuid4_makes_them() -> None:
    source = _Uuid4Hex()
    made = [source() for _ in range(1000)]
    assert len(set(made)) == 1000
    for value in made:
        parsed = uuid.UUID(hex=value)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, value)
    for _ in range(200):  # the same bits as uuid.UUID(bytes=..., version=4)
        random = os.urandom(16)
        source._pool, source._at = random, 0
        assert source() == uuid.UUID(bytes=random, version=4).hex


# --- copies and checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        None,
        "text",
        1,
        -0.0,
        True,
        [],
        {},
        {"a": [1, {"b": [None, "x", 2.5]}], "c": {"d": {"e": []}}, "f": 10**30},
        [[{"deep": [[["x"]]]}]],
    ],
)
def test_copy_json_is_a_deep_copy(value: JSON) -> None:
    copied = copy_json(value)
    assert copied == copy.deepcopy(value)
    assert type(copied) is type(value)
    if isinstance(value, dict) and value:
        assert copied is not value
        inner = value["a"]
        assert isinstance(copied, dict) and copied["a"] is not inner
        assert isinstance(inner, list) and isinstance(inner[1], dict)
        inner[1]["b"] = "changed"
        assert copied != value  # nothing shared


def test_copy_object_copies_any_mapping_into_a_dict() -> None:
    from types import MappingProxyType

    source = MappingProxyType({"a": {"b": 1}, "t": (1, 2)})
    copied = copy_object(source)  # type: ignore[arg-type]
    assert type(copied) is dict and copied == {"a": {"b": 1}, "t": (1, 2)}
    assert copied["a"] is not source["a"]


@pytest.mark.parametrize(
    ("activity", "message"),
    [
        ({"type": "message", "attachments": {}, "text": 5, "from": []}, "$.text must be a string"),
        ({"type": "message", "entities": 1, "from": "x"}, "$.from must be an object"),
        ({"type": "message", "membersAdded": {}, "relatesTo": 2}, "$.relatesTo must be an object"),
        ({"type": "message", "topicName": 1, "id": 2}, "$.id must be a string"),
    ],
)
def test_the_first_mistyped_property_is_the_one_reported(
    activity: JSONObject, message: str
) -> None:
    for check in (activity_warnings, check_activity):
        with pytest.raises(ConnectorError, match=message.replace("$", r"\$")):
            check(activity)


# --- the transcript ----------------------------------------------------------------------------


def fake_verifier(authorization: str | None) -> str:
    return "botA"


async def test_replies_and_updates_keep_their_warnings_in_the_transcript(
    aiohttp_client: ClientFactory,
) -> None:
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW)
    store = TranscriptStore(":memory:")
    client = await aiohttp_client(make_connector_app(state, fake_verifier, store=store))
    conversation = state.open_conversation("botA", {"id": "u"}).id
    base = f"/v3/conversations/{conversation}/activities"
    sent = await (await client.post(base, json={"type": "Message", "text": "x"})).json()
    await client.post(f"{base}/{sent['id']}", json={"type": "event"})
    await client.put(f"{base}/{sent['id']}", json={"type": "custom"})
    await client.post(f"{base}/unknown", json={"type": "message"})  # 404 after the check
    await client.post(base, json={"type": 1})  # refused by the check: no warnings
    requests = [e.payload for e in store.events(conversation) if e.kind == "http.request"]
    assert [r.get("warnings") for r in requests] == [
        ["activity type 'Message' is written 'message' in the spec"],
        ["an event without a name: the name selects the task (spec, Events)"],
        ["unknown activity type 'custom': stored and passed on as is"],
        [
            "an empty message (no text, attachments, suggestedActions, channelData or value): "
            "accepted, but real channels may refuse it or show nothing"
        ],
        None,
    ]
    for payload in (e.payload for e in store.events(conversation)):
        headers = payload.get("headers")
        if isinstance(headers, dict):
            assert all(type(name) is str for name in headers)  # orjson writes them itself
            assert orjson.loads(orjson.dumps(payload)) == payload
