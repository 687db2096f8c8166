"""The state each view of a session sees, kept up to date instead of folded per query:
folding the caller's whole visible log on every ``GET /sessions/{s}/state`` would take
0.4 s at 40,000 events, and grow with the night.

One projection per view class (``events.views``): the storytellers (the true state), the
observers (public forms), and one per character for its players. A projection is folded
once, from the log, the first time its view asks; every later query first catches the
session's projections up with the committed events since the last query (any view's:
each event is read, decoded and redacted once for all of them), so a query costs what
happened since the previous one, not the night. Only committed rows are read: the
chronicle's in-memory state runs ahead of the commit, and another process (the CLI) may
append to the same file.

What a query answers: the live state, with the finished MET
challenges (``met.done``, the one part of a state that grows with the night: 4.7 MB by
the sixth hour for a player) left out but counted, the last ``RECENT`` of them beside it;
``GET /state/done`` pages through the rest by challenge number. The body is then the same
size at any hour. ``GET /state?at=SEQ`` (a dispute's question) still answers the whole
state, folded for the call.

Memory: one state per view that has asked, each holding its open part and, compressed
in their own slots (server/core/pages.py), the final pages of its finished challenges:
about 3 bytes per event of a MET night (131 held whole). Views
differ in what each was sent, so they share nothing. At most ``max_views`` views are kept
over all sessions (the least recently asked is dropped, and folded again from the log if
it asks again): memory is bounded by that count times the night, not by the number of
queries or devices. Phones resync over the websocket; this query is for tools and the
odd reconnecting script.

After a restart: each view saves a snapshot every ``SAVE_EVERY`` events
it takes (server/core/keep.py: its state, its compressed pages, the last seq it was sent), and
a view's first fold starts from it when it is usable, so the first query after a crash
costs what one costs live, not a fold of the night (9.8 s at 735,000 events). The views of
a session are caught up together, so they cross that mark together: the query that
crossed it saved every one, up to sixty players' snapshots in one request. A query now
only hands them (states and pages that are never changed in place) to a thread of the
projections' own, which writes them one after the other on its own connection.
"""

from __future__ import annotations

import collections
import concurrent.futures
import gc
import itertools
import threading

import msgspec

from conteur.events import game, met, views
from conteur.events.game import GameState
from conteur.events.model import Actor
from conteur.server.core import keep
from conteur.server.core import pages
from conteur.server.store.codec import decode_events

_json = msgspec.json.Encoder(enc_hook=game.enc_hook)  # a state's draw streams: a dict in name order

STORYTELLERS = "\x00storytellers"  # keys no character id can take (ids are sent as text)
OBSERVERS = "\x00observers"


def view_key(viewer: Actor) -> str:
    """The view class of ``viewer``: everyone in one class sees the same forms."""
    if viewer.role == "storyteller":
        return STORYTELLERS
    if viewer.role == "player" and viewer.character is not None:
        return viewer.character
    return OBSERVERS  # views.sees_whole: anyone else sees public forms only


SAVE_EVERY = 10_000  # events a view folds past its snapshot before it saves the next (keep.py)
RECENT = 16  # finished challenges ``GET /state`` carries, the highest numbers: a phone's latest results
DONE_PAGE = 1000  # finished challenges a page of ``GET /state/done`` holds at most


class Finished(msgspec.Struct, frozen=True, kw_only=True):
    """What ``GET /state`` says of the finished challenges it leaves out."""

    count: int  # finished challenges in this view's state (met.done), all pages
    recent: list[met.Challenge]  # the last RECENT of them by number, in number order


class DonePage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of finished challenges (``GET /state/done``), by challenge number."""

    head: int  # the seq of the state the page was read from (the view's, as /state)
    count: int  # finished challenges in that state, all pages
    challenges: list[met.Challenge]  # number > ``after``, in number order, at most ``limit``


def _number(challenge: met.Challenge) -> tuple[int, str]:
    try:
        return int(challenge.id[1:]), challenge.id  # ids are "c<n>" (met.issue)
    except ValueError:
        return 0, challenge.id


def finished(done, after: int = 0):
    """The finished challenges numbered above ``after``, in number order: pages hold
    challenges by number (met.PAGE each), so only a page's own few are sorted (and of
    compressed pages, only those read are decoded)."""
    for n in range(max(0, after) // met.PAGE, len(done)):
        for challenge in sorted(done[n].values(), key=_number):
            if _number(challenge)[0] > after:
                yield challenge


def _count(done) -> int:
    return sum(len(page) for page in done)  # a compressed page's count is held: nothing decoded


def _recent(done, n: int) -> list[met.Challenge]:
    out: list[met.Challenge] = []
    for page in reversed(done):
        if len(out) >= n:
            break
        out = sorted(page.values(), key=_number)[-(n - len(out)):] + out
    return out


def live_json(state: GameState) -> bytes:
    """``GET /state``'s body: the state's JSON with ``met.done`` empty, and beside the
    state's fields ``finished``: how many challenges are finished and the last few. The
    finished ones are the part of a state that grows with the night (about 470 bytes
    each: 4.7 MB by the sixth hour of a MET night); everything else is live and bounded.
    Decoded as a GameState the extra field is ignored."""
    done = state.met.done
    body = _json.encode(msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=())))
    summary = Finished(count=_count(done), recent=_recent(done, RECENT))
    return body[:-1] + b',"finished":' + _json.encode(summary) + b"}"


def done_page(state: GameState, after: int, limit: int) -> DonePage:
    done = state.met.done
    page = list(itertools.islice(finished(done, after), limit))
    return DonePage(head=state.head, count=_count(done), challenges=page)


def stored_name(key: str) -> str:
    """A view's name in the store (``EventStore.save_views``): text without a NUL."""
    return {STORYTELLERS: "storytellers", OBSERVERS: "observers"}.get(key) or f"player:{key}"


class _View:
    __slots__ = ("viewer", "state", "seen", "saved", "stored")

    def __init__(self, viewer: Actor, state: GameState, seen: int, saved: int = 0,
                 stored: keep.Stored | None = None):
        self.viewer = viewer
        self.saved = saved  # the seq of the log its last snapshot was folded up to
        self.stored = stored or keep.Stored()  # its compressed pages in the store already
        self.state = pages.compressed(state)  # its final pages of finished challenges compressed
        self.seen = seen  # the last seq this view was sent (its state's ``head``)

    def evolve(self, form, seq: int) -> None:
        self.state, self.seen = game.evolve(self.state, form), seq

    def whole(self) -> GameState:
        return pages.whole(self.state)


class _Session:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seq = 0  # every view below is folded up to this seq of the log
        self.views: dict[str, _View] = {}


class Projections:
    """Per-view states of every session asked about; thread-safe (queries run off the loop)."""

    def __init__(self, store, *, max_views: int = 64, save_every: int | None = None):
        self.store = store
        self.max_views = max_views
        # a view folded this many events past its last snapshot saves one (server/core/keep.py):
        # after a restart, a view is its snapshot and at most this many events of catch-up
        self.save_every = SAVE_EVERY if save_every is None else save_every
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._recent: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
        self._saves: concurrent.futures.ThreadPoolExecutor | None = None  # made at the first save

    def _session(self, session: str) -> _Session:
        with self._lock:
            found = self._sessions.get(session)
            if found is None:
                found = self._sessions[session] = _Session()
            return found

    def state(self, session: str, viewer: Actor) -> GameState:
        """The state at the session's committed head as ``viewer`` may rebuild it, ``head``
        set to the last seq it was sent (as ``GET /state`` has always answered): the whole
        state, its compressed finished challenges read back."""
        return self._current(session, viewer, _View.whole)

    def state_json(self, session: str, viewer: Actor) -> bytes:
        """``GET /state``'s body for ``viewer``: ``live_json`` of ``state``."""
        return self._current(session, viewer, lambda view: live_json(view.state))

    def done_json(self, session: str, viewer: Actor, after: int = 0, limit: int = DONE_PAGE) -> bytes:
        """``GET /state/done``'s body: ``viewer``'s finished challenges numbered above ``after``."""
        return self._current(session, viewer, lambda view: _json.encode(done_page(view.state, after, limit)))

    def _current(self, session: str, viewer: Actor, answer):
        """``answer(view)`` of ``viewer``'s view caught up, under the session's lock (a
        view is caught up by one query at a time)."""
        s = self._session(session)
        key = view_key(viewer)
        with s.lock:
            head = self.store.session_head(session)
            self._catch_up(session, s, head)
            view = s.views.get(key)
            if view is None:
                view = s.views[key] = self._build(session, viewer, key, s.seq)
            if view.state.head != view.seen:
                view.state = msgspec.structs.replace(view.state, head=view.seen)
            out = answer(view)
            self._save(session, s)
        self._used(session, key)
        return out

    def _used(self, session: str, key: str) -> None:
        """Marks a view as just asked for; drops the least recently asked beyond ``max_views``."""
        with self._lock:
            self._recent[(session, key)] = None
            self._recent.move_to_end((session, key))
            while len(self._recent) > self.max_views:
                (old_session, old_key), _ = self._recent.popitem(last=False)
                s = self._sessions.get(old_session)
                if s is not None:
                    with s.lock:
                        s.views.pop(old_key, None)

    def _save(self, session: str, s: _Session) -> None:
        """Queues the snapshot of each view folded ``save_every`` events past its last, as
        it stands now (under the session's lock): its state (pages and all) is replaced,
        never changed, by later queries. Only the saving thread touches a view's
        ``stored`` pages once the view is made."""
        for key, view in s.views.items():
            if s.seq - view.saved >= self.save_every:
                self.later(keep.save_view, self.store, session, stored_name(key), s.seq, view.seen,
                           view.state, view.stored)
                view.saved = s.seq  # tried: a failed save is tried again ``save_every`` later

    def later(self, save, *args) -> None:
        """Queues ``save(*args)`` on the snapshots' thread, after those queued before it:
        the kept reviews' snapshots are written there too (server/web/http_review.py),
        never in a request's time; flushed and written by ``flush`` and ``close``."""
        if self._saves is None:
            with self._lock:
                if self._saves is None:
                    self._saves = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="conteur-views")
        try:
            self._saves.submit(save, *args)
        except RuntimeError:  # closed meanwhile (the server stopping): a cache, skipped
            pass

    def flush(self) -> None:
        """Waits until every snapshot queued so far is written (or failed: a cache)."""
        if self._saves is not None:
            self._saves.submit(lambda: None).result()  # one thread: the queue's order

    def close(self) -> None:
        """Writes the queued snapshots and ends the saving thread (a server stopping)."""
        if self._saves is not None:
            self._saves.shutdown(wait=True)
            self._saves = None

    def _build(self, session: str, viewer: Actor, key: str, upto: int) -> _View:
        """A view's first fold: its snapshot and the log after it up to ``upto`` (the
        others' seq), or the log from the first event."""
        found = keep.load_view(self.store, session, stored_name(key), upto) if upto else None
        if found is not None:
            start, seen, state, stored = found
            view = _View(viewer, state, seen, saved=start, stored=stored)
        elif key == STORYTELLERS:
            state = self.store.load_state(session, upto) if upto else game.initial()
            return _View(viewer, state, state.head)
        else:
            start, view = 0, _View(viewer, game.initial(), 0)
        paused = gc.isenabled()
        gc.disable()  # as the store's fold: no cycles, only a growing state to walk again
        try:
            if upto > start:
                for chunk in _chunks(self.store, session, start, upto):
                    for seq, event in chunk:
                        form = views.view(event, viewer)
                        if form is not None:
                            view.evolve(form, seq)
                    view.state = pages.compressed(view.state)
        finally:
            if paused:
                gc.enable()
        return view

    def _catch_up(self, session: str, s: _Session, head: int) -> None:
        if head <= s.seq:
            return
        if not s.views:
            s.seq = head  # nothing to keep up: a view asked later folds from the log
            return
        kept = list(s.views.values())
        for chunk in _chunks(self.store, session, s.seq, head):
            for seq, event in chunk:
                f = views.forms(event)
                for view in kept:
                    form = views.pick(f, view.viewer)
                    if form is not None:
                        view.evolve(form, seq)
            for view in kept:
                view.state = pages.compressed(view.state)
        s.seq = head

    def forget(self, session: str | None = None) -> None:
        with self._lock:
            if session is None:
                self._sessions.clear()
                self._recent.clear()
            else:
                self._sessions.pop(session, None)
                for key in [k for k in self._recent if k[0] == session]:
                    del self._recent[key]


def _chunks(store, session: str, after: int, upto: int):
    """(seq, event) pairs of the session in (after, upto], decoded a chunk at a time."""
    while after < upto:
        rows = [r for r in store.read_after(session, after, limit=5000) if r.seq <= upto]
        if not rows:
            return
        after = rows[-1].seq
        yield zip((r.seq for r in rows), decode_events([r.data for r in rows]))
