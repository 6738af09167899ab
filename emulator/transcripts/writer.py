"""Write-behind for the transcript store: commits on a thread of their own, in order.

A busy calling session appends ten or more events per HTTP exchange. Committing each one on the
event loop costs tens of microseconds of SQLite work that could overlap with the network. With
write-behind, ``append`` queues the row and returns; one writer thread commits the queue in order,
taking whatever has gathered since its last commit in one transaction (group commit). The
``sqlite3`` module releases the GIL while SQLite works, so commits run beside the event loop.

What this trades: an event is committed moments after it is appended instead of before
``append`` returns, so a ``kill -9`` can lose the events still queued (up to about a tenth of a
second's worth: the writer commits what has gathered every ``GATHER`` seconds, 100 ms);
nothing that was committed is ever lost. Every read waits for the queue to drain first, so
readers always see every event appended before the read.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

Row = tuple[Any, ...]

GATHER = 0.1
"""Seconds the writer gathers rows before each commit (and before going idle when none came).
Rows submitted meanwhile join the commit without waking it, so a busy session makes at most
ten commits a second however many events it appends. Each commit takes the GIL back several
times (after its wait, and after each statement SQLite runs, which releases it), and while the
event loop is busy each time costs both threads far more than the commit's own work: the loop
signals the waiting writer, and the writer wakes, at every system call the loop makes until
the writer gets the GIL. Each commit also writes again the pages it shares with the commit
before (the table's last page, the index's pages of the calls under way). So the fewer
commits, the less of both. It was 2 ms, then 5 ms (``benchmarks/connector.py``, four paired
runs: 2 ms cost the event loop 0-20 µs more CPU per connector activity, and the writer 3-15 µs
more, than 5 ms; docs/connector.md, "Third pass"); with the grouped commits, 20 ms, with no
gain the noise of a shared machine let us tell (docs/transcripts.md). Now 100 ms: against the
build with 20 ms, in turns, ``benchmarks/calls.py --against DIR --builds 4`` gave 1.18, 1.08
and 1.06 of its calls per second (CPU per bot request 1,218 against 1,382 µs, 1,188 against
1,250, 1,068 against 1,087), and ``benchmarks/connector.py --against DIR --rounds 8`` 0.77 and
0.79 activities per raw POST against 0.72 and 0.68 (the writer 23-30 µs an activity against
32-35, the event loop 375-390 against 400-413). 250 ms gained nothing more (0.73 against 0.74).
What a ``kill -9`` can lose grows with it, to about a tenth of a second of events; what the
writer gathers stays bounded in bytes (``GATHER_BYTES``) and rows (``MAX_BATCH``).
``flush`` (every read) cuts the wait short."""
MAX_BATCH = 2000
"""A queue this long is committed at once, without gathering."""
QUEUE_BYTES = 16 * 1024 * 1024
QUEUE_ROWS = 10 * MAX_BATCH
"""What the queue may hold, in bytes of payload and in rows, while the writer commits the batch
before: past either, ``submit`` waits until the writer has taken the queue. Producers that
outrun SQLite (a client uploading large attachments from several connections at once onto a
slow disk) then go at the writer's pace, as they would with write-behind off, and the queue and
the batch being committed hold at most about twice this between them. A busy calling session
queues some 10 MB a second, far less than the writer commits: the wait is for producers that
would otherwise grow the queue without end."""
GATHER_BYTES = 1024 * 1024
"""Bytes of payload (``submit``'s ``size``) that end the gathering at once: what the queue
holds while the writer gathers is bounded in bytes too, not only in time. A busy calling
session queues some 300 KB in ``GATHER``; a bot whose every prompt is 750 KB queues far more.
``botemu explore --max-calls 30 -j 1`` of such a bot (``tests/bots/heavy_flow_bots.py``) peaked
at 159-174 MiB with 5 ms of gathering, 298-307 MiB with 20 ms and no bound in bytes, 208-227
MiB with a bound of 4 MiB, and 159-169 MiB with this one."""


class WriteBehind:
    """A queue of rows and the thread that commits them with ``commit(rows)``."""

    def __init__(self, commit: Callable[[Sequence[Row]], None], *, name: str) -> None:
        self._commit = commit
        self._rows: deque[Row] = deque()
        self._bytes = 0
        """Payload bytes submitted since the writer took its last batch (``GATHER_BYTES``,
        ``QUEUE_BYTES``); counted without the lock, so only nearly: a row the writer takes
        between its append and its count is counted after the reset (``_wait_for_room``)."""
        self._cond = threading.Condition()
        self._busy = False
        self._idle = False
        self._flushing = 0
        """Threads waiting in ``flush``: the writer then commits without gathering."""
        self._stopping = False
        self._error: BaseException | None = None
        self.waits = 0
        """How many times ``submit`` waited for room in the queue (``QUEUE_BYTES``)."""
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, row: Row, size: int = 0) -> None:
        """Queue a row of ``size`` bytes of payload. The lock is taken only to wake a writer
        that has gone idle, or one gathering once ``GATHER_BYTES`` have come: otherwise rows
        just join the queue (a ``deque`` append is atomic), so a busy session does not pay for
        a wake-up per event."""
        if self._error is not None:
            with self._cond:
                self._raise_if_failed()
        self._rows.append(row)
        before = self._bytes
        self._bytes = before + size
        if self._idle or (before < GATHER_BYTES <= before + size):  # ``_idle``: set under the
            with self._cond:  # lock before the writer's last look at the queue
                self._cond.notify_all()
        if before + size >= QUEUE_BYTES or len(self._rows) >= QUEUE_ROWS:
            self._wait_for_room()

    def _wait_for_room(self) -> None:
        """Wait (``QUEUE_BYTES``, ``QUEUE_ROWS``) until the writer has taken the queue, or has
        failed (the next ``submit``, ``flush`` or ``close`` says so), or stopped. An empty
        queue has room whatever ``_bytes`` says: the writer may take a row between its append
        and the count of its bytes, which then counts a row already gone, and an idle writer
        would never reset that count."""
        with self._cond:
            self.waits += 1
            self._cond.notify_all()  # a writer gathering rows takes them now
            rows = self._rows
            while (rows and (self._bytes >= QUEUE_BYTES or len(rows) >= QUEUE_ROWS)
                   and self._error is None and self._thread.is_alive()):  # fmt: skip
                self._cond.wait(1.0)  # woken after each commit; the timeout only a safeguard

    def flush(self) -> None:
        """Wait until every row submitted so far is committed."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()  # a writer gathering rows commits them now
            try:
                while (self._rows or self._busy) and self._error is None:
                    self._cond.wait()
            finally:
                self._flushing -= 1
            self._raise_if_failed()

    def close(self) -> None:
        """Commit what is queued, then stop the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join()
        with self._cond:
            self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        rows = self._rows
        while True:
            with self._cond:
                if (not self._stopping and not self._flushing and len(rows) < MAX_BATCH
                        and self._bytes < GATHER_BYTES):  # fmt: skip
                    self._cond.wait(GATHER)  # rows arriving meanwhile join without a wake-up
                if not rows and not self._stopping:
                    self._idle = True
                    while not rows and not self._stopping:
                        self._cond.wait()
                    self._idle = False
                if not rows:
                    return
                batch = []
                self._bytes = 0
                while rows:  # popleft, not a copy and clear: a row may arrive in between
                    batch.append(rows.popleft())
                self._busy = True
                self._cond.notify_all()  # a producer waiting for room (``QUEUE_BYTES``) goes on
            try:
                self._commit(batch)
            except BaseException as e:  # surfaced to the next submit, flush or close
                with self._cond:
                    self._error = e
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
