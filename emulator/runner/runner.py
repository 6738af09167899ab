"""Running scenarios against bots: ``Runner(target, store).run(scenario) -> ScenarioResult``.

One ``Runner`` serves a whole test run (``botemu test``, the pytest plugin, ``botemu demo``). It
holds the transcript store it was given (and leaves it open), one aiohttp session, the prompt
files fetched so far, and, for conversations, a botemu: the one at ``Target.emulator``, or one it
starts in-process on a free port of 127.0.0.1 the first time it is needed (at once on entering
when the target has a messaging bot, so ``emulator_url`` can be given to that bot)::

    async with Runner(Target(bot_url="http://127.0.0.1:8080/api/calls"), store) as runner:
        result = await runner.run(scenario)

- A **call** is placed with ``place_call``: the scenario's caller script, its faults as
  ``PlatformFaults``, the run's seed, workflow limit and time-out (``calls.py``).
- A **conversation** goes through the emulator's connector: each turn is sent as the control API's
  chat sends it (``Emulator.chat``), then the runner waits for the bot's replies: up to the turn's
  ``wait`` (default 2 s), stopping 0.3 s after the last reply (``conversations.py``).
- A **probe** (``probe: auth``) is run by the emulator's control route
  (``POST /_botemu/probe/auth``) against the messaging bot; its findings, recorded in the probe
  conversation's transcript, are what is judged (``probes.py``).

Then ``expectations.evaluate`` judges the transcript, and the store gets the verdict (``passed``).
``run`` never raises for anything a bot does or a scenario asks: a scenario that cannot run (no
target for its kind, the bot cannot be reached, faults on a conversation, ...) comes back failed
with ``error`` set and one ``EXP-RUN`` finding. docs/scenarios-running.md has the details.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType

import aiohttp

from emulator.client import control_ssl
from emulator.errors import BotemuError
from emulator.httpio import platform_session
from emulator.runner.calls import platform_faults, run_call
from emulator.runner.chat import activity_of
from emulator.runner.common import (
    DEFAULT_APP_ID,
    DEFAULT_WAIT,
    POLL,
    QUIET,
    TRANSCRIPT_SETTLE,
    CannotRun,
    ScenarioResult,
    Target,
    control_headers,
    derive_seed,
    not_run,
)
from emulator.runner.context import RunContext
from emulator.runner.conversations import run_conversation
from emulator.runner.probes import PROBE_CASES, PROBE_TIMEOUT, run_probe
from emulator.scenario.model import Scenario

__all__ = [
    "DEFAULT_APP_ID",
    "DEFAULT_WAIT",
    "POLL",
    "PROBE_CASES",
    "PROBE_TIMEOUT",
    "QUIET",
    "TRANSCRIPT_SETTLE",
    "CannotRun",
    "Runner",
    "ScenarioResult",
    "Target",
    "activity_of",
    "control_headers",
    "derive_seed",
    "platform_faults",
]

log = logging.getLogger(__name__)


class Runner(RunContext):
    """Runs scenarios against one target. Use it as ``async with``; ``run`` may be awaited
    concurrently (``-j N``): every call and conversation has its own ids."""

    async def __aenter__(self) -> Runner:
        emulator = self.target.emulator
        # an https botemu: trusted as the commands trust it (certs/ca.pem here, SSL_CERT_FILE)
        trust = control_ssl(emulator) if emulator else True
        self.http = platform_session(connector=aiohttp.TCPConnector(ssl=trust))
        if self.target.messaging_bot and self.target.emulator is None:
            try:
                await self.local_emulator()
            except BaseException:
                await self.__aexit__(None, None, None)
                raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def run(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario and judge it. Never raises for anything a bot does or a scenario
        asks."""
        if self.http is None:
            raise RuntimeError("use the Runner as `async with Runner(...) as runner`")
        started = time.perf_counter()
        try:
            if scenario.kind == "call":
                return await run_call(self, scenario, started)
            if scenario.kind == "probe":
                return await run_probe(self, scenario, started)
            return await run_conversation(self, scenario, started)
        except CannotRun as e:
            return not_run(scenario, str(e), started)
        except (BotemuError, aiohttp.ClientError, OSError) as e:
            return not_run(scenario, f"{type(e).__name__}: {e}", started)
        except Exception as e:  # a botemu bug: reported as the scenario's error, never raised
            log.exception("scenario %s failed inside botemu", scenario.id)
            return not_run(scenario, f"botemu failed: {type(e).__name__}: {e}", started)
