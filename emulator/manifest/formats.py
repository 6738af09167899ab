"""The formats the manifest schema's validator enforces (``FORMATS``): ``uri`` (``is_uri``:
rfc3987 is not installed) and ``regex`` (Python's ``re``, as botemu compiles patterns)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from jsonschema import FormatChecker  # type: ignore[import-untyped]

from emulator.patterns import compile_pattern

_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def is_uri(value: object) -> bool:
    """Format ``uri``: an absolute URI (RFC 3986 4.3, a fragment allowed).

    A scheme and something after it; only characters RFC 3986 allows (no spaces; non-ASCII must
    be percent-encoded); well-formed ``%XX``; brackets only around an IPv6 host; a numeric port;
    http and https need a host. Anything but a string passes (formats only constrain strings).
    """
    if not isinstance(value, str):
        return True
    scheme, colon, rest = value.partition(":")
    if not colon or not rest or not _SCHEME.fullmatch(scheme):
        return False
    if not _URI_CHARS.fullmatch(value) or _BAD_PERCENT.search(value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError when the port is not a number
    except ValueError:
        return False
    if any(c in parts.path + parts.query + parts.fragment for c in "[]#"):
        return False
    return scheme.lower() not in ("http", "https") or bool(parts.hostname)


def _is_regex(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        compile_pattern(value)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False
    return True


FORMATS = FormatChecker(formats=())
"""The formats botemu enforces: ``uri`` (``is_uri``) and ``regex``."""
FORMATS.checks("uri")(is_uri)
FORMATS.checks("regex")(_is_regex)
