"""Finished MET challenges kept out of a fold's state, compressed by page.

A state folded through a night holds every finished challenge (``met.State.done``, pages of
``met.PAGE`` by number): about 1.4 KB each, ten events' worth, the one part of a state that
grows with the night. A server keeps such folds for as long as it runs (each view's
projection, a kept review's truth), so a six-hour night at 20 commands/s held them by the
hundred megabytes. A page whose every challenge is finished is final: only an overrule
(``met.ChallengeOverruled``, MET-14) ever changes it again. Such pages are moved here, each
as one zlib-compressed msgpack blob, and put back into the
state just before an event that names one of their challenges is folded (``restore``), then
moved out again (``shelve``). Reading a page decodes it (a few kept decoded, least recently
read dropped). ``pages``/``loaded`` give and take the compressed pages as they are: a view's
snapshot stores them (server/core/keep.py).

``whole`` gives the state with every page back, equal to the fold that never shelved.

The command path's true state (``Chronicle``) is shelved otherwise: its final pages stay
in their own slots of ``met.State.done``, each as a ``Page``, a compressed mapping read
back when asked for (``shelved``; the snapshot codec encodes each as its dict). Nothing there has to
be put back before an event: the page is the state's own, whatever version of it is read.
"""

from __future__ import annotations

import collections
import collections.abc
import threading
import zlib

import msgspec

from conteur.events import game, met
from conteur.events.game import GameState

# the typed msgpack codec (a view's sealed throws and bids are None, which met.Challenge's
# types allow): five times faster than pickle, and the same bytes a view's snapshot stores
# (server/core/keep.py), which a file read back must not be able to run code from
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(dict[str, met.Challenge]).decode
_CACHED = 4  # decoded pages kept: the pages being read (a review's recent challenges, a page query)


def _number(challenge_id: str) -> int | None:
    try:  # a group's pair "c5.2" is numbered as its group
        return int(challenge_id[1:].split(".", 1)[0])
    except ValueError:  # ids are "c<n>" (met.issue); anything else stays in the state
        return None


class Shelf:
    """The shelved pages of one fold. Not thread-safe: its owner's lock guards it."""

    __slots__ = ("_pages", "_counts", "_cache")

    def __init__(self) -> None:
        self._pages: dict[int, bytes] = {}  # page index -> compressed dict[id, Challenge]
        self._counts: dict[int, int] = {}
        # decoded pages by index, with the blob each came from (a page is replaced, never
        # changed in place: a reader holding an earlier ``Done`` reads its own version)
        self._cache: collections.OrderedDict[int, tuple[bytes, dict]] = collections.OrderedDict()

    def __len__(self) -> int:
        """Finished challenges on the shelf."""
        return sum(self._counts.values())

    def nbytes(self) -> int:
        return sum(len(b) for b in self._pages.values())

    def pages(self) -> tuple[dict[int, bytes], dict[int, int]]:
        """The compressed pages and their counts, as held (never changed in place)."""
        return self._pages, self._counts

    @classmethod
    def loaded(cls, pages: dict[int, bytes], counts: dict[int, int]) -> "Shelf":
        """A shelf holding ``pages`` (as ``pages()`` gave them), decoded when read."""
        shelf = cls()
        shelf._pages, shelf._counts = dict(pages), dict(counts)
        return shelf

    def page(self, n: int, pages: dict[int, bytes] | None = None) -> dict[str, met.Challenge]:
        """Page ``n`` decoded (of ``pages``, an earlier version of the shelf's, if given)."""
        blob = (self._pages if pages is None else pages).get(n)
        if blob is None:
            return {}
        found = self._cache.get(n)
        if found is None or found[0] is not blob:
            found = self._cache[n] = (blob, _decode(zlib.decompress(blob)))
            while len(self._cache) > _CACHED:
                self._cache.popitem(last=False)
        return found[1]

    def shelve(self, own: met.State) -> met.State:
        """``own`` without its final pages: those below the first page an open challenge
        or the next one issued falls in (their slots stay, empty, so page numbers hold)."""
        low = met._page(f"c{own.counter + 1}")
        for cid in own.live:
            low = min(low, met._page(cid))
        done = own.done
        if not any(done[n] for n in range(min(low, len(done)))):
            return own
        pages, counts = dict(self._pages), dict(self._counts)  # copied, not changed: see _cache
        for n in range(min(low, len(done))):
            if done[n] and all(_number(cid) is not None for cid in done[n]):
                merged = {**self.page(n), **done[n]} if n in pages else dict(done[n])
                pages[n] = zlib.compress(_encode(merged), 1)
                counts[n] = len(merged)
        self._pages, self._counts = pages, counts
        kept = tuple({} if n < low and n in self._pages else page for n, page in enumerate(done))
        return msgspec.structs.replace(own, done=kept)

    def needs(self, challenge_id: str) -> bool:
        """Whether folding an event that names ``challenge_id`` needs its page back."""
        return bool(self._pages) and met._page(challenge_id) in self._pages

    def restore(self, own: met.State, challenge_id: str) -> met.State:
        """``own`` with the shelved page of ``challenge_id`` back in its slot."""
        n = met._page(challenge_id)
        if n not in self._pages:
            return own
        done = own.done + ({},) * (n + 1 - len(own.done))
        page = {**self.page(n), **done[n]}
        self._pages = {k: v for k, v in self._pages.items() if k != n}
        self._counts = {k: v for k, v in self._counts.items() if k != n}
        return msgspec.structs.replace(own, done=done[:n] + (page,) + done[n + 1:])

    def whole(self, own: met.State) -> met.State:
        """``own`` with every shelved page back: the state as if nothing were shelved."""
        if not self._pages:
            return own
        last = max(max(self._pages) + 1, len(own.done))
        done = own.done + ({},) * (last - len(own.done))
        pages = tuple({**self.page(n), **done[n]} if n in self._pages else done[n] for n in range(last))
        return msgspec.structs.replace(own, done=pages)

    def done(self, own: met.State) -> "Done":
        """``own.done`` with the shelved pages read when asked for (a sequence of pages)."""
        return Done(self, own.done)


class Done(collections.abc.Sequence):
    """Pages of finished challenges, the shelved ones decoded when read: what
    ``met.State.get`` and ``met.State.challenges`` read of ``done``."""

    __slots__ = ("_shelf", "_kept", "_len", "_pages", "_shelved")

    def __init__(self, shelf: Shelf, kept: tuple) -> None:
        # the shelf's pages as they are now: a later shelve or restore leaves this one alone
        self._shelf, self._kept, self._pages = shelf, kept, shelf._pages
        self._shelved = sum(shelf._counts.values())
        self._len = max(len(kept), max(self._pages, default=-1) + 1)

    def __len__(self) -> int:
        return self._len

    def total(self) -> int:
        """Finished challenges in all pages, without decoding the shelved ones."""
        return self._shelved + sum(len(page) for page in self._kept)

    def __getitem__(self, n):
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(self._len))]
        if n < 0:
            n += self._len
        if not 0 <= n < self._len:
            raise IndexError(n)
        page = self._kept[n] if n < len(self._kept) else {}
        if n in self._pages:
            shelved = self._shelf.page(n, self._pages)
            return {**shelved, **page} if page else shelved
        return page


# -- pages shelved in place: a state that is decided on (the command path) -----------------

_decoded: collections.OrderedDict[int, tuple["Page", dict]] = collections.OrderedDict()
_decoded_lock = threading.Lock()  # the loop decides, the snapshot thread writes whole states


class Page(collections.abc.Mapping):
    """A final page of finished challenges held compressed in the very slot of
    ``met.State.done`` it came from: a mapping of the same challenges, decoded when read
    (a few kept decoded, the least recently read dropped).

    The command path's state (``Chronicle``) is decided on and kept at several versions
    at once (the committed one, the folded one ahead of the commit, a snapshot's), so its
    pages go nowhere a ``Shelf`` would have to keep in step: every reader (``met.State.get``,
    ``challenges``) and every evolver (``met._put`` copies a page with ``{**page, ...}``, an
    overrule's MET-14) reads it as the dict it was, and an overruled challenge's page comes
    back as a plain dict in the new state, leaving the old state's page as it was. The
    snapshot codec encodes it as the dict it stands for, a page at a time
    (``snapshot._mapping``, server/store/snapshot.py); any other msgspec encoder refuses it (a ``TypeError``): ``whole``
    first."""

    __slots__ = ("_blob", "_len")

    def __init__(self, challenges: dict[str, met.Challenge]) -> None:
        self._blob = zlib.compress(_encode(challenges), 1)
        self._len = len(challenges)

    def _page(self) -> dict[str, met.Challenge]:
        key = id(self)
        with _decoded_lock:
            found = _decoded.get(key)
            if found is not None:
                _decoded.move_to_end(key)
                return found[1]
        page = _decode(zlib.decompress(self._blob))
        with _decoded_lock:
            _decoded[key] = (self, page)  # the page held too: its id is not reused meanwhile
            while len(_decoded) > _CACHED:
                _decoded.popitem(last=False)
        return page

    def __getitem__(self, challenge_id: str) -> met.Challenge:
        return self._page()[challenge_id]

    def get(self, challenge_id, default=None):
        return self._page().get(challenge_id, default)

    def __contains__(self, challenge_id) -> bool:
        return challenge_id in self._page()

    def __iter__(self):
        return iter(self._page())

    def __len__(self) -> int:
        return self._len

    def keys(self):
        return self._page().keys()

    def values(self):
        return self._page().values()

    def items(self):
        return self._page().items()

    def nbytes(self) -> int:
        return len(self._blob)

    def __repr__(self) -> str:
        return f"Page({self._len} challenges, {len(self._blob)} bytes)"


def _final(own: met.State) -> int:
    """The number of the first page that may still change without an overrule: the page
    of an open challenge, or of the next one issued (``met._page`` of "c<counter + 1>")."""
    low = max(0, own.counter) // met.PAGE
    for cid in own.live:
        low = min(low, met._page(cid))
    return low


# MET events naming a challenge: the only events whose fold changes a page of finished
# challenges below the final one (an overrule, MET-14, copies its page back into a dict)
NAMES_CHALLENGE = frozenset(t for t in game.EVENT_TYPES
                            if t.__module__ == met.__name__ and "challenge" in t.__struct_fields__)


def _compressed(state: GameState, numbers) -> GameState:
    """``state`` with the pages ``numbers`` compressed in place, those that are plain dicts."""
    own = state.met
    done = own.done
    pages = None
    for n in numbers:
        page = done[n]
        if type(page) is dict and page:  # the type first: a Page's len is Python-level
            if pages is None:
                pages = list(done)
            pages[n] = Page(page)
    if pages is None:
        return state
    return msgspec.structs.replace(state, met=msgspec.structs.replace(own, done=tuple(pages)))


def shelved(state: GameState) -> GameState:
    """``state`` with its final pages of finished challenges compressed in place (``Page``):
    equal to ``state``, and every decision on it the same. Looks at every page below the
    final one: for a state of unknown origin (a load, a catch-up); ``Shelving`` for the
    states a command path folds one from the other."""
    own = state.met
    return _compressed(state, range(min(_final(own), len(own.done))))


class Shelving:
    """``shelved`` for each session's state folded from its previous one, looking only at
    the pages that may have changed since: those that became final since its last pass,
    and those the folded events named (an overrule, MET-14). Each command looked at every
    page below the final one before: 13 us at 250 pages, by the sixth hour of a night at
    20 commands/s, and growing with the night; now a command that finishes nothing looks
    at none. A page no event named is left as the last pass left it: what a full pass
    would do to it (pages below the final one change only through ``NAMES_CHALLENGE``;
    a dict left there would still be equal, only held whole)."""

    __slots__ = ("_upto",)

    def __init__(self) -> None:
        self._upto: dict[str, int] = {}  # session -> pages below this were looked at

    def __call__(self, session: str, state: GameState, events=None) -> GameState:
        """``state`` shelved; ``events``: those folded into it from the state this
        shelving last gave for ``session`` (None: a state of other origin, looked at whole)."""
        own = state.met
        end = min(_final(own), len(own.done))
        start = min(self._upto.get(session, 0), end) if events is not None else 0
        numbers = range(start, end)
        if start and events:
            again = {n for n in (met._page(e.challenge) for e in events if type(e) in NAMES_CHALLENGE) if n < start}
            if again:
                numbers = [*sorted(again), *numbers]
        self._upto[session] = end
        return _compressed(state, numbers)

    def forget(self, session: str) -> None:
        self._upto.pop(session, None)


def whole(state: GameState) -> GameState:
    """``state`` with every ``Page`` a dict again: what the typed codec encodes (a
    snapshot), the state a fold that never shelved holds."""
    done = state.met.done
    if not any(type(page) is Page for page in done):
        return state
    pages = tuple(dict(page.items()) if type(page) is Page else page for page in done)
    return msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=pages))
