"""Round trips: a call placed against the reference IVR bot, made a scenario, checked by the
scenario loader and run against the same bot (it passes, and the caller does exactly what it did
in the call), then against a changed bot (it fails, naming the expectation)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.media import encode_recording
from emulator.calling.model import RecordingFormat
from emulator.replay.convert import ReplayError, replay_of, scenario_of
from emulator.replay.reading import CallerAct, read_call
from emulator.runner.runner import Runner, ScenarioResult, Target
from emulator.scenario.loader import load_scenarios_text
from emulator.scenario.model import Faults, Scenario
from emulator.transcripts.store import TranscriptStore
from tests.bots.calling_bots import make_bot
from tests.bots.replay_bots import make_app

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

SCRIPTS = {
    "menu-and-digits": "press 1; press 1234#",
    "wrong-key": "press 9; listen; press 2; press {digits} gap 0.4s".format(digits="42#"),
    "silence-until-reprompt": "silence 6s; press 3; talk 4s then #",
    "speech-and-record": "listen; say voicemail; talk 3s",
    "hangup-mid-prompt": "hangup during playPrompt after 1.5s",
    "hangup-mid-digits": "press 1; press 12; hangup after 0.6s",
    "hangup-at-menu-end": "listen; hangup",
    "hangup-mid-goodbye": "press 2; press 7#; hangup during playPrompt after 2s",
    "hangup-mid-record": "press 3; talk 2s; hangup after 1s",
    "digits-interdigit": "press 1; press 5; silence 2s; press 6; silence 9s",
    "keys-at-one-moment": "press 1; press 4; press 56 gap 0.5s; press #",
    "silence-then-nothing": "silence 12s; silence 12s",
    "keys-a-record-ignores": "press 3; press 82644",
    "keys-with-long-gaps": "press 3 gap 2.5s; press 2#32; press 8484",
    "hangup-waits-for-a-prompt": "listen; hangup during playPrompt; press 0",
    "hangup-as-a-record-times-out": "press 3; hangup during playPrompt",
    "hangup-after-a-silence": "press 1; press 49; silence 0.5s; hangup; press 1",
    "talk-then-hangup-at-goodbye": "talk 9s; hangup during playPrompt; press 2",
}


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


async def serve(aiohttp_server: ServerFactory, kind: str, tmp_path: Path) -> str:
    server = await aiohttp_server(make_app(kind, tmp_path / f"voicemail-{kind}"))
    return str(server.make_url("/api/calls"))


async def run(url: str, store: TranscriptStore, scenario: Scenario) -> ScenarioResult:
    async with Runner(Target(bot_url=url), store, seed=5) as runner:
        return await runner.run(scenario)


async def place(url: str, store: TranscriptStore, script: str, faults: Faults | None = None) -> str:
    scenario = Scenario(name="call", caller=CallerScript.from_inline(script),
                        faults=faults or Faults(), path=Path("call.yaml"), line=1)  # fmt: skip
    result = await run(url, store, scenario)
    return result.transcript_ids[0]


def load(text: str) -> Scenario:
    (scenario,) = load_scenarios_text(text, name="replay.yaml")
    return scenario


def acts(store: TranscriptStore, call_id: str) -> list[tuple[str, float, float, str, str | None]]:
    summary = store.call(call_id)
    assert summary is not None
    return [_key(a) for a in read_call(summary, store.events(call_id)).acts]


def _key(act: CallerAct) -> tuple[str, float, float, str, str | None]:
    return act.kind, round(act.at, 4), round(act.end, 4), act.keys, act.text


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
async def test_a_replay_passes_against_the_same_bot_and_does_what_the_caller_did(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path, script: str
) -> None:
    url = await serve(aiohttp_server, "reference", tmp_path)
    call_id = await place(url, store, script)
    replay = replay_of(store, call_id)
    assert replay.verified and replay.notes == (), replay.notes
    result = await run(url, store, load(replay.text))
    assert result.passed, [f.message for f in result.failures]
    assert acts(store, result.transcript_ids[0]) == acts(store, call_id)


async def test_a_replay_against_a_bot_with_another_greeting_fails_at_that_prompt(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    call_id = await place(await serve(aiohttp_server, "reference", tmp_path), store, "press 1")
    text = scenario_of(store, call_id)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == "prompts:")
    result = await run(await serve(aiohttp_server, "greeting", tmp_path), store, load(text))
    assert not result.passed
    (failure,) = result.failures
    assert failure.rule == "EXP-PROMPTS"
    assert failure.where.endswith(f":{line}")  # the line of prompts:
    assert "equals 'Welcome to the botemu demo line.' (item 1 of" in failure.message
    assert f"got {NEW!r}" in failure.message


NEW = "Welcome to the new botemu line."


async def test_a_replay_against_a_bot_with_its_menu_swapped_names_the_outcome(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    url = await serve(aiohttp_server, "reference", tmp_path)
    call_id = await place(url, store, "press 1; press 1234#")
    text = scenario_of(store, call_id, strict=True)
    outcome_line = next(i for i, row in enumerate(text.splitlines(), 1) if "index: 0}" in row)
    result = await run(await serve(aiohttp_server, "swapped", tmp_path), store, load(text))
    by_rule = {f.rule: f for f in result.failures}
    assert set(by_rule) == {"EXP-PROMPTS", "EXP-OUTCOME"}
    outcome = by_rule["EXP-OUTCOME"]
    assert outcome.where.endswith(f":{outcome_line}")  # the line of outcome #0
    assert outcome.message == (
        "expected outcome #0 to be recognizeOutcome success with completion reason "
        "dtmfOptionMatched with choice 'sales', got recognizeOutcome success "
        "dtmfOptionMatched choice=support"
    )


async def test_loose_passes_where_numbers_dates_and_times_change_and_strict_fails(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    url = await serve(aiohttp_server, "volatile", tmp_path)
    call_id = await place(url, store, "press 3; talk 2s")
    loose, strict = scenario_of(store, call_id), scenario_of(store, call_id, strict=True)
    assert '{equals: "Welcome, caller 10. Today is 2026-11-11 at 09:01."}' in strict
    assert (
        r'{matches: "^Welcome, caller \\+?\\d[\\d,.\\s-]*\\. Today is '
        r'(?:\\d{4}-\\d{1,2}-\\d{1,2}|\\d{1,2}/\\d{1,2}/\\d{2,4}) at \\d{1,2}:\\d{2}(?::\\d{2})?\\.$"}'
    ) in loose
    assert (await run(url, store, load(loose))).passed
    failed = await run(url, store, load(strict))
    assert [f.rule for f in failed.failures] == ["EXP-PROMPTS"]
    assert "got 'Welcome, caller 12. Today is 2026-11-13 at 09:03.'" in failed.failures[0].message


async def test_the_file_names_its_source_and_the_schema(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path
) -> None:
    call_id = await place(await serve(aiohttp_server, "reference", tmp_path), store, "press 3")
    lines = scenario_of(store, call_id, schema="../schema.json").splitlines()
    assert lines[0] == "# yaml-language-server: $schema=../schema.json"
    assert lines[1] == f"# Replay of call {call_id}"
    assert lines[2].startswith("# to http://127.0.0.1:") and lines[2].endswith(" UTC.")


def test_an_unknown_call_a_running_call_and_an_interrupted_one_are_refused(
    store: TranscriptStore,
) -> None:
    running = store.start(bot="ivr")
    interrupted = store.start(bot="ivr")
    store.finish(interrupted, reason="interrupted")
    with pytest.raises(ReplayError, match="no call matches 'nope'"):
        replay_of(store, "nope")
    with pytest.raises(ReplayError, match=f"call {running} has not ended: only a call that"):
        replay_of(store, running)
    with pytest.raises(ReplayError, match=f"call {interrupted} was interrupted"):
        replay_of(store, interrupted)


FAULTS = {
    "callbacks": (
        Faults(fail_callbacks=(1,), duplicate_callbacks=(2,), unknown_fields=True),
        "faults:\n  fail_callback: [1]\n  duplicate_callback: [2]\n  unknown_fields: true\n",
    ),
    "unknown-enums": (Faults(unknown_enums=True), "faults:\n  unknown_enums: true\n"),
    "dropped": (Faults(drop_callbacks=(2,)), "faults:\n  drop_callback: [2]\n"),
    "rejected": (Faults(reject_workflows=(2,)), "faults:\n  reject_workflow: [2]\n"),
    "slow-caller": (Faults(caller_delay=1.5), "expect:\n"),
}


@pytest.mark.parametrize(("faults", "written"), FAULTS.values(), ids=FAULTS.keys())
async def test_a_call_placed_with_faults_replays_with_them(
    aiohttp_server: ServerFactory,
    store: TranscriptStore,
    tmp_path: Path,
    faults: Faults,
    written: str,
) -> None:
    url = await serve(aiohttp_server, "reference", tmp_path)
    call_id = await place(url, store, "press 1; press 1234#", faults)
    replay = replay_of(store, call_id)
    assert replay.verified and replay.notes == (), replay.notes
    assert f"\n{written}" in replay.text and "slow_caller" not in replay.text
    result = await run(url, store, load(replay.text))
    assert result.passed, [f.message for f in result.failures]
    assert acts(store, result.transcript_ids[0]) == acts(store, call_id)


@pytest.mark.parametrize(
    ("media", "finding"),
    [
        (encode_recording(RecordingFormat.WAV, 2.5), None),
        (b"<html>not audio</html>", "CALL-MEDIA-FORMAT"),
    ],
    ids=["wav", "not-audio"],
)
async def test_a_call_with_a_prompt_file_replays_and_is_checked_when_its_length_is_known(
    aiohttp_server: ServerFactory, store: TranscriptStore, media: bytes, finding: str | None
) -> None:
    server = await aiohttp_server(make_bot("media", media_bytes=media))
    url = str(server.make_url("/api/calls"))
    scenario = Scenario(name="call", caller=CallerScript.from_inline("hangup during playPrompt after 1s"),
                        path=Path("call.yaml"), line=1)  # fmt: skip
    async with Runner(Target(bot_url=url), store, seed=5) as runner:
        first = await runner.run(scenario)
        replay = replay_of(store, first.transcript_ids[0])
        assert replay.verified and replay.notes == (), replay.notes
        assert ('{file: "hello.wav"}' in replay.text) is (
            finding is None
        )  # a failed file: unplayed
        assert (f"  findings: [{finding}]\n" in replay.text) is (finding is not None)
        cached = await runner.run(load(replay.text))  # the same run: the file is not fetched again
    again = await run(url, store, load(replay.text))
    assert again.passed, [f.message for f in again.failures]
    if finding is None:
        assert cached.passed
        second = replay_of(store, cached.transcript_ids[0])
        assert not second.verified
        assert second.notes == (
            f"not checked: the length of the prompt file {url.removesuffix('/api/calls')}"
            "/media/hello.wav is not in the transcript (fetched before)",
        )


def random_script(rng: random.Random) -> str:
    """A caller script of up to six steps of every kind, some of which the bot ignores."""
    choices: list[Callable[[], str]] = [
        lambda: "press " + "".join(rng.choice("0123456789#*") for _ in range(rng.randint(1, 5)))
        + rng.choice(["", " gap 0s", " gap 0.5s", " gap 2.5s"]),
        lambda: "say " + rng.choice(["sales", "support", "voicemail", "hello there"]),
        lambda: f"silence {rng.choice([0.5, 1, 4.2, 6, 12])}s",
        lambda: f"talk {rng.choice([0.5, 2, 9])}s" + rng.choice(["", " then #"]),
        lambda: "listen",
        lambda: "hangup" + rng.choice(["", " after 0.7s", " during playPrompt after 1.3s",
                                       " during recognize after 2s", " during record after 1s"]),
        lambda: "press 3",
    ]  # fmt: skip
    return "; ".join(rng.choice(choices)() for _ in range(rng.randint(0, 6)))


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_scripts_replay_exactly(
    aiohttp_server: ServerFactory, store: TranscriptStore, tmp_path: Path, seed: int
) -> None:
    """Scripts drawn from a fixed seed (the same every run): each call's steps are confirmed
    by the engine, and the replay passes and does what the caller did."""
    rng = random.Random(seed)
    url = await serve(aiohttp_server, "reference", tmp_path)
    async with Runner(Target(bot_url=url), store, seed=5) as runner:
        for _ in range(40):
            script = random_script(rng)
            scenario = Scenario(name="call", caller=CallerScript.from_inline(script),
                                path=Path("call.yaml"), line=1)  # fmt: skip
            call_id = (await runner.run(scenario)).transcript_ids[0]
            replay = replay_of(store, call_id)
            assert replay.verified and replay.notes == (), (script, replay.notes)
            result = await runner.run(load(replay.text))
            assert result.passed, (script, [f.message for f in result.failures])
            assert acts(store, result.transcript_ids[0]) == acts(store, call_id), script
