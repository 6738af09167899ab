"""The round trip for every bundled example scenario written for the reference IVR bot (tag
``ivr``; each matrix entry is its own test): ``botemu test`` runs it against the reference bot
(its own process, ``tests/support.py``'s ``ivr_bot``); each call it made (the transcript ids of
``--json``'s report) becomes a scenario (``scenario_of``), written to a file; ``botemu test`` on
that file passes against the same bot, and fails against a bot whose menu text changed
(``tests/bots/replay_bots.py``'s ``swapped``) with a readable diff: ``file:line``, what was
expected and what was played.

Everything goes through the command line (``emulator.cli.main``), as a user would run it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from emulator.cli import main
from emulator.replay.convert import scenario_of
from emulator.runner.suite import collect_scenarios
from emulator.scenario.loader import load_scenarios
from emulator.transcripts.store import TranscriptStore
from tests.support import ROOT, ivr_bot, served_bot

EXAMPLES = ROOT / "scenarios" / "examples"
TAG = "ivr"
BUNDLED = [s.id for s in collect_scenarios([EXAMPLES]) if TAG in s.tags]
"""The id of every test the bundled IVR scenarios expand to (a matrix gives several)."""
CHANGED = "swapped"
"""The changed bot: its menu says "For support, press 1 ... For sales, press 2 ..."."""
MENU_PATTERN = "expected: a prompt that matches /^For sales, press"
CHANGED_MENU = "'For support, press 1 or say support."


@dataclass(frozen=True)
class Recorded:
    """The run of the bundled scenarios: its database, and each test's calls by id."""

    db: Path
    calls: dict[str, list[str]]
    report: dict[str, Any]


def replay_bot(kind: str) -> AbstractContextManager[str]:
    """A bot of ``tests/bots/replay_bots.py`` in its own process; its calling URL."""
    return served_bot("replay_bots", kind)


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with ivr_bot() as url:
        yield url


@pytest.fixture(scope="module")
def changed() -> Iterator[str]:
    with replay_bot(CHANGED) as url:
        yield url


def botemu_test(*argv: str) -> tuple[int, str, str]:
    """``botemu test ARGV`` in process: (exit code, standard output, standard error)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["test", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def recorded(reference: str, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """``botemu test scenarios/examples --tag ivr`` against the reference bot, once."""
    work = tmp_path_factory.mktemp("bundled")
    db, report = work / "t.db", work / "report.json"
    code, out, err = botemu_test(str(EXAMPLES), "--tag", TAG, "--bot", reference, "--db",
                                 str(db), "--json", str(report), "--seed", "7")  # fmt: skip
    assert code == 0, out + err
    document = json.loads(report.read_text(encoding="utf-8"))
    calls = {s["id"]: list(s["transcripts"]) for s in document["scenarios"]}
    return Recorded(db, calls, document)


@pytest.mark.slow
def test_every_bundled_ivr_scenario_ran_and_made_calls(recorded: Recorded) -> None:
    assert len(BUNDLED) >= 6, BUNDLED  # five files, one with a matrix of two
    assert sorted(recorded.calls) == sorted(BUNDLED)
    assert all(s["status"] == "passed" for s in recorded.report["scenarios"])
    assert all(recorded.calls[i] for i in BUNDLED), recorded.calls
    assert recorded.report["summary"]["tests"] == len(BUNDLED)


def write_replays(recorded: Recorded, scenario_id: str, where: Path) -> list[Path]:
    """Each call of the test ``scenario_id`` as a scenario file (the library's text), checked
    to be a valid scenario with the caller's steps."""
    files = []
    with TranscriptStore(recorded.db) as store:
        for n, call_id in enumerate(recorded.calls[scenario_id]):
            file = where / f"replay-{n}.yaml"
            file.write_text(scenario_of(store, call_id), encoding="utf-8")
            (scenario,) = load_scenarios(file)
            assert scenario.caller is not None and scenario.caller.steps, file.read_text()
            files.append(file)
    return files


def line_of(file: Path, text: str) -> int:
    return next(n for n, row in enumerate(file.read_text().splitlines(), 1) if row == text)


@pytest.mark.slow
@pytest.mark.parametrize("scenario_id", BUNDLED)
def test_each_call_replays_against_the_same_bot_and_fails_on_a_changed_menu(
    recorded: Recorded, reference: str, changed: str, tmp_path: Path, scenario_id: str
) -> None:
    for file in write_replays(recorded, scenario_id, tmp_path):
        report = tmp_path / f"{file.stem}.json"
        code, out, err = botemu_test(str(file), "--bot", reference, "--db", str(tmp_path / "t.db"),
                                     "--json", str(report))  # fmt: skip
        assert code == 0, f"{file.read_text()}\n{out}{err}"
        assert json.loads(report.read_text())["summary"]["passed"] == 1

        code, out, err = botemu_test(str(file), "--bot", changed, "--db", str(tmp_path / "t.db"),
                                     "--json", str(report))  # fmt: skip
        assert code == 1, out + err
        prompts = line_of(file, "  prompts:")
        text = out + err
        # The diff, as a person reads it: the file and line, what was expected, what was played.
        assert re.search(rf"✗ {re.escape(str(file))}:{prompts}\s+\[EXP-PROMPTS\]", text), text
        assert MENU_PATTERN in text and re.search(r"\(item 2 of \d+, in order\)", text), text
        actual = next(row for row in text.splitlines() if row.strip().startswith("actual:"))
        assert CHANGED_MENU in actual, text
        # And the same in the JSON report.
        (result,) = json.loads(report.read_text())["scenarios"]
        failure = next(f for f in result["failures"] if f["rule"] == "EXP-PROMPTS")
        assert failure["where"] == f"{file}:{prompts}"
        assert "For support, press 1" in failure["message"]
