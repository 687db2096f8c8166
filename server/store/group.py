"""Group commit, the same for every store: appends queue up, one writer thread takes
every append waiting into one transaction (``_commit``), and each caller's future is
resolved only after COMMIT, so concurrent appenders share the flushes and the asyncio
loop never waits on the database.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from datetime import datetime, timezone

from conteur.server.store.interface import Outcome, Pending, StoreError

__all__ = ["GroupCommit", "resolve", "utc_now"]

_STOP = object()


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class _Awaiting:
    """An append awaited on an event loop: resolved with the rest of its group commit."""

    __slots__ = ("loop", "future")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future):
        self.loop, self.future = loop, future


def _settle(items: list) -> None:
    for future, result in items:
        if future.done():  # its awaiter was cancelled
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)


def resolve(pairs: list) -> None:
    """Resolves a commit's futures: one wake-up per event loop for the whole group,
    instead of one cross-thread call (and one self-pipe write) per append."""
    by_loop: dict = {}
    plain = []
    for waiter, result in pairs:
        if isinstance(waiter, _Awaiting):
            by_loop.setdefault(waiter.loop, []).append((waiter.future, result))
        else:
            plain.append((waiter, result))
    _settle(plain)
    for loop, items in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, items)
        except RuntimeError:  # that loop is closed: nobody is waiting any more
            pass


class GroupCommit:
    """The appending half of ``EventStore``, for a store that gives ``_connect()`` and
    ``_commit(conn, batch)`` (``batch``: (Pending, waiter) pairs, each waiter resolved
    through ``resolve``)."""

    max_batch: int

    def _start_writer(self, name: str) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._writer = threading.Thread(target=self._write_loop, name=name, daemon=True)
        self._writer.start()

    def submit(self, pending: Pending) -> concurrent.futures.Future:
        if self._closed:
            raise StoreError("the store is closed")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((pending, future))
        return future

    def append_sync(self, pending: Pending) -> Outcome:
        return self.submit(pending).result()

    def submit_on(self, loop: asyncio.AbstractEventLoop, pending: Pending) -> asyncio.Future:
        """Like ``submit``, for a caller on ``loop``: the future is resolved on the loop,
        together with every other append of the same group commit."""
        if self._closed:
            raise StoreError("the store is closed")
        future = loop.create_future()
        self._queue.put((pending, _Awaiting(loop, future)))
        return future

    async def append(self, pending: Pending) -> Outcome:
        return await self.submit_on(asyncio.get_running_loop(), pending)

    def _writer_connection(self, conn):
        """The writer's connection for the next batch (a new one if it has none or it
        broke); a ``StoreError`` fails that batch alone."""
        return conn if conn is not None else self._connect()

    def _write_loop(self) -> None:
        conn = None
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            batch = [item]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                batch.append(more)
            try:
                conn = self._writer_connection(conn)
            except StoreError as exc:
                conn = None
                resolve([(waiter, exc) for _, waiter in batch])
                continue
            self._commit(conn, batch)
            if stop:
                break
        if conn is not None:
            conn.close()

    def _stop_writer(self) -> bool:
        """Waits for the appends already queued; False if it was stopped already."""
        if self._closed:
            return False
        self._closed = True
        self._queue.put(_STOP)
        self._writer.join()
        return True
