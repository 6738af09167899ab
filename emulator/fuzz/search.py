"""The search for failing callers, on Hypothesis: its strategies, its database of examples, its
shrinking.

Each Hypothesis example is one call in virtual time. Its caller's steps are drawn as the call
runs (``caller.DrawnSteps``, ``moves.draw_step``); with ``faults`` the platform's faults of the
call are drawn first (a callback failed once and retried, a callback delivered twice, unknown
fields, unknown enum values). A call fails when it has an error finding (the bot answered 5xx,
garbage, an invalid Workflow or nothing), or when it never ended before the workflow limit or
the call deadline. A failure's key is its rule and the state the bot was waiting in when it came
(``explore.states``: the masked prompts and the choices). Each key raises an exception class of
its own, so that Hypothesis tells the failures apart and shrinks each one to its minimal example
(``report_multiple_bugs``); the smallest caller seen for each key (fewest steps, then fewest
keys) is kept. The Hypothesis run is bounded by ``budget`` examples and ``max_time`` seconds
(past it, Hypothesis's examples are rejected without a call, and the search ends); shrinking is
bounded by Hypothesis itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import aiohttp
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import HypothesisException

from emulator.calling.caller import CallerScript, Step
from emulator.calling.faults import NO_FAULTS, PlatformFaults
from emulator.calling.session import CallSettings, place_call
from emulator.explore.states import DEFAULT_MASKER, Masker
from emulator.fuzz.caller import DrawnSteps, Listening
from emulator.fuzz.moves import draw_step
from emulator.fuzz.scenarios import Replay, tidy
from emulator.fuzz.verdict import Failure, Key, judge
from emulator.transcripts.store import TranscriptStore


@dataclass
class Search:
    """How a search went: the failures by key (in the order found), the calls it made, and what
    stopped Hypothesis short (a bot that answered one caller two ways, say)."""

    failures: dict[Key, Failure] = field(default_factory=dict)
    calls: int = 0
    problem: str | None = None
    unconfirmed: set[Key] = field(default_factory=set)
    """The failures that did not come again when their caller was replayed."""
    bounds: list[str] = field(default_factory=list)
    """The bounds that cut the search short, with what they cut off."""
    timed_out: bool = False


class FuzzFailure(Exception):
    """A call failed. Each key has a subclass of its own (``failure_class``)."""


_CLASSES: dict[Key, type[FuzzFailure]] = {}


def failure_class(key: Key) -> type[FuzzFailure]:
    if key not in _CLASSES:
        name = "Fuzz_" + hashlib.sha256("\0".join(key).encode()).hexdigest()[:12]
        _CLASSES[key] = type(name, (FuzzFailure,), {})
    return _CLASSES[key]


FAULTS = st.builds(
    PlatformFaults,
    fail_callbacks=st.lists(st.integers(1, 4), max_size=1).map(tuple),
    duplicate_callbacks=st.lists(st.integers(1, 4), max_size=1).map(tuple),
    unknown_fields=st.booleans(),
    unknown_enums=st.booleans(),
)


@dataclass
class Fuzzer:
    """Fuzzes the bot of ``settings``; every call is recorded in ``store``."""

    settings: CallSettings
    store: TranscriptStore
    budget: int = 300
    seed: int = 1
    max_steps: int = 8
    faults: bool = False
    examples: Path | None = None
    """Hypothesis's database of examples (a directory), or None for none."""
    masker: Masker = DEFAULT_MASKER
    progress: Callable[[Search], None] | None = None
    found: Search = field(default_factory=Search)
    max_time: float | None = None
    """Seconds the search may take (None: no bound); no call starts after them."""
    clock: Callable[[], float] = time.monotonic
    deadline: float | None = None

    def run(self) -> Search:
        """Search, shrink every failure, then replay and tidy each (``scenarios.tidy``). Call
        from a thread with no running event loop."""
        self.deadline = None if self.max_time is None else self.clock() + self.max_time
        loop = asyncio.new_event_loop()
        try:
            http = loop.run_until_complete(_session())
            try:
                self._search(lambda data: self._one(data, loop, http))
                left = 0
                for key, failure in list(self.found.failures.items()):
                    if self._past():  # kept as the search shrank it, not replayed
                        left += 1
                        self.found.unconfirmed.add(key)
                        continue
                    done = loop.run_until_complete(tidy(failure, self._replayer(http), self._past))
                    self.found.failures[key] = done.failure
                    self.found.calls += done.replays
                    if not done.confirmed:
                        self.found.unconfirmed.add(key)
                if left:
                    self.found.bounds.append(f"max time ({self.max_time:g} s): {left} failures "
                                             "not replayed to confirm them")  # fmt: skip
            finally:
                loop.run_until_complete(http.close())
        finally:
            loop.close()
        return self.found

    def _past(self) -> bool:
        """Whether ``max_time`` has run out."""
        return self.deadline is not None and self.clock() >= self.deadline

    def _search(self, one: Callable[[st.DataObject], None]) -> None:
        database = None if self.examples is None else DirectoryBasedExampleDatabase(self.examples)

        @settings(max_examples=self.budget, deadline=None, database=database,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=True,
                  verbosity=Verbosity.quiet, print_blob=False,
                  phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink))  # fmt: skip
        @seed(self.seed)
        @given(st.data())
        def fuzz(data: st.DataObject) -> None:
            one(data)

        what = f"{self.settings.bot_url}\0{self.max_steps}\0{self.faults}"
        fuzz._hypothesis_internal_database_key = hashlib.sha256(what.encode()).digest()  # type: ignore[attr-defined]
        try:
            fuzz()
        except FuzzFailure:
            pass
        except BaseExceptionGroup as group:
            rest = group.subgroup(lambda e: not isinstance(e, FuzzFailure))
            if rest is not None and not self.found.timed_out:
                self.found.problem = _problem(rest.exceptions[0])
        except HypothesisException as e:
            if not self.found.timed_out:  # the examples rejected past max_time
                self.found.problem = _problem(e)
        if self.found.timed_out:
            self.found.bounds.append(f"max time ({self.max_time:g} s): the search stopped "
                                     f"after {self.found.calls} calls")  # fmt: skip

    def _replayer(self, http: aiohttp.ClientSession) -> Replay:
        async def replay(steps: tuple[Step, ...], faults: PlatformFaults) -> Failure | None:
            listening = Listening(self.masker)
            call = replace(self.settings, caller=CallerScript(steps), faults=faults)
            report = await place_call(call, self.store, http=http, listener=listening)
            return judge(report, listening, steps, faults)

        return replay

    def _one(
        self, data: st.DataObject, loop: asyncio.AbstractEventLoop, http: aiohttp.ClientSession
    ) -> None:
        if self._past():
            self.found.timed_out = True
            reject()  # no call: Hypothesis is told this example does not count
        faults = data.draw(FAULTS, label="faults") if self.faults else NO_FAULTS
        listening = Listening(self.masker)
        drawn = DrawnSteps(lambda: draw_step(data, listening.state), self.max_steps)
        # The engine reads the steps by length and index only: the drawn sequence stands in
        # for the tuple of a written script.
        caller = CallerScript(cast(tuple[Step, ...], drawn))
        call = replace(self.settings, caller=caller, faults=faults)
        report = loop.run_until_complete(place_call(call, self.store, http=http,
                                                    listener=listening))  # fmt: skip
        self.found.calls += 1
        failure = judge(report, listening, drawn.steps, faults)
        if self.progress is not None:
            self.progress(self.found)
        if failure is None:
            return
        key = (failure.rule, failure.state)
        best = self.found.failures.get(key)
        if best is None or failure.size < best.size:
            self.found.failures[key] = failure
        raise failure_class(key)(f"{failure.rule} in state {failure.state}")


async def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession()


def _problem(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]
