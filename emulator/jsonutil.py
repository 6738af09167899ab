"""Helpers for reading JSON the way the platform and its SDKs do.

Names are matched case-insensitively (an exact match wins over a case-folded one); paths are
JSONPath-like (``$.actions[0].prompts[1]``) so that every error and finding can point at a value.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping
from typing import TypeAlias

import orjson

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
JSONObject: TypeAlias = dict[str, JSON]


def kind_of(value: object) -> str:
    """The JSON kind of a value, for messages ("expected a string, got an array")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def child(path: str, key: str | int) -> str:
    """The path of a member (``$.a`` + ``b`` → ``$.a.b``) or an item (``[2]``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier() or key.replace("$", "").isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def find_key(obj: Mapping[str, object], name: str) -> str | None:
    """The key of ``obj`` that stands for ``name``: the exact key if present, else the first
    key equal to it ignoring case, else None."""
    if name in obj:
        return name
    lowered = name.lower()
    for key in obj:
        if key.lower() == lowered:
            return key
    return None


def unknown_keys(obj: Mapping[str, object], known: Iterable[str]) -> list[str]:
    """Keys of ``obj`` that match none of ``known``, ignoring case."""
    known_lower = {k.lower() for k in known}
    return [k for k in obj if k.lower() not in known_lower]


def is_number(value: object) -> bool:
    """A JSON number (not a boolean) that is a finite double: ``10**400`` is not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def is_integer(value: object) -> bool:
    """A JSON number with an integral value (``5`` or ``5.0``)."""
    return is_number(value) and float(value).is_integer()  # type: ignore[arg-type]


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units: how .NET and JavaScript count "characters"."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # a lone surrogate is one unit


def dumps(value: JSON) -> bytes:
    """The canonical bytes of a JSON payload botemu sends: compact, UTF-8, no ASCII escaping.

    orjson writes them (it is on every message's path and ten times faster than the standard
    encoder; the bytes are the same but for numbers under 1e-4, which it writes without an
    exponent, ``0.00001``: the same value; a non-finite number, which no message holds, becomes
    null as JSON.stringify writes it). What orjson refuses (a key that is not a string, an
    integer beyond 64 bits) goes through the standard encoder.

    A string holding a lone surrogate (read from a ``\\ud800`` escape) cannot be UTF-8: then the
    payload is written with ASCII escapes, which keeps every string value exactly as it was read.
    """
    try:
        return orjson.dumps(value)  # the same bytes, ten times faster; it refuses the rest
    except (orjson.JSONEncodeError, TypeError):
        pass
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def copy_json(value: JSON) -> JSON:
    """A deep copy of a JSON value, equal to what ``copy.deepcopy`` makes and several times
    faster: dicts and lists are rebuilt, strings, numbers, booleans and null are kept (they are
    immutable). Anything else (a Mapping of another type, a tuple, a str subclass...) goes to
    ``copy.deepcopy``. Unlike it, a sub-object that appears twice comes out as two copies (JSON
    read from text never shares one) and a cycle is a RecursionError (JSON cannot hold one)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}  # type: ignore[union-attr]
    if kind is list:
        return [copy_json(v) for v in value]  # type: ignore[union-attr]
    return copy.deepcopy(value)


def copy_object(value: Mapping[str, JSON]) -> JSONObject:
    """``copy_json`` of a JSON object (any Mapping: the copy is a dict)."""
    return {k: copy_json(v) for k, v in value.items()}
