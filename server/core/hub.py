"""Fan-out: every committed event to every connected device of its session, in seq order.

- Redaction once per event: ``events.views.forms`` gives the whole and public forms, each
  encoded once into its frame; a device gets one of the two strings by its viewer class.
- Per-device send queues: the hub only ``put_nowait``s a string; each socket has its own
  sender task. A slow device never slows the others; one whose queue overflows is closed
  (it reconnects and resyncs), never waited for.
- Order: the chronicle's listeners may be called slightly out of commit order (several
  awaiting tasks resume in loop order, ``execute_sync`` runs in other threads), so the hub
  re-sequences by global seq. Seqs are gapless and a commit implies every lower seq is
  committed, so a hole is filled from the store, read off the event loop (its listener
  may come first meanwhile: whichever brings a seq first dispatches it).
- Resync without loss or duplicates: a device subscribes (live events start to buffer)
  and reads ``(after, head]`` in the same loop step, with ``head`` the last dispatched
  seq; everything above ``head`` reaches it through the buffer.
- Recent frames of each session stay in a ring, so a reconnection storm is served from
  memory instead of 300 reads of the same rows.
- Revocation: connections are also indexed by the grant (token) their hello got. A
  revoked grant's connections stop receiving at once (nothing more is queued, the queue
  is dropped) and their sockets are closed; the tokens table is re-read every
  ``recheck`` seconds for revocations made by another process on the same file.
- Several server processes on one store: the store's tail (``on_committed``) brings the
  others' commits; they join the same re-sequencing, so every device of every process
  gets every event once, in seq order.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import logging
import threading
from typing import TYPE_CHECKING, Awaitable, Callable, Iterable

from conteur.events import views
from conteur.events.model import Actor, Event
from conteur.events import wire
from conteur.server.core.service import Executed
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore

if TYPE_CHECKING:
    from conteur.server.core.auth import Tokens

log = logging.getLogger("conteur.hub")

Encoded = views.Forms[str]
YIELD_EVERY = 8  # frames sent before giving the event loop a turn
REFILL_AFTER = 1.0  # seconds before a hole's read the store did not answer is tried again
_ABSENT = object()
_NEVER = ("", None)  # a seq announced but not in the store: never committed, passed over


def encode_forms(seq: int, event: Event) -> Encoded:
    f = views.forms(event)
    whole = wire.encode_event(seq, f.whole)
    if f.owners is None:
        return views.Forms(whole, whole, None)
    public = wire.encode_event(seq, f.public) if f.public is not None else None
    return views.Forms(whole, public, f.owners)


class Connection:
    """One device's socket as the hub sees it: a viewer, a queue and a sender task."""

    def __init__(self, send: Callable[[str], Awaitable[None]], viewer: Actor, session: str, *,
                 max_queue: int = 2048, on_overflow: Callable[[Connection], None] | None = None,
                 batching: bool = False, grant: str = "",
                 on_revoked: Callable[[Connection], None] | None = None, bound: str | None = None):
        self.send = send
        self.bound = bound  # the one session its token opens (None: every session)
        self.venue_calls: str | None = None  # the last ``venue_calls`` frame it was sent (server/core/safety.py)
        self.grant = grant  # the id of the token's grant: revoking it drops this connection
        self.on_revoked = on_revoked
        self.batching = batching  # the device takes ``batch`` frames: a backlog goes as one
        self.viewer = viewer
        self.session = session
        self.max_queue = max_queue
        self.on_overflow = on_overflow
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.syncing = True
        self.buffer: list[str] = []
        self.closed = False
        self.sender: asyncio.Task | None = None

    def offer(self, forms: Encoded) -> None:
        frame = views.pick(forms, self.viewer)
        if frame is None:
            return
        if self.syncing:
            self.buffer.append(frame)
            if len(self.buffer) > self.max_queue:
                self._overflow()
        else:
            self.push(frame)

    def push(self, frame: str) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= self.max_queue:
            self._overflow()
            return
        self.queue.put_nowait(frame)

    def go_live(self, head: int) -> None:
        """After resync: ``live``, then what arrived meanwhile, then the live stream."""
        self.push(wire.encode(wire.Live(head=head)))
        for frame in self.buffer:
            self.push(frame)
        self.buffer = []
        self.syncing = False

    def start(self) -> None:
        self.sender = asyncio.get_running_loop().create_task(self._send_loop())

    async def _send_loop(self) -> None:
        try:
            await self._send_all()
        except OSError:  # the device is gone: it will resync
            self.closed = True

    async def _send_all(self) -> None:
        queue = self.queue
        sent = 0
        while True:
            sent += 1
            if sent % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # a long backlog must not hold the loop (see ws.resync)
            frame = await queue.get()
            if self.batching and not queue.empty():
                # the device fell behind: everything waiting leaves in one message
                frames, size = [frame], len(frame)
                while not queue.empty() and len(frames) < wire.BATCH_FRAMES and size < wire.BATCH_BYTES:
                    nxt = queue.get_nowait()
                    frames.append(nxt)
                    size += len(nxt)
                frame = wire.batch(frames)
            await self.send(frame)

    def _overflow(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.buffer = []
        log.warning("device of %s on %s too slow: dropped, it will resync",
                    self.viewer.name, self.session)
        if self.on_overflow is not None:
            self.on_overflow(self)

    def stop(self) -> None:
        self.closed = True
        if self.sender is not None:
            self.sender.cancel()

    def revoke(self) -> None:
        """Its token was revoked: not one more frame, even one already queued."""
        if self.closed:
            return
        self.stop()
        self.buffer = []
        while not self.queue.empty():
            self.queue.get_nowait()
        log.warning("token of %s on %s revoked: its device is disconnected",
                    self.viewer.name, self.session)
        if self.on_revoked is not None:
            self.on_revoked(self)


class Hub:
    def __init__(self, store: EventStore, *, ring: int = 4096, tokens: Tokens | None = None,
                 recheck: float = 5.0, run=None):
        self.store = store
        # how a read leaves the event loop (``StoreWork.run``: the store's thread, within
        # its deadline); the loop's worker threads without one
        self.run = run or asyncio.to_thread
        self.tokens = tokens
        self.recheck = recheck  # seconds between reads of revocations made elsewhere
        self._grants: dict[str, set[Connection]] = collections.defaultdict(set)
        self._rechecking: asyncio.Task | None = None
        if tokens is not None:
            tokens.listeners.append(self.revoke)
        self.ring_size = ring
        self.delivered = store.head()  # last global seq dispatched
        self._start = self.delivered
        self._pending: dict[int, tuple[str, Event]] = {}
        self._subs: dict[str, set[Connection]] = collections.defaultdict(set)
        self._heads: dict[str, int] = {}
        self._recent: dict[str, collections.deque[tuple[int, Encoded]]] = {}
        self._floor: dict[str, int] = {}  # the ring holds every event of the session above it
        self._reading: dict[str, asyncio.Lock] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.tailed = False  # set when the store's tail delivers every commit (on_committed)
        # (seq, n, future): acks waiting for their events to be dispatched (``reached``)
        self._awaiting: list[tuple[int, int, asyncio.Future]] = []
        self._awaited = itertools.count()
        self._filling: asyncio.Task | None = None  # the read of a hole, off the loop

    # -- input -------------------------------------------------------------------------

    def bind(self) -> None:
        """Called from the event loop that runs the sockets."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        if self.tokens is not None and self.recheck > 0 and self._rechecking is None:
            self._rechecking = self._loop.create_task(self._recheck_grants())

    def close(self) -> None:
        if self._filling is not None:
            self._filling.cancel()
            self._filling = None
        if self._rechecking is not None:
            self._rechecking.cancel()
            self._rechecking = None

    def on_executed(self, executed: Executed) -> None:
        """The chronicle's listener; safe from any thread."""
        if not executed.events:
            return
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self._take, executed.session, executed.events)
        else:
            self._take(executed.session, executed.events)

    def on_committed(self, items: list[tuple[int, str, Event]]) -> None:
        """(seq, session, event) committed by any process (the store's tail, several
        server processes on one store); safe from any thread. What was dispatched
        already (this process's own commits) is skipped by seq. Once a tail feeds the
        hub (``tailed``), a hole below this process's own commits waits for it instead of
        being read from the store on the loop."""
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self._take_items, items)
        else:
            self._take_items(items)

    def _take_items(self, items: list[tuple[int, str, Event]]) -> None:
        for seq, session, event in items:
            if seq > self.delivered:
                self._pending[seq] = (session, event)
        self._drain()

    def _take(self, session: str, events: Iterable[tuple[int, Event]]) -> None:
        for seq, event in events:
            if seq > self.delivered:
                self._pending[seq] = (session, event)
        self._drain()

    def _drain(self) -> None:
        while self._pending:
            nxt = self.delivered + 1
            item = self._pending.pop(nxt, _ABSENT)
            if item is _ABSENT:
                if self.tailed:
                    break  # another process's commits: the tail brings them, in order
                if self._loop is not None and threading.get_ident() == self._thread:
                    self._fill_later()
                    break
                self._fill(min(self._pending))  # no loop to hold: read at once
            elif item is _NEVER:
                self.delivered = nxt
            else:
                self._dispatch(nxt, *item)
        awaiting = self._awaiting
        while awaiting and awaiting[0][0] <= self.delivered:
            future = heapq.heappop(awaiting)[2]
            if not future.done():
                future.set_result(None)

    async def reached(self, seq: int, timeout: float) -> bool:
        """Returns once every event up to ``seq`` is dispatched, so queued to each device
        before what the caller queues next: a command's ack after its events, whichever
        process decided it, even when a lower seq of another process is still in the
        tail. False if that took more than ``timeout`` seconds (the tail is down)."""
        if seq <= self.delivered:
            return True
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._awaiting, (seq, next(self._awaited), future))
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except asyncio.TimeoutError:
            return False

    def _fill(self, below: int) -> None:
        """Dispatches the committed events in (delivered, below) from the store."""
        self._take_hole(self.delivered, below, self._read_hole(self.delivered, below))

    def _fill_later(self) -> None:
        """The hole below the lowest pending seq, read off the loop (one read at a time:
        a hole still there when it ends is read again)."""
        if self._filling is None:
            self._filling = self._loop.create_task(self._fill_off_loop())

    async def _fill_off_loop(self) -> None:
        after, below = self.delivered, min(self._pending, default=self.delivered + 1)
        try:
            # none when its listener filled the hole meanwhile
            found = await self.run(self._read_hole, after, below) if below > after + 1 else []
        except Exception as exc:  # noqa: BLE001 - the store is down: the hole is read again soon
            log.warning("seqs %d..%d not read from the store (%s): tried again in %g s",
                        after + 1, below - 1, exc, REFILL_AFTER)
            self._loop.call_later(REFILL_AFTER, self._drain)
            return
        finally:
            self._filling = None
        self._take_hole(after, below, found)
        self._drain()

    def _read_hole(self, after: int, below: int) -> list[tuple[int, str, Event]]:
        """On any thread: the committed events in (after, below), decoded."""
        rows = list(self.store.rows(after=after, upto=below - 1))
        return [(row.seq, row.session, event) for row, event in zip(rows, decode_events([r.data for r in rows]))]

    def _take_hole(self, after: int, below: int, found: list[tuple[int, str, Event]]) -> None:
        for seq, session, event in found:
            if seq > self.delivered:
                self._pending.setdefault(seq, (session, event))
        missing = [seq for seq in range(max(after, self.delivered) + 1, below) if seq not in self._pending]
        if missing:  # not in the store: never committed; the hole is passed over
            log.error("seqs %d..%d announced missing from the store", missing[0], missing[-1])
            for seq in missing:
                self._pending[seq] = _NEVER

    def _dispatch(self, seq: int, session: str, event: Event) -> None:
        forms = encode_forms(seq, event)
        self.delivered = seq
        self._heads[session] = seq
        self._remember(session, [(seq, forms)])
        for conn in tuple(self._subs.get(session, ())):
            conn.offer(forms)

    def _remember(self, session: str, items: list[tuple[int, Encoded]]) -> None:
        ring = self._recent.get(session)
        if ring is None:
            ring = self._recent[session] = collections.deque()
            self._floor.setdefault(session, self._start)
        for item in items:
            ring.append(item)
        while len(ring) > self.ring_size:
            self._floor[session] = ring.popleft()[0]

    # -- devices -----------------------------------------------------------------------

    async def warm(self, session: str, run) -> None:
        """Reads the session's head with ``run`` (off the loop) if it is not known, so that
        ``subscribe`` reads nothing. Correct whatever is dispatched meanwhile: a seq of
        this session dispatched after the read sets the head itself."""
        if session not in self._heads:
            head = await run(self.store.session_head, session, self.delivered)
            self._heads.setdefault(session, head)

    def head(self, session: str) -> int:
        """The last dispatched seq of ``session`` (0 if none)."""
        head = self._heads.get(session)
        if head is None:
            head = self._heads[session] = self.store.session_head(session, upto=self.delivered)
        return head

    def event_at(self, session: str, seq: int) -> Event | None:
        """The session's event at ``seq``, or None if it has none there."""
        rows = self.store.read_after(session, after=seq - 1, limit=1, upto=seq)
        return decode_events([rows[0].data])[0] if rows else None

    def subscribe(self, conn: Connection) -> int:
        """From now on ``conn`` receives (buffers, while syncing) every new event of its
        session; returns the head up to which it must be resynced from history."""
        self._subs[conn.session].add(conn)
        if conn.grant:
            self._grants[conn.grant].add(conn)
        return self.head(conn.session)

    def unsubscribe(self, conn: Connection) -> None:
        for index, key in ((self._subs, conn.session), (self._grants, conn.grant)):
            subs = index.get(key)
            if subs is not None:
                subs.discard(conn)
                if not subs:
                    del index[key]

    def revoke(self, grants: Iterable[str]) -> None:
        """Drops every connection of these grants; ``Tokens``' listener, safe from any thread."""
        grants = frozenset(grants)
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self._drop, grants)
        else:
            self._drop(grants)

    def _drop(self, grants: frozenset[str]) -> None:
        for grant in grants:
            for conn in tuple(self._grants.get(grant, ())):
                self.unsubscribe(conn)
                conn.revoke()

    async def _recheck_grants(self) -> None:
        """Revocations by another process (``conteur`` commands, a script on the file)
        tell no listener here: they are found within ``recheck`` seconds."""
        failing = False
        while True:
            await asyncio.sleep(self.recheck)
            if self._grants:
                try:
                    # off the loop, and never waited for beyond a round: a stalled database
                    # must not hold the sockets
                    revoked = await asyncio.wait_for(
                        self.run(self.tokens.revoked_among, tuple(self._grants)), self.recheck)
                except Exception as exc:  # noqa: BLE001 - the store is busy or down: the next round
                    if not failing:
                        log.warning("could not re-read revoked tokens (%s): tried again every %g s",
                                    str(exc) or type(exc).__name__, self.recheck)
                    failing = True
                    continue
                failing = False
                self._drop(revoked)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._loop

    def storytellers(self) -> list[Connection]:
        """Every storyteller's socket of every session, live or resyncing."""
        return [conn for subs in self._subs.values() for conn in subs
                if conn.viewer.is_storyteller and not conn.closed]

    def sockets_of(self, grant: str) -> int:
        """How many sockets the token of this grant holds open on this server now."""
        return len(self._grants.get(grant, ()))

    def connections(self, session: str | None = None) -> int:
        if session is not None:
            return len(self._subs.get(session, ()))
        return sum(len(s) for s in self._subs.values())

    async def history(self, session: str, after: int, upto: int, *, run=None) -> list[tuple[int, Encoded]]:
        """Encoded forms of the session's events in (after, upto]: memory first, then
        read with ``run`` (``StoreWork.run``: off the loop, within its deadline)."""
        if after >= self._floor.get(session, self._start):
            return self._from_ring(session, after, upto)
        # one disk read at a time per session: in a reconnection storm after a restart the
        # first read fills the ring and the devices waiting behind it resync from memory
        lock = self._reading.setdefault(session, asyncio.Lock())
        async with lock:
            if after >= self._floor.get(session, self._start):
                return self._from_ring(session, after, upto)
            items = await (run or asyncio.to_thread)(self._read, session, after, upto)
            if upto >= self._floor.get(session, self._start):
                self._prepend(session, after, items)
            return items

    def _from_ring(self, session: str, after: int, upto: int) -> list[tuple[int, Encoded]]:
        return [(s, f) for s, f in self._recent.get(session, ()) if after < s <= upto]

    def _read(self, session: str, after: int, upto: int) -> list[tuple[int, Encoded]]:
        rows = self.store.read_after(session, after=after, upto=upto)
        events = decode_events([r.data for r in rows])
        return [(r.seq, encode_forms(r.seq, e)) for r, e in zip(rows, events)]

    def _prepend(self, session: str, after: int, items: list[tuple[int, Encoded]]) -> None:
        """Keeps what a resync read from disk, so the next device resyncs from memory."""
        floor = self._floor.get(session, self._start)
        older = [item for item in items if item[0] <= floor]
        ring = self._recent.setdefault(session, collections.deque())
        room = self.ring_size - len(ring)
        if room <= 0 or not older:
            return
        if len(older) > room:
            after = older[-room - 1][0]  # the newest dropped: the ring holds what is above
            older = older[-room:]
        ring.extendleft(reversed(older))
        self._floor[session] = after
