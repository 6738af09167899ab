"""Small calling bots for tests: one that behaves, and deliberately broken ones.

``make_bot(kind)`` builds an aiohttp app. Every bot records the requests it received
(``app[RECEIVED]``: headers and body) so tests can check what the platform sent. Runnable for
manual work: ``python tests/bots/calling_bots.py KIND --port N``.

Kinds: ok, flaky (500 once per message id, then OK), always-500, slow (sleeps past the
time-out), invalid (first Workflow invalid, then recovers), garbage (HTML), reset (drops the
connection), huge (2 MiB body), empty (200 with no body), refuse (403), record-wav/-wma/-mp3 (asks
for a voicemail in that format), media (plays a prompt file it serves itself).

For the bundled conformance suite (``scenarios/conformance``, ``tests/runner/test_conformance.py``)
there is a small menu bot that passes all of it (``conformant``) and variants of it, each with one
flaw (``CONFORMANCE_KINDS``): what each gets wrong -> the scenario it must fail.

- ``not-idempotent``: counts every request of a call in its appState, so a message delivered twice
  gets a different answer -> duplicate delivery
- ``strict-fields``: answers 500 to a payload with a member it does not know -> unknown fields
- ``strict-enums``: answers 500 to a modality it does not know -> unknown enum values
- ``crash-on-terminated``: answers 500 to a result whose callState is terminated -> every
  scenario in which the caller hangs up while a Workflow with a callback runs
- ``no-recovery``: answers a workflowValidationOutcome with an empty 200 (no Workflow) -> both
  invalid-workflow scenarios
- ``goodbye-unanswered``: answers a workflowValidationOutcome with goodbye and hangup even before
  the call is answered (invalid: the first action must be answer or reject) -> invalid first workflow
- ``appstate-overflow``: appends to the echoed appState at each menu, past 1024 characters by
  the third menu -> appState over several workflows
- ``sluggish``: takes ``SLUGGISH_SECONDS`` to answer each Conversation (a cold start), within the
  time-out but over the p95 bound -> every response comes within the time-out

(``slow``, above, sleeps past a short time-out: a time-out is an error wherever it happens, so it
fails every calling scenario.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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


# --- the conformance menu bot and its flawed variants --------------------------------------------

CONFORMANCE_KINDS = (
    "conformant",
    "not-idempotent",
    "strict-fields",
    "strict-enums",
    "crash-on-terminated",
    "no-recovery",
    "goodbye-unanswered",
    "appstate-overflow",
    "sluggish",
)
SLUGGISH_SECONDS = 1.1
"""Over the conformance suite's p95 bound (1000 ms), well within any time-out."""
MENU_TRIES = 2
CONVERSATION_FIELDS = frozenset(
    {"id", "participants", "presentedmodalitytypes", "ismultiparty", "callstate", "links",
     "subject", "threadid"}
)  # fmt: skip
RESULT_FIELDS = frozenset({"id", "appid", "callstate", "operationoutcome", "links", "appstate"})
OUTCOME_FIELDS = frozenset(
    {"type", "id", "outcome", "failurereason", "completionreason", "choiceoutcome",
     "collectdigitsoutcome", "lengthofrecordinginsecs", "format"}
)  # fmt: skip
MODALITIES = frozenset({"audio", "video", "videobasedscreensharing"})
COUNTS: web.AppKey[dict[str, int]] = web.AppKey("counts", dict)


def _conformant_menu(request: web.Request, tries: int, state: str, answer: bool) -> dict[str, Any]:
    prompts = [{"value": "Sorry, I did not get that."}] if tries else []
    prompts.append({"value": "Press 1 for sales or 2 for support."})
    menu: dict[str, Any] = {
        "operationId": f"menu-{tries}",
        "action": "recognize",
        "playPrompt": {"operationId": f"menu-prompt-{tries}", "action": "playPrompt",
                       "prompts": prompts},
        "initialSilenceTimeoutInSeconds": 5,
        "choices": [
            {"name": "sales", "dtmfVariation": "1", "speechVariation": ["sales"]},
            {"name": "support", "dtmfVariation": "2", "speechVariation": ["support"]},
        ],
    }  # fmt: skip
    actions = [{"operationId": "answer", "action": "answer"}, menu] if answer else [menu]
    return {"actions": actions, "links": {"callback": _callback(request)}, "appState": state}


def _conformant_goodbye(text: str, state: str) -> dict[str, Any]:
    return {
        "actions": [
            {"operationId": "bye", "action": "playPrompt", "prompts": [{"value": text}]},
            {"operationId": "hangup", "action": "hangup"},
        ],
        "appState": state,
    }


def _lower_keys(value: object) -> set[str]:
    return {str(k).lower() for k in value} if isinstance(value, dict) else set()


async def conformance_handle(request: web.Request) -> web.StreamResponse:
    """The conformance menu bot: a pure function of each request (the appState it gets back
    says where the call is), so a retried or duplicated message gets the same answer."""
    state, kind = request.app[STATE], request.app[KIND]
    body = await request.read()
    state.received.append(Received(dict(request.headers), body, request.content_type))
    document: dict[str, Any] = json.loads(body)
    outcome = document.get("operationOutcome")
    notification = "participants" in document
    if kind == "sluggish" and notification:
        await asyncio.sleep(SLUGGISH_SECONDS)
    if kind == "strict-fields":
        known = CONVERSATION_FIELDS if notification else RESULT_FIELDS
        unknown = _lower_keys(document) - known | _lower_keys(outcome) - OUTCOME_FIELDS
        if unknown:
            return web.Response(status=500, text=f"unexpected field {sorted(unknown)[0]}")
    if kind == "strict-enums" and notification:
        modalities = {str(m).lower() for m in document.get("presentedModalityTypes", [])}
        if modalities - MODALITIES:
            return web.Response(status=500, text="unexpected modality")
    call_state = str(document.get("callState", "")).lower()
    if call_state == "terminated":
        if kind == "crash-on-terminated":
            return web.Response(status=500, text="KeyError: 'operationOutcome.choiceOutcome'")
        return web.Response(status=200)
    counts = request.app[COUNTS]
    call = str(document.get("id", ""))
    counts[call] = counts.get(call, 0) + 1
    if notification:
        return web.json_response(
            _conformant_menu(request, 0, _state(kind, "", 0, counts[call]), True)
        )
    echoed = str(document.get("appState") or "")
    try:
        tries = int(json.loads(echoed.split("|")[0]).get("tries", 0))
    except (ValueError, AttributeError):
        tries = 0
    kind_of = str((outcome or {}).get("type", "")).lower()
    if kind_of == "workflowvalidationoutcome":
        if kind == "no-recovery":
            return web.Response(status=200)
        if call_state in ("incoming", "idle") and kind != "goodbye-unanswered":
            return web.json_response({"actions": [{"operationId": "reject", "action": "reject"}]})
        goodbye = _conformant_goodbye(
            "Sorry, something went wrong. Goodbye.",
            _state(kind, echoed, tries, counts[call], menu=False),
        )
        return web.json_response(goodbye)
    succeeded = str((outcome or {}).get("outcome", "")).lower() == "success"
    if kind_of == "recognizeoutcome" and not succeeded and tries < MENU_TRIES:
        answer = _state(kind, echoed, tries + 1, counts[call])
        return web.json_response(_conformant_menu(request, tries + 1, answer, False))
    goodbye = _conformant_goodbye(
        "Thank you. Goodbye.", _state(kind, echoed, tries, counts[call], menu=False)
    )
    return web.json_response(goodbye)


def _state(kind: str, echoed: str, tries: int, count: int, *, menu: bool = True) -> str:
    """The appState of the next Workflow: where the call is (``tries``); the flawed variants add
    a request counter (``not-idempotent``) or the history of the menus (``appstate-overflow``)."""
    state = json.dumps({"tries": tries}, separators=(",", ":"))
    if kind == "not-idempotent":
        return f"{state}|request {count}"
    if kind == "appstate-overflow" and menu:
        return f"{state}|{echoed.partition('|')[2]}{'history ' * 56}"
    return state


async def media(request: web.Request) -> web.Response:
    return web.Response(body=request.app[MEDIA], content_type="audio/wav")


def make_bot(kind: str = "ok", media_bytes: bytes = b"") -> web.Application:
    app = web.Application(client_max_size=4 * 1024 * 1024)
    app[STATE] = BotState()
    app[KIND] = kind
    app[MEDIA] = media_bytes
    app[COUNTS] = {}
    app.router.add_post("/api/calls", conformance_handle if kind in CONFORMANCE_KINDS else handle)
    app.router.add_get("/media/hello.wav", media)
    return app


STALL_LIMIT = 60.0
"""Seconds a stalling bot holds a callback at most (``make_stalling_bot``)."""


def make_stalling_bot(release: asyncio.Event, after: int = 0) -> web.Application:
    """A menu that the bot asks again at each of a call's first ``after`` callbacks, whatever
    the caller did, and whose next callbacks it holds unanswered until ``release`` is set (at
    most ``STALL_LIMIT`` seconds), then says goodbye: a call that is under way as long as the
    test wants (``--max-time`` cutting it off)."""
    seen: dict[str, int] = {}

    async def calls(request: web.Request) -> web.Response:
        body = await request.json()
        if "participants" in body:  # the Conversation
            return web.json_response(_menu(request))
        if body.get("callState") == "terminated":
            return web.Response(status=200)
        call = str(body.get("id"))
        seen[call] = seen.get(call, 0) + 1
        if seen[call] <= after:
            return web.json_response(_menu(request))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(release.wait(), STALL_LIMIT)
        return web.json_response(_goodbye())

    app = web.Application()
    app.router.add_post("/api/calls", calls)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    web.run_app(make_bot(args.kind), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
