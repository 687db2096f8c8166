"""Reading ahead on a thread of its own: a replay's reads overlapped with its fold.

A replay's chunk read is one SQL statement (``sqlite._FOLD_SQL``) in which SQLite joins a
chunk's bodies into one blob, and ``sqlite3`` runs a statement's steps without the GIL:
while this process decodes and folds one chunk, a second thread has SQLite read the next.
On a machine with a second core (a Raspberry Pi 4 has four) the read then costs the replay
almost no time of its own (issue 18 item 2); on one core the two take turns and it costs
what reading in line costs, plus a thread switch a chunk.

The thread stays at most ``depth`` items ahead (a chunk is a few MB), hands on what its
iterator raises to the reader at the point where it reads, and stops at the next item when
the reader closes early (a row that does not decode): ``close`` waits for it, so nothing
still uses a connection its caller is about to close.
"""

from __future__ import annotations

import queue
import threading
from typing import Generic, Iterator, TypeVar

T = TypeVar("T")

_END = object()
# how long the thread waits on a full queue before it looks whether it was closed
_POLL = 0.05


class ReadAhead(Generic[T]):
    """Iterates over ``items`` on a thread of its own, up to ``depth`` items ahead of the
    caller, who iterates over this (and closes it, or leaves its ``with``)."""

    def __init__(self, items: Iterator[T], depth: int = 2) -> None:
        self._queue: queue.Queue = queue.Queue(max(1, depth))
        self._closed = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(items,), name="conteur-read-ahead", daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, items: Iterator[T]) -> None:
        try:
            for item in items:
                if not self._put((item, None)):
                    return
        except BaseException as error:  # handed on to the reader, raised where it reads
            self._put((_END, error))
            return
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()  # a generator's own finally runs here, on this thread
        self._put((_END, None))

    def __iter__(self) -> "ReadAhead[T]":
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        item, error = self._queue.get()
        if item is _END:
            self._done = True
            self._thread.join()
            if error is not None:
                raise error
            raise StopIteration
        return item

    def close(self) -> None:
        """Stops the thread (at its next item) and waits for it."""
        self._done = True
        self._closed.set()
        while self._thread.is_alive():
            try:  # a thread blocked on a full queue takes its next look within _POLL
                self._queue.get(timeout=_POLL)
            except queue.Empty:
                pass
        self._thread.join()

    def __enter__(self) -> "ReadAhead[T]":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
