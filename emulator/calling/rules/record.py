"""The rules on a record action: its nested prompt, durations, format, beep and stop tones."""

from __future__ import annotations

from collections.abc import Mapping

from emulator.calling import ruleset as R
from emulator.calling.model import RecordingFormat
from emulator.calling.rules.checker import Checker
from emulator.calling.rules.prompts import check_nested_prompt
from emulator.jsonutil import JSON


def check_record(c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
    check_nested_prompt(c, value, keys, where)
    for name, rule, low, high in (
        ("maxDurationInSeconds", R.WF_RECORD_MAX_DURATION, 2, 600),
        ("initialSilenceTimeoutInSeconds", R.WF_RECORD_INITIAL_SILENCE, 1, 30),
        ("maxSilenceTimeoutInSeconds", R.WF_RECORD_MAX_SILENCE, 0, 30),
    ):
        c.number(
            c.get(value, keys, name), c.where(where, keys, name), rule, low, high, integer=True
        )
    c.enum(
        RecordingFormat,
        c.get(value, keys, "recordingFormat"),
        c.where(where, keys, "recordingFormat"),
    )
    c.boolean(c.get(value, keys, "playBeep"), c.where(where, keys, "playBeep"))
    c.stop_tones(value, keys, where, allow_bool=True)
