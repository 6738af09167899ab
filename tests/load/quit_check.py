"""Run by ``test_metrics.py`` in its own process (importing Locust monkey-patches with gevent):
a master that quits, with clients that send their final report late, early but not final, or
never. Prints one JSON object of what it saw."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import gevent
from locust.runners import MasterRunner

from emulator.load import metrics
from emulator.load.metrics import KEY, METRICS


@dataclass
class Client:
    id: str


@dataclass
class Master:
    """What the quit needs of a master: its clients, and a server that sends to them."""

    ids: tuple[str, ...]
    sent: list[tuple[str, str]] = field(default_factory=list)
    quit_by_locust: bool = False

    @property
    def clients(self) -> Any:
        return type("Clients", (), {"all": [Client(i) for i in self.ids]})()

    @property
    def server(self) -> Master:
        return self

    def send_to_client(self, message: Any) -> None:
        self.sent.append((message.type, message.node_id))


def quit_master(master: Master) -> float:
    def locust_quit(runner: Any) -> None:
        runner.quit_by_locust = True

    started = time.monotonic()
    metrics._quit_after_final_reports(locust_quit)(master)
    return time.monotonic() - started


def main() -> None:
    both, reported = Master(("w1", "w2")), {}

    def report(client_id: str) -> None:
        METRICS.receive(client_id, {KEY: {"final": True}})
        reported[client_id] = time.monotonic()

    later = [gevent.spawn_later(0.2, report, "w1"), gevent.spawn_later(0.8, report, "w2")]
    waited_both = quit_master(both)
    quit_at = time.monotonic()
    gevent.joinall(later)
    metrics.FINAL_REPORT_WAIT = 0.3
    never = Master(("w3",))
    periodic = gevent.spawn_later(0.05, METRICS.receive, "w3", {KEY: {"final": False}})
    waited_never = quit_master(never)
    periodic.join()
    print(json.dumps({
        "sent": both.sent, "quit": [both.quit_by_locust, never.quit_by_locust],
        "waited_both": waited_both, "waited_never": waited_never,
        "after_last_report": quit_at - max(reported.values()),
        "awaiting_never": sorted(METRICS.awaiting),
        "installed": MasterRunner.quit.__qualname__,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
