"""A kept review's timeline held by page, its finished pages read back from the store.

A server keeps a storyteller's review up to date all night (server/web/http_review.py).
Timeline items that held each event decoded would take about 550 bytes per event with the
rest: past 600 MB for a six-hour night at 20 commands/s. Everything an item holds is read again
from its stored row (the event, its type, actor and time, who saw which form, the
characters and challenge it names) except the scene it happened in, which depends on where
characters stood at that moment; and the roster's names it is told with, which change a
few dozen times a night. So a review keeps, per item, its seq and its scene (12 bytes),
the names each time they change, and the items themselves only for the page being filled
and a few pages read lately (``CACHED``, least recently read dropped). Any other page is
read from the store again when asked for: the same rows give the same items.

``Items`` is a sequence of items (len, index, slices, iteration in log order), so every
reader of ``Review.items`` (timeline, pages, fairness, scene slider, exports) is
unchanged; ``Challenges`` maps each challenge id to its items, by seq, the same way.
"""

from __future__ import annotations

import array
import bisect
import collections
import collections.abc
import threading

PAGE = 2048  # items of one page
CACHED = 6  # pages kept decoded besides the one being filled: first screen, a page or two being read


class Items(collections.abc.Sequence):
    """The items of one review in log order; ``rebuild(first_seq, last_seq, scenes)``
    makes a page's items again from the store (``scenes``: the kept scene of each)."""

    def __init__(self, rebuild) -> None:
        self._rebuild = rebuild
        self.seqs = array.array("q")
        self._scenes = array.array("i")  # index into _scene_ids, -1: none
        self._scene_ids: list[str] = []
        self._scene_index: dict[str, int] = {}
        self._hot: list = []  # the items of the page being filled (index hot_start onwards)
        self._hot_start = 0
        self._cache: collections.OrderedDict[int, list] = collections.OrderedDict()
        self._lock = threading.Lock()  # pages are read from request threads while a catch-up appends

    def append(self, item) -> None:
        scene = item.scene
        if scene is None:
            ix = -1
        else:
            ix = self._scene_index.get(scene)
            if ix is None:
                ix = self._scene_index[scene] = len(self._scene_ids)
                self._scene_ids.append(scene)
        # the item first, its seq last: a reader finds an index below len(seqs) held
        self._hot.append(item)
        self._scenes.append(ix)
        self.seqs.append(item.seq)
        if len(self._hot) >= PAGE:  # a page is full: it goes to the cache, then to the store
            with self._lock:
                self._keep(self._hot_start // PAGE, self._hot)
                self._hot, self._hot_start = [], self._hot_start + PAGE

    def __len__(self) -> int:
        return len(self.seqs)

    def scene_of(self, i: int) -> str | None:
        ix = self._scenes[i]
        return None if ix < 0 else self._scene_ids[ix]

    def _keep(self, n: int, items: list) -> None:
        self._cache[n] = items
        self._cache.move_to_end(n)
        while len(self._cache) > CACHED:
            self._cache.popitem(last=False)

    def _page(self, n: int) -> list:
        with self._lock:
            if n * PAGE >= self._hot_start:
                return self._hot
            found = self._cache.get(n)
            if found is not None:
                self._cache.move_to_end(n)
                return found
            start, end = n * PAGE, min(len(self.seqs), (n + 1) * PAGE)
            found = self._rebuild(self.seqs[start:end], [self.scene_of(i) for i in range(start, end)])
            self._keep(n, found)
            return found

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._page(i // PAGE)[i % PAGE]

    def __iter__(self):
        return self.upto(len(self)).__iter__()

    def index_after(self, seq: int) -> int:
        """The index of the first item with a seq above ``seq``."""
        return bisect.bisect_right(self.seqs, seq)

    def at_seq(self, seq: int):
        return self[bisect.bisect_left(self.seqs, seq)]

    def at_seqs(self, seqs) -> list:
        """The items of ``seqs`` (ascending), a page looked up once for all its items."""
        out, page, page_no, find = [], None, -1, self.seqs
        lo = 0
        for seq in seqs:
            i = lo = bisect.bisect_left(find, seq, lo)
            if i // PAGE != page_no:
                page_no = i // PAGE
                page = self._page(page_no)
            out.append(page[i % PAGE])
        return out

    def upto(self, n: int) -> "Upto":
        """The first ``n`` items, as they stay while more are appended (a snapshot)."""
        return Upto(self, n)


class Upto(collections.abc.Sequence):
    """The first ``n`` items of an ``Items``."""

    __slots__ = ("source", "n")

    def __init__(self, source: Items, n: int) -> None:
        self.source, self.n = source, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.source[k] for k in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.source[i]

    def __iter__(self):
        for start in range(0, self.n, PAGE):  # a page at a time: one lookup per page, not per item
            page = self.source._page(start // PAGE)
            yield from page[:min(PAGE, self.n - start)]

    def index_after(self, seq: int) -> int:
        return min(self.n, self.source.index_after(seq))


class Challenges(collections.abc.Mapping):
    """Challenge id -> its items in log order, kept as seqs (8 bytes an item), items read
    through ``Items``; ``upto`` bounds it to the items taken so far (a snapshot)."""

    def __init__(self, items: Items, seqs: dict[str, array.array] | None = None, upto: int | None = None) -> None:
        self._items = items
        self._seqs = {} if seqs is None else seqs
        self._upto = upto

    def add(self, challenge: str, seq: int) -> None:
        found = self._seqs.get(challenge)
        if found is None:
            self._seqs[challenge] = array.array("q", (seq,))
        else:
            found.append(seq)

    def __getitem__(self, challenge: str) -> list:
        seqs = self._seqs[challenge]
        if self._upto is not None:
            seqs = seqs[:bisect.bisect_right(seqs, self._upto)]
            if not seqs:
                raise KeyError(challenge)
        return self._items.at_seqs(seqs)

    def __contains__(self, challenge) -> bool:
        seqs = self._seqs.get(challenge)
        return seqs is not None and (self._upto is None or seqs[0] <= self._upto)

    def __iter__(self):
        if self._upto is None:
            return iter(list(self._seqs))
        return (c for c, seqs in list(self._seqs.items()) if seqs[0] <= self._upto)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def upto(self, seq: int) -> "Challenges":
        return Challenges(self._items, self._seqs, seq)

    def seqs(self):
        """(challenge id, the seqs of its items taken so far), in order of first item."""
        for challenge, seqs in list(self._seqs.items()):
            if self._upto is not None:
                seqs = seqs[:bisect.bisect_right(seqs, self._upto)]
            if seqs:
                yield challenge, seqs
