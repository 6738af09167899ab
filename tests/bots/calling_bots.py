"""Small calling bots for tests: one that behaves, and deliberately broken ones.

``make_bot(kind)`` builds an aiohttp app. Every bot records the requests it received
(``app[RECEIVED]``: headers and body) so tests can check what the platform sent. Runnable for
manual work: ``python tests/bots/calling_bots.py KIND --port N``.

Kinds: ok, flaky (500 once per message id, then OK), always-500, slow (sleeps past the
time-out), invalid (first Workflow invalid, then recovers), garbage (HTML), reset (drops the
connection), huge (2 MiB body), empty (200 with no body), refuse (403), record-wav/-wma/-mp3 (asks
for a voicemail in that format), media (plays a prompt file it serves itself).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    content_type: str


@dataclass
class BotState:
    received: list[Received] = field(default_factory=list)
    seen_message_ids: set[str] = field(default_factory=set)
    answers: int = 0


STATE: web.AppKey[BotState] = web.AppKey("state", BotState)
KIND: web.AppKey[str] = web.AppKey("kind", str)
MEDIA: web.AppKey[bytes] = web.AppKey("media", bytes)
SLOW_SECONDS = 2.0


def _callback(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}/api/calls"


def _menu(request: web.Request, app_state: str = '{"step":"menu"}') -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "answer-1", "action": "answer"},
            {
                "operationId": "menu-1",
                "action": "recognize",
                "playPrompt": {"prompts": [{"value": "Press 1 for sales or 2 for support"}]},
                "choices": [
                    {"name": "sales", "dtmfVariation": "1", "speechVariation": ["sales"]},
                    {"name": "support", "dtmfVariation": "2", "speechVariation": ["support"]},
                ],
            },
        ],
        "links": {"callback": _callback(request)},
        "appState": app_state,
    }


def _goodbye() -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "bye-1", "action": "playPrompt", "prompts": [{"value": "Goodbye"}]},
            {"operationId": "hangup-1", "action": "hangup"},
        ]
    }


def _record(request: web.Request, fmt: str) -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "answer-1", "action": "answer"},
            {
                "operationId": "rec-1",
                "action": "record",
                "playPrompt": {"prompts": [{"value": "Leave a message after the tone"}]},
                "recordingFormat": fmt,
                "maxDurationInSeconds": 30,
                "stopTones": ["#"],
            },
        ],
        "links": {"callback": _callback(request)},
    }


def _media(request: web.Request) -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "answer-1", "action": "answer"},
            {
                "operationId": "play-1",
                "action": "playPrompt",
                "prompts": [{"fileUri": f"{request.scheme}://{request.host}/media/hello.wav"}],
            },
        ],
        "links": {"callback": _callback(request)},
    }


async def handle(request: web.Request) -> web.StreamResponse:
    state, kind = request.app[STATE], request.app[KIND]
    body = await request.read()
    state.received.append(Received(dict(request.headers), body, request.content_type))
    message_id = request.headers.get("X-Platform-Message-ID", "")
    first_time = message_id not in state.seen_message_ids
    state.seen_message_ids.add(message_id)
    document: dict[str, Any] = {}
    if request.content_type == "application/json":
        document = json.loads(body)
    is_notification = "participants" in document
    terminated = str(document.get("callState", "")).lower() == "terminated"
    if kind == "always-500" or (kind == "flaky" and first_time):
        return web.Response(status=500, text="internal error")
    if kind == "slow":
        await asyncio.sleep(SLOW_SECONDS)
    if kind == "reset":
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=200)
    if kind == "refuse":
        return web.Response(status=403, text="forbidden")
    if terminated:
        return web.Response(status=200)
    if kind == "garbage":
        return web.Response(status=200, text="<html>oops</html>", content_type="text/html")
    if kind == "huge":
        return web.Response(status=200, body=b'{"actions": [' + b" " * (2 * 1024 * 1024) + b"]}",
                            content_type="application/json")  # fmt: skip
    if kind == "empty":
        return web.Response(status=200)
    if is_notification:
        state.answers += 1
        if kind == "invalid":
            bad = _menu(request)
            bad["actions"][1]["collectDigits"] = {"maxNumberOfDtmfs": 4}
            return web.json_response(bad)
        if kind.startswith("record-"):
            return web.json_response(_record(request, kind.removeprefix("record-")))
        if kind == "media":
            return web.json_response(_media(request))
        return web.json_response(_menu(request))
    outcome = document.get("operationOutcome", {})
    if kind == "invalid" and str(outcome.get("type", "")).lower() == "workflowvalidationoutcome":
        return web.json_response(_menu(request, '{"step":"menu","recovered":true}'))
    return web.json_response(_goodbye())


async def media(request: web.Request) -> web.Response:
    return web.Response(body=request.app[MEDIA], content_type="audio/wav")


def make_bot(kind: str = "ok", media_bytes: bytes = b"") -> web.Application:
    app = web.Application(client_max_size=4 * 1024 * 1024)
    app[STATE] = BotState()
    app[KIND] = kind
    app[MEDIA] = media_bytes
    app.router.add_post("/api/calls", handle)
    app.router.add_get("/media/hello.wav", media)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    web.run_app(make_bot(args.kind), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
