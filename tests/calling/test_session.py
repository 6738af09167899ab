"""Calls over real loopback HTTP against small bots, well-behaved and deliberately broken."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.effects import Answer, Post
from emulator.calling.events import EndReason
from emulator.calling.media import decode_duration, encode_recording
from emulator.calling.model import RecordingFormat
from emulator.calling.progress import Media
from emulator.calling.session import (
    AioIO,
    CallCut,
    CallReport,
    CallSettings,
    RunTime,
    multipart_body,
    place_call,
)
from emulator.calling.wire import WireOptions
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import STATE, BotState, Received, make_bot, make_stalling_bot
from tests.support import cookie_bot

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
FAST = RetryPolicy(attempts=3, backoff=0.01, timeout=5.0)


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


async def call(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    kind: str = "ok",
    caller: str = "press 1",
    *,
    media: bytes = b"",
    **settings: object,
) -> tuple[CallReport, BotState]:
    app = make_bot(kind, media)
    server = await aiohttp_server(app)
    url = str(server.make_url("/api/calls"))
    options: dict[str, object] = {"retry": FAST, "seed": 7} | settings
    report = await place_call(
        CallSettings(bot_url=url, caller=CallerScript.from_inline(caller), **options),  # type: ignore[arg-type]
        store,
    )
    return report, app[STATE]


def rules_of(report: CallReport) -> list[str]:
    """The rules found, less the http-callback warning every local http bot gets."""
    return [f.rule for f in report.findings if f.rule != "WF-CALLBACK-HTTPS"]


def bodies(state: BotState) -> list[dict[str, object]]:
    return [json.loads(r.body) for r in state.received if r.content_type == "application/json"]


async def test_a_whole_call_over_http(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store)
    assert report.end_reason is EndReason.BOT_HUNG_UP
    assert rules_of(report) == []
    assert report.workflows == 2
    conversation, result = bodies(bot)
    assert conversation["callState"] == "incoming"
    assert conversation["isMultiparty"] is False
    assert conversation["presentedModalityTypes"] == ["audio"]
    caller, me = conversation["participants"]  # type: ignore[misc]
    assert caller["originator"] is True and me["originator"] is False
    assert caller["identity"].startswith("8:")
    assert result["id"] == conversation["id"]
    assert result["callState"] == "established"
    assert result["appState"] == '{"step":"menu"}'
    assert result["links"] == {"call": f"http://127.0.0.1:9070/_botemu/calls/{report.call_id}"}
    outcome = result["operationOutcome"]
    assert outcome == {
        "type": "recognizeOutcome",
        "id": "menu-1",
        "outcome": "success",
        "choiceOutcome": {"completionReason": "dtmfOptionMatched", "choiceName": "sales"},
    }


async def test_headers_chain_id_constant_message_id_new(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    _, bot = await call(aiohttp_server, store)
    first, second = bot.received
    for r in (first, second):
        assert r.headers["Content-Type"] == "application/json"
        assert r.headers["Accept"] == "application/json"
    assert first.headers["X-Platform-Chain-ID"] == second.headers["X-Platform-Chain-ID"]
    assert first.headers["X-Platform-Message-ID"] != second.headers["X-Platform-Message-ID"]


async def test_seed_reproduces_the_caller_but_ids_are_always_new(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    _, one = await call(aiohttp_server, store, seed=42)
    _, two = await call(aiohttp_server, store, seed=42)
    _, other = await call(aiohttp_server, store, seed=43)
    first, again, third = bodies(one)[0], bodies(two)[0], bodies(other)[0]
    assert first["participants"] == again["participants"]
    assert first["participants"] != third["participants"]
    assert first["id"] != again["id"]


async def test_appstate_is_echoed_byte_for_byte(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    # The bot's appState, as a string, survives the trip through the platform unchanged.
    _, bot = await call(aiohttp_server, store)
    assert bodies(bot)[1]["appState"] == '{"step":"menu"}'


async def test_transcript_has_every_exchange(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store)
    events = store.events(report.call_id)
    kinds = [e.kind for e in events]
    assert kinds[0] == "call.start" and kinds[-1] == "call.end"
    assert kinds.count("http.request") == 2 and kinds.count("http.response") == 2
    request = next(e for e in events if e.kind == "http.request")
    assert request.payload["headers"]["X-Platform-Chain-ID"] == report.chain_id  # type: ignore[index]
    assert json.loads(str(request.payload["body"]))["id"] == report.call_id
    summary = store.call(report.call_id)
    assert summary is not None and summary.end_reason == "bot hung up" and summary.workflows == 2


async def test_the_run_running_out_of_time_cuts_the_call_under_way_and_says_so(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    """``cut``: the seconds left to the run that places the call (explore's and fuzz's
    ``--max-time``). A call still under way when they pass (here the bot holds its first
    callback) is abandoned there: ``CallCut``, its transcript ends with a hang-up noted as cut
    off, and no finding: unlike the call's own deadline, it says nothing against the bot."""
    release = asyncio.Event()
    server = await aiohttp_server(make_stalling_bot(release))
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), seed=7, deadline=40,
                            caller=CallerScript.from_inline("press 1"))  # fmt: skip
    try:
        with pytest.raises(CallCut, match=r"cut off after 4 s") as cut:
            await place_call(settings, store, cut=4)
    finally:
        release.set()
    events = store.events(cut.value.call_id)
    assert [e.kind for e in events].count("http.request") == 2  # the Conversation, the callback
    assert not [e for e in events if e.kind == "finding" and e.payload["severity"] == "error"]
    assert events[-1].payload["summary"] == (
        "call ended: caller hung up (cut off: the run's time ran out 4 s into the call)"
    )
    summary = store.call(cut.value.call_id)
    assert summary is not None and summary.end_reason == "caller hung up"


def test_a_runs_time_is_over_by_its_own_clock_or_the_wall_clock() -> None:
    """``RunTime``: no bound without seconds; over when its clock (here a count) says so, while
    the wall-clock seconds left, which cut a call under way, still run on the wall clock."""
    assert not RunTime(None).over() and RunTime(None).left() is None
    ticks = [0.0]
    limit = RunTime(3, lambda: ticks[0])
    assert not limit.over() and 2.5 < (limit.left() or 0) <= 3
    ticks[0] = 3.0
    assert limit.over() and (limit.left() or 0) > 2.5  # by its clock, not the wall's
    assert RunTime(0).over() and (RunTime(0).left() or 0) <= 0


async def test_a_cookie_the_bot_sets_never_comes_back(store: TranscriptStore) -> None:
    """The platform keeps no cookies (it sends a bot's webhooks from many machines). Before,
    botemu's client session kept them: a bot on ``localhost`` that set one got it back with
    every callback of the call, and one that kept its state there worked here and nowhere
    else."""

    def answer(request: web.Request, body: Any) -> web.Response:
        if "participants" not in body:
            return web.json_response({"actions": [{"operationId": "h", "action": "hangup"}]})
        return web.json_response(_menu_for(request))

    async with cookie_bot("/api/calls", answer) as (port, cookies):
        settings = CallSettings(bot_url=f"http://localhost:{port}/api/calls", seed=7,
                                caller=CallerScript.from_inline("press 1"))  # fmt: skip
        report = await place_call(settings, store)
    assert report.end_reason is EndReason.BOT_HUNG_UP, report
    assert cookies == [None, None], cookies  # the Conversation, then the choice's callback


def _menu_for(request: web.Request) -> dict[str, object]:
    return {"actions": [{"operationId": "a", "action": "answer"},
                        {"operationId": "m", "action": "recognize",
                         "playPrompt": {"prompts": [{"value": "Press 1."}]},
                         "choices": [{"name": "one", "dtmfVariation": "1"}]}],
            "links": {"callback": str(request.url)}}  # fmt: skip


async def test_flaky_bot_gets_a_retry_with_the_same_message_id(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store, "flaky")
    assert report.end_reason is EndReason.BOT_HUNG_UP
    ids = [r.headers["X-Platform-Message-ID"] for r in bot.received]
    assert len(ids) == 4 and ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]
    assert rules_of(report) == ["CALL-HTTP-5XX", "CALL-HTTP-5XX"]
    assert [e.kind for e in store.events(report.call_id)].count("retry") == 2


async def test_always_500_platform_hangs_up_after_all_attempts(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store, "always-500")
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert len(bot.received) == 3
    assert len({r.headers["X-Platform-Message-ID"] for r in bot.received}) == 1
    assert rules_of(report) == ["CALL-HTTP-5XX"] * 3 + ["CALL-DELIVERY-FAILED"]


async def test_slow_bot_times_out(aiohttp_server: ServerFactory, store: TranscriptStore) -> None:
    policy = RetryPolicy(attempts=2, backoff=0.01, timeout=0.2)
    report, bot = await call(aiohttp_server, store, "slow", retry=policy)
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert rules_of(report) == ["CALL-TIMEOUT", "CALL-TIMEOUT", "CALL-DELIVERY-FAILED"]
    assert len(bot.received) == 2


async def test_invalid_workflow_gets_the_validation_outcome(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store, "invalid")
    assert report.end_reason is EndReason.BOT_HUNG_UP
    validation = bodies(bot)[1]
    assert validation["callState"] == "incoming"
    outcome = validation["operationOutcome"]
    assert outcome["type"] == "workflowValidationOutcome"  # type: ignore[index]
    assert outcome["outcome"] == "failure"  # type: ignore[index]
    assert outcome["id"] == "answer-1"  # type: ignore[index]
    assert "WF-RECOGNIZE-ONE-OF at $.actions[1]" in outcome["failureReason"]  # type: ignore[index]
    assert "WF-RECOGNIZE-ONE-OF" in rules_of(report)
    assert bodies(bot)[2]["appState"] == '{"step":"menu","recovered":true}'


async def test_legacy_validation_outcome_spelling(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    options = WireOptions(legacy_validation_outcome_type=True)
    _, bot = await call(aiohttp_server, store, "invalid", wire=options)
    assert bodies(bot)[1]["operationOutcome"]["type"] == "worfklowValidationOutcome"  # type: ignore[index]


@pytest.mark.parametrize(
    ("kind", "reason", "rules"),
    [
        pytest.param(
            "garbage", EndReason.BAD_RESPONSE, ["CALL-CONTENT-TYPE", "CALL-NOT-JSON"], id="garbage"
        ),
        pytest.param("huge", EndReason.BAD_RESPONSE, ["CALL-BODY-TOO-LARGE"], id="huge-body"),
        pytest.param("empty", EndReason.NO_WORKFLOW, ["CALL-EMPTY-BODY"], id="empty-body"),
        pytest.param("refuse", EndReason.BOT_REFUSED, ["CALL-HTTP-STATUS"], id="403"),
        pytest.param(
            "reset",
            EndReason.DELIVERY_FAILED,
            ["CALL-CONNECTION"] * 3 + ["CALL-DELIVERY-FAILED"],
            id="reset",
        ),
    ],
)
async def test_bad_answers_end_the_call_with_findings(
    kind: str,
    reason: EndReason,
    rules: list[str],
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
) -> None:
    report, _ = await call(aiohttp_server, store, kind)
    assert report.end_reason is reason
    assert rules_of(report) == rules
    summary = store.call(report.call_id)
    assert summary is not None and summary.end_reason == reason.value
    assert store.events(report.call_id)[-1].kind == "call.end"


async def test_unreachable_bot(store: TranscriptStore) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = CallSettings(bot_url=f"http://127.0.0.1:{port}/api/calls", retry=FAST)
    report = await place_call(settings, store)
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert rules_of(report)[-1] == "CALL-DELIVERY-FAILED"


async def test_caller_hangup_result_is_terminated(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store, caller="hangup")
    assert report.end_reason is EndReason.CALLER_HUNG_UP
    result = bodies(bot)[1]
    assert result["callState"] == "terminated"
    assert result["operationOutcome"]["choiceOutcome"]["completionReason"] == "callTerminated"  # type: ignore[index]
    assert rules_of(report) == []


def parse_multipart(received: Received) -> list[tuple[dict[str, str], bytes]]:
    """The parts, with their header lines exactly as sent."""
    boundary = received.headers["Content-Type"].split("boundary=", 1)[1].encode()
    chunks = received.body.split(b"--" + boundary)
    assert chunks[0] == b"" and chunks[-1] == b"--\r\n"
    parts = []
    for chunk in chunks[1:-1]:
        head, _, body = chunk.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        lines = [line.decode().split(": ", 1) for line in head.split(b"\r\n")]
        parts.append(({k: v for k, v in lines}, body.removesuffix(b"\r\n")))
    return parts


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [
        pytest.param("wav", "audio/wav", id="wav"),
        pytest.param("wma", "audio/x-ms-wma", id="wma"),
        pytest.param("mp3", "audio/mpeg", id="mp3"),
    ],
)
async def test_record_result_is_multipart_with_real_audio(
    fmt: str, content_type: str, aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(aiohttp_server, store, f"record-{fmt}", caller="talk 3s")
    assert rules_of(report) == []
    received = bot.received[1]
    assert received.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    (json_headers, json_part), (audio_headers, audio) = parse_multipart(received)
    assert json_headers == {
        "Content-Type": "application/json; charset=utf-8",
        "Content-Disposition": 'form-data; name="conversationResult"',
    }
    assert audio_headers == {
        "Content-Type": content_type,
        "Content-Disposition": 'form-data; name="recordedAudio"',
    }
    outcome = json.loads(json_part)["operationOutcome"]
    assert outcome["completionReason"] == "completedSilenceDetected"
    assert outcome["format"] == fmt
    assert outcome["lengthOfRecordingInSecs"] == pytest.approx(8.0)
    assert decode_duration(audio) == pytest.approx(outcome["lengthOfRecordingInSecs"], abs=0.05)


async def test_a_body_over_a_mebibyte_is_sent_whole_without_aiohttps_large_body_warning(
    aiohttp_server: ServerFactory,
) -> None:
    # Regression: a long recording's multipart body (1 MiB and more: a minute of WAV) was given
    # to aiohttp as raw bytes, and aiohttp warned (an error under the suite's warning filter)
    # that so large a body may block the event loop.
    got: list[bytes] = []

    async def keep(request: web.Request) -> web.Response:
        got.append(await request.read())
        return web.json_response({})

    app = web.Application(client_max_size=4 * 2**20)
    app.router.add_post("/api/calls", keep)
    server = await aiohttp_server(app)
    body = bytes(range(256)) * (5 * 2**10)  # 1.25 MiB
    post = Post(str(server.make_url("/api/calls")), body, {"Content-Type": "audio/wav"}, 10.0,
                2**20, "recordOutcome")  # fmt: skip
    async with aiohttp.ClientSession() as http:
        answer = await AioIO(http, CallSettings(bot_url="http://x"), asyncio.sleep).post(post)
    assert isinstance(answer, Answer) and answer.status == 200
    assert got == [body] and answer.sent_headers["Content-Length"] == str(len(body))


async def test_failed_recording_is_plain_json(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    _, bot = await call(aiohttp_server, store, "record-wav", caller="silence 10s")
    result = bot.received[1]
    assert result.content_type == "application/json"
    assert (
        json.loads(result.body)["operationOutcome"]["completionReason"] == "initialSilenceTimeout"
    )


def test_multipart_bytes_exactly() -> None:
    body = multipart_body("B", b'{"id":"c"}', b"RIFF", "audio/wav")
    assert body == (
        b"--B\r\n"
        b"Content-Type: application/json; charset=utf-8\r\n"
        b'Content-Disposition: form-data; name="conversationResult"\r\n'
        b"\r\n"
        b'{"id":"c"}\r\n'
        b"--B\r\n"
        b"Content-Type: audio/wav\r\n"
        b'Content-Disposition: form-data; name="recordedAudio"\r\n'
        b"\r\n"
        b"RIFF\r\n"
        b"--B--\r\n"
    )


async def test_prompt_file_is_fetched_and_its_real_duration_used(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    wav = encode_recording(RecordingFormat.WAV, 2.5)
    report, _ = await call(aiohttp_server, store, "media", caller="", media=wav)
    assert rules_of(report) == []
    played = [e for e in store.events(report.call_id) if e.payload.get("kind") == "prompt played"]
    assert played[0].payload["end"] == pytest.approx(2.5)


async def test_a_prompt_file_that_is_not_audio_fails_the_prompt(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, bot = await call(
        aiohttp_server, store, "media", caller="", media=b"<html>not audio</html>"
    )
    assert rules_of(report) == ["CALL-MEDIA-FORMAT"]
    outcome = bodies(bot)[1]["operationOutcome"]
    assert outcome["type"] == "playPromptOutcome"  # type: ignore[index]
    assert outcome["completionReason"] == "temporarySystemFailure"  # type: ignore[index]
    assert "failureReason" in outcome  # type: ignore[operator]


async def test_a_broken_prompt_file_fetched_by_an_earlier_call_fails_the_next_with_its_finding(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    # Regression: with a media cache shared across calls (a runner's), only the first call
    # recorded CALL-MEDIA-FORMAT; the next ones failed the prompt without a finding.
    server = await aiohttp_server(make_bot("media", b"<html>not audio</html>"))
    settings = CallSettings(bot_url=str(server.make_url("/api/calls")), retry=FAST)
    cache: dict[str, Media] = {}
    first = await place_call(settings, store, media_cache=cache)
    second = await place_call(settings, store, media_cache=cache)
    assert rules_of(first) == rules_of(second) == ["CALL-MEDIA-FORMAT"]
    [again] = [f for f in second.findings if f.rule == "CALL-MEDIA-FORMAT"]
    assert again.message.endswith("(fetched earlier in this run)")
    fetches = [e for e in store.events(second.call_id) if "fetched" in str(e.payload)]
    assert len(cache) == 1 and not any(e.kind == "platform" for e in fetches)


async def test_pace_lets_real_time_pass_in_step_with_virtual_time(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    app = make_bot("ok")
    server = await aiohttp_server(app)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")),
        caller=CallerScript.from_inline("listen; press 1"),
        pace=0.5,
    )
    report = await place_call(settings, store, sleep=sleep)
    assert sum(slept) == pytest.approx(report.vtime * 0.5)
    assert all(s > 0 for s in slept)
    instant: list[float] = []

    async def never(seconds: float) -> None:
        instant.append(seconds)

    await place_call(CallSettings(bot_url=settings.bot_url, caller=settings.caller), store,
                     sleep=never)  # fmt: skip
    assert instant == []


async def test_response_events_carry_the_exact_request_headers(
    aiohttp_server: ServerFactory, store: TranscriptStore
) -> None:
    report, _ = await call(aiohttp_server, store)
    response = next(e for e in store.events(report.call_id) if e.kind == "http.response")
    sent = response.payload["request_headers"]
    assert isinstance(sent, dict)
    assert (
        sent["X-Platform-Message-ID"]
        and sent["Content-Length"]
        and sent["Host"].startswith("127.0.0.1")
    )


def test_judging_a_body_is_memoized_per_context() -> None:
    from emulator.calling.rules import RuleContext
    from emulator.calling.session import JUDGE_CACHE_MAX_BODY, judge

    body = json.dumps({
        "actions": [{"operationId": "p", "action": "playPrompt", "prompts": [{"value": "hi"}]}],
        "links": {"callback": "http://127.0.0.1:1/cb"},
    }).encode()  # fmt: skip
    first = judge(body, RuleContext(first=True, allow_http=True))
    assert judge(body, RuleContext(first=True, allow_http=True)) is first
    assert [f.rule for f in first.findings] == ["WF-FIRST-ACTION", "WF-CALLBACK-HTTPS"]
    later = judge(body, RuleContext(first=False, allow_http=True))
    assert [f.rule for f in later.findings] == ["WF-CALLBACK-HTTPS"]
    assert later.workflow is not None and first.workflow is None
    big = body[:-1] + b"," + b'"pad":"' + b"x" * JUDGE_CACHE_MAX_BODY + b'"}'
    assert judge(big, RuleContext()) is not judge(big, RuleContext())  # too big to keep
    assert judge(b"<html>", RuleContext()).not_json is not None


async def test_every_event_of_a_call_takes_the_fast_encoder(
    aiohttp_server: ServerFactory, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: aiohttp's header names are ``istr``, which orjson refuses as keys, so every
    http.response event went through the standard encoder (a fifth of a callback's CPU)."""
    import types

    import emulator.jsonutil as jsonutil

    def slow(value: object, **options: object) -> str:
        raise AssertionError(f"slow encoder used for {str(value)[:80]}")

    standard = types.SimpleNamespace(**vars(json))
    standard.dumps = slow
    monkeypatch.setattr(jsonutil, "json", standard)
    report, _ = await call(aiohttp_server, store, caller="press 1; hangup")
    kinds = [e.kind for e in store.events(report.call_id)]
    assert "http.response" in kinds
    (response, *_) = [e for e in store.events(report.call_id) if e.kind == "http.response"]
    assert all(type(name) is str for name in response.payload["headers"])  # type: ignore[union-attr]
