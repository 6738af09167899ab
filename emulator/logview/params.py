"""What the log view's API routes share: a whole-number query parameter within bounds, and what
the rulebook says of the rules a page's findings name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiohttp import web

from emulator.findings import Rule
from emulator.jsonutil import JSONObject


def number(query: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
    """The query parameter ``name`` as a whole number from ``low`` to ``high`` (None: no upper
    bound), ``default`` when absent or empty; otherwise 400 naming the bounds."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise web.HTTPBadRequest(text=f"{name} is a whole number {bounds}, not {raw[:100]!r}")
    return value


def rules_json(names: Iterable[object], index: Mapping[str, Rule]) -> JSONObject:
    """Severity, source and summary of each rule in ``index`` that ``names`` name."""
    out: JSONObject = {}
    for name in names:
        rule = index.get(name) if isinstance(name, str) else None
        if rule is not None:
            out[rule.id] = {"severity": rule.severity.value, "source": rule.source,
                            "summary": rule.summary}  # fmt: skip
    return out
