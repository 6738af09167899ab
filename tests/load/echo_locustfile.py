"""A stand-in for the shipped locustfile in the tests: a user that "places a call" as two HTTP
requests to a tiny test server, reports them as the calling user does (request type ``CALL``,
names ``Conversation`` and ``answerOutcome``, a failure's text starting with a rule id), counts
calls with ``METRICS``, and sends the ``botemu_*`` options it read to the server, so that a test
sees what each load process was given."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from typing import Any

from locust import User, events, task

from emulator.load.metrics import METRICS


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument("--botemu-scenarios", nargs="*", default=[])
    parser.add_argument("--botemu-pace", type=float, default=1.0)
    parser.add_argument("--botemu-keep", default="failures")
    parser.add_argument("--botemu-db", default="")
    parser.add_argument("--botemu-app-id", default=None)
    parser.add_argument("--botemu-emulator", default=None)
    parser.add_argument("--botemu-no-token", action="store_true")
    parser.add_argument("--botemu-certs", default="certs")


class EchoCaller(User):
    calls = 0

    def _post(self, name: str, body: dict[str, Any]) -> Exception | None:
        began = time.perf_counter()
        request = urllib.request.Request(
            f"{self.host}/api/{name}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        error: Exception | None = None
        length = 0
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                length = len(response.read())
        except OSError as e:
            error = e
        if error is None and name == "answerOutcome" and EchoCaller.calls % 4 == 0:
            error = Exception("WF-ORDER: answer came before the Conversation")
        self.environment.events.request.fire(
            request_type="CALL", name=name, response_time=(time.perf_counter() - began) * 1000,
            response_length=length, exception=error, context={},
        )  # fmt: skip
        return error

    @task
    def call(self) -> None:
        EchoCaller.calls += 1
        METRICS.started()
        opts = self.environment.parsed_options
        seen = {key: getattr(opts, key, None) for key in (
            "botemu_scenarios", "botemu_pace", "botemu_keep", "botemu_db", "botemu_app_id",
            "botemu_emulator", "botemu_no_token", "botemu_certs")}  # fmt: skip
        seen |= {"pid": os.getpid(), "host": self.host}
        failed = self._post("Conversation", seen) is not None
        failed = self._post("answerOutcome", {"pid": os.getpid()}) is not None or failed
        METRICS.ended(failed)
