"""Dispute review: a session's log made readable and checkable.

Pure functions over the store and the views: ``build`` walks a session's rows once,
folds the true state beside them (to know where each character stood when each event
happened), and keeps each event in the form ``viewer`` may see (``events.views``), with
the characters, challenge and scene it concerns and a sentence telling it. Everything
else (``timeline``, ``challenge_story``, ``scene_steps``, ``disputes``, ``fairness``)
reads that ``Review``; ``verify`` checks the session's hash chain and fair draws.

A challenge belongs to the scene its initiator (or the character tested) stood in when
it was issued; an offline record to its recorder's scene when it was recorded; any other
event to the scene it names, or else to its first character's scene at that moment.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import gc
import itertools
import math
import operator
from collections import Counter
from sys import intern
from typing import Any, Iterable

import msgspec

from conteur.events import action, game, met, offline, session, views
from conteur.events.views import in_record
from conteur.events.game import GameState
from conteur.events.model import STORYTELLER, Actor, Event
from conteur.server.store.chain import Entry, Row, verify_rows
from conteur.server.audit import paged
from conteur.server.core import venue_time
from conteur.server.core.shelf import NAMES_CHALLENGE, Done, Shelf
from conteur.events.narrate import Teller, challenge_sentence, offline_sentence, sentence
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore

_PEOPLE = ("character", "initiator", "defender", "tested", "opponent", "recorder", "winner", "loser",
           "debtor", "creditor", "cancelled")


class Item(msgspec.Struct, kw_only=True, gc=False):
    """One event of the timeline, in the form the review's viewer may see."""

    seq: int
    at: str
    actor: str
    type: str
    event: Any  # the viewer's form of the event (an Event)
    characters: tuple[str, ...] = ()
    scene: str | None = None
    challenge: str | None = None  # a Mind's Eye Theatre challenge ("c3") or offline record ("o1")
    owners: frozenset[str] | None = None  # who saw it whole (None: everyone)
    # the others saw a sealed form (False: they saw nothing); None: not worked out, the
    # event is whole (a storyteller's review: ``forms`` of every event was a twentieth of
    # its build, for the few challenge pages that show who saw what)
    sealed: bool | None = False
    # The sentence is told when first read, not when the item is made: the first screen
    # shows 1,500 rows of a night's tens of thousands, and telling was a third of building
    # the review. ``teller`` holds the roster's names as they stood at this event.
    teller: Any = None
    told: str | None = None

    @property
    def text(self) -> str:
        told = self.told
        if told is None:
            told = self.told = sentence(self.event, self.teller)
        return told


class Review(msgspec.Struct, kw_only=True):
    session: str
    viewer: Actor
    lang: str
    items: list[Item]
    names: dict[str, str]  # character id -> name
    scenes: dict[str, str]  # scene id -> name, in order of opening
    state: GameState  # folded from the viewer's own events (the true state for storytellers)
    rows: list[Row]
    challenge_items: dict[str, list[Item]] = {}  # items by challenge id, in log order

    @property
    def teller(self) -> Teller:
        return Teller(self.names, self.lang, self.scenes)

    def by_challenge(self, challenge_id: str) -> list[Item]:
        return self.challenge_items.get(challenge_id, [])


def _people_in(event: Event, fields: tuple[str, ...], throws: bool) -> tuple[str, ...]:
    found: list[str] = []
    for field in fields:
        value = getattr(event, field)
        if isinstance(value, str) and value and value != session.STORYTELLER_SIDE and value not in found:
            found.append(value)
    if throws:
        for key in event.throws or {}:
            if key not in found and key != session.STORYTELLER_SIDE:
                found.append(key)
    return tuple(found)


def _people(event: Event) -> tuple[str, ...]:
    plan = _PLANS.get(type(event)) or _plan(type(event))
    return _people_in(event, plan[0], plan[1])


def _challenge_of(event: Event) -> str | None:
    field = (_PLANS.get(type(event)) or _plan(type(event)))[2]
    if field is None:
        return None
    value = getattr(event, field)
    return value if isinstance(value, str) else None


_HAS_SCENE = frozenset(t for t in game.EVENT_TYPES if "scene" in t.__struct_fields__)
# the events ``Builder._extend`` does more with: each its own object, told apart by ``is``
_ADDED, _OPENED, _ISSUED, _RECORDED, _AMENDED = (object() for _ in range(5))
_ROLES = {session.CharacterAdded: _ADDED, session.SceneOpened: _OPENED, met.ChallengeIssued: _ISSUED,
          offline.OfflineChallengeRecorded: _RECORDED, session.SheetAmended: _AMENDED}
_PLANS: dict[type, tuple] = {}


def _plan(kind: type) -> tuple:
    """What the review reads of an event type, found once per type: the fields that may
    name a character and whether it has throws, the field naming its challenge (or
    offline record), whether it names a scene, whether the truth folds it, whether folding
    it may need a shelved page back, its role in ``Builder._extend``, whether it is
    public by kind (``Event.owners``, always None: every viewer sees it whole), how its
    characters are read, its tag (the type its rows are stored with) and which of
    ``_MARKED`` it is (what a challenge's mark looks for among its items), if any."""
    fields = getattr(kind, "__struct_fields__", ())
    if issubclass(kind, offline._BetweenTwo):
        challenge = "record"
    elif kind.__module__ == met.__name__ and "challenge" in fields:
        challenge = "challenge"
    else:
        challenge = None
    people = tuple(f for f in _PEOPLE if f in fields)
    found = _PLANS[kind] = (people, "throws" in fields, challenge,
                            kind in _HAS_SCENE, kind not in _IGNORED, kind in _NAMES_CHALLENGE, _ROLES.get(kind),
                            getattr(kind, "owners", None) is Event.owners, _people_reader(people, "throws" in fields),
                            getattr(getattr(kind, "__struct_config__", None), "tag", None),
                            _marked_kind(kind))
    return found


# the kinds a challenge's mark looks for among its items (``_mark``): an offline record
# disputed, a MET challenge overruled
_MARKED = (offline.OfflineChallengeDisputed, met.ChallengeOverruled)


def _marked_kind(kind: type) -> type | None:
    return next((m for m in _MARKED if issubclass(kind, m)), None)


KNOWN_PEOPLE = 4096  # groups of characters remembered per event kind


def _people_reader(fields: tuple[str, ...], throws: bool):
    """The characters an event of one kind names (``_people_in``), looked up by the
    values of its fields: a night names the same few pairs over and over, and working
    them out field by field was a tenth of building the review."""
    if not fields and not throws:
        return None
    values = operator.attrgetter(*fields) if fields else None
    single = len(fields) == 1
    known: dict[tuple, tuple[str, ...]] = {}

    def people(event: Event) -> tuple[str, ...]:
        key = () if values is None else (values(event),) if single else values(event)
        if throws and event.throws:
            key += tuple(event.throws)
        found = known.get(key)
        if found is None:
            if len(known) >= KNOWN_PEOPLE:  # a server's sessions, all night: kept bounded
                known.clear()
            found = known[key] = _people_in(event, fields, throws)
        return found

    return people


_IGNORED = frozenset(kind for kind in game.EVENT_TYPES if kind.__struct_config__.tag in game.IGNORED)
# MET events naming a challenge: folding one may need its shelved page back (server/core/shelf.py)
_NAMES_CHALLENGE = NAMES_CHALLENGE


def _item(row: Row, at: str, owners: frozenset[str] | None, sealed: bool, seen: Event, people: tuple[str, ...],
          challenge: str | None, scene: str | None, teller: Teller, share) -> Item:
    """A timeline item (``owners`` and ``sealed`` of its forms, ``views.forms``). A night
    repeats a few actors, types and groups of characters: each is kept once (``share``),
    not once per event: a kept review's memory stays small."""
    return Item(seq=row.seq, at=at, actor=intern(row.actor), type=intern(row.type), event=seen,
                characters=share(people, people), scene=scene, challenge=challenge, teller=teller,
                owners=owners if owners is None else share(owners, owners), sealed=sealed)


def _where(characters: dict, people: Iterable[str]) -> str | None:
    """The scene of the first of ``people`` in one (``session.State.characters``)."""
    for who in people:
        found = characters.get(who)
        if found is not None and found.scene:
            return found.scene
    return None


_DATA = operator.attrgetter("data")


def _decoded(rows: list[Row]) -> list[Event]:
    datas = list(map(_DATA, rows))
    try:  # the bodies joined once and decoded as one: ``decode_events`` joins what it is given
        return decode_events([b",".join(datas)]) if datas else []
    except TypeError:  # a row edited through SQL may come back as TEXT: the review must still show it (altered)
        return decode_events([d if isinstance(d, bytes) else d.encode() for d in datas])


def read_session(store: EventStore, session_id: str, after: int = 0, limit: int | None = None, *,
                 whole: bool = True) -> tuple[list[Row] | list[Entry], list[Event]]:
    """The session's rows after ``after`` (at most ``limit``) and their events; without
    ``whole``, its entries (``chain.Entry``: no chain columns, for a ``Builder`` that keeps
    no rows). The collector waits meanwhile, as in the store's fold: the rows and events
    only grow while read, and its passes over them were a few percent of a review's build."""
    with collector_paused():
        rows = store.read_after(session_id, after, limit=limit) if whole else \
            store.read_entries(session_id, after, limit=limit)
        return rows, _decoded(rows)


@contextlib.contextmanager
def collector_paused():
    """The cyclic collector held off while a review grows or is told: it makes no cycles,
    and the collector's passes over a night's young objects were a few percent of it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def build(store: EventStore, session_id: str, viewer: Actor = STORYTELLER, lang: str = "en") -> Review:
    rows, events = read_session(store, session_id)
    return build_from(session_id, rows, events, viewer, lang)


def build_from(session_id: str, rows: list[Row], events: list[Event], viewer: Actor = STORYTELLER,
               lang: str = "en") -> Review:
    builder = Builder(session_id, viewer, lang)
    builder.extend(rows, events)
    return builder.review(copy=False)


class Builder:
    """The review of a session built as its log grows: ``extend`` with the rows
    after those already taken, so a long night's review is never walked again from its
    first event; ``review`` gives the ``Review`` of everything taken so far."""

    def __init__(self, session_id: str, viewer: Actor = STORYTELLER, lang: str = "en", *,
                 keep_rows: bool = True, store: EventStore | None = None):
        self.session = session_id
        # with a store, the items of the night's finished part are read from it again when
        # asked for (server/audit/paged.py), and the finished challenges of its folds are
        # shelved (server/core/shelf.py): what a server keeps all night
        self._store = store
        # the rows only serve the verification and the exports: a server reads them again
        # for those (``keep_rows=False``) rather than hold every stored byte of the night
        self.keep_rows = keep_rows
        self.viewer = viewer
        # the true state (the review reads where characters stand at each event); the
        # viewer's own fold likewise, unless it is the truth
        self._truth: GameState = game.initial()
        self._seen: GameState = game.initial()
        self._seen_state: GameState | None = None
        self._current: Review | None = None  # ``review(copy=False)`` since the last ``extend``
        self.names: dict[str, str] = {}
        self.scenes: dict[str, str] = {}
        self.challenge_scene: dict[str, str | None] = {}
        self.teller = Teller(self.names, lang, self.scenes)
        self.lang = self.teller.lang
        # what items are told with later: the names and scenes as they stand, copied
        # whenever one is added (a few dozen times a night)
        self._teller = Teller(dict(self.names), lang, dict(self.scenes))
        self.rows: list[Row] = []
        self._tellers: list[tuple[int, Teller]] = [(0, self._teller)]  # (from seq, teller): for pages read again
        self._shelves = (Shelf(), Shelf()) if store is not None else None  # the truth's, the viewer's
        if store is not None:
            self.items: list[Item] | paged.Items = paged.Items(self._rebuild)
            self.by_challenge: dict[str, list[Item]] | paged.Challenges = paged.Challenges(self.items)
        else:
            self.items = []
            self.by_challenge = {}  # items by challenge id, in log order
        self.touched: set[str] = set()  # challenges with new items since the caller last looked
        self.head = 0  # the last seq taken (seen or not)
        self.types: set[str] = set()
        self._marks: dict[str, Mark] = {}  # challenge id -> what the disputes list needs of it
        # challenge id -> its brief, once shown (``brief``); the last BRIEFS shown, not every
        # challenge a storyteller paged through
        self._briefs: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self._flagged: dict[str, tuple[int, int]] = {}  # disputes' ids -> their rank
        self._unsettled: set[str] = set()  # briefs an event naming no challenge may still change
        self._shared: dict = {}  # tuples of characters and sets of owners, one copy of each
        # each of ``_MARKED`` -> the challenges with an item of that kind (as the viewer saw
        # it): what ``_mark`` looked for in every item of every challenge at each first
        # screen. None (a kept review saved before it was kept, server/audit/kept.py):
        # ``_mark`` looks through the items
        self._marked: dict[type, set[str]] | None = {kind: set() for kind in _MARKED}

    def extend(self, rows: list[Row] | list[Entry], events: list[Event]) -> None:
        if self.keep_rows and rows and type(rows[0]) is not Row:
            raise TypeError("a review that keeps its rows (to verify them) needs whole rows, not entries")
        whole = self.viewer.role == "storyteller"
        self._seen_state = self._current = None
        with collector_paused():  # as the store's fold
            self._extend(rows, events, whole)

    @property
    def seen_state(self) -> GameState:
        """The viewer's state after every event taken (the truth for a storyteller)."""
        if self._seen_state is None:
            whole = self.viewer.role == "storyteller"
            state = self._truth if whole else self._seen
            if self._shelves is not None:
                shelf = self._shelves[0 if whole else 1]
                if len(shelf):
                    state = msgspec.structs.replace(state, met=msgspec.structs.replace(
                        state.met, done=shelf.done(state.met)))
            self._seen_state = state
        return self._seen_state

    @staticmethod
    def _restored(state: GameState, shelf: Shelf, pending: list[Event], challenge_id: str) -> GameState:
        """``state`` after what is pending, with the shelved page of ``challenge_id`` put
        back (an overrule of a finished challenge, MET-14) before its event is folded."""
        state = game.fold(pending, state)
        pending.clear()
        return msgspec.structs.replace(state, met=shelf.restore(state.met, challenge_id))

    def _shelve(self) -> None:
        self._truth, self._seen = (msgspec.structs.replace(state, met=shelf.shelve(state.met))
                                   for state, shelf in zip((self._truth, self._seen), self._shelves))

    def _teller_at(self, seq: int) -> Teller:
        tellers = self._tellers
        return tellers[bisect.bisect_right(tellers, seq, key=lambda t: t[0]) - 1][1]

    def _rebuild(self, seqs, scenes: list[str | None]) -> list[Item]:
        """The items of ``seqs`` (in log order, ``scenes`` theirs) made again from the
        store's rows: what ``_extend`` made of them, the scene aside, which it kept."""
        want = dict(zip(seqs, scenes))
        out: list[Item] = []
        share, viewer, at = self._shared.setdefault, self.viewer, ""
        after, last = seqs[0] - 1, seqs[-1]
        while after < last:
            # no more rows than seqs in the range: a page is read, not the 5,000 rows after it
            rows = self._store.read_entries(self.session, after, limit=max(1, min(5000, last - after)))
            if not rows:
                break
            after = rows[-1].seq
            rows = [r for r in rows if r.seq in want]
            for row, event in zip(rows, _decoded(rows)):
                f = views.forms(event)
                if row.at != at:
                    at = row.at
                out.append(_item(row, at, f.owners, f.public is not None, views.pick(f, viewer), _people(event),
                                 _challenge_of(event), want[row.seq], self._teller_at(row.seq), share))
        if len(out) != len(seqs):
            raise RuntimeError(f"session {self.session!r}: the store no longer holds the rows a kept review took")
        return out

    def _extend(self, rows, events, whole):
        items, add_type, by_challenge, touched = self.items, self.types.add, self.by_challenge, self.touched
        names, scenes, challenge_scene, viewer = self.names, self.scenes, self.challenge_scene, self.viewer
        share = self._shared.setdefault
        at = actor = ""
        forms, pick, plans = views.forms, views.pick, _PLANS
        truth, teller = self._truth, self._teller
        shelves, paging = self._shelves, self._store is not None
        marked_ids = self._marked
        # the truth is folded in runs, up to the events that need it as it stood before them
        # (where characters stand, the open challenges); the viewer's own fold at the end
        truths: list[Event] = []
        seens: list[Event] = []
        for row, event in zip(rows, events):
            kind = type(event)
            # what the review reads of this kind of event, looked up once a kind, not tried
            # field by field on every event of a night
            _, _, challenge_field, has_scene, folded, named, role, public, people_of, tag, marked = \
                plans.get(kind) or _plan(kind)
            if role is _ADDED:
                names[event.character] = event.name or event.character
                teller = self._teller = Teller(dict(names), self.lang, dict(scenes))
                self._tellers.append((row.seq, teller))
            elif role is _OPENED:
                scenes[event.scene] = event.name or event.scene
                teller = self._teller = Teller(dict(names), self.lang, dict(scenes))
                self._tellers.append((row.seq, teller))
            people = people_of(event) if people_of is not None else ()
            challenge = None
            if challenge_field is not None:
                challenge = getattr(event, challenge_field)
                if not isinstance(challenge, str):
                    challenge = None
            scene = event.scene if has_scene else None
            amended = None
            if scene is None and not challenge or role is not None and role is not _ADDED and role is not _OPENED:
                if truths:
                    truth = game.fold(truths, truth)
                    truths.clear()
                characters = truth.session.characters
                if role is _ISSUED:
                    challenge_scene[event.challenge] = _where(characters, (event.initiator, event.tested or event.defender))
                elif role is _RECORDED:
                    challenge_scene[event.record] = _where(characters, (event.recorder, event.opponent))
                elif role is _AMENDED:
                    # an open challenge is checked against the sheet as amended (rules-choices
                    # 21): its story shows the amendment, for a dispute about a refused bid
                    amended = [c.id for c in truth.met.live.values() if event.character in c.sides]
                if scene is None and not challenge:
                    scene = _where(characters, people)
            if scene is None and challenge:
                scene = challenge_scene.get(challenge)
            if folded:
                if shelves is not None and named and shelves[0].needs(event.challenge):
                    truth = self._restored(truth, shelves[0], truths, event.challenge)
                truths.append(event)
            if public:  # seen whole by everyone (``views.forms`` of a kind whose owners are None)
                seen, owners, sealed = event, None, True
            elif whole:  # a storyteller sees every event whole: who else did, worked out if asked
                seen, owners, sealed = event, None, None
            else:
                f = forms(event)
                owners, sealed = f.owners, f.public is not None
                seen = pick(f, viewer)
                if seen is not event:  # a sealed form: a kind of its own
                    marked = None if seen is None else _marked_kind(type(seen))
            if not whole:  # its state is the truth; any other viewer's is its own fold
                if seen is None or not in_record(seen, viewer):
                    continue
                if shelves is not None and type(seen) in _NAMES_CHALLENGE and shelves[1].needs(seen.challenge):
                    self._seen = self._restored(self._seen, shelves[1], seens, seen.challenge)
                seens.append(seen)
            if row.at != at:  # the events of one command share their time: one copy
                at = row.at
            # one copy of each actor and type too, told apart by comparing (a hash of each new
            # string read was most of interning them); a row's type is its event's tag, unless
            # the row was edited by hand
            if row.actor != actor:
                actor = intern(row.actor)
            kind_name = tag if row.type == tag else intern(row.type)
            # ``_item``, written out: a call per event of the night
            item = Item(seq=row.seq, at=at, actor=actor, type=kind_name, event=seen,
                        characters=share(people, people), scene=scene, challenge=challenge, teller=teller,
                        owners=owners if owners is None else share(owners, owners), sealed=sealed)
            items.append(item)
            add_type(kind_name)
            if marked is not None and marked_ids is not None:
                if challenge:
                    marked_ids[marked].add(challenge)
                marked_ids[marked].update(amended or ())
            if paging:
                if challenge:
                    by_challenge.add(challenge, row.seq)
                    touched.add(challenge)
                for challenge_id in amended or ():
                    by_challenge.add(challenge_id, row.seq)
                    touched.add(challenge_id)
                continue
            if challenge:
                found = by_challenge.get(challenge)
                if found is None:
                    by_challenge[challenge] = [item]
                else:
                    found.append(item)
                touched.add(challenge)
            if amended:
                for challenge_id in amended:
                    by_challenge.setdefault(challenge_id, []).append(item)
                    touched.add(challenge_id)
        self._truth = game.fold(truths, truth)
        self._seen = game.fold(seens, self._seen)
        if shelves is not None:
            self._shelve()
        if self.keep_rows:
            self.rows.extend(rows)
        if rows:
            self.head = rows[-1].seq

    def review(self, *, copy: bool = True) -> Review:
        """The review so far; with ``copy``, one that later ``extend`` calls leave alone
        (its lists are copied: pointers, not items). Without, the same one until the next
        ``extend`` (the first screen asks for it once a brief, 400 times)."""
        if not copy and self._current is not None:
            return self._current
        state = msgspec.structs.replace(self.seen_state, head=self.items[-1].seq if self.items else 0)
        items, rows, by_challenge = self.items, self.rows, self.by_challenge
        if copy and self._store is not None:  # a view of what is taken so far: nothing copied
            items, by_challenge, rows = items.upto(len(items)), by_challenge.upto(self.head), list(rows)
        elif copy:
            items, rows = list(items), list(rows)
            by_challenge = {k: list(v) for k, v in by_challenge.items()}
        found = Review(session=self.session, viewer=self.viewer, lang=self.lang, items=items,
                       names=dict(self.names) if copy else self.names,
                       scenes=dict(self.scenes) if copy else self.scenes, state=state, rows=rows,
                       challenge_items=by_challenge)
        if not copy:
            self._current = found
        return found


    def marks(self) -> tuple[dict[str, Mark], dict[str, tuple[int, int]]]:
        """Every challenge's mark and the disputes' ranks, recomputed only for challenges
        with new items (and those not settled yet): the first screen's cost stays that of
        what changed since it was last shown."""
        review = self.review(copy=False)
        marked = self.touched | self._unsettled
        get = review.state.met.get
        if len(marked) > MERGED_MARKS:  # a night's worth of marks (a first screen marks every challenge)
            if isinstance(review.state.met.done, Done):
                # pages held compressed (a kept review's shelf): taken in page order, each
                # decoded once. Merged, every page of the night was decoded at once: a
                # peak of every finished challenge's objects, at each catch-up, that
                # left the allocator's pools fragmented (the night's RSS 1.5x -> 2.3x)
                marked = sorted(marked, key=met._page)
                get = _PageOrder(review.state.met).get
            else:  # pages in memory: one merge, not a page found per id
                get = review.state.met.challenges.get
        for cid in marked:
            mark = _mark(review, cid, self.by_challenge.get(cid, []), get, self._marked)
            self._flagged.pop(cid, None)
            self._unsettled.discard(cid)
            self._briefs.pop(cid, None)
            if mark is None:
                self._marks.pop(cid, None)
                continue
            self._marks[cid] = mark
            if _flagged(mark):
                self._flagged[cid] = _rank(mark)
            if mark.status not in SETTLED:
                self._unsettled.add(cid)
        self.touched = set()
        return self._marks, self._flagged

    def brief(self, challenge_id: str) -> dict:
        """A challenge's brief (as in the bundle), told only when shown, then kept until
        the challenge moves (call ``marks`` first)."""
        found = self._briefs.get(challenge_id)
        if found is None:
            story = _summary(self.review(copy=False), challenge_id, self.by_challenge[challenge_id], steps=False,
                             mark=None if challenge_id in self.touched else self._marks.get(challenge_id))
            found = self._briefs[challenge_id] = msgspec.to_builtins(_brief(story))
            while len(self._briefs) > BRIEFS:
                self._briefs.popitem(last=False)
        else:
            self._briefs.move_to_end(challenge_id)
        return found


MERGED_MARKS = 256  # challenges to mark at once past which the met part's pages are merged (shelved: read in order)
BRIEFS = 2 * 200 + 1000  # briefs kept told: the first screen's (FIRST_DISPUTES, FIRST_CHALLENGES), a page or so


class _PageOrder:
    """``met.State.get`` for ids asked in page order (``met._page``): the page of the
    last id asked is held, so each page of ``done`` is read (a shelved one decoded) once,
    and only one at a time."""

    __slots__ = ("live", "done", "n", "page")

    def __init__(self, state: met.State) -> None:
        self.live, self.done, self.n, self.page = state.live, state.done, -1, {}

    def get(self, challenge_id: str) -> met.Challenge | None:
        found = self.live.get(challenge_id)
        if found is None:
            n = met._page(challenge_id)
            if n != self.n:
                self.n, self.page = n, self.done[n] if n < len(self.done) else {}
            found = self.page.get(challenge_id)
        return found


def _each_challenge(state: met.State) -> Iterable[met.Challenge]:
    """Every challenge of ``state.challenges``, a page at a time: shelved pages are
    decoded one after another, not all held at once in a merged dict."""
    live = state.live
    for page in state.done:
        for cid, ch in page.items():
            if cid not in live:
                yield ch
    yield from live.values()


SETTLED = frozenset(("resolved", "cancelled", "confirmed", "ruled"))


# ---------------------------------------------------------------- timeline


_TIME_OUTS = (session.TimeOutCalled, session.TimeOutEnded)
_SESSION_WIDE = (session.TimeSkipped, session.SessionOpened, session.SessionClosed)


def _session_wide(item: Item) -> bool:
    e = item.event
    return isinstance(e, _TIME_OUTS) and e.scope == "session" or isinstance(e, _SESSION_WIDE)


def matches(item: Item, *, character: str | None = None, challenge: str | None = None,
            scene: str | None = None, type: str | None = None) -> bool:
    if character and character not in item.characters:
        return False
    if challenge and item.challenge != challenge:
        return False
    if scene and item.scene != scene and not _session_wide(item):
        return False  # a Time Out of the whole session stops every scene: it stays in
    if type and not (item.type == type or item.type.startswith(type.rstrip(".") + ".")):
        return False
    return True


def timeline(review: Review, **filters) -> list[Item]:
    """The items matching every filter given (character, challenge, scene, type; a type
    filter may be a module prefix such as ``met`` or ``offline``)."""
    return [i for i in review.items if matches(i, **filters)]


# ---------------------------------------------------------------- challenges


class Seen(msgspec.Struct, frozen=True, kw_only=True):
    whole: list[str]  # names, "storytellers" first
    sealed: list[str]  # saw a sealed form
    hidden: list[str]  # saw nothing


# The roles beside the characters' names, in the review's language.
ROLES = {"en": ("storytellers", "observers"), "fr": ("conteurs", "observateurs")}


def seen_by(review: Review, item: Item) -> Seen:
    """Who saw this event, and in which form, when it was sent."""
    storytellers, observers = ROLES.get(review.lang, ROLES["en"])
    everyone = [review.names[c] for c in review.names] + [observers]
    owners, sealed = item.owners, item.sealed
    if sealed is None:  # a storyteller's item: its event is whole
        f = views.forms(item.event)
        owners, sealed = f.owners, f.public is not None
    if owners is None:
        return Seen(whole=[storytellers] + everyone, sealed=[], hidden=[])
    whole = [storytellers] + [name for c, name in review.names.items() if c in owners]  # roster order
    others = [n for n in everyone if n not in whole]
    return Seen(whole=whole, sealed=others if sealed else [], hidden=[] if sealed else others)


class Step(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    actor: str
    type: str
    text: str
    seen: Seen
    event: Any


class Claim(msgspec.Struct, frozen=True, kw_only=True):
    """What one side of a challenge played by hand says (events/offline.py)."""

    by: str  # the character
    kind: str  # recorded | confirmed | disputed
    winner: str | None  # who it says won; None: a dispute naming no winner
    reason: str = ""


class Story(msgspec.Struct, kw_only=True):
    id: str
    kind: str  # met | offline
    sentence: str
    scene: str | None
    sides: list[str]
    status: str
    winner: str | None
    loser: str | None
    reason: str
    disputed: bool
    ruled: bool
    first_seq: int
    last_seq: int
    steps: list[Step]
    claims: list[Claim] = []  # offline records: each side's word, in log order


class Mark(msgspec.Struct, frozen=True, kw_only=True):
    """What the disputes list needs of a challenge, without its sentence."""

    kind: str  # met | offline
    status: str
    disputed: bool
    ruled: bool
    last_seq: int


def _any_event(items: list[Item], kind: type) -> bool:
    # a loop, not ``any`` over a generator: the first screen marks every challenge of the
    # night, all its items (a generator's frame per challenge was a quarter of the marks)
    for item in items:
        if isinstance(item.event, kind):
            return True
    return False


def _mark(review: Review, challenge_id: str, items: list[Item], get=None, marked=None) -> Mark | None:
    """``get``: how a met challenge is found by id (``met.State.get`` unless given);
    ``marked``: ``Builder._marked`` (else ``items`` are looked through)."""
    if not items:
        return None
    first = items[0].event
    if isinstance(first, offline.OfflineChallengeRecorded):
        record = review.state.offline.records.get(challenge_id)
        status = record.status if record else "recorded"
        return Mark(kind="offline", status=status,
                    disputed=_any_event(items, offline.OfflineChallengeDisputed) if marked is None
                    else challenge_id in marked[offline.OfflineChallengeDisputed],
                    ruled=status == "ruled", last_seq=items[-1].seq)
    ch = (get or review.state.met.get)(challenge_id)
    if ch is None:
        return None
    overruled = _any_event(items, met.ChallengeOverruled) if marked is None \
        else challenge_id in marked[met.ChallengeOverruled]
    return Mark(kind="met", status=ch.status, disputed=overruled, ruled=overruled or ch.status == "cancelled",
                last_seq=items[-1].seq)


def _summary(review: Review, challenge_id: str, items: list[Item], *, steps: bool = True,
             mark: Mark | None = None) -> Story | None:
    """``mark``: the challenge's mark when already known (a ``Builder``'s, up to date)."""
    if mark is None:
        mark = _mark(review, challenge_id, items)
    if mark is None:
        return None
    t = review.teller
    first = items[0].event
    # a brief has no steps: who saw each one is worked out only for a challenge's own page
    steps = [Step(seq=i.seq, at=i.at, actor=i.actor, type=i.type, text=i.text, seen=seen_by(review, i),
                  event=i.event) for i in items] if steps else []
    common = dict(id=challenge_id, kind=mark.kind, scene=items[0].scene, status=mark.status,
                  disputed=mark.disputed, ruled=mark.ruled, first_seq=items[0].seq, last_seq=mark.last_seq,
                  steps=steps)
    if mark.kind == "offline":
        record = review.state.offline.records.get(challenge_id)
        # a record is the recorder's word until the opponent confirms it or a storyteller
        # rules: no winner before, only the claims (a disputed record has two)
        settled = record is not None and mark.status in ("confirmed", "ruled")
        return Story(**common, sentence=offline_sentence(first, t), sides=[first.recorder, first.opponent],
                     winner=record.winner if settled else None, loser=record.loser if settled else None,
                     reason=(record.ruling or record.dispute) if record else "",
                     claims=offline_claims(i.event for i in items))
    ch = review.state.met.get(challenge_id)
    return Story(**common, sentence=challenge_sentence((i.event for i in items), t), sides=list(ch.sides),
                 winner=ch.winner, loser=ch.loser, reason=ch.reason)


def offline_claims(events: Iterable[Event]) -> list[Claim]:
    """Each side's word on a challenge played by hand: the recorder's, then the opponent's
    confirmation or dispute (a ruling is not a claim: it is the outcome)."""
    claims: list[Claim] = []
    recorded: offline.OfflineChallengeRecorded | None = None
    for e in events:
        if isinstance(e, offline.OfflineChallengeRecorded):
            recorded = e
            claims.append(Claim(by=e.recorder, kind="recorded", winner=e.winner))
        elif isinstance(e, offline.OfflineChallengeConfirmed) and recorded is not None:
            claims.append(Claim(by=e.opponent, kind="confirmed", winner=recorded.winner))
        elif isinstance(e, offline.OfflineChallengeDisputed):
            claims.append(Claim(by=e.opponent, kind="disputed", winner=e.winner, reason=e.reason))
    return claims


def challenge_story(review: Review, challenge_id: str) -> Story | None:
    """The whole story of one challenge (or offline record): its sentence, outcome and
    every step with who saw what; None when the viewer sees no such challenge."""
    return _summary(review, challenge_id, review.by_challenge(challenge_id))


def stories(review: Review, *, steps: bool = True) -> list[Story]:
    out = [_summary(review, cid, items, steps=steps) for cid, items in review.challenge_items.items()]
    return [s for s in out if s is not None]


def _rank(s: Story | Mark) -> tuple[int, int]:
    if s.kind == "offline" and s.status == "disputed":
        return (0, -s.last_seq)
    if s.kind == "offline" and s.status == "recorded":
        return (1, -s.last_seq)
    return (2, -s.last_seq)


def _flagged(s: Story | Mark) -> bool:
    return s.disputed or s.ruled or (s.kind == "offline" and s.status == "recorded")


def disputes(review: Review, all_stories: list[Story] | None = None) -> list[Story]:
    """Disputed items first: offline records disputed and not yet ruled, awaiting an
    answer, then every ruled, overruled or cancelled challenge, newest first."""
    all_stories = stories(review) if all_stories is None else all_stories
    return sorted([s for s in all_stories if _flagged(s)], key=_rank)


# ---------------------------------------------------------------- scene slider


class SceneView(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    text: str
    name: str
    open: bool
    frozen: bool  # the scene's own Time Out, or the whole session's
    turn: int
    game_seconds: int
    characters: list[dict]
    challenges: list[dict]


RECENT = 8  # challenges shown with each step of the slider


def _scene_view(state: GameState, scene_id: str, item: Item, names: dict[str, str],
                recent: list[str]) -> SceneView:
    s = state.session
    scene = s.scenes.get(scene_id)
    present = [c for c in s.characters.values() if c.scene == scene_id]
    challenges = []
    for ch in (state.met.get(cid) for cid in recent):
        if ch is not None:
            challenges.append({
                "id": ch.id, "kind": ch.kind, "initiator": names.get(ch.initiator, ch.initiator),
                "defender": names.get(ch.defender, ch.defender), "attribute": ch.attribute, "status": ch.status,
                "round": ch.round, "throws": {names.get(k, k): v for k, v in ch.throws.items()},
                "bids": {names.get(k, k): v for k, v in ch.bids.items()},
                "winner": names.get(ch.winner, ch.winner) if ch.winner else None, "reason": ch.reason,
            })
    return SceneView(
        seq=item.seq, at=item.at, text=item.text, name=scene.name if scene else scene_id,
        open=bool(scene and scene.open), frozen=bool(s.frozen or s.venue_frozen or (scene and scene.frozen)), turn=s.turn,
        game_seconds=s.game_seconds,
        characters=[{"id": c.id, "name": c.name, "out_of_game": c.out_of_game, "no_sheet": c.no_sheet}
                    for c in present],
        challenges=challenges,
    )


def _walk_scene(review: Review, scene_id: str, upto: int | None = None):
    """Yields (item, state, recent challenge ids) after each event of the scene."""
    state = game.initial()
    recent: list[str] = []  # the scene's latest challenges: a long evening stays linear
    for item in review.items:
        if upto is not None and item.seq > upto:
            return
        state = game.evolve(state, item.event)
        if matches(item, scene=scene_id):
            if item.challenge and item.challenge.startswith("c"):
                if item.challenge in recent:
                    recent.remove(item.challenge)
                recent = (recent + [item.challenge])[-RECENT:]
            yield item, state, recent


def scene_steps(review: Review, scene_id: str) -> list[SceneView]:
    """The scene's state after each event that concerns it, in order: the slider.

    Folded from the viewer's own events, so a player's slider holds no sealed throw."""
    return [_scene_view(state, scene_id, item, review.names, recent)
            for item, state, recent in _walk_scene(review, scene_id)]


class StepRef(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    at: str
    text: str


def scene_index(review: Review, scene_id: str) -> list[StepRef]:
    """The slider's stops without their states (a long evening has thousands)."""
    return [StepRef(seq=i.seq, at=i.at, text=i.text) for i in review.items if matches(i, scene=scene_id)]


def scene_at(review: Review, scene_id: str, seq: int) -> SceneView | None:
    """The scene's state at its last step at or before ``seq``; None before its first."""
    last = None
    for item, state, recent in _walk_scene(review, scene_id, upto=seq):
        last = (item, state, list(recent))
    if last is None:
        return None
    item, state, recent = last  # states are immutable: the one yielded is still that step's
    return _scene_view(state, scene_id, item, review.names, recent)


def state_at(review: Review, seq: int) -> GameState:
    """The state folded from the viewer's events up to ``seq`` (inclusive)."""
    state = game.fold(i.event for i in review.items if i.seq <= seq)
    return msgspec.structs.replace(state, head=max((i.seq for i in review.items if i.seq <= seq), default=0))


# ---------------------------------------------------------------- chain


class Verification(msgspec.Struct, kw_only=True):
    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str = ""
    closed: bool = False  # the seed is revealed: draws were recomputed
    draws_checked: int = 0
    text: str = ""


def _draws_seen(rows: list[Row], viewer: Actor) -> int:
    """How many draws ``viewer`` holds: a count over every row would tell a player the
    size of the secret pools it may not see."""
    from conteur.events import views
    from conteur.server.store.codec import decode_event

    seen = (views.view(decode_event(row.data), viewer) for row in rows)
    return sum(len(getattr(e, "draws", ()) or ()) for e in seen if e is not None)


def verify(rows: list[Row], path: str = "", viewer: Actor | None = None) -> Verification:
    """The session's hash chain, then (once its seed is revealed) every fair draw. For a
    ``viewer`` other than a storyteller, ``draws_checked`` counts the draws it sees."""
    from conteur.server.audit.verify import Report, check_draws, check_verdicts

    count, broken = verify_rows(rows)
    if broken is not None:
        return Verification(ok=False, events=count, first_bad_seq=broken.seq, reason=broken.reason,
                            text=str(broken))
    report = Report(path=path, source="log", events=count)
    check_draws(rows, report)
    if report.bad_draw is not None:
        return Verification(ok=False, events=count, first_bad_seq=report.bad_draw.seq,
                            reason=report.bad_draw.reason, text=report.bad_draw.reason)
    check_verdicts(rows, report)
    if report.bad_verdict is not None:
        return Verification(ok=False, events=count, first_bad_seq=report.bad_verdict.seq,
                            reason=report.bad_verdict.reason, text=report.bad_verdict.reason)
    drawn = report.draws_checked
    if viewer is not None and not viewer.is_storyteller and report.sessions_checked:
        drawn = _draws_seen(rows, viewer)
    return Verification(ok=True, events=count, closed=report.sessions_checked > 0,
                        draws_checked=drawn, text="hash chain intact")


# ---------------------------------------------------------------- fairness


class Bars(msgspec.Struct, kw_only=True):
    """Observed counts of each face against the uniform share."""

    label: str
    faces: list[str]
    counts: list[int]
    total: int
    expected: float  # the uniform count per face
    chi_square: float
    df: int
    p_value: float | None  # Wilson-Hilferty approximation; None when too few draws


class Tally(msgspec.Struct, kw_only=True):
    character: str
    name: str
    won: int = 0
    lost: int = 0
    offline_won: int = 0
    offline_lost: int = 0
    contests_won: int = 0  # action-dice oppositions (ACT-12)
    contests_lost: int = 0


class Fairness(msgspec.Struct, kw_only=True):
    dice: list[Bars]
    throws: Bars | None
    tallies: list[Tally]


def p_value(chi2: float, df: int) -> float:
    """Upper tail of chi-square by Wilson-Hilferty: good to ~1e-3 for df >= 1."""
    if df <= 0:
        return 1.0
    h = 2 / (9 * df)
    z = ((chi2 / df) ** (1 / 3) - (1 - h)) / math.sqrt(h)
    return 0.5 * math.erfc(z / math.sqrt(2))


def bars(label: str, faces: list[str], observed: Counter) -> Bars:
    total = sum(observed.get(f, 0) for f in faces)
    counts = [observed.get(f, 0) for f in faces]
    expected = total / len(faces) if faces else 0.0
    chi2 = sum((c - expected) ** 2 / expected for c in counts) if expected else 0.0
    df = len(faces) - 1
    enough = expected >= 5  # Pearson's rule of thumb
    return Bars(label=label, faces=faces, counts=counts, total=total, expected=expected,
                chi_square=round(chi2, 4), df=df, p_value=round(p_value(chi2, df), 4) if enough else None)


DIE_LABELS = {3: "d3 (server throws)", 6: "d6 (D+/-)", 8: "d8", 10: "d10"}


def fairness(review: Review) -> Fairness:
    """Every die face and every throw the viewer saw, against the uniform share (FAIR-2
    proves each draw; this shows the evening's spread), and per-character tallies."""
    counts = Counts()
    for item in review.items:
        counts.add(item.event)
    return counts.fairness(review)


class Counts:
    """What the fairness panel counts of the events a viewer saw, fed one at a time (the
    streamed bundle feeds it the events its verification decodes, server/audit/streamed.py)."""

    def __init__(self) -> None:
        self.faces: dict[int, Counter] = collections.defaultdict(Counter)  # not setdefault: a Counter a draw
        self.throws: Counter = Counter()
        self.contests: collections.Counter[tuple[str, str]] = Counter()
        self.sealed_seen: set[str] = set()  # ACT-12: sealed rolls this viewer saw whole when rolled

    def add(self, event: Event) -> None:
        faces = self.faces
        for record in getattr(event, "draws", None) or ():
            faces[record.sides][str(record.face)] += 1
        if isinstance(event, action.ActionRolled) and event.sealed:
            self.sealed_seen.add(event.roll)
        elif isinstance(event, action.ActionRevealed) and event.roll not in self.sealed_seen:
            for record in event.rolled.draws:  # first seen here: counted once
                faces[record.sides][str(record.face)] += 1
        if isinstance(event, met.ThrowsRevealed):
            self.throws.update(event.throws.values())
        elif isinstance(event, action.OppositionSettled):
            loser = event.defender if event.winner == event.initiator else event.initiator
            self.contests[(event.winner, loser)] += 1
        elif isinstance(event, action.OppositionRuled) and event.winner is not None:
            # a contest a storyteller settled counts as ruled, as an overruled challenge does
            self.contests[(event.winner, event.opponent if event.winner == event.character else event.character)] += 1

    def fairness(self, review: Review) -> Fairness:
        return _fairness(review, self.faces, self.throws, self.contests)


def _fairness(review: Review, faces: dict[int, Counter], throws: Counter,
              contests: Counter[tuple[str, str]]) -> Fairness:
    dice = [bars(DIE_LABELS.get(sides, f"d{sides}"), [str(f) for f in range(1, sides + 1)], c)
            for sides, c in sorted(faces.items())]
    choices = ["rock", "paper", "scissors"]
    throw_bars = bars("throws", choices, throws) if throws else None
    if throw_bars is not None and throws.get("bomb"):
        throw_bars.label = f"throws ({throws['bomb']} bomb not counted)"
    tallies = {c: Tally(character=c, name=n) for c, n in review.names.items()}

    def count(winner: str | None, loser: str | None, won: str, lost: str, times: int = 1) -> None:
        if winner in tallies:
            setattr(tallies[winner], won, getattr(tallies[winner], won) + times)
        if loser in tallies:
            setattr(tallies[loser], lost, getattr(tallies[loser], lost) + times)

    for ch in _each_challenge(review.state.met):
        if ch.status == "resolved":
            count(ch.winner, ch.loser, "won", "lost")
    for record in review.state.offline.records.values():
        if record.status in ("confirmed", "ruled"):
            count(record.winner, record.loser, "offline_won", "offline_lost")
    for (winner, loser), times in contests.items():
        count(winner, loser, "contests_won", "contests_lost", times)
    return Fairness(dice=dice, throws=throw_bars, tallies=list(tallies.values()))


# ---------------------------------------------------------------- the page's bundle


def item_dict(item: Item, *, event: bool = True) -> dict:
    told = item.told  # ``Item.text`` without its call: a first screen has 1,500 rows
    if told is None:
        told = item.told = sentence(item.event, item.teller)
    out = {
        "seq": item.seq, "at": item.at, "actor": item.actor, "type": item.type, "text": told,
        "characters": list(item.characters), "scene": item.scene, "challenge": item.challenge,
        "wide": _session_wide(item),
    }
    if event:
        out["event"] = msgspec.to_builtins(item.event)
    return out


def _header(review: Review, types: Iterable[str]) -> dict:
    s = review.state.session
    first_at = review.items[0].at if review.items else None
    return {
        "session": review.session, "name": s.name, "chronicle": s.chronicle, "scenario": s.scenario,
        "status": s.status, "head": review.state.head, "lang": review.lang,
        "viewer": msgspec.to_builtins(review.viewer),
        "characters": review.names, "scenes": review.scenes,
        "types": sorted(types),
        # the page shows the venue's time (server/core/venue_time.py); the stamps stay UTC
        "utc_offset_minutes": venue_time.offset_minutes(first_at) if first_at else 0,
        "zone": venue_time.offset_label(first_at) if first_at else "UTC",
    }


def held(review: Review) -> Review:
    """The review with its items in memory: a kept review's pages are read from the store
    again when walked (server/audit/paged.py), and the bundle walks them four times (its
    header, the stories, the fairness, the timeline), so it reads them once here. Its
    answer holds a dict per item anyway: holding the items too while it is built does not
    change its order of size, and both go when it is sent."""
    if isinstance(review.items, list):
        return review
    items = list(review.items)
    by_seq = {item.seq: item for item in items}
    return msgspec.structs.replace(review, items=items, challenge_items={
        cid: [by_seq[seq] for seq in seqs] for cid, seqs in review.challenge_items.seqs()})


def bundle(review: Review) -> dict:
    """Everything the review page shows, in one answer (exports and scripts; the page
    itself loads ``first_screen`` and the rest by parts)."""
    review = held(review)
    all_stories = stories(review, steps=False)  # briefs: who saw each step is for a challenge's page
    return {
        **_header(review, {i.type for i in review.items}),
        "verification": msgspec.to_builtins(verify(review.rows)),
        "disputes": [s.id for s in disputes(review, all_stories)],
        "challenges": [msgspec.to_builtins(_brief(st)) for st in all_stories],
        "fairness": msgspec.to_builtins(fairness(review)),
        "items": [item_dict(i, event=False) for i in review.items],  # the timeline endpoint has the events
    }


FIRST_ITEMS = 1500  # the timeline rows the page draws at first (review.js SHOWN)
FIRST_CHALLENGES = 200
FIRST_DISPUTES = 200


def first_screen(builder: Builder) -> dict:
    """What the review page shows first, the same size at any length of night:
    the header, the disputes first (the first ``FIRST_DISPUTES``, with their briefs), the
    first ``FIRST_CHALLENGES`` challenges and ``FIRST_ITEMS`` timeline rows, and how many
    there are of each. The verification and the fairness panel come by their own requests
    (``/review/verify``, ``/review/fairness``), the rest by pages (``items_page``,
    ``challenges_page``)."""
    with collector_paused():
        return _first_screen(builder)


def _first_screen(builder: Builder) -> dict:
    marks, flagged = builder.marks()
    review = builder.review(copy=False)
    shown = sorted(flagged, key=flagged.__getitem__)[:FIRST_DISPUTES]
    return {
        **_header(review, builder.types),
        "partial": True,
        "counts": {"items": len(review.items), "challenges": len(marks), "disputes": len(flagged)},
        "disputes": shown,
        "disputed": [builder.brief(cid) for cid in shown],
        "challenges": challenges_page(builder, 0, FIRST_CHALLENGES),
        "items": [item_dict(i, event=False) for i in review.items[:FIRST_ITEMS]],
    }


def items_page(review: Review, after: int, limit: int) -> list[dict]:
    """Timeline rows after seq ``after`` (without their events), at most ``limit``."""
    index_after = getattr(review.items, "index_after", None)  # a kept review's pages: by their seqs
    start = index_after(after) if index_after else bisect.bisect_right(review.items, after, key=lambda i: i.seq)
    return [item_dict(i, event=False) for i in review.items[start:start + limit]]


def challenges_page(builder: Builder, offset: int, limit: int) -> list[dict]:
    """Challenge briefs in log order, from the ``offset``-th."""
    marks, _ = builder.marks()
    ids = itertools.islice((cid for cid in builder.by_challenge if cid in marks), offset, offset + limit)
    return [builder.brief(cid) for cid in ids]


def _brief(story: Story) -> dict:
    out = msgspec.structs.asdict(story)
    out.pop("steps")
    return out
