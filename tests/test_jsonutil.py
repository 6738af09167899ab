"""``dumps``: the canonical bytes botemu sends, written by orjson with the standard encoder as
the fallback; both must give the same JSON for every value."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from emulator.jsonutil import JSON, dumps

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def standard(value: JSON) -> bytes:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def has_small_float(value: JSON) -> bool:
    if isinstance(value, float):
        return value != 0 and abs(value) < 1e-4
    if isinstance(value, list):
        return any(has_small_float(v) for v in value)
    if isinstance(value, dict):
        return any(has_small_float(v) for v in value.values())
    return False


@given(values)
def test_the_same_value_as_the_standard_encoder(value: JSON) -> None:
    assert json.loads(dumps(value)) == json.loads(standard(value))


@given(values)
def test_the_same_bytes_but_for_numbers_under_1e_4(value: JSON) -> None:
    if not has_small_float(value):
        assert dumps(value) == standard(value)


def test_what_orjson_refuses_goes_through_the_standard_encoder() -> None:
    assert dumps({"n": 2**70}) == b'{"n":1180591620717411303424}'
    assert dumps({1: "x"}) == b'{"1":"x"}'  # type: ignore[dict-item]
    assert dumps({"s": "\ud800"}) == b'{"s":"\\ud800"}'  # a lone surrogate: ASCII escapes


def test_small_numbers_and_non_finite_ones() -> None:
    assert dumps([1e-05, 1e-7]) == b"[0.00001,1e-7]"
    assert json.loads(dumps([1e-05, 1e-7])) == [1e-05, 1e-7]
    assert dumps([math.inf]) == b"[null]"
