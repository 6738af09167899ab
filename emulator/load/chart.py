"""The chart of a load run over time (``botemu load --chart FILE.svg``): the bot's response times
(p50 and p95 over Locust's current window) above, and requests per second with the failures
below, one point per second, as a self-contained SVG (no script, no network, text as text).

Pure: it takes Locust's ``stats.history`` entries (each value a ``[timestamp, number]`` pair).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any

WIDTH, HEIGHT = 760, 440
LEFT, RIGHT, TOP, GAP, BOTTOM = 64, 150, 36, 48, 40
PANEL = (HEIGHT - TOP - GAP - BOTTOM) // 2
SERIES = (
    ("response_time_percentile_0.5", "p50 (ms)", "#1f77b4", 0),
    ("response_time_percentile_0.95", "p95 (ms)", "#d62728", 0),
    ("current_rps", "requests/s", "#2ca02c", 1),
    ("current_fail_per_sec", "failures/s", "#ff7f0e", 1),
)
MAX_POINTS = 3_600
"""An hour of seconds: a longer run is charted at its last hour."""


def latency_chart(history: Sequence[Mapping[str, Any]], title: str) -> str:
    """The SVG text of the run's chart; a run with no point yet says so in the chart."""
    points = _points(history[-MAX_POINTS:])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    if not points:
        parts.append(f'<text x="{LEFT}" y="{TOP + PANEL}">no data yet</text></svg>')
        return "\n".join(parts)
    span = max(points[-1][0], 1.0)
    for panel in (0, 1):
        parts += _panel(points, panel, span)
    parts += _legend()
    parts.append(f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.0f}" y="{HEIGHT - 8}" '
                 'text-anchor="middle">seconds into the run</text>')  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


def _points(history: Sequence[Mapping[str, Any]]) -> list[tuple[float, dict[str, float]]]:
    """(seconds since the first entry, value per series) of each entry that can be read."""
    out: list[tuple[float, dict[str, float]]] = []
    start: datetime | None = None
    for entry in history:
        try:
            at = datetime.fromisoformat(str(entry["time"]).replace("Z", "+00:00"))
            values = {key: float(entry[key][1]) for key, *_ in SERIES if key in entry}
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        start = start or at
        out.append(((at - start).total_seconds(), values))
    return out


def _panel(points: list[tuple[float, dict[str, float]]], panel: int, span: float) -> list[str]:
    top = TOP + panel * (PANEL + GAP)
    keys = [key for key, _, _, p in SERIES if p == panel]
    peak = max([v.get(k, 0.0) for _, v in points for k in keys] + [1.0]) * 1.1
    width = WIDTH - LEFT - RIGHT
    parts = [f'<rect x="{LEFT}" y="{top}" width="{width}" height="{PANEL}" fill="none" '
             'stroke="#999"/>']  # fmt: skip
    for i in range(5):
        value = peak * i / 4
        y = top + PANEL - PANEL * i / 4
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + width}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#eee"/>')  # fmt: skip
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value:.3g}</text>')
    for i in range(5):
        x = LEFT + width * i / 4
        parts.append(f'<text x="{x:.1f}" y="{top + PANEL + 14}" text-anchor="middle">'
                     f"{span * i / 4:.0f}</text>")  # fmt: skip
    for key, _, colour, p in SERIES:
        if p != panel:
            continue
        coords = " ".join(
            f"{LEFT + width * t / span:.1f},{top + PANEL - PANEL * v.get(key, 0.0) / peak:.1f}"
            for t, v in points
        )
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                     f'points="{coords}"/>')  # fmt: skip
    return parts


def _legend() -> list[str]:
    parts = []
    for i, (_, label, colour, panel) in enumerate(SERIES):
        y = TOP + panel * (PANEL + GAP) + 14 + (i % 2) * 18
        x = WIDTH - RIGHT + 14
        parts.append(f'<line x1="{x}" x2="{x + 18}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" '
                     'stroke-width="2"/>')  # fmt: skip
        parts.append(f'<text x="{x + 24}" y="{y}">{escape(label)}</text>')
    return parts
