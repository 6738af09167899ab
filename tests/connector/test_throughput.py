"""What the connector's hot path does faster keeps doing the same: the verified-token cache's
refusals, ids that stay unique, copies that equal deep copies, the transcript's warnings and
headers (docs/connector.md, "Throughput")."""

from __future__ import annotations

import copy
import itertools
import json
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.config import Profile, default_placeholders
from emulator.connector.activities import activity_warnings, check_activity
from emulator.connector.auth import identity_verifier
from emulator.connector.errors import ConnectorError
from emulator.connector.models import ConnectorState, _Uuid4Hex, uuid4_hex
from emulator.connector.routes import make_connector_app
from emulator.httpio import redact_authorization
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
    for _ in range(200):  # the same bits as uuid.UUID(bytes=..., version=4), id by id
        random = os.urandom(16 * 3)
        expected = [uuid.UUID(bytes=random[i : i + 16], version=4).hex for i in (0, 16, 32)]
        assert uuid4_hex(random) == "".join(expected)
    for edge in (b"\x00" * 16, b"\xff" * 16):
        assert uuid4_hex(edge) == uuid.UUID(bytes=edge, version=4).hex


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


async def recorded_connector(
    aiohttp_client: ClientFactory,
) -> tuple[Client, TranscriptStore, str]:
    """A connector that records into a store in memory, and a conversation of bot A's."""
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW)
    store = TranscriptStore(":memory:")
    client = await aiohttp_client(make_connector_app(state, fake_verifier, store=store))
    return client, store, state.open_conversation("botA", {"id": "u"}).id


async def test_replies_and_updates_keep_their_warnings_in_the_transcript(
    aiohttp_client: ClientFactory,
) -> None:
    client, store, conversation = await recorded_connector(aiohttp_client)
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


async def test_each_exchange_keeps_its_own_headers_though_repeated_ones_are_made_once(
    aiohttp_client: ClientFactory,
) -> None:
    client, store, conversation = await recorded_connector(aiohttp_client)
    base = f"/v3/conversations/{conversation}/activities"
    sent = [("a", "x"), ("a", "x"), ("b", "x"), ("a", "x"), ("a", "longer text")]
    for tag, text in sent:
        await client.post(base, json={"type": "message", "text": text},
                          headers={"X-Tag": tag, "Authorization": f"Bearer {tag}.{tag}.sig"})  # fmt: skip
    requests = [e.payload for e in store.events(conversation) if e.kind == "http.request"]
    seen = [(h["X-Tag"], h["Authorization"], h["Content-Length"])
            for h in (r["headers"] for r in requests) if isinstance(h, dict)]  # fmt: skip
    length = {t: str(len(json.dumps({"type": "message", "text": t}))) for t in ("x", "longer text")}
    assert seen == [(tag, redact_authorization(f"Bearer {tag}.{tag}.sig"), length[text])
                    for tag, text in sent]  # fmt: skip
    assert seen[2][1] == "Bearer b.b.<signature removed>"


# --- accepted Authorization headers --------------------------------------------------------------


def answer(verify: Callable[[str | None], str], authorization: str) -> tuple[int, str, str]:
    """(status, reason, message) of what ``verify`` says, 200 for an acceptance."""
    try:
        return 200, "", verify(authorization)
    except ConnectorError as e:
        return e.status, str(getattr(e, "reason", None)), str(e)


def test_an_accepted_header_is_refused_as_a_fresh_verifier_refuses_it(keys: KeyStore) -> None:
    """Whatever changes after a header was accepted (the clock passes ``exp``, or comes before
    ``nbf`` again; the key leaves the key document; the app id is no longer registered), the
    header is refused exactly as a verifier that never saw it refuses it."""
    clock = [NOW]
    bots = {"botA"}

    def verifier() -> Callable[[str | None], str]:
        return identity_verifier(keys, PLACEHOLDERS, registered=lambda a: a in bots,
                                 clock=lambda: clock[0])  # fmt: skip

    verify = verifier()
    header = f"Bearer {mint(keys, {**CLAIMS, 'nbf': NOW + 100}, now=NOW, lifetime=1000)}"
    clock[0] = NOW - 150  # nbf is NOW + 100, exp NOW + 1000: valid from NOW - 200 to NOW + 1300
    assert answer(verify, header) == (200, "", "botA")
    for moment in (NOW - 250, NOW + 1299, NOW + 1300, NOW + 5000, NOW - 200, NOW):
        clock[0] = moment
        assert answer(verify, header) == answer(verifier(), header), moment
    clock[0] = NOW + 500
    assert answer(verify, header) == (200, "", "botA")
    bots.clear()
    assert answer(verify, header) == answer(verifier(), header) == (
        403, "None", "Forbidden: app id 'botA' is not a bot registered with botemu")  # fmt: skip
    bots.add("botA")
    assert answer(verify, header) == (200, "", "botA")
    keys.rotate()
    keys.grace_seconds = 0
    refused = answer(verify, header)
    assert refused == answer(verifier(), header) and refused[:2] == (401, "unknown-kid")


def test_only_accepted_headers_are_remembered_and_they_are_bounded(keys: KeyStore) -> None:
    from emulator.connector import auth

    remembered: list[auth.AcceptedHeaders] = []
    original = auth.AcceptedHeaders.__init__

    def spy(self: auth.AcceptedHeaders, size: int = 4096) -> None:
        original(self, size)
        remembered.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(auth.AcceptedHeaders, "__init__", spy)
        verify = identity_verifier(keys, PLACEHOLDERS, registered=lambda a: a == "botA",
                                   clock=lambda: NOW)  # fmt: skip
    (cache,) = remembered
    token = mint(keys, CLAIMS, now=NOW)
    refused = [*tampered(token), mint(keys, {**CLAIMS, "appid": "botB"}, now=NOW),
               mint(keys, {**CLAIMS, "aud": "x"}, now=NOW)]  # fmt: skip
    for bad in refused:
        first = answer(verify, f"Bearer {bad}")
        assert first[0] in (401, 403) and answer(verify, f"Bearer {bad}") == first
        assert cache.get(f"Bearer {bad}") is None
    assert verify(f"Bearer {token}") == "botA"
    assert cache.get(f"Bearer {token}") == auth.Accepted(
        keys.current().kid, NOW + 3600, NOW, "botA"
    )
    small = auth.AcceptedHeaders(size=2)
    for n in range(5):
        small.put(f"h{n}", auth.Accepted("k", 1.0, None, "a"))
    assert [h for h in ("h2", "h3", "h4") if small.get(h)] == ["h3", "h4"]


# --- timestamps --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "moment",
    [0, 0.0, 1.0, 0.0005, 0.9999994, 0.9999995, 0.9999996, 1_750_000_000.0, 1_750_000_000.25,
     1_750_000_000.9994999, 1_750_000_000.9999995, 1_750_000_000.0000005, 1_750_000_000.0000015,
     253_402_300_798.9999995, 253_402_300_799.5, -1.5, 4_102_444_800.123],
)  # fmt: skip
def test_timestamps_are_what_datetime_writes(moment: float) -> None:
    from datetime import UTC, datetime

    from emulator.connector.state import _Timestamps

    stamps = _Timestamps()
    expected = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
    for _ in range(2):  # made, then from the second's cache
        assert stamps(moment) == expected.replace("+00:00", "Z")


# --- the body --------------------------------------------------------------------------------


async def test_a_body_sent_in_several_chunks_is_read_whole(aiohttp_client: ClientFactory) -> None:
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW)
    client = await aiohttp_client(make_connector_app(state, fake_verifier))
    conversation = state.open_conversation("botA", {"id": "u"}).id
    text = "x" * 200_000

    async def chunks() -> AsyncIterator[bytes]:
        body = orjson.dumps({"type": "message", "text": text})
        for start in range(0, len(body), 7_000):
            yield body[start : start + 7_000]

    response = await client.post(f"/v3/conversations/{conversation}/activities", data=chunks(),
                                  headers={"Content-Type": "application/json"})  # fmt: skip
    assert response.status == 200, await response.text()
    assert state.conversation(conversation).activities[-1]["text"] == text


def test_activities_stored_while_the_members_stay_the_same_share_one_copy_of_them() -> None:
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW)
    created = state.create_conversation("botA", {"members": [{"id": "u1"}, {"id": "u2"}],
                                                 "isGroup": True})  # fmt: skip
    conversation = str(created["id"])
    first, second = (state.post_activity(conversation, {"type": "typing"}) for _ in range(2))
    kept = state.conversation(conversation).activity_members
    assert kept[first] is kept[second]  # one copy while nothing changed
    handed = state.activity_members(conversation, first)
    handed[0]["id"] = "changed"  # what is handed out is a copy
    handed.clear()
    state.remove_member(conversation, "u2")
    state.conversation(conversation).members[1]["name"] = "Ada"  # changed in place, too
    third = state.post_activity(conversation, {"type": "typing"})
    ids = [
        [m.get("id") for m in state.activity_members(conversation, a)]
        for a in (first, second, third)
    ]
    assert ids == [["botA", "u1", "u2"], ["botA", "u1", "u2"], ["botA", "u1"]]
    assert state.activity_members(conversation, third)[1] == {"id": "u1", "name": "Ada"}
    assert "name" not in state.activity_members(conversation, first)[1]


def test_a_listener_that_wants_some_conversations_hears_only_those() -> None:
    state = ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW)
    mine = state.open_conversation("botA", {"id": "u"}).id
    other = state.open_conversation("botA", {"id": "v"}).id
    heard: list[tuple[str, JSON]] = []
    asked: list[str] = []

    def wants(conversation_id: str) -> bool:
        asked.append(conversation_id)
        if conversation_id == "broken":
            raise RuntimeError("a listener's own bug")
        return conversation_id == mine

    def listener(conversation_id: str, activity: JSONObject) -> None:
        heard.append((conversation_id, activity.get("text")))

    state.add_listener(listener, wants=wants)
    everything: list[str] = []
    state.add_listener(lambda c, a: everything.append(c))
    for conversation in (mine, other, mine):
        state.post_activity(conversation, {"type": "message", "text": conversation})
    assert heard == [(mine, mine), (mine, mine)]
    assert asked == [mine, other, mine] and everything == [mine, other, mine]
    state._notify("broken", {"type": "message"})  # wants raised: logged, nothing passed
    assert len(heard) == 2 and everything[-1] == "broken"
    state.remove_listener(listener)
    state.post_activity(mine, {"type": "typing"})
    assert len(heard) == 2 and len(asked) == 4
