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
was sent, its compressed pages): the envelope's hash and seq are the server's check, never
served to anyone.
"""

from __future__ import annotations

import hashlib
from typing import Callable, TypeVar

import msgspec

from conteur.events.game import GameState
from conteur.server.core.pages import Page
from conteur.server.store import snapshot

T = TypeVar("T")


def _tip(store, session: str, seq: int) -> str | None:
    rows = store.read_after(session, seq - 1, limit=1, upto=seq)
    return rows[0].hash if rows and rows[0].seq == seq else None


def save(store, session: str, view: str, seq: int, body, pages: "list[New] | tuple" = ()) -> bool:
    """Saves ``body`` (a msgspec-encodable value) as ``view``'s snapshot at ``seq``, with
    the compressed pages it names that are not stored yet, in one transaction; False when
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
    """A state's compressed pages (``pages.Page``) as a snapshot names them: each page is
    stored once, as its own entry (``<view>#<n>``), when it is new or changed (a page is
    final: only an overrule changes it again), and named here by its digest; the body's
    state holds an empty page in its slot. A night's pages are most of a view's bytes
    (2.6 MB a view at 735,000 events): saved whole with every snapshot, sixty players'
    views would write gigabytes to a Pi's card in a night."""

    digests: dict[int, bytes]
    counts: dict[int, int]


def _digest(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=16).digest()


class Stored:
    """Which pages of one kept fold are in the store already (the blobs as its state's
    pages hold them: a changed page is a new blob)."""

    __slots__ = ("blobs", "digests")

    def __init__(self, pages: dict[int, bytes] | None = None) -> None:
        self.blobs: dict[int, bytes] = dict(pages or {})
        self.digests: dict[int, bytes] = {n: _digest(b) for n, b in self.blobs.items()}


class New:
    """The pages of one state a snapshot names that the store does not hold yet: written
    with the snapshot, then marked stored (``done``)."""

    __slots__ = ("stored", "entries", "blobs", "gone")

    def __init__(self, stored: Stored, entries: dict[str, bytes], blobs: dict[int, bytes], gone: list[int]):
        self.stored, self.entries, self.blobs, self.gone = stored, entries, blobs, gone

    def done(self) -> None:
        for n, blob in self.blobs.items():
            self.stored.blobs[n], self.stored.digests[n] = blob, _digest(blob)
        for n in self.gone:  # a dict again after an overrule: its entry is left, named by no snapshot
            self.stored.blobs.pop(n, None)
            self.stored.digests.pop(n, None)


def pages_out(view: str, state: GameState, stored: Stored) -> tuple[GameState, Pages, New]:
    """``state`` with an empty page in the slot of each compressed one, those pages as a
    snapshot names them, and those to store with it."""
    done = state.met.done
    pages = {n: page.blob for n, page in enumerate(done) if type(page) is Page}
    blobs = {n: blob for n, blob in pages.items() if stored.blobs.get(n) is not blob}
    digests = {n: _digest(blob) if n in blobs else stored.digests[n] for n, blob in pages.items()}
    new = New(stored, {f"{view}#{n}": blob for n, blob in blobs.items()}, blobs,
              [n for n in stored.blobs if n not in pages])
    named = Pages(digests, {n: len(done[n]) for n in pages})
    if pages:
        kept = tuple({} if n in pages else page for n, page in enumerate(done))
        state = msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=kept))
    return state, named, new


def pages_in(store, session: str, view: str, state: GameState, named: Pages) -> tuple[GameState, Stored] | None:
    """``state`` with the pages ``named`` back in their slots, each read and checked
    against its digest (compressed as stored); None when one is missing or another (a
    save cut short: the snapshot is skipped)."""
    pages = {}
    for n, digest in named.digests.items():
        found = store.load_view(session, f"{view}#{n}")
        if found is None or _digest(found[1]) != digest:
            return None
        pages[n] = found[1]
    if not pages:
        return state, Stored()
    done = state.met.done
    done = list(done + ({},) * (max(pages) + 1 - len(done)))
    for n, blob in pages.items():
        page = Page.of(blob, named.counts[n])
        # a slot of the state holds nothing beside its stored page, unless a snapshot of
        # another shape put challenges there too: both kept, as the fold had them
        done[n] = {**page, **done[n]} if done[n] else page
    state = msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=tuple(done)))
    return state, Stored(pages)


class ViewBody(msgspec.Struct, array_like=True):
    """A projection's view (projections.py): its state with its compressed pages out, those
    pages (in the same typed codec) by name, the last seq it was sent."""

    seen: int
    state: GameState
    pages: Pages


def save_view(store, session: str, view: str, seq: int, seen: int, state: GameState, stored: Stored) -> bool:
    state, pages, new = pages_out(view, state, stored)
    return save(store, session, view, seq, ViewBody(seen, state, pages), [new])


def load_view(store, session: str, view: str, upto: int) -> tuple[int, int, GameState, Stored] | None:
    """(seq, seen, state, its stored pages) of a view's usable snapshot, or None."""
    found = load(store, session, view, upto, ViewBody)
    if found is None:
        return None
    seq, b = found
    back = guarded(lambda: pages_in(store, session, view, b.state, b.pages))
    if back is None:
        return None
    return (seq, b.seen, *back)
