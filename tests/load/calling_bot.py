"""A small calling bot for the load tests, in a thread of the test process: a menu, then a
hang-up; one callback in ``fail_every`` is answered 500 (a planted fault), the first of them
the third callback (a run of one second on a loaded machine may make fewer than ten)."""

from __future__ import annotations

import itertools
import json
import threading
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.load.echo_server import serving


class CallingBot(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fail_every: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_every = fail_every
        self.callbacks = itertools.count(1)
        self.lock = threading.Lock()
        self.failed = 0
        self.calls = 0

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a caller that hangs up mid-request (the run's end): not the test's business

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api/calls"

    def menu(self) -> bytes:
        callback = f"http://127.0.0.1:{self.server_address[1]}/api/callback"
        return json.dumps({
            "actions": [
                {"operationId": "a", "action": "answer"},
                {"operationId": "m", "action": "recognize", "bargeInAllowed": True,
                 "playPrompt": {"action": "playPrompt", "prompts": [{"value": "Press 1."}]},
                 "choices": [{"name": "one", "dtmfVariation": "1"}]},
            ],
            "links": {"callback": callback},
            "notificationSubscriptions": ["callStateChange"],
        }).encode()  # fmt: skip


HANGUP = json.dumps({"actions": [{"operationId": "h", "action": "hangup"}],
                     "notificationSubscriptions": ["callStateChange"]}).encode()  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    server: CallingBot
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/api/calls":
            with self.server.lock:
                self.server.calls += 1
            self.answer(200, self.server.menu())
            return
        with self.server.lock:
            n = next(self.server.callbacks)
            every = self.server.fail_every  # the first at the 3rd callback, then every Nth
            fail = every > 0 and n % every == 3 % every
            self.server.failed += fail
        self.answer(500, b"planted fault") if fail else self.answer(200, HANGUP)

    def answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def calling_bot(fail_every: int = 0) -> AbstractContextManager[CallingBot]:
    return serving(CallingBot(fail_every))
