"""Dispute review: a session's log made readable and checkable; this module builds it.

Pure functions over the store and the views: ``build`` walks a session's rows once,
folds the true state beside them (to know where each character stood when each event
happened), and keeps each event in the form ``viewer`` may see (``events.views``), with
the characters, challenge and scene it concerns and a sentence telling it; ``Builder``
does the same as the log grows. The rest reads that ``Review`` (server/audit/timeline.py),
one module a job: ``timeline`` the filters, ``stories`` the challenges and disputes,
``scenes`` the scene slider, ``checks`` the hash chain, fair draws and dice fairness,
``page`` what the review page is answered.

A challenge belongs to the scene its initiator (or the character tested) stood in when
it was issued; an offline record to its recorder's scene when it was recorded; any other
event to the scene it names, or else to its first character's scene at that moment.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import gc
import operator
from sys import intern
from typing import Iterable

import msgspec

from conteur.events import game, met, offline, session, views
from conteur.events.game import GameState
from conteur.events.model import STORYTELLER, Actor, Event
from conteur.events.narrate import Teller
from conteur.events.views import in_record
from conteur.server.audit import paged
from conteur.server.audit.stories import Mark, brief_of, is_flagged, mark_of, rank_of, summary_of
from conteur.server.audit.timeline import Item, Review
from conteur.server.core.pages import Page, compressed
from conteur.server.store.chain import Entry, Row
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore


_PEOPLE = ("character", "initiator", "defender", "tested", "opponent", "recorder", "winner", "loser",
           "debtor", "creditor", "cancelled")


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
    offline record), whether it names a scene, whether the truth folds it, its role in
    ``Builder._extend``, whether it is
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
                            kind in _HAS_SCENE, kind not in _IGNORED, _ROLES.get(kind),
                            getattr(kind, "owners", None) is Event.owners, _people_reader(people, "throws" in fields),
                            getattr(getattr(kind, "__struct_config__", None), "tag", None),
                            _marked_kind(kind))
    return found


# the kinds a challenge's mark looks for among its items (``mark_of``): an offline record
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
        # asked for (server/audit/paged.py), and the final pages of finished challenges of
        # its folds are held compressed (server/core/pages.py): what a server keeps all night
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
        # it): what ``mark_of`` looked for in every item of every challenge at each first
        # screen. None (a kept review saved before it was kept, server/audit/kept.py):
        # ``mark_of`` looks through the items
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
            self._seen_state = self._truth if whole else self._seen
        return self._seen_state

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
        paging = self._store is not None
        marked_ids = self._marked
        # the truth is folded in runs, up to the events that need it as it stood before them
        # (where characters stand, the open challenges); the viewer's own fold at the end
        truths: list[Event] = []
        seens: list[Event] = []
        for row, event in zip(rows, events):
            kind = type(event)
            # what the review reads of this kind of event, looked up once a kind, not tried
            # field by field on every event of a night
            _, _, challenge_field, has_scene, folded, role, public, people_of, tag, marked = \
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
        if paging:  # the final pages compressed, each state's in its own slots
            self._truth, self._seen = compressed(self._truth), compressed(self._seen)
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
            if any(type(page) is Page for page in review.state.met.done):
                # pages held compressed (a kept review's): taken in page order, each
                # decoded once. Merged, every page of the night was decoded at once: a
                # peak of every finished challenge's objects, at each catch-up, that
                # left the allocator's pools fragmented (the night's RSS 1.5x -> 2.3x)
                marked = sorted(marked, key=met._page)
                get = _PageOrder(review.state.met).get
            else:  # pages in memory: one merge, not a page found per id
                get = review.state.met.challenges.get
        for cid in marked:
            mark = mark_of(review, cid, self.by_challenge.get(cid, []), get, self._marked)
            self._flagged.pop(cid, None)
            self._unsettled.discard(cid)
            self._briefs.pop(cid, None)
            if mark is None:
                self._marks.pop(cid, None)
                continue
            self._marks[cid] = mark
            if is_flagged(mark):
                self._flagged[cid] = rank_of(mark)
            if mark.status not in SETTLED:
                self._unsettled.add(cid)
        self.touched = set()
        return self._marks, self._flagged

    def brief(self, challenge_id: str) -> dict:
        """A challenge's brief (as in the bundle), told only when shown, then kept until
        the challenge moves (call ``marks`` first)."""
        found = self._briefs.get(challenge_id)
        if found is None:
            story = summary_of(self.review(copy=False), challenge_id, self.by_challenge[challenge_id], steps=False,
                             mark=None if challenge_id in self.touched else self._marks.get(challenge_id))
            found = self._briefs[challenge_id] = msgspec.to_builtins(brief_of(story))
            while len(self._briefs) > BRIEFS:
                self._briefs.popitem(last=False)
        else:
            self._briefs.move_to_end(challenge_id)
        return found


MERGED_MARKS = 256  # challenges to mark at once past which the met part's pages are merged (compressed: read in order)


BRIEFS = 2 * 200 + 1000  # briefs kept told: the first screen's (FIRST_DISPUTES, FIRST_CHALLENGES), a page or so


class _PageOrder:
    """``met.State.get`` for ids asked in page order (``met._page``): the page of the
    last id asked is held, so each page of ``done`` is read (a compressed one decoded) once,
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


def each_challenge(state: met.State) -> Iterable[met.Challenge]:
    """Every challenge of ``state.challenges``, a page at a time: compressed pages are
    decoded one after another, not all held at once in a merged dict."""
    live = state.live
    for page in state.done:
        for cid, ch in page.items():
            if cid not in live:
                yield ch
    yield from live.values()


SETTLED = frozenset(("resolved", "cancelled", "confirmed", "ruled"))
