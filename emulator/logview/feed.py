"""The live feed: which calls changed, for the log view's server-sent events.

The store has no change notification, and another process (``botemu call`` in a second terminal)
may write to the same file. So the feed polls the file, every ``interval`` (0.25 s) while at least
one page listens, through a connection of its own that is opened read-only:

- ``PRAGMA data_version`` says, without reading a table, whether another connection committed
  since the last look. The emulator's own store is another connection, so its commits count too;
- only when one did: the events past the last event rowid seen, the calls past the last call
  rowid seen (both range scans of the rowid b-tree), and the end, verdict and counters of the calls
  the feed saw running, or saw end in the last few seconds (primary-key lookups). A second
  ``finish`` that only sets the verdict is noticed that way.

A change is a call id and its latest seq. Each listener gets them coalesced: a page that falls
behind gets one change per call, never a backlog. A store without a file (``:memory:``) cannot be
watched from another connection: its feed is not live, and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)

EVENTS_AFTER = "SELECT rowid, call_id, seq FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?"
CALLS_AFTER = "SELECT rowid, id FROM calls WHERE rowid > ? ORDER BY rowid LIMIT ?"
STATE_OF = (
    "SELECT id, ended, end_reason, passed, workflows, errors, warnings,"
    " (SELECT coalesce(max(seq), 0) FROM events WHERE call_id = calls.id)"
    " FROM calls WHERE id IN ({marks})"
)
RUNNING = (
    "SELECT id FROM (SELECT id, ended FROM calls ORDER BY started DESC LIMIT ?) WHERE ended IS NULL"
)
LAST_ROWIDS = (
    "SELECT (SELECT coalesce(max(rowid), 0) FROM events),"
    " (SELECT coalesce(max(rowid), 0) FROM calls)"
)
"""The feed's queries, kept here so that a test can check each one's plan."""

BATCH = 5000
"""At most this many new events or calls per poll; the rest come with the next."""
RECENT = 200
"""When the feed starts, the running calls among the newest this many are watched."""
GRACE = 10.0
"""Seconds a call stays watched after it ended: its verdict comes with a second ``finish``."""
MAX_WATCHED = 1000

Changes = dict[str, int]
"""Call id -> its latest seq."""
State = tuple[object, ...]


class Poller:
    """One read-only connection to the store's file, and what it has seen (not thread-safe:
    the feed polls from one task)."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        uri = f"{path.resolve().as_uri()}?mode=ro"
        self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=1.0,
                                     check_same_thread=False)  # fmt: skip
        self._version = -1
        self._events = self._calls = 0
        self._more = False
        self._watched: dict[str, State] = {}
        self._ended_at: dict[str, float] = {}
        try:
            self.reset()
        except sqlite3.Error:
            self._conn.close()
            raise

    def reset(self) -> None:
        """Start from now: what happened before is not a change."""
        self._version = self._data_version()
        self._events, self._calls = self._conn.execute(LAST_ROWIDS).fetchone()
        self._more = False
        self._watched.clear()
        self._ended_at.clear()
        running = [row[0] for row in self._conn.execute(RUNNING, (RECENT,))]
        self._watched.update((i, state) for i, (_, state) in self._states(running).items())

    def close(self) -> None:
        self._conn.close()

    def _data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def poll(self) -> Changes:
        """The calls that changed since the last poll: created, appended to, ended, judged."""
        version = self._data_version()
        if version == self._version and not self._more:
            return {}
        self._version = version
        events = self._conn.execute(EVENTS_AFTER, (self._events, BATCH)).fetchall()
        calls = self._conn.execute(CALLS_AFTER, (self._calls, BATCH)).fetchall()
        self._more = len(events) == BATCH or len(calls) == BATCH
        if events:
            self._events = events[-1][0]
        if calls:
            self._calls = calls[-1][0]
        touched = {row[1] for row in events} | {row[1] for row in calls}
        states = self._states([*self._watched, *(touched - self._watched.keys())])
        changes: Changes = {}
        now = self._clock()
        for call_id, (seq, state) in states.items():
            if call_id in touched or self._watched.get(call_id) != state:
                changes[call_id] = seq
            self._watched[call_id] = state
            if state[0] is not None:  # ended
                self._ended_at.setdefault(call_id, now)
        self._forget(now)
        return changes

    def _states(self, ids: Iterable[str]) -> dict[str, tuple[int, State]]:
        """Call id -> (latest seq, (ended, end reason, verdict, workflows, errors, warnings))."""
        out: dict[str, tuple[int, State]] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = STATE_OF.format(marks=",".join("?" * len(chunk)))
            for row in self._conn.execute(sql, chunk):
                out[row[0]] = (int(row[7]), tuple(row[1:7]))
        return out

    def _forget(self, now: float) -> None:
        """Stop watching calls that ended more than GRACE seconds ago; keep MAX_WATCHED."""
        for call_id, ended in list(self._ended_at.items()):
            if now - ended >= GRACE:
                del self._ended_at[call_id]
                self._watched.pop(call_id, None)
        while len(self._watched) > MAX_WATCHED:  # calls left running by a crashed run
            oldest = next(iter(self._watched))
            self._watched.pop(oldest)
            self._ended_at.pop(oldest, None)


class Subscription:
    """One listener's pending changes, coalesced per call."""

    def __init__(self) -> None:
        self.pending: Changes = {}
        self.closed = False
        self._ready = asyncio.Event()

    def push(self, changes: Changes) -> None:
        for call_id, seq in changes.items():
            self.pending[call_id] = max(seq, self.pending.get(call_id, 0))
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def wait(self, timeout: float) -> Changes:
        """The changes so far, once there are some (or the feed closed); {} after ``timeout``."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        self._ready.clear()
        changes, self.pending = self.pending, {}
        return changes


class Feed:
    """Polls the store's file while anyone listens, and hands each listener its changes."""

    def __init__(
        self,
        path: Path | None,
        *,
        interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``path``: the store's file; None (a ``:memory:`` store) makes a feed that is not live."""
        self.path = path
        self.interval = interval
        self._clock = clock
        self._subscriptions: set[Subscription] = set()
        self._poller: Poller | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def live(self) -> bool:
        """Whether changes can be seen (the store has a file the feed can open)."""
        return self._open() is not None

    @property
    def listeners(self) -> int:
        return len(self._subscriptions)

    @property
    def polling(self) -> bool:
        return self._task is not None and not self._task.done()

    def subscribe(self) -> Subscription:
        subscription = Subscription()
        if self._closed:
            subscription.close()
            return subscription
        self._subscriptions.add(subscription)
        poller = self._open()
        if not self.polling and poller is not None:
            try:
                poller.reset()  # what happened while nobody listened is not news
            except sqlite3.Error as e:
                log.warning("log view: cannot read %s: %s", self.path, e)
            self._task = asyncio.create_task(self._run(poller), name="logview feed")
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.discard(subscription)
        if not self._subscriptions and self._task is not None:
            self._task.cancel()
            self._task = None

    async def close(self) -> None:
        """Ends every listener's stream and the polling (the app is shutting down)."""
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.close()
        self._subscriptions.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._poller is not None:
            self._poller.close()
            self._poller = None

    def _open(self) -> Poller | None:
        if self._poller is None and self.path is not None and not self._closed:
            try:
                self._poller = Poller(self.path, clock=self._clock)
            except sqlite3.Error as e:
                log.warning("log view: cannot watch %s: %s", self.path, e)
                self.path = None  # not live; do not try on every page load
        return self._poller

    async def _run(self, poller: Poller) -> None:
        while self._subscriptions:
            try:
                changes = poller.poll()
            except sqlite3.Error as e:  # a busy or damaged file: try again next time
                log.warning("log view: cannot read %s: %s", self.path, e)
                changes = {}
            if changes:
                for subscription in self._subscriptions:
                    subscription.push(changes)
            await asyncio.sleep(self.interval)
