"""The serving path's database work, off the event loop.

A stalled database (a hung host, a partition) must never freeze the loop: pings,
``/health`` and hellos go on being answered. So every read or small write the serving
path needs runs on the store's own thread (``StoreWork``, FIFO: what was asked first is
answered first, so a device's commands stay in the order it sent them), and the loop
waits for it at most the store's ``deadline`` (PostgreSQL's statement timeout): then the
caller gets ``Unavailable``, with the delay after which to retry. The store stays the
truth: work that times out may still complete, and a command retried with its id is
decided once (``EventStore.outcome_of``).

A walk over a session's rows (a review, an export, a view folded from the log) takes
seconds of a core on a long night: on the store's thread it would hold every device's
command behind it, so ``walk`` runs it in the loop's worker threads instead. It gets no
deadline (a long night's review takes what it takes), but while the store says it cannot
write (``trouble_of``) it is refused at once, and each request reaches it only after its
token was read within the deadline.

``Outage`` keeps the log readable through an outage: one line when commands start
failing, a count now and then, one line when they succeed again, instead of a traceback
per command.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import Awaitable, Callable, TypeVar

from conteur.server.store.interface import EventStore, StoreError

__all__ = ["Outage", "StoreWork", "Unavailable", "deadline_of"]

T = TypeVar("T")

log = logging.getLogger("conteur.store")

DEFAULT_DEADLINE = 5.0  # a store that names none (SQLite: its busy timeout is of that order)
RETRY_AFTER = 2.0  # what a device is told to wait, at most, before it retries


def deadline_of(store: EventStore) -> float:
    return float(getattr(store, "deadline", DEFAULT_DEADLINE))


class Unavailable(StoreError):
    """The store did not answer in time, or says it cannot write: nothing was decided
    here; retry after ``retry_after`` seconds with the same command id."""

    def __init__(self, reason: str, retry_after: float):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def trouble_of(store: EventStore) -> str | None:
    """Why the store cannot write now (``EventStore.trouble``), or None; never waits."""
    trouble = getattr(store, "trouble", None)
    return trouble() if trouble is not None else None


class StoreWork:
    """One thread of the store's work for one event loop, and a deadline on each wait."""

    def __init__(self, store: EventStore):
        self.store = store
        self.deadline = deadline_of(store)
        self.retry_after = min(RETRY_AFTER, self.deadline)
        # one thread: SQLite's connections are per thread, and FIFO keeps arrival order
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="conteur-store")

    def unavailable(self, reason: str) -> Unavailable:
        return Unavailable(reason, self.retry_after)

    async def run(self, fn: Callable[..., T], *args) -> T:
        """``fn(*args)`` on the store's thread, awaited at most ``deadline`` seconds."""
        future = self._pool.submit(fn, *args)
        return await self.wait(asyncio.wrap_future(future), f"{getattr(fn, '__name__', 'a read')}")

    async def walk(self, fn: Callable[..., T], *args) -> T:
        """``fn(*args)`` in the loop's worker threads, unbounded (module doc); ``Unavailable``
        at once while the store cannot write."""
        reason = trouble_of(self.store)
        if reason is not None:
            raise self.unavailable(reason)
        return await asyncio.to_thread(fn, *args)

    async def wait(self, awaitable: Awaitable[T], what: str = "the store") -> T:
        """``awaitable`` at most ``deadline`` seconds (a shielded one goes on after)."""
        try:
            return await asyncio.wait_for(awaitable, self.deadline)
        except asyncio.TimeoutError:
            reason = trouble_of(self.store) or f"the database did not answer within {self.deadline:g} s"
            raise self.unavailable(reason) from None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class Outage:
    """Failed commands counted, logged in a few lines (module doc)."""

    def __init__(self, every: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self.every = every
        self.clock = clock
        self.since: float | None = None
        self.count = 0
        self._told = 0.0
        self._told_count = 0

    def failed(self, reason: str) -> None:
        now = self.clock()
        self.count += 1
        if self.since is None:
            self.since, self._told, self._told_count = now, now, self.count
            log.warning("commands answered unavailable: %s", reason)
        elif now - self._told >= self.every:
            log.warning("still unavailable (%s): %d commands answered unavailable in %.0f s",
                        reason, self.count, now - self.since)
            self._told, self._told_count = now, self.count

    def succeeded(self) -> None:
        if self.since is not None:
            log.warning("commands succeed again after %.0f s: %d were answered unavailable",
                        self.clock() - self.since, self.count)
            self.since = None
            self.count = 0
