"""Words for the messages of manifest findings: a value as a message shows it (``kind``,
``show``, ``name``), type names in English (``types``), a close spelling (``closest``), JSON
pointers of jsonschema paths (``pointer``), JSON equality (``same``)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from emulator.manifest.document import child, printable

TYPE_WORDS = {
    "string": "a string",
    "array": "an array",
    "object": "an object",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "null",
}


def pointer(path: Iterable[str | int]) -> str:
    """The JSON pointer of a jsonschema path (``deque(['endpoints', 0])`` -> ``/endpoints/0``)."""
    out = ""
    for part in path:
        out = child(out, part)
    return out


def evidence(value: Any) -> str | None:
    """The offending value as text, for scalars (containers are shown by the pointer)."""
    if value is None or isinstance(value, dict | list):
        return None
    return short(json.dumps(value))


def repeats(items: list[Any]) -> Iterator[tuple[int, int]]:
    """(index, index of the earlier equal item) for each repeated item, JSON equality."""
    for later in range(len(items)):
        first = next((i for i in range(later) if same(items[i], items[later])), None)
        if first is not None:
            yield later, first


def same(x: Any, y: Any) -> bool:
    """JSON equality: true is not 1, and 1 is 1.0."""
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same(i, j) for i, j in zip(x, y, strict=True))
    if isinstance(x, dict | list | str) or isinstance(y, dict | list | str):
        return type(x) is type(y) and x == y
    return bool(x == y)


def as_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def types(value: Any) -> str:
    """``"string"`` -> ``a string``; ``["object", "boolean"]`` -> ``an object or true or false``."""
    words = [TYPE_WORDS.get(t, t) for t in as_list(value)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"


def kind(value: Any) -> str:
    """A value for a message: ``a string ('x')``, ``a number (5)``, ``an empty array``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"a number ({show(value)})"
    if isinstance(value, str):
        return f"a string ({show(value)})" if value else "an empty string"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    return type(value).__name__


def show(value: Any) -> str:
    return f"'{name(value)}'" if isinstance(value, str) else short(json.dumps(value))


def name(text: str) -> str:
    """A key or text as it can appear in a one-line message."""
    return short(printable(text))


def short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def one_line(text: str) -> str:
    return short(printable(text.splitlines()[0] if text else text))


def closest(text: Any, options: Iterable[Any]) -> str | None:
    if not isinstance(text, str):
        return None
    close = difflib.get_close_matches(text, [str(o) for o in options], n=1, cutoff=0.6)
    return close[0] if close else None
