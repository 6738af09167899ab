"""The gevent driver of a call, for Locust: it runs a ``CallSession`` (which does no I/O) and
carries out its effects with geventhttpclient (what Locust's ``FastHttpUser`` uses): each
request over a connection pool per bot address, each wait with ``gevent.sleep``, the Bearer token
from a local token source, a recording's encoding in gevent's thread pool. It keeps the call's
wall-clock deadline with ``gevent.Timeout``.

Each exchange is handed to ``on_exchange`` once the session has judged its answer, with the
findings it raised, so that Locust's request events can fail for an invalid Workflow or an
error finding as well as for a 5xx, a time-out or a connection error.

Importing this module imports gevent (and geventhttpclient); import it only in a process that
runs under gevent (Locust's).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import gevent
from geventhttpclient import HTTPClient

from emulator.calling.calllog import CallStore
from emulator.calling.callsession import CallSession
from emulator.calling.effects import (
    Answer,
    Compute,
    Effect,
    Failed,
    Get,
    Post,
    Token,
    Wait,
    run_blocking,
)
from emulator.calling.engine import Media
from emulator.calling.settings import CallReport, CallSettings
from emulator.calling.tokens import TokenUnavailable
from emulator.findings import Finding, Severity
from emulator.httpio import redact_authorization
from emulator.load.tokens import token_now

ATTEMPT_RULES = frozenset({"CALL-HTTP-5XX", "CALL-TIMEOUT", "CALL-CONNECTION"})
"""Findings about one attempt, which its own exchange reports (a retry that succeeds must not
report them again)."""
CONNECT_TIMEOUT = 10.0
POOL_SIZE = 64
"""Connections kept per bot address and process."""


@dataclass
class Exchange:
    """One request of a call as Locust reports it: the kind (``Conversation``,
    ``recognizeOutcome``, ...), its latency, the answer's size, and what went wrong with it."""

    name: str
    milliseconds: float
    size: int
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    mark: int = 0
    """How many findings the call had when the answer came back (the exchange's start there)."""

    def failure(self) -> str | None:
        """The failure to report: the exchange's own, else its first error finding, by rule id."""
        if self.error is not None:
            return self.error
        for f in self.findings:
            if f.severity is Severity.ERROR and f.rule not in ATTEMPT_RULES:
                return f"{f.rule}: {f.message}"
        return None


OnExchange = Callable[[Exchange], None]


class Clients:
    """geventhttpclient connection pools, one per scheme, host and port (per process)."""

    def __init__(self, *, concurrency: int = POOL_SIZE) -> None:
        self.concurrency = concurrency
        self._clients: dict[tuple[str, str, int], HTTPClient] = {}

    def client(self, url: str, timeout: float, settings: CallSettings) -> tuple[HTTPClient, str]:
        """The pool for ``url`` and the request target (path and query) to ask it for."""
        parts = urlsplit(url)
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        key = (parts.scheme, parts.hostname or "", port)
        client = self._clients.get(key)
        if client is None:
            context = settings.ssl_context
            client = HTTPClient(
                parts.hostname or "", port, ssl=https, concurrency=self.concurrency,
                connection_timeout=min(CONNECT_TIMEOUT, timeout), network_timeout=timeout,
                ssl_context_factory=(lambda *a, **k: context) if context is not None else None,
            )  # fmt: skip
            self._clients[key] = client
        target = parts.path or "/"
        return client, target + (f"?{parts.query}" if parts.query else "")

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


class GeventIO:
    """Carries out one call's effects with geventhttpclient and gevent."""

    def __init__(self, clients: Clients, settings: CallSettings, on_exchange: OnExchange) -> None:
        self.clients = clients
        self.settings = settings
        self.on_exchange = on_exchange
        self.pending: Exchange | None = None
        """The last exchange, until the session has judged its answer (its next effect)."""

    def perform(self, effect: Effect, findings: list[Finding]) -> Any:
        self.flush(findings)
        if isinstance(effect, Post):
            return self.post(effect, len(findings))
        if isinstance(effect, Wait):
            gevent.sleep(effect.seconds)
            return None
        if isinstance(effect, Get):
            return self.get(effect)
        if isinstance(effect, Token):
            return self.token()
        if isinstance(effect, Compute):
            return gevent.get_hub().threadpool.apply(effect)
        raise TypeError(f"not an effect: {effect!r}")

    def flush(self, findings: list[Finding]) -> None:
        """Hand the pending exchange on, with the findings the session raised since it ended."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.findings = findings[pending.mark :]
            self.on_exchange(pending)

    def post(self, e: Post, mark: int) -> Answer | Failed:
        started = time.perf_counter()
        answer = self.exchange(e.url, e.timeout, e.max_body, "POST", e.body, e.headers)
        took = (time.perf_counter() - started) * 1000
        name = e.label.split(" ", 1)[0]
        if isinstance(answer, Failed):
            rule = "CALL-TIMEOUT" if answer.kind == "timeout" else "CALL-CONNECTION"
            why = f"{rule}: {answer.kind}" + (f" ({answer.reason})" if answer.reason else "")
            exchange = Exchange(name, took, 0, why)
        else:
            status = f"CALL-HTTP-5XX: HTTP {answer.status}" if answer.status >= 500 else None
            exchange = Exchange(name, took, len(answer.data), status)
        exchange.mark = mark
        self.pending = exchange
        return answer

    def get(self, e: Get) -> Answer | Failed:
        return self.exchange(e.url, e.timeout, e.max_body, "GET", b"", {})

    def exchange(self, url: str, timeout: float, max_body: int, method: str, body: bytes,
                 headers: Any) -> Answer | Failed:  # fmt: skip
        """One request within ``timeout`` seconds in all, the answer cut at ``max_body``."""
        timer = gevent.Timeout(timeout)
        timer.start()
        try:
            client, target = self.clients.client(url, timeout, self.settings)
            response = client.request(method, target, body=body, headers=headers)
            try:
                data = response.read(max_body + 1)
            finally:
                response.release()
            sent = dict(headers)
            sent.setdefault("Host", urlsplit(url).netloc)
            sent["Content-Length"] = str(len(body))
            if "Authorization" in sent:
                sent["Authorization"] = redact_authorization(sent["Authorization"])
            return Answer(response.status_code, data[:max_body], len(data) > max_body,
                          _headers(response.items()), sent)  # fmt: skip
        except gevent.Timeout as t:
            if t is not timer:
                raise
            return Failed("timeout")
        except OSError as error:
            tls = "ssl" in type(error).__module__.lower()
            return Failed("tls" if tls else "connection", str(error) or type(error).__name__)
        except Exception as error:  # a malformed answer (the parser's error): a broken exchange
            return Failed("connection", str(error) or type(error).__name__)
        finally:
            timer.close()

    def token(self) -> str | TokenUnavailable:
        return token_now(self.settings.tokens)


def _headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Response headers as a plain dict, repeated names joined with ", "."""
    out: dict[str, str] = {}
    for key, value in pairs:
        name = str(key)
        out[name] = f"{out[name]}, {value}" if name in out else str(value)
    return out


def place_call(
    settings: CallSettings,
    store: CallStore,
    clients: Clients,
    on_exchange: OnExchange,
    *,
    media_cache: dict[str, Media] | None = None,
) -> CallReport:
    """Place one call and run it to its end under gevent; never raises for what the bot does."""
    session = CallSession(settings, store, None, media_cache)
    io = GeventIO(clients, settings, on_exchange)
    steps = session.run()
    deadline = settings.deadline
    timer = gevent.Timeout(deadline) if deadline else None
    if timer is not None:
        timer.start()
    try:
        report = run_blocking(steps, lambda effect: io.perform(effect, session.findings))
    except gevent.Timeout as t:
        if t is not timer:
            raise
        steps.close()
        report = session.deadline_passed()
    except gevent.GreenletExit:  # the run stops: what was answered so far is still reported
        steps.close()
        session.cancelled()
        io.flush(session.findings)
        raise
    finally:
        if timer is not None:
            timer.close()
    io.flush(session.findings)
    return report


__all__ = ["Clients", "Exchange", "GeventIO", "place_call"]
