"""Strings for ``samples``: a value for each string ``format`` (``FORMATS``, from a seeded Faker)
and a string a simple regular expression matches in full (``regex_sample``)."""

from __future__ import annotations

import importlib
import string
from collections.abc import Callable
from datetime import UTC
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from faker import Faker

# --- formats -------------------------------------------------------------------------------------

FORMATS: Final[dict[str, Callable[[Faker], str]]] = {
    "email": lambda f: str(f.email()),
    "idn-email": lambda f: str(f.email()),
    "uri": lambda f: str(f.url()),
    "iri": lambda f: str(f.url()),
    "uri-reference": lambda f: str(f.uri_path()),
    "iri-reference": lambda f: str(f.uri_path()),
    "uri-template": lambda f: str(f.url()) + "{id}",
    "date": lambda f: str(f.date()),
    "date-time": lambda f: f.date_time(tzinfo=UTC).replace(microsecond=0).isoformat(),
    "time": lambda f: f"{f.time()}Z",
    "uuid": lambda f: str(f.uuid4()),
    "hostname": lambda f: str(f.domain_name()),
    "idn-hostname": lambda f: str(f.domain_name()),
    "ipv4": lambda f: str(f.ipv4()),
    "ipv6": lambda f: str(f.ipv6()),
    "regex": lambda f: "^[a-z]+$",
    "json-pointer": lambda f: f"/{f.word()}/0",
    "relative-json-pointer": lambda f: "0/" + str(f.word()),
}


# --- regular expressions ------------------------------------------------------------------------

_ANCHORS = ("AT_BEGINNING", "AT_END", "AT_BEGINNING_STRING", "AT_END_STRING")
_WORD = string.ascii_letters + string.digits + "_"
_PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "
_CATEGORIES: Final[dict[str, str]] = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters + "_- ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": _WORD,
    "CATEGORY_WORD": _WORD,
    "CATEGORY_NOT_WORD": " -.,",
}


def regex_sample(pattern: str, rng: Any, repeat: int = 3) -> str | None:
    """A string that the regular expression ``pattern`` matches in full, for simple patterns
    (literals, classes, groups, alternation, repetition, anchors); None when it uses anything
    else (lookaround, backreferences) or is not a Python regular expression. Built on the
    standard library's regular expression parser."""
    try:
        parser = importlib.import_module("re._parser")
        parsed = parser.parse(pattern)
        return _emit(parsed, rng, repeat, {})
    except Exception:  # an unreadable pattern, or a construct not generated: not sampled
        return None


def _emit(items: Any, rng: Any, repeat: int, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([c for c in _PRINTABLE if c != chr(arg)]))
        elif name == "ANY":
            out.append(rng.choice(string.ascii_letters))
        elif name == "IN":
            out.append(_in_class(arg, rng))
        elif name == "BRANCH":
            out.append(_emit(rng.choice(arg[1]), rng, repeat, groups))
        elif name == "SUBPATTERN":
            text = _emit(arg[-1], rng, repeat, groups)
            if arg[0]:
                groups[arg[0]] = text
            out.append(text)
        elif name == "ATOMIC_GROUP":
            out.append(_emit(arg, rng, repeat, groups))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            count = rng.randint(low, max(low, min(high, low + repeat)))
            out.extend(_emit(sub, rng, repeat, groups) for _ in range(count))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name == "AT" and getattr(arg, "name", "") in _ANCHORS:
            continue
        else:
            raise ValueError(f"not generated: {name}")
    return "".join(out)


def _in_class(items: Any, rng: Any) -> str:
    negate = bool(items) and getattr(items[0][0], "name", "") == "NEGATE"
    if negate:
        pool = [c for c in _PRINTABLE if not _member(c, items[1:])]
        if not pool:
            raise ValueError("an empty negated class")
        return str(rng.choice(pool))
    op, arg = rng.choice(list(items))
    name = getattr(op, "name", str(op))
    if name == "LITERAL":
        return chr(arg)
    if name == "RANGE":
        return chr(rng.randint(arg[0], arg[1]))
    if name == "CATEGORY":
        return str(rng.choice(_CATEGORIES[getattr(arg, "name", "")]))
    raise ValueError(f"not generated in a class: {name}")


def _member(char: str, items: Any) -> bool:
    for op, arg in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL" and char == chr(arg):
            return True
        if name == "RANGE" and arg[0] <= ord(char) <= arg[1]:
            return True
        if name == "CATEGORY":
            kind = getattr(arg, "name", "")
            matches = {
                "CATEGORY_DIGIT": char.isdigit(),
                "CATEGORY_NOT_DIGIT": not char.isdigit(),
                "CATEGORY_SPACE": char.isspace(),
                "CATEGORY_NOT_SPACE": not char.isspace(),
                "CATEGORY_WORD": char.isalnum() or char == "_",
                "CATEGORY_NOT_WORD": not (char.isalnum() or char == "_"),
            }
            if matches.get(kind, True):
                return True
    return False
