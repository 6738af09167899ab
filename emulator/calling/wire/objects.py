"""Reading JSON with paths: ``loads`` (strict JSON text), ``Obj`` (one object's members, read
case-insensitively, with type checks that raise ``WireError``) and the readers of enums, strings
and digits that every message reader shares.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import TypeVar

from emulator.calling.model import DTMF_KEYS, WireEnum
from emulator.errors import WireError
from emulator.jsonutil import JSON, child, find_key, is_integer, is_number, kind_of, unknown_keys

E = TypeVar("E", bound=WireEnum)
T = TypeVar("T")

ROOT = "$"


def loads(data: bytes | str) -> JSON:
    """Parse JSON text, raising WireError (never anything else) when it is not JSON."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value: JSON = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except UnicodeDecodeError as e:
        raise WireError(ROOT, f"body is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise WireError(ROOT, f"not JSON: {e.msg}", line=e.lineno, column=e.colno) from e
    except (ValueError, RecursionError) as e:
        raise WireError(ROOT, f"not JSON: {e}") from e
    return value


def _reject_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


class Obj:
    """One JSON object being read: case-insensitive member access with paths."""

    __slots__ = ("known", "path", "raw")

    def __init__(self, value: object, path: str, known: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            raise WireError(path, f"expected an object, got {kind_of(value)}")
        self.raw: dict[str, JSON] = value
        self.path = path
        self.known = known

    def get(self, name: str) -> JSON:
        key = find_key(self.raw, name)
        return None if key is None else self.raw[key]

    def at(self, name: str) -> str:
        """The path of a member, spelled as the document spells it (so positions resolve)."""
        return child(self.path, find_key(self.raw, name) or name)

    def require(self, name: str) -> JSON:
        value = self.get(name)
        if value is None:
            raise WireError(self.at(name), "required field is missing")
        return value

    def text(self, name: str, *, required: bool = False) -> str | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise WireError(self.at(name), f"expected a string, got {kind_of(value)}")
        return value

    def req_text(self, name: str) -> str:
        value = self.text(name, required=True)
        assert value is not None
        return value

    def flag(self, name: str, *, required: bool = False) -> bool | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise WireError(self.at(name), f"expected a boolean, got {kind_of(value)}")
        return value

    def integer(self, name: str) -> int | None:
        value = self.get(name)
        if value is None:
            return None
        if not is_integer(value):
            raise WireError(self.at(name), f"expected an integer, got {show(value)}")
        assert isinstance(value, int | float)
        return int(value)

    def number(self, name: str, *, required: bool = False) -> float | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not is_number(value):
            raise WireError(self.at(name), f"expected a number, got {show(value)}")
        assert isinstance(value, int | float)
        return float(value)

    def enum(self, cls: type[E], name: str, *, required: bool = False) -> E | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        return read_enum(cls, value, self.at(name))

    def req_enum(self, cls: type[E], name: str) -> E:
        value = self.enum(cls, name, required=True)
        assert value is not None
        return value

    def items(
        self, name: str, item: Callable[[JSON, str], T], *, required: bool = False
    ) -> tuple[T, ...] | None:
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        path = self.at(name)
        if not isinstance(value, list):
            raise WireError(path, f"expected an array, got {kind_of(value)}")
        return tuple(item(v, child(path, i)) for i, v in enumerate(value))

    def links(self, name: str = "links") -> dict[str, str]:
        value = self.get(name)
        if value is None:
            return {}
        path = self.at(name)
        if not isinstance(value, dict):
            raise WireError(path, f"expected an object, got {kind_of(value)}")
        out: dict[str, str] = {}
        for key, uri in value.items():
            if uri is None:
                continue
            if not isinstance(uri, str):
                raise WireError(child(path, key), f"expected a URI string, got {kind_of(uri)}")
            canonical = key.lower() if key.lower() in ("call", "callback") else key
            if canonical not in out or key == canonical:  # the exact name wins, else the first
                out[canonical] = uri
        return out

    def extra(self) -> dict[str, JSON]:
        return {k: self.raw[k] for k in unknown_keys(self.raw, self.known)}


def show(value: object) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{kind_of(value)} ({json.dumps(value)[:40]})"
    return kind_of(value)


def read_enum(cls: type[E], value: JSON, path: str) -> E:
    if not isinstance(value, str):
        raise WireError(path, f"expected a string, got {kind_of(value)}")
    return cls.read(value)


def str_item(value: JSON, path: str) -> str:
    if not isinstance(value, str):
        raise WireError(path, f"expected a string, got {kind_of(value)}")
    return value


def enum_item(cls: type[E]) -> Callable[[JSON, str], E]:
    def item(value: JSON, path: str) -> E:
        return read_enum(cls, value, path)

    return item


def read_digits(value: JSON, path: str, *, allow_bool: bool = False) -> tuple[str, ...]:
    """A list of one-character digit strings; also a bare string (each character a digit) and,
    for record's ``stopTones`` listed as boolean, ``true`` (any key) or ``false`` (none)."""
    if isinstance(value, bool) and allow_bool:
        return tuple(DTMF_KEYS) if value else ()
    if isinstance(value, str):
        return tuple(value)
    if isinstance(value, list):
        return tuple(str_item(v, child(path, i)) for i, v in enumerate(value))
    raise WireError(path, f"expected an array of digits, got {kind_of(value)}")
