"""A scripted session through the connector with real tokens, compared with what the connector
answered and recorded before its hot path was made faster (docs/connector.md, "Throughput"):
every response (status, headers, body), every stored activity and every transcript event, byte
for byte. Malformed, UTF-16, BOM, NaN and oversized bodies, every way a token is refused (before
and after the same token was accepted), ownership, every route.

``session_golden.json`` was written by the connector as it was before (``python
tests/connector/test_session.py --write`` with that tree first on ``PYTHONPATH``). Only what
changes from run to run is masked: the signing key's id and the tokens, the test server's port,
the client's ``User-Agent``, ``Date`` and ``Server``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.test_utils import TestClient, TestServer

from emulator.config import Profile, default_placeholders
from emulator.connector.auth import identity_verifier
from emulator.connector.models import ConnectorState
from emulator.connector.routes import ConnectorLimits, make_connector_app
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import mint
from emulator.jsonutil import JSON, JSONObject
from emulator.transcripts.store import TranscriptStore

GOLDEN = Path(__file__).with_name("session_golden.json")
SERVICE_URL = "http://127.0.0.1:9070"
START = 1_750_000_000.25
PLACEHOLDERS = default_placeholders(SERVICE_URL, Profile.V31)
GOOD: JSONObject = {
    "aud": PLACEHOLDERS.connector_audience,
    "iss": PLACEHOLDERS.emulator_issuer,
    "appid": "botA",
    "ver": "1.0",
}
Request = tuple[str, str, str | None, bytes | JSON | None]
"""(method, path, the token's name or None for no Authorization, body: bytes sent as they are,
anything else as JSON, None for none)."""


def tokens(keys: KeyStore, now: float) -> dict[str, str]:
    """The Authorization header of each name."""
    mine = mint(keys, GOOD, now=now, lifetime=600)
    head, claims, signature = mine.split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    return {
        "a": f"Bearer {mine}",
        "a-lower": f"bearer {mine}",
        "a-2.0": "Bearer " + mint(keys, {**GOOD, "ver": "2.0", "azp": "botA"}, now=now),
        "b": "Bearer " + mint(keys, {**GOOD, "appid": "botB"}, now=now),
        "stranger": "Bearer " + mint(keys, {**GOOD, "appid": "stranger"}, now=now),
        "no-appid": "Bearer "
        + mint(keys, {k: v for k, v in GOOD.items() if k != "appid"}, now=now),
        "audience": "Bearer " + mint(keys, {**GOOD, "aud": "someone-else"}, now=now),
        "issuer": "Bearer " + mint(keys, {**GOOD, "iss": "https://elsewhere"}, now=now),
        "future": "Bearer " + mint(keys, {**GOOD, "nbf": int(now) + 3600}, now=now),
        "signature": f"Bearer {head}.{claims}.{flipped}",
        "two-words": f"Bearer {mine} extra",
        "scheme": f"Basic {mine}",
        "malformed": "Bearer not-a-jwt",
        "empty": "Bearer ",
    }


REFUSED = ("stranger", "no-appid", "audience", "issuer", "future", "signature", "two-words",
           "scheme", "malformed", "empty", None, "b")  # fmt: skip
"""Tokens refused (401, 403) on the conversation of botA, and no Authorization at all."""


def script(conversation: str, other: str) -> list[Request]:
    c = f"/v3/conversations/{conversation}"
    refused: list[Request] = [
        ("POST", f"{c}/activities", name, {"type": "message", "text": name or "none"})
        for name in REFUSED
    ]
    return [
        (
            "POST",
            f"{c}/activities",
            "a",
            {"type": "message", "text": "hello", "from": {"id": "botA"}},
        ),
        ("POST", f"{c}/activities", "a", {"type": "message", "text": "h\u00e9llo \U0001f600 " * 9}),
        ("POST", f"{c}/activities", "a-lower", {"type": "Message", "text": "case"}),
        ("POST", f"{c}/activities", "a-2.0", {"type": "message"}),
        ("POST", f"{c}/activities", "a", {"type": "event"}),
        ("POST", f"{c}/activities", "a", {"type": "customThing", "value": {"n": [1, 2.5, None]}}),
        (
            "POST",
            f"{c}/activities",
            "a",
            {
                "type": "message",
                "attachments": [{"contentType": "x"}],
                "entities": [{"type": "mention"}],
                "extra": [True],
            },
        ),
        ("POST", f"{c}/activities/id4", "a", {"type": "typing"}),
        ("POST", f"{c}/activities/nope", "a", {"type": "typing"}),
        ("PUT", f"{c}/activities/id4", "a", {"type": "message", "text": "edited"}),
        ("GET", f"{c}/activities/id4/members", "a", None),
        ("DELETE", f"{c}/activities/id5", "a", None),
        ("GET", f"{c}/members", "a", None),
        ("GET", f"{c}/members/user-1", "a", None),
        ("GET", f"{c}/pagedmembers?pageSize=1", "a", None),
        ("GET", f"{c}/pagedmembers?pageSize=x", "a", None),
        (
            "POST",
            f"{c}/activities/history",
            "a",
            {
                "activities": [
                    {"type": "message", "id": "h1", "timestamp": "2020-01-01T00:00:00.000Z"}
                ]
            },
        ),
        ("POST", f"{c}/activities/history", "a", {"activities": [{"type": "message", "id": "h1"}]}),
        (
            "POST",
            f"{c}/attachments",
            "a",
            {
                "type": "image/png",
                "name": "p.png",
                "originalBase64": base64.b64encode(b"\x89PNG\xff").decode(),
            },
        ),
        ("GET", "/v3/attachments/{attachment}", "a", None),
        ("GET", "/v3/attachments/{attachment}/views/original", "a", None),
        ("POST", f"{c}/activities", "a", b"not json"),
        ("POST", f"{c}/activities", "a", b""),
        ("POST", f"{c}/activities", "a", b'{"type": "message", "value": NaN}'),
        ("POST", f"{c}/activities", "a", '{"type": "message", "text": "utf-16"}'.encode("utf-16")),
        ("POST", f"{c}/activities", "a", b'\xef\xbb\xbf{"type": "message", "text": "bom"}'),
        ("POST", f"{c}/activities", "a", b'{"type": "message", "text": "\xff"}'),
        ("POST", f"{c}/activities", "a", b"[" * 5_000 + b"]" * 5_000),
        ("POST", f"{c}/activities", "a", [1, 2]),
        ("POST", f"{c}/activities", "a", {"text": "no type"}),
        ("POST", f"{c}/activities", "a", {"type": 5}),
        ("POST", f"{c}/activities", "a", {"type": "message", "text": 5, "from": []}),
        ("POST", f"{c}/activities", "a", {"type": "message", "attachments": [{"name": "x"}]}),
        ("POST", f"{c}/activities", "a", {"type": "message", "from": {"id": 7}}),
        ("POST", f"{c}/activities", "a", b'{"type": "message", "text": "' + b"x" * 300_000 + b'"}'),
        ("POST", f"{c}/activities", "a", b'{"type": "message", "text": "\\ud800 lone"}'),
        *refused,
        ("POST", f"/v3/conversations/{other}/activities", "a", {"type": "message"}),
        ("POST", f"/v3/conversations/{other}/activities", "b", {"type": "message", "text": "b"}),
        ("POST", "/v3/conversations/unknown/activities", "a", {"type": "message"}),
        ("PATCH", f"{c}/activities", "a", {"type": "message"}),
        ("GET", "/v3/nowhere", "a", None),
        ("DELETE", f"{c}/members/user-1", "a", None),
        ("POST", f"{c}/activities", "a", {"type": "message", "text": "still accepted"}),
    ]


def later(conversation: str, other: str) -> list[Request]:
    """After the clock passed the first token's expiry (and the skew), and botB is no longer
    registered: tokens accepted before, refused."""
    c = f"/v3/conversations/{conversation}"
    return [
        ("POST", f"{c}/activities", "a", {"type": "message", "text": "expired"}),
        ("POST", f"{c}/activities", "a", {"type": "message", "text": "expired again"}),
        ("POST", f"{c}/activities", "a-2.0", {"type": "message", "text": "not yet expired"}),
        ("POST", f"/v3/conversations/{other}/activities", "b", {"type": "message"}),
    ]


def after_rotation(conversation: str) -> list[Request]:
    """After the signing key was rotated and its grace ended: a token it signed, refused."""
    c = f"/v3/conversations/{conversation}"
    return [("POST", f"{c}/activities", "a-2.0", {"type": "message", "text": "key gone"})] * 2


def masker(keys: KeyStore, headers: dict[str, str], port: int) -> Callable[[str], str]:
    replacements = {keys.current().kid: "<kid>", f"127.0.0.1:{port}": "<host>",
                    SERVER_SOFTWARE: "<user-agent>"}  # fmt: skip
    for name, value in headers.items():
        for part in value.partition(" ")[2].split("."):
            if len(part) > 20:
                replacements.setdefault(part, f"<{name}>")

    def mask(text: str) -> str:
        for old, new in replacements.items():
            text = text.replace(old, new)
        return text

    return mask


async def send(client: TestClient[web.Request, web.Application], request: Request,
               headers: dict[str, str], attachment: list[str]) -> JSONObject:  # fmt: skip
    """One request; ``attachment``: the id of the last attachment uploaded (kept up to date)."""
    method, path, token, body = request
    path = path.replace("{attachment}", attachment[0])
    sent = {} if token is None else {"Authorization": headers[token]}
    data: bytes | None = None
    if isinstance(body, bytes):
        data = body
        sent["Content-Type"] = "application/json"
    elif body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    async with client.request(method, path, data=data, headers=sent) as r:
        answer = await r.read()
        if path.endswith("/attachments") and r.status == 200:
            attachment[0] = json.loads(answer)["id"]
        shown: JSONObject = {k: v for k, v in r.headers.items() if k not in ("Date", "Server")}
        return {"request": f"{method} {path} {token}", "status": r.status, "headers": shown,
                "body": answer.decode("utf-8", "replace")}  # fmt: skip


async def session() -> JSON:
    """Every response, the stored activities and the transcript events, masked."""
    clock = [START]
    with tempfile.TemporaryDirectory() as tmp:
        keys = KeyStore(Path(tmp) / "keys", clock=lambda: clock[0], grace_seconds=60)
        numbers = itertools.count(1)
        state = ConnectorState(service_url=SERVICE_URL, clock=lambda: clock[0],
                               ids=lambda: f"id{next(numbers)}")  # fmt: skip
        bots = {"botA", "botB"}
        verify = identity_verifier(keys, PLACEHOLDERS, registered=lambda a: a in bots,
                                   clock=lambda: clock[0])  # fmt: skip
        store = TranscriptStore(":memory:", clock=lambda: clock[0])
        limits = ConnectorLimits(activity_bytes=256 * 1024)
        app = make_connector_app(state, verify, store=store, limits=limits)
        headers = tokens(keys, clock[0])
        conversation = state.create_conversation("botA", {"members": [{"id": "user-1"}]})["id"]
        other = state.create_conversation("botB", {"members": [{"id": "user-2"}]})["id"]
        out: list[JSON] = []
        attachment = ["none"]
        async with TestClient(TestServer(app)) as client:
            for request in script(str(conversation), str(other)):
                clock[0] += 0.0015
                out.append(await send(client, request, headers, attachment))
            clock[0] = START + 600 + 300  # the first token's exp, plus the skew
            bots.discard("botB")
            for request in later(str(conversation), str(other)):
                out.append(await send(client, request, headers, attachment))
            mask = masker(keys, headers, client.port or 0)
            keys.rotate()
            clock[0] += 60
            for request in after_rotation(str(conversation)):
                out.append(await send(client, request, headers, attachment))
        stored: list[JSON] = [*state.conversation(str(conversation)).activities]
        events: list[JSON] = [
            {
                "seq": e.seq,
                "kind": e.kind,
                "payload": e.payload,
                "blob": (store.blob(e.call_id, e.seq) or b"").hex() or None,
            }
            for call in (str(conversation), str(other))
            for e in store.events(call)
        ]
        store.close()
        document: JSON = {"responses": out, "activities": stored, "events": events}
        masked: JSON = json.loads(mask(json.dumps(document, ensure_ascii=False)))
        return masked


def test_the_session_answers_and_records_what_it_did_before() -> None:
    got = asyncio.run(session())
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert isinstance(got, dict) and isinstance(expected, dict)
    for part in ("responses", "activities", "events"):
        mine, theirs = got[part], expected[part]
        assert isinstance(mine, list) and isinstance(theirs, list)
        assert len(mine) == len(theirs)
        for n, (g, e) in enumerate(zip(mine, theirs, strict=True)):
            assert g == e, f"{part}[{n}]"
    assert json.dumps(got) == json.dumps(expected)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        text = json.dumps(asyncio.run(session()), indent=1)
        GOLDEN.write_text(text + "\n", encoding="utf-8")
