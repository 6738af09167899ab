"""Tests of emulator/connector/routes.py (and auth.py): the REST v3 surface over HTTP, in process.

Routes are tested with a fake Verifier that maps ``Bearer token-<bot>`` to an app id;
``identity_verifier`` is tested with real tokens minted with botemu's own keys.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from emulator.config import Profile, default_placeholders
from emulator.connector.auth import app_id_of, claims_verifier, identity_verifier
from emulator.connector.errors import forbidden, unauthorized
from emulator.connector.models import ConnectorState
from emulator.connector.routes import (
    ConnectorLimits,
    connector_routes,
    make_connector_app,
    setup_connector,
)
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import mint
from emulator.jsonutil import JSONObject, dumps
from emulator.transcripts.store import TranscriptStore

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[..., Awaitable[Client]]

SERVICE_URL = "http://127.0.0.1:9070"
NOW = 1_700_000_000.0
USER: JSONObject = {"id": "user-1", "name": "Ada"}
MESSAGE: JSONObject = {"type": "message", "text": "hello"}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
ATTACHMENT: JSONObject = {
    "type": "image/png",
    "name": "dot.png",
    "originalBase64": base64.b64encode(PNG).decode("ascii"),
}
TOKENS = {"token-botA": "botA", "token-botB": "botB"}


def fake_verifier(authorization: str | None) -> str:
    if not authorization:
        raise unauthorized("the Authorization header is missing", reason="missing")
    scheme, _, token = authorization.partition(" ")
    if token == "token-stranger":
        raise forbidden("app id 'stranger' is not a bot registered with botemu")
    if scheme != "Bearer" or token not in TOKENS:
        raise unauthorized("the token was refused: bad signature", reason="signature")
    return TOKENS[token]


def auth(bot: str = "botA") -> dict[str, str]:
    return {"Authorization": f"Bearer token-{bot}"}


def counter() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"id{next(numbers)}"


@pytest.fixture
def state() -> ConnectorState:
    return ConnectorState(service_url=SERVICE_URL, clock=lambda: NOW, ids=counter())


@pytest.fixture
async def client(aiohttp_client: ClientFactory, state: ConnectorState) -> Client:
    return await aiohttp_client(make_connector_app(state, fake_verifier))


@dataclasses.dataclass
class World:
    """A conversation of botA (id1) with a group of two users, an activity (id2), an
    attachment (id3)."""

    conversation: str = "id1"
    activity: str = "id2"
    attachment: str = "id3"
    member: str = "u1"


@pytest.fixture
def world(state: ConnectorState) -> World:
    members: list[Any] = [{"id": "u1"}, {"id": "u2"}]
    created = state.create_conversation(
        "botA", {"members": members, "isGroup": True, "activity": {"type": "message", "text": "a"}}
    )
    state.upload_attachment(str(created["id"]), ATTACHMENT)
    return World()


def fill(path: str, world: World) -> str:
    return path.format(c=world.conversation, a=world.activity, t=world.attachment, m=world.member)


EVERY_ROUTE: list[tuple[str, str, JSONObject | None]] = [
    ("POST", "/v3/conversations", {"members": [USER]}),
    ("GET", "/v3/conversations", None),
    ("POST", "/v3/conversations/{c}/activities", MESSAGE),
    ("POST", "/v3/conversations/{c}/activities/history", {"activities": [MESSAGE]}),
    ("POST", "/v3/conversations/{c}/activities/{a}", MESSAGE),
    ("PUT", "/v3/conversations/{c}/activities/{a}", MESSAGE),
    ("DELETE", "/v3/conversations/{c}/activities/{a}", None),
    ("GET", "/v3/conversations/{c}/activities/{a}/members", None),
    ("GET", "/v3/conversations/{c}/members", None),
    ("GET", "/v3/conversations/{c}/members/{m}", None),
    ("DELETE", "/v3/conversations/{c}/members/{m}", None),
    ("GET", "/v3/conversations/{c}/pagedmembers", None),
    ("POST", "/v3/conversations/{c}/attachments", ATTACHMENT),
    ("GET", "/v3/attachments/{t}", None),
    ("GET", "/v3/attachments/{t}/views/original", None),
]
ROUTE_PARAMS = [pytest.param(*route, id=f"{route[0]} {route[1]}") for route in EVERY_ROUTE]
CONVERSATION_ROUTES = ROUTE_PARAMS[2:]


def test_every_route_of_the_field_notes_is_served_and_tested() -> None:
    served = {(r.method, r.path) for r in connector_routes()}
    tested = {
        (
            m,
            p.format(
                c="{conversationId}", a="{activityId}", m="{memberId}", t="{attachmentId}"
            ).replace("/views/original", "/views/{viewId}"),
        )
        for m, p, _ in EVERY_ROUTE
    }
    assert served == tested
    assert len(served) == 15


async def error_of(response: Any) -> tuple[str, str]:
    """The code and message of an error body, checking its shape exactly."""
    assert response.content_type == "application/json"
    body = await response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["code"], body["error"]["message"]


# --- happy paths -------------------------------------------------------------------------------


async def test_create_conversation_is_201_with_id_and_service_url(
    client: Client, state: ConnectorState
) -> None:
    response = await client.post(
        "/v3/conversations", json={"members": [USER], "activity": MESSAGE}, headers=auth()
    )
    assert response.status == 201
    assert await response.json() == {"id": "id1", "serviceUrl": SERVICE_URL, "activityId": "id2"}
    assert state.conversation("id1").bot_app_id == "botA"


async def test_get_conversations_lists_only_the_callers(
    client: Client, state: ConnectorState, world: World
) -> None:
    state.create_conversation("botB", {"members": [USER]})
    response = await client.get("/v3/conversations", headers=auth())
    assert response.status == 200
    body = await response.json()
    assert [c["id"] for c in body["conversations"]] == [world.conversation]
    assert body["continuationToken"] is None
    paged = await client.get("/v3/conversations?continuationToken=zz", headers=auth())
    assert paged.status == 400


async def test_send_returns_the_exact_resource_response_bytes(
    client: Client, state: ConnectorState, world: World
) -> None:
    response = await client.post(
        f"/v3/conversations/{world.conversation}/activities", json=MESSAGE, headers=auth()
    )
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert await response.read() == b'{"id":"id4"}'
    stored = state.conversation(world.conversation).activity("id4")
    assert stored["text"] == "hello"
    assert stored["serviceUrl"] == SERVICE_URL
    assert stored["channelId"] == "webchat"


async def test_reply_update_and_delete(client: Client, state: ConnectorState, world: World) -> None:
    base = f"/v3/conversations/{world.conversation}/activities"
    reply = await client.post(f"{base}/{world.activity}", json=MESSAGE, headers=auth())
    assert reply.status == 200
    reply_id = (await reply.json())["id"]
    conversation = state.conversation(world.conversation)
    assert conversation.activity(reply_id)["replyToId"] == world.activity
    update = await client.put(
        f"{base}/{reply_id}", json={"type": "message", "text": "edited"}, headers=auth()
    )
    assert update.status == 200
    assert await update.json() == {"id": reply_id}
    assert conversation.activity(reply_id)["text"] == "edited"
    delete = await client.delete(f"{base}/{reply_id}", headers=auth())
    assert delete.status == 200
    assert await delete.read() == b""
    assert [a["id"] for a in conversation.activities] == [world.activity]


async def test_history_stores_the_transcript(
    client: Client, state: ConnectorState, world: World
) -> None:
    response = await client.post(
        f"/v3/conversations/{world.conversation}/activities/history",
        json={"activities": [{"type": "message", "text": "past", "id": "p1"}]},
        headers=auth(),
    )
    assert response.status == 200
    assert set(await response.json()) == {"id"}
    assert state.conversation(world.conversation).activity("p1")["text"] == "past"


async def test_members_routes(client: Client, state: ConnectorState, world: World) -> None:
    base = f"/v3/conversations/{world.conversation}"
    members = await client.get(f"{base}/members", headers=auth())
    assert await members.json() == [{"id": "botA", "role": "bot"}, {"id": "u1"}, {"id": "u2"}]
    one = await client.get(f"{base}/members/u2", headers=auth())
    assert await one.json() == {"id": "u2"}
    paged = await client.get(f"{base}/pagedmembers?pageSize=2", headers=auth())
    assert await paged.json() == {
        "members": [{"id": "botA", "role": "bot"}, {"id": "u1"}],
        "continuationToken": "2",
    }
    rest = await client.get(f"{base}/pagedmembers?pageSize=2&continuationToken=2", headers=auth())
    assert await rest.json() == {"members": [{"id": "u2"}], "continuationToken": None}
    removed = await client.delete(f"{base}/members/u1", headers=auth())
    assert removed.status == 200
    assert [m["id"] for m in state.members(world.conversation)] == ["botA", "u2"]
    of_activity = await client.get(f"{base}/activities/{world.activity}/members", headers=auth())
    assert [m["id"] for m in await of_activity.json()] == ["botA", "u1", "u2"]


async def test_attachment_upload_info_and_views_round_trip(client: Client, world: World) -> None:
    upload = await client.post(
        f"/v3/conversations/{world.conversation}/attachments",
        json={**ATTACHMENT, "thumbnailBase64": base64.b64encode(b"tiny").decode()},
        headers=auth(),
    )
    assert upload.status == 200
    attachment_id = (await upload.json())["id"]
    info = await client.get(f"/v3/attachments/{attachment_id}", headers=auth())
    assert await info.json() == {
        "name": "dot.png",
        "type": "image/png",
        "views": [{"viewId": "original", "size": len(PNG)}, {"viewId": "thumbnail", "size": 4}],
    }
    original = await client.get(f"/v3/attachments/{attachment_id}/views/original", headers=auth())
    assert original.status == 200
    assert original.headers["Content-Type"] == "image/png"
    assert await original.read() == PNG
    thumbnail = await client.get(f"/v3/attachments/{attachment_id}/views/thumbnail", headers=auth())
    assert await thumbnail.read() == b"tiny"


async def test_a_two_megabyte_attachment_is_accepted_whatever_client_max_size_says(
    client: Client, world: World
) -> None:
    data = bytes(range(256)) * (8 * 1024)  # 2 MiB; the base64 body is about 2.7 MiB
    body: JSONObject = {
        "type": "application/octet-stream",
        "originalBase64": base64.b64encode(data).decode(),
    }
    upload = await client.post(
        f"/v3/conversations/{world.conversation}/attachments",
        data=io.BytesIO(dumps(body)),
        headers={**auth(), "Content-Type": "application/json"},
    )
    assert upload.status == 200
    attachment_id = (await upload.json())["id"]
    view = await client.get(f"/v3/attachments/{attachment_id}/views/original", headers=auth())
    assert await view.read() == data


# --- 401, 403 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ROUTE_PARAMS)
@pytest.mark.parametrize(
    ("headers", "challenge"),
    [
        pytest.param({}, "Bearer", id="missing"),
        pytest.param(
            {"Authorization": "Bearer nonsense"}, 'Bearer error="invalid_token"', id="invalid"
        ),
        pytest.param(
            {"Authorization": "Basic token-botA"}, 'Bearer error="invalid_token"', id="not bearer"
        ),
    ],
)
async def test_every_route_needs_a_valid_token(
    client: Client,
    state: ConnectorState,
    world: World,
    method: str,
    path: str,
    body: JSONObject | None,
    headers: dict[str, str],
    challenge: str,
) -> None:
    before = len(state.conversation(world.conversation).activities)
    response = await client.request(method, fill(path, world), json=body, headers=headers)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == challenge
    code, _ = await error_of(response)
    assert code == "Unauthorized"
    assert len(state.conversation(world.conversation).activities) == before
    assert len(state.conversations("botA")["conversations"]) == 1  # type: ignore[arg-type]


@pytest.mark.parametrize(("method", "path", "body"), CONVERSATION_ROUTES)
async def test_another_bot_is_forbidden_on_every_route_of_a_conversation(
    client: Client,
    state: ConnectorState,
    world: World,
    method: str,
    path: str,
    body: JSONObject | None,
) -> None:
    conversation = state.conversation(world.conversation)
    before = (len(conversation.activities), len(conversation.members))
    response = await client.request(method, fill(path, world), json=body, headers=auth("botB"))
    assert response.status == 403
    code, message = await error_of(response)
    assert code == "Forbidden"
    assert "botB" in message
    assert (len(conversation.activities), len(conversation.members)) == before


@pytest.mark.parametrize(("method", "path", "body"), ROUTE_PARAMS)
async def test_an_unregistered_app_id_is_forbidden(
    client: Client, world: World, method: str, path: str, body: JSONObject | None
) -> None:
    response = await client.request(method, fill(path, world), json=body, headers=auth("stranger"))
    assert response.status == 403
    assert "WWW-Authenticate" not in response.headers
    assert (await error_of(response))[0] == "Forbidden"


async def test_forbidden_comes_before_the_body_is_judged(client: Client, world: World) -> None:
    response = await client.post(
        f"/v3/conversations/{world.conversation}/activities",
        data=b"{not json",
        headers=auth("botB"),
    )
    assert response.status == 403


# --- 404, 400, 413 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/v3/conversations/nope/activities", MESSAGE, id="conversation"),
        pytest.param("GET", "/v3/conversations/nope/members", None, id="members of nothing"),
        pytest.param("POST", "/v3/conversations/{c}/activities/nope", MESSAGE, id="reply"),
        pytest.param("PUT", "/v3/conversations/{c}/activities/nope", MESSAGE, id="update"),
        pytest.param("DELETE", "/v3/conversations/{c}/activities/nope", None, id="delete"),
        pytest.param("GET", "/v3/conversations/{c}/activities/nope/members", None, id="act mem"),
        pytest.param("GET", "/v3/conversations/{c}/members/nope", None, id="member"),
        pytest.param("DELETE", "/v3/conversations/{c}/members/nope", None, id="remove member"),
        pytest.param("GET", "/v3/attachments/nope", None, id="attachment"),
        pytest.param("GET", "/v3/attachments/{t}/views/nope", None, id="view"),
        pytest.param("GET", "/v3/nothing/here", None, id="unknown route"),
        pytest.param("GET", "/v3", None, id="bare prefix"),
    ],
)
async def test_unknown_things_are_a_json_404(
    client: Client, world: World, method: str, path: str, body: JSONObject | None
) -> None:
    response = await client.request(method, fill(path, world), json=body, headers=auth())
    assert response.status == 404
    assert (await error_of(response))[0] == "NotFound"


async def test_a_known_path_with_another_method_is_a_json_405(client: Client) -> None:
    response = await client.patch("/v3/conversations", json={}, headers=auth())
    assert response.status == 405
    assert (await error_of(response))[0] == "MethodNotAllowed"
    assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD", "POST"}


async def test_the_error_body_bytes(client: Client) -> None:
    response = await client.get("/v3/conversations/nope/members", headers=auth())
    assert await response.read() == (
        b'{"error":{"code":"NotFound","message":"no conversation \'nope\'"}}'
    )


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        pytest.param(b"{not json", "BadSyntax", "the body is not JSON", id="not json"),
        pytest.param(b"", "BadSyntax", "the body is empty", id="empty"),
        pytest.param(b'{"type": NaN}', "BadSyntax", "NaN is not JSON", id="NaN"),
        pytest.param(b"\xff\xfe{", "BadSyntax", "not JSON", id="not utf-8"),
        pytest.param(b"[" * 100_000, "BadSyntax", "not JSON", id="absurd nesting"),
        pytest.param(b"[1]", "BadArgument", "got an array", id="array"),
        pytest.param(b"{}", "MissingProperty", "$.type is required", id="no type"),
        pytest.param(b'{"type": 3}', "BadArgument", "$.type must be a string", id="type"),
        pytest.param(
            b'{"type": "message", "attachments": [{}]}',
            "MissingProperty",
            "$.attachments[0].contentType",
            id="attachment",
        ),
    ],
)
async def test_malformed_activities_are_a_400(
    client: Client, state: ConnectorState, world: World, body: bytes, code: str, words: str
) -> None:
    response = await client.post(
        f"/v3/conversations/{world.conversation}/activities",
        data=body,
        headers={**auth(), "Content-Type": "application/json"},
    )
    assert response.status == 400
    got_code, message = await error_of(response)
    assert (got_code, words in message) == (code, True)
    assert len(state.conversation(world.conversation).activities) == 1


@pytest.mark.parametrize(
    ("query", "words"),
    [
        pytest.param("pageSize=ten", "pageSize must be an integer", id="not an integer"),
        pytest.param("pageSize=0", "pageSize must be at least 1", id="zero"),
        pytest.param("continuationToken=x", "continuationToken", id="token"),
    ],
)
async def test_bad_paging_is_a_400(client: Client, world: World, query: str, words: str) -> None:
    response = await client.get(
        f"/v3/conversations/{world.conversation}/pagedmembers?{query}", headers=auth()
    )
    assert response.status == 400
    code, message = await error_of(response)
    assert code == "BadArgument" and words in message


@pytest.fixture
async def small(aiohttp_client: ClientFactory, state: ConnectorState) -> Client:
    limits = ConnectorLimits(activity_bytes=100, attachment_bytes=200)
    return await aiohttp_client(make_connector_app(state, fake_verifier, limits=limits))


async def chunks(data: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 30):
        yield data[i : i + 30]


@pytest.mark.parametrize(
    "chunked", [pytest.param(False, id="content-length"), pytest.param(True, id="chunked")]
)
async def test_an_activity_over_the_limit_is_a_413(
    small: Client, state: ConnectorState, world: World, chunked: bool
) -> None:
    path = f"/v3/conversations/{world.conversation}/activities"
    body = b'{"type": "message", "text": "' + b"x" * 80 + b'"}'
    assert len(body) > 100
    data: Any = chunks(body) if chunked else body
    response = await small.post(path, data=data, headers=auth())
    assert response.status == 413
    code, message = await error_of(response)
    assert code == "MessageSizeTooBig"
    assert "over the limit of 100 bytes for an Activity" in message
    assert "the an" not in message  # regression: "the an Activity body"
    fits = await small.post(path, data=b'{"type": "message", "text": "ok"}', headers=auth())
    assert fits.status == 200


async def test_attachments_and_history_have_the_larger_limit(small: Client, world: World) -> None:
    base = f"/v3/conversations/{world.conversation}"
    ok = {"type": "a/b", "originalBase64": base64.b64encode(b"x" * 90).decode()}
    assert (await small.post(f"{base}/attachments", json=ok, headers=auth())).status == 200
    big = {"type": "a/b", "originalBase64": base64.b64encode(b"x" * 200).decode()}
    response = await small.post(f"{base}/attachments", json=big, headers=auth())
    assert response.status == 413
    assert (await error_of(response))[0] == "MessageSizeTooBig"
    history = {"activities": [{"type": "typing"}] * 6}
    assert (
        await small.post(f"{base}/activities/history", json=history, headers=auth())
    ).status == 200


async def test_the_default_activity_limit_is_256_kib(client: Client, world: World) -> None:
    path = f"/v3/conversations/{world.conversation}/activities"
    headers = {**auth(), "Content-Type": "application/json"}
    envelope = len(dumps({"type": "message", "text": ""}))
    fits = dumps({"type": "message", "text": "x" * (256 * 1024 - envelope)})
    assert len(fits) == 256 * 1024
    too_big = dumps({"type": "message", "text": "x" * (256 * 1024 - envelope + 1)})
    assert (await client.post(path, data=io.BytesIO(fits), headers=headers)).status == 200
    assert (await client.post(path, data=io.BytesIO(too_big), headers=headers)).status == 413


# --- the middleware ----------------------------------------------------------------------------


async def test_an_unexpected_error_is_a_json_500_without_a_traceback(
    aiohttp_client: ClientFactory, state: ConnectorState, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(authorization: str | None) -> str:
        raise RuntimeError("secret internals")

    client = await aiohttp_client(make_connector_app(state, broken))
    response = await client.get("/v3/conversations", headers=auth())
    assert response.status == 500
    code, message = await error_of(response)
    assert code == "ServiceError"
    assert "secret" not in message and "Traceback" not in message
    assert "secret internals" in caplog.text


async def test_setup_connector_mounts_into_an_app_that_serves_other_things(
    aiohttp_client: ClientFactory, state: ConnectorState, world: World
) -> None:
    async def other(request: web.Request) -> web.Response:
        raise web.HTTPBadRequest(text="plain")

    app = web.Application()
    app.router.add_get("/_botemu/other", other)
    setup_connector(app, state, fake_verifier)
    client = await aiohttp_client(app)
    response = await client.get("/_botemu/other")
    assert (response.status, await response.text()) == (400, "plain")
    missing = await client.get("/v3x")
    assert (missing.status, missing.content_type) == (404, "text/plain")
    members = await client.get(f"/v3/conversations/{world.conversation}/members", headers=auth())
    assert members.status == 200
    nothing = await client.get("/v3/conversations/nope/members", headers=auth())
    assert (await error_of(nothing))[0] == "NotFound"


# --- the transcript ----------------------------------------------------------------------------


@pytest.fixture
def store() -> TranscriptStore:
    return TranscriptStore(":memory:")


async def test_each_exchange_goes_into_the_conversations_transcript(
    aiohttp_client: ClientFactory, state: ConnectorState, store: TranscriptStore
) -> None:
    client = await aiohttp_client(make_connector_app(state, fake_verifier, store=store))
    created = await client.post("/v3/conversations", json={"members": [USER]}, headers=auth())
    conversation_id = (await created.json())["id"]
    base = f"/v3/conversations/{conversation_id}"
    await client.post(f"{base}/activities", json=MESSAGE, headers=auth())
    await client.post(f"{base}/activities", json={"type": "message"}, headers=auth())
    await client.post(f"{base}/activities", json=MESSAGE, headers=auth("botB"))
    await client.get("/v3/conversations", headers=auth())  # names no conversation: not recorded

    summary = store.call(conversation_id)
    assert summary is not None
    assert (summary.kind, summary.bot, summary.caller) == ("conversation", "botA", "user-1")
    events = store.events(conversation_id)
    assert [(e.kind, e.payload["summary"]) for e in events] == [
        ("note", f"conversation {conversation_id}: bot botA with user-1"),
        ("http.request", "\u2190 bot creates a conversation"),
        ("http.response", f'\u2192 201 {{"id":"{conversation_id}","serviceUrl":"{SERVICE_URL}"}}'),
        ("http.request", '\u2190 bot sends message "hello"'),
        ("http.response", '\u2192 200 {"id":"id2"}'),
        ("http.request", "\u2190 bot sends message"),
        ("http.response", '\u2192 200 {"id":"id3"}'),
        ("http.request", "\u2190 bot sends an activity (body not read)"),
        ("http.response", "\u2192 403 " + events[-1].payload["body"]),  # type: ignore[operator]
    ]
    sent = events[3].payload
    assert sent["method"] == "POST"
    assert sent["path"] == f"{base}/activities"
    assert sent["headers"]["Authorization"] == "Bearer token-botA"  # type: ignore[call-overload,index]  # not a JWT, short: kept
    assert sent["body"] == '{"type": "message", "text": "hello"}'
    assert sent["app_id"] == "botA"
    assert "warnings" not in sent
    assert events[5].payload["warnings"] == [
        "an empty message (no text, attachments, suggestedActions, channelData or value): "
        "accepted, but real channels may refuse it or show nothing"
    ]
    answered = events[4].payload
    assert answered["status"] == 200
    assert answered["body"] == '{"id":"id2"}'
    assert answered["headers"]["Content-Type"] == "application/json; charset=utf-8"  # type: ignore[call-overload,index]
    refused = events[8].payload
    assert refused["status"] == 403
    assert events[7].payload["app_id"] == "botB"  # the token was good; the conversation not its


async def test_a_binary_view_is_recorded_as_a_blob_and_refusals_are_recorded_too(
    aiohttp_client: ClientFactory, state: ConnectorState, store: TranscriptStore
) -> None:
    client = await aiohttp_client(make_connector_app(state, fake_verifier, store=store))
    conversation = state.open_conversation("botA", USER)  # opened by botemu: recorded as well
    upload = await client.post(
        f"/v3/conversations/{conversation.id}/attachments", json=ATTACHMENT, headers=auth()
    )
    attachment_id = (await upload.json())["id"]
    await client.get(f"/v3/attachments/{attachment_id}/views/original", headers=auth())
    await client.get(f"/v3/attachments/{attachment_id}", headers={"Authorization": "Bearer x"})
    events = store.events(conversation.id)
    summaries = [e.payload["summary"] for e in events]
    assert summaries[1:] == [
        "\u2190 bot uploads an attachment",
        f'\u2192 200 {{"id":"{attachment_id}"}}',
        f"\u2190 bot downloads view original of attachment {attachment_id}",
        f"\u2192 200 ({len(PNG)} bytes)",
        f"\u2190 bot asks about attachment {attachment_id}",
        "\u2192 401 " + str(events[-1].payload["body"]),
    ]
    view = events[4]
    assert view.has_blob and view.payload["body"] is None
    assert store.blob(conversation.id, view.seq) == PNG
    assert events[-1].payload["headers"]["WWW-Authenticate"] == 'Bearer error="invalid_token"'  # type: ignore[call-overload,index]


async def test_a_broken_store_never_fails_a_request(
    aiohttp_client: ClientFactory,
    state: ConnectorState,
    store: TranscriptStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = await aiohttp_client(make_connector_app(state, fake_verifier, store=store))
    conversation = state.open_conversation("botA", USER)
    store.close()
    response = await client.post(
        f"/v3/conversations/{conversation.id}/activities", json=MESSAGE, headers=auth()
    )
    assert response.status == 200
    assert "cannot record" in caplog.text
    state.open_conversation("botA", USER)  # starting a transcript fails: logged, not raised
    assert "cannot start the transcript" in caplog.text


# --- auth: the real verifier, with botemu's own keys and tokens ---------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> KeyStore:
    return KeyStore(tmp_path_factory.mktemp("keys"), clock=lambda: NOW)


PLACEHOLDERS = default_placeholders(SERVICE_URL, Profile.V31)
GOOD: JSONObject = {
    "aud": PLACEHOLDERS.connector_audience,
    "iss": PLACEHOLDERS.emulator_issuer,
    "appid": "botA",
    "ver": "1.0",
}


@pytest.mark.parametrize(
    ("claims", "at", "status"),
    [
        pytest.param(GOOD, NOW, 200, id="good"),
        pytest.param({**GOOD, "ver": "2.0", "azp": "botA", "appid": None}, NOW, 200, id="ver 2.0"),
        pytest.param(GOOD, NOW + 3600 + 299, 200, id="expired within the skew"),
        pytest.param(GOOD, NOW + 3600 + 301, 401, id="expired"),
        pytest.param({**GOOD, "iss": PLACEHOLDERS.connector_issuer}, NOW, 401, id="issuer"),
        pytest.param({**GOOD, "aud": "botA"}, NOW, 401, id="audience"),
        pytest.param({k: v for k, v in GOOD.items() if k != "appid"}, NOW, 401, id="no appid"),
        pytest.param({**GOOD, "appid": "stranger"}, NOW, 403, id="not registered"),
    ],
)
async def test_identity_verifier_with_real_tokens(
    aiohttp_client: ClientFactory,
    state: ConnectorState,
    keys: KeyStore,
    claims: JSONObject,
    at: float,
    status: int,
) -> None:
    verifier = identity_verifier(
        keys, PLACEHOLDERS, registered=lambda app_id: app_id == "botA", clock=lambda: at
    )
    client = await aiohttp_client(make_connector_app(state, verifier))
    token = mint(keys, {k: v for k, v in claims.items() if v is not None}, now=NOW)
    response = await client.get("/v3/conversations", headers={"Authorization": f"Bearer {token}"})
    assert response.status == status
    if status == 401:
        assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
        assert (await error_of(response))[0] == "Unauthorized"


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        pytest.param(None, "Bearer", id="missing"),
        pytest.param("Basic abc", 'Bearer error="invalid_token"', id="scheme"),
        pytest.param("Bearer a.b", 'Bearer error="invalid_token"', id="malformed"),
    ],
)
async def test_identity_verifier_refuses_what_is_not_a_token(
    aiohttp_client: ClientFactory,
    state: ConnectorState,
    keys: KeyStore,
    authorization: str | None,
    challenge: str,
) -> None:
    verifier = identity_verifier(keys, PLACEHOLDERS, registered=lambda _: True, clock=lambda: NOW)
    client = await aiohttp_client(make_connector_app(state, verifier))
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await client.get("/v3/conversations", headers=headers)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == challenge


class TokenError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def test_claims_verifier_messages_and_reasons() -> None:
    def validate(authorization: str | None) -> Mapping[str, object]:
        raise TokenError("signature", "no key with kid 'k9'")

    verify = claims_verifier(validate, token_errors=(TokenError,), registered=lambda _: True)
    with pytest.raises(Exception) as caught:
        verify("Bearer t")
    assert caught.value.status == 401  # type: ignore[attr-defined]
    assert caught.value.reason == "signature"  # type: ignore[attr-defined]
    assert caught.value.message == "the token was refused: no key with kid 'k9'"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("claims", "app_id"),
    [
        pytest.param({"ver": "1.0", "appid": "a", "azp": "b"}, "a", id="1.0 reads appid"),
        pytest.param({"ver": "2.0", "appid": "a", "azp": "b"}, "b", id="2.0 reads azp"),
        pytest.param({"ver": "1.0", "azp": "b"}, None, id="1.0 without appid"),
        pytest.param({"appid": "a"}, "a", id="no ver: appid"),
        pytest.param({"azp": "b"}, "b", id="no ver: azp"),
        pytest.param({"appid": ""}, None, id="empty"),
        pytest.param({"appid": 5}, None, id="not a string"),
    ],
)
def test_app_id_of(claims: dict[str, object], app_id: str | None) -> None:
    assert app_id_of(claims) == app_id
