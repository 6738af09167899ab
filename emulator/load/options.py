"""What one ``botemu load`` run is: ``LoadOptions``, and the parsing of its durations, rates,
``--keep`` and ``--processes``; ``StartPacer``, how a process holds its share of ``--rate``.
Pure: no Locust here."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SHIPPED_LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
"""The locustfile ``botemu load`` runs unless told another (``botemu load --locustfile``)."""

MAX_POOL = 5000
"""The most callers a ``--rate`` run keeps (each one call at a time): the cap on active calls."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_KEEP = re.compile(r"^(failures|all|none|sample:[1-9]\d*)$")


class OptionError(ValueError):
    """A bad value of a ``botemu load`` option: one line that names it."""


@dataclass(frozen=True)
class LoadOptions:
    """One load run. ``rate`` (calls started per second) and ``users`` (concurrent callers,
    back to back) exclude each other; with neither, one caller."""

    bot: str
    scenarios: tuple[Path, ...] = ()
    caller: str = ""
    """Inline caller steps when no scenario is given (``botemu call --caller``'s form)."""
    rate: float | None = None
    users: int | None = None
    duration: float = 60.0
    pace: float = 1.0
    processes: int = 0
    """0: one process (Locust's LocalRunner); N: a master here and N worker processes."""
    locustfile: Path = SHIPPED_LOCUSTFILE
    csv_prefix: str | None = None
    html: Path | None = None
    chart: Path | None = None
    """An SVG of response times and requests per second over the run (``chart.py``)."""
    json: Path | None = None
    keep: str = "failures"
    db: Path = field(default_factory=lambda: Path("botemu-load.sqlite3"))
    app_id: str | None = None
    emulator: str | None = None
    no_token: bool = False
    certs: Path = Path("certs")
    progress: bool = True

    @property
    def callers(self) -> int:
        """How many Locust users the run spawns (in all processes together)."""
        if self.rate is not None:
            return pool_size(self.rate, self.duration)
        return self.users or 1

    @property
    def spawn_rate(self) -> float:
        """Users started per second: the rate itself for ``--rate`` (the pool grows no faster
        than calls can pile up), all at once within a second for ``--users``."""
        if self.rate is not None:
            return max(self.rate, 1.0)
        return float(max(self.users or 1, 1))

    def botemu_options(self) -> dict[str, object]:
        """The ``botemu_*`` attributes of Locust's ``parsed_options`` the user class reads."""
        return {
            "botemu_scenarios": [str(p) for p in self.scenarios],
            "botemu_caller": self.caller,
            "botemu_pace": self.pace,
            "botemu_keep": self.keep,
            "botemu_db": str(self.db),
            "botemu_app_id": self.app_id,
            "botemu_emulator": self.emulator,
            "botemu_no_token": self.no_token,
            "botemu_certs": str(self.certs),
            "botemu_rate": 0.0,  # the runner paces the callers itself (``StartPacer``)
        }


def pool_size(rate: float, duration: float) -> int:
    """Callers for a constant start rate: enough for every call of the run to be active at
    once (no call ends before the run does), up to ``MAX_POOL``."""
    return max(1, min(math.ceil(rate * duration) + 1, MAX_POOL))


def parse_duration(text: str, option: str = "--duration") -> float:
    """``30s``, ``2m``, ``1h``, ``500ms`` or bare seconds, as seconds (more than 0)."""
    match = _DURATION.match(text)
    if not match:
        raise OptionError(f"{option} {text!r}: expected a duration such as 30s, 2m or 1h")
    seconds = float(match.group(1)) * _SECONDS[match.group(2)]
    if seconds <= 0:
        raise OptionError(f"{option} {text!r}: must be more than 0")
    return seconds


def parse_rate(text: str) -> float:
    """Calls per second: ``5``, ``0.5``, ``5/s``, ``120/m``."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(s|m))?\s*$", text)
    if not match:
        raise OptionError(f"--rate {text!r}: expected calls per second, such as 5 or 120/m")
    rate = float(match.group(1)) / (60.0 if match.group(2) == "m" else 1.0)
    if rate <= 0:
        raise OptionError(f"--rate {text!r}: must be more than 0")
    return rate


def parse_keep(text: str) -> str:
    """Which transcripts the callers keep: ``failures``, ``sample:N``, ``all`` or ``none``."""
    if not _KEEP.match(text):
        raise OptionError(f"--keep {text!r}: expected failures, sample:N, all or none")
    return text


def parse_processes(value: int) -> int:
    """Worker processes: 0 for none (one process), -1 for one per core."""
    if value == -1:
        return os.cpu_count() or 1
    if value < 0:
        raise OptionError(f"--processes {value}: expected 0, a number of workers, or -1")
    return value


class StartPacer:
    """Start slots ``1/rate`` seconds apart for the callers of one process. A caller that takes
    its slot more than ``tolerance`` seconds after it was due starts late (all callers were busy,
    or the process could not keep up); slots more than ``backlog`` seconds old are dropped rather
    than started in a burst."""

    def __init__(
        self,
        rate: float,
        on_late: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        tolerance: float = 0.25,
        backlog: float = 1.0,
    ) -> None:
        self.interval = 1.0 / rate
        self.clock = clock
        self.on_late = on_late
        self.tolerance = tolerance
        self.backlog = backlog
        self.next_due: float | None = None

    def delay(self) -> float:
        """Seconds the caller waits for its slot (0 when it is due or late)."""
        now = self.clock()
        due = now if self.next_due is None else max(self.next_due, now - self.backlog)
        self.next_due = due + self.interval
        if now - due > self.tolerance:
            self.on_late()
        return max(0.0, due - now)
