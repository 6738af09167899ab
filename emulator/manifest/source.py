"""Reading a skill manifest: a file (JSON or YAML), an http(s) URL, or text.

A ``.json`` file is strict JSON, a ``.yaml``/``.yml`` file YAML; anything else (a URL without a
suffix follows its Content-Type) is JSON when it starts with ``{`` or ``[``, else YAML. At most
``MAX_BYTES`` are read; a URL has ``TIMEOUT`` seconds to connect, between reads and in all, and
may redirect only to http(s).

Positions (JSON pointer -> 1-based line, column) come from a small scanner for JSON (PyYAML
refuses JSON indented with tabs) and from the node marks for YAML. A member's position is its
key; an item's and the root's, the start of the value. YAML is limited to what JSON can say: no
merge keys, no custom tags, no NaN; a date stays text and a key is the text as written. Duplicate
keys: the last wins, as with JSON parsers.

Errors (under ``emulator.errors.BotemuError``)::

    ManifestError          the manifest cannot be read: missing, too large, too slow, not UTF-8,
    │                      not JSON or YAML, an HTTP error (.source, .message, .line, .column)
    └── NotAnObjectError   it is JSON or YAML, but not an object (.value and .positions hold it)

The parts: ``document`` (``Manifest``, the errors, pointers and positions), ``fetch`` (URLs) and
``parse`` (JSON and YAML text with positions); every name this module had is importable from it.
"""

from __future__ import annotations

import re
from pathlib import Path

from emulator.inputs import InputError, read_bytes
from emulator.manifest.document import (
    Format,
    Manifest,
    ManifestError,
    NotAnObjectError,
    Position,
    child,
    format_of,
    nearest,
    position_of,
    printable,
    size_text,
)
from emulator.manifest.fetch import fetch
from emulator.manifest.parse import MAX_TEXT, MAX_VALUES, parse_json, parse_yaml

__all__ = [
    "MAX_BYTES",
    "MAX_TEXT",
    "MAX_VALUES",
    "TIMEOUT",
    "Format",
    "Manifest",
    "ManifestError",
    "NotAnObjectError",
    "Position",
    "child",
    "load_manifest",
    "load_manifest_bytes",
    "load_manifest_text",
    "nearest",
    "position_of",
    "printable",
]

MAX_BYTES = 1024 * 1024
"""The largest manifest read, from a file or a URL."""
TIMEOUT = 10.0
"""Seconds a URL has to connect, between reads, and in all (checked between reads)."""


def load_manifest(
    source: str | Path, *, max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT
) -> Manifest:
    """Read a manifest from a file (JSON or YAML) or an http(s) URL; raises ``ManifestError``."""
    label = str(source)
    fmt: Format | None
    if isinstance(source, str) and re.match(r"[A-Za-z][A-Za-z0-9+.\-]*://", source):
        if not source.lower().startswith(("http://", "https://")):
            raise ManifestError(label, "only http and https URLs can be read")
        data, fmt = fetch(source, max_bytes, timeout)
    else:
        path = Path(source)
        data, fmt = _read_file(path, label, max_bytes), format_of(path.name)
    return load_manifest_bytes(data, label, format=fmt, max_bytes=max_bytes)


def load_manifest_bytes(
    data: bytes,
    source: str = "<bytes>",
    *,
    format: Format | None = None,
    max_bytes: int = MAX_BYTES,
) -> Manifest:
    """Read a manifest from bytes (UTF-8, a BOM allowed), such as standard input."""
    if len(data) > max_bytes:
        raise ManifestError(source, f"larger than {size_text(max_bytes)}")
    return load_manifest_text(_decode(data, source), source, format=format)


def load_manifest_text(
    text: str, source: str = "<string>", *, format: Format | None = None
) -> Manifest:
    """Read a manifest from text; ``format`` None means JSON when it starts with ``{`` or ``[``."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise ManifestError(source, "empty: expected a skill manifest (a JSON or YAML object)")
    if format is None:
        format = "json" if text.lstrip()[:1] in ("{", "[") else "yaml"
    value, positions = parse_json(text, source) if format == "json" else parse_yaml(text, source)
    if not isinstance(value, dict):
        raise NotAnObjectError(source, value, positions)
    return Manifest(value, source, positions)


def _read_file(path: Path, label: str, max_bytes: int) -> bytes:
    try:
        data = read_bytes(path, max_bytes)  # a regular file only: a FIFO would hang
    except InputError as e:
        raise ManifestError(label, e.message) from None
    if len(data) > max_bytes:
        raise ManifestError(label, f"larger than {size_text(max_bytes)}")
    return data


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        column = len(data[start : e.start].decode("utf-8", "replace")) + 1
        line = data.count(b"\n", 0, e.start) + 1
        message = f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise ManifestError(label, message, line=line, column=column) from None
