"""Finished MET challenges held compressed, in the state's own slots: the one way a
server keeps them out of memory.

A state folded through a night holds every finished challenge (``met.State.done``, pages of
``met.PAGE`` by number): about 1.4 KB each, ten events' worth, the one part of a state that
grows with the night. A server keeps such folds for as long as it runs (the command path's
true state, each view's projection, a kept review's truth and viewer's fold, a
verification's walk), so a six-hour night at 20 commands/s held them by the hundred
megabytes. A page whose every challenge is finished is final: only an overrule
(``met.ChallengeOverruled``, MET-14) ever changes it again. Each such page is replaced in
its very slot of ``met.State.done`` by a ``Page``: the same challenges as one
zlib-compressed msgpack blob, a mapping decoded when read. The state stays a value: every
reader, every evolver and every decision reads it as the state it was, equal to the fold
that never compressed (``whole``), and a state kept at several versions at once (the
committed one, the one folded ahead, a snapshot's) needs nothing kept in step beside it.

A snapshot stores a ``Page`` as the dict it stands for (server/store/snapshot.py), or, for
a kept view or review, its blob once as an entry of its own, named by digest
(server/core/keep.py: ``Page.blob``, ``Page.of``).
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


_decoded: collections.OrderedDict[int, tuple["Page", dict]] = collections.OrderedDict()
_decoded_lock = threading.Lock()  # the loop decides, the snapshot thread writes whole states


class Page(collections.abc.Mapping):
    """A final page of finished challenges held compressed in the very slot of
    ``met.State.done`` it came from: a mapping of the same challenges, decoded when read
    (a few kept decoded, the least recently read dropped).

    A state holding pages is decided on and kept at several versions at once, so a page
    goes nowhere that would have to be kept in step: every reader (``met.State.get``,
    ``challenges``) and every evolver (``met._put`` copies a page with ``{**page, ...}``, an
    overrule's MET-14) reads it as the dict it was, and an overruled challenge's page comes
    back as a plain dict in the new state, leaving the old state's page as it was. The
    snapshot codec encodes it as the dict it stands for, a page at a time
    (``snapshot._mapping``, server/store/snapshot.py); any other msgspec encoder refuses
    it (a ``TypeError``): ``whole`` first."""

    __slots__ = ("_blob", "_len")

    def __init__(self, challenges: dict[str, met.Challenge]) -> None:
        self._blob = zlib.compress(_encode(challenges), 1)
        self._len = len(challenges)

    @classmethod
    def of(cls, blob: bytes, count: int) -> "Page":
        """The page whose blob is ``blob`` (as ``blob`` gave it: a stored page read back),
        holding ``count`` challenges; decoded only when read."""
        page = cls.__new__(cls)
        page._blob, page._len = blob, count
        return page

    @property
    def blob(self) -> bytes:
        """The compressed page, as held (the same object for as long as the page lives)."""
        return self._blob

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


def compressed(state: GameState) -> GameState:
    """``state`` with its final pages of finished challenges compressed in place (``Page``):
    equal to ``state``, and every decision on it the same. Looks at every page below the
    final one: for a state of unknown origin (a load, a catch-up); ``Compressing`` for the
    states a command path folds one from the other."""
    own = state.met
    return _compressed(state, range(min(_final(own), len(own.done))))


class Compressing:
    """``compressed`` for each session's state folded from its previous one, looking only at
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
        """``state`` compressed; ``events``: those folded into it from the state this
        last gave for ``session`` (None: a state of other origin, looked at whole)."""
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
    snapshot), the state a fold that never compressed holds."""
    done = state.met.done
    if not any(type(page) is Page for page in done):
        return state
    pages = tuple(dict(page.items()) if type(page) is Page else page for page in done)
    return msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=pages))
