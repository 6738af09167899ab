"""The call session with no sockets: ``CallSession.run()`` driven by hand, each effect answered by
a function, byte for byte (the same paths the asyncio driver's tests take over loopback)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emulator.calling.caller import CallerScript
from emulator.calling.callsession import CallSession
from emulator.calling.delivery import RetryPolicy
from emulator.calling.effects import (
    Answer,
    Compute,
    Effect,
    Failed,
    Get,
    Post,
    Token,
    Wait,
    run_blocking,
)
from emulator.calling.events import EndReason
from emulator.calling.settings import CallReport, CallSettings
from emulator.calling.tokens import TokenUnavailable
from emulator.transcripts.store import TranscriptStore

BOT = "https://bot.example/api/calls"
CALLBACK = "https://bot.example/api/callback"


def workflow(*actions: dict[str, Any], callback: str | None = CALLBACK) -> bytes:
    numbered = [{"operationId": f"op-{i}", **a} for i, a in enumerate(actions, 1)]
    document: dict[str, Any] = {
        "actions": numbered,
        "notificationSubscriptions": ["callStateChange"],
    }
    if callback is not None:
        document["links"] = {"callback": callback}
    return json.dumps(document).encode()


MENU = workflow(
    {"action": "answer"},
    {"action": "recognize", "playPrompt": {"action": "playPrompt", "prompts": [{"value": "Hi"}]},
     "bargeInAllowed": True, "initialSilenceTimeoutInSeconds": 5,
     "choices": [{"name": "sales", "dtmfVariation": "1"}]},
)  # fmt: skip
HANGUP = workflow({"action": "hangup"}, callback=None)


def ok(body: bytes, status: int = 200) -> Answer:
    return Answer(status, body, False, {"Content-Type": "application/json"}, {})


class Bot:
    """Answers each effect; keeps every effect it was asked, in order."""

    def __init__(self, answers: Callable[[Post, int], Answer | Failed]) -> None:
        self.answers = answers
        self.effects: list[Effect] = []
        self.posts: list[Post] = []

    def __call__(self, effect: Effect) -> Any:
        self.effects.append(effect)
        if isinstance(effect, Post):
            self.posts.append(effect)
            return self.answers(effect, len(self.posts))
        if isinstance(effect, Compute):
            return effect()
        if isinstance(effect, Token):
            return "header.claims.signature"
        return None


def menu_then_hangup(post: Post, n: int) -> Answer | Failed:
    return ok(MENU if post.label == "Conversation" else HANGUP)


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


def run(store: TranscriptStore, bot: Bot, caller: str = "press 1", **settings: Any) -> CallReport:
    options: dict[str, Any] = {"retry": RetryPolicy(attempts=3, backoff=0.5)} | settings
    made = CallSettings(bot_url=BOT, caller=CallerScript.from_inline(caller), seed=1, **options)
    return run_blocking(CallSession(made, store).run(), bot)


def test_a_whole_call_is_a_conversation_then_results_with_no_socket(
    store: TranscriptStore,
) -> None:
    bot = Bot(menu_then_hangup)
    report = run(store, bot)
    assert report.end_reason is EndReason.BOT_HUNG_UP
    assert [p.label.split()[0] for p in bot.posts] == ["Conversation", "recognizeOutcome"]
    conversation = json.loads(bot.posts[0].body)
    assert conversation["callState"] == "incoming" and bot.posts[0].url == BOT
    assert bot.posts[1].url == CALLBACK
    result = json.loads(bot.posts[1].body)
    assert result["operationOutcome"]["choiceOutcome"]["choiceName"] == "sales"
    assert bot.posts[0].headers["Content-Type"] == "application/json"
    assert bot.posts[0].timeout == 15.0 and bot.posts[0].max_body == 1024 * 1024
    assert not any(isinstance(e, Wait) for e in bot.effects)  # virtual time: no real wait
    kinds = [e.kind for e in store.events(report.call_id)]
    assert kinds[0] == "call.start" and kinds[-1] == "call.end"


def test_the_conversation_bytes_are_compact_json(store: TranscriptStore) -> None:
    bot = Bot(menu_then_hangup)
    run(store, bot)
    body = bot.posts[0].body
    assert body == json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode()


def test_a_5xx_is_retried_with_the_same_message_id_after_a_back_off(
    store: TranscriptStore,
) -> None:
    def flaky(post: Post, n: int) -> Answer | Failed:
        return ok(b"busy", 503) if n == 1 else menu_then_hangup(post, n)

    bot = Bot(flaky)
    report = run(store, bot, pace=1.0)
    first, second = bot.posts[:2]
    assert first.label == second.label == "Conversation"
    assert first.headers["X-Platform-Message-ID"] == second.headers["X-Platform-Message-ID"]
    waits = [e.seconds for e in bot.effects if isinstance(e, Wait)]
    assert waits[0] == 0.5  # the first back-off, in real time at pace 1.0
    assert "CALL-HTTP-5XX" in [f.rule for f in report.findings]
    assert report.end_reason is EndReason.BOT_HUNG_UP


def test_time_outs_use_every_attempt_then_the_platform_hangs_up(store: TranscriptStore) -> None:
    bot = Bot(lambda post, n: Failed("timeout"))
    report = run(store, bot)
    assert len(bot.posts) == 3
    rules = [f.rule for f in report.findings]
    assert rules.count("CALL-TIMEOUT") == 3 and "CALL-DELIVERY-FAILED" in rules
    assert report.end_reason is EndReason.DELIVERY_FAILED
    messages = [f.message for f in report.findings if f.rule == "CALL-TIMEOUT"]
    assert messages[0] == "no answer within 15s (attempt 1)"


def test_a_connection_failure_quotes_the_first_line_of_the_clients_message(
    store: TranscriptStore,
) -> None:
    bot = Bot(lambda post, n: Failed("connection", "refused\nmore detail"))
    report = run(store, bot, retry=RetryPolicy(attempts=1))
    found = [f for f in report.findings if f.rule == "CALL-CONNECTION"]
    assert found[0].message == "connection failed: refused (attempt 1)"


def test_an_answer_over_the_body_limit_is_a_finding(store: TranscriptStore) -> None:
    bot = Bot(
        lambda post, n: Answer(200, MENU[:100], True, {"Content-Type": "application/json"}, {})
    )
    report = run(store, bot)
    assert report.end_reason is EndReason.BAD_RESPONSE
    assert "CALL-BODY-TOO-LARGE" in [f.rule for f in report.findings]


def test_a_record_result_is_encoded_off_the_loop_and_posted_as_multipart(
    store: TranscriptStore,
) -> None:
    record = workflow({"action": "answer"},
                      {"action": "record", "maxDurationInSeconds": 5, "recordingFormat": "wav",
                       "playBeep": True})  # fmt: skip

    def answers(post: Post, n: int) -> Answer:
        return ok(record if post.label == "Conversation" else HANGUP)

    bot = Bot(answers)
    report = run(store, bot, caller="talk 2s; silence 3s")
    computes = [e for e in bot.effects if isinstance(e, Compute)]
    assert len(computes) == 1  # the recording's encoding
    result = bot.posts[1]
    assert result.headers["Content-Type"].startswith("multipart/form-data; boundary=botemu-")
    assert b'name="conversationResult"' in result.body and b'name="recordedAudio"' in result.body
    audio = result.body.split(b'name="recordedAudio"\r\n\r\n', 1)[1]
    assert audio.startswith(b"RIFF")
    assert report.end_reason is EndReason.BOT_HUNG_UP


def test_every_request_asks_for_a_token_and_one_that_cannot_be_had_is_a_note(
    store: TranscriptStore,
) -> None:
    class NoTokens:
        app_id, origin = "app", "nowhere"

        async def token(self, http: object) -> str:  # never awaited: the driver is a function
            raise AssertionError

    def answer(effect: Effect) -> Any:
        if isinstance(effect, Token):
            return TokenUnavailable("the botemu does not answer")
        return bot(effect)

    bot = Bot(menu_then_hangup)
    made = CallSettings(bot_url=BOT, caller=CallerScript.from_inline("press 1"), seed=1,
                        tokens=NoTokens())  # fmt: skip
    report = run_blocking(CallSession(made, store).run(), answer)
    assert all("Authorization" not in p.headers for p in bot.posts)
    notes = [e.payload["summary"] for e in store.events(report.call_id) if e.kind == "note"]
    assert "sent without a token: the botemu does not answer" in notes

    bot = Bot(menu_then_hangup)
    report = run_blocking(CallSession(made, store).run(), bot)
    assert all(p.headers["Authorization"] == "Bearer header.claims.signature" for p in bot.posts)


def test_a_prompt_file_is_one_get_and_its_failure_fails_the_prompt(
    store: TranscriptStore,
) -> None:
    played = workflow({"action": "answer"},
                      {"action": "playPrompt", "prompts": [{"fileUri": "https://bot.example/a.wav"}]})  # fmt: skip

    def answer(effect: Effect) -> Any:
        if isinstance(effect, Get):
            gets.append(effect)
            return Failed("connection", "no route")
        return bot(effect)

    gets: list[Get] = []
    bot = Bot(lambda post, n: ok(played if post.label == "Conversation" else HANGUP))
    made = CallSettings(bot_url=BOT, caller=CallerScript.from_inline("listen"), seed=1)
    report = run_blocking(CallSession(made, store).run(), answer)
    assert [g.url for g in gets] == ["https://bot.example/a.wav"]
    found = [f for f in report.findings if f.rule == "CALL-MEDIA-FETCH"]
    assert found and found[0].message == "fetch failed: no route"


def test_the_deadline_and_a_cancel_end_the_call_where_it_stands(store: TranscriptStore) -> None:
    made = CallSettings(bot_url=BOT, caller=CallerScript.from_inline("press 1"), seed=1,
                        deadline=2.0)  # fmt: skip
    session = CallSession(made, store)
    steps = session.run()
    first = next(steps)
    assert isinstance(first, Post) and first.label == "Conversation"
    steps.close()  # the driver's timer went off during the request
    report = session.deadline_passed()
    assert report.end_reason is EndReason.DEADLINE
    assert "CALL-DEADLINE" in [f.rule for f in report.findings]
    assert store.events(report.call_id)[-1].payload["reason"] == EndReason.DEADLINE.value


def test_the_effects_need_no_event_loop_at_all(store: TranscriptStore) -> None:
    """Nothing in a session awaits: the whole call runs in a plain function."""
    import asyncio

    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
    report = run(store, Bot(menu_then_hangup))
    assert report.workflows == 2
