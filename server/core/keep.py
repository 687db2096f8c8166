"""Snapshots of what a server keeps per view, so that the first request after a restart
costs what it costs live.

A server up all night answers a player's ``GET /state`` from a projection it keeps up to
date (projections.py) and the review's first screen from a kept review
(server/audit/kept.py). After a restart both were folded again from the whole log: 9.8 s
and 14.5 s at 735,000 events. So each is saved now and then, through the store
(``EventStore.save_views``), in the one snapshot format (server/store/snapshot.py: its
envelope, its version, its checks and what is skipped). The body is the view's own
content, in the typed msgpack codec of its type (a view's state is a ``GameState`` whose
sealed throws and bids are None, which ``met.Challenge``'s types allow:
tests/server/test_restart.py shows every view of simulated nights round-trips). A snapshot that
is skipped (stale, of another log, undecodable) leaves the view folded from the log as
before. Never fatal, never wrong.

A player's snapshot holds only what that player's view holds (its own fold of the forms it
was sent, its shelved pages): the envelope's hash and seq are the server's check, never
served to anyone.
"""

from __future__ import annotations

import hashlib
from typing import Callable, TypeVar

import msgspec

from conteur.events.game import GameState
from conteur.server.core.shelf import Shelf
from conteur.server.store import snapshot

T = TypeVar("T")


def _tip(store, session: str, seq: int) -> str | None:
    rows = store.read_after(session, seq - 1, limit=1, upto=seq)
    return rows[0].hash if rows and rows[0].seq == seq else None


def save(store, session: str, view: str, seq: int, body, pages: "list[New] | tuple" = ()) -> bool:
    """Saves ``body`` (a msgspec-encodable value) as ``view``'s snapshot at ``seq``, with
    the shelved pages it names that are not stored yet, in one transaction; False when
    there is nothing to save it at (an empty session) or the store failed (a cache: the
    server goes on, and tries again at its next save)."""
    try:
        tip = _tip(store, session, seq) if seq else None
        if tip is None:
            return False
        data = snapshot.encode(seq, tip, body)
        entries = {name: blob for new in pages for name, blob in new.entries.items()}
        entries[view] = data
        store.save_views(session, seq, entries)
    except Exception:  # noqa: BLE001 - a disk full or a store gone: the next save tries again
        return False
    for new in pages:
        new.done()
    return True


def load(store, session: str, view: str, upto: int, kind: type[T]) -> tuple[int, T] | None:
    """(seq, body) of ``view``'s snapshot if it is usable for a fold up to ``upto``: of
    a version read, decodable as ``kind``, at or before ``upto`` and folded from this log."""
    try:
        found = store.load_view(session, view)
    except Exception:  # noqa: BLE001 - a cache: its absence is never fatal
        return None
    if found is None:
        return None
    return snapshot.open_body(found[1], kind, seq=found[0], upto=upto, tip_of=lambda seq: _tip(store, session, seq))


def guarded(make: Callable[[], T]) -> T | None:
    """``make()``, or None when it fails: a snapshot whose content does not fit (a bug
    here, a body of another shape) is never fatal."""
    try:
        return make()
    except Exception:  # noqa: BLE001
        return None


class Pages(msgspec.Struct, array_like=True):
    """A shelf's pages as a snapshot names them: each page is stored once, as its own
    entry (``<view>#<n>``), when it is new or changed (a page is final: only an overrule
    changes it again), and named here by its digest. A night's pages are most of a view's
    bytes (2.6 MB a view at 735,000 events): saved whole with every snapshot, sixty
    players' views would write gigabytes to a Pi's card in a night."""

    digests: dict[int, bytes]
    counts: dict[int, int]


def _digest(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=16).digest()


class Stored:
    """Which pages of one kept fold are in the store already (the blobs as the shelf
    holds them: a changed page is a new blob)."""

    __slots__ = ("blobs", "digests")

    def __init__(self, pages: dict[int, bytes] | None = None) -> None:
        self.blobs: dict[int, bytes] = dict(pages or {})
        self.digests: dict[int, bytes] = {n: _digest(b) for n, b in self.blobs.items()}


class New:
    """The pages of one shelf a snapshot names that the store does not hold yet: written
    with the snapshot, then marked stored (``done``)."""

    __slots__ = ("stored", "entries", "blobs", "gone")

    def __init__(self, stored: Stored, entries: dict[str, bytes], blobs: dict[int, bytes], gone: list[int]):
        self.stored, self.entries, self.blobs, self.gone = stored, entries, blobs, gone

    def done(self) -> None:
        for n, blob in self.blobs.items():
            self.stored.blobs[n], self.stored.digests[n] = blob, _digest(blob)
        for n in self.gone:  # put back for an overrule: its entry is left, named by no snapshot
            self.stored.blobs.pop(n, None)
            self.stored.digests.pop(n, None)


def new_pages(view: str, shelf: Shelf, stored: Stored) -> tuple[Pages, New]:
    """The shelf's pages as a snapshot names them, and those to store with it."""
    pages, counts = shelf.pages()
    blobs = {n: blob for n, blob in pages.items() if stored.blobs.get(n) is not blob}
    digests = {n: _digest(blob) if n in blobs else stored.digests[n] for n, blob in pages.items()}
    new = New(stored, {f"{view}#{n}": blob for n, blob in blobs.items()}, blobs,
              [n for n in stored.blobs if n not in pages])
    return Pages(digests, dict(counts)), new


def load_pages(store, session: str, view: str, named: Pages) -> tuple[Shelf, Stored] | None:
    """The shelf the body names, each page read and checked against its digest; None
    when one is missing or another (a save cut short: the snapshot is skipped)."""
    pages = {}
    for n, digest in named.digests.items():
        found = store.load_view(session, f"{view}#{n}")
        if found is None or _digest(found[1]) != digest:
            return None
        pages[n] = found[1]
    return Shelf.loaded(pages, named.counts), Stored(pages)


class ViewBody(msgspec.Struct, array_like=True):
    """A projection's view (projections.py): its state with the finished pages out, the
    pages its shelf holds (compressed, in the same typed codec) by name, the last seq it
    was sent."""

    seen: int
    state: GameState
    pages: Pages


def save_view(store, session: str, view: str, seq: int, seen: int, state: GameState, shelf: Shelf,
              stored: Stored) -> bool:
    pages, new = new_pages(view, shelf, stored)
    return save(store, session, view, seq, ViewBody(seen, state, pages), [new])


def load_view(store, session: str, view: str, upto: int) -> tuple[int, int, GameState, Shelf, Stored] | None:
    """(seq, seen, state, shelf, its stored pages) of a view's usable snapshot, or None."""
    found = load(store, session, view, upto, ViewBody)
    if found is None:
        return None
    seq, b = found
    shelf = guarded(lambda: load_pages(store, session, view, b.pages))
    if shelf is None:
        return None
    return (seq, b.seen, b.state, *shelf)
