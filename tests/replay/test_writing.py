"""The YAML a replay writes: values the scenario language takes, quoted so that YAML keeps them
as written, and the bounds on what a stored call may hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from emulator.replay import convert
from emulator.replay.convert import ReplayError, replay_of
from emulator.replay.texts import MAX_TEXT_CHARS
from emulator.replay.writing import COMPLETION_REASONS, OUTCOME_TYPES, duration, quote
from emulator.scenario import SCHEMA_PATH
from emulator.scenario.loader import load_scenarios_text
from emulator.scenario.model import PromptExpect, TextMatch
from emulator.transcripts.store import EventKind, TranscriptStore


def test_the_outcome_values_are_the_schemas() -> None:
    schema = json.loads(Path(SCHEMA_PATH).read_text())
    outcome = schema["definitions"]["expect"]["properties"]["outcomes"]["items"]["properties"]
    assert list(OUTCOME_TYPES) == outcome["type"]["enum"]
    assert list(COMPLETION_REASONS) == outcome["completion_reason"]["enum"]


@pytest.mark.parametrize(
    "text", ["yes", "0123", 'say "hi"\\now', "line\nbreak\ttab", "café ☎", "#: not a comment", ""]
)
def test_quote_keeps_any_text_as_written(text: str) -> None:
    assert yaml.safe_load(f"key: {quote(text)}") == {"key": text}


@pytest.mark.parametrize(
    ("seconds", "written"), [(6.0, "6s"), (1.25, "1.25s"), (0.0000014, "0.000001s"), (0, "0s")]
)
def test_durations(seconds: float, written: str) -> None:
    assert duration(seconds) == written


def stored(store: TranscriptStore, *prompts: str, key: str | None = None) -> str:
    """A call that played ``prompts`` (and in which the caller pressed ``key``, which no
    Workflow asked for), without the Workflows: enough for the expectations."""
    call_id = store.start(bot="http://127.0.0.1:1/api/calls")
    store.append(call_id, EventKind.STATE, {"kind": "state changed", "old": "incoming",
                                            "new": "established"}, vtime=0.0)  # fmt: skip
    for i, text in enumerate(prompts):
        store.append(call_id, EventKind.PLATFORM, {"kind": "prompt played", "at": float(i),
                     "end": i + 1.0, "operation_id": f"p-{i}", "text": text}, vtime=i + 1.0)  # fmt: skip
    if key is not None:
        store.append(call_id, EventKind.CALLER, {"kind": "caller pressed", "at": 0.5,
                     "keys": key, "times": [0.5]}, vtime=0.5)  # fmt: skip
    store.finish(call_id, reason="bot hung up")
    return call_id


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "t.db")


def test_a_huge_prompt_is_expected_by_its_start(store: TranscriptStore) -> None:
    long = "You have 5 messages. " + "Blah. " * 400
    call_id = stored(store, long)
    for strict in (False, True):
        text = replay_of(store, call_id, strict=strict).text
        (scenario,) = load_scenarios_text(text, name="huge.yaml")
        (item,) = next(e for e in scenario.expect if isinstance(e, PromptExpect)).items
        assert isinstance(item, TextMatch) and item.matches is not None
        assert not item.matches.endswith("$")
        assert item.test(long) and not item.test("Goodbye.")
        assert f"(its first {MAX_TEXT_CHARS:,} characters)" in text


def test_a_scenario_over_the_size_a_file_may_have_is_refused(
    store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    call_id = stored(store, "Hello.", "Goodbye.")
    monkeypatch.setattr(convert, "MAX_SCENARIO_BYTES", 200)
    with pytest.raises(ReplayError, match=r"the scenario would be [\d,]+ bytes, over the 200"):
        replay_of(store, call_id)


def test_steps_that_do_not_reproduce_the_call_are_noted_in_the_file(
    store: TranscriptStore,
) -> None:
    call_id = stored(store, "Hello.", key="5")
    replay = replay_of(store, call_id)
    assert not replay.verified
    assert replay.notes == (
        "1 caller acts after the last input action were left out",
        "the steps may not reproduce the call: the call had keys 5 at 0.50s, the steps give "
        "nothing more",
    )
    assert "# note: 1 caller acts after the last input action were left out\n" in replay.text
    load_scenarios_text(replay.text, name="noted.yaml")


def test_a_call_with_error_findings_expects_them(store: TranscriptStore) -> None:
    call_id = stored(store, "Hello.")
    store.append(call_id, EventKind.FINDING, {"rule": "WF-ORDER", "severity": "error"})
    store.append(call_id, EventKind.FINDING, {"rule": "WF-CALLBACK-HTTPS", "severity": "warning"})
    text = replay_of(store, call_id).text
    assert "  findings: [WF-ORDER]\n" in text
    load_scenarios_text(text, name="findings.yaml")
