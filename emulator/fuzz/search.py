"""The search for failing callers, steered to what no caller has done (``guided.Guide``).

Each caller is one call in virtual time. The callers saved by earlier searches against the same
bot (``examples.Examples``) are tried first; then each call goes to a move not yet tried in a
state, or to a sequence of moves not yet made, with moves the bot offers (``moves.offered``),
until the bot ends the call or ``max_steps`` steps; with ``faults`` each call's platform faults
are drawn first (a callback failed once and retried, a callback delivered twice, unknown
fields, unknown enum values). A seeded ``random.Random`` makes every choice. A call fails when
it has an error finding (the bot answered 5xx, garbage, an invalid Workflow or nothing), or when
it never ended before the workflow limit or the call deadline. A failure's key is its rule and
the state the bot was waiting in when it came (``explore.states``: the masked prompts and the
choices); the smallest caller seen for each key (fewest steps, then fewest keys) is kept. The
search makes ``budget`` calls, and none after ``max_time`` seconds (a call under way then is cut
off, and shows nothing: no failure, nothing learnt, no example dropped). Then each failure is
replayed and shrunk until it is 1-minimal (``scenarios.tidy``), and saved in the database of
examples.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import aiohttp

from emulator.calling.caller import CallerScript, Step
from emulator.calling.faults import NO_FAULTS, PlatformFaults
from emulator.calling.session import CallCut, CallReport, CallSettings, RunTime, place_call
from emulator.explore.states import DEFAULT_MASKER, Masker
from emulator.fuzz.caller import DrawnSteps, Listening
from emulator.fuzz.examples import Examples
from emulator.fuzz.guided import Guide
from emulator.fuzz.scenarios import Replay, tidy
from emulator.fuzz.verdict import Failure, Key, judge
from emulator.httpio import platform_session
from emulator.transcripts.store import TranscriptStore


@dataclass
class Search:
    """How a search went: the failures by key (in the order found), the calls it made, and what
    stopped it short."""

    failures: dict[Key, Failure] = field(default_factory=dict)
    calls: int = 0
    problem: str | None = None
    unconfirmed: set[Key] = field(default_factory=set)
    """The failures not confirmed: they did not come again when their caller was replayed, or
    (``unreplayed``) were not replayed."""
    unreplayed: set[Key] = field(default_factory=set)
    """The failures not replayed because ``max_time`` ran out first (or cut the replay off)."""
    bounds: list[str] = field(default_factory=list)
    """The bounds that cut the search short, with what they cut off."""
    timed_out: bool = False
    new: int = 0
    """What the callers showed for the first time (states, moves, moves in a row)."""
    cut: int = 0
    """Calls cut off when ``max_time`` ran out while they were under way (searching or
    replaying)."""


def draw_faults(rng: random.Random) -> PlatformFaults:
    """A call's platform faults: each kind one time in two (a callback by its number, 1-4)."""
    return PlatformFaults(
        fail_callbacks=(rng.randint(1, 4),) if rng.randrange(2) else (),
        duplicate_callbacks=(rng.randint(1, 4),) if rng.randrange(2) else (),
        unknown_fields=bool(rng.randrange(2)),
        unknown_enums=bool(rng.randrange(2)),
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
    """The database of examples (a directory), or None for none."""
    masker: Masker = DEFAULT_MASKER
    progress: Callable[[Search], None] | None = None
    found: Search = field(default_factory=Search)
    max_time: float | None = None
    """Seconds the search may take (None: no bound); no call starts after them (by ``clock``),
    and a call under way then is cut off (by the wall clock)."""
    clock: Callable[[], float] = time.monotonic
    limit: RunTime = field(init=False, default_factory=lambda: RunTime(None))

    def run(self) -> Search:
        """Search, then replay and tidy each failure (``scenarios.tidy``). Call from a thread
        with no running event loop."""
        self.limit = RunTime(self.max_time, self.clock)
        loop = asyncio.new_event_loop()
        try:
            http = loop.run_until_complete(_session())
            try:
                loop.run_until_complete(self._run(http))
            finally:
                loop.run_until_complete(http.close())
        finally:
            loop.close()
        return self.found

    async def _run(self, http: aiohttp.ClientSession) -> None:
        examples = None
        if self.examples is not None:
            examples = Examples(self.examples, self.settings.bot_url, self.max_steps, self.faults)
        await self._search(http, examples)
        if self.found.timed_out:
            last = ", the last one cut off" if self.found.cut else ""
            self.found.bounds.append(f"max time ({self.max_time:g} s): the search stopped "
                                     f"after {self.found.calls} calls{last}")  # fmt: skip
        left, searched = 0, self.found.cut
        replay = self._replayer(http)
        for key, failure in list(self.found.failures.items()):
            if self._past():  # kept as the search found it, not replayed
                left += 1
                self.found.unconfirmed.add(key)
                self.found.unreplayed.add(key)
                continue
            cut = self.found.cut
            done = await tidy(failure, replay, self._past)
            self.found.failures[key] = done.failure
            self.found.calls += done.replays
            if not done.confirmed:
                self.found.unconfirmed.add(key)
                if done.replays == 1 and self.found.cut > cut:  # its one replay was cut off
                    self.found.unreplayed.add(key)
        if self.found.cut > searched:
            self.found.bounds.append(f"max time ({self.max_time:g} s): the replay under way was "
                                     "cut off (its failure stays as shrunk so far)")  # fmt: skip
        if left:
            self.found.bounds.append(f"max time ({self.max_time:g} s): {left} failures not "
                                     "replayed to confirm them")  # fmt: skip
        if examples is not None:
            for failure in self.found.failures.values():
                examples.save(failure.steps, failure.faults)

    async def _search(self, http: aiohttp.ClientSession, examples: Examples | None) -> None:
        rng = random.Random(self.seed)
        guide = Guide(rng, self.max_steps)
        for example in examples.saved() if examples is not None else []:
            if self.found.calls >= self.budget or self._stopped():
                return
            failure, end = await self._call(
                http, example.steps, example.faults, Listening(self.masker)
            )
            if failure is None and end is not None and examples is not None:
                examples.drop(example)  # fixed: it leaves the database
        while self.found.calls < self.budget and not self._stopped():
            faults = draw_faults(rng) if self.faults else NO_FAULTS
            listening = Listening(self.masker)
            walk = guide.walk(listening)
            drawn = DrawnSteps(walk.draw, self.max_steps, listening.epoch, walk.renew)
            # The engine reads the steps by length and index only: the drawn sequence stands
            # in for the tuple of a written script.
            _, end = await self._call(http, cast(tuple[Step, ...], drawn), faults, listening,
                                      drawn)  # fmt: skip
            if end is not None:
                self.found.new += guide.learn(walk, end)

    def _stopped(self) -> bool:
        if self._past():
            self.found.timed_out = True
        return self.found.timed_out

    async def _call(self, http: aiohttp.ClientSession, steps: tuple[Step, ...],
                    faults: PlatformFaults, listening: Listening,
                    drawn: DrawnSteps | None = None
                    ) -> tuple[Failure | None, str | None]:  # fmt: skip
        """One call: its failure, if any, and how it ended (None: cut off, ``max_time``)."""
        call = replace(self.settings, caller=CallerScript(steps), faults=faults)
        self.found.calls += 1
        report = await self._place(call, http, listening)
        if report is None:
            self.found.timed_out = True
            if self.progress is not None:
                self.progress(self.found)
            return None, None
        failure = judge(report, listening, drawn.steps if drawn is not None else steps, faults)
        if failure is not None:
            best = self.found.failures.get(failure.key)
            if best is None or failure.size < best.size:
                self.found.failures[failure.key] = failure
        if self.progress is not None:
            self.progress(self.found)
        return failure, report.end_reason.value

    async def _place(
        self, call: CallSettings, http: aiohttp.ClientSession, listening: Listening
    ) -> CallReport | None:
        """The call's report; None when ``max_time`` cut it off (counted in ``cut``)."""
        try:
            return await place_call(call, self.store, http=http, listener=listening,
                                    cut=self.limit.left())  # fmt: skip
        except CallCut:
            self.found.cut += 1
            return None

    def _past(self) -> bool:
        """Whether ``max_time`` has run out (``RunTime.over``)."""
        return self.limit.over()

    def _replayer(self, http: aiohttp.ClientSession) -> Replay:
        async def replay(steps: tuple[Step, ...], faults: PlatformFaults) -> Failure | None:
            listening = Listening(self.masker)
            call = replace(self.settings, caller=CallerScript(steps), faults=faults)
            report = await self._place(call, http, listening)
            return None if report is None else judge(report, listening, steps, faults)

        return replay


async def _session() -> aiohttp.ClientSession:
    return platform_session()
