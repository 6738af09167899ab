"""Tests of emulator/calling/values.py: ``quick_init`` builds the same values as the dataclass's
own ``__init__``."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from emulator.calling import events, model
from emulator.calling.values import quick_init


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Keyed:
    name: str
    size: int = 3
    extra: dict[str, int] = field(default_factory=dict)


@quick_init
@dataclass(frozen=True, slots=True)
class Base:
    at: float


@quick_init
@dataclass(frozen=True, slots=True)
class Mixed(Base):
    name: str
    note: str | None = None
    tags: list[str] = field(default_factory=list)
    flag: bool = field(default=False, kw_only=True)


def test_positional_defaults_and_keyword_only_parameters_are_kept() -> None:
    assert Mixed(1.0, "a") == Mixed(at=1.0, name="a", note=None, tags=[], flag=False)
    assert Mixed(1.0, "a", "n", ["t"], flag=True).flag is True
    with pytest.raises(TypeError):
        Mixed(1.0, "a", "n", ["t"], True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Mixed(1.0)  # type: ignore[call-arg]
    assert Keyed(name="k") == Keyed(name="k", size=3, extra={})
    with pytest.raises(TypeError):
        Keyed("k")  # type: ignore[call-arg]


def test_a_default_factory_makes_a_new_value_each_time() -> None:
    first, second = Keyed(name="k"), Keyed(name="k")
    assert first.extra == {} and first.extra is not second.extra
    given = {"a": 1}
    assert Keyed(name="k", extra=given).extra is given


def test_values_stay_frozen_hashable_and_picklable() -> None:
    value = Mixed(1.0, "a", tags=[])
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "b"  # type: ignore[misc]
    assert hash(Base(2.0)) == hash(Base(2.0))
    assert dataclasses.replace(value, name="b") == Mixed(1.0, "b")
    assert pickle.loads(pickle.dumps(Keyed(name="k"))) == Keyed(name="k")


def test_outcomes_are_built_as_the_dataclass_builds_them() -> None:
    outcome = model.RecognizeOutcome(
        id="r",
        outcome=model.Outcome.SUCCESS,
        choice_outcome=model.ChoiceOutcome(
            completion_reason=model.RecognitionCompletionReason.DTMF_OPTION_MATCHED,
            choice_name="sales",
        ),
    )
    assert outcome.failure_reason is None and outcome.extra == {}
    assert outcome.collect_digits_outcome is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.id = "s"  # type: ignore[misc]


def test_events_are_thawed_but_equal_hashable_and_serialized_as_before() -> None:
    timer = events.TimerSet(1.0, "r", 3.0, "interdigitTimeout")
    same = events.TimerSet(at=1.0, operation_id="r", deadline=3.0, reason="interdigitTimeout")
    assert timer == same and hash(timer) == hash(same) and timer.limit is None
    assert timer.to_json() == {
        "kind": "timer set",
        "at": 1.0,
        "operation_id": "r",
        "deadline": 3.0,
        "reason": "interdigitTimeout",
        "limit": None,
    }
    assert events.RecordingMade(0.0, 2.0, "rec", model.RecordingFormat.WAV).speech == ()
    assert dataclasses.replace(timer, at=2.0).at == 2.0
    assert pickle.loads(pickle.dumps(timer)) == timer


def test_thawing_a_class_whose_base_is_still_frozen_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Frozen:
        at: float

    @dataclass(frozen=True, slots=True)
    class Child(Frozen):
        name: str

    with pytest.raises(AssertionError):
        quick_init(thaw=True)(Child)
