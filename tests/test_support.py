"""The tests' own helpers (regression: a port from ``free_port`` was sometimes taken by an
outgoing connection before the test bound it, failing CI with "address already in use")."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from tests import support
from tests.support import ephemeral_range, free_port


def test_free_ports_lie_outside_the_ephemeral_range_and_never_repeat() -> None:
    low, high = ephemeral_range()
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert all(not low <= port <= high for port in ports)


def test_a_free_port_can_be_bound_as_the_servers_bind_it() -> None:
    port = free_port()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()


def test_a_port_someone_listens_on_is_not_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = free_port()
    picks = iter([taken, taken, free_port()])
    monkeypatch.setattr(support, "_issued", set())
    monkeypatch.setattr(support, "_pick", SimpleNamespace(choice=lambda pool: next(picks)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", taken))
        s.listen()
        port = free_port()
    assert port != taken


def test_each_xdist_worker_has_ports_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: two workers drew the same port; the other's bot (sales on 2) took it first,
    and a live call went to it (``choice=support`` for the key 1)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    for worker in range(4):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
        assert {free_port() % 4 for _ in range(20)} == {worker}


def test_a_bot_process_refuses_a_port_something_else_answers_on() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with (
            pytest.raises(RuntimeError, match=f"port {port} for the test's bot is taken"),
            support.bot_process(["-c", "pass"], port, "the test's bot"),
        ):
            pass


def test_a_bot_process_that_exits_before_it_listens_is_an_error() -> None:
    with pytest.raises(RuntimeError, match=r"the test's bot exited \(3\) before it listened"):
        with support.bot_process(["-c", "raise SystemExit(3)"], free_port(), "the test's bot"):
            pass
