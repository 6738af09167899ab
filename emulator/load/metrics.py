"""Counters of calls that Locust's request stats do not hold, shared across processes: calls
started, active, done and failed, and late call starts (the generator could not start a call
when the rate asked). The user class calls ``METRICS.started()``, ``METRICS.ended(failed)``
and ``METRICS.late()``; a worker sends what it counted since its last report with Locust's
``report_to_master`` event, and the master adds it up on ``worker_report``. The listeners are
added to ``locust.events`` when this module is first imported, so a plain
``locust -f ... --worker`` that loads the user class reports them too.

Importing this module imports Locust (and so monkey-patches with gevent), makes a master that
quits wait for its workers' final reports, and builds Locust's default options once."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import gevent
import locust.argument_parser
from locust import events
from locust.runners import MasterRunner

KEY = "botemu_calls"
"""The key of our counters in a worker's report to the master."""


@dataclass
class Counts:
    started: int = 0
    done: int = 0
    failed: int = 0
    late: int = 0

    def add(self, other: Counts) -> None:
        self.started += other.started
        self.done += other.done
        self.failed += other.failed
        self.late += other.late


class CallMetrics:
    """This process's counts, what it has not yet reported, and the workers' (on a master)."""

    def __init__(self) -> None:
        self.reset()
        self._cpu_start = self._cpu_last = (time.monotonic(), self._cpu_seconds())

    def begin(self, **_: Any) -> None:
        """``test_start``: count from zero, and measure CPU from now."""
        self.reset()
        self._cpu_start = self._cpu_last = (time.monotonic(), self._cpu_seconds())

    def reset(self) -> None:
        self.stopped = False
        """This worker's users have stopped: its reports are final."""
        self.awaiting: set[str] = set()
        """On a master that quits: the workers whose final report has not come yet."""
        self.totals = Counts()
        self.unsent = Counts()
        self.local_active = 0
        self.worker_active: dict[str, int] = {}
        self.worker_cpu: dict[str, float] = {}
        self.worker_cpu_now: dict[str, float] = {}

    # -- for the user class --------------------------------------------------------------
    def started(self) -> None:
        """A call was placed."""
        self.totals.started += 1
        self.unsent.started += 1
        self.local_active += 1

    def ended(self, failed: bool) -> None:
        """A call ended; ``failed`` when it broke a rule or could not be placed."""
        self.totals.done += 1
        self.unsent.done += 1
        if failed:
            self.totals.failed += 1
            self.unsent.failed += 1
        self.local_active = max(0, self.local_active - 1)

    def late(self) -> None:
        """A call started later than the rate (or the pace) asked."""
        self.totals.late += 1
        self.unsent.late += 1

    # -- across processes ----------------------------------------------------------------
    @property
    def active(self) -> int:
        return self.local_active + sum(self.worker_active.values())

    def snapshot(self) -> dict[str, int]:
        return {**asdict(self.totals), "active": self.active}

    def cpu_average(self) -> float:
        """This process's CPU use since the run started, in percent of one core."""
        return self._cpu_since(self._cpu_start)

    def cpu_recent(self) -> float:
        """This process's CPU use since the last call, in percent of one core."""
        last, self._cpu_last = self._cpu_last, (time.monotonic(), self._cpu_seconds())
        return self._cpu_since(last)

    def _cpu_since(self, start: tuple[float, float]) -> float:
        began, cpu = start
        wall = time.monotonic() - began
        return 100.0 * (self._cpu_seconds() - cpu) / wall if wall > 0 else 0.0

    @staticmethod
    def _cpu_seconds() -> float:
        return time.process_time()

    def report(self, client_id: str, data: dict[str, Any]) -> None:
        """``report_to_master``: add what this worker counted since its last report (``final``
        once its users have stopped)."""
        data[KEY] = {**asdict(self.unsent), "active": self.local_active,
                     "cpu": self.cpu_average(), "cpu_now": self.cpu_recent(),
                     "final": self.stopped}  # fmt: skip
        self.unsent = Counts()

    def receive(self, client_id: str, data: dict[str, Any]) -> None:
        """``worker_report``: a worker's counts, on the master."""
        part = data.get(KEY)
        if not isinstance(part, dict):
            return
        if part.get("final"):
            self.awaiting.discard(client_id)
        self.totals.add(
            Counts(*(int(part.get(k, 0)) for k in ("started", "done", "failed", "late")))
        )
        self.worker_active[client_id] = int(part.get("active", 0))
        self.worker_cpu[client_id] = float(part.get("cpu", 0.0))
        self.worker_cpu_now[client_id] = float(part.get("cpu_now", 0.0))


METRICS = CallMetrics()


events.test_start.add_listener(METRICS.begin)
events.report_to_master.add_listener(METRICS.report)
events.worker_report.add_listener(METRICS.receive)


def report_at_stop(environment: Any, **_: Any) -> None:
    """A worker that stops sends its report at once. Locust's worker sends its last samples only
    when it quits, and the master waits half a second for them: on a busy machine the samples
    since the last periodic report (every 3 s) were lost from the master's final figures."""
    from locust.runners import WorkerRunner

    runner = getattr(environment, "runner", None)
    if isinstance(runner, WorkerRunner):
        METRICS.stopped = True
        runner._send_stats()  # Locust's own final report, sent earlier


events.test_stop.add_listener(report_at_stop)

FINAL_REPORT_WAIT = 10.0
"""Seconds a master that quits waits for its workers' final reports (Locust waits half a
second: a worker still stopping its users then, on a busy machine, had its last samples left
out of the master's final figures)."""


def _quit_after_final_reports(locust_quit: Callable[[Any], None]) -> Callable[[Any], None]:
    def quit(runner: Any) -> None:
        """``MasterRunner.quit``: tell the workers to quit and wait (at most
        ``FINAL_REPORT_WAIT`` seconds) for each one's final report, then quit as Locust does."""
        from locust.rpc import Message

        clients = [client.id for client in runner.clients.all]
        METRICS.awaiting = set(clients)
        for client_id in clients:
            runner.server.send_to_client(Message("quit", None, client_id))
        deadline = time.monotonic() + FINAL_REPORT_WAIT
        while METRICS.awaiting and time.monotonic() < deadline:
            gevent.sleep(0.05)
        locust_quit(runner)

    return quit


MasterRunner.quit = _quit_after_final_reports(MasterRunner.quit)  # type: ignore[method-assign, assignment]


def default_options_once() -> None:
    """Build Locust's default options once in this process (done when this module is first
    imported: in ``botemu load``'s workers, and in a ``locust --worker`` that loads botemu's
    locustfile). A worker reading a spawn message builds them again for each option the master
    sent (``default_args_dict()``, a whole argument parser each time, in
    ``WorkerRunner.handle_message``): 59 parsers for botemu's options, 0.2 s on an idle machine
    and seconds on a busy one, in which no greenlet runs, so the worker sends no heartbeat and
    the master, after 3 s, drops it (both workers: the run stopped with no request counted).
    The defaults cannot change within a process; Locust only reads them."""
    module = locust.argument_parser
    if not hasattr(module.default_args_dict, "cache_info"):
        module.default_args_dict = functools.cache(module.default_args_dict)


default_options_once()
