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
"""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast
from urllib.parse import urlsplit

import yaml

from emulator import __version__
from emulator.errors import BotemuError
from emulator.inputs import InputError, read_bytes
from emulator.jsonpos import NUMBER_TOO_LONG, is_number_too_long, long_number_at
from emulator.jsonutil import JSON, kind_of

MAX_BYTES = 1024 * 1024
"""The largest manifest read, from a file or a URL."""
TIMEOUT = 10.0
"""Seconds a URL has to connect, between reads, and in all (checked between reads)."""
MAX_VALUES = 100_000
"""YAML aliases may expand to at most this many values."""
MAX_TEXT = 4 * 1024 * 1024
"""YAML aliases may expand to at most this much text (keys and scalars, in UTF-8 bytes)."""

Position: TypeAlias = tuple[int, int]
Format: TypeAlias = Literal["json", "yaml"]


@dataclass(frozen=True)
class Manifest:
    """A manifest as read: the document, where it came from, and pointer -> (line, column)."""

    document: dict[str, JSON]
    source: str
    positions: dict[str, Position]


class ManifestError(BotemuError):
    """A manifest cannot be read. ``str(e)`` is one line: ``source[:line:column]: message``."""

    def __init__(
        self, source: str, message: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        message = printable(message)
        at = source if line is None else f"{source}:{line}"
        if line is not None and column is not None:
            at += f":{column}"
        super().__init__(f"{printable(at)}: {message}")
        self.source = source
        self.message = message
        self.line = line
        self.column = column


class NotAnObjectError(ManifestError):
    """The text is JSON or YAML, but its value is not an object (``validate_manifest(e.value)``
    explains it)."""

    def __init__(self, source: str, value: JSON, positions: dict[str, Position]) -> None:
        super().__init__(source, f"a skill manifest is a JSON object, got {kind_of(value)}")
        self.value = value
        self.positions = positions


def child(pointer: str, key: str | int) -> str:
    """The JSON pointer of a member or item (RFC 6901: ``~`` is ``~0``, ``/`` is ``~1``)."""
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def printable(text: str) -> str:
    """``text`` on one line: line breaks and other control characters escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def position_of(manifest: Manifest, pointer: str) -> Position | None:
    """Where ``pointer`` is, or its nearest ancestor (a missing member points at its object)."""
    return nearest(manifest.positions, pointer)


def nearest(positions: dict[str, Position], pointer: str) -> Position | None:
    while pointer not in positions:
        if not pointer:
            return None
        pointer = pointer[: pointer.rfind("/")]
    return positions[pointer]


# --- reading -------------------------------------------------------------------------------------


def load_manifest(
    source: str | Path, *, max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT
) -> Manifest:
    """Read a manifest from a file (JSON or YAML) or an http(s) URL; raises ``ManifestError``."""
    label = str(source)
    fmt: Format | None
    if isinstance(source, str) and re.match(r"[A-Za-z][A-Za-z0-9+.\-]*://", source):
        if not source.lower().startswith(("http://", "https://")):
            raise ManifestError(label, "only http and https URLs can be read")
        data, fmt = _fetch(source, max_bytes, timeout)
    else:
        path = Path(source)
        data, fmt = _read_file(path, label, max_bytes), _format_of(path.name)
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
        raise ManifestError(source, f"larger than {_size(max_bytes)}")
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
    value, positions = _parse_json(text, source) if format == "json" else _parse_yaml(text, source)
    if not isinstance(value, dict):
        raise NotAnObjectError(source, value, positions)
    return Manifest(value, source, positions)


def _format_of(name: str) -> Format | None:
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    return "json" if suffix == "json" else "yaml" if suffix in ("yaml", "yml") else None


def _read_file(path: Path, label: str, max_bytes: int) -> bytes:
    try:
        data = read_bytes(path, max_bytes)  # a regular file only: a FIFO would hang
    except InputError as e:
        raise ManifestError(label, e.message) from None
    if len(data) > max_bytes:
        raise ManifestError(label, f"larger than {_size(max_bytes)}")
    return data


class _RedirectRefused(Exception):
    pass


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            fp.close()
            raise _RedirectRefused(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _fetch(url: str, max_bytes: int, timeout: float) -> tuple[bytes, Format | None]:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(
        url,
        headers={
            "Accept": "application/json, application/yaml;q=0.9, */*;q=0.1",
            "User-Agent": f"botemu/{__version__}",
        },
    )
    opener = urllib.request.build_opener(_HttpOnlyRedirects)
    chunks: list[bytes] = []
    try:
        with opener.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                raise ManifestError(url, f"larger than {_size(max_bytes)} ({length} bytes)")
            size = 0
            while chunk := response.read1(64 * 1024):
                size += len(chunk)
                if size > max_bytes:
                    raise ManifestError(url, f"larger than {_size(max_bytes)}")
                if time.monotonic() > deadline:
                    raise TimeoutError
                chunks.append(chunk)
            kind = str(response.headers.get("Content-Type", "")).lower()
            final = str(response.geturl())
    except _RedirectRefused as e:
        raise ManifestError(url, f"redirected to a URL that is not http(s): {e}") from None
    except urllib.error.HTTPError as e:
        e.close()
        raise ManifestError(url, f"HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, TimeoutError):
            raise ManifestError(url, f"no answer within {timeout:g} s") from None
        raise ManifestError(url, f"cannot fetch: {e.reason}") from None
    except TimeoutError:
        raise ManifestError(url, f"no answer within {timeout:g} s") from None
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise ManifestError(url, f"cannot fetch: {e or type(e).__name__}") from None
    fmt = _format_of(urlsplit(final).path)
    if fmt is None and "json" in kind:
        fmt = "json"
    elif fmt is None and "yaml" in kind:
        fmt = "yaml"
    return b"".join(chunks), fmt


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        column = len(data[start : e.start].decode("utf-8", "replace")) + 1
        line = data.count(b"\n", 0, e.start) + 1
        message = f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise ManifestError(label, message, line=line, column=column) from None


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"


# --- JSON text -----------------------------------------------------------------------------------


def _no_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not a JSON number")


def _parse_json(text: str, source: str) -> tuple[JSON, dict[str, Position]]:
    try:
        value = cast(JSON, json.loads(text, parse_constant=_no_constant))
    except json.JSONDecodeError as e:
        line, column, message = e.lineno, e.colno, e.msg
        before = text[: e.pos].rstrip(" \t\n\r")
        if before.endswith(",") and text[e.pos : e.pos + 1] in ("}", "]"):
            comma = len(before) - 1  # JSON has no trailing commas: point at the comma
            line = text.count("\n", 0, comma) + 1
            column = comma - (text.rfind("\n", 0, comma) + 1) + 1
            message = f"a comma before '{text[e.pos]}' (JSON allows no trailing comma)"
        raise ManifestError(
            source, f"not valid JSON: {message}", line=line, column=column
        ) from None
    except ValueError as e:  # NaN, Infinity, an integer too long to read
        if is_number_too_long(e):
            at = long_number_at(text)
            raise ManifestError(
                source, NUMBER_TOO_LONG, line=at and at[0], column=at and at[1]
            ) from None
        raise ManifestError(source, f"not valid JSON: {e}") from None
    except RecursionError:
        raise ManifestError(source, "not readable: nested too deeply") from None
    return value, _JsonPositions(text).scan()


class _JsonPositions:
    """Pointer -> (line, column) for text that ``json.loads`` accepted. Iterative: any depth."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: dict[str, Position] = {}
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._line = 0
        self._stack: list[list[Any]] = []  # [pointer, is an array, next index]

    def scan(self) -> dict[str, Position]:
        text, stack = self.text, self._stack
        pointer, record, i = "", True, self._skip(0)
        while True:
            if record:
                self.out[pointer] = self._at(i)
            c = text[i]
            if c in "{[":
                stack.append([pointer, c == "[", 0])
                i = self._skip(i + 1)
                if text[i] not in "]}":
                    pointer, record, i = self._next(i)
                    continue
                i += 1
                stack.pop()
            elif c == '"':
                i = self._string_end(i)
            else:
                while i < len(text) and text[i] not in ",]} \t\n\r":
                    i += 1
            while True:  # after a value: a comma starts the next one, a bracket ends a container
                i = self._skip(i)
                if not stack:
                    return self.out
                if text[i] == ",":
                    pointer, record, i = self._next(self._skip(i + 1))
                    break
                i += 1
                stack.pop()

    def _next(self, i: int) -> tuple[str, bool, int]:
        """The next item or member of the innermost container: (pointer, record?, index)."""
        top = self._stack[-1]
        if top[1]:
            top[2] += 1
            return child(top[0], top[2] - 1), True, i
        end = self._string_end(i)
        pointer = child(top[0], json.loads(self.text[i:end]))
        self.out[pointer] = self._at(i)
        return pointer, False, self._skip(self._skip(end) + 1)  # past the ':'

    def _at(self, i: int) -> Position:
        starts = self._starts
        while self._line + 1 < len(starts) and starts[self._line + 1] <= i:  # offsets only grow
            self._line += 1
        return self._line + 1, i - starts[self._line] + 1

    def _skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\n\r":
            i += 1
        return i

    def _string_end(self, i: int) -> int:
        """``i`` at an opening quote; the index after the closing one."""
        i += 1
        while self.text[i] != '"':
            i += 2 if self.text[i] == "\\" else 1
        return i + 1


# --- YAML text -----------------------------------------------------------------------------------

_TAG = "tag:yaml.org,2002:"


class _Unreadable(Exception):
    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.position = _mark(node)
        self.message = message


def _mark(node: yaml.Node) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _parse_yaml(text: str, source: str) -> tuple[JSON, dict[str, Position]]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        reader = _YamlReader()
        value = reader.value(root, "", record=True) if root is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = (e.problem or e.context or "syntax error").replace("<stream end>", "the end")
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise ManifestError(
            source, f"not valid YAML: {problem}", line=line, column=column
        ) from None
    except _Unreadable as e:
        line, column = e.position
        raise ManifestError(source, e.message, line=line, column=column) from None
    except (yaml.YAMLError, ValueError, TypeError) as e:
        raise ManifestError(
            source, f"not valid YAML: {str(e).splitlines()[0] if str(e) else e!r}"
        ) from None
    except RecursionError:
        raise ManifestError(source, "not readable: nested too deeply") from None
    return value, reader.positions


class _YamlReader:
    """Nodes to JSON-shaped data and positions. Only what JSON can say: no merge keys, no custom
    tags, no NaN; a date stays text; a key is the text as written."""

    def __init__(self) -> None:
        self.positions: dict[str, Position] = {}
        self._count = 0
        self._text = 0
        self._open: set[int] = set()
        self._constructor = yaml.constructor.SafeConstructor()

    def value(self, node: yaml.Node, pointer: str, *, record: bool) -> JSON:
        self._count += 1
        if self._count > MAX_VALUES:
            raise _Unreadable(node, f"more than {MAX_VALUES} values (do aliases repeat a list?)")
        if record:
            self.positions[pointer] = _mark(node)
        if isinstance(node, yaml.ScalarNode):
            self._add_text(node, str(node.value))
            return self._scalar(node)
        if id(node) in self._open:
            raise _Unreadable(node, "an alias refers to a node that contains it")
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode) and node.tag == _TAG + "seq":
                return [
                    self.value(item, child(pointer, i), record=True)
                    for i, item in enumerate(node.value)
                ]
            if isinstance(node, yaml.MappingNode) and node.tag == _TAG + "map":
                return self._mapping(node, pointer)
            raise _Unreadable(node, f"unsupported YAML tag {node.tag}: JSON has no such value")
        finally:
            self._open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, pointer: str) -> JSON:
        result: dict[str, JSON] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                raise _Unreadable(key_node, "merge keys (<<) are not supported: write the keys out")
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Unreadable(key_node, "a key must be text, not a list or mapping")
            key = str(key_node.value)
            self._add_text(key_node, key)
            sub = child(pointer, key)
            self.positions[sub] = _mark(key_node)
            result[key] = self.value(value_node, sub, record=False)
        return result

    def _add_text(self, node: yaml.Node, text: str) -> None:
        self._text += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if self._text > MAX_TEXT:
            message = f"more than {MAX_TEXT // (1024 * 1024)} MiB of text once aliases are expanded (do aliases repeat a long value?)"
            raise _Unreadable(node, message)

    def _scalar(self, node: yaml.ScalarNode) -> JSON:
        tag = node.tag
        if tag in (_TAG + "str", _TAG + "timestamp"):
            return str(node.value)
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return bool(self._constructor.construct_yaml_bool(node))
        if tag == _TAG + "int":
            try:  # more digits than Python converts: 0x... and 1:2:3 are read, but not printable
                whole = int(self._constructor.construct_yaml_int(node))
                str(whole)
            except ValueError as e:
                if is_number_too_long(e):
                    raise _Unreadable(node, NUMBER_TOO_LONG) from None
                raise
            return whole
        if tag == _TAG + "float":
            number = float(self._constructor.construct_yaml_float(node))
            if number != number or number in (float("inf"), float("-inf")):
                raise _Unreadable(node, f"{node.value} is not a JSON number")
            return number
        raise _Unreadable(node, f"unsupported YAML tag {tag}: JSON has no such value")
